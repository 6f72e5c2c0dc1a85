"""Per-split diagnosis of protocol (a)'s aggregate 90% intervals (the default predictor only).

Replicates ``quality_holdout.py --protocols a --extra-predictors ""``'s default-predictor path
(same splits, subset, nested calibration, store fit) and records, per split, the calibration
(aggregate scores, their folds, the chosen rank and blend) and, per test model, the CV+ bounds
before the frontier step, the final bounds, the fold fits' centres and scales (so other levels
can be recomputed offline), the frontier flag and distance.

    HARNESS_EXT_SHARED_DATA=/work/shared/data nice -n 10 python benchmarks/screens/splitcov/diag.py \
        --matrix crosspred --splits 20 --out diag_crosspred.json
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
import quality_holdout as qh  # noqa: E402
from _holdout_store import store_fit  # noqa: E402

from harness_ext.methods.engine import newmodel_intervals as ni  # noqa: E402

CAPTURE: dict = {}
_orig_cv = ni.cv_plus_new_models


def _cv_capture(est, cal, X_new, z, O, W=None, mondrian=True):
    out = _orig_cv(est, cal, X_new, z, O, W, mondrian)
    if W is not None:
        _, _, aggs = ni._fold_predictions(est, cal, z, X_new, O, W)
        CAPTURE.update(centres=aggs[0], scales=aggs[1], scores=np.asarray(cal["agg_scores"]),
                       folds=np.asarray(cal["agg_folds"]), cv_lo=out[2], cv_hi=out[3])
    return out


ni.cv_plus_new_models = _cv_capture


def one_split(X, names, meta, s, k, a_sc, c_sc, runs):
    from harness_ext.methods.pounce import split_models

    m = X.shape[0]
    tr, te = split_models(m, 0.2, random_state=s) if runs is None else qh.split_runs(runs, 0.2, s)
    Xtr, Xte = X[tr], X[te]
    subset, _ = qh.choose_subset(Xtr, k, s, qh.DEFAULT_SELECTOR, "lowrank", a_sc, c_sc)
    keep, Xin, have, usable, target, W, C, agg_true = qh.test_targets(Xte, subset, a_sc, c_sc)
    reselect = qh.product_reselect(Xtr, k, s, qh.DEFAULT_SELECTOR, "lowrank", a_sc, c_sc, ni.FOLD_RESELECTION,
                                   groups=None if runs is None else runs[tr])
    sf = store_fit(Xtr, meta, "store")
    CAPTURE.clear()
    est = sf.predictor("lowrank", s).fit(sf.normalise(Xtr))
    Wn = W * sf.beta
    p = est.predict_new_models(sf.normalise(Xin), weights=Wn, reselect=reselect)
    offset = (W * sf.alpha).sum(1) + C
    lo, hi = p.aggregate_lower + offset, p.aggregate_upper + offset
    centre = CAPTURE["centres"].mean(0) + offset
    fr = getattr(p, "frontier", None)
    fstate = getattr(est, "frontier_", None)
    return {"split": s, "train": [names[i] for i in tr], "test": [names[i] for i in te],
            "usable": usable.tolist(), "agg_true": agg_true.tolist(), "lo": lo.tolist(), "hi": hi.tolist(),
            "cv_lo": (CAPTURE["cv_lo"] + offset).tolist(), "cv_hi": (CAPTURE["cv_hi"] + offset).tolist(),
            "centre": centre.tolist(), "offset": offset.tolist(),
            "centres": CAPTURE["centres"].tolist(), "scales": CAPTURE["scales"].tolist(),
            "scores": CAPTURE["scores"].tolist(), "folds": CAPTURE["folds"].tolist(),
            "q_agg": p.q_aggregate if hasattr(p, "q_aggregate") else None,
            "rank": int(getattr(est, "rank_new_", -1)), "blend": float(getattr(est, "blend_new_", -1)),
            "frontier": None if fr is None else np.asarray(fr).tolist(),
            "frontier_state": repr(fstate)[:400],
            "n_have": have.sum(1).tolist(), "n_subset_seen": (keep & have).sum(1).tolist(), "subset": list(map(int, subset))}


def main():
    global _orig_cv
    ap = argparse.ArgumentParser()
    ap.add_argument("--matrix", default="crosspred")
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--neighbour-scale", default="", help="candidate: 'mondrian' (two bins at the median distance, "
                    "installed from benchmarks/screens/splitcov2/neighbour_rule.py); 'scale' (1 + distance) ran at "
                    "adb22a29 only")
    a = ap.parse_args()
    if a.neighbour_scale:
        if a.neighbour_scale != "mondrian":
            sys.exit(f"diag.py: --neighbour-scale {a.neighbour_scale}: only 'mondrian' since the flag was removed")
        sys.path.insert(0, str(HERE.parent / "splitcov2"))
        ni.cv_plus_new_models = _orig_cv  # the rule wraps the product's function, the capture wraps the rule
        import neighbour_rule  # noqa: PLC0415 - the screened rule, by monkeypatching

        neighbour_rule.install()
        _orig_cv, ni.cv_plus_new_models = ni.cv_plus_new_models, _cv_capture
    from harness_ext.methods.engine.newmodel_intervals import run_groups
    from harness_ext.methods.reduction.budget import default_subset_size

    raw, meta = qh.load_matrices([a.matrix])[a.matrix]
    X = raw.to_numpy(dtype=float)
    names = [str(x) for x in raw.index]
    k = default_subset_size(X.shape[1])
    a_sc, c_sc = qh.aggregate_scale(X, meta)
    runs = run_groups(raw.index)
    out = []
    for s in range(a.first, a.first + a.splits):
        r = one_split(X, names, meta, s, k, a_sc, c_sc, runs)
        t, lo, hi, u = (np.array(r[x]) for x in ("agg_true", "lo", "hi", "usable"))
        print(f"split {s}: cov {((t >= lo) & (t <= hi))[u].mean():.3f}", flush=True)
        out.append(r)
        Path(a.out).write_text(json.dumps(out))


if __name__ == "__main__":
    main()
