"""Writing a source's results given as arrays (:class:`harness_ext.types.ColumnarResults`).

A 20,000 x 2,000 leaderboard is 40 million results: one Python object per result
would not fit in memory. Its rows (models) and columns (datasets) get their ids
once, the cells go to DuckDB as integer-coded arrays a few million at a time,
and everything :meth:`harness_ext.store.db.Store.ingest_batch` promises still
holds: one transaction per source (nothing of it stays behind on failure), a value
differing from one stored from another file is a conflict (both kept, the first
used), a (model, dataset) the file gives twice is stored and reported like one
(the first value in ``results``, a differing later one in ``result_repeats``), and
the source's count is what was written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from ..errors import IngestError
from .batch import _meta_table
from .db_write import SourceOutcome, _f
from .rounding import agree
from .tables import AGGREGATE, CONFLICT_TOLERANCE, DATASET, UNKNOWN_SHOTS

#: Cells sent to DuckDB per insert (bounded memory: a few arrays of this length).
CHUNK_CELLS = 4_000_000


@dataclass
class ColumnarCells:
    """Many results of one source as one row per cell, for long tables too large for a record each.

    A long table (:mod:`harness_ext.adapters.csv_table` on large long CSVs): cell ``k`` is model
    ``models[row[k]]`` on column ``columns[col[k]]`` (a dict of the dataset fields, as in
    :class:`harness_ext.types.ColumnarResults`) with score ``value[k]``; ``num_fewshot`` (-1:
    unknown), ``stderr`` and ``n_samples`` (NaN: unknown) are per-cell arrays or None. Written
    like records: a key given twice keeps its first value, a differing later one is a repeat.
    """

    models: list
    model_metadata: list
    columns: list
    row: Any
    col: Any
    value: Any
    num_fewshot: Any = None
    stderr: Any = None
    n_samples: Any = None

    def __len__(self) -> int:
        return len(self.value)

    def validate(self, path) -> None:
        """Raise IngestError if a name cannot be stored or a score is not finite."""
        from ..types import _NAMES_OK, _check_text

        n = len(self.value)
        for name in ("row", "col", "num_fewshot", "stderr", "n_samples"):
            a = getattr(self, name)
            if a is not None and len(a) != n:
                raise IngestError(path, f"columnar cells: {name} has {len(a)} entries for {n} scores")
        # Each name once (as ResultRecord.validate checks them), not once per cell.
        named = [("model", m) for m in self.models]
        named += [(a, c.get(a)) for c in self.columns for a in ("benchmark", "dataset", "metric")]
        for attr, v in named:
            if v.__class__ is str and v in _NAMES_OK:
                continue
            if not isinstance(v, str) or not v.strip():
                raise IngestError(path, f"{attr} must be a non-empty string, got {v!r}")
            _check_text(path, attr, v)
        bad = ~np.isfinite(self.value)
        if bad.any():
            k = int(np.argmax(bad))
            raise IngestError(path, f"score for {self.models[self.row[k]]!r} on "
                                    f"{self.columns[self.col[k]]['dataset']!r} is not finite")
        if self.num_fewshot is not None and len(self.num_fewshot) and (
                self.num_fewshot.min() < UNKNOWN_SHOTS or self.num_fewshot.max() >= 2**31):
            raise IngestError(path, "num_fewshot out of range (0 to 2**31 - 1)")


def write_columnar(store, path: str, sha: str, adapter: str, table) -> SourceOutcome:
    """Store ``table`` (:class:`~harness_ext.types.ColumnarResults` or :class:`ColumnarCells`) as one
    source in one transaction; see the module docstring."""
    if sha in store._shas:
        return SourceOutcome("unchanged")
    source_id = store._next_source
    row_mid, new_models, meta_rows = _model_ids(store, table.models, table.model_metadata, source_id)
    col_did, new_datasets, new_primary = _dataset_ids(store, table.columns)
    if isinstance(table, ColumnarCells):
        n_kept, chunks, repeats = _long_cells(table, row_mid, col_did)
    else:
        # A model named twice, or two columns of one dataset: the file gives a cell more than once. The first
        # value in file order (column by column, then row by row, as records would come) is kept.
        V, repeats = _first_of_repeats(np.asarray(table.values, dtype=float), row_mid, col_did)
        repeats = repeats.assign(num_fewshot=UNKNOWN_SHOTS, stderr=None, n_samples=None)
        n_kept = int(np.count_nonzero(~np.isnan(V)))
        chunks = _wide_cells(V, row_mid, col_did)
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    clashes, n_rounded = [], 0
    try:
        with store.transaction() as con:
            store._append_new([(source_id, str(path), sha, adapter, now, n_kept)], new_models, new_datasets, meta_rows)
            had_results = bool(con.execute("SELECT count(*) FROM (SELECT 1 FROM results LIMIT 1)").fetchall()[0][0])
            for chunk in chunks:
                with store.registered(_cells=chunk):
                    if had_results:  # against what other files stored (this file's own cells are unique by now)
                        clash = con.execute(
                            f"""SELECT i.model_id, i.dataset_id, i.num_fewshot, i.value, r.value AS value_stored,
                                       r.source_id AS source_id_stored
                                FROM _cells i JOIN results r ON r.model_id = i.model_id AND r.dataset_id = i.dataset_id
                                     AND r.num_fewshot = i.num_fewshot AND r.source_id <> {source_id}
                                QUALIFY row_number() OVER (PARTITION BY i.model_id, i.dataset_id, i.num_fewshot
                                                           ORDER BY r.source_id) = 1"""
                        ).df()
                        differ = (clash["value"] - clash["value_stored"]).abs() > CONFLICT_TOLERANCE
                        rounded = differ & agree(clash["value"], clash["value_stored"])  # no conflict (rounding.py)
                        n_rounded += int(rounded.sum())
                        clashes.append(clash[differ & ~rounded])
                    extra = [c if c in chunk.column_names else "NULL" for c in ("stderr", "n_samples")]
                    con.execute(f"""INSERT INTO results (model_id, dataset_id, num_fewshot, value, stderr, n_samples,
                                                         source_id)
                                    SELECT model_id, dataset_id, num_fewshot, value, {extra[0]}, {extra[1]}, {source_id}
                                    FROM _cells""")
                del chunk
            if len(repeats):
                store._append("result_repeats", repeats.assign(source_id=source_id)[
                    ["model_id", "dataset_id", "num_fewshot", "value", "stderr", "n_samples", "source_id"]])
    except duckdb.Error as exc:
        return SourceOutcome("skipped", reason=f"the store refused it: {str(exc).splitlines()[0]}")
    store._remember(new_models, new_datasets, new_primary, [sha])
    differs = [c for c in clashes if len(c)]
    if len(repeats):
        differs.append(repeats.assign(source_id_stored=source_id))
    conflicts = []
    if differs:
        cols = ["model_id", "dataset_id", "num_fewshot", "value", "value_stored", "source_id_stored"]
        frame = pd.concat([d[cols] for d in differs], ignore_index=True).assign(source_id=source_id)
        conflicts = store._describe_conflicts({k: frame[k].tolist() for k in frame.columns})
    return SourceOutcome("ingested", n_new=n_kept, conflicts=conflicts, n_rounded=n_rounded)


def _model_ids(store, models: list, metadata: list, source_id: int) -> tuple:
    """``(store id per row, new models, model metadata columns)``: new names numbered after the store's."""
    new_models: dict = {}
    next_model = max(store._model_ids.values(), default=0) + 1
    row_mid = np.empty(len(models), dtype=np.int64)
    meta_rows: dict = {}
    for i, (name, md) in enumerate(zip(models, metadata)):
        mid = store._model_ids.get(name) or new_models.get(name, (None,))[0]
        if mid is None:
            mid = next_model
            next_model += 1
            new_models[name] = (mid, json.dumps(md, default=str) if md else "{}")
        row_mid[i] = mid
        for k, v in (md or {}).items():
            meta_rows.setdefault((mid, source_id, str(k)), json.dumps(v, default=str))
    return row_mid, new_models, _meta_table(meta_rows)


