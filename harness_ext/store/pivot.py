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
from .globs import as_globs, glob_sql, is_glob, matches, unmatched_note
from .pivot_steps import (_cell_keys, _column_layout, _column_samples, _label_index, _one_setting_layout,  # noqa: F401
                          _one_setting_result, _ranked_meta, _row_keys, _row_labels, _shot_choice, _sorted_labels)
from .cell_choice import USED_BY_DOCUMENTS, USED_FIRST_LISTING, decided_cells
from .scan import arrow_table
from .scan import batches as _batches

def benchmark_filter(store, query, column: str):
    """SQL conditions and parameters selecting ``query.benchmarks`` in ``column``.

    A benchmark-group name (``ingest --group``) stands for its member benchmarks; a name holding ``*``, ``?`` or
    ``[`` is a glob, as ``--models`` and ``--datasets`` take (a folder of leaderboard CSVs is one benchmark per file:
    ``--benchmark 'opencompass_*'``).
    """
    if not query.benchmarks:
        return [], []
    names = [b for b in query.benchmarks if not is_glob(b)]
    globs = [b for b in query.benchmarks if is_glob(b)]
    marks = ", ".join("?" * len(names))
    groups = getattr(store, "_has_table", lambda t: False)("benchmark_groups")
    conds, params = [], []
    if names:
        conds.append(f"{column} IN ({marks})")
        params += names
    if globs:
        cond, ps = glob_sql([column], globs)
        conds.append(cond)
        params += ps
    if groups:
        member = " OR ".join(([f"name IN ({marks})"] if names else []) + ["name GLOB ?" for _ in globs])
        conds.append(f"{column} IN (SELECT benchmark FROM benchmark_groups WHERE {member})")
        params += names + globs
    return ["(" + " OR ".join(conds) + ")"], params


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
        cond, ps = glob_sql(["name"], query.datasets)
        where.append(cond)
        params.extend(ps)
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


def shots_left_out_note(attrs: dict) -> Optional[str]:
    """The line ``matrix`` and ``reduce`` print when the shot rule left cells out of a matrix (``attrs["shots"]``), or None."""
    n = ((attrs or {}).get("shots") or {}).get("dropped_cells")
    return (f"{n} cells measured only at another shot setting than their dataset's are left out "
            "(--num-fewshot K or --rows model_shots to see them)") if n else None


def note_conflicts(store, df: pd.DataFrame, rows: str = "model") -> None:
    """Set ``df.attrs["conflicts"]``, where there are any, to how many observed cells of a matrix with one row per
    model (:func:`harness_ext.store.matrix.load_matrix`) two source files give different values
    (``Store.conflicts``), ``df.attrs["conflicts_by_documents"]`` to how many of them the values' document
    counts decided and ``df.attrs["conflicts_one_file"]`` how many have all their values in one file, which gives its
    first listing (:mod:`harness_ext.store.cell_choice`; the others take the first-ingested value). A matrix of
    other rows is left as it is."""
    c = store.conflicts() if rows == "model" else None
    if c is None or c.empty or df.empty:
        return
    c = c[c["used"] != ""]  # one row a cell: its used value
    # The matrix's own record of merged names (empty with aliases off): each stored name to its row.
    canonical = {name: row for row, names in (df.attrs.get("model_aliases") or {}).items() for name in names}

    def shots(k):
        return None if k is None or pd.isna(k) else int(k)

    column = {(m["benchmark"], m["dataset"], m["metric"], shots(m.get("num_fewshot"))): col
              for col, m in (df.attrs.get("datasets") or {}).items()}
    labels, cols = pd.Index(df.index), pd.Index(df.columns)
    cells: dict = {}
    for model, bench, dataset, metric, k, used in c[["model", "benchmark", "dataset", "metric", "num_fewshot",
                                                     "used"]].itertuples(index=False):
        row, col = canonical.get(model, model), column.get((bench, dataset, metric, shots(k)))
        if col is not None and row in labels and pd.notna(df.iat[labels.get_loc(row), cols.get_loc(col)]):
            # Why the cell takes its value; of a row's merged names, the documents' choice says most.
            why = 2 if used == USED_BY_DOCUMENTS else 1 if used == USED_FIRST_LISTING else 0
            cells[(row, col)] = max(cells.get((row, col), 0), why)
    if cells:
        df.attrs["conflicts"] = len(cells)
        df.attrs["conflicts_by_documents"] = sum(w == 2 for w in cells.values())
        df.attrs["conflicts_one_file"] = sum(w == 1 for w in cells.values())


