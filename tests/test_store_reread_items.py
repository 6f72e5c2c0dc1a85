"""Item files an older item reader stored: counted by ``ingest``, read again by ``ingest --reread``.

Item scores are stored once by content hash, as results are; each item source records its item reader and revision
(``sample_sources.reader``, NULL in stores made before schema 3). An "old store" here is a fresh ingest of real item
files (an lm-eval per-sample log, an Every Eval Ever instance file, item-response tables, HELM per-instance stats,
lighteval details, Inspect samples) whose item sources are then marked as read by an older reader that stored
other scores (every score 1 - score, one model's items under another name, one item left out), or a schema-2 store
without the column. ``--reread`` must leave it as the fresh ingest, table by table.
"""

from __future__ import annotations

import json
from contextlib import contextmanager

import duckdb
import pytest

from conftest import REPO
from harness_ext.cli import main
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.tables import SCHEMA_VERSION

FIX = REPO / "tests" / "fixtures"
#: Real item files of every item reader (the lm-eval logs and lighteval details with their results files). The lm-eval
#: logs of tests/fixtures/samples were written by lm-eval itself, of toy models (its README); the corpus-metric log of
#: lm_eval_wild is real and has no per-sample scores (skipped, with its reason, both times).
PATHS = [FIX / "samples" / "lm_eval_output" / "toy__lm-small", FIX / "lm_eval_wild" / "samples_corpus_metric",
         FIX / "eee_samples", FIX / "items",
         FIX / "helm_instances" / "babi_qa_task15", FIX / "lighteval_details", FIX / "inspect"]
#: The item tables, table by table, by content (source ids included: a file read again keeps its place).
TABLES = {
    "sample_sources": "SELECT * EXCLUDE (ingested_at) FROM sample_sources ORDER BY ALL",
    "samples": "SELECT * FROM samples ORDER BY ALL",
    "item_ids": "SELECT * FROM item_ids ORDER BY ALL",
}


def _tables(db) -> dict:
    with Store.open(str(db), read_only=True) as store:
        out = {name: store.con.execute(sql).fetchall() for name, sql in TABLES.items()}
        out["results"] = store.con.execute("SELECT * FROM results ORDER BY ALL").fetchall()
        out["sources"] = store.con.execute("SELECT * EXCLUDE (ingested_at) FROM sources ORDER BY ALL").fetchall()
    return out


def _ingest(db, reread=False):
    with Store.open(str(db)) as store:
        return ingest_paths(store, PATHS, show_progress=False, reread=reread)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    db = tmp_path_factory.mktemp("fresh") / "fresh.duckdb"
    report = _ingest(db)
    return db, _tables(db), report


def _item_files(report) -> list:
    return [f for f in report.by_status("ingested") if f.n_samples]


def _as_older(db) -> None:
    """What an older item reader would have stored: other scores, a model named otherwise, an item left out."""
    con = duckdb.connect(str(db))
    con.execute("""UPDATE samples SET value = 1 - value;
                   UPDATE sample_sources SET reader = NULL;
                   UPDATE sample_sources SET model = model || ' (old)' WHERE source_id = (SELECT min(source_id)
                       FROM sample_sources WHERE path LIKE '%gsm_slice%');
                   UPDATE samples SET model = model || ' (old)' WHERE source_id = (SELECT min(source_id)
                       FROM sample_sources WHERE path LIKE '%gsm_slice%');
                   DELETE FROM samples WHERE source_id = (SELECT max(source_id) FROM sample_sources)
                       AND doc_id = (SELECT min(doc_id) FROM samples WHERE source_id =
                                     (SELECT max(source_id) FROM sample_sources));""")
    con.close()


@pytest.mark.slow
def test_item_files_an_older_reader_stored_are_read_again_into_a_fresh_ingest(fresh, tmp_path):
    db = tmp_path / "old.duckdb"
    _ingest(db)
    _as_older(db)
    before = _tables(db)
    assert before["samples"] != fresh[1]["samples"]
    n_items = len(_item_files(fresh[2]))
    assert {f.adapter for f in _item_files(fresh[2])} == {"lm_eval_samples", "item_table"} and n_items == 10  # with the Zstandard .eval archive

    # Without --reread: nothing changes, and the summary counts the item files with the result files.
    again = _ingest(db)
    assert again.n_older_reader == n_items and not again.by_status("ingested")
    assert f"{n_items} of them stored by an older reader: 'harness-ext ingest --reread' reads them again" in (
        again.summary())
    assert _tables(db) == before

    reread = _ingest(db, reread=True)
    assert reread.n_reread == n_items and reread.n_older_reader == 0
    assert sorted(f.path for f in reread.by_status("ingested")) == sorted(f.path for f in _item_files(fresh[2]))
    after = _tables(db)
    for name in after:
        assert after[name] == fresh[1][name], name
    last = _ingest(db, reread=True)
    assert not last.by_status("ingested") and last.n_older_reader == 0 and _tables(db) == after


