"""Registration types yielded by plugin hooks, and the record adapters produce.

Each hook in :mod:`harness_ext.hookspecs` yields instances of one of these
dataclasses. Names are normalised in ``__post_init__`` (lower case, ``-`` and
spaces become ``_``) so ``--selector Greedy-Coverage`` and
``greedy_coverage`` mean the same plugin.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from .errors import IngestError, PluginError

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
#: Characters never accepted in a stored name: C0 controls except tab, DEL, and Unicode line breaks.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]")


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


@dataclass
class _Registration:
    # ``description`` is declared by each kind after its implementation field, so the positional order is the one
    # README_PLUGINS.md gives (``Selector(name, cls, description="")``): declared here, it came second and
    # ``Selector("x", MyCls)`` took the class as the description.
    name: str

    def __post_init__(self):
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
    name : str
        What commands take (``--similarity NAME``): normalised to lower case with ``-``, ``.`` and spaces as ``_``.
    func : callable or str
        ``func(X) -> S`` as above, or a reference ``"package.module:function"`` imported on first use. Required.
    description : str
        One line that ``harness-ext plugins`` shows.
    binary_only : bool
        True for a measure defined only on 0/1 vectors (Jaccard, Hamming).
    unit_diagonal : bool
        True if the diagonal is 1 by construction wherever the column is non-constant (the contract check tests it).
    """

    func: Callable[[np.ndarray], np.ndarray] = Lazy()
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
    name : str
        What commands take (``--selector NAME``): normalised to lower case with ``-``, ``.`` and spaces as ``_``.
    cls : type or str
        The method class (a :class:`harness_ext.base.BaseSelector`, or any class with ``get_params``), or a
        reference ``"package.module:Class"`` imported on first use. Required.
    description : str
        One line that ``harness-ext plugins`` shows.
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
    name : str
        What commands take (``--predictor NAME``): normalised to lower case with ``-``, ``.`` and spaces as ``_``.
    cls : type or str
        The method class (a :class:`harness_ext.base.BasePredictor`, or any class with ``get_params``), or a
        reference ``"package.module:Class"`` imported on first use. Required.
    description : str
        One line that ``harness-ext plugins`` shows.
    """

    cls: type = Lazy()
    description: str = ""


@dataclass
class WeightingScheme(_Registration):
    """A dataset (or prompt) weighting: ``cls(**params).fit(X)`` sets ``weights_`` (sums to 1).

    Parameters
    ----------
    name : str
        What commands take (``--weighting NAME``): normalised to lower case with ``-``, ``.`` and spaces as ``_``.
    cls : type or str
        The method class (a :class:`harness_ext.base.BaseWeighting`, or any class with ``get_params``), or a
        reference ``"package.module:Class"`` imported on first use. Required. ``reduce --weighting NAME`` and
        ``weights --scheme NAME`` use it.
    description : str
        One line that ``harness-ext plugins`` shows.
    """

    cls: type = Lazy()
    description: str = ""


@dataclass
class Adapter(_Registration):
    """A result-file reader.

    ``can_handle(src)`` must be cheap and must not raise; ``read(src)`` yields
    :class:`ResultRecord` objects or raises :class:`~harness_ext.errors.IngestError`.
    ``directory`` adapters handle a directory as one unit (a HELM run dir).

    ``revision`` names what the adapter stores from a file, and is stored with every source it reads: raise it
    when a change makes it store something else from the same file (other names, values, directions,
    datasets, item scores), and only then, so ``ingest`` can tell the sources an older reading left in a store
    from those that are still as this one reads them (``ingest --reread`` reads those again). A release that
    changes nothing an adapter stores leaves its revision, and nobody has to read anything again.

    Parameters
    ----------
    name : str
        What commands take (``--adapter NAME``): normalised to lower case with ``-``, ``.`` and spaces as ``_``.
    can_handle : callable or str
        ``can_handle(src: SourceFile) -> bool``, or a reference ``"package.module:function"``. Required.
    read : callable or str
        ``read(src: SourceFile)`` returning or yielding :class:`ResultRecord` objects, or a reference. Required.
    description : str
        One line that ``harness-ext plugins`` shows.
    directory : bool
        True for an adapter offered directories instead of files.
    revision : str
        What the adapter stores from a file, as above (default ``"1"``).
    """

    can_handle: Callable[["SourceFile"], bool] = Lazy()
    read: Callable[["SourceFile"], Iterable["ResultRecord"]] = Lazy()
    description: str = ""
    directory: bool = False
    revision: str = "1"


@dataclass
class ManifestWriter(_Registration):
    """Writes a reduced-benchmark manifest in one format: ``write(manifest, out_dir) -> list[Path]``.

    Parameters
    ----------
    name : str
        What commands take (``--format NAME``): normalised to lower case with ``-``, ``.`` and spaces as ``_``.
    write : callable or str
        ``write(manifest: dict, out_dir: harness_ext.safe_output.OutputDir) -> list[Path]``: writes files derived
        from the manifest into ``out_dir`` and returns them; or a reference ``"package.module:function"``. Required.
    suffix : str
        The suffix of the file the writer mainly writes (``".yaml"``), for people: harness-ext names no file after it.
    description : str
        One line that ``harness-ext plugins`` shows.
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
    name : str
        What commands take (``--item-estimator NAME``): normalised to lower case with ``-``, ``.`` and spaces as ``_``.
    cls : type or str
        The estimator class (best a :class:`harness_ext.base.BaseEstimator`: the contract check asks for
        ``get_params``), or a reference ``"package.module:Class"`` imported on first use. Required.
    description : str
        One line that ``harness-ext plugins`` shows.
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


