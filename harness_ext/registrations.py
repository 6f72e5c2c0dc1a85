"""Registration types: what plugin hooks yield, one dataclass per kind of plugin.

Each hook in :mod:`harness_ext.hookspecs` yields instances of one of these
dataclasses. Names are normalised in ``__post_init__`` (lower case, ``-`` and
spaces become ``_``) so ``--selector Greedy-Coverage`` and
``greedy_coverage`` mean the same plugin. A registration's implementation (a
class or function) is required, and may be given as a reference
``"package.module:attribute"`` imported on first use (:class:`Lazy`).
:mod:`harness_ext.types` re-exports every name here.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from .errors import PluginError

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


def normalise_name(name: str) -> str:
    """Return the canonical plugin name: lower case, ``-``/space/``.`` become ``_``.

    Raises
    ------
    ValueError
        If the result is not an identifier-like name.
    """
    canonical = re.sub(r"[\s\-.]+", "_", str(name).strip().lower())
    if not _NAME_RE.match(canonical):
        raise ValueError(f"invalid plugin name {name!r}: use letters, digits, '_' or '-', starting with a letter")
    return canonical


#: ``"package.module:attribute"`` (the entry-point object-reference syntax; the attribute may be dotted).
_REFERENCE_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class Lazy:
    """A registration field that may be given as a reference ``"package.module:attribute"``.

    The reference is imported on first access and the object kept, so a plugin can register its
    methods without importing their numerics: ``harness-ext plugins`` lists every registration
    without importing numpy, and a command imports only the methods it runs. An object given
    directly (a class, a function) is kept as it is.

    Example
    -------
    .. code-block:: python

        yield Selector(name="my-greedy", cls="my_pkg.selectors:MyGreedy", description="...")

    A non-data descriptor: ``__post_init__`` moves a reference out of the instance into
    ``_references``, so the first access reaches :meth:`__get__`, which stores the imported object in
    the instance; every later access is a plain attribute read (adapters are looked up per file).
    """

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return None  # the dataclass field's default
        ref = obj.__dict__.get("_references", {}).get(self.name)
        if ref is None:
            raise AttributeError(self.name)
        guard = obj.__dict__.get("_guard")  # a third-party registration (harness_ext.plugin_guard)
        if guard is None:
            value = _load_reference(obj, self.name, ref)
        else:
            value = guard.wrap(self.name, guard.call(f"importing {ref}", _load_reference, obj, self.name, ref))
        obj.__dict__[self.name] = value
        return value


def _load_reference(reg, field_name: str, ref: str):
    """Import ``"package.module:attribute"``; a PluginError names the registration and its plugin."""
    from importlib import import_module

    module, _, attr = ref.partition(":")
    try:
        value = import_module(module)
        for part in attr.split("."):
            value = getattr(value, part)
    except Exception as exc:  # noqa: BLE001 - any failure of a plugin's import is reported as the plugin's
        where = getattr(reg, "source", None) or "its plugin"
        raise PluginError(f"{type(reg).__name__} {reg.name!r} from {where}: cannot load {field_name}={ref!r}: "
                          f"{type(exc).__name__}: {exc}") from exc
    why = implementation_problem(reg, field_name, value)
    if why:
        where = getattr(reg, "source", None) or "its plugin"
        raise PluginError(f"{type(reg).__name__} {reg.name!r} from {where}: {field_name}={ref!r} {why}")
    return value


#: The base class (of :mod:`harness_ext.base`) named when a registration's ``cls`` lacks ``get_params``: the kinds
#: whose parameters every command records (manifests, ``weights --emit-weights``). An item estimator may be any class
#: (harness-ext checks its inputs and outputs); the contract check asks it for ``get_params`` too.
_BASES = {"Selector": "BaseSelector", "Predictor": "BasePredictor", "WeightingScheme": "BaseWeighting"}


def implementation_problem(reg, field_name: str, value) -> str:
    """Why ``value`` cannot be the ``field_name`` of registration ``reg`` (``""``: it can).

    A selector's, predictor's or weighting scheme's ``cls`` must be a class with scikit-learn's ``get_params``
    (manifests record the parameters, and the comparison protocol clones the estimator); an item estimator's a
    class; every other implementation field must be callable.
    Checked when the registration is made (or, for a reference, when it is imported), so a plugin's mistake is
    reported once, naming the plugin, rather than as an AttributeError deep inside a command.
    """
    kind = type(reg).__name__
    if field_name == "cls":
        if not isinstance(value, type):
            return f"is {type(value).__name__} {value!r:.60}, not a class"
        if kind in _BASES and not callable(getattr(value, "get_params", None)):
            return (f"is the class {value.__name__}, which has no get_params(): subclass harness_ext.base."
                    f"{_BASES[kind]} (scikit-learn's get_params/set_params, which manifests record)")
        return ""
    if not callable(value):
        return f"is {type(value).__name__} {value!r:.60}, not callable"
    return ""


#: What each implementation field holds, for the message when one is missing.
_IMPLEMENTS = {"cls": "method class", "func": "similarity function", "can_handle": "function that sniffs a file",
               "read": "function that reads a file's results", "write": "function that writes the files"}


#: True while harness-ext runs a plugin's hook (:func:`refused_later`): a registration refused there is marked
#: (``refusal``) instead of raising, so the hook's other registrations are kept.
_COLLECTING: ContextVar = ContextVar("harness_ext_collecting", default=False)


@contextmanager
def refused_later():
    """Within: a registration made with a missing or unusable field is marked refused (:func:`refusal`) rather than
    raising, so the plugin's hook returns its other registrations."""
    token = _COLLECTING.set(True)
    try:
        yield
    finally:
        _COLLECTING.reset(token)