def conflicts_note(attrs: dict) -> Optional[str]:
    """The line ``reduce`` writes when some of its matrix's cells have values that disagree between source files,
    with how many of them the values' document counts decided."""
    n = (attrs or {}).get("conflicts")
    if not n:
        return None
    docs, one = attrs.get("conflicts_by_documents") or 0, attrs.get("conflicts_one_file") or 0
    head = (f"{n} {'cell' if n == 1 else 'cells'} of the matrix {'has' if n == 1 else 'have'} values that disagree "
            "between source files" + (" or within one" if one else ""))
    if docs == n:
        return (f"{head}; {'it takes' if n == 1 else 'each takes'} the value measured on the most documents "
                "(harness-ext info --conflicts lists them)")
    # A file listing a cell twice gives its first listing whatever the order files are ingested in.
    first = n - docs - one
    parts = [f"{docs} {'takes' if docs == 1 else 'take'} the value measured on the most documents",
             (f"{one} {'takes its' if one == 1 else 'take their'} file's first listing (all "
              f"{'its' if one == 1 else 'their'} values in one file)") if one else "",
             (f"{first} the value ingested first (their document counts unknown or equal), so the same files "
              "ingested in another order give another matrix and manifest") if first else ""]
    return f"{head}; {', '.join(p for p in parts if p)} (harness-ext info --conflicts lists them)"


def unmatched_exclude_note(attrs: dict) -> Optional[str]:
    """The warning naming the ``--exclude-models`` globs that matched no model of the matrix's selection."""
    gone = (attrs or {}).get("excluded") or {}
    if not gone.get("unmatched"):
        return None
    return (f"{unmatched_note(gone['unmatched'], 'the selection')}; "
            f"{gone['n_models']} {'model' if gone['n_models'] == 1 else 'models'} left out")