#: Model metadata key an adapter sets when its source names a variant of a model (the Open LLM Leaderboard's
#: ``float16`` and ``bfloat16`` runs of one repository): the value is the plain model name, and the stored name is
#: :func:`variant_name`. The store shows a model stored at one variant only by its plain name
#: (:func:`harness_ext.store.identity.resolve`); variants of one model stay apart.
VARIANT_OF = "variant_of"
#: Model metadata key an adapter sets (``True``) beside :data:`VARIANT_OF` when the variant is a run at settings other
#: than the model's defaults (an mteb experiment run: another embedding size, other prompts). Unlike a precision, such a
#: variant stands for its model only while the store holds no run of the model itself (the default run, or a name that
#: merges with the plain name): beside it, it keeps its own name (:func:`harness_ext.store.identity.resolve`).
NON_DEFAULT_VARIANT = "non_default_variant"


def variant_name(model: str, variant: str) -> str:
    """The stored name of ``model`` at ``variant``: ``org/model (bfloat16)``."""
    return f"{model} ({variant})"


def variant_of_name(name: str, plain: str) -> Optional[str]:
    """The variant a stored name gives (:func:`variant_name`'s inverse): ``bfloat16`` for ``org/model (bfloat16)``
    of ``org/model``; None when ``name`` is not ``plain`` at a variant."""
    head = f"{plain} ("
    if name.startswith(head) and name.endswith(")") and len(name) > len(head) + 1:
        return name[len(head):-1]
    return None


def eee_precision(model_info) -> Optional[str]:
    """The precision an Every Eval Ever ``model_info`` names (``additional_details.precision``: ``bfloat16``), or
    None when it names none (or ``Unknown``)."""
    details = model_info.get("additional_details") if isinstance(model_info, dict) else None
    precision = details.get("precision") if isinstance(details, dict) else None
    if isinstance(precision, str) and precision.strip() and precision.strip().lower() != "unknown":
        return precision.strip()
    return None


#: How a leaderboard ends a model name it cut short (RewardBench's table:
#: ``ai2/tulu-2-7b-rm-v0-nectar-binarized-3.8m-check...``).
TRUNCATION_MARKS = ("...", "\u2026")


def is_truncated_id(name: str) -> bool:
    """Whether a model id is visibly cut short by its leaderboard (it ends in ``...`` or ``\u2026``): the name of
    whatever checkpoints the cut-off part told apart, not of one model."""
    return str(name).rstrip().endswith(TRUNCATION_MARKS)


#: The words before the digest of a truncated id's record variant (:func:`record_variant`).
RECORD_VARIANT = "record "


def is_record_variant(variant: str) -> bool:
    """Whether a stored variant is (or ends in) a record variant (:func:`record_variant`): ``record`` and 8 hex
    digits, alone or after a precision (``bfloat16, record ...``)."""
    return bool(re.search(rf"(?:^|, ){re.escape(RECORD_VARIANT)}[0-9a-f]{{8}}$", str(variant)))


