"""One source's results as columns: the fast lane of the lm-eval and Every Eval Ever adapters.

A results file holds one model and a few to a few hundred scores. Everything about a score but its
numbers -- benchmark, dataset, metric, direction, chance baseline, primary flag -- follows from the
task and metric, and repeats across thousands of files. :class:`ResultRows` keeps, per row, a shared
*kind* (a :class:`~harness_ext.types.ResultRecord` holding those fields, made once per distinct
description and validated once) and the row's own numbers in plain lists. The store writes it like a
list of records (:meth:`harness_ext.store.db.Store.ingest_batch`) without one object per score; it
iterates and indexes as the records it stands for, so any other reader sees a list of ResultRecord.
"""

from __future__ import annotations

from math import isfinite
from operator import attrgetter
from typing import Optional

from ..errors import IngestError
from ..types import _NAMES_OK, ResultRecord, _check_text

__all__ = ["ResultRows", "kind"]

#: The fields a kind carries (every ResultRecord field but the row's own and the model's).
KIND_FIELDS = ("benchmark", "dataset", "metric", "higher_is_better", "random_baseline", "baseline_source",
               "min_score", "max_score", "primary", "task", "aggregate", "scale")
_ROW_FIELDS = ("value", "stderr", "num_fewshot", "n_samples", "dataset_metadata")
_DEFAULTS = {"model": "", "value": 0.0, "stderr": None, "num_fewshot": None, "n_samples": None,
             "model_metadata": None, "dataset_metadata": None}
_KINDS: dict = {}
_NONE = type(None)


def kind(**fields) -> ResultRecord:
    """The shared kind with these :data:`KIND_FIELDS` values (made once; unhashable values: a new one)."""
    try:
        key = tuple(map(fields.get, KIND_FIELDS))
        return _KINDS[key]
    except KeyError:
        pass
    except TypeError:
        key = None
    rec = object.__new__(ResultRecord)
    rec.__dict__ = dict(_record_defaults())
    rec.__dict__.update(fields)
    rec.__dict__["_checked"] = False
    if key is not None:
        if len(_KINDS) > 100_000:
            _KINDS.clear()
        _KINDS[key] = rec
    return rec


def _record_defaults() -> dict:
    """Every ResultRecord field at its default, the row's and the model's fields as :data:`_DEFAULTS`."""
    import dataclasses

    out = {f.name: None if f.default is dataclasses.MISSING else f.default for f in dataclasses.fields(ResultRecord)}
    out.update(_DEFAULTS)
    return out