def raw_arrays(store, query, extra: Optional[dict] = None, fingerprint: bool = False) -> tuple:
    """Raw matrix (a float64 array the caller owns), its row and column labels (sorted) and per-column metadata.

    Returns ``(X, index, columns, meta)``: ``index`` a list of str, or (the one-scan path) the ``model``
    ``pandas.Index`` over the store's Arrow strings; ``columns`` a list of str. Labels are built for the few distinct models, shot counts, sources and
    datasets only. DuckDB selects the results and joins each to integer row
    and column codes; the codes, values and a rank (source, then benchmark,
    dataset name and metric, then shot count within a run) come back a
    million rows at a time (Arrow batches when pyarrow is installed) and are
    scattered into the preallocated float matrix, keeping the lowest rank per
    cell: the first-ingested value, unless the values' document counts choose
    another (:mod:`harness_ext.store.cell_choice`). Memory is the
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
    rwhere, rparams, dwhere, dparams, aliased = _result_filter(store, query)
    if getattr(query, "exclude_models", None):
        extra["excluded"] = exclude_models(store, query.exclude_models, rwhere, rparams, aliased)
    where = " AND ".join(rwhere)
    if query.rows in ("model", "model_shots"):
        done = _one_setting_arrays(con, query, where, rparams, dwhere, dparams, aliased, extra, fingerprint)
        if done is not None:
            return done
    shots = None
    if query.rows == "model":  # one row per model: each dataset at one shot setting
        shots = _shot_choice(con, where, rwhere, rparams, extra)
        where = " AND ".join(rwhere)
    second = "r.source_id" if query.rows == "run" else "r.num_fewshot"
    ds_ids, row_model, row_k, shot_values = _row_keys(con, query, where, rparams, second, shots and shots[0])
    if not len(ds_ids):
        if store.counts()["results"] == 0:
            raise StoreError("the store is empty: run 'harness-ext ingest PATH' first")
        raise StoreError(no_match_message(store, query))
    cols = _column_layout(con, ds_ids, _DS_SELECT)
    labels = _row_labels(con, query, row_model, row_k, aliased, extra)
    index = sorted(set(labels))
    row_code = {r: i for i, r in enumerate(index)}
    # The cells: DuckDB joins each selected result to its integer row and column codes; numpy keeps the
    # first value of each cell, ranked by (source, benchmark, dataset, metric, then shot count in a run).
    ds_tab = {"dataset_id": ds_ids.astype(np.int32),
              "c": np.array([cols.code[cols.label[i]] for i in ds_ids.tolist()], dtype=np.int32),
              "p": np.array([cols.prio[i] for i in ds_ids.tolist()], dtype=np.int64)}
    row_tab = {"model_id": row_model.astype(np.int32), "k": row_k.astype(np.int32),
               "r": np.array([row_code[r] for r in labels], dtype=np.int32)}
    con.register("_hx_cols", ds_tab)
    con.register("_hx_rows", row_tab)
    try:
        X, P, first_p, shot_values = _ranked_scatter(con, query, where, rparams, second, ds_tab, row_tab,
                                                     shot_values, (len(index), len(cols.columns)))
        n_samples = _column_samples(con, query, where, rparams, second, cols, ds_tab, shots)
    finally:
        con.unregister("_hx_cols")
        con.unregister("_hx_rows")
    return X, index, cols.columns, _ranked_meta(X, P, first_p, shot_values, len(ds_ids), cols, n_samples)


def _result_filter(store, query) -> tuple:
    """``(rwhere, rparams, dwhere, dparams, aliased)``: the SQL conditions and parameters on ``results r`` (a
    list, joined by AND) and on ``datasets`` that select ``query``'s results, and whether model aliases apply."""
    con = store.con
    has = getattr(store, "_has_table", lambda t: False)
    dwhere, dparams = dataset_filter(store, query)
    rwhere, rparams = ["TRUE"], []
    n_sel, n_all = con.execute(f"SELECT count(*) FILTER (WHERE {' AND '.join(dwhere)}), count(*) FROM datasets",
                               dparams).fetchall()[0]
    if n_sel < n_all:  # the filter costs a hash probe per result: skip it when every dataset is selected
        rwhere[0] = f"r.dataset_id IN (SELECT dataset_id FROM datasets WHERE {' AND '.join(dwhere)})"
        rparams.extend(dparams)
    aliased = bool(query.aliases) and has("model_aliases")
    if query.models:  # a glob on the canonical id or on the name a source used
        cond, ps = glob_sql(["m.name"] + (["(SELECT canonical FROM model_aliases a WHERE a.alias = m.name)"]
                                          if aliased else []), query.models)
        rwhere.append(f"r.model_id IN (SELECT model_id FROM models m WHERE {cond})")
        rparams.extend(ps)
    if query.source:
        rwhere.append("r.source_id IN (SELECT source_id FROM sources WHERE path GLOB ?)")
        rparams.append(query.source)
    if query.num_fewshot is not None:
        rwhere.append("r.num_fewshot = ?")
        rparams.append(int(query.num_fewshot))
    return rwhere, rparams, dwhere, dparams, aliased


def _model_key_sql(m: str, aliased: bool) -> str:
    """SQL of the row label of the model ``m`` (an alias of the ``models`` table): its canonical id where the
    store's aliases apply, else its name."""
    return f"coalesce((SELECT canonical FROM model_aliases a WHERE a.alias = {m}.name), {m}.name)" if aliased \
        else f"{m}.name"


