"""Base classes for method plugins, following scikit-learn conventions.

Parameters are explicit keyword arguments stored unchanged in ``__init__`` (no
validation there); validation happens in ``fit``; fitted state ends in ``_``.
``get_params()`` comes from :class:`sklearn.base.BaseEstimator` and is written
into manifests so that every run can be repeated.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from sklearn.base import BaseEstimator

from .errors import MethodError


def check_matrix(X, *, allow_nan: bool = True, min_rows: int = 1, min_cols: int = 1, name: str = "X") -> np.ndarray:
    """Return ``X`` as a 2-D float64 array, raising :class:`MethodError` on bad shapes or inf."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise MethodError(f"{name} must be 2-D (models x datasets), got shape {X.shape}")
    if X.shape[0] < min_rows or X.shape[1] < min_cols:
        raise MethodError(f"{name} has shape {X.shape}; need at least {min_rows} rows and {min_cols} columns")
    if np.isinf(X).any():
        raise MethodError(f"{name} contains infinite values")
    if not allow_nan and np.isnan(X).any():
        raise MethodError(f"{name} contains missing values; this method needs a complete matrix")
    return X


class BaseSelector(BaseEstimator):
    """Selects an ordered subset of datasets (columns).

    Subclasses implement ``fit(X, features=None)`` and set ``order_``: a 1-D int
    array of column indices in selection order. ``n_select=None`` means order all
    columns (what coverage curves need).

    ``nested`` says whether the size-k subset is always the first k of one
    ordering (greedy and random orders). A selector whose best k-subset is
    not a prefix of its best (k+1)-subset (k-means, optimal designs with swaps)
    sets it False and takes ``n_select``; the comparison protocol then fits it
    once per k.
    """

    nested: bool = True

    def fit(self, X, features: Optional[np.ndarray] = None):  # pragma: no cover - interface
        raise NotImplementedError

    def subset(self, k: int) -> np.ndarray:
        """The first ``k`` selected column indices."""
        return np.asarray(self.order_[:k], dtype=int)


class BasePredictor(BaseEstimator):
    """Completes a performance matrix.

    ``fit(X)`` takes ``(n_models, n_datasets)`` with NaN for unobserved cells and
    sets ``mean_`` (every cell filled; observed cells are passed through) and
    ``std_`` (predictive standard deviation, 0 on observed cells) or ``None``
    when the method has no uncertainty of its own.
    """

    def fit(self, X):  # pragma: no cover - interface
        raise NotImplementedError

    def complete(self, X):
        """Fit on ``X`` and return ``(mean_, std_)``."""
        self.fit(X)
        return self.mean_, self.std_


class BaseWeighting(BaseEstimator):
    """Weights the columns (datasets or prompts) of a matrix; ``fit(X)`` sets ``weights_``.

    ``weights_`` is a non-negative 1-D array of length ``n_columns`` summing to 1.
    """

    def fit(self, X):  # pragma: no cover - interface
        raise NotImplementedError


_CONTROLLER = None


def limit_threads(limits: int = 1, user_api: str = "blas"):
    """Context manager limiting a native thread pool (``"blas"`` or ``"openmp"``).

    Small products and solves (a models x datasets matrix, ``|S| x |S|`` systems,
    k-means on a few hundred points) gain nothing from several threads and on a
    busy 2-core machine run 2-3 times slower with them. The controller is built
    once per process: building one scans the loaded libraries (about 5 ms, more
    than a whole ridge fit on an 838 x 57 matrix).
    """
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=limits, user_api=user_api)