def _dataset_ids(store, columns: list) -> tuple:
    """``(store id per column, new datasets, new primary (benchmark, dataset))``, keyed by (benchmark, dataset, metric)."""
    new_datasets: dict = {}
    new_primary: set = set()
    next_dataset = max(store._dataset_ids.values(), default=0) + 1
    col_did = np.empty(len(columns), dtype=np.int64)
    for j, c in enumerate(columns):
        dkey = (c["benchmark"], c["dataset"], c["metric"])
        did = store._dataset_ids.get(dkey) or new_datasets.get(dkey, (None,))[0]
        if did is None:
            did = next_dataset
            next_dataset += 1
            pkey = dkey[:2]
            primary = bool(c.get("primary", True)) and pkey not in store._primary and pkey not in new_primary
            if primary:
                new_primary.add(pkey)
            new_datasets[dkey] = (
                did, c["benchmark"], c["dataset"], c["metric"], c.get("higher_is_better"), _f(c.get("random_baseline")),
                c.get("baseline_source"), _f(c.get("min_score")), _f(c.get("max_score")), primary, c.get("task"),
                json.dumps(c.get("dataset_metadata") or {}, default=str), AGGREGATE if c.get("aggregate") else DATASET,
                c.get("scale"))
        col_did[j] = did
    return col_did, new_datasets, new_primary


