"""The building blocks of pounce: predictors by name, new models predicted from a subset, splits and orders,
and the cross-validated error of a predictor for one subset (what ``reduce`` and ``predict`` report).

References
----------
SimBA (Subramani, Gomez and Diab 2025) §4 (regression from S to D \\ S), §5 (80/20 split), §7.2 (k-fold over models).
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Sequence, Union

import numpy as np
import pandas as pd

from ...base import BasePredictor, check_matrix
from ...errors import MethodError, PluginError
from ..engine.from_subset import predict_new_models, reindex_rows  # noqa: F401 - pounce's building blocks

OrderSpec = Union[None, Sequence[int], Callable[[np.ndarray], Sequence[int]]]


def make_predictor(name: str, **params) -> BasePredictor:
    """Instantiate a registered predictor by name with keyword parameters."""
    from ...plugin_manager import get_registration

    reg = get_registration("predictors", name)
    return reg.cls(**params)


def split_models(n_models: int, test_size: float = 0.2, random_state: int = 0):
    """Random 80/20 split of model rows: ``(train_idx, test_idx)``, both sorted.

    References
    ----------
    SimBA §5: "models are separated across training and test sets randomly with
    80% of models in training and 20% in test".
    """
    if not 0 < test_size < 1:
        raise MethodError(f"test_size must be in (0, 1), got {test_size!r}")
    n_test = int(round(test_size * n_models))
    if n_test < 1 or n_models - n_test < 2:
        raise MethodError(f"cannot split {n_models} models into train and test with test_size={test_size}")
    perm = np.random.default_rng(random_state).permutation(n_models)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def selector_order(X_train, selector: str = "greedy_coverage", random_state: int = 0, return_estimator: bool = False,
                   **params):
    """Full dataset order from a registered selector fitted on the training models (with ``return_estimator``:
    ``(order, fitted selector)``, for its ``describe()``).

    ``greedy_coverage`` defaults to ``similarity="minkowski"`` (SimBA Tables 4-5
    use Minkowski p=3). Raises PluginError if the selector is not registered.
    """
    from ...plugin_manager import get_registration

    reg = get_registration("selectors", selector)
    est = reg.cls()
    names = est.get_params()
    if reg.name == "greedy_coverage" and "similarity" in names and "similarity" not in params:
        params["similarity"] = "minkowski"
    if "random_state" in names:
        params.setdefault("random_state", random_state)
    if "n_select" in names:
        params.setdefault("n_select", None)
    est.set_params(**params)
    X_train = check_matrix(X_train)
    est.fit(X_train)
    order = np.asarray(est.order_, dtype=int)
    return (order, est) if return_estimator else order


def resolve_order(X_train, order: OrderSpec = None, selector: str = "greedy_coverage", random_state: int = 0):
    """``(order, source)``: a fixed order, a callable's, the selector's, or a random one.

    Falls back to a random permutation (seeded) only when the selector is not
    registered; ``source`` says which was used.
    """
    d = np.shape(X_train)[1]
    if callable(order):
        out, source = np.asarray(order(X_train), dtype=int), "callable"
    elif order is not None:
        out, source = np.asarray(order, dtype=int), "given"
    else:
        try:
            out, source = selector_order(X_train, selector, random_state), f"selector {selector}"
        except PluginError:
            out, source = np.random.default_rng(random_state).permutation(d), "random (selector not available)"
    if out.ndim != 1 or out.size == 0 or len(set(out.tolist())) != out.size or out.min() < 0 or out.max() >= d:
        raise MethodError(f"an order must list distinct column indices in [0, {d}), got {out!r}")
    return out, source



class CVError(NamedTuple):
    """Out-of-sample error of a predictor for one subset (:func:`cross_validated_error`).

    ``per_dataset``: RMSE per dataset over held-out models (NaN for datasets in
    the subset, which are observed, not predicted; a Series when ``X`` was a
    DataFrame). ``overall``: RMSE over every predicted held-out cell.
    ``aggregate``: RMSE of the predicted full-benchmark mean score (observed
    subset cells plus predictions, averaged over all datasets) over held-out
    models whose full row is known -- the interval width for an aggregate.
    """

    per_dataset: Union[np.ndarray, pd.Series]
    overall: float
    aggregate: float


def cross_validated_error(X, subset, predictor: BasePredictor, n_splits: int = 5, random_state: int = 0,
                          weights=None) -> CVError:
    """Per-dataset out-of-sample RMSE of ``predictor`` when models are observed on ``subset`` only.

    Models are split into ``n_splits`` folds; each fold's models play new
    models (only ``subset`` observed, :func:`predict_new_models`) for a
    predictor fitted with the other folds' rows. Missing cells are the normal
    case: held-out models reveal the subset cells they have and are scored on
    the others they have (:mod:`harness_ext.methods.engine.subset_cv`, which also
    says how the aggregate error of an incomplete row is estimated).

    Parameters
    ----------
    X : array-like or DataFrame, (models, datasets)
    subset : sequence of int or of column names (DataFrame)
    predictor : BasePredictor
        Unfitted; cloned per fold (row-aligned parameters are reindexed).
    n_splits : int
        Capped at the number of models.
    random_state : int
        Seeds the fold assignment.
    weights : array-like, optional
        Dataset weights of the full-benchmark aggregate (normalised to sum 1);
        default uniform (the mean over datasets).

    Returns
    -------
    CVError
        ``per_dataset``, ``overall`` and ``aggregate`` RMSE.

    References
    ----------
    SimBA §7.2 (k-fold over models); the error bar ``predict`` reports.
    """
    from ..engine.subset_cv import subset_errors

    columns = X.columns if isinstance(X, pd.DataFrame) else None
    if columns is not None:
        subset = [columns.get_loc(c) if not isinstance(c, (int, np.integer)) else int(c) for c in subset]
    Xa = check_matrix(X, min_rows=2)
    [res] = subset_errors(Xa, [subset], predictor, n_splits=n_splits, random_state=random_state, weights=weights)
    per = res.per_dataset
    if columns is not None:
        per = pd.Series(per, index=columns, name="rmse")
    return CVError(per, res.overall, res.aggregate)

