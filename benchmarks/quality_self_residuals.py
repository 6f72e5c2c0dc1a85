"""A new model's own subset residuals at the frontier: do they say how far it departs? (a screen's diagnostic).

Run::

    HARNESS_EXT_SHARED_DATA=/work/shared/data python benchmarks/quality_self_residuals.py helm_classic pythia_mmlu

For each frontier split of ``quality_holdout.py --protocols f`` (the subset chosen as ``reduce`` chooses it, the test
models predicted as ``predict`` predicts them), each test model's observed subset cells are predicted leave-one-out
from its other subset cells with the engine's own fold-in and blend; the residuals times the aggregate weights,
averaged over the subset and multiplied by the number of weighted datasets the model did not run, give its
*departure* in aggregate points (the aggregate's move if its other cells were off alike). The same is computed for
every held-out model of the frontier folds (the training models' strongest held out, the engine refitted on the
rest), which is where a rule using the departure would be calibrated.

Printed per split: the test models' coverage and mean error; the departure's mean and its correlation with the
aggregate error (truth - prediction) on the test models and on the folds (with the folds' least-squares slope);
the misses above the interval and their departure; then the coverage and median width of the interval extended
``upper + c max(departure, 0)`` (the lower bound by the negative part) for a grid of ``c``, and the aggregate MAE and
coverage of the point shifted by ``lambda x departure`` (the interval moved along, or joined with the unshifted one).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import quality_holdout as qh  # noqa: E402 - the protocol's matrices, subset choice and test targets
from _holdout_frontier import frontier_splits  # noqa: E402


def loo_residuals(est, fit, Z_fit, z_in, x_in, alpha):
    """``(n, d)`` residuals (own units) of each row's observed cells, each predicted from the row's other cells."""
    from harness_ext.methods.engine.frontier_aggregate import engine_prediction

    O = ~np.isnan(z_in)
    R = np.full(z_in.shape, np.nan)
    for j in np.flatnonzero(O.any(0)):
        zm = z_in.copy()
        zm[:, j] = np.nan
        _, mz = engine_prediction(fit, Z_fit, zm, alpha)
        R[:, j] = np.where(O[:, j], x_in[:, j] - est.transform_.inverse_transform(mz)[:, j], np.nan)
    return R


def departure(R, W, O, have):
    """The mean weighted residual over the observed cells times the number of weighted datasets not run."""
    mean = np.where(O, np.nan_to_num(R) * W, 0.0).sum(1) / np.maximum(O.sum(1), 1)
    return mean * ((W != 0) & have & ~O).sum(1)


def fold_departures(est, pattern, w, alpha):
    """``(error, departure)`` of every held-out model of the upper frontier folds, in the aggregate's units."""
    from harness_ext.methods.engine import frontier as fr
    from harness_ext.methods.engine.frontier_aggregate import engine_prediction, held_out_aggregate

    err, dep = [], []
    for rec in fr.frontier_folds(est, pattern, 1):
        ft, rows, held = rec["fit"], rec["rows"], rec["held_all"]
        Zt, Xt = est.Z_[held], est.X_[held]
        have = ~np.isnan(Zt)
        seen = pattern[None, :] & have
        z_in = np.where(seen, Zt, np.nan)
        _, mz = engine_prediction(ft, est.Z_[rows], z_in, alpha)
        a_true, a_pred, wt, ok = held_out_aggregate(est, Xt, have, seen, mz, w)
        e = departure(loo_residuals(est, ft, est.Z_[rows], z_in, np.where(seen, Xt, np.nan), alpha), wt, seen, have)
        err.append((a_true - a_pred)[ok])
        dep.append(e[ok])
    return np.concatenate(err), np.concatenate(dep)