def record_variant(results) -> str:
    """The variant naming one record of a truncated id (:func:`is_truncated_id`): ``record`` and the first 8 hex digits
    of the SHA-256 of its ``(evaluation_name, score)`` pairs, sorted. Two records of one checkpoint (the same scores,
    another file name or timestamp) get one name, two checkpoints two, in whatever order their files come."""
    pairs = []
    for ev in results if isinstance(results, list) else ():
        if isinstance(ev, dict):
            score = ev.get("score_details").get("score") if isinstance(ev.get("score_details"), dict) else None
            pairs.append(json.dumps([ev.get("evaluation_name"), score], default=str))
    return RECORD_VARIANT + hashlib.sha256("\n".join(sorted(pairs)).encode()).hexdigest()[:8]


def eee_model_name(model_info, results=None) -> Optional[tuple]:
    """``(plain id, stored name)`` of an Every Eval Ever ``model_info``: its id (or name), and that id at the precision
    the record names (:func:`variant_name`, ``org/model (bfloat16)``), the id itself when it names none; None for a
    ``model_info`` without an id or name. The adapter stores a record's results, and the instance files beside it
    their items, under the stored name.

    A visibly truncated id (:func:`is_truncated_id`) with the record's ``evaluation_results`` given is also at the
    record's own variant (:func:`record_variant`, after the precision): the leaderboard's nine checkpoints cut to one
    name stay nine models, and one record of such a name is still shown by that name (a variant's rule)."""
    if not isinstance(model_info, dict) or not (model_info.get("id") or model_info.get("name")):
        return None
    plain = str(model_info.get("id") or model_info.get("name"))
    variant = eee_precision(model_info)
    if results is not None and is_truncated_id(plain):
        variant = record_variant(results) if variant is None else f"{variant}, {record_variant(results)}"
    return plain, plain if variant is None else variant_name(plain, variant)


@dataclass
class ResultRecord:
    """One score of one model on one dataset under one metric, as an adapter reads it.

    ``model`` is the evaluated system (checkpoint included, e.g.
    ``EleutherAI/pythia-160m@step3000``). ``benchmark`` groups datasets into a
    matrix; ``dataset`` is the column. ``random_baseline`` is the chance score
    used by normalisation; ``baseline_source`` says where it came from.
    """

    model: str
    benchmark: str
    dataset: str
    metric: str
    value: float
    stderr: Optional[float] = None
    n_samples: Optional[int] = None
    num_fewshot: Optional[int] = None
    higher_is_better: Optional[bool] = None
    random_baseline: Optional[float] = None
    baseline_source: Optional[str] = None
    task: Optional[str] = None
    #: False for secondary metrics (acc_norm next to acc); the matrix uses primary ones by default.
    primary: bool = True
    #: Scale bounds when known (Every Eval Ever min_score/max_score); used by normalisation.
    min_score: Optional[float] = None
    max_score: Optional[float] = None
    #: True for a score computed from other scores (HELM's mean win rate, an lm-eval group, a CSV
    #: "average" column): stored with ``kind='aggregate'``, a prediction target, never a subset member.
    aggregate: bool = False
    #: The scale's kind when the source says or the adapter detects it (:data:`harness_ext.store.scales.SCALE_KINDS`:
    #: ``proportion``, ``percent``, ``elo``, ...); normalisation maps it through a fixed transform.
    scale: Optional[str] = None
    model_metadata: dict = field(default_factory=dict)
    dataset_metadata: dict = field(default_factory=dict)

    def validate(self, path) -> None:
        """Raise IngestError if the record cannot be stored.

        Malformed optional numbers (``stderr`` "N/A", a non-finite baseline, an
        ``n_samples`` beyond 64 bits) are dropped instead; the score, the names
        and the shot count must be storable.
        """
        ok = _NAMES_OK
        for attr in ("model", "benchmark", "dataset", "metric"):
            v = getattr(self, attr)
            if v.__class__ is str and v in ok:  # names repeat across records: each is checked once, no call
                continue
            check_name(path, attr, v)
        for attr in ("task", "baseline_source"):
            v = getattr(self, attr)
            if isinstance(v, str) and v not in ok:
                _check_text(path, attr, v)
        v = self.value
        if v.__class__ is not float or v - v != 0.0:  # a finite float passes on the first test
            if _number(v) is None:
                if isinstance(v, bool) or not isinstance(v, (int, float, numbers.Real)):
                    raise IngestError(path, f"score for {self.model!r} on {self.dataset!r} ({self.metric}) is not a number: {v!r}")
                what = (f"an integer too large for a float ({len(str(v))} digits)"
                        if isinstance(v, (int, numbers.Integral)) else f"{v!r}, not finite")
                raise IngestError(path, f"score for {self.model!r} on {self.dataset!r} ({self.metric}) is {what}")
        shots = self.num_fewshot
        if shots is not None and (isinstance(shots, bool) or not isinstance(shots, (int, numbers.Integral)) or not 0 <= shots < 2**31):
            raise IngestError(path, f"num_fewshot {shots!r} for {self.dataset!r} is not a shot count")
        for attr in ("stderr", "random_baseline", "min_score", "max_score"):
            v = getattr(self, attr)
            if v is not None and _number(v) is None:
                setattr(self, attr, None)  # stderr "N/A" is common in lm-eval output and harmless
        n = self.n_samples
        if n is not None and (isinstance(n, bool) or not isinstance(n, (int, numbers.Integral)) or not 0 <= n < 2**63):
            self.n_samples = None


