"""Per matrix, each column's share of cells at or beyond the logit's clip as the store fit's predictor sees them
(store-normalised, detect_scales' logit columns), on all models and on the frontier split's weakest 50%: where no
column comes near 1/2 the screened rule cannot fire on those fits.

    python benchmarks/screens/storenorm/clipshare.py MATRIX ...   (shared matrices' names)
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from _holdout_matrices import load_matrices  # noqa: E402
from _holdout_frontier import frontier_splits  # noqa: E402
from _holdout_store import store_fit  # noqa: E402
from quality_holdout import aggregate_scale  # noqa: E402
from harness_ext.methods.engine.transforms import DEFAULT_EPS, LOGIT, detect_scales  # noqa: E402


def shares(Xn):
    out = []
    for j, e in enumerate(detect_scales(Xn)):
        x = Xn[:, j][~np.isnan(Xn[:, j])]
        if e["kind"] != LOGIT or x.size == 0:
            out.append(0.0)
            continue
        p = (x - e["lo"]) / (e["hi"] - e["lo"])
        out.append(float(np.mean((p <= DEFAULT_EPS) | (p >= 1 - DEFAULT_EPS))))
    return np.array(out)


for name, (raw, meta) in load_matrices(sys.argv[1:]).items():
    X = raw.to_numpy(float)
    a, c = aggregate_scale(X, meta)
    tr, _ = frontier_splits(raw, X, a, c)["frontier"]
    res = []
    for label, rows in (("all", np.arange(len(X))), ("weakest 50%", tr)):
        sf = store_fit(X[rows], meta, "store")
        Xn = X[rows] if sf is None else sf.normalise(X[rows])
        s = shares(Xn)
        k = int(np.argmax(s))
        res.append(f"{label}: max share {s[k]:.2f} ({raw.columns[k]}), columns above 0.3: {int((s > 0.3).sum())}")
    print(f"{name} {X.shape}: " + "; ".join(res), flush=True)
