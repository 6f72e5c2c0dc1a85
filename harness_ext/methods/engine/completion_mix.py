"""Other completers for the fitted matrix's missing cells, stacked with the engine's by cross-validation.

:class:`~harness_ext.methods.engine.completion.LowRankCompleter` completes the
cells of the matrix it is fitted on with its own low-rank model (transform,
rank and penalty chosen by cross-validation). Three completers of other kinds
make different errors: BenchPress's
(:mod:`~harness_ext.methods.engine.benchpress`: a per-column logit and
z-score, a rank-2 bias model with one penalty on biases and factors, ten
random starts averaged), a ridge regression of every dataset on the
others, filled by BenchPress's model at ranks 1-3
(:mod:`~harness_ext.methods.engine.column_ridge`), and the same filling
corrected by the residuals of each model's nearest models
(:mod:`~harness_ext.methods.engine.neighbour_residual`). The average of
completers with different errors is better than either where neither
dominates (Breiman, 1996). The cells' completion is a weighted average of
the four (:data:`MEMBERS`), the weights stacked (Breiman, 1996, stacked
regressions): non-negative least squares, rescaled to sum to 1, of the held-out
observed cells of a K-fold cross-validation inside the fitted matrix on the four
completers' predictions of them, in column-sd units. A member the stack gives
weight 0 is not run on the full matrix. The weights never see the cells they
complete; a stack, unlike a choice among a few fixed averages, lets the weakest
member's share go to zero on a matrix where it only adds error.

Only the fitted matrix's cells use the mix; new models keep the fold-in and
direct regression of :meth:`~harness_ext.methods.engine.completion.LowRankCompleter.predict_new_models`.

References
----------
Zeng & Papailiopoulos, "You Don't Need to Run Every Eval", arXiv 2606.24020 (2026), §4.2 (logit bias ALS);
van Buuren & Groothuis-Oudshoorn, Journal of Statistical Software 2011 (regression imputation);
Breiman, "Bagging predictors", Machine Learning 1996 (averaging predictors); Breiman, "Stacked regressions",
Machine Learning 1996 (non-negative least-squares weights on cross-validated predictions); Hastie, Tibshirani &
Friedman, *Elements of Statistical Learning* (2009), §7.10 (K-fold cross-validation).
"""

from __future__ import annotations

import numpy as np

from . import benchpress as bp
from . import column_ridge
from .cell_cv import inverse_column_sd

#: The completers mixed, in the order of a weight vector.
MEMBERS = ("engine", "benchpress", "ridge", "neighbours")


def others(X, weights=None):
    """BenchPress's, the column ridge's and the neighbour residuals' completions of ``X`` (own units), one BenchPress
    fill shared; with ``weights`` (over :data:`MEMBERS`), ``None`` in place of a member at weight 0 that need not run."""
    w = (0.0, 1.0, 1.0, 1.0) if weights is None else tuple(float(v) for v in weights)
    if w[2] > 0 or w[3] > 0:
        parts = column_ridge.completions(X, neighbours=w[3] > 0)
        return parts if len(parts) == 3 else parts + (None,)
    return (bp.complete_units(X) if w[1] > 0 else None), None, None


def combine(weights, own, X):
    """``weights @ (own, BenchPress's, ridge's, neighbours' completion of X)`` cell by cell; completers at weight 0
    are not run."""
    w = tuple(float(v) for v in weights)
    return sum(wk * part for wk, part in zip(w, (own, *others(X, w))) if wk > 0)


def as_weights(value) -> tuple:
    """A fixed ``bp_mix`` (BenchPress's weight against the engine's) as a weight vector over :data:`MEMBERS`."""
    w = float(value)
    return (1.0 - w, w, 0.0, 0.0)


def stack_weights(parts, truth, inv_sd) -> tuple:
    """Non-negative weights summing to 1 of the rows of ``parts`` (completers' predictions of held-out cells) by
    least squares of ``truth`` in column-sd units (Breiman, 1996, stacked regressions); equal weights if every
    least-squares weight is 0. Rounded to 1e-6 (and renormalised) so tiny numerical noise cannot move a manifest."""
    from scipy.optimize import nnls

    A = (np.asarray(parts, dtype=float) * inv_sd).T
    w, _ = nnls(A, np.asarray(truth, dtype=float) * inv_sd)
    w = np.full(A.shape[1], 1.0 / A.shape[1]) if w.sum() <= 0 else w / w.sum()
    w = np.round(w, 6)
    return tuple(float(v) for v in w / w.sum())


def choose_mix(est, X):
    """``(weights, info)``: the weights of the completers over :data:`MEMBERS`, stacked on ``est.cv_folds``-fold CV.

    Each fold hides a seeded share of the observed cells and completes the
    rest with a copy of the engine fitted on the fold from scratch (its
    settings searched again, so the hidden cells never chose them: the
    settings chosen on the whole matrix make the engine's held-out error look
    5-10% lower than it is), with BenchPress, the column ridge and the
    neighbour residuals (:func:`others`); the weights are the non-negative
    least-squares stack of the four predictions of every hidden cell
    (:func:`stack_weights`). ``info`` lists the weights and each member's and
    the stack's held-out error (median of ``|error| / column sd``). Costs
    ``cv_folds`` fits of each completer.
    """
    from ...base import clone

    idx = np.flatnonzero(~np.isnan(X).ravel())
    K = int(est.cv_folds)
    if K < 2 or idx.size < 2 * K:
        return tuple(np.full(len(MEMBERS), 1.0 / len(MEMBERS))), None
    rng = np.random.default_rng(est.random_state + 53)
    fold = rng.permutation(idx.size) % K
    inv_sd = inverse_column_sd(X)
    parts, hidden = [], []
    for f in range(K):
        hide = idx[fold == f]
        Xt = X.ravel().copy()
        Xt[hide] = np.nan
        Xt = Xt.reshape(X.shape)
        own = clone(est).set_params(bp_mix=0.0).fit(Xt).mean_.ravel()[hide]
        parts.append(np.stack([own, *(c.ravel()[hide] for c in others(Xt))]))
        hidden.append(hide)
    P, hide = np.concatenate(parts, axis=1), np.concatenate(hidden)
    truth, s = X.ravel()[hide], inv_sd[hide]
    w = stack_weights(P, truth, s)
    err = lambda v: round(float(np.median(np.abs(np.asarray(v) @ P - truth) * s)), 8)
    return w, {"n_folds": K, "weights": dict(zip(MEMBERS, (round(v, 6) for v in w))), "error": err(w),
               "member_error": {k: err(np.eye(len(MEMBERS))[i]) for i, k in enumerate(MEMBERS)}}


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