def exclude_models_sql(patterns, aliased: bool) -> tuple:
    """``(condition on results r, params)`` leaving out each model one of whose names matches a glob of
    ``patterns`` (its canonical id or a name a source used, as ``--models`` matches), with every name merged
    into it: a held-out model keeps no result under another name."""
    cond, ps = glob_sql(["x.name", _model_key_sql("x", aliased)], patterns)
    return (f"r.model_id NOT IN (SELECT m.model_id FROM models m WHERE {_model_key_sql('m', aliased)} IN "
            f"(SELECT {_model_key_sql('x', aliased)} FROM models x WHERE {cond}))", ps)


def exclude_models(store, patterns, rwhere: list, rparams: list, aliased: bool) -> dict:
    """Add to ``rwhere``/``rparams`` (the conditions selecting the results) the one leaving out the models
    ``patterns`` match (:func:`exclude_models_sql`), and return what it left out of that selection:
    ``patterns``, ``n_models``, ``models`` (row labels, sorted) and ``unmatched`` (the globs that matched no
    name of a selected model, which the commands warn about)."""
    cond, ps = exclude_models_sql(patterns, aliased)
    key = _model_key_sql("m", aliased)
    gone = sorted(str(r[0]) for r in store.con.execute(
        f"SELECT DISTINCT {key} FROM models m WHERE m.model_id IN (SELECT r.model_id FROM results r WHERE "
        f"{' AND '.join(rwhere)} AND NOT ({cond}))", rparams + ps).fetchall())
    # Each glob is checked on every name of the models left out (a glob may name a model by an alias whose
    # own results were not selected).
    names = store.con.execute(f"SELECT {key}, m.name FROM models m").fetchall() if gone else []
    kept = set(gone)
    pairs = [(k, n) for k, n in names if k in kept]
    globs = list(as_globs(patterns))
    unmatched = [g for g in globs if not any(matches(k, g) or matches(n, g) for k, n in pairs)]
    rwhere.append(cond)
    rparams.extend(ps)
    return {"patterns": globs, "n_models": len(gone), "models": gone, "unmatched": unmatched}