def diagnose(name, raw, meta):
    from harness_ext.methods.engine.newmodel_intervals import FOLD_RESELECTION, calibration_weights, run_groups
    from harness_ext.methods.pounce import make_predictor
    from harness_ext.methods.reduction.budget import default_subset_size

    X = raw.to_numpy(dtype=float)
    k = default_subset_size(X.shape[1])
    a_sc, c_sc = qh.aggregate_scale(X, meta)
    runs = run_groups(raw.index)
    for variant, (tr, te) in frontier_splits(raw, X, a_sc, c_sc).items():
        Xtr, Xte = X[tr], X[te]
        subset, _ = qh.choose_subset(Xtr, k, 0, qh.DEFAULT_SELECTOR, "lowrank", a_sc, c_sc, None)
        keep, Xin, have, u, target, W, C, truth = qh.test_targets(Xte, subset, a_sc, c_sc)
        reselect = qh.product_reselect(Xtr, k, 0, qh.DEFAULT_SELECTOR, "lowrank", a_sc, c_sc, FOLD_RESELECTION,
                                       groups=None if runs is None else runs[tr])
        est = make_predictor("lowrank", random_state=0).fit(Xtr)
        p = est.predict_new_models(Xin, weights=W, reselect=reselect)
        agg, lo, hi = p.aggregate + C, p.aggregate_lower + C, p.aggregate_upper + C
        err = truth - agg
        alpha = float(getattr(est, "blend_new_", est._uncalibrated_blend()))
        rank = int(getattr(est, "rank_new_", est.rank_))
        fit = est.fit_ if rank == est.rank_ else est.__dict__["_fits_by_rank"][rank]
        O = ~np.isnan(Xin)
        dep = departure(loo_residuals(est, fit, est.Z_, est.transform_.transform(Xin), Xin, alpha), W, O, have)
        f_err, f_dep = fold_departures(est, O.any(0), calibration_weights(W), alpha)
        miss = u & (truth > hi)
        print(f"\n{name} {variant}: k={k}, {int(u.sum())} test models, coverage {((truth >= lo) & (truth <= hi))[u].mean():.3f}, "
              f"mean error (truth - prediction) {err[u].mean():+.2f}, median width {np.median((hi - lo)[u]):.2f}")
        print(f"  departure: test mean {dep[u].mean():+.2f}, correlation with the error {np.corrcoef(dep[u], err[u])[0, 1]:+.3f}; "
              f"folds ({f_err.size} held out) correlation {np.corrcoef(f_dep, f_err)[0, 1]:+.3f}, "
              f"slope {(f_dep @ f_err) / (f_dep @ f_dep):.3f}")
        if miss.any():
            print(f"  missed above: {int(miss.sum())}, their mean departure {dep[miss].mean():+.2f}, "
                  f"mean shortfall {(truth - hi)[miss].mean():.2f}")
        for c in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0):
            h, l_ = hi + c * np.maximum(dep, 0), lo - c * np.maximum(-dep, 0)
            print(f"  extension c={c:.1f}: coverage {((truth >= l_) & (truth <= h))[u].mean():.3f}, "
                  f"median width {np.median((h - l_)[u]):.2f}")
        for lam in (0.125, 0.25, 0.5, 1.0):
            s = lam * dep
            joined = (truth >= np.minimum(lo, lo + s)) & (truth <= np.maximum(hi, hi + s))
            print(f"  shift lambda={lam:.3f}: MAE {np.abs(agg + s - truth)[u].mean():.3f} (was {np.abs(err[u]).mean():.3f}), "
                  f"coverage moved {((truth >= lo + s) & (truth <= hi + s))[u].mean():.3f}, joined {joined[u].mean():.3f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("matrices", nargs="+", help=f"any of {', '.join(qh.SOURCES)}")
    ap.add_argument("--db", default=None, help="reuse DuckDB store files (as quality_holdout.py --db)")
    args = ap.parse_args(argv)
    for name, (raw, meta) in qh.load_matrices(args.matrices, db=args.db, verbose=False).items():
        diagnose(name, raw, meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