@dataclass
class ColumnarResults:
    """Many results of one source as arrays, for tables too large for one :class:`ResultRecord` each.

    A wide table read column by column (:mod:`harness_ext.adapters.csv_table` on large CSVs):
    ``values[i, j]`` is row ``i``'s score in column ``j`` (NaN: missing). Row ``i`` is model
    ``models[i]`` with ``model_metadata[i]``; column ``j`` is ``columns[j]``, a dict of the
    :class:`ResultRecord` fields other than ``model``, ``value`` and ``model_metadata``
    (``benchmark``, ``dataset``, ``metric``, ``primary``, ``higher_is_better``, ``scale``, ...).
    The store writes it with the same validation, conflict tracking and transaction as records
    (:func:`harness_ext.store.columnar.write_columnar`).
    """

    models: list
    model_metadata: list
    columns: list
    values: Any  # numpy float64 array, len(models) x len(columns)

    def __len__(self) -> int:
        import numpy as np

        return int(np.count_nonzero(~np.isnan(self.values)))

    def validate(self, path) -> None:
        """Raise IngestError if a name cannot be stored or a score is infinite (NaN is a missing cell)."""
        if self.values.shape != (len(self.models), len(self.columns)):
            raise IngestError(path, f"columnar results of shape {self.values.shape} for {len(self.models)} models "
                                    f"and {len(self.columns)} columns")
        for i, m in enumerate(self.models):
            if not isinstance(m, str) or not m.strip():
                raise IngestError(path, f"model must be a non-empty string, got {m!r} (row {i + 2})")
            if m not in _NAMES_OK:
                _check_text(path, "model", m)
        for col in self.columns:
            for attr in ("benchmark", "dataset", "metric"):
                check_name(path, attr, col.get(attr))
        import numpy as np

        bad = np.isinf(self.values)
        if bad.any():
            i, j = (int(x[0]) for x in np.nonzero(bad))
            raise IngestError(path, f"score for {self.models[i]!r} on {self.columns[j]['dataset']!r} is not finite")


#: Names that passed :func:`_check_text` (bounded: cleared when it grows past ``_NAMES_MAX``).
_NAMES_OK: set = set()
_NAMES_MAX = 1_000_000


def check_name(path, attr: str, v) -> None:
    """Raise IngestError unless ``v`` is a name the store can keep: a non-empty string without control characters
    or line breaks, valid UTF-8 (:func:`_check_text`); a name checked before passes at once (:data:`_NAMES_OK`)."""
    if v.__class__ is str and v in _NAMES_OK:
        return
    if not isinstance(v, str) or not v.strip():
        raise IngestError(path, f"{attr} must be a non-empty string, got {v!r}")
    _check_text(path, attr, v)


def _check_text(path, attr: str, v: str) -> None:
    """Raise IngestError if a stored name is not valid UTF-8 or holds a control character."""
    if not v.isascii() and not _utf8(v):  # JSON "\ud800" escapes are unstorable
        raise IngestError(path, f"{attr} {v!r} is not valid UTF-8 text")
    bad = _CONTROL.search(v)
    if bad:
        # A NUL or a line break in a name would corrupt every task list and config written from it.
        raise IngestError(path, f"{attr} {v[:80]!r} contains a control character or line break ({bad.group()!r})")
    if v.strip():  # only names that pass every check skip them next time
        if len(_NAMES_OK) >= _NAMES_MAX:
            _NAMES_OK.clear()
        _NAMES_OK.add(v)