def _ranked_scatter(con, query, where: str, rparams: list, second: str, ds_tab: dict, row_tab: dict,
                    shot_values, shape: tuple) -> tuple:
    """The general path's scatter: ``(X, P, first_p, shot_values)``. The codes, values and a rank (source, then
    benchmark, dataset name and metric, then shot count within a run) come back a batch at a time and are
    scattered into ``X``, keeping the lowest rank per cell (``P``, allocated only when a cell can have
    several values). The common case (one dataset per column, one shot setting, no cell twice) needs no
    ranking: then ``P`` is None and ``first_p`` each column's dataset priority. A cell the document counts of
    its values decide (:mod:`harness_ext.store.cell_choice`) then takes the value they chose (:func:`_put_decided`)."""
    nd, n_cols = len(ds_tab["c"]), shape[1]
    if shot_values is None:
        shot_values = np.asarray(con.execute(f"SELECT DISTINCT r.num_fewshot FROM results r WHERE {where} ORDER BY 1",
                                             rparams).fetchnumpy()["num_fewshot"], dtype=np.int64)
    ns = len(shot_values)
    luts = None
    if query.rows == "model":
        # A row is a model (all its shot keys share the row): codes by lookup tables in numpy, so DuckDB
        # only scans (no join per result).
        lut_r = np.zeros(int(row_tab["model_id"].max()) + 1, dtype=np.int64)
        lut_r[row_tab["model_id"]] = row_tab["r"]
        lut_c = np.zeros(int(ds_tab["dataset_id"].max()) + 1, dtype=np.int64)
        lut_c[ds_tab["dataset_id"]] = ds_tab["c"]
        lut_p = np.zeros(len(lut_c), dtype=np.int64)
        lut_p[ds_tab["dataset_id"]] = ds_tab["p"]
        luts = (lut_r, lut_c, lut_p)
    X = pooled_array(shape, fill=np.nan)
    if query.rows == "model" and ns == 1 and len(np.unique(ds_tab["c"])) == nd:
        # The common case first (one dataset per column, one shot setting): scatter the values as they
        # come; if no cell came twice (as many values kept as fetched), no ranking is needed.
        n_fetched = 0
        for batch in _batches(con, f"SELECT r.model_id, r.dataset_id, r.value FROM results r WHERE {where}", rparams):
            flat = lut_r[batch["model_id"]]
            flat *= n_cols
            flat += lut_c[batch["dataset_id"]]
            X.reshape(-1)[flat] = batch["value"]
            n_fetched += len(flat)
        if n_fetched == np.count_nonzero(~np.isnan(X)):
            first_p = np.empty(n_cols, dtype=np.int64)
            first_p[ds_tab["c"]] = ds_tab["p"]
            return X, None, first_p, shot_values
        X.fill(np.nan)
    if query.rows == "model":
        sql = f"SELECT r.model_id, r.dataset_id, r.value, r.source_id, r.num_fewshot AS k FROM results r WHERE {where}"
    else:
        sql = f"""SELECT w.r, c.c, r.value, (r.source_id::BIGINT * {nd} + c.p) * {ns} AS f, r.num_fewshot AS k
                  FROM results r JOIN _hx_cols c USING (dataset_id)
                  JOIN _hx_rows w ON r.model_id = w.model_id AND {second} = w.k WHERE {where}"""
    P = _rank_batches(con, sql, rparams, X, luts, nd, ns, shot_values)
    # A run's row holds one source: no cell of it has two values to choose between.
    decided = decided_cells(con, where, rparams) if query.rows != "run" and P is not None else None
    if decided is not None:
        _put_decided(con, decided, X, P, luts, nd, ns, shot_values, second)
    return X, P, None, shot_values


def _put_decided(con, decided: dict, X, P, luts: Optional[tuple], nd: int, ns: int, shot_values, second: str) -> None:
    """Give each matrix cell that kept the first-ingested value of a cell the document counts decide
    (:func:`harness_ext.store.cell_choice.decided_cells`) the value they chose; its rank stays (the first-ingested
    source's), so the cells two datasets, shot settings or merged names fill keep their order."""
    n_cols = X.shape[1]
    if luts is not None:
        lut_r, lut_c, lut_p = luts
        did = decided["dataset_id"]
        flat = lut_r[decided["model_id"]] * n_cols + lut_c[did]
        f = (decided["first_source"].astype(np.int64) * nd + lut_p[did]) * ns
        k, value = decided["num_fewshot"], decided["value"]
    else:  # codes of the rows and columns, as the scan's join gives them
        con.register("_hx_decided", decided)
        try:
            got = con.execute(f"""SELECT w.r, c.c, (d.first_source::BIGINT * {nd} + c.p) * {ns} AS f,
                                         d.num_fewshot AS k, d.value FROM _hx_decided d JOIN _hx_cols c USING (dataset_id)
                                  JOIN _hx_rows w ON d.model_id = w.model_id AND {second.replace('r.', 'd.')} = w.k
                               """).fetchnumpy()
        finally:
            con.unregister("_hx_decided")
        flat = np.asarray(got["r"], dtype=np.int64) * n_cols + np.asarray(got["c"], dtype=np.int64)
        f, k, value = np.asarray(got["f"], dtype=np.int64), np.asarray(got["k"]), np.asarray(got["value"])
    if ns > 1:
        f = f + np.searchsorted(shot_values, k)
    kept = P.reshape(-1)[flat] == f  # the matrix cell kept this store cell's first-ingested value
    X.reshape(-1)[flat[kept]] = value[kept]


