"""A write batch's rows as columns: what :meth:`harness_ext.store.db.Store.ingest_batch` computes before writing.

Models and row descriptions become integer codes in order of first appearance (a
:class:`~harness_ext.store.rows.ResultRows` source names its model and shared kinds once), repeated cells and
keys are found by integer codes, and the result rows go to DuckDB as one Arrow table.
"""

from __future__ import annotations

import json
import operator
from itertools import accumulate, chain
from typing import Optional

import numpy as np
import pandas as pd

_DUMPED: dict = {}
_RECORD_FIELDS = operator.attrgetter("model", "num_fewshot", "value", "stderr", "n_samples", "model_metadata",
                                     "dataset_metadata")
_KIND_NAMES = operator.attrgetter("benchmark", "dataset", "metric")


class _Columns:
    """A batch's rows as columns (see :func:`_columns`)."""

    __slots__ = ("models", "model_metas", "model_codes", "source_metas", "descs", "desc_first", "desc_codes",
                 "shots", "values", "stderrs", "n_samples", "dmetas")


def _columns(items: list) -> _Columns:
    """The rows of ``(path, sha, adapter, records)`` items as columns.

    ``models`` (names in order of first appearance), ``model_metas`` (each one's metadata on its first row),
    ``model_codes`` (per row); ``source_metas``: ``(item index, model code, metadata dict)`` of every distinct
    non-empty (model, dict) of a source, in row order; ``descs``: the distinct row descriptions (a record, or
    the kind of :class:`~harness_ext.store.rows.ResultRows` rows) in order of first appearance, ``desc_first``
    their first rows and ``desc_codes`` per row; ``shots, values, stderrs, n_samples, dmetas``: per row.
    """
    from .rows import ResultRows

    c = _Columns()
    model_code: dict = {}
    c.model_metas, c.source_metas = [], []
    codes: list = []
    c.shots, c.values, c.stderrs, c.n_samples, c.dmetas = shots, values, stderrs, n_samples, dmetas = (
        [], [], [], [], [])
    descs: list = []
    for k, (*_, recs) in enumerate(items):
        if recs.__class__ is ResultRows:
            n = len(recs)
            if not n:
                continue
            code = model_code.get(recs.model)
            if code is None:
                code = model_code[recs.model] = len(model_code)
                c.model_metas.append(recs.model_metadata)
            codes += [code] * n
            if recs.model_metadata:
                c.source_metas.append((k, code, recs.model_metadata))
            shots += recs.num_fewshot
            values += recs.values
            stderrs += recs.stderrs
            n_samples += recs.n_samples
            dmetas += recs.dataset_metadata
            descs += recs.kinds
        elif recs:
            model, shot, value, stderr, ns, metas, dmeta = map(list, zip(*map(_RECORD_FIELDS, recs)))
            seen = set()
            for name, md in zip(model, metas):
                code = model_code.get(name)
                if code is None:
                    code = model_code[name] = len(model_code)
                    c.model_metas.append(md)
                codes.append(code)
                if md and (code, id(md)) not in seen:
                    seen.add((code, id(md)))
                    c.source_metas.append((k, code, md))
            shots += shot
            values += value
            stderrs += stderr
            n_samples += ns
            dmetas += dmeta
            descs += recs
    c.models = list(model_code)
    c.model_codes = np.array(codes, dtype=np.int64)
    # Descriptions by identity: a kind is one object shared by its rows (a record is its own).
    if descs:
        first = np.sort(np.unique(np.fromiter(map(id, descs), dtype=np.uint64, count=len(descs)), return_index=True)[1])
    else:
        first = np.empty(0, dtype=np.int64)
    c.desc_first = first.tolist()
    c.descs = [descs[i] for i in c.desc_first]
    pos = dict(zip(map(id, c.descs), range(len(c.descs))))
    c.desc_codes = np.fromiter(map(pos.__getitem__, map(id, descs)), dtype=np.int64, count=len(descs))
    return c


