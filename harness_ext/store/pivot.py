"""Store to matrix: DuckDB selects and codes the results, numpy scatters them into one preallocated array.

No long string table and no pandas pivot: labels are built for the few
distinct models, datasets, shot settings and sources only, and the results
come back as integer codes and values (Arrow batches of about a million rows),
scattered straight into the float matrix. :func:`harness_ext.store.matrix.load_matrix`
adds normalisation, fingerprint and metadata.

Target: store to matrix within 2x of reading the same matrix from Parquet (``benchmarks/bench_matrix.py`` measures it).
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from ..arrays import pooled_array
from ..errors import StoreError
from .digest import RowHasher
from .scan import batches as _batches
from .tables import UNKNOWN_SHOTS

def benchmark_filter(store, query, column: str):
    """SQL conditions and parameters selecting ``query.benchmarks`` in ``column``.

    A benchmark-group name (``ingest --group``) stands for its member benchmarks.
    """
    if not query.benchmarks:
        return [], []
    marks = ", ".join("?" * len(query.benchmarks))
    names = list(query.benchmarks)
    if getattr(store, "_has_table", lambda t: False)("benchmark_groups"):
        return ([f"({column} IN ({marks}) OR {column} IN "
                 f"(SELECT benchmark FROM benchmark_groups WHERE name IN ({marks})))"], names + names)
    return [f"{column} IN ({marks})"], names


def dataset_filter(store, query, metrics: bool = True):
    """SQL conditions and parameters on the ``datasets`` table: benchmarks, aggregates, the dataset glob and
    (with ``metrics``) the metric: ``query.metric`` or each dataset's primary one."""
    where, params = benchmark_filter(store, query, "benchmark")
    if metrics and query.metric:
        where.append("metric = ?")
        params.append(query.metric)
    elif metrics:
        where.append("is_primary")
    if query.aggregates == "only":
        where.append("kind = 'aggregate'")
    elif not query.aggregates:
        where.append("coalesce(kind, 'dataset') <> 'aggregate'")
    if query.datasets:
        where.append("name GLOB ?")
        params.append(query.datasets)
    return where, params


#: The largest cell key (model_id * K + dataset_id) the one-scan path has DuckDB compute: an INTEGER.
_KEY_MAX = 2**31 - 1
#: DuckDB's row group: the one-scan path's batch.
_ROW_GROUP = 122_880
#: Cells per block of the one-scan path's missing-cell count (a 128 KB boolean block stays in cache).
_BLOCK_CELLS = 1 << 17
#: A datasets row as the matrix reads it: the id, then _DATASET_COLUMNS.
_DS_SELECT = ("dataset_id, benchmark, name, metric, task, higher_is_better, random_baseline, baseline_source, "
              "min_score, max_score, kind, scale")
_SHOTS_RULE = "per dataset, the shot setting most models were run at (ties: fewest shots)"


def shots_left_out_note(attrs: dict) -> Optional[str]:
    """The line ``matrix`` and ``reduce`` print when the shot rule left cells out of a matrix (``attrs["shots"]``), or None."""
    n = ((attrs or {}).get("shots") or {}).get("dropped_cells")
    return (f"{n} cells measured only at another shot setting than their dataset's are left out "
            "(--num-fewshot K or --rows model_shots to see them)") if n else None


_DATASET_COLUMNS = ["benchmark", "dataset", "metric", "task", "higher_is_better", "random_baseline", "baseline_source",
                    "min_score", "max_score", "kind", "scale"]


