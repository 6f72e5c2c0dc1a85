"""The lowrank predictor's transform cross-validation on a board's frontier training models, on both fits:
which transforms 'auto' gives, the held-out cell error of each candidate, and the share of training cells at the
logit's clip (eps = 1% of the scale).

    python benchmarks/screens/storenorm/scalecv.py FILE
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from _holdout_matrices import load_user_matrices  # noqa: E402
from _holdout_frontier import frontier_splits  # noqa: E402
from _holdout_store import store_fit  # noqa: E402
from quality_holdout import aggregate_scale  # noqa: E402
from harness_ext.methods.pounce import make_predictor  # noqa: E402
from harness_ext.methods.engine.transforms import detect_scales  # noqa: E402

for name, (raw, meta) in load_user_matrices(csv=[sys.argv[1]], verbose=False).items():
    X = raw.to_numpy(float)
    a, c = aggregate_scale(X, meta)
    tr, te = frontier_splits(raw, X, a, c)["frontier"]
    Xtr = X[tr]
    sf = store_fit(Xtr, meta, "store")
    print(f"== {name}")
    for fit, est, Xf in (("raw", make_predictor("lowrank", random_state=0), Xtr),
                         ("store", sf.predictor("lowrank", 0), sf.normalise(Xtr))):
        det = detect_scales(Xf)
        est.fit(Xf)
        errs = {(e["scales"], e["cell_blend"]): e["error"] for e in est.scales_cv_["error"] if not e.get("ensemble")}
        best = {s: min(v for (sp, _), v in errs.items() if sp == s) for s in {sp for sp, _ in errs}}
        print(f"  {fit:5}: auto = {[d['kind'] for d in det]}; CV error by candidate {best}; chosen "
              f"{est.scales_cv_['chosen']}, kinds {est.scale_transform_.kinds_() if hasattr(est, 'scale_transform_') else '?'}")
    for j, col in enumerate(raw.columns):
        lo_clip = np.mean(Xtr[:, j] / 100.0 <= 0.01) if sf.params["scale"].iloc[j] == "percent" else float("nan")
        print(f"  {col:>14}: training cells at or below 1% of the scale: {lo_clip:.2f}; training max {np.nanmax(Xtr[:, j]):.2f}")