def _wide_cells(V: np.ndarray, row_mid: np.ndarray, col_did: np.ndarray):
    """The present cells of ``V`` as Arrow tables of at most about :data:`CHUNK_CELLS` rows, row by row.

    The present-cell mask compresses the block and the column ids directly, and a row's model id is
    repeated once per present cell: no index arrays (a 2-D ``nonzero`` and three gathers cost 4x more).
    """
    import pyarrow as pa

    step = max(1, CHUNK_CELLS // max(1, V.shape[1]))
    mids, dids = row_mid.astype(np.int32), col_did.astype(np.int32)
    for start in range(0, V.shape[0], step):
        block = V[start:start + step]
        present = ~np.isnan(block)
        per_row = np.count_nonzero(present, axis=1)
        n = int(per_row.sum())
        if not n:
            continue
        yield pa.table({"model_id": np.repeat(mids[start:start + len(block)], per_row),
                        "dataset_id": np.broadcast_to(dids, block.shape)[present],
                        "num_fewshot": np.full(n, UNKNOWN_SHOTS, dtype=np.int32), "value": block[present]})


def _long_cells(t: ColumnarCells, row_mid: np.ndarray, col_did: np.ndarray) -> tuple:
    """``(cells kept, chunks of them, repeats)`` of a long table: the first value of each key is kept, a
    differing later one is a repeat (``model_id, dataset_id, num_fewshot, value, value_stored, stderr, n_samples``)."""
    import pyarrow as pa

    n = len(t.value)
    shots = (np.full(n, UNKNOWN_SHOTS, dtype=np.int32) if t.num_fewshot is None
             else np.asarray(t.num_fewshot, dtype=np.int32))
    mids, dids = row_mid[t.row].astype(np.int32), col_did[t.col].astype(np.int32)
    # One integer per (model, dataset, shots): store ids are below 2**31, so a pair fits in 63 bits.
    key = (mids.astype(np.int64) << 31) | dids
    shot_code, shot_vals = pd.factorize(shots)
    if len(shot_vals) > 1:
        key = pd.factorize(key)[0].astype(np.int64) * len(shot_vals) + shot_code
    dup = _duplicated(key, _dense_key(t, shot_code, len(shot_vals), row_mid, col_did))
    repeats = pd.DataFrame(columns=["model_id", "dataset_id", "num_fewshot", "value", "value_stored", "stderr",
                                    "n_samples"])
    if dup.any():
        keep = np.nonzero(~dup)[0]
        later = np.nonzero(dup)[0]
        first = pd.Series(keep, index=key[keep]).reindex(key[later]).to_numpy()
        differ = np.abs(t.value[later] - t.value[first]) > CONFLICT_TOLERANCE
        later, first = later[differ], first[differ]
        repeats = pd.DataFrame({
            "model_id": mids[later], "dataset_id": dids[later], "num_fewshot": shots[later], "value": t.value[later],
            "value_stored": t.value[first],
            "stderr": None if t.stderr is None else pd.Series(t.stderr[later]).astype("Float64"),
            "n_samples": None if t.n_samples is None else pd.Series(t.n_samples[later]).astype("Float64").astype("Int64")})
    else:
        keep = None

    def chunks():
        for start in range(0, n if keep is None else len(keep), CHUNK_CELLS):
            idx = slice(start, start + CHUNK_CELLS) if keep is None else keep[start:start + CHUNK_CELLS]
            cols = {"model_id": mids[idx], "dataset_id": dids[idx], "num_fewshot": shots[idx], "value": t.value[idx]}
            if t.stderr is not None:
                se = t.stderr[idx]
                cols["stderr"] = pa.array(se, mask=np.isnan(se))
            if t.n_samples is not None:
                ns = t.n_samples[idx]
                cols["n_samples"] = pa.array(np.nan_to_num(ns).astype(np.int64), mask=np.isnan(ns))
            yield pa.table(cols)

    return (n if keep is None else len(keep)), chunks(), repeats


def _dense_key(t: ColumnarCells, shot_code: np.ndarray, n_shots: int, row_mid: np.ndarray, col_did: np.ndarray):
    """``(key, size)``: each cell's (row, column, shots) as one integer below ``size``, or None when rows or
    columns name a model or dataset twice (then only the store-id key says which cells repeat)."""
    if len(np.unique(row_mid)) < len(row_mid) or len(np.unique(col_did)) < len(col_did):
        return None
    key = t.row.astype(np.int64) * len(t.columns) + t.col
    if n_shots > 1:
        key = key * n_shots + shot_code
    return key, len(t.models) * len(t.columns) * max(1, n_shots)


def _duplicated(key: np.ndarray, dense=None) -> np.ndarray:
    """``pandas.Series(key).duplicated()``, after a count (dense keys) or a sort finds, as usual, none."""
    if dense is not None and dense[1] <= 4 * len(key) + (1 << 20):
        none = len(key) < 2 or np.bincount(dense[0], minlength=dense[1]).max() <= 1
    else:
        none = len(key) < 2 or (np.diff(np.sort(key)) != 0).all()
    if none:
        return np.zeros(len(key), dtype=bool)
    return pd.Series(key).duplicated(keep="first").to_numpy()


def _first_of_repeats(V: np.ndarray, row_mid: np.ndarray, col_did: np.ndarray) -> tuple:
    """``V`` with one value per (model, dataset) left, and the later differing values as a frame.

    Cells of a row whose model an earlier row has, or of a column whose dataset an earlier
    column has, move into the first such row/column when it is missing there; a differing
    value there becomes a repeat (``model_id, dataset_id, value, value_stored``).
    """
    _, first_row = np.unique(row_mid, return_index=True)
    _, first_col = np.unique(col_did, return_index=True)
    if len(first_row) == len(row_mid) and len(first_col) == len(col_did):
        return V, pd.DataFrame(columns=["model_id", "dataset_id", "value", "value_stored"])
    dup_rows = np.setdiff1d(np.arange(len(row_mid)), first_row)
    dup_cols = np.setdiff1d(np.arange(len(col_did)), first_col)
    rows = np.union1d(first_row[np.isin(row_mid[first_row], row_mid[dup_rows])], dup_rows)
    cols = np.union1d(first_col[np.isin(col_did[first_col], col_did[dup_cols])], dup_cols)
    # Only cells in a repeated row or column can repeat: order them as records come (column, then row).
    cells, all_rows, in_cols = [], np.arange(V.shape[0]), set(cols.tolist())
    for j in range(V.shape[1]):
        rr = all_rows if j in in_cols else rows
        vals = V[rr, j]
        ok = ~np.isnan(vals)
        cells.append(pd.DataFrame({"r": rr[ok], "c": j, "value": vals[ok]}))
    long = pd.concat(cells, ignore_index=True)
    long["model_id"] = row_mid[long["r"].to_numpy()]
    long["dataset_id"] = col_did[long["c"].to_numpy()]
    first = long.drop_duplicates(["model_id", "dataset_id"], keep="first")
    later = long[long.duplicated(["model_id", "dataset_id"], keep="first")]
    later = later.merge(first[["model_id", "dataset_id", "value"]], on=["model_id", "dataset_id"],
                        suffixes=("", "_stored"))
    repeats = later[(later["value"] - later["value_stored"]).abs() > CONFLICT_TOLERANCE]
    V = V.copy()
    V[long["r"].to_numpy(), long["c"].to_numpy()] = np.nan
    V[first["r"].to_numpy(), first["c"].to_numpy()] = first["value"].to_numpy()
    return V, repeats[["model_id", "dataset_id", "value", "value_stored"]].reset_index(drop=True)
