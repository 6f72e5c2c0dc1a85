"""``Store.conflicts()`` and ``load_matrix`` on a store of 424,000 results with cells two files give.

A 20,000 x 20 store (``bench_matrix.fill_store``, 20 models a source), then a second source giving again every cell
of one model in 20 rounded to 4 decimals (as a model card or a leaderboard table quotes them: 20,000 cells) and of
one model in 100 moved by 0.01 (real conflicts: 4,000 cells). Best of 3 of each, printed with the conflict rows and
cells. Usage::

    python benchmarks/store_conflicts.py /tmp/conflicts.duckdb   # builds the store the first time (about 10 s)
    PYTHONPATH=/path/to/an/older/checkout python benchmarks/store_conflicts.py /tmp/conflicts.duckdb   # before
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import duckdb  # noqa: E402
from bench_matrix import fill_store  # noqa: E402
from harness_ext.store.db import Store  # noqa: E402
from harness_ext.store.matrix import MatrixQuery, load_matrix  # noqa: E402
import harness_ext  # noqa: E402
db = Path(sys.argv[1] if len(sys.argv) > 1 else '/tmp/conflicts.duckdb')
if not db.exists():
    fill_store(db, 20_000, 20, 0.0, 20, seed=1)
    con = duckdb.connect(str(db))
    n_src = con.execute("SELECT max(source_id) FROM sources").fetchall()[0][0]
    con.execute("""INSERT INTO sources (source_id, path, sha256, adapter, ingested_at, n_results)
                   VALUES (?, 'synthetic/card.csv', 'shacard', 'csv', now()::TIMESTAMP, 0)""", [n_src + 1])
    # 5% of models: every cell again, rounded to 4 decimals; 1% of models: every cell moved by 0.01.
    con.execute(f"""INSERT INTO results SELECT model_id, dataset_id, num_fewshot, round(value, 4), NULL, NULL, {n_src + 1}
                    FROM results WHERE model_id % 20 = 0""")
    con.execute(f"""INSERT INTO results SELECT model_id, dataset_id, num_fewshot, value + 0.01, NULL, NULL, {n_src + 1}
                    FROM results WHERE model_id % 100 = 1 AND source_id <= {n_src}""")
    con.close()
print(harness_ext.__file__)
s = Store.open(str(db), read_only=True)
print("results", s.con.execute("SELECT count(*) FROM results").fetchall()[0][0])
for what, f in (("conflicts()", lambda: s.conflicts()), ("load_matrix", lambda: load_matrix(s, MatrixQuery(), fingerprint=False))):
    ts = []
    for _ in range(3):
        t = time.perf_counter(); out = f(); ts.append(time.perf_counter() - t)
    print(f"{what}: best {min(ts):.3f}s of {[round(x, 3) for x in ts]}", (len(out), out["used"].ne("").sum()) if what == "conflicts()" else out.attrs.get("conflicts"))
