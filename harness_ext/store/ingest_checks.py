"""The per-record checks of :func:`harness_ext.store.ingest.read_source`, a field at a time.

Records a built-in adapter yields pass :meth:`~harness_ext.types.ResultRecord.validate` unchanged; these
checks tell so in a few C-level passes over each field, without a Python step per record.
"""

from __future__ import annotations

import numpy as np

from ..errors import IngestError
from ..types import _NAMES_OK, _check_text

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
