"""Does a test model's distance to its nearest training model (subset cells, sd units) tell the misses apart?

    HARNESS_EXT_SHARED_DATA=/work/shared/data python benchmarks/screens/splitcov/neighbour_signal.py crosspred diag_crosspred.json
"""
import json
import re
import sys
from pathlib import Path

import numpy as np
from scipy.stats import mannwhitneyu, spearmanr

sys.path.insert(0, Path(__file__).resolve().parents[2].as_posix())
import quality_holdout as qh  # noqa: E402

name, path = sys.argv[1], sys.argv[2]
raw, meta = qh.load_matrices([name], verbose=False)[name]
X = raw.to_numpy(float)
a, c = qh.aggregate_scale(X, meta)
N = (X * a + c) / 100
idx = {str(n): i for i, n in enumerate(raw.index)}
fam = lambda n: re.split(r"[-+_ .]", n.lower())[0]  # noqa: E731
D, M, A, Z = [], [], [], []
for r in json.load(open(path)):
    S = np.array(r["subset"])
    T = N[[idx[n] for n in r["train"]]][:, S]
    sd = np.nanstd(T, 0)
    sd = np.where(sd > 0, sd, 1.0)
    t, lo, hi, u = (np.array(r[k]) for k in ("agg_true", "lo", "hi", "usable"))
    trf = {fam(n) for n in r["train"]}
    for j, n in enumerate(r["test"]):
        if u[j]:
            d = np.sqrt(np.nanmean(((T - N[idx[n], S]) / sd) ** 2, 1))
            D.append(np.nanmin(d))
            M.append(not lo[j] <= t[j] <= hi[j])
            A.append(fam(n) not in trf)
            Z.append(abs(t[j] - (lo[j] + hi[j]) / 2) / ((hi[j] - lo[j]) / 2))
D, M, A, Z = map(np.array, (D, M, A, Z))
print(f"{name}: {len(D)} test cases, {M.sum()} missed; family (first name token) absent from training: "
      f"{A.sum()} cases, miss rate {M[A].mean() if A.any() else float('nan'):.3f} vs {M[~A].mean():.3f}")
if M.any():
    print(f"  nearest-neighbour distance: missed median {np.median(D[M]):.2f}, covered {np.median(D[~M]):.2f} "
          f"(Mann-Whitney p={mannwhitneyu(D[M], D[~M]).pvalue:.2g}); spearman(distance, |miss|/half) {spearmanr(D, Z)[0]:+.2f}")
th = np.median(D)
print(f"  miss rate, far half {M[D > th].mean():.3f}, near half {M[D <= th].mean():.3f}")
