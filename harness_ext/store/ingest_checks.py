"""The per-record checks of :func:`harness_ext.store.ingest_sources.read_source`, a field at a time.

Records a built-in adapter yields pass :meth:`~harness_ext.types.ResultRecord.validate` unchanged; these
checks tell so in a few C-level passes over each field, without a Python step per record. The metadata
text check (:func:`_check_text_of`) looks at a source's records only when its bytes may hold a lone surrogate.
"""

from __future__ import annotations

from itertools import repeat

import numpy as np

from ..errors import IngestError
from ..types import _NAMES_OK, SourceFile, _check_text, check_storable

_NAME_FIELDS = ("model", "benchmark", "dataset", "metric")
_NONE = type(None)


def _all_plain(records: list) -> bool:
    """Whether ResultRecord.validate would pass every record unchanged, checked a field at a time.

    Each check is a C-level pass over one field (``map``, ``set``, numpy): records of the built-in
    adapters pass without a Python step per record. False sends them to the per-record checks.
    """
    from operator import attrgetter

    from ..types import ResultRecord

    if set(map(type, records)) != {ResultRecord}:
        return False
    col = {f: list(map(attrgetter(f), records)) for f in _NAME_FIELDS + (
        "value", "task", "baseline_source", "num_fewshot", "n_samples", "stderr", "random_baseline", "min_score",
        "max_score")}
    try:
        names = set().union(*(col[f] for f in _NAME_FIELDS), col["task"], col["baseline_source"]) - {None}
    except TypeError:  # an unhashable name: the per-record check says what is wrong
        return False
    for name in names - _NAMES_OK:  # names checked before are in _NAMES_OK; a file's new ones are checked here
        if name.__class__ is not str or not name.strip():
            return False
        try:
            _check_text(None, "name", name)
        except IngestError:
            return False
    if set(map(type, col["value"])) != {float} or not np.isfinite(col["value"]).all():
        return False
    for f, hi in (("num_fewshot", 2**31), ("n_samples", 2**63)):
        kinds = set(map(type, col[f]))
        if not kinds <= {int, _NONE}:
            return False
        if int in kinds:
            ints = [x for x in set(col[f]) if x is not None]
            if min(ints) < 0 or max(ints) >= hi:
                return False
    for f in ("stderr", "random_baseline", "min_score", "max_score"):
        kinds = set(map(type, col[f]))
        if not kinds <= {float, _NONE}:
            if not kinds <= {float, int, _NONE} or not all(map(_plain, col[f])):
                return False
        elif float in kinds:
            a = np.array(col[f], dtype=float)  # None -> NaN
            if np.isinf(a).any() or np.count_nonzero(np.isnan(a)) != col[f].count(None):
                return False
    return True


def _plain(x) -> bool:
    """Whether an optional number passes ResultRecord.validate unchanged (None, a finite float, a small int)."""
    return x is None or (x.__class__ is float and x - x == 0.0) or (x.__class__ is int and -2**53 < x < 2**53)


def _check_text_of(src: SourceFile, records) -> None:
    """Refuse a source whose metadata (model and dataset metadata, task configurations, scale names) holds text the
    store cannot keep (:func:`harness_ext.types.check_storable`, one encoding of it all); names are checked by the
    validation.

    A lone surrogate in a parsed string comes only from a ``\\ud800``-``\\udfff`` escape in the text (strict
    UTF-8 decoding never makes one), so :func:`harness_ext.store.ingest_sources.read_source` calls this only for a
    source that may hold one: not for one whose meaning is its bytes alone
    (:func:`~harness_ext.store.ingest_read._bytes_alone`) when they hold no such escape
    (:func:`_may_hold_surrogates`). An adapter that reads other files as well (MTEB's ``model_meta.json``) is
    covered by the store, which writes each source of a refused batch alone and skips the one it refuses.
    """
    from ..types import ColumnarResults
    from .columnar import ColumnarCells
    from .rows import ResultRows

    if isinstance(records, (ColumnarResults, ColumnarCells)):
        parts = [("model metadata", records.model_metadata), ("columns", records.columns)]
    else:
        if records.__class__ is ResultRows:
            rows = zip(repeat(records.model), records.kinds, repeat(records.model_metadata), records.dataset_metadata)
        else:
            rows = ((r.model, r, r.model_metadata, r.dataset_metadata) for r in records)
        # Each distinct dict once (adapters share one per model or task), named by its first row.
        first: dict = {}
        for model, rec, mmd, dmd in rows:
            first.setdefault(id(mmd), (f"model metadata of {model!r}", mmd))
            first.setdefault(id(dmd), (f"dataset metadata of {rec.dataset!r}", dmd))
            if rec.scale is not None:
                first.setdefault(id(rec.scale), (f"scale of {rec.dataset!r}", rec.scale))
        parts = list(first.values())
    try:  # all at once; one at a time only to name the one at fault
        check_storable(src.path, "metadata", [v for _, v in parts])
    except IngestError:
        for what, value in parts:
            check_storable(src.path, what, value)
        raise


def _may_hold_surrogates(data: bytes) -> bool:
    """Whether a file's bytes hold a ``\\ud``/``\\uD`` escape. A backslash is one byte, found by memchr: most
    result files have none, and the two-byte searches cost ten times as much (a twentieth of an Open LLM
    Leaderboard ingest)."""
    return b"\\" in data and (b"\\ud" in data or b"\\uD" in data)