def _rank_batches(con, sql: str, rparams: list, X, luts: Optional[tuple], nd: int, ns: int, shot_values):
    """Scatter the batches of ``sql`` (:func:`_ranked_scatter`'s) into ``X``, keeping each cell's lowest rank;
    returns the rank matrix ``P`` (None when no result came). ``luts``: the row, column and dataset-priority
    lookup tables of rows of models (their batches hold ids and the rank's source), else None (codes and rank)."""
    P, n_cols = None, X.shape[1]
    for batch in _batches(con, sql, rparams):
        if P is None:
            P = np.full(X.shape, np.iinfo(np.int64).max)  # the rank of the value kept in each cell
        if luts is not None:
            lut_r, lut_c, lut_p = luts
            did = batch["dataset_id"]
            flat = lut_r[batch["model_id"]] * n_cols + lut_c[did]
            f = (batch["source_id"].astype(np.int64) * nd + lut_p[did]) * ns
        else:
            flat = batch["r"].astype(np.int64) * n_cols + batch["c"]
            f = batch["f"]
        if ns > 1:
            f = f + np.searchsorted(shot_values, batch["k"])
        np.minimum.at(P.reshape(-1), flat, f)
        win = P.reshape(-1)[flat] == f
        X.reshape(-1)[flat[win]] = batch["value"][win]
    return P


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
    # fetchall, not fetchone: DuckDB 2 refuses register and relations while a result is left unfinished.
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
    tab = arrow_table(con, """SELECT m.model_id, coalesce(a.canonical, m.name) AS label,
                                     a.canonical IS NOT NULL AS aliased, m.name
                              FROM models m LEFT JOIN model_aliases a ON a.alias = m.name"""
                      if aliased else "SELECT model_id, name AS label FROM models")
    if not tab.num_rows or tab.num_rows * len(ds) > 4 * n + (1 << 22):  # the models changed since they were counted
        return None
    lay = _one_setting_layout(tab, ds, aliased)
    X, n_fetched, full = _scan_one_setting(con, where, rparams, lay, extra, fingerprint, threads, has_nan)
    if n_fetched != n:  # the scan saw other results than the count (a write in between): general path
        return None
    return _one_setting_result(con, query, where, rparams, X, lay, tab, extra, n_fetched, full, aliased, n_counted,
                               k_lo, _BLOCK_CELLS)


def _scan_one_setting(con, where: str, rparams: list, lay, extra: dict, fingerprint: bool, threads,
                      has_nan: bool) -> tuple:
    """The one scan of :func:`_scatter_one_setting` into the layout ``lay``: ``(X, n_fetched, full)``, ``full``
    when runs wrote every cell once and no value is NaN. Runs of consecutive cells are copied; the matrix
    is filled with NaN only where no run wrote (``filled``: cells before it are final); from the first batch
    that is not a run, values are scattered."""
    n_rows, n_cols, lut_r, lut_c, ds_ids, seen = lay.n_rows, lay.n_cols, lay.lut_r, lay.lut_c, lay.ds_ids, lay.seen
    runs = seen is None
    shift, K, keyed, ids, row_key = _cell_keys(lay, _KEY_MAX)
    col_key = ds_ids
    X = pooled_array((n_rows, n_cols), fill=None if runs else np.nan)
    flat_X = X.reshape(-1)
    n_fetched = filled = 0
    # The fingerprint of the whole layout (every row and column with a result), fed the rows below the
    # current batch's while the scan stays in row order.
    layout_columns = [lay.label_of[int(d)] for d in ds_ids]
    hasher = RowHasher(X, lay.uniq, layout_columns) if fingerprint and lay.whole_order else None
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
        hasher = extra["fingerprint"] = RowHasher(X, lay.uniq, layout_columns)
    if hasher is not None:
        hasher.advance(n_rows)  # the rest now, beside the missing-cell count below
    return X, n_fetched, runs and not has_nan and filled == n_fetched == n_rows * n_cols


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
    missing = [b for b in (query.benchmarks or ()) if b not in known and not (is_glob(b) and any(
        matches(k, b) for k in known))]
    avail = ", ".join(benchmarks[:20]) + (" ..." if len(benchmarks) > 20 else "")
    if not missing:
        hint = _metric_hint(store, query) or _models_hint(store, query)
        comma = any("," in g for g in as_globs(query.datasets))
        several = ("; several globs are given by repeating the option (--datasets cb --datasets wic), not with "
                   "commas" if comma else "")
        return (f"no results match {describe(query)}" + (f": {hint}" if hint else f"; benchmarks in the store: {avail}")
                + several)
    lowered = {k.lower(): k for k in known}
    parts = []
    for b in missing:
        close = difflib.get_close_matches(b.lower(), list(lowered), n=3, cutoff=0.6)
        parts.append(repr(b) + (" (a glob: it matched none; globs are case-sensitive)" if is_glob(b) else "")
                     + (f" (did you mean {' or '.join(repr(lowered[c]) for c in close)}?)" if close else ""))
    return (f"no benchmark {', '.join(parts)} in the store. Benchmarks in the store: {avail}"
            + (f"; groups: {', '.join(groups[:10])}" if groups else "")
            + ". Results of an lm-eval group of your own are stored under the group's name; files ingested "
            "without it (or a set of benchmarks to query as one) can be named with 'harness-ext ingest --group NAME "
            "FILES', then '--benchmark NAME'")