def _metadata(source_metas: list, m_ids: np.ndarray, first_source: int, new_mds: dict) -> tuple:
    """``(model_metadata columns, {model code: JSON of its metadata})`` of a batch's ``(item index, model code,
    metadata dict)`` entries (:attr:`_Columns.source_metas`); the JSON for the new models of ``new_mds`` (code ->
    the dict on the model's first row).

    Each value is serialised once (``json.dumps(v, default=str)``), in one pass over the batch, and a new model's
    dict is laid out from its values' encodings as json.dumps lays it out: per source, a function call and four
    list extensions cost as much as the encoding (4,574 leaderboard files).
    """
    if not source_metas:
        return _first_per_key([], [], [], []), {code: _dumps(md) for code, md in new_mds.items()}
    ks, codes, mds = zip(*source_metas)
    lens = list(map(len, mds))
    keys = list(chain.from_iterable(mds))
    enc, dumps = _ENCODE_STR, _dumps
    vals = [enc(v) if v.__class__ is str else dumps(v) for v in chain.from_iterable(map(_VALUES, mds))]
    mids = np.repeat(m_ids[np.array(codes, dtype=np.int64)], lens).tolist()
    sids = np.repeat(np.array(ks, dtype=np.int64) + first_source, lens).tolist()
    out: dict = {}
    if new_mds:
        try:
            pairs = list(map("{}: {}".format, map(enc, keys), vals))
        except TypeError:  # a key that is not a string: the whole dict by the encoder's own rules
            pairs = None
        start = 0
        for code, md, end in zip(codes, mds, accumulate(lens)):
            if new_mds.get(code) is md and code not in out:  # the model's first dict, at its first source
                out[code] = "{" + ", ".join(pairs[start:end]) + "}" if pairs is not None else dumps(md)
            start = end
        for code, md in new_mds.items():  # a dict no source lists (not expected: the first row's is listed)
            if code not in out:
                out[code] = dumps(md)
    return _first_per_key(mids, sids, keys, vals), out


_VALUES = operator.methodcaller("values")


def _first_per_key(mids: list, sids: list, keys: list, vals: list) -> dict:
    """The model_metadata columns, keys as strings, the first value of each (model, source, key) kept.

    A source usually gives each model one metadata dict, so the rows are distinct as they come: checked in C (a
    set of the keys, string keys), else a dict keeps the first value of each.
    """
    if set(map(type, keys)) <= {str} and len(set(zip(mids, sids, keys))) == len(keys):
        return {"model_id": mids, "source_id": sids, "key": keys, "value": vals}
    first: dict = {}
    for row in zip(mids, sids, map(str, keys), vals):
        first.setdefault(row[:3], row[3])
    return _meta_table(first)


def _meta_table(rows: dict) -> dict:
    """The model_metadata columns of ``{(model_id, source_id, key): JSON value}``."""
    m, s, k = zip(*rows) if rows else ((), (), ())
    return {"model_id": list(m), "source_id": list(s), "key": list(k), "value": list(rows.values())}


class _Frame:
    """A batch's result rows as numpy columns (``cols``), with the rows where a column is NULL (``nulls``)."""

    def __init__(self, cols: dict, nulls: dict):
        self.cols, self.nulls = cols, nulls

    def __len__(self) -> int:
        return len(self.cols["value"])

    def arrow(self, rows: Optional[np.ndarray] = None):
        """These rows (all: None) as an Arrow table, NULL where ``nulls`` says: DuckDB scans it in C, where
        a pandas frame costs a Python step per column and statement (most of a small batch's time)."""
        import pyarrow as pa

        pick = (lambda a: a) if rows is None else (lambda a: a[rows])
        return pa.table({k: pa.array(pick(v), mask=pick(self.nulls[k]) if k in self.nulls else None)
                         for k, v in self.cols.items()})


class _Cells:
    """Where a batch's rows repeat a cell (model, dataset, shots) and a key (cell and source), by integer codes.

    ``repeat``: the row repeats its key (a file giving a cell twice; the first value is kept); ``first``: the
    row is its cell's first in the batch; ``first_of_cell`` / ``first_of_key``: per row, the first row of its
    cell / key; ``n_kept``: per source, the rows kept (not repeats). Rows are in source order.
    """

    def __init__(self, frame: _Frame, first_source: int, n_sources: int):
        m, d, s = (frame.cols[k].astype(np.int64, copy=False) for k in ("model_id", "dataset_id", "num_fewshot"))
        src = frame.cols["source_id"].astype(np.int64, copy=False) - first_source
        cell = _codes(_codes(m, d), s)
        key = _codes(cell, src)
        self.first_of_cell = _first_rows(cell)
        self.first_of_key = _first_rows(key)
        n = len(frame)
        self.first = self.first_of_cell == np.arange(n)
        self.repeat = self.first_of_key != np.arange(n)
        self.n_kept = np.bincount(src[~self.repeat], minlength=n_sources)


