"""New models predicted from their results on a subset: the one prediction every cross-validation, pounce's
curves and ``predict`` build on.

A predictor is fitted on the reference models' full rows stacked with the new models' rows, the new models'
cells outside the subset masked; a predictor that can fold new rows in without refitting
(``predict_subsets``) does so.

References
----------
Subramani, Gomez and Diab (2025), SimBA, §4 (regression from the subset S to the rest of the benchmark, D \\ S).
"""

from __future__ import annotations

import numpy as np

from ...base import BasePredictor, check_matrix, clone
from ...errors import MethodError

__all__ = ["predict_new_models", "reindex_rows"]


def reindex_rows(predictor: BasePredictor, rows) -> BasePredictor:
    """An unfitted clone whose row-aligned parameters follow ``rows``.

    Predictors that take per-model side information (``model_profiles`` of
    constrained PMF) list those parameters in ``row_params``; evaluation code
    that subsets or reorders models must reindex them the same way.
    """
    est = clone(predictor)
    for p in getattr(est, "row_params", ()):
        value = est.get_params().get(p)
        if value is not None:
            est.set_params(**{p: np.asarray(value)[np.asarray(rows)]})
    return est


def predict_new_models(predictor: BasePredictor, X_train, X_new, subset=None, rows=None):
    """Predict new models' scores from their results on a subset.

    Parameters
    ----------
    predictor : BasePredictor
        Unfitted; it is cloned, never modified.
    X_train : array-like, (n_train, d)
        The reference models' rows (full rows for the regression predictors).
    X_new : array-like, (n_new, d) or (d,)
        New models' scores; NaN where not run. Cells outside ``subset`` are
        masked when ``subset`` is given, so full rows can be passed in
        evaluation.
    subset : sequence of int, optional
        Column indices the new models were run on.
    rows : sequence of int, optional
        Original row indices of ``[X_train; X_new]`` for reindexing
        row-aligned parameters (:func:`reindex_rows`); ``None`` leaves them as
        given (they must then align with the stacked matrix).

    Returns
    -------
    (mean, std)
        ``(n_new, d)`` arrays; observed cells pass through; ``std`` is None for
        predictors without uncertainty.
    """
    X_train = check_matrix(X_train, name="X_train")
    X_new = np.atleast_2d(np.asarray(X_new, dtype=float)).copy()
    if X_new.shape[1] != X_train.shape[1]:
        raise MethodError(f"X_new has {X_new.shape[1]} datasets, X_train {X_train.shape[1]}")
    if subset is not None:
        keep = np.zeros(X_new.shape[1], bool)
        keep[np.asarray(subset, dtype=int)] = True
        X_new[:, ~keep] = np.nan
    if subset is not None and hasattr(predictor, "predict_subsets"):
        # Same predictions as fitting the stacked matrix, without copying the training rows
        # (most of a ridge CV fold's time at 10,000 x 1,000).
        return clone(predictor).predict_subsets(X_train, X_new, [subset])[0], None
    est = reindex_rows(predictor, rows) if rows is not None else clone(predictor)
    est.fit(np.vstack([X_train, X_new]))
    n = X_train.shape[0]
    std = None if est.std_ is None else np.asarray(est.std_)[n:]
    return np.asarray(est.mean_)[n:], std
