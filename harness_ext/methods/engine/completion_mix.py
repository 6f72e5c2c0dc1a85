"""Other completers for the fitted matrix's missing cells, averaged with the engine's by cross-validation.

:class:`~harness_ext.methods.engine.completion.LowRankCompleter` completes the
cells of the matrix it is fitted on with its own low-rank model (transform,
rank and penalty chosen by cross-validation). Two completers of other kinds
make different errors: BenchPress's
(:mod:`~harness_ext.methods.engine.benchpress`: a per-column logit and
z-score, a rank-2 bias model with one penalty on biases and factors, ten
random starts averaged) and a ridge regression of every dataset on the
others, filled by BenchPress's model at ranks 1-3
(:mod:`~harness_ext.methods.engine.column_ridge`). The average of
completers with different errors is better than either where neither
dominates (Breiman, 1996). The cells' completion is the equal-weight
average of two or all three of them (:data:`MIX_GRID`), the set chosen by
K-fold cross-validation over held-out observed cells, scored like the
engine's other cell settings (median over held-out cells of the absolute
error over the column's sd); ties go to the set with more members. Equal
weights over several completers are the safe choice where a few hundred
held-out cells cannot tell weights apart (Smith & Wallis, 2009).

Only the fitted matrix's cells use the mix; new models keep the fold-in and
direct regression of :meth:`~harness_ext.methods.engine.completion.LowRankCompleter.predict_new_models`.

References
----------
Zeng & Papailiopoulos, "You Don't Need to Run Every Eval", arXiv 2606.24020 (2026), §4.2 (logit bias ALS);
van Buuren & Groothuis-Oudshoorn, Journal of Statistical Software 2011 (regression imputation);
Breiman, "Bagging predictors", Machine Learning 1996 (averaging predictors); Hastie, Tibshirani & Friedman,
*Elements of Statistical Learning* (2009), §7.10 (K-fold cross-validation); Smith & Wallis, "A simple
explanation of the forecast combination puzzle", Oxford Bulletin of Economics and Statistics 2009 (equal weights).
"""

from __future__ import annotations

import numpy as np

from . import benchpress as bp
from . import column_ridge
from .cell_cv import inverse_column_sd

#: The completers mixed, in the order of a weight triple.
MEMBERS = ("engine", "benchpress", "ridge")
#: Weights ``(engine, benchpress, ridge)`` tried: the equal-weight average of every set of two or three of them.
#: Equal weights, not a finer grid: a weight fitted on a few hundred held-out cells is noisy enough to lose what the
#: average gains (the forecast-combination puzzle, Smith & Wallis 2009); the CV only decides which completers join.
#: No completer alone: the CV's choice of a single member, on a few hundred held-out cells, loses more where it is
#: wrong than it gains where it is right.
MIX_GRID = ((0.5, 0.5, 0.0), (0.5, 0.0, 0.5), (0.0, 0.5, 0.5), (1 / 3, 1 / 3, 1 / 3))


def combine(weights, own, X):
    """``weights @ (own, BenchPress's, ridge's completion of X)`` cell by cell; completers at weight 0 are not run."""
    w = tuple(float(v) for v in weights)
    if w[2] > 0:
        bpc, ridge = column_ridge.completions(X)
    else:
        bpc, ridge = (bp.complete_units(X) if w[1] > 0 else None), None
    return sum(wk * part for wk, part in zip(w, (own, bpc, ridge)) if wk > 0)


def as_weights(value) -> tuple:
    """A fixed ``bp_mix`` (BenchPress's weight against the engine's) as a weight triple."""
    w = float(value)
    return (1.0 - w, w, 0.0)


def choose(err: dict):
    """The weights of ``err`` (``{weights: cv error}``, grid order) with the lowest error; ties to more members,
    then the earlier set."""
    grid = list(err)
    return min(grid, key=lambda w: (err[w], -sum(v > 0 for v in w), grid.index(w)))


def choose_mix(est, X, grid=MIX_GRID):
    """``(weights, info)``: the weights of the completers chosen by ``est.cv_folds``-fold CV over held-out cells.

    Each fold hides a seeded share of the observed cells and completes the
    rest with a copy of the engine fitted on the fold from scratch (its
    settings searched again, so the hidden cells never chose them: the
    settings chosen on the whole matrix make the engine's held-out error look
    5-10% lower than it is), with BenchPress and with the column ridge
    (:func:`~harness_ext.methods.engine.column_ridge.completions`); every
    weight triple of ``grid`` is scored on the hidden cells (median of
    ``|error| / column sd``) and chosen by :func:`choose`. ``info`` lists
    every triple's error. Costs ``cv_folds`` fits of each completer.
    """
    from ...base import clone

    grid = tuple(tuple(float(v) for v in w) for w in grid)
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
        parts = np.stack([own, *(c.ravel()[hide] for c in column_ridge.completions(Xt))])
        for w in grid:
            errs[w].append(np.abs(np.asarray(w) @ parts - X.ravel()[hide]) * inv_sd[hide])
    err = {w: float(np.median(np.concatenate(e))) for w, e in errs.items()}
    best = choose({w: round(v, 12) for w, v in err.items()})
    named = lambda w: {k: round(v, 6) for k, v in zip(MEMBERS, w)}
    return best, {"n_folds": K, "weights": named(best),
                  "error": [{"weights": named(w), "error": round(v, 8)} for w, v in err.items()]}


def mixed_cells(est):
    """``(mean, mean_z, weights, cv)`` of a fitted engine: its cells with the other completers mixed in (``bp_mix``)."""
    X, own = est.X_, est._own_mean
    w, cv = choose_mix(est, X) if est.bp_mix == "auto" else (as_weights(est._fixed_blend(est.bp_mix)), None)
    if w[0] >= 1.0:
        return own, est._mean_z, w, cv
    obs = ~np.isnan(X)
    mean = np.where(obs, X, combine(w, own, X))
    return mean, np.where(obs, est._mean_z, est.transform_.transform(mean)), w, cv


def mixed_fold(est, Zt, mean_z):
    """A calibration fold's centre (transformed space): the engine's ``mean_z`` on training matrix ``Zt`` mixed
    with the other completers' completion of the same cells at the fitted weights."""
    w = est.mix_weights_
    if w[0] >= 1.0:
        return mean_z
    own = est.transform_.inverse_transform(mean_z)
    return est.transform_.transform(combine(w, own, np.where(np.isnan(Zt), np.nan, est.X_)))
