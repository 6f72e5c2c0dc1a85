"""The explained share (``harness_ext.methods.reduction.explained``) of reductions of the shared matrices: on every
model and on the weakest half (by the normalised full score), as `reduce` fits them with its defaults.

Usage: python benchmarks/screens/noise/share_survey.py [--fast]
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from _common import real_matrices  # noqa: E402
import harness_ext as hx  # noqa: E402
from harness_ext.methods.reduction.explained import explained_share  # noqa: E402

fast = {"n_random_subsets": 20, "n_random": 20} if "--fast" in sys.argv else {}
for label, df in real_matrices().items():
    order = np.argsort(df.mean(axis=1).to_numpy(), kind="stable")
    for part, rows in (("all", df.index), ("weakest half", df.index[order[: len(order) // 2]])):
        res = hx.reduce(df.loc[rows], seed=0, **fast)
        print(f"{label:14s} {part:13s} {len(rows):5d} models, k={res.manifest['selection']['subset_size']:2d}: "
              f"explained share {explained_share(res.manifest)}", flush=True)