def _codes(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Codes of the pairs ``(a, b)`` of non-negative ints, equal exactly where the pairs are."""
    if not len(a):
        return a
    a, _ = pd.factorize(a)
    b = b - b.min()
    width = int(b.max()) + 1
    if len(a) * width < 2**62:
        return a * width + b
    return pd.factorize(pd.MultiIndex.from_arrays([a, b]))[0]


def _first_rows(codes: np.ndarray) -> np.ndarray:
    """Per row, the position of the first row with its code."""
    if not len(codes):
        return codes
    codes, _ = pd.factorize(codes)  # numbered in order of first appearance, so the first rows come in code order
    return pd.Series(codes).drop_duplicates().index.to_numpy()[codes]


def _int_column(col: list, missing: int = 0) -> tuple:
    """``(int64 array, where None)`` of a column of validated ints or None (None -> ``missing``), converted in C
    (through float when every value is below 2**53, exact there)."""
    if col.count(None) == len(col):  # a column the adapter does not give (see _float_column)
        return np.full(len(col), missing, dtype=np.int64), np.ones(len(col), dtype=bool)
    a = np.array(col, dtype=float)  # None -> NaN
    nan = np.isnan(a)
    if not len(a) or np.nanmax(np.abs(a), initial=0.0) < 2.0**53:
        return np.where(nan, float(missing), a).astype(np.int64), nan
    arr = pd.array(col, dtype="Int64")
    return arr.fillna(missing).to_numpy(np.int64), arr.isna()


def _float_column(col: list) -> np.ndarray:
    """A column of validated floats or None as float64, None -> NaN. A column that is all None (stderrs, shot counts
    and sample counts an adapter does not give) is told by one ``list.count`` and made by ``np.full``: numpy
    converts None to NaN one object at a time (2.3 ms for Open LLM v2's 27,444 rows, against 20 us)."""
    if col.count(None) == len(col):  # count compares by identity first: no JSON value but None equals None
        return np.full(len(col), np.nan)
    return np.array(col, dtype=float)


def _dumps(v) -> str:
    """``json.dumps(v, default=str)``, remembered for strings: metadata values repeat across thousands of files."""
    if v.__class__ is not str:
        return _encode(v)
    try:
        return _DUMPED[v]
    except KeyError:
        if len(_DUMPED) > 100_000:
            _DUMPED.clear()
        out = _DUMPED[v] = _ENCODE(v)
        return out


#: ``json.dumps(v, default=str)`` without building an encoder per call (what json.dumps does with ``default``).
_ENCODE = json.JSONEncoder(default=str).encode
#: The C encoder ``_ENCODE`` makes on each call (with the checks json.dumps makes: circular references, NaN as
#: NaN, ``default=str``), made once: building it is most of encoding a small dict. None without the C accelerator.
_MARKERS: dict = {}
_C_ENCODER = (json.encoder.c_make_encoder(_MARKERS, str, json.encoder.encode_basestring_ascii, None, ": ", ", ",
                                          False, False, True)
              if json.encoder.c_make_encoder is not None else None)


def _encode(v) -> str:
    """``_ENCODE(v)`` through :data:`_C_ENCODER`; anything it cannot encode goes to ``_ENCODE`` (and its error)."""
    if _C_ENCODER is None:
        return _ENCODE(v)
    try:
        return "".join(_C_ENCODER(v, 0))
    except Exception:  # noqa: BLE001 - a circular structure, a failing default: json's own message, from _ENCODE
        _MARKERS.clear()  # what an interrupted encoding left in its circular-reference markers
        return _ENCODE(v)


#: What ``_ENCODE`` does with a string (JSONEncoder.encode with ensure_ascii); raises TypeError for anything else.
_ENCODE_STR = json.encoder.encode_basestring_ascii
