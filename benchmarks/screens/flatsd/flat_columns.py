"""Columns of the shared real matrices whose observed values are all equal, and numpy's sd of them by layout.

    python benchmarks/screens/flatsd/flat_columns.py [DB]

Loads every matrix quality_holdout.py measures (raw scores, as it does) and the lm-eval bundled MMLU
matrix normalised (as reduce fits it); prints per matrix its shape, the constant columns, and how many
of them get a non-zero ``np.nanstd`` (standardise_columns' sd) in a C- and an F-ordered copy.
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/
from _holdout_matrices import SOURCES, load_matrices  # noqa: E402

from harness_ext.flat import flat_slices  # noqa: E402


def report(name, frame):
    X = frame.to_numpy(dtype=float)
    flat, value = flat_slices(X, 0)
    line = f"{name}: {X.shape[0]} x {X.shape[1]}, {int(flat.sum())} constant columns"
    for order in "CF":
        sd = np.nanstd(np.asarray(X, order=order), axis=0)
        line += f"; sd != 0 in {order} order: {int((flat & (sd != 0)).sum())}"
    print(line)
    for j in np.flatnonzero(flat):
        n = int((~np.isnan(X[:, j])).sum())
        print(f"    {frame.columns[j]!s:60.60s} {n:4d} models at {value[j]!r}")


db = sys.argv[1] if len(sys.argv) > 1 else None
for name, (raw, _) in load_matrices(list(SOURCES), db=db, verbose=False).items():
    report(name, raw)

from harness_ext.store.db import Store  # noqa: E402
from harness_ext.store.ingest import bundled_data_path, ingest_paths  # noqa: E402
from harness_ext.store.matrix import MatrixQuery, load_matrix  # noqa: E402

with Store.open(":memory:") as store:  # the bundled runs, normalised as reduce reads them
    ingest_paths(store, sorted(bundled_data_path().iterdir()), show_progress=False)
    for bench in sorted(store.benchmarks()["benchmark"]):
        try:
            m = load_matrix(store, MatrixQuery(benchmarks=(bench,)))
        except Exception as e:  # noqa: BLE001 - a benchmark with several settings: named in the message
            print(f"bundled {bench}: not loaded ({str(e)[:80]})")
            continue
        report(f"bundled {bench} (normalised)", m)
    m = load_matrix(store, MatrixQuery(benchmarks=("lm_eval",), models="*-160m*"))
    report("bundled lm_eval, *-160m* (the pinned manifest's matrix)", m)