@pytest.mark.slow
def test_a_schema_2_store_is_upgraded_in_place_and_its_item_files_read_again(fresh, tmp_path, capsys):
    db = tmp_path / "v2.duckdb"
    _ingest(db)
    con = duckdb.connect(str(db))
    # A schema-2 store had neither the reader, the assumed metric nor the harness task column (added since, at the end).
    con.execute("ALTER TABLE sample_sources DROP COLUMN reader; ALTER TABLE sample_sources DROP COLUMN assumed_metric; "
                "ALTER TABLE sample_sources DROP COLUMN harness_task; "
                "UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    con.close()
    with Store.open(str(db), read_only=True) as store:  # read as it is
        assert store.con.execute("SELECT count(*) FROM sample_sources").fetchone()[0] == len(
            fresh[1]["sample_sources"])
    n_items = len(_item_files(fresh[2]))
    assert main(["ingest", "--db", str(db), "-q", "--json", "-", *map(str, PATHS)]) == 0
    out = capsys.readouterr().out
    payload = json.loads(out[out.index("{"):])
    assert payload["summary"]["older_reader"] == n_items and payload["summary"]["files"]["ingested"] == 0
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == SCHEMA_VERSION == "3"
    assert con.execute("SELECT count(*) FROM sample_sources WHERE reader IS NULL").fetchone()[0] == len(
        fresh[1]["sample_sources"])
    con.close()
    assert main(["ingest", "--db", str(db), "-q", "--reread", *map(str, PATHS)]) == 0
    assert f"{n_items} of them read again" in capsys.readouterr().out
    assert _tables(db) == fresh[1]


@pytest.mark.slow
def test_an_item_file_the_store_refuses_to_replace_keeps_its_rows(fresh, tmp_path, monkeypatch):
    """The write of a new reading fails in the store after its deletion ran: its transaction is rolled back, the file
    is skipped with a reason naming it and saying its older rows stay, and it is read again next time."""
    db = tmp_path / "old.duckdb"
    _ingest(db)
    _as_older(db)
    before = _tables(db)
    real = Store.transaction

    @contextmanager
    def refusing(self, **frames):
        with real(self, **frames) as con:
            yield con
            if "_samples_frame" in frames or "_item_sources" in frames:
                raise duckdb.ConstraintException("refused for the test")

    with monkeypatch.context() as m:
        m.setattr(Store, "transaction", refusing)
        report = _ingest(db, reread=True)
    skipped = [f for f in report.by_status("skipped") if f.path in {g.path for g in _item_files(fresh[2])}]
    assert len(skipped) == len(_item_files(fresh[2]))
    assert all(f.reason == "the store refused it: refused for the test; what an older reader stored from it is "
               "kept as it was" for f in skipped)
    assert _tables(db) == before
    assert _ingest(db).n_older_reader == len(skipped)


@pytest.mark.slow
def test_a_raised_item_reader_revision_counts_its_files(tmp_path, monkeypatch):
    """Raising one item reader's revision (HELM's per-instance stats here) makes its files older, and only its."""
    import harness_ext.adapters.helm_instances as helm_instances

    db = tmp_path / "s.duckdb"
    _ingest(db)
    monkeypatch.setattr(helm_instances, "REVISION", str(int(helm_instances.REVISION) + 1))
    (older,) = [f for f in _ingest(db).files if f.older_reader]
    assert older.path.endswith("per_instance_stats.json") and older.status == "unchanged"
    (again,) = [f for f in _ingest(db, reread=True).files if f.reread]
    assert again.path == older.path and again.n_samples == 40
    assert not any(f.older_reader for f in _ingest(db).files)


def test_an_item_reader_is_named_from_its_own_revision_and_an_unknown_name_is_refused():
    from harness_ext.adapters import helm_instances
    from harness_ext.store.item_readers import READERS, reader_id

    assert reader_id("helm_instances", helm_instances.REVISION) == f"helm_instances:{helm_instances.REVISION}"
    assert set(READERS) == {"lm_eval_samples", "eee_samples", "item_table", "helm_instances", "inspect_items",
                            "lighteval_details"}
    with pytest.raises(ValueError, match="unknown item reader"):
        reader_id("helm_instance", "1")
