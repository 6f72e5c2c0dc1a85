"""Do targets have a closer copy among the regression's training models than the calibration models have among
their fold's? ``python twins.py TABLE FIRST LAST``: per draw (interpolation), each target's and each interleaved-fold
held-out source's distance (RMS difference of the full 0/1 answer vectors of this task) to its nearest training model."""
import sys

import numpy as np

from dump import qi  # noqa: F401 (sets the path)
from harness_ext.methods.engine.item_irt import model_folds

table, s0, s1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
scores, models = qi.load_named(qi.ITEMS / f"{table}.parquet")
S_all = np.nan_to_num(scores, nan=0.5)


def nn(A, B):
    d = np.sqrt(((A[:, None, :] - B[None, :, :]) ** 2).mean(axis=2))
    return d.min(axis=1)


dt, dc = [], []
for seed in range(s0, s1):
    src, tgt = qi.split(scores, "interpolation", seed)
    dt.append(nn(S_all[tgt], S_all[src]))
    fold = model_folds(len(src), 5)
    for k in range(5):
        held = fold == k
        dc.append(nn(S_all[src][held], S_all[src][~held]))
dt, dc = np.concatenate(dt), np.concatenate(dc)
print(f"{table} {s0}-{s1}: nearest training model, RMS answer distance: targets median {np.median(dt):.3f} "
      f"share < 0.2 {np.mean(dt < 0.2):.3f}; calibration median {np.median(dc):.3f} share < 0.2 {np.mean(dc < 0.2):.3f}")
