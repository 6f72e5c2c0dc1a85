"""Why the frontier point prediction is far off on unseen leaderboards: one frontier split instrumented.

Runs ``quality_holdout.py``'s frontier split (``--protocols f``: fit on the weakest 50% by full aggregate, predict the
strongest 30%, the store fit) on each board and, patching nothing in the product (``apply_frontier`` is wrapped only
to keep its inputs), reports per board:

* the upper frontier folds' choice (``cals[+1]``: candidate, weight, ``max_distance``, held-out models);
* every option's held-out aggregate error on the folds (the loss ``calibrate_frontier`` minimises, per held-out model);
* every option's real aggregate MAE / bias on the split's test models (points of the 0-100 aggregate), blended as the
  product blends (weight times each model's ramp) and at full weight (``candidate@1!``: ramp ignored);
* the test models' frontier distance against the folds' reach, their ramps and how many are flagged.

    HARNESS_EXT_NO_PROGRESS=1 nice -n 10 python benchmarks/screens/frontbias/diagnose.py NAME=FILE [NAME=FILE ...]
        [--json OUT]
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
from harness_ext.methods.engine import frontier as F  # noqa: E402

CAP: list = []
_orig = F.apply_frontier


def _wrapped(est, fit, fi, mz, z, X_new, O, W, w_cal, out, W_extra=None, extra_truth=None):
    dist, cals = _orig(est, fit, fi, mz, z, X_new, O, W, w_cal, out, W_extra=W_extra, extra_truth=extra_truth)
    CAP.append(dict(est=est, fit=fit, mz=mz.copy(), z=z, X_new=X_new, O=O, w_cal=w_cal, dist=dist, cals=cals,
                    mean=out["mean"].copy()))
    return dist, cals


F.apply_frontier = _wrapped


def _options():
    return [(None, 0.0)] + [(c, a) for c in F.CANDIDATES for a in F.FRONTIER_WEIGHTS if a > 0]


def fold_table(est, pattern, w_cal):
    """Per option: the folds' held-out aggregate absolute error per held-out model (calibrate_frontier's loss)."""
    recs = F._weighted(est, F.frontier_folds(est, pattern, 1), w_cal, None)
    n = 0
    for rec in recs:
        _, _, _, ok = F._aggregate(est, rec["Tt"], rec["have"], rec["seen"], rec["eng"], w_cal)
        n += int(ok.sum())
    out = {}
    for opt in _options():
        out[opt] = sum(F._fold_loss(est, rec, w_cal, *opt) for rec in recs) / max(n, 1)
    # the full-weight (ramp ignored) error of each candidate on the folds, signed too
    full = {}
    for c in F.CANDIDATES:
        e = []
        for rec in recs:
            mzf = F._blend(rec, c, 1.0, full=True)
            a_true, a_pred, _, ok = F._aggregate(est, rec["Tt"], rec["have"], rec["seen"], mzf, w_cal)
            e.append((a_pred - a_true)[ok])
        e = np.concatenate(e)
        full[c] = (float(np.abs(e).mean()), float(e.mean()))
    e = []
    for rec in recs:
        a_true, a_pred, _, ok = F._aggregate(est, rec["Tt"], rec["have"], rec["seen"], rec["eng"], w_cal)
        e.append((a_pred - a_true)[ok])
    e = np.concatenate(e)
    full["engine"] = (float(np.abs(e).mean()), float(e.mean()))
    dists = np.concatenate([r["dist"] for r in recs])
    return out, full, n, dists


def run_board(name, raw, meta):
    X = raw.to_numpy(dtype=float)
    from harness_ext.methods.reduction.budget import default_subset_size
    from harness_ext.methods.engine.newmodel_intervals import FOLD_RESELECTION, run_groups

    k = default_subset_size(X.shape[1])
    a_sc, c_sc = qh.aggregate_scale(X, meta)
    tr, te = qh.frontier_splits(raw, X, a_sc, c_sc)["frontier"]
    Xtr, Xte = X[tr], X[te]
    s = 0
    subset, _ = qh.choose_subset(Xtr, k, s, qh.DEFAULT_SELECTOR, "lowrank", a_sc, c_sc, None)
    keep, Xin, have, usable, target, W, C, agg_true = qh.test_targets(Xte, subset, a_sc, c_sc)
    runs = run_groups(raw.index)
    reselect = qh.product_reselect(Xtr, k, s, qh.DEFAULT_SELECTOR, "lowrank", a_sc, c_sc, FOLD_RESELECTION,
                                   groups=None if runs is None else runs[tr])
    sf = qh.store_fit(Xtr, meta, "store")
    CAP.clear()
    if sf is None:
        from harness_ext.methods.pounce import make_predictor
        p = make_predictor("lowrank", random_state=s).fit(Xtr).predict_new_models(Xin, weights=W, reselect=reselect)
    else:
        p = sf.predict("lowrank", s, Xtr, Xin, W, reselect)
    cap = [c for c in CAP if c["X_new"].shape[0] == len(te)][-1]
    est, fit, mz, z, O, w_cal = cap["est"], cap["fit"], cap["mz"], cap["z"], cap["O"], cap["w_cal"]

    def to_agg(m_norm_mean):  # a prediction on the fitted scale -> the aggregate in points, as quality_holdout scores
        mean = m_norm_mean
        if sf is not None:
            mean = sf.to_raw(np.clip(mean, *sf.ends))
        pred = np.where(keep & have, Xte, mean)
        agg = (np.where(have, pred, 0.0) * W).sum(1) + C
        e = (agg - agg_true)[usable]
        return float(np.abs(e).mean()), float(e.mean())

    def from_z(mzz):
        return np.where(O, cap["X_new"], est.transform_.inverse_transform(mzz))

    prod = to_agg(p.mean if sf is None else cap["mean"])  # the product's own prediction
    pattern = O.any(0)
    pos_train = F.positions(est.Z_, pattern)
    pos_new = F.positions(z, pattern)
    dist = cap["dist"]
    ramp = F.blend_ramp(pos_new, pos_train, 1)
    cal = cap["cals"].get(1)
    x_in = np.where(O, cap["X_new"], np.nan)
    cands = {c: F._candidate(est, c, fit, est.Z_, pos_train, z, x_in, O, X_fit=est.X_, w=w_cal) for c in F.CANDIDATES}
    real = {}
    for c, a in _options():
        if c is None:
            real[(c, a)] = to_agg(from_z(mz))
            continue
        aa = a * ramp[:, None]
        real[(c, a)] = to_agg(from_z((1 - aa) * mz + aa * cands[c]))
    real_full = {c: to_agg(from_z(cands[c])) for c in F.CANDIDATES}
    folds, folds_full, n_fold, fold_d = fold_table(est, pattern, w_cal)
    # subset mean as quality_holdout scores it (SubM)
    col = np.tile(np.nanmean(Xtr, 0), (len(te), 1))
    seen = keep & ~np.isnan(Xte)
    sub_pts = np.where(seen, Xte * a_sc + c_sc, 0.0).sum(1) / np.maximum(seen.sum(1), 1)
    sub_pred = np.where(seen.any(1)[:, None], (sub_pts[:, None] - c_sc) / a_sc, col)
    pred = np.where(keep & have, Xte, np.where(keep, Xte, sub_pred))
    e = ((np.where(have, pred, 0.0) * W).sum(1) + C - agg_true)[usable]
    subm = (float(np.abs(e).mean()), float(e.mean()))
    # test models' own positions versus the fit's: how far out they are, in the training positions' sd
    best_real = min(real, key=lambda o: real[o][0])
    best_fold = min(folds, key=lambda o: (round(folds[o], 10), o[1]))
    return dict(
        name=name, shape=list(X.shape), n_train=len(tr), n_test=len(te), n_usable=int(usable.sum()),
        subset=[str(raw.columns[j]) for j in subset], store_fit=sf is not None,
        chosen=None if cal is None else [cal.candidate, cal.weight], fold_choice_check=list(best_fold),
        max_distance=None if cal is None else cal.max_distance, n_distinct=None if cal is None else cal.n_distinct,
        fold_aggregate_mae=None if cal is None else cal.aggregate_mae,
        fold_held_out=n_fold, fold_dist_q=[float(v) for v in np.quantile(fold_d, [0.5, 0.9, 1.0])],
        test_dist=[float(v) for v in np.quantile(dist[usable], [0.0, 0.5, 0.9, 1.0])],
        test_flagged=float((dist[usable] > 0).mean()),
        test_beyond_reach=None if cal is None else float((dist[usable] > cal.max_distance).mean()),
        test_ramp=[float(v) for v in np.quantile(ramp[usable], [0.0, 0.5, 1.0])],
        product=prod, subset_mean=subm,
        real={f"{c}@{a}": v for (c, a), v in real.items()},
        real_full={f"{c}@1!": v for c, v in real_full.items()},
        folds={f"{c}@{a}": v for (c, a), v in folds.items()},
        folds_full=folds_full,
        best_real=f"{best_real[0]}@{best_real[1]}", best_real_mae=real[best_real][0])


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("boards", nargs="+", help="NAME=FILE")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    out = []
    for spec in args.boards:
        name, _, path = spec.partition("=")
        mats = qh.load_user_matrices(csv=(path,), store=None, benchmarks=())
        for mname, (raw, meta) in mats.items():
            r = run_board(name if len(mats) == 1 else f"{name}:{mname}", raw, meta)
            out.append(r)
            report(r)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


def report(r):
    print(f"\n== {r['name']} {r['shape']} train {r['n_train']} test {r['n_test']} (usable {r['n_usable']}), "
          f"subset {r['subset']}, store fit {r['store_fit']}")
    print(f"  folds chose {r['chosen']} (recomputed {r['fold_choice_check']}), fold MAE {r['fold_aggregate_mae']}, "
          f"held out {r['fold_held_out']} ({r['n_distinct']} distinct), fold dist q50/q90/max "
          f"{np.round(r['fold_dist_q'], 2).tolist()}, max_distance {r['max_distance']}")
    print(f"  test dist min/q50/q90/max {np.round(r['test_dist'], 2).tolist()}, flagged {r['test_flagged']:.2f}, "
          f"beyond reach {r['test_beyond_reach']}, ramp min/q50/max {np.round(r['test_ramp'], 2).tolist()}")
    print(f"  product real MAE/bias {r['product'][0]:.2f} / {r['product'][1]:+.2f}; SubM {r['subset_mean'][0]:.2f} / "
          f"{r['subset_mean'][1]:+.2f}; best real option {r['best_real']} {r['best_real_mae']:.2f}")
    print(f"  {'option':24s} {'folds loss/model':>16s} {'real MAE':>9s} {'real bias':>9s}")
    for key, (m, b) in r["real"].items():
        print(f"  {key:24s} {r['folds'][key]:16.3f} {m:9.2f} {b:+9.2f}")
    print(f"  {'full weight (ramp 1)':24s} {'folds MAE/bias':>16s}")
    for c, (m, b) in r["real_full"].items():
        fm, fb = r["folds_full"][c.split("@")[0]]
        print(f"  {c:24s} {fm:8.3f}/{fb:+7.3f} {m:9.2f} {b:+9.2f}")
    fm, fb = r["folds_full"]["engine"]
    print(f"  {'engine':24s} {fm:8.3f}/{fb:+7.3f}")


if __name__ == "__main__":
    main()