def refusal(reg) -> str:
    """Why ``reg`` was refused when made inside a plugin's hook (``""``: it was not)."""
    return reg.__dict__.get("_refused", "")


@dataclass
class _Registration:
    # ``description`` is declared by each kind after its implementation field, so the positional order is the one
    # README_PLUGINS.md gives (``Selector(name, cls, description="")``): declared here, it came second and
    # ``Selector("x", MyCls)`` took the class as the description.
    name: str

    def __post_init__(self):
        try:
            self._check()
        except (TypeError, ValueError) as exc:
            if not _COLLECTING.get():
                raise
            # Made inside a plugin's hook: raising would lose the hook's other, valid registrations with this one.
            self.__dict__["_refused"] = str(exc)

    def _check(self) -> None:
        """Normalise the name and refuse a missing or unusable implementation (TypeError or ValueError)."""
        self.name = normalise_name(self.name)
        for cls in type(self).__mro__:
            for key, attr in vars(cls).items():
                if not isinstance(attr, Lazy):
                    continue
                value = self.__dict__.get(key)
                if value is None:
                    # The dataclass would accept it (the descriptor's default is None), and the mistake would
                    # surface as "'NoneType' object is not callable" inside a command, naming nothing.
                    raise TypeError(f"{type(self).__name__} {self.name!r}: {key} is required (the "
                                    f"{_IMPLEMENTS.get(key, key)}, or a reference 'package.module:attribute')")
                if value.__class__ is str:
                    if not _REFERENCE_RE.match(value):
                        raise ValueError(f"{type(self).__name__}.{key}: {value!r} is not a reference "
                                         f"'package.module:attribute'")
                    self.__dict__.setdefault("_references", {})[key] = self.__dict__.pop(key)
                else:
                    why = implementation_problem(self, key, value)
                    if why:
                        raise TypeError(f"{type(self).__name__} {self.name!r}: {key} {why}")


@dataclass
class SimilarityMeasure(_Registration):
    """A similarity between the columns of a performance matrix.

    ``func(X)`` takes an ``(n_obs, n_items)`` float array that may contain NaN
    and returns an ``(n_items, n_items)`` symmetric similarity matrix. Missing
    cells are handled by pairwise-complete observations; entries that are
    undefined (a constant column, fewer than two shared observations) are NaN
    and callers treat them as "no evidence of similarity".

    Parameters
    ----------
    name, description : str
        The name commands take (``--similarity NAME``; ``My-Name`` is ``my_name``), and the line ``harness-ext
        plugins`` shows.
    func : callable or str
        ``func(X) -> S`` as above, or a reference ``"package.module:function"`` imported on first use. Required.
    binary_only : bool
        True for a measure defined only on 0/1 vectors (Jaccard, Hamming).
    unit_diagonal : bool
        True if the diagonal is 1 by construction wherever the column is non-constant (the contract check tests it).
    """

    func: Callable[[Any], Any] = Lazy()  # numpy array -> numpy array
    description: str = ""
    #: True for measures defined only on 0/1 vectors (Jaccard, Hamming).
    binary_only: bool = False
    #: True if the diagonal is 1 by construction wherever the column is non-constant.
    unit_diagonal: bool = True


@dataclass
class Selector(_Registration):
    """A dataset-subset selector: ``cls(**params).fit(X, features=None)`` sets ``order_``.

    ``order_`` holds column indices in the order they were selected; the first
    ``k`` of them are the size-``k`` subset.

    Parameters
    ----------
    name, description : str
        The name commands take (``--selector NAME``; ``My-Name`` is ``my_name``), and the line ``harness-ext
        plugins`` shows.
    cls : type or str
        A :class:`harness_ext.base.BaseSelector` subclass (any class with ``get_params``), or its reference
        ``"package.module:Class"``. Required.
    """

    cls: type = Lazy()
    description: str = ""


@dataclass
class Predictor(_Registration):
    """A matrix-completion predictor: ``cls(**params).fit(X)`` sets ``mean_`` and ``std_``.

    ``X`` is ``(n_models, n_datasets)`` with NaN for cells not observed. After
    ``fit``, ``mean_`` has every cell filled and ``std_`` holds a predictive
    standard deviation per cell (0 where observed) or is ``None`` when the method
    has no uncertainty of its own.

    Parameters
    ----------
    name, description : str
        The name commands take (``--predictor NAME``; ``My-Name`` is ``my_name``), and the line ``harness-ext
        plugins`` shows.
    cls : type or str
        A :class:`harness_ext.base.BasePredictor` subclass (any class with ``get_params``), or its reference
        ``"package.module:Class"``. Required.
    """

    cls: type = Lazy()
    description: str = ""