def _models_hint(store, query) -> str:
    """The store's model names closest to the ``models`` globs when no name matches any (else ``""``): a glob
    matches the whole name, so ``pythia-2.8b*`` misses ``EleutherAI/pythia-v1.1-2.8b@step143000``."""
    import difflib

    globs = as_globs(query.models)
    if not globs:
        return ""
    names = [r[0] for r in store.con.execute("SELECT DISTINCT name FROM models ORDER BY name").fetchall()]
    if not names or any(matches(n, globs) for n in names):
        return ""
    lowered = {n.lower(): n for n in names}
    close = difflib.get_close_matches(globs[0].strip("*?").lower(), list(lowered), n=3, cutoff=0.0)
    return (f"no model name matches {', '.join(map(repr, globs))}: a glob matches the whole name, case-sensitively "
            f"(a part of a name needs '*' on both sides); the closest names: "
            f"{', '.join(repr(lowered[c]) for c in close)} ('harness-ext models' lists them all)")


def _metric_hint(store, query) -> str:
    """The metrics the query's datasets do report, when ``query.metric`` is none of them (else ``""``).

    lm-eval names a metric after its filter (``exact_match,strict-match`` and ``exact_match,flexible-extract``
    for GSM8K), while its printed table shows ``exact_match`` in one column and the filter in another: the
    names that begin with the one asked for are listed first, then close spellings, then the others.
    """
    import difflib

    if not query.metric:
        return ""
    where, params = dataset_filter(store, query, metrics=False)
    # A dataset's primary metric first (the filter lm-eval lists first, strict-match for GSM8K), then by name.
    known = [r[0] for r in store.con.execute(
        f"SELECT metric FROM datasets WHERE {' AND '.join(where) or 'TRUE'} GROUP BY metric "
        "ORDER BY bool_or(coalesce(is_primary, FALSE)) DESC, metric", params).fetchall()]
    if not known or query.metric in known:
        return ""
    filtered = [m for m in known if m.startswith(query.metric + ",")]
    close = [m for m in difflib.get_close_matches(query.metric, known, n=3, cutoff=0.6) if m not in filtered]
    rest = [m for m in known if m not in filtered and m not in close]
    shown = filtered + close + rest
    listed = ", ".join(repr(m) for m in shown[:12]) + (f" and {len(shown) - 12} more" if len(shown) > 12 else "")
    where_from = f" of {', '.join(query.benchmarks)}" if query.benchmarks else ""
    return (f"no dataset{where_from} reports it. Metrics they report: {listed}"
            + (f" (lm-eval names a metric after its filter, 'metric,filter': --metric {filtered[0]!r})"
               if filtered else ""))
