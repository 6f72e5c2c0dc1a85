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
import numbers
from typing import Optional

import numpy as np

from .errors import MethodError, ParameterError


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


#: An analysis warns when an outcome unrelated to the data would give its result more often than this (``stalk``'s
#: chance fits on few points, ``weights``' rankings of a few models).
CHANCE_WARNING_RATE = 0.05


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


def percentage_hint(value: float) -> str:
    """`` (a percentage? use 0.9)`` for a level that reads as a percentage (90), else ``""``.

    Only from 50 up: a level of 1.5 is no percentage anyone means (a 1.5% interval), so telling its user to
    write 0.015 was nonsense.
    """
    return f" (a percentage? use {value / 100:g})" if 50.0 <= value < 100.0 else ""


def check_level(level, owner: Optional[str] = None) -> float:
    """``level`` as a float in (0, 1), or a :class:`~harness_ext.errors.ParameterError` (a MethodError and a
    ValueError) saying why, with a hint when it looks like a percentage.

    ``owner`` (an estimator's class name) starts the message; without it the message speaks of "the interval
    level" (``predict --level``).
    """
    subject = f"{owner}: level" if owner else "the interval level"
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not np.isfinite(level):
        raise ParameterError(f"{subject} must be a number in (0, 1), e.g. 0.9; got {level!r}")
    if not 0.0 < float(level) < 1.0:
        raise ParameterError(f"{subject} must be in (0, 1), e.g. 0.9; got {level!r}{percentage_hint(float(level))}")
    return float(level)


def short_repr(value) -> str:
    """``value`` for a message: its type and a short repr."""
    text = repr(value)
    return f"{type(value).__name__} {text[:60] + '...' if len(text) > 60 else text}"


def order_indices(order, n_datasets: Optional[int] = None) -> tuple:
    """``(indices, "")`` when ``order`` is a selector's order (dataset indices, each at most once), else
    ``(None, why)``: ``why`` names the value and what is wrong with it, to follow "set order_ to" or "gave".

    Integers, or floats that are whole numbers (indices read back from JSON); not booleans, text or an empty
    order. ``n_datasets`` bounds the indices to ``0..n_datasets - 1``.
    """
    try:
        arr = np.asarray(order)
        ok = arr.ndim == 1 and arr.size > 0 and (np.issubdtype(arr.dtype, np.integer) or (
            np.issubdtype(arr.dtype, np.floating) and bool(np.all(np.isfinite(arr))) and bool(np.all(arr == np.round(arr)))))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        return None, f"{short_repr(order)}, not a non-empty 1-D array of dataset indices (integers)"
    ints = arr.astype(np.int64)
    d = n_datasets
    if d is not None and (ints.min() < 0 or ints.max() >= d):
        return None, f"{short_repr(order)}, with indices outside 0..{d - 1}"
    repeats = ints.size - len(set(ints.tolist()))
    if repeats:
        return None, (f"{short_repr(order)}, which repeats indices ({repeats} repeat(s) in {ints.size}); "
                      "each dataset may appear once")
    return ints, ""


def check_source_items(source, items, owner: str, min_models: int = 1) -> tuple:
    """``(source, items)`` as a float matrix (models x items) and integer item indices into its columns.

    ``min_models``: the fewest source models (rows) the estimator needs; 0 for one that reads nothing from the
    population but its number of items (the sample mean).

    Raises
    ------
    ValueError
        If ``source`` is not a 2-D numeric array with at least ``min_models`` rows and one column, or ``items`` is not
        a non-empty 1-D array of distinct integer indices in ``[0, n_items)`` (a sample is drawn without replacement).
    """
    try:
        S = np.asarray(source, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{owner}.fit: source must be a numeric array (models x items)") from None
    if S.ndim != 2 or S.shape[0] < min_models or S.shape[1] < 1:
        raise ValueError(f"{owner}.fit: source must be a 2-D array (models x items) with at least "
                         f"{'one of each' if min_models == 1 else f'{min_models} models and one item'}; got shape {S.shape}")
    idx = np.asarray(items)
    if idx.ndim != 1 or idx.size == 0:
        raise ValueError(f"{owner}.fit: items must be a non-empty 1-D array of item indices; got shape {idx.shape}")
    if idx.dtype.kind == "f" and np.all(np.isfinite(idx)) and np.all(idx == np.round(idx)):
        idx = idx.astype(np.int64)  # 3.0 is item 3 (e.g. indices read back from JSON as floats)
    if idx.dtype.kind not in "iu":
        raise ValueError(f"{owner}.fit: items must be integer item indices (column positions of source), "
                         f"not {idx.dtype} values" + (" (a boolean mask? use np.flatnonzero(mask))"
                                                     if idx.dtype.kind == "b" else ""))
    bad = idx[(idx < 0) | (idx >= S.shape[1])]
    if bad.size:
        raise ValueError(f"{owner}.fit: {bad.size} item index(es) outside the task's {S.shape[1]} items "
                         f"(valid 0..{S.shape[1] - 1}): {', '.join(str(int(i)) for i in bad[:5])}"
                         f"{' ...' if bad.size > 5 else ''}")
    if np.unique(idx).size != idx.size:
        raise ValueError(f"{owner}.fit: items repeat an index ({idx.size - np.unique(idx).size} repeat(s)); "
                         "a sample of items is drawn without replacement")
    return S, idx


def check_targets(Y, n_sampled: int, owner: str) -> None:
    """Check the targets' answers ``Y`` (targets x sampled items, or one target's 1-D answers)."""
    try:
        arr = np.asarray(Y, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{owner}.predict: Y must be numeric answers (targets x sampled items)") from None
    if arr.ndim not in (1, 2):
        raise ValueError(f"{owner}.predict: Y must be 1-D (one target) or 2-D (targets x sampled items); "
                         f"got shape {arr.shape}")
    if arr.shape[-1] != n_sampled:
        raise ValueError(f"{owner}.predict: Y has {arr.shape[-1]} answers per target, but the estimator was fitted "
                         f"with {n_sampled} sampled items: give each target's answers to those items, in their order")


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