def check_storable(path, what: str, value) -> None:
    """Raise IngestError if ``value`` holds something the store cannot keep as JSON text.

    ``value`` is a string or any JSON-like structure (dicts, lists, numbers; dict keys are checked too).
    Refused: a string that is not valid UTF-8 (a lone UTF-16 surrogate, which JSON's and YAML's ``"\\ud800"``
    escapes produce), nesting deeper than the encoder's recursion limit, a circular structure, a key that is
    not a string or number. The store serialises metadata and task configurations as
    ``json.dumps(value, default=str)``; this is that encoding, once and in C, with the text kept as it is (no
    ``\\u`` escapes) so one ``str.isascii`` (or one UTF-8 encode) checks every string. The walk naming the bad
    field runs only when the check fails.

    Parameters
    ----------
    path : path-like
        The source named in the error.
    what : str
        What ``value`` is, for the message ("model metadata", "task configuration of arc_easy").
    value : object
        The value to check.

    Raises
    ------
    IngestError
        With the offending field and a reason.
    """
    try:
        text = _ENCODE_AS_IS(value)
    except RecursionError:
        raise IngestError(path, f"{what} is nested too deeply to store") from None
    except (TypeError, ValueError) as exc:  # a key json cannot write, a circular structure
        raise IngestError(path, f"{what} cannot be stored as JSON: {exc}") from None
    if text.isascii() or _utf8(text):
        return
    where, bad = _first_unstorable(value)
    at = f" at {where}" if where else ""
    raise IngestError(path, f"{what}{at} is not valid UTF-8 text: {bad[:80]!r} holds a lone surrogate (a JSON or "
                            "YAML escape such as \\ud800 without its pair)")


#: ``json.dumps(v, default=str, ensure_ascii=False)``: the store's encoding with every string left as it is.
_ENCODE_AS_IS = json.JSONEncoder(ensure_ascii=False, default=str).encode