class ResultRows:
    """The results of one source: one ``model``, and per row a kind and the row's numbers.

    Parameters
    ----------
    model, model_metadata
        The source's model (every row's) and its metadata.
    kinds : list of ResultRecord
        Per row, its shared description (:func:`kind`).
    values, stderrs, num_fewshot, n_samples, dataset_metadata : list
        Per row, as the ResultRecord fields of the same names.
    """

    __slots__ = ("model", "model_metadata", "kinds", "values", "stderrs", "num_fewshot", "n_samples",
                 "dataset_metadata", "has_configs", "_records")

    def __init__(self, model, model_metadata: Optional[dict]):
        self.model = model
        self.model_metadata = model_metadata
        self.kinds, self.values, self.stderrs, self.num_fewshot, self.n_samples, self.dataset_metadata = (
            [], [], [], [], [], [])
        #: Whether a row's dataset_metadata may hold a task configuration (False: task_metadata has none to find).
        self.has_configs = True
        self._records = None

    def __len__(self) -> int:
        return len(self.values)

    def records(self) -> list:
        """The rows as ResultRecord objects (made on first use)."""
        if self._records is None:
            out = []
            for k, v, s, n, ns, md in zip(self.kinds, self.values, self.stderrs, self.num_fewshot, self.n_samples,
                                          self.dataset_metadata):
                rec = object.__new__(ResultRecord)
                d = rec.__dict__ = dict(k.__dict__)
                del d["_checked"]
                d.update(model=self.model, model_metadata=self.model_metadata, value=v, stderr=s, num_fewshot=n,
                         n_samples=ns, dataset_metadata=md)
                out.append(rec)
            self._records = out
        return self._records

    def __iter__(self):
        return iter(self.records())

    def __getitem__(self, i):
        return self.records()[i]

    def validate(self, path) -> Optional[list]:
        """Check every row as :meth:`ResultRecord.validate` would, a column at a time.

        Returns None when every row passes unchanged; otherwise the rows as records, for the
        per-record checks (which say what is wrong, or drop a malformed optional number).
        Raises IngestError only through those checks.
        """
        m = self.model
        if not (m.__class__ is str and m in _NAMES_OK):
            if m.__class__ is not str or not m.strip():
                return self.records()
            try:
                _check_text(path, "model", m)
            except IngestError:
                return self.records()
        kinds = self.kinds
        if not all(map(_CHECKED, kinds)):
            for k in dict(zip(map(id, kinds), kinds)).values():  # distinct kinds (a dataclass is unhashable)
                if not k._checked and not _check_kind(k, m, path):
                    return self.records()
        # C-level passes (map, sum), no numpy: most sources have a handful of rows. A sum is finite only if
        # every term is (an overflowing sum of finite terms just takes the per-record checks).
        if set(map(type, self.values)) != {float} or not isfinite(sum(self.values)):
            return self.records()
        n = len(self.values)
        for col, hi in ((self.num_fewshot, 2**31), (self.n_samples, 2**63)):
            # A column the adapter does not give: one C pass, no set. (count compares by ==, and no JSON value
            # but None equals None.)
            if col.count(None) == n:
                continue
            kinds = set(map(type, col))
            if not kinds <= {int, _NONE}:
                return self.records()
            if int in kinds:
                ints = [x for x in set(col) if x is not None]
                if min(ints) < 0 or max(ints) >= hi:
                    return self.records()
        if self.stderrs.count(None) == n:
            return None
        kinds = set(map(type, self.stderrs))
        if not kinds <= {float, _NONE}:
            return self.records()
        if float in kinds and not isfinite(sum(filter(None, self.stderrs))):  # filter(None): the floats (and 0.0)
            return self.records()
        return None

    def task_metadata(self) -> list:
        """Rows (``task``, ``dataset_metadata``) whose distinct metadata dicts hold a task configuration
        (for :func:`harness_ext.store.lm_eval_tasks.pop_configs`), first row of each."""
        from .lm_eval_tasks import CONFIG_KEY

        mds = self.dataset_metadata
        first = dict(zip(map(id, reversed(mds)), range(len(mds) - 1, -1, -1)))  # id -> first row (C-level)
        return [_TaskMeta(self.kinds[i].task, mds[i]) for i in sorted(first.values())
                if isinstance(mds[i], dict) and CONFIG_KEY in mds[i]]

    def column(self, name: str) -> list:
        """A kind field per row (``benchmark``, ``dataset``, ...)."""
        return list(map(attrgetter(name), self.kinds))


_CHECKED = attrgetter("_checked")


class _TaskMeta:
    __slots__ = ("task", "dataset_metadata")

    def __init__(self, task, md):
        self.task, self.dataset_metadata = task, md


def _check_kind(k: ResultRecord, model: str, path) -> bool:
    """Validate a kind once (as a record with a plain score); False if the full check would change or refuse it."""
    probe = object.__new__(ResultRecord)
    probe.__dict__ = dict(k.__dict__)
    probe.__dict__.update(model=model, value=0.0)
    before = {f: probe.__dict__[f] for f in ("random_baseline", "min_score", "max_score")}
    try:
        probe.validate(path)
    except IngestError:
        return False
    if any(probe.__dict__[f] is not v for f, v in before.items()):
        return False  # validate would drop a malformed number: the per-record path does it
    k.__dict__["_checked"] = True
    return True
