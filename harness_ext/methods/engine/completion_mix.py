"""A second completer for the fitted matrix's missing cells: BenchPress's logit bias ALS, mixed in by cross-validation.

:class:`~harness_ext.methods.engine.completion.LowRankCompleter` completes the
cells of the matrix it is fitted on with its own low-rank model (transform,
rank and penalty chosen by cross-validation). BenchPress's completer
(:mod:`~harness_ext.methods.engine.benchpress`: a per-column logit and
z-score, a rank-2 bias model with one penalty on biases and factors, ten
random starts averaged) makes different errors; the average of two
completers with different errors is better than either where neither
dominates (Breiman, 1996). The weight of BenchPress's completion is chosen
from :data:`MIX_GRID` (the engine alone, the equal-weight average,
BenchPress alone) by K-fold cross-validation over held-out observed cells,
scored like the engine's other cell settings (median over held-out cells of
the absolute error over the column's sd), ties to the smaller weight.

Only the fitted matrix's cells use the mix; new models keep the fold-in and
direct regression of :meth:`~harness_ext.methods.engine.completion.LowRankCompleter.predict_new_models`.

References
----------
Zeng & Papailiopoulos, "You Don't Need to Run Every Eval", arXiv 2606.24020 (2026), §4.2 (logit bias ALS);
Breiman, "Bagging predictors", Machine Learning 1996 (averaging predictors); Hastie, Tibshirani & Friedman,
*Elements of Statistical Learning* (2009), §7.10 (K-fold cross-validation); Smith & Wallis, "A simple
explanation of the forecast combination puzzle", Oxford Bulletin of Economics and Statistics 2009 (equal weights).
"""

from __future__ import annotations

import numpy as np

from . import benchpress as bp
from .cell_cv import inverse_column_sd

#: Weights of BenchPress's completion tried: the engine's alone, the equal-weight average, BenchPress's alone.
#: Equal weights, not a finer grid: a weight fitted on a few hundred held-out cells is noisy enough to lose what the
#: average gains (the forecast-combination puzzle, Smith & Wallis 2009); the CV only decides whether one completer
#: is better alone.
MIX_GRID = (0.0, 0.5, 1.0)


def mix(own, other, weight: float) -> np.ndarray:
    """``(1 - weight) * own + weight * other``, cell by cell (each dataset's own scale)."""
    return own if weight <= 0.0 else (1.0 - weight) * own + weight * other


def choose_mix(est, X, grid=MIX_GRID):
    """``(weight, info)``: the weight of BenchPress's completion chosen by ``est.cv_folds``-fold CV over held-out cells.

    Each fold hides a seeded share of the observed cells and completes the
    rest twice: with a copy of the engine fitted on the fold from scratch
    (its settings searched again, so the hidden cells never chose them: the
    settings chosen on the whole matrix make the engine's held-out error look
    5-10% lower than it is) and with BenchPress
    (:func:`~harness_ext.methods.engine.benchpress.complete_units`); every
    weight of ``grid`` is scored on the hidden cells (median of ``|error| /
    column sd``). ``info`` lists every weight's error. Costs ``cv_folds`` fits.
    """
    from ...base import clone

    grid = tuple(float(w) for w in grid)
    idx = np.flatnonzero(~np.isnan(X).ravel())
    K = int(est.cv_folds)
    if len(grid) == 1 or K < 2 or idx.size < 2 * K:
        return grid[0], None
    rng = np.random.default_rng(est.random_state + 53)
    fold = rng.permutation(idx.size) % K
    inv_sd = inverse_column_sd(X)
    errs = {w: [] for w in grid}
    for f in range(K):
        hide = idx[fold == f]
        Xt = X.ravel().copy()
        Xt[hide] = np.nan
        Xt = Xt.reshape(X.shape)
        own = clone(est).set_params(bp_mix=0.0).fit(Xt).mean_.ravel()[hide]
        other = bp.complete_units(Xt).ravel()[hide]
        for w in grid:
            errs[w].append(np.abs(mix(own, other, w) - X.ravel()[hide]) * inv_sd[hide])
    err = {w: float(np.median(np.concatenate(e))) for w, e in errs.items()}
    best = min(grid, key=lambda w: (round(err[w], 12), w))
    return best, {"n_folds": K, "weight": best, "error": [{"weight": w, "error": round(v, 8)} for w, v in err.items()]}


def mixed_cells(est):
    """``(mean, mean_z, weight, cv)`` of a fitted engine: its cells with BenchPress's completion mixed in (``bp_mix``)."""
    X, own = est.X_, est._own_mean
    w, cv = choose_mix(est, X) if est.bp_mix == "auto" else (est._fixed_blend(est.bp_mix), None)
    w = float(w)
    if w <= 0:
        return own, est._mean_z, w, cv
    obs = ~np.isnan(X)
    mean = np.where(obs, X, mix(own, bp.complete_units(X), w))
    return mean, np.where(obs, est._mean_z, est.transform_.transform(mean)), w, cv


def mixed_fold(est, Zt, mean_z):
    """A calibration fold's centre (transformed space): the engine's ``mean_z`` on training matrix ``Zt`` mixed
    with BenchPress's completion of the same cells at the fitted weight."""
    w = est.bp_mix_
    if w <= 0:
        return mean_z
    other = bp.complete_units(np.where(np.isnan(Zt), np.nan, est.X_))
    return est.transform_.transform(mix(est.transform_.inverse_transform(mean_z), other, w))