@dataclass
class WeightingScheme(_Registration):
    """A dataset (or prompt) weighting: ``cls(**params).fit(X)`` sets ``weights_`` (sums to 1).

    Parameters
    ----------
    name, description : str
        The name commands take (``--weighting NAME``; ``My-Name`` is ``my_name``), and the line ``harness-ext
        plugins`` shows.
    cls : type or str
        A :class:`harness_ext.base.BaseWeighting` subclass (any class with ``get_params``), or its reference
        ``"package.module:Class"``. Required. ``reduce --weighting NAME`` and ``weights --scheme NAME`` use it.
    """

    cls: type = Lazy()
    description: str = ""


@dataclass
class Adapter(_Registration):
    """A result-file reader.

    ``can_handle(src)`` must be cheap and must not raise; ``read(src)`` yields
    :class:`~harness_ext.types.ResultRecord` objects or raises :class:`~harness_ext.errors.IngestError`.
    ``directory`` adapters handle a directory as one unit (a HELM run dir).

    ``revision`` names what the adapter stores from a file, and is stored with every source it reads: raise it
    when a change makes it store something else from the same file (other names, values, directions,
    datasets, item scores), and only then, so ``ingest`` can tell the sources an older reading left in a store
    from those that are still as this one reads them (``ingest --reread`` reads those again). A release that
    changes nothing an adapter stores leaves its revision, and nobody has to read anything again.

    Parameters
    ----------
    name, description : str
        The name commands take (``--adapter NAME``; ``My-Name`` is ``my_name``), and the line ``harness-ext
        plugins`` shows.
    can_handle : callable or str
        ``can_handle(src: SourceFile) -> bool``, or a reference ``"package.module:function"``. Required.
    read : callable or str
        ``read(src: SourceFile)`` returning or yielding :class:`ResultRecord` objects, or a reference. Required.
    directory : bool
        True for an adapter offered directories instead of files.
    revision : str
        What the adapter stores from a file, as above (default ``"1"``).
    """

    can_handle: Callable[[Any], bool] = Lazy()  # SourceFile -> bool
    read: Callable[[Any], Iterable] = Lazy()  # SourceFile -> ResultRecords
    description: str = ""
    directory: bool = False
    revision: str = "1"


@dataclass
class ManifestWriter(_Registration):
    """Writes a reduced-benchmark manifest in one format: ``write(manifest, out_dir) -> list[Path]``.

    Parameters
    ----------
    name, description : str
        The name commands take (``--format NAME``; ``My-Name`` is ``my_name``), and the line ``harness-ext
        plugins`` shows.
    write : callable or str
        ``write(manifest: dict, out_dir: harness_ext.safe_output.OutputDir) -> list[Path]``: writes files derived
        from the manifest into ``out_dir`` and returns them; or a reference ``"package.module:function"``. Required.
    suffix : str
        The suffix of the file the writer mainly writes (``".yaml"``), for people: harness-ext names no file after it.
    """

    write: Callable[[dict, Any], list] = Lazy()
    suffix: str = ""
    description: str = ""


@dataclass
class ItemEstimator(_Registration):
    """A full-task score from a few items: ``cls(**params).fit(source, items).predict(Y)``.

    ``source`` is the population's ``(n_models, n_items)`` item scores (every item answered), ``items`` the
    indices of the sampled items and ``Y`` the target models' ``(n_targets, len(items))`` scores on them.
    ``predict`` returns an :class:`~harness_ext.methods.engine.item_estimators.ItemEstimate`: per target, the
    estimated mean over all ``n_items`` items and a two-sided interval at ``level``. An estimator that
    picks its own items has ``select(source, n_items, random_state)``; one with no interval of its own
    (anchor points) registers ``interval=False`` and returns NaN bounds.

    Parameters
    ----------
    name, description : str
        The name commands take (``--item-estimator NAME``; ``My-Name`` is ``my_name``), and the line ``harness-ext
        plugins`` shows.
    cls : type or str
        The estimator class (best a :class:`harness_ext.base.BaseEstimator`: the contract check asks for
        ``get_params``), or a reference ``"package.module:Class"`` imported on first use. Required.
    interval : bool
        False for a method with no interval of its own (its bounds are NaN).
    """

    cls: type = Lazy()
    description: str = ""
    #: False for a method with no interval of its own (its bounds are NaN).
    interval: bool = True


REGISTRATION_TYPES = {
    "similarity_measures": SimilarityMeasure,
    "selectors": Selector,
    "predictors": Predictor,
    "weighting_schemes": WeightingScheme,
    "adapters": Adapter,
    "manifest_writers": ManifestWriter,
    "item_estimators": ItemEstimator,
}
