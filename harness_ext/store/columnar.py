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
from datetime import datetime, timezone

import duckdb
import numpy as np
import pandas as pd

from .db import AGGREGATE, CONFLICT_TOLERANCE, DATASET, UNKNOWN_SHOTS, SourceOutcome, _f

#: Cells sent to DuckDB per insert (bounded memory: a few arrays of this length).
CHUNK_CELLS = 4_000_000


def write_columnar(store, path: str, sha: str, adapter: str, table) -> SourceOutcome:
    """Store ``table`` as one source in one transaction; see the module docstring."""
    if sha in store._shas:
        return SourceOutcome("unchanged")
    V = np.asarray(table.values, dtype=float)
    source_id = store._next_source
    # Ids: rows by model name, columns by (benchmark, dataset, metric), new ones numbered after the store's.
    new_models: dict = {}
    next_model = max(store._model_ids.values(), default=0) + 1
    row_mid = np.empty(len(table.models), dtype=np.int64)
    meta_rows: dict = {}
    for i, (name, md) in enumerate(zip(table.models, table.model_metadata)):
        mid = store._model_ids.get(name) or new_models.get(name, (None,))[0]
        if mid is None:
            mid = next_model
            next_model += 1
            new_models[name] = (mid, json.dumps(md or {}, default=str))
        row_mid[i] = mid
        for k, v in (md or {}).items():
            meta_rows.setdefault((mid, source_id, str(k)), json.dumps(v, default=str))
    new_datasets: dict = {}
    new_primary: set = set()
    next_dataset = max(store._dataset_ids.values(), default=0) + 1
    col_did = np.empty(len(table.columns), dtype=np.int64)
    for j, c in enumerate(table.columns):
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

    # A model named twice, or two columns of one dataset: the file gives a cell more than once. The first
    # value in file order (column by column, then row by row, as records would come) is kept.
    V, repeats = _first_of_repeats(V, row_mid, col_did)
    n_kept = int(np.count_nonzero(~np.isnan(V)))
    con = store.con
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    clashes = []
    try:
        con.execute("BEGIN TRANSACTION")
        store._append_new([(source_id, str(path), sha, adapter, now, n_kept)], new_models, new_datasets, meta_rows)
        had_results = bool(con.execute("SELECT count(*) FROM (SELECT 1 FROM results LIMIT 1)").fetchall()[0][0])
        step = max(1, CHUNK_CELLS // max(1, V.shape[1]))
        for start in range(0, V.shape[0], step):
            block = V[start:start + step]
            r, c = np.nonzero(~np.isnan(block))
            if not len(r):
                continue
            chunk = {"model_id": row_mid[start + r].astype(np.int32), "dataset_id": col_did[c].astype(np.int32),
                     "value": block[r, c]}
            del r, c
            con.register("_cells", chunk)
            try:
                if had_results:  # against what other files stored (this file's own cells are unique by now)
                    clash = con.execute(
                        f"""SELECT i.model_id, i.dataset_id, i.value, r.value AS value_stored,
                                   r.source_id AS source_id_stored
                            FROM _cells i JOIN results r ON r.model_id = i.model_id AND r.dataset_id = i.dataset_id
                                 AND r.num_fewshot = {UNKNOWN_SHOTS} AND r.source_id <> {source_id}
                            QUALIFY row_number() OVER (PARTITION BY i.model_id, i.dataset_id ORDER BY r.source_id) = 1"""
                    ).df()
                    clashes.append(clash[(clash["value"] - clash["value_stored"]).abs() > CONFLICT_TOLERANCE])
                con.execute(f"""INSERT INTO results (model_id, dataset_id, num_fewshot, value, stderr, n_samples, source_id)
                                SELECT model_id, dataset_id, {UNKNOWN_SHOTS}, value, NULL, NULL, {source_id} FROM _cells""")
            finally:
                con.unregister("_cells")
            del chunk
        if len(repeats):
            rep = repeats.assign(num_fewshot=UNKNOWN_SHOTS, stderr=None, n_samples=None, source_id=source_id)
            store._append("result_repeats", rep[["model_id", "dataset_id", "num_fewshot", "value", "stderr",
                                                 "n_samples", "source_id"]])
        con.execute("COMMIT")
    except duckdb.Error as exc:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:
            pass
        return SourceOutcome("skipped", reason=f"the store refused it: {str(exc).splitlines()[0]}")
    except BaseException:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:
            pass
        raise
    store._remember(new_models, new_datasets, new_primary, [sha])
    differs = [c for c in clashes if len(c)]
    if len(repeats):
        differs.append(repeats.assign(source_id_stored=source_id))
    conflicts = []
    if differs:
        frame = pd.concat(differs, ignore_index=True).assign(num_fewshot=UNKNOWN_SHOTS, source_id=source_id)
        conflicts = store._describe_conflicts(frame)
    return SourceOutcome("ingested", n_new=n_kept, conflicts=conflicts)


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
