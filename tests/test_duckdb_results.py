"""DuckDB 2 refuses ``register``, ``con.sql`` and relations on a connection while one of its results is left
unfinished (``fetchone`` on a result reads one row and leaves it open, even a one-row ``count(*)``). The store reads
every result to its end and opens relations only through ``store.scan.relation``, so any step may follow any other."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = [p for d in ("harness_ext", "plugins", "adapters") for p in sorted((ROOT / d).rglob("*.py"))]


@pytest.mark.parametrize("pattern, why", [
    (r"\.fetchone\(\)", "fetchone leaves the result open: fetchall()[0]"),
    (r"\bcon\.sql\(", "con.sql is refused while a result is open: harness_ext.store.scan.relation"),
])
def test_product_code_leaves_no_duckdb_result_open(pattern, why):
    found = [f"{p.relative_to(ROOT)}:{i}" for p in PRODUCT
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(pattern, line) and not line.lstrip().startswith("#")
             and not (p.name == "scan.py" and "con" in pattern)]  # the one guarded relation
    assert not found, f"{why}: {found}"


def test_a_store_read_leaves_the_connection_free(tmp_path):
    pa = pytest.importorskip("pyarrow")
    from harness_ext.store.db import Store
    from harness_ext.store.scan import arrow_table, relation
    from harness_ext.store.tables import has_table

    with Store.open(str(tmp_path / "s.duckdb")) as store:
        assert not has_table(store.con, "no_such_table")
        store.con.register("_probe", pa.table({"a": [1, 2]}))  # refused if the probe above left its result open
        assert arrow_table(store.con, "SELECT sum(a) AS s FROM _probe").column("s").to_pylist() == [3]
        store.con.execute("SELECT a FROM _probe")  # a read left unfinished by code outside the store
        assert relation(store.con, "SELECT count(*) FROM _probe").fetchall() == [(2,)]
