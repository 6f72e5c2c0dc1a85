"""Base classes for method plugins, following scikit-learn conventions.

Parameters are explicit keyword arguments stored unchanged in ``__init__`` (no
validation there); validation happens in ``fit``; fitted state ends in ``_``.
``get_params()`` (scikit-learn's contract, implemented here so importing a
method does not import scikit-learn, about 1 s of start-up) is written into
manifests so that every run can be repeated; :func:`clone` makes an unfitted
copy. ``sklearn.base.clone`` accepts these estimators too.
"""

from __future__ import annotations

import copy
import inspect
from typing import Optional

import numpy as np

from .errors import MethodError


class BaseEstimator:
    """``get_params``/``set_params``/``repr`` by scikit-learn's rules, without scikit-learn.

    Parameters are the keyword arguments of ``__init__`` (no ``*args``),
    stored unchanged under the same names. ``get_params(deep=True)`` adds the
    parameters of estimator-valued parameters as ``name__param``, which
    ``set_params`` accepts too.
    """

    @classmethod
    def _get_param_names(cls) -> list:
        init = cls.__init__
        if init is object.__init__:
            return []
        params = [p for p in inspect.signature(init).parameters.values() if p.name != "self" and p.kind != p.VAR_KEYWORD]
        for p in params:
            if p.kind == p.VAR_POSITIONAL:
                raise MethodError(f"{cls.__name__}.__init__ takes *args; estimator parameters must be keyword arguments")
        return sorted(p.name for p in params)

    def get_params(self, deep: bool = True) -> dict:
        """Parameter names mapped to their values (``deep``: also nested estimators' as ``name__param``)."""
        out = {}
        for key in self._get_param_names():
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{key}__{k}", v) for k, v in value.get_params().items())
            out[key] = value
        return out

    def set_params(self, **params):
        """Set parameters (``name__param`` reaches into a nested estimator); returns ``self``."""
        if not params:
            return self
        valid = self.get_params(deep=True)
        nested: dict = {}
        for key, value in params.items():
            key, delim, sub = key.partition("__")
            if key not in valid:
                raise ValueError(f"invalid parameter {key!r} for estimator {type(self).__name__}; "
                                 f"valid parameters are {sorted(self._get_param_names())}")
            if delim:
                nested.setdefault(key, {})[sub] = value
            else:
                setattr(self, key, value)
                valid[key] = value
        for key, sub_params in nested.items():
            valid[key].set_params(**sub_params)
        return self

    def __repr__(self) -> str:
        # Like scikit-learn's default repr: only the parameters that differ from their defaults.
        sig = inspect.signature(type(self).__init__).parameters
        shown = []
        for key, value in self.get_params(deep=False).items():
            default = sig[key].default if key in sig else inspect.Parameter.empty
            try:
                same = default is not inspect.Parameter.empty and bool(default == value) and type(default) is type(value)
            except Exception:  # noqa: BLE001 - arrays and the like compare elementwise
                same = False
            if not same:
                shown.append(f"{key}={value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"


def clone(estimator, *, safe: bool = True):
    """An unfitted copy of ``estimator`` with the same parameters (scikit-learn's ``clone`` rules).

    Lists, tuples and sets are cloned element-wise; an object without
    ``get_params`` is deep-copied when ``safe`` is False and rejected otherwise.
    """
    if isinstance(estimator, (list, tuple, set, frozenset)):
        return type(estimator)(clone(e, safe=safe) for e in estimator)
    if not hasattr(estimator, "get_params") or isinstance(estimator, type):
        if not safe:
            return copy.deepcopy(estimator)
        raise TypeError(f"cannot clone {estimator!r} ({type(estimator).__name__}): it has no get_params method")
    params = {k: clone(v, safe=False) for k, v in estimator.get_params(deep=False).items()}
    return type(estimator)(**params)


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