def _first_unstorable(value) -> tuple:
    """``(where, string)`` of the first string in ``value`` (a key or a value, at any depth) that is not valid
    UTF-8; ``where`` names it by its keys (``config/description``; list positions as ``[i]``)."""
    stack = [("", value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, str):
            if not _utf8(v):
                return where, v
        elif isinstance(v, dict):
            for k, x in reversed(list(v.items())):
                key = k if isinstance(k, str) else str(k)
                if not _utf8(key):
                    return (f"{where}/" if where else "") + "(a key)", key
                stack.append(((f"{where}/" if where else "") + key, x))
        elif isinstance(v, (list, tuple)):
            stack.extend((f"{where}[{i}]", x) for i, x in reversed(list(enumerate(v))))
        else:
            s = str(v)  # json's default=str: what the store would write
            if not _utf8(s):
                return where, s
    return "", ""


def _number(v) -> Optional[float]:
    """``float(v)`` for a finite int/float (not bool), else None; never raises."""
    if type(v) is float:  # the common case, first
        return v if math.isfinite(v) else None
    if isinstance(v, bool) or not isinstance(v, (int, float, numbers.Real)):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def _utf8(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: Reading option (``SourceFile.options``): the file holds some of the columns its column metadata describes (a new
#: model's scores on a leaderboard's subset, read by ``predict`` with the leaderboard's sidecar beside it), so a
#: described column the file lacks is noted, not refused.
SUBSET_OPTION = "columns_subset"


class SourceFile:
    """A file (or directory) offered to adapters, with cached lazy reads.

    Adapters sniff with :attr:`head` and parse with :meth:`json`, so a 10,000-file
    ingest reads each file once however many adapters look at it. ``path``,
    ``is_dir``, ``bytes``, ``head``, ``text`` and ``suffix`` are computed on first
    use and kept (:meth:`__getattr__`); ``pathname`` is the path as a string.
    """

    HEAD_BYTES = 4096

    def __init__(self, path, options: Optional[dict] = None, *, is_dir: Optional[bool] = None,
                 siblings: Optional[frozenset] = None, children: Optional[frozenset] = None):
        d = self.__dict__
        if isinstance(path, Path):
            d["path"] = path
        self.pathname = os.fspath(path)
        #: Reading options from the command line (``ingest --meta-columns/--column-meta``) that adapters
        #: may read; part of the content hash, so ingesting with other options re-reads the file.
        self.options = dict(options) if options else {}
        # A directory walk already knows both (its scandir entries): no stat per adapter that asks.
        if is_dir is not None:
            d["is_dir"] = bool(is_dir)
        self._siblings = siblings
        #: For a directory a walk listed: the names of its entries that are not directories (None: not
        #: listed), so a directory adapter can look for its marker files without a stat each.
        self.children = children

    @classmethod
    def listed(cls, pathname: str, suffix: Optional[str] = None, siblings: Optional[frozenset] = None,
               children: Optional[frozenset] = None) -> "SourceFile":
        """What a directory walk lists, with the attributes it knows set as one dict (the walk makes one per file
        and per directory, and __init__'s conversions cost about a microsecond each): a file, as ``SourceFile(
        pathname, is_dir=False, siblings=siblings)`` with its lower-cased ``suffix``; or, given ``children``, a
        directory, as ``SourceFile(pathname, is_dir=True, children=children)``."""
        src = object.__new__(cls)
        if children is None:
            src.__dict__ = {"pathname": pathname, "options": {}, "is_dir": False, "_siblings": siblings,
                            "children": None, "suffix": suffix}
        else:
            src.__dict__ = {"pathname": pathname, "options": {}, "is_dir": True, "_siblings": None,
                            "children": children}
        return src

    def __getattr__(self, name: str):
        # Only called for an attribute not set yet: compute a lazy one and keep it as a plain attribute.
        # (functools.cached_property takes a lock on every access in Python 3.11, about 1 us each, and an
        # ingest asks tens of thousands of times.)
        make = _LAZY.get(name)
        if make is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = self.__dict__[name] = make(self)
        return value

    def _head(self) -> bytes:
        if "bytes" in self.__dict__:  # read already (ingest reads a checked file once, for its hash too)
            return self.__dict__["bytes"][: self.HEAD_BYTES]
        with open(self.pathname, "rb") as fh:
            return fh.read(self.HEAD_BYTES)

    def _suffix(self) -> str:
        # pathlib's rule (PurePath.suffix), without building a Path.
        name = os.path.basename(self.pathname.rstrip("/"))
        i = name.rfind(".")
        return name[i:].lower() if 0 < i < len(name) - 1 else ""

    def _bytes(self) -> bytes:
        with open(self.pathname, "rb") as fh:
            return fh.read()

    def json(self) -> Any:
        """Parsed JSON (cached). Raises ``ValueError`` on invalid JSON."""
        try:
            return self._json
        except AttributeError:
            pass
        self._json = json.loads(self.text)
        return self._json

    def try_json(self) -> Any:
        """Parsed JSON, or None if the file is not JSON (never raises)."""
        if self.is_dir or self.suffix not in (".json", ""):
            return None
        try:
            return self.json()
        except Exception:
            return None

    def sibling(self, name: str) -> Optional[Path]:
        """The file ``name`` beside this one, or None when there is none.

        When the walk listed the directory, a name not in the listing is answered without a stat
        (hundreds of files of one folder each ask); a listed one is still checked to be a file.
        """
        if self._siblings is not None and name not in self._siblings:
            return None
        path = self.path.with_name(name)
        return path if path.is_file() else None

    def sidecars(self) -> list:
        """Existing column-metadata sidecars of this file: ``<name>.meta.yaml`` (or ``.yml``), then ``<stem>.meta.yaml``."""
        name = os.path.basename(self.pathname.rstrip("/"))
        stem = name[: -len(self.suffix)] if self.suffix else name
        names = (name + ".meta.yaml", name + ".meta.yml", stem + ".meta.yaml", stem + ".meta.yml")
        return [p for p in map(self.sibling, names) if p is not None]

    def note(self, text: str) -> None:
        """Report what reading this file did to its data that the results alone do not show.

        An adapter calls this for every heuristic that changed how a column or cell is stored
        (a column stored as an aggregate or as model metadata, cells left out as placeholders or
        as not computed), with counts and the names involved; ``harness-ext ingest`` prints each
        note under the file's name and :class:`~harness_ext.store.ingest.FileReport` keeps them.
        Nothing a heuristic does to the data goes unreported.
        """
        self.__dict__.setdefault("notes", []).append(str(text))

    def take_notes(self) -> list:
        """The notes made while reading (:meth:`note`), removed from the file (the ingest loop takes them once)."""
        return self.__dict__.pop("notes", None) or []

    def __repr__(self):
        return f"SourceFile({str(self.path)!r})"


_LAZY = {
    "path": lambda src: Path(src.pathname),
    "is_dir": lambda src: os.path.isdir(src.pathname),
    "bytes": SourceFile._bytes,
    "head": SourceFile._head,
    "text": lambda src: src.bytes.decode("utf-8"),
    "suffix": SourceFile._suffix,
}
