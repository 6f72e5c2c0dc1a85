"""Store to matrix at scale: ``load_matrix`` against reading the same matrix from Parquet.

Fills a store with ``models x datasets`` synthetic results (one source file per
``--models-per-source`` models, every cell observed except ``--missing``), then
in the same process:

1. ``harness_ext.store.matrix.load_matrix`` (DuckDB selects, de-duplicates and pivots;
   normalisation, fingerprint and metadata included), time and peak memory;
2. the reference a user would run with the matrix already exported:
   ``pandas.read_parquet`` of the same raw matrix (written once, not timed).

The store is filled with DuckDB bulk inserts (this measures reading; ingest
has its own benchmark). Target (issue 17): store to matrix within 2x of
Parquet at 50,000 x 200. Usage::

    python benchmarks/bench_matrix.py                    # 50,000 x 200 (10M results)
    python benchmarks/bench_matrix.py --models 20000 --datasets 2000   # 40M results
    python benchmarks/bench_matrix.py --quick            # 5,000 x 100
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

import _common
from _common import PeakMemory, emit_json, fmt_size, print_rows, row


def fill_store(db: Path, m: int, d: int, missing: float, per_source: int, seed: int = 0) -> int:
    """A store with m x d results in bulk (ids as Store assigns them); returns the number of results."""
    import duckdb

    from harness_ext.store.db import Store

    with Store.open(db):
        pass  # creates the schema
    rng = np.random.default_rng(seed)
    con = duckdb.connect(str(db))
    n_src = (m + per_source - 1) // per_source
    con.execute("""INSERT INTO sources (source_id, path, sha256, adapter, ingested_at, n_results) SELECT i, 'synthetic/run_' || i || '.csv', 'sha' || i, 'csv', now()::TIMESTAMP, 0
                   FROM range(1, ? + 1) t(i)""", [n_src])
    con.execute("INSERT INTO models (model_id, name, metadata) SELECT i, 'org/model-' || lpad(i::VARCHAR, 6, '0'), '{}' FROM range(1, ? + 1) t(i)", [m])
    con.execute("""INSERT INTO datasets (dataset_id, benchmark, name, metric, higher_is_better, random_baseline,
                   baseline_source, min_score, max_score, is_primary, task, metadata) SELECT i, 'synthetic', 'task_' || lpad(i::VARCHAR, 5, '0'), 'acc', true,
                   0.25, 'synthetic', NULL, NULL, true, NULL, '{}' FROM range(1, ? + 1) t(i)""", [d])
    total = 0
    step = max(1, 5_000_000 // d)
    for start in range(0, m, step):
        rows = np.arange(start, min(m, start + step))
        mid = np.repeat(rows + 1, d).astype(np.int32)
        did = np.tile(np.arange(1, d + 1, dtype=np.int32), len(rows))
        val = rng.random(len(mid))
        keep = rng.random(len(mid)) >= missing
        batch = {"model_id": mid[keep], "dataset_id": did[keep], "value": val[keep],
                 "source_id": (mid[keep] - 1) // per_source + 1}
        con.register("_b", batch)
        con.execute("""INSERT INTO results (model_id, dataset_id, num_fewshot, value, stderr, n_samples, source_id)
                       SELECT model_id, dataset_id, 0, value, NULL, NULL, source_id::INTEGER FROM _b""")
        con.unregister("_b")
        total += int(keep.sum())
    con.close()
    return total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5,000 x 100")
    ap.add_argument("--models", type=int, default=None)
    ap.add_argument("--datasets", type=int, default=None)
    ap.add_argument("--missing", type=float, default=0.0)
    ap.add_argument("--models-per-source", type=int, default=100)
    args = ap.parse_args(argv)
    m = args.models or (5_000 if args.quick else 50_000)
    d = args.datasets or (100 if args.quick else 200)
    import pandas as pd

    from harness_ext.store.matrix import MatrixQuery, load_matrix
    from harness_ext.store.db import Store

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "store.duckdb"
        t0 = time.perf_counter()
        n = fill_store(db, m, d, args.missing, args.models_per_source)
        print(f"store with {n:,} results ({fmt_size((m, d))}) filled in {time.perf_counter() - t0:.1f} s")
        with Store.open(db, read_only=True) as store:
            with PeakMemory() as pm:
                t0 = time.perf_counter()
                df = load_matrix(store, MatrixQuery(normalise="none"))
                t_ours = time.perf_counter() - t0
        assert df.shape == (m, d), df.shape
        pq = Path(tmp) / "matrix.parquet"
        try:
            df.to_parquet(pq)
        except ImportError:
            print("pyarrow missing: no Parquet reference")
            return 0
        mat_mb = df.to_numpy().nbytes / 2**20
        del df
        with PeakMemory() as pr:
            t0 = time.perf_counter()
            ref = pd.read_parquet(pq)
            t_ref = time.perf_counter() - t0
        del ref
        rows.append(row("matrix", "store -> matrix (load_matrix) vs pandas.read_parquet", fmt_size((m, d)), t_ours, t_ref,
                        pm.mb, note=f"matrix {mat_mb:,.0f} MB; Parquet read peak {pr.mb:,.0f} MB; target ratio >= 0.5x"))
    print_rows(rows, "store to matrix (ratio = Parquet read time / load_matrix time; >= 0.5x is within 2x):")
    emit_json(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
