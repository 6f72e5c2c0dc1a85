"""The records adapters produce (:class:`ResultRecord`, :class:`SourceFile`), and the registration types.

The registration dataclasses each hook of :mod:`harness_ext.hookspecs` yields live in
:mod:`harness_ext.registrations` and are imported here too (``harness_ext.types.Selector``).
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
from typing import Any, Optional

from .errors import IngestError
# The registration types, in a module of their own, imported here as ever (``from harness_ext.types import Selector``).
from .registrations import (REGISTRATION_TYPES, Adapter, ItemEstimator, Lazy, ManifestWriter, Predictor, Selector,
                            SimilarityMeasure, WeightingScheme, implementation_problem, normalise_name)

__all__ = ["REGISTRATION_TYPES", "Adapter", "ItemEstimator", "Lazy", "ManifestWriter", "Predictor", "Selector",
           "SimilarityMeasure", "WeightingScheme", "implementation_problem", "normalise_name", "ColumnarResults",
           "NON_DEFAULT_VARIANT", "RECORD_VARIANT", "ResultRecord", "SUBSET_OPTION", "SourceFile", "TRUNCATION_MARKS",
           "VARIANT_OF", "MAX_NAME_CHARS", "check_name", "check_storable", "eee_model_name", "eee_precision", "is_record_variant",
           "is_truncated_id", "record_variant", "variant_name", "variant_of_name"]

#: Characters never accepted in a stored name: C0 controls except tab, DEL, and Unicode line breaks.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]")
#: Longest name (model, benchmark, dataset, metric, task) the store keeps. The longest in the shared real data are
#: far shorter (a model named with its adapter's path, 121 characters; datasets 57, benchmarks 45, metrics 28;
#: Hugging Face repository ids at most 96): a longer "name" is a table's misread cell (a 1 MB Markdown cell).
MAX_NAME_CHARS = 1_000


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
    """Raise IngestError if a stored name is not valid UTF-8, holds a control character or is longer than
    :data:`MAX_NAME_CHARS`."""
    if len(v) > MAX_NAME_CHARS:
        shown = json.dumps(v[:60])  # ASCII: whatever the name holds, the message is one plain line
        raise IngestError(path, f"{attr} {shown[:-1]}...\" is {len(v):,} characters long; names are kept up to "
                                f"{MAX_NAME_CHARS:,} characters")
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
#: described column the file lacks is noted, not refused. Its value: True, or the subset's dataset names (a file
#: whose every subset column is empty is then refused naming them).
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