def raw_arrays(store, query, extra: Optional[dict] = None, fingerprint: bool = False) -> tuple:
    """Raw matrix (a float64 array the caller owns), its row and column labels (sorted) and per-column metadata.

    Returns ``(X, index, columns, meta)``: ``index`` a list of str, or (the one-scan path) the ``model``
    ``pandas.Index`` over the store's Arrow strings; ``columns`` a list of str. Labels are built for the few distinct models, shot counts, sources and
    datasets only. DuckDB selects the results and joins each to integer row
    and column codes; the codes, values and a rank (source, then benchmark,
    dataset name and metric, then shot count within a run) come back a
    million rows at a time (Arrow batches when pyarrow is installed) and are
    scattered into the preallocated float matrix, keeping the lowest rank per
    cell: the first-ingested value, as the store promises. Memory is the
    matrix, one int64 rank matrix of the same shape (only when a cell has
    several values) and one batch.

    Rows of models where the whole selection has one shot setting take :func:`_one_setting_arrays`
    (one scan, no rank matrix) when it applies. There, with ``fingerprint``, the raw matrix's
    fingerprint is computed while it is read: ``extra["fingerprint"]`` is then a
    :class:`harness_ext.store.digest.RowHasher` whose ``result()`` is
    :func:`harness_ext.store.matrix.fingerprint` of the returned matrix.
    """
    con = store.con
    extra = {} if extra is None else extra
    has = getattr(store, "_has_table", lambda t: False)
    dwhere, dparams = dataset_filter(store, query)
    rwhere, rparams = ["TRUE"], []
    n_sel, n_all = con.execute(f"SELECT count(*) FILTER (WHERE {' AND '.join(dwhere)}), count(*) FROM datasets",
                               dparams).fetchone()
    if n_sel < n_all:  # the filter costs a hash probe per result: skip it when every dataset is selected
        rwhere[0] = f"r.dataset_id IN (SELECT dataset_id FROM datasets WHERE {' AND '.join(dwhere)})"
        rparams.extend(dparams)
    aliased = bool(query.aliases) and has("model_aliases")
    if query.models:  # a glob on the canonical id or on the name a source used
        rwhere.append("r.model_id IN (SELECT model_id FROM models m WHERE m.name GLOB ?" + (
            " OR (SELECT canonical FROM model_aliases a WHERE a.alias = m.name) GLOB ?)" if aliased else ")"))
        rparams.extend([query.models] * (2 if aliased else 1))
    if query.source:
        rwhere.append("r.source_id IN (SELECT source_id FROM sources WHERE path GLOB ?)")
        rparams.append(query.source)
    if query.num_fewshot is not None:
        rwhere.append("r.num_fewshot = ?")
        rparams.append(int(query.num_fewshot))
    where = " AND ".join(rwhere)
    if query.rows in ("model", "model_shots"):
        done = _one_setting_arrays(con, query, where, rparams, dwhere, dparams, aliased, extra, fingerprint)
        if done is not None:
            return done
    if query.rows == "model":
        # One row per model: each dataset at the shot setting most models ran (ties: fewest shots, unknown last).
        # A plain count first: only datasets run at several shot settings need the models counted exactly.
        # The median sample count per (dataset, shot setting) rides along: a column's cost when it is one pair.
        per = con.execute(f"""SELECT dataset_id, num_fewshot, count(*) AS n, median(n_samples) AS s FROM results r
                              WHERE {where} GROUP BY ALL""", rparams).fetchall()
        pair_samples = {(d, k): s for d, k, _, s in per}
        per = [(d, k, n) for d, k, n, _ in per]
        n_settings: dict = {}
        for d, _, _ in per:
            n_settings[d] = n_settings.get(d, 0) + 1
        mixed = sorted(d for d, n in n_settings.items() if n > 1)
        dropped, best = 0, {}
        if mixed:
            mwhere = f"{where} AND r.dataset_id IN (SELECT unnest(?::INTEGER[]))"
            mparams = rparams + [mixed]
            per = [p for p in per if n_settings[p[0]] == 1] + con.execute(
                f"""SELECT dataset_id, num_fewshot, count(DISTINCT model_id) AS n FROM results r
                    WHERE {mwhere} GROUP BY ALL""", mparams).fetchall()
            for d, k, n in per:
                if n_settings[d] > 1:
                    key = (-n, np.iinfo(np.int64).max if k == UNKNOWN_SHOTS else k)
                    if d not in best or key < best[d][0]:
                        best[d] = (key, k)
            total = con.execute(f"SELECT count(*) FROM (SELECT DISTINCT model_id, dataset_id FROM results r "
                                f"WHERE {mwhere})", mparams).fetchone()[0]
            # Results of a mixed dataset at another shot setting are left out (every setting of the others is its only one).
            keep = (f"(r.dataset_id::BIGINT * 4294967296 + (r.num_fewshot + 1)) IN (SELECT unnest(?::BIGINT[])) "
                    f"OR r.dataset_id NOT IN (SELECT unnest(?::INTEGER[]))")
            rwhere.append(f"({keep})")
            rparams.extend([[int(d) * 4294967296 + int(v[1]) + 1 for d, v in best.items()], mixed])
            where = " AND ".join(rwhere)
            kept = con.execute(f"SELECT count(*) FROM (SELECT DISTINCT model_id, dataset_id FROM results r "
                               f"WHERE {where} AND r.dataset_id IN (SELECT unnest(?::INTEGER[])))",
                               rparams + [mixed]).fetchone()[0]
            dropped = int(total - kept)
        extra["shots"] = {"rule": _SHOTS_RULE, "dropped_cells": dropped, "mixed_dataset_ids": len(mixed)}
    # One scan for the distinct datasets and row keys of the selection (small: thousands, not millions).
    second = "r.source_id" if query.rows == "run" else "r.num_fewshot"
    if query.rows == "model":  # the per-dataset counts above name the datasets and shot settings already
        sel = [(d, k) for d, k, _ in per if n_settings[d] == 1 or best[d][1] == k]
        ds_ids = np.unique(np.array([d for d, _ in sel], dtype=np.int64))
        row_model = np.asarray(con.execute(f"SELECT DISTINCT r.model_id FROM results r WHERE {where} ORDER BY 1",
                                           rparams).fetchnumpy()["model_id"], dtype=np.int64)
        row_k = np.zeros(len(row_model), dtype=np.int64)  # one row per model whatever its shot settings
        model_shots = np.unique(np.array([k for _, k in sel], dtype=np.int64))
    else:
        ds_ids = con.execute(f"SELECT DISTINCT r.dataset_id FROM results r WHERE {where} ORDER BY 1", rparams).fetchnumpy()
        ds_ids = np.asarray(ds_ids["dataset_id"], dtype=np.int64)
        keys = con.execute(f"SELECT DISTINCT r.model_id, {second} AS k FROM results r WHERE {where} ORDER BY 1, 2",
                           rparams).fetchnumpy()
        row_model = np.asarray(keys["model_id"], dtype=np.int64)
        row_k = np.asarray(keys["k"], dtype=np.int64)
    if not len(ds_ids):
        n = store.counts()["results"]
        if n == 0:
            raise StoreError("the store is empty: run 'harness-ext ingest PATH' first")
        raise StoreError(no_match_message(store, query))

    # Columns: dataset names, qualified by benchmark where a name is shared by two selected benchmarks.
    ds = con.execute(
        f"SELECT {_DS_SELECT} FROM datasets WHERE dataset_id IN (SELECT unnest(?::INTEGER[]))",
        [ds_ids.tolist()]).fetchall()
    col_label = _column_labels(ds)
    columns = sorted(set(col_label.values()))
    col_code = {c: i for i, c in enumerate(columns)}
    # Among values of one cell from one source, the old ORDER BY benchmark, name decides; metric breaks ties.
    prio = {row[0]: i for i, row in enumerate(sorted(ds, key=lambda r: (r[1], r[2], r[3], r[0])))}
    info = {row[0]: row[1:] for row in ds}

    # Rows: a model, a model at one shot count (when it has several), or a model's run (one source file).
    model_ids = np.unique(row_model)
    # Every model's name in one Arrow fetch: a list of tens of thousands of ids as a query parameter is slower.
    tab = con.sql("SELECT model_id, name FROM models").fetchnumpy()
    lut = np.full(int(max(model_ids.max(), tab["model_id"].max())) + 1, -1, dtype=np.int64)
    lut[np.asarray(tab["model_id"], dtype=np.int64)] = np.arange(len(tab["model_id"]))
    all_names = np.asarray(tab["name"], dtype=object)
    names = dict(zip(model_ids.tolist(), all_names[lut[model_ids]].tolist()))
    if aliased:  # names of one model share its row (harness_ext.store.identity)
        canon = dict(con.execute("SELECT alias, canonical FROM model_aliases").fetchall())
        extra["merged"] = _merged(names.values(), canon)
        if canon:
            names = {mid: canon.get(n, n) for mid, n in names.items()}
    if query.rows == "run":
        paths = dict(con.execute("SELECT source_id, path FROM sources WHERE source_id IN (SELECT unnest(?::INTEGER[]))",
                                 [np.unique(row_k).tolist()]).fetchall())
        labels = [f"{names[m]} [{paths[k].rsplit('/', 1)[-1]}]" for m, k in zip(row_model.tolist(), row_k.tolist())]
    else:
        if query.rows == "model":
            labels = [names[m] for m in row_model.tolist()]
        else:
            ks: dict = {}  # shot settings per row name (names of one model count together)
            for m, k in zip(row_model.tolist(), row_k.tolist()):
                ks.setdefault(names[m], set()).add(k)
            labels = [names[m] + ("" if len(ks[names[m]]) == 1 else "" if k == UNKNOWN_SHOTS else f" [{k}-shot]")
                      for m, k in zip(row_model.tolist(), row_k.tolist())]
    index = sorted(set(labels))
    row_code = {r: i for i, r in enumerate(index)}

    # The cells: DuckDB joins each selected result to its integer row and column codes; numpy keeps the
    # first value of each cell, ranked by (source, benchmark, dataset, metric, then shot count in a run).
    nd = len(ds_ids)
    ds_tab = {"dataset_id": ds_ids.astype(np.int32),
              "c": np.array([col_code[col_label[i]] for i in ds_ids.tolist()], dtype=np.int32),
              "p": np.array([prio[i] for i in ds_ids.tolist()], dtype=np.int64)}
    row_tab = {"model_id": row_model.astype(np.int32), "k": row_k.astype(np.int32),
               "r": np.array([row_code[r] for r in labels], dtype=np.int32)}
    shot_values = model_shots if query.rows == "model" else None
    con.register("_hx_cols", ds_tab)
    con.register("_hx_rows", row_tab)
    try:
        if shot_values is None:
            shot_values = np.asarray(con.execute(f"SELECT DISTINCT r.num_fewshot FROM results r WHERE {where} ORDER BY 1",
                                                 rparams).fetchnumpy()["num_fewshot"], dtype=np.int64)
        ns = len(shot_values)
        if query.rows == "model":
            # A row is a model (all its shot keys share the row): codes by lookup tables in numpy, so DuckDB
            # only scans (no join per result).
            lut_r = np.zeros(int(row_model.max()) + 1, dtype=np.int64)
            lut_r[row_tab["model_id"]] = row_tab["r"]
            lut_c = np.zeros(int(ds_ids.max()) + 1, dtype=np.int64)
            lut_c[ds_ids] = ds_tab["c"]
            lut_p = np.zeros(len(lut_c), dtype=np.int64)
            lut_p[ds_ids] = ds_tab["p"]
            sql = f"SELECT r.model_id, r.dataset_id, r.value, r.source_id, r.num_fewshot AS k FROM results r WHERE {where}"
            simple_sql = f"SELECT r.model_id, r.dataset_id, r.value FROM results r WHERE {where}"
        else:
            sql = f"""SELECT w.r, c.c, r.value, (r.source_id::BIGINT * {nd} + c.p) * {ns} AS f, r.num_fewshot AS k
                      FROM results r JOIN _hx_cols c USING (dataset_id)
                      JOIN _hx_rows w ON r.model_id = w.model_id AND {second} = w.k WHERE {where}"""
        X = pooled_array((len(index), len(columns)), fill=np.nan)
        P = None
        simple = query.rows == "model" and ns == 1 and len(np.unique(ds_tab["c"])) == nd
        if simple:
            # The common case first (one dataset per column, one shot setting): scatter the values as they
            # come; if no cell came twice (as many values kept as fetched), no ranking is needed.
            n_fetched = 0
            for batch in _batches(con, simple_sql, rparams):
                flat = lut_r[batch["model_id"]]
                flat *= len(columns)
                flat += lut_c[batch["dataset_id"]]
                X.reshape(-1)[flat] = batch["value"]
                n_fetched += len(flat)
            if n_fetched == np.count_nonzero(~np.isnan(X)):
                first_p = np.empty(len(columns), dtype=np.int64)
                first_p[ds_tab["c"]] = ds_tab["p"]
            else:
                X.fill(np.nan)
                simple = False
        for batch in ([] if simple else _batches(con, sql, rparams)):
            if P is None:
                P = np.full(X.shape, np.iinfo(np.int64).max)  # the rank of the value kept in each cell
            if query.rows == "model":
                did = batch["dataset_id"]
                flat = lut_r[batch["model_id"]] * len(columns) + lut_c[did]
                f = (batch["source_id"].astype(np.int64) * nd + lut_p[did]) * ns
            else:
                flat = batch["r"].astype(np.int64) * len(columns) + batch["c"]
                f = batch["f"]
            if ns > 1:
                f = f + np.searchsorted(shot_values, batch["k"])
            np.minimum.at(P.reshape(-1), flat, f)
            win = P.reshape(-1)[flat] == f
            X.reshape(-1)[flat[win]] = batch["value"][win]
        # What running a dataset costs, for cost budgets: its sample count (median over the results reporting one).
        n_samples = np.full(len(columns), np.nan)
        if query.rows == "model" and len(np.unique(ds_tab["c"])) == nd:  # a column is one (dataset, shot) pair
            for d, k in sel:
                if pair_samples[(d, k)] is not None:
                    n_samples[col_code[col_label[d]]] = float(pair_samples[(d, k)])
        else:
            rows_join = "" if query.rows == "model" else f"JOIN _hx_rows w ON r.model_id = w.model_id AND {second} = w.k"
            for c, v in con.execute(f"""SELECT c.c, median(r.n_samples) FROM results r JOIN _hx_cols c USING (dataset_id)
                                         {rows_join} WHERE {where} AND r.n_samples IS NOT NULL GROUP BY c.c""",
                                    rparams).fetchall():
                n_samples[int(c)] = float(v)
    finally:
        con.unregister("_hx_cols")
        con.unregister("_hx_rows")
    # Per column: metadata of its first cell's dataset, and the most common shot count (ties: the smallest).
    observed = ~np.isnan(X)
    if not simple:
        first_p = (P.min(axis=0) // ns) % nd
    by_prio = {p: i for i, p in prio.items()}
    meta = _meta_frame([info[by_prio[int(p)]] for p in first_p], columns)
    if ns == 1:
        counts = observed.sum(axis=0)[:, None]
    else:
        shot_of = np.where(observed, P % ns, -1)
        counts = np.stack([(shot_of == j).sum(axis=0) for j in range(ns)], axis=1)  # columns x shot values
    del P
    counts[:, shot_values == UNKNOWN_SHOTS] = 0
    shots = pd.Series(pd.NA, index=meta.index, dtype="Int64")
    has = counts.sum(axis=1) > 0
    shots[has] = shot_values[counts[has].argmax(axis=1)]
    meta["num_fewshot"] = shots
    meta["n_samples"] = pd.array(n_samples, dtype="Float64")
    return X, index, columns, meta


def _one_setting_arrays(con, query, where: str, rparams: list, dwhere: list, dparams: list, aliased: bool,
                        extra: dict, fingerprint: bool = False) -> Optional[tuple]:
    """:func:`raw_arrays` in one scan of the results, for rows of models when the whole selection has one shot
    setting (then ``rows="model_shots"`` is ``rows="model"``), or None for the general path.

    One aggregate says whether the case applies (one shot count; any sample counts; any NaN value). Rows
    are laid out for every model name in the store (in Python's order: checked, sorted in Arrow if need be),
    columns for every dataset the filter selects; one scan of ``(model_id, dataset_id, value)`` (the ids
    as one cell key where it fits in 32 bits) is copied as runs or scattered through integer lookup tables. If as many cells are filled as values were fetched (no cell came
    twice, no stored NaN), the result is the general path's; rows and columns without a result are then
    dropped. Otherwise (a conflict to rank, two datasets in one column) None: the general path decides,
    so the first-ingested rule has one implementation. Layouts much larger than the selection take the
    general path too (memory stays close to the matrix).
    """
    # Whether any sample count is stored, and any value is NaN (a missing cell): EXISTS stops at the first
    # one, and DuckDB skips row groups on their statistics (a column of NULLs, values without NaN), where
    # count(n_samples) read the whole column and a NaN test per batch read every value.
    # The models are counted, and the thread setting read (the scan runs in one thread: scan.batches), in the
    # same statement (a statement costs DuckDB about 0.3 ms however small).
    # fetchall, not fetchone: a result left unfinished would refuse the relation (con.sql) that reads the models.
    (n, k_lo, k_hi, n_counted, has_nan, n_models, threads), = con.execute(
        f"""SELECT count(*), min(r.num_fewshot), max(r.num_fewshot),
                   EXISTS (SELECT 1 FROM results r WHERE {where} AND r.n_samples IS NOT NULL),
                   EXISTS (SELECT 1 FROM results r WHERE {where} AND isnan(r.value)),
                   (SELECT count(*) FROM models), current_setting('threads')
            FROM results r WHERE {where}""", rparams * 3).fetchall()
    if not n or k_lo != k_hi:
        return None
    ds = con.execute(f"SELECT {_DS_SELECT} FROM datasets WHERE {' AND '.join(dwhere) or 'TRUE'} ORDER BY dataset_id",
                     dparams).fetchall()
    if not len(ds) or not n_models or n_models * len(ds) > 4 * n + (1 << 22):
        return None
    done = None
    try:
        done = _scatter_one_setting(con, query, where, rparams, ds, aliased, extra, n, k_lo, n_counted, has_nan,
                                    fingerprint, threads)
        return done
    finally:
        if done is None and extra.get("fingerprint") is not None:  # the general path decides: no hash of this
            extra.pop("fingerprint").cancel()


def _scatter_one_setting(con, query, where: str, rparams: list, ds: list, aliased: bool, extra: dict,
                         n: int, k_lo: int, n_counted: int, has_nan: bool, fingerprint: bool = False,
                         threads: Optional[int] = None) -> Optional[tuple]:
    """:func:`_one_setting_arrays` once its aggregate and the layout's size said the case applies: ``ds``
    are the filtered datasets rows; the ``(model_id, dataset_id, value)`` scan of ``where`` is read here.

    With ``fingerprint``, the fingerprint assumes the layout stays whole (every row and column has a result,
    as in most stores) and hashes rows as soon as the scan has left them behind: while results come in row
    order (a store filled model by model), the hash runs beside the scan; otherwise it restarts once the
    scatter is done, beside the rest. If the layout is then cut, it is dropped (load_matrix hashes the cut
    matrix). ``threads``: the connection's thread setting, restored after the one-thread scan
    (:func:`harness_ext.store.scan.batches`)."""
    aliased = aliased and con.execute("SELECT count(*) FROM model_aliases").fetchall()[0][0] > 0  # none: no join
    # The names come as Arrow strings: the row labels are sorted (when not stored in order), de-duplicated and
    # made the matrix's index (and its fingerprint's header) in Arrow, with no Python string per model. No ORDER
    # BY: names stored in order (a leaderboard ingested by name) need only a check, which costs less than
    # DuckDB's sort (1.6 + 0.1 ms for 50,000 names, against 3.4 ms).
    tab = con.sql("""SELECT m.model_id, coalesce(a.canonical, m.name) AS label, a.canonical IS NOT NULL AS aliased,
                             m.name FROM models m LEFT JOIN model_aliases a ON a.alias = m.name"""
                  if aliased else "SELECT model_id, name AS label FROM models").to_arrow_table()
    if not tab.num_rows or tab.num_rows * len(ds) > 4 * n + (1 << 22):  # the models changed since they were counted
        return None
    uniq, code = _sorted_labels(tab.column("label"))
    model_id = tab.column("model_id").to_numpy().astype(np.int64, copy=False)
    # Columns in label order from the start (datasets are numbered as they are first ingested, not by name),
    # so a matrix whose every column has a result needs no reordering copy, and its fingerprint can start
    # before the scan ends.
    label_of = _column_labels(ds)  # dataset id -> column label, for the layout's every dataset
    whole_order = len(set(label_of.values())) == len(ds)
    if whole_order:
        ds = sorted(ds, key=lambda row: label_of[row[0]])
    ds_ids = np.array([row[0] for row in ds], dtype=np.int64)
    n_rows, n_cols = len(uniq), len(ds)
    # A cell's flat position is lut_r[model_id] + lut_c[dataset_id]; when the dataset ids are one ascending
    # run of integers, lut_c is an offset folded into lut_r.
    lut_r = np.zeros(int(model_id.max()) + 1, dtype=np.int64)
    lut_r[model_id] = code * n_cols
    lut_c = None
    if (np.diff(ds_ids) == 1).all():
        lut_r -= ds_ids[0]
    else:
        lut_c = np.zeros(int(ds_ids.max()) + 1, dtype=np.int64)
        lut_c[ds_ids] = np.arange(n_cols)
    # Which models had results, for the merged-names report: only when aliases can merge names.
    seen = np.zeros(len(lut_r), dtype=bool) if aliased and np.asarray(tab["aliased"]).any() else None
    # Results stored model by model with every cell (a dense leaderboard ingested a model at a time) come as
    # runs of consecutive cells: a run is checked against the layout (the model id each row's cells carry,
    # the dataset id each column's carry) and copied, with no flat index computed or scattered. The matrix
    # is then filled with NaN only where no run wrote (``filled``: cells before it are final).
    row_id = np.full(n_rows, -1, dtype=np.int64)
    one = np.bincount(code, minlength=n_rows)[code] == 1  # a row of one model id (no merged names)
    row_id[code[one]] = model_id[one]
    runs = seen is None
    # A cell's ids travel as one integer, model_id * K + dataset_id, where that fits in 32 bits: half the id
    # bytes to read and one comparison per result in a run (DuckDB computes it for less than it costs to
    # hand over a second column). Otherwise the two id columns. K is a power of two, so a scattered batch
    # splits its keys with a shift and a mask (an integer division cost more than the column saved).
    shift = int(ds_ids.max()).bit_length()
    K = 1 << shift
    keyed = min(int(model_id.min()), int(ds_ids.min())) >= 0 and int(model_id.max()) * K + K - 1 <= _KEY_MAX
    ids = f"r.model_id * {K} + r.dataset_id AS key" if keyed else "r.model_id, r.dataset_id"
    row_key, col_key = (row_id * K if keyed else row_id), ds_ids  # row -1 (several ids): below every key
    X = pooled_array((n_rows, n_cols), fill=None if runs else np.nan)
    flat_X = X.reshape(-1)
    n_fetched = filled = 0
    # The fingerprint of the whole layout (every row and column with a result), fed the rows below the
    # current batch's while the scan stays in row order.
    layout_columns = [label_of[int(d)] for d in ds_ids]
    hasher = RowHasher(X, uniq, layout_columns) if fingerprint and whole_order else None
    extra["fingerprint"] = hasher
    in_order = hasher is not None
    # The scan runs on the caller's connection (inside a transaction it sees that transaction's writes).
    # A row group at a time, in one DuckDB thread (see scan.batches; larger batches cost more: DuckDB then copies
    # row groups into fresh buffers).
    for batch in _batches(con, f"SELECT {ids}, r.value FROM results r WHERE {where}", rparams, rows=_ROW_GROUP,
                          threads=threads):
        value = batch["value"]
        if not len(value):
            continue
        n_fetched += len(value)
        key = batch["key"] if keyed else None
        if runs:
            first = divmod(int(key[0]), K) if keyed else (int(batch["model_id"][0]), int(batch["dataset_id"][0]))
            f0 = int(lut_r[first[0]]) + (first[1] if lut_c is None else int(lut_c[first[1]]))
            scan_type = (key if keyed else batch["model_id"]).dtype
            if row_key.dtype != scan_type:  # compared in the scan's integer type (no cast per batch)
                row_key, col_key = row_key.astype(scan_type), ds_ids.astype(scan_type)
            if f0 >= filled and (_is_run(key, f0, row_key, col_key, n_cols) if keyed else (
                    _is_run(batch["model_id"], f0, row_key, None, n_cols)
                    and _is_run(batch["dataset_id"], f0, None, col_key, n_cols))):
                flat_X[filled:f0] = np.nan
                flat_X[f0:f0 + len(value)] = value
                filled = f0 + len(value)
                if in_order:  # the runs go forward: the rows before this one are final (rounded here: see RowHasher)
                    hasher.advance(filled // n_cols, here=True)
                continue
            runs = False  # scattered from here on: the cells no run wrote are missing so far
            flat_X[filled:] = np.nan
        mid, did = (key >> shift, key & (K - 1)) if keyed else (batch["model_id"], batch["dataset_id"])
        flat = lut_r[mid]
        flat += did if lut_c is None else lut_c[did]
        flat_X[flat] = value
        if seen is not None:
            seen[mid] = True
        if in_order:
            lo, hi = int(flat.min()), int(flat.max())
            if lo < hasher.done * n_cols:  # a row already hashed changed: start again after the scan
                in_order = False
            elif hi - lo <= 4 * len(flat) + n_cols:  # a batch spread over the matrix says nothing of the order
                hasher.advance(hi // n_cols, here=True)
    if runs:
        flat_X[filled:] = np.nan
    del flat_X
    if hasher is not None and not in_order:
        hasher.cancel()
        hasher = extra["fingerprint"] = RowHasher(X, uniq, layout_columns)
    if hasher is not None:
        hasher.advance(n_rows)  # the rest now, beside the missing-cell count below
    if n_fetched != n:  # the scan saw other results than the count (a write in between): general path
        return None
    # Missing cells per column and rows without a result, a cache-sized block at a time: a block without a
    # missing cell (most of a dense matrix) costs one isnan and one any. Runs that wrote every cell once,
    # no value NaN, leave none: no pass.
    row_seen, col_missing = np.ones(n_rows, dtype=bool), np.zeros(n_cols, dtype=np.int64)
    step = max(1, _BLOCK_CELLS // n_cols)
    missing = np.empty((min(step, n_rows), n_cols), dtype=bool)
    full = runs and not has_nan and filled == n_fetched == n_rows * n_cols
    for s in range(0, 0 if full else n_rows, step):
        block = np.isnan(X[s:s + step], out=missing[:min(step, n_rows - s)])
        if block.any():
            row_seen[s:s + step] = ~block.all(axis=1)
            col_missing += np.count_nonzero(block, axis=0)
    col_count = n_rows - col_missing
    if int(col_count.sum()) != n_fetched:  # a cell came twice (or a stored value is NaN): ranked
        return None
    present = np.flatnonzero(col_count)
    col_label = _column_labels([ds[j] for j in present])
    labels = [col_label[int(d)] for d in ds_ids[present]]
    if len(set(labels)) < len(labels):  # two datasets share a column: ranked
        return None
    order = sorted(range(len(labels)), key=labels.__getitem__)
    cols, rows = present[order], np.flatnonzero(row_seen)
    if len(rows) < n_rows or len(cols) < n_cols or (cols != np.arange(n_cols)).any():
        X = X[np.ix_(rows, cols)]
        if extra.get("fingerprint") is not None:  # not the layout hashed
            extra.pop("fingerprint").cancel()
    index, columns = _label_index(uniq if len(rows) == n_rows else uniq.take(rows)), [labels[i] for i in order]
    if aliased:  # the names results were stored under, where several meet in one row
        canon = dict(con.execute("SELECT alias, canonical FROM model_aliases").fetchall()) if seen is not None else {}
        names = tab.column("name").to_numpy()[seen[model_id]] if seen is not None else []
        extra["merged"] = _merged(list(names), canon)
    if query.rows == "model":
        extra["shots"] = {"rule": _SHOTS_RULE, "dropped_cells": 0, "mixed_dataset_ids": 0}
    n_samples = np.full(len(columns), np.nan)
    if n_counted:  # what running a dataset costs: its median sample count
        median = dict(con.execute(f"""SELECT r.dataset_id, median(r.n_samples) FROM results r
                                      WHERE {where} AND r.n_samples IS NOT NULL GROUP BY 1""", rparams).fetchall())
        n_samples[:] = [float(median[d]) if median.get(d) is not None else np.nan for d in ds_ids[cols].tolist()]
    meta = _meta_frame([ds[j][1:] for j in cols], columns)
    meta["num_fewshot"] = pd.array([pd.NA if k_lo == UNKNOWN_SHOTS else int(k_lo)] * len(columns), dtype="Int64")
    meta["n_samples"] = pd.array(n_samples, dtype="Float64")
    return X, index, columns, meta


def _is_run(v: np.ndarray, f0: int, by_row: Optional[np.ndarray], by_col: Optional[np.ndarray], n_cols: int) -> bool:
    """Whether ``v`` holds, for the consecutive cells ``(r, c)`` from flat position ``f0`` of a layout with
    ``n_cols`` columns, ``by_row[r] + by_col[c]`` (a None part counts 0): a partial row, whole rows (compared
    as a 2-D block), a partial row. Model ids are ``by_row`` alone (-1 where a row has several), dataset ids
    ``by_col`` alone, a cell key both."""
    r, c = divmod(f0, n_cols)
    m = len(v)
    if by_row is not None and f0 + m > len(by_row) * n_cols:
        return False

    def part(rows, cols):  # the expected values: ``rows`` an index or a (k, 1) block, ``cols`` a slice
        if by_row is None:
            return by_col[cols]
        return by_row[rows] if by_col is None else by_row[rows] + by_col[cols]

    head = min(m, (n_cols - c) % n_cols)
    if head and not (v[:head] == part(r, slice(c, c + head))).all():
        return False
    r += bool(head)
    k, tail = divmod(m - head, n_cols)
    if k and not (v[head:head + k * n_cols].reshape(k, n_cols) == part(np.s_[r:r + k, None], slice(None))).all():
        return False
    return not tail or bool((v[m - tail:] == part(r + k, slice(0, tail))).all())


def _sorted_labels(label) -> tuple:
    """``(uniq, code)`` for a pyarrow string array: its distinct values in Python's order (a pyarrow array) and
    each value's position among them, as ``np.unique(..., return_inverse=True)`` gives, computed in Arrow.
    Values already in order (models stored in name order) are only checked; otherwise Arrow sorts them
    (stable; 6.5 ms for 50,000 shuffled names, where DuckDB's ORDER BY cost 6.5 ms more than the plain fetch and
    np.unique 22 ms)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    label = label.combine_chunks() if isinstance(label, pa.ChunkedArray) else label
    order = None
    # UTF-8's byte order, Arrow's for strings, is Python's code-point order.
    if len(label) > 1 and not pc.all(pc.less_equal(label[:-1], label[1:])).as_py():
        order = pc.sort_indices(label)
        label = label.take(order)
    first = np.ones(len(label), dtype=bool)
    if len(label) > 1:
        first[1:] = pc.not_equal(label[1:], label[:-1]).to_numpy(zero_copy_only=False)
    code = np.cumsum(first) - 1
    if order is not None:  # back to the values' own order
        code[order.to_numpy()] = code.copy()
    return label.filter(pa.array(first)), code


def _label_index(labels) -> pd.Index:
    """The ``model`` index over a pyarrow string array, in the dtype ``pd.Index`` of the same Python strings has
    (pandas 3's default ``str``: then wrapped, not converted a string at a time)."""
    want = pd.Index(["model"]).dtype
    try:
        index = pd.Index(pd.array(labels, dtype=want), name="model", copy=False)
    except (TypeError, ValueError):
        index = None
    if index is None or index.dtype != want:
        index = pd.Index(labels.to_pylist(), name="model")
    return index


def _column_labels(ds) -> dict:
    """``{dataset_id: column label}`` for rows ``(dataset_id, benchmark, name, ...)``: the dataset's name, qualified
    by its benchmark where two of these rows' benchmarks share the name."""
    n_bench: dict = {}
    for row in ds:
        n_bench.setdefault(row[2], set()).add(row[1])
    return {row[0]: (f"{row[1]}/{row[2]}" if len(n_bench[row[2]]) > 1 else row[2]) for row in ds}


def _merged(names, canon: dict) -> dict:
    """``{canonical: sorted names}`` for the canonical ids several of ``names`` (the names results were stored
    under) meet in, per the alias table ``canon`` (alias -> canonical)."""
    groups: dict = {}
    if canon:  # only aliases and their canonical names can share a row
        targets = set(canon.values())
        for n in set(names):
            if n in canon or n in targets:
                groups.setdefault(canon.get(n, n), set()).add(n)
    # In canonical order: the groups come from a set, whose order changes with the process's string hashing.
    return {c: sorted(ns) for c, ns in sorted(groups.items()) if len(ns) > 1}


def _meta_frame(infos: list, columns: list) -> pd.DataFrame:
    """Per-column metadata from each column's ``datasets`` row (``_DATASET_COLUMNS`` order)."""
    meta = pd.DataFrame(infos, columns=_DATASET_COLUMNS, index=pd.Index(columns, name="dataset"))
    meta["higher_is_better"] = meta["higher_is_better"].astype("boolean")  # NULL: unknown, as DuckDB's .df() gives
    return meta.rename(columns={"scale": "scale_kind"})  # the stored kind; engine's transforms read "scale" as theirs


def describe(query) -> str:
    """The query's choices as the user made them (``benchmarks=['mmlu'], metric='acc'``): fields at their
    defaults, and the internal ones (row layout, normalisation, alias merging), are not shown."""
    parts = [f"{k}={v!r}" for k, v in query.to_dict().items()
             if v not in (None, (), [], False) and k not in ("rows", "normalise", "aliases")]
    return ", ".join(parts) or "the query"


def no_match_message(store, query) -> str:
    """Why a query selects nothing: a benchmark name the store does not hold, with the closest names and how a
    group of one's own is named (``ingest --group``); else the query and the store's benchmarks."""
    import difflib

    benchmarks = list(store.benchmarks()["benchmark"])
    groups = list(store.benchmark_groups()["group"]) if hasattr(store, "benchmark_groups") else []
    known = benchmarks + [g for g in groups if g not in benchmarks]
    missing = [b for b in (query.benchmarks or ()) if b not in known]
    avail = ", ".join(benchmarks[:20]) + (" ..." if len(benchmarks) > 20 else "")
    if not missing:
        return f"no results match {describe(query)}; benchmarks in the store: {avail}"
    lowered = {k.lower(): k for k in known}
    parts = []
    for b in missing:
        close = difflib.get_close_matches(b.lower(), list(lowered), n=3, cutoff=0.6)
        parts.append(repr(b) + (f" (did you mean {' or '.join(repr(lowered[c]) for c in close)}?)" if close else ""))
    return (f"no benchmark {', '.join(parts)} in the store. Benchmarks in the store: {avail}"
            + (f"; groups: {', '.join(groups[:10])}" if groups else "")
            + ". Results of an lm-eval group of your own are stored under the group's name; files ingested "
            "without it (or a set of benchmarks to query as one) can be named with 'harness-ext ingest --group NAME "
            "FILES', then '--benchmark NAME'")
