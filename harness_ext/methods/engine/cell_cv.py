"""Cross-validation over held-out observed cells on the datasets' own scales: how
:class:`~harness_ext.methods.engine.completion.LowRankCompleter` chooses its transform, cell blend and rank ensemble.

References
----------
Hastie, Tibshirani & Friedman, *Elements of Statistical Learning* (2009), §7.10 (K-fold cross-validation);
Breiman, "Bagging predictors", Machine Learning 1996 (averaging fits, the rank ensemble).
"""

from __future__ import annotations

import numpy as np

from .direct_ridge import direct_predict
from .lowrank import MAX_CV_ROWS, RankEnsemble, fit_als


def _cell_cv_error(X, Z, transform, rank, lam, est, blends, ensemble=None) -> dict:
    """Held-out cell error on the datasets' own scales per blend weight: K seeded folds, median |error| / column sd.

    The median, not the mean: a few broken runs (near-zero scores at the logit
    clip, a collapsed model) make errors of tens of column sds that decide a
    mean, and with it the transform and blend for every other cell; the median
    scores the typical cell, which is what a completion is asked for.
    A matrix with more than ``MAX_CV_ROWS`` models is scored on a seeded sample of them,
    as :func:`~harness_ext.methods.engine.lowrank.select_rank_lam` does.
    """
    errors = _cell_cv_errors(X, Z, transform, rank, lam, est, blends, ensemble)
    return {a: (float(np.median(e)) if e.size else 0.0) for a, e in errors.items()}


def _cell_cv_errors(X, Z, transform, rank, lam, est, blends, ensemble=None) -> dict:
    """``{blend: |error| / column sd of every held-out cell}`` over ``est.cv_folds`` seeded folds (see :func:`_cell_cv_error`).

    ``ensemble`` (``{"ranks", "lam"}``): also ``{("ensemble", blend): ...}`` for the average of those ranks' fits
    (:class:`~harness_ext.methods.engine.lowrank.RankEnsemble`) in the same folds.
    """
    rng = np.random.default_rng(est.random_state + 31)
    if X.shape[0] > MAX_CV_ROWS:
        rows = np.sort(rng.choice(X.shape[0], MAX_CV_ROWS, replace=False))
        X, Z = X[rows], Z[rows]
    idx = np.flatnonzero(~np.isnan(Z).ravel())
    K = int(est.cv_folds)
    if K < 2 or idx.size < 2 * K:
        return {a: np.zeros(0) for a in blends}
    fold = rng.permutation(idx.size) % K
    inv_sd = inverse_column_sd(X)
    out = {a: [] for a in blends}
    out.update({("ensemble", a): [] for a in (blends if ensemble else ())})
    for f in range(K):
        hide = idx[fold == f]
        Zt = Z.ravel().copy()
        Zt[hide] = np.nan
        Zt = Zt.reshape(Z.shape)
        fit = fit_als(Zt, rank=rank, lam=lam, lam_bias=est.lam_bias, max_iter=60, tol=1e-4,
                      random_state=est.random_state)
        mz = fit.mean()
        direct = direct_predict(fit, Zt, Zt) if any(a > 0 for a in blends) else mz
        fits = [(a, mz, direct) for a in blends]
        if ensemble:
            # The chosen rank's member is the fold's single fit (the same call): not fitted twice.
            same = ensemble["lam"] == lam
            avg = RankEnsemble(fit if same and r == rank else
                               fit_als(Zt, rank=r, lam=ensemble["lam"], lam_bias=est.lam_bias, max_iter=60, tol=1e-4,
                                       random_state=est.random_state) for r in ensemble["ranks"])
            me = avg.mean()
            de = direct_predict(avg, Zt, Zt) if any(a > 0 for a in blends) else me
            fits += [(("ensemble", a), me, de) for a in blends]
        for key, mean_z, dir_z in fits:
            a = key[1] if isinstance(key, tuple) else key
            pred = transform.inverse_transform((1.0 - a) * mean_z + a * dir_z).ravel()[hide]
            out[key].append(np.abs(pred - X.ravel()[hide]) * inv_sd[hide])
    return {a: np.concatenate(v) for a, v in out.items()}


def inverse_column_sd(X) -> np.ndarray:
    """``1 / sd`` of each column's observed cells, for every cell of ``X`` (flattened): the cell CV's error scale."""
    # A column with no observed cell (a sparse leaderboard's, once rows are sampled) keeps sd 1, as NaN did,
    # without numpy's empty-slice warning reaching the user; so does a constant one.
    has = ~np.isnan(X).all(axis=0)
    sd = np.ones(X.shape[1])
    sd[has] = np.sqrt(np.nanvar(X[:, has], axis=0))
    return np.broadcast_to(1.0 / np.where(sd > 1e-12, sd, 1.0), X.shape).ravel()

