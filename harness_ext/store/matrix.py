"""Building the models x datasets performance matrix from the store.

References
----------
SimBA (../shared/seeds/000_*), §2: B is m models x d datasets; scores are
normalised per dataset by x' = max(0, (x - x_random) / (1 - x_random)).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Optional

import numpy as np
import pandas as pd

from ..errors import StoreError
from .db import UNKNOWN_SHOTS


@dataclass(frozen=True)
class MatrixQuery:
    """Which results form the matrix, and how they are normalised.

    Parameters
    ----------
    benchmarks : tuple of str
        Benchmarks to include; empty means all.
    metric : str, optional
        Use this metric for every dataset that has it; default: each dataset's
        primary metric (``acc`` over ``acc_norm`` for lm-eval, and so on).
    datasets, models, source : str, optional
        Globs on dataset names, model names and source file paths.
    num_fewshot : int, optional
        Keep only results with this shot count.
    rows : {"model", "model_shots", "run"}
        ``model``: one row per model. Each dataset uses one shot setting: the
        one most models were run at (ties: the fewest shots; unknown counts
        last), or ``num_fewshot`` when given; a model's result at another
        setting is a different measurement and is left out (counted in
        ``attrs["shots"]``). A cell reported by several files takes the
        first-ingested value. ``model_shots``: one row per model and shot
        setting (``model [5-shot]``) where a model has several. ``run``: one
        row per source file (a run of the harness).
    aliases : bool
        Apply the store's model aliases (:mod:`harness_ext.store.identity`), so the
        names sources give one model meet in one row (default).
    dense : bool or {"auto", "models", "datasets"}
        Make the matrix complete by dropping what is sparse: ``True``/``"auto"``
        drops the sparsest model or dataset, whichever is sparser, until no
        cell is missing; ``"models"`` drops only models (every dataset is kept,
        as SimBA's HELM matrix keeps its 16 scenarios); ``"datasets"`` drops
        only datasets.
    normalise : {"chance", "minmax", "none"}
        See :func:`normalise_matrix`.
    aggregates : bool or "only"
        Aggregates (``datasets.kind = 'aggregate'``: HELM's mean win rate, lm-eval
        groups, a leaderboard's "average" column) are left out by default, so they
        never enter a subset; ``True`` adds them as columns, ``"only"`` keeps only
        them (a prediction target).
    chance_file : str, optional
        A user chance-level table (:func:`harness_ext.store.scales.load_chance_file`) consulted
        before the built-in one for datasets without a stored chance level.
    """

    benchmarks: tuple = ()
    metric: Optional[str] = None
    datasets: Optional[str] = None
    models: Optional[str] = None
    source: Optional[str] = None
    num_fewshot: Optional[int] = None
    rows: str = "model"
    dense: object = False
    normalise: str = "chance"
    aggregates: object = False
    chance_file: Optional[str] = None
    aliases: bool = True

    def to_dict(self) -> dict:
        d = asdict(self)
        d["benchmarks"] = list(self.benchmarks)
        return d


def _benchmark_filter(store, query: MatrixQuery, column: str):
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


def query_results(store, query: MatrixQuery, all_metrics: bool = False) -> pd.DataFrame:
    """The long table of results the query selects (one row per stored value).

    ``all_metrics`` returns every metric, not only the primary (or named) one.
    """
    has = getattr(store, "_has_table", lambda t: False)
    where, params = _benchmark_filter(store, query, "d.benchmark")
    if query.metric:
        where.append("d.metric = ?")
        params.append(query.metric)
    elif not all_metrics:
        where.append("d.is_primary")
    if query.aggregates == "only":
        where.append("d.kind = 'aggregate'")
    elif not query.aggregates:
        where.append("coalesce(d.kind, 'dataset') <> 'aggregate'")
    aliased = bool(query.aliases) and has("model_aliases")
    model_col = "coalesce(a.canonical, m.name)" if aliased else "m.name"
    if query.models:  # a glob on either the canonical id or the name a source used
        where.append(f"({model_col} GLOB ? OR m.name GLOB ?)")
        params.extend([query.models, query.models])
    for col, glob in (("d.name", query.datasets), ("s.path", query.source)):
        if glob:
            where.append(f"{col} GLOB ?")
            params.append(glob)
    if query.num_fewshot is not None:
        where.append("r.num_fewshot = ?")
        params.append(int(query.num_fewshot))
    sql = f"""
        SELECT {model_col} AS model, m.name AS model_name, d.benchmark, d.name AS dataset, d.metric, d.task,
               d.higher_is_better, d.random_baseline, d.baseline_source, d.min_score, d.max_score, d.kind, d.scale,
               r.num_fewshot, r.value, r.stderr, r.n_samples, r.source_id, s.path AS source
        FROM results r JOIN models m USING (model_id) JOIN datasets d USING (dataset_id)
        JOIN sources s USING (source_id) {"LEFT JOIN model_aliases a ON a.alias = m.name" if aliased else ""}
        {"WHERE " + " AND ".join(where) if where else ""}
        ORDER BY r.source_id, d.benchmark, d.name"""
    return store.con.execute(sql, params).df()


def load_matrix(store, query: MatrixQuery = MatrixQuery()) -> pd.DataFrame:
    """Build the performance matrix for ``query``.

    Returns
    -------
    pandas.DataFrame
        Models x datasets, NaN where missing, normalised per ``query.normalise``.
        ``df.attrs`` holds ``query`` (as a dict), ``datasets`` (per-column
        metadata: benchmark, metric, task, baseline, how the column was
        normalised, as the dict :func:`params_frame` reads),
        ``fingerprint`` (of the raw values) and ``dropped`` (the models,
        datasets and count of observed cells ``query.dense`` removed; empty
        without it -- missing cells are otherwise kept as missing). Query again with
        ``normalise="none"`` for raw scores.

    Raises
    ------
    StoreError
        If the store is empty or the query selects nothing.
    """
    if query.rows not in ("model", "model_shots", "run"):
        raise StoreError(f"rows must be 'model', 'model_shots' or 'run', not {query.rows!r}")
    extra: dict = {}
    raw, meta = _raw_matrix(store, query, extra)
    dropped = {"models": [], "datasets": []}
    if query.dense:
        before = raw
        raw = densify(raw, drop="auto" if query.dense is True else query.dense)
        # --dense is a cut the user asked for: what it removed travels with the matrix so commands can name it.
        dropped = {"models": [str(i) for i in before.index.difference(raw.index)],
                   "datasets": [str(c) for c in before.columns.difference(raw.columns)],
                   "observed_cells": int(before.notna().to_numpy().sum() - raw.notna().to_numpy().sum())}
        meta = meta.loc[raw.columns]
        if raw.empty:
            raise StoreError(f"no complete block of models x datasets exists for {_describe(query)}")
    user_chance = None
    if query.chance_file:
        from .scales import load_chance_file

        user_chance = load_chance_file(query.chance_file)
    params = normalisation_params(raw, meta, method=query.normalise, chance_levels=user_chance)
    norm = pd.DataFrame(apply_normalisation(raw.to_numpy(dtype=float), params), index=raw.index, columns=raw.columns)
    meta = meta.assign(normalisation=[
        {"description": how, "lo": float(lo), "span": float(span), "flip": bool(flip), "chance": float(r), "clip": bool(clip),
         "transform": t, "ref": float(ref), "scale": k, "chance_source": src if isinstance(src, str) else None}
        for how, lo, span, flip, r, clip, t, ref, k, src in params[
            ["how", "lo", "span", "flip", "chance", "clip", "transform", "ref", "scale", "chance_source"]].itertuples(index=False)])
    # attrs hold plain types only: pandas compares and deep-copies attrs on many operations.
    chance_known = params["chance_source"].notna().to_numpy()
    merged = {m: n for m, n in extra.get("merged", {}).items() if m in set(raw.index)}
    shots_info = extra.get("shots")
    norm.attrs = {
        "query": query.to_dict(),
        # canonical id -> the names its results were stored under, where several sources' names merged
        "model_aliases": merged,
        "datasets": {c: {k: _plain(v) for k, v in row.items()} for c, row in meta.to_dict("index").items()},
        "fingerprint": fingerprint(raw),
        "dropped": dropped,
        # Said, not silently assumed: datasets with no known chance level (no correction applied) and
        # datasets whose scale is unknown (min-max over these models, so it moves with the model set).
        "no_chance": [] if query.normalise == "none" else [str(c) for c in raw.columns[~chance_known]],
        "training_dependent": [str(c) for c in raw.columns[(params["scale"] == "unbounded").to_numpy()]]
        if query.normalise != "none" else [],
    }
    if shots_info is not None:
        norm.attrs["shots"] = shots_info
    return norm


_DATASET_COLUMNS = ["benchmark", "dataset", "metric", "task", "higher_is_better", "random_baseline", "baseline_source",
                    "min_score", "max_score", "kind", "scale"]


def _raw_matrix(store, query: MatrixQuery, extra: Optional[dict] = None) -> tuple:
    """Raw matrix and per-column metadata for ``query``, without a string table or a pandas pivot.

    Labels are built for the few distinct models, shot counts, sources and
    datasets only. DuckDB selects the results and joins each to integer row
    and column codes; the codes, values and a rank (source, then benchmark,
    dataset name and metric, then shot count within a run) come back a
    million rows at a time (Arrow batches when pyarrow is installed) and are
    scattered into the preallocated float matrix, keeping the lowest rank per
    cell: the first-ingested value, as the store promises. Memory is the
    matrix, one int64 rank matrix of the same shape and one batch.
    """
    con = store.con
    extra = {} if extra is None else extra
    has = getattr(store, "_has_table", lambda t: False)
    dwhere, dparams = _benchmark_filter(store, query, "benchmark")
    if query.metric:
        dwhere.append("metric = ?")
        dparams.append(query.metric)
    else:
        dwhere.append("is_primary")
    if query.aggregates == "only":
        dwhere.append("kind = 'aggregate'")
    elif not query.aggregates:
        dwhere.append("coalesce(kind, 'dataset') <> 'aggregate'")
    if query.datasets:
        dwhere.append("name GLOB ?")
        dparams.append(query.datasets)
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
    if query.rows == "model":
        # One row per model: each dataset at the shot setting most models ran (ties: fewest shots, unknown last).
        # A plain count first: only datasets run at several shot settings need the models counted exactly.
        per = con.execute(f"""SELECT dataset_id, num_fewshot, count(*) AS n FROM results r
                              WHERE {where} GROUP BY ALL""", rparams).fetchall()
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
        extra["shots"] = {"rule": "per dataset, the shot setting most models were run at (ties: fewest shots)",
                          "dropped_cells": dropped, "mixed_dataset_ids": len(mixed)}
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
        avail = ", ".join(store.benchmarks()["benchmark"])
        raise StoreError(f"no results match {_describe(query)}; benchmarks in the store: {avail}")

    # Columns: dataset names, qualified by benchmark where a name is shared by two selected benchmarks.
    ds = con.execute(
        f"""SELECT dataset_id, benchmark, name, metric, task, higher_is_better, random_baseline, baseline_source,
                   min_score, max_score, kind, scale FROM datasets WHERE dataset_id IN (SELECT unnest(?::INTEGER[]))""",
        [ds_ids.tolist()]).fetchall()
    n_bench: dict = {}
    for row in ds:
        n_bench.setdefault(row[2], set()).add(row[1])
    col_label = {row[0]: (f"{row[1]}/{row[2]}" if len(n_bench[row[2]]) > 1 else row[2]) for row in ds}
    columns = sorted(set(col_label.values()))
    col_code = {c: i for i, c in enumerate(columns)}
    # Among values of one cell from one source, the old ORDER BY benchmark, name decides; metric breaks ties.
    prio = {row[0]: i for i, row in enumerate(sorted(ds, key=lambda r: (r[1], r[2], r[3], r[0])))}
    info = {row[0]: row[1:] for row in ds}

    # Rows: a model, a model at one shot count (when it has several), or a model's run (one source file).
    model_ids = np.unique(row_model)
    names = dict(con.execute("SELECT model_id, name FROM models WHERE model_id IN (SELECT unnest(?::INTEGER[]))",
                             [model_ids.tolist()]).fetchall())
    if aliased:  # names of one model share its row (harness_ext.store.identity)
        canon = dict(con.execute("SELECT alias, canonical FROM model_aliases").fetchall())
        groups: dict = {}
        for mid, n in names.items():
            groups.setdefault(canon.get(n, n), set()).add(n)
        extra["merged"] = {c: sorted(ns) for c, ns in groups.items() if len(ns) > 1}
        names = {mid: canon.get(n, n) for mid, n in names.items()}
    if query.rows == "run":
        paths = dict(con.execute("SELECT source_id, path FROM sources WHERE source_id IN (SELECT unnest(?::INTEGER[]))",
                                 [np.unique(row_k).tolist()]).fetchall())
        labels = [f"{names[m]} [{paths[k].rsplit('/', 1)[-1]}]" for m, k in zip(row_model.tolist(), row_k.tolist())]
    else:
        n_shots = dict(zip(*np.unique(row_model, return_counts=True)))
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
        else:
            sql = f"""SELECT w.r, c.c, r.value, (r.source_id::BIGINT * {nd} + c.p) * {ns} AS f, r.num_fewshot AS k
                      FROM results r JOIN _hx_cols c USING (dataset_id)
                      JOIN _hx_rows w ON r.model_id = w.model_id AND {second} = w.k WHERE {where}"""
        X = np.full((len(index), len(columns)), np.nan)
        P = None
        simple = query.rows == "model" and ns == 1 and len(np.unique(ds_tab["c"])) == nd
        if simple:
            # The common case first (one dataset per column, one shot setting): scatter the values as they
            # come; if no cell came twice (as many values kept as fetched), no ranking is needed.
            n_fetched = 0
            for batch in _batches(con, sql, rparams):
                flat = lut_r[batch["model_id"]] * len(columns) + lut_c[batch["dataset_id"]]
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
        rows_join = "" if query.rows == "model" else f"JOIN _hx_rows w ON r.model_id = w.model_id AND {second} = w.k"
        for c, v in con.execute(f"""SELECT c.c, median(r.n_samples) FROM results r JOIN _hx_cols c USING (dataset_id)
                                     {rows_join} WHERE {where} AND r.n_samples IS NOT NULL GROUP BY c.c""",
                                rparams).fetchall():
            n_samples[int(c)] = float(v)
    finally:
        con.unregister("_hx_cols")
        con.unregister("_hx_rows")
    raw = pd.DataFrame(X, index=pd.Index(index, name="model"), columns=pd.Index(columns, name="dataset"), copy=False)

    # Per column: metadata of its first cell's dataset, and the most common shot count (ties: the smallest).
    observed = ~np.isnan(X)
    if not simple:
        first_p = (P.min(axis=0) // ns) % nd
    by_prio = {p: i for i, p in prio.items()}
    meta = pd.DataFrame([info[by_prio[int(p)]] for p in first_p], columns=_DATASET_COLUMNS, index=raw.columns)
    meta["higher_is_better"] = meta["higher_is_better"].astype("boolean")  # NULL: unknown, as DuckDB's .df() gives
    meta = meta.rename(columns={"scale": "scale_kind"})  # the stored kind; engine's transforms read "scale" as theirs
    if ns == 1:
        counts = observed.sum(axis=0)[:, None]
    else:
        shot_of = np.where(observed, P % ns, -1)
        counts = np.stack([(shot_of == j).sum(axis=0) for j in range(ns)], axis=1)  # columns x shot values
    del P
    counts[:, shot_values == UNKNOWN_SHOTS] = 0
    shots = pd.Series(pd.NA, index=raw.columns, dtype="Int64")
    has = counts.sum(axis=1) > 0
    shots[has] = shot_values[counts[has].argmax(axis=1)]
    meta["num_fewshot"] = shots
    meta["n_samples"] = pd.array(n_samples, dtype="Float64")
    return raw, meta


def _batches(con, sql: str, params: list, rows: int = 1 << 20):
    """Column arrays of a query's result, about a million rows at a time when pyarrow is there (bounded memory)."""
    try:
        import pyarrow  # noqa: F401

        rel = con.sql(sql, params=params)
        # DuckDB >= 1.4 names it to_arrow_reader; before, fetch_record_batch.
        reader = rel.to_arrow_reader(rows) if hasattr(rel, "to_arrow_reader") else rel.fetch_record_batch(rows)
    except ImportError:  # one batch of numpy arrays
        yield {k: np.asarray(v) for k, v in con.execute(sql, params).fetchnumpy().items()}
        return
    for b in reader:
        yield {name: b.column(i).to_numpy(zero_copy_only=False) for i, name in enumerate(b.schema.names)}


def _plain(v):
    if v is pd.NA:
        return None
    if isinstance(v, (np.generic,)):
        v = v.item()
    if isinstance(v, float) and np.isnan(v):
        return None
    return v


def densify(df: pd.DataFrame, drop: str = "auto") -> pd.DataFrame:
    """Drop sparse rows (models) and/or columns (datasets) until no cell is missing.

    ``drop="auto"``: greedily drop the row or column with the largest missing
    fraction (ties drop the row; then the first label in sorted order).
    ``"models"`` drops only rows with a missing cell, ``"datasets"`` only such
    columns. Deterministic.
    """
    if drop not in ("auto", "models", "datasets"):
        raise StoreError(f"dense must be auto, models or datasets, not {drop!r}")
    mask = df.isna().to_numpy()
    if drop == "models":
        return df.loc[~mask.any(axis=1)]
    if drop == "datasets":
        return df.loc[:, ~mask.any(axis=0)]
    rows = np.arange(df.shape[0])
    cols = np.arange(df.shape[1])
    while mask.size and mask.any():
        r_frac = mask.mean(axis=1)
        c_frac = mask.mean(axis=0)
        if r_frac.max() >= c_frac.max():
            keep = np.ones(len(rows), bool)
            keep[int(np.argmax(r_frac))] = False
            rows, mask = rows[keep], mask[keep]
        else:
            keep = np.ones(len(cols), bool)
            keep[int(np.argmax(c_frac))] = False
            cols, mask = cols[keep], mask[:, keep]
    return df.iloc[rows, cols]


def normalise_matrix(raw: pd.DataFrame, meta: pd.DataFrame, method: str = "chance"):
    """Normalise each column into [0, 1], higher is better.

    ``chance`` (default): a column is first put on [0, 1] by its scale's fixed
    transform (:mod:`harness_ext.store.scales`: proportions as they are, percentages /100,
    declared bounds, Elo ratings as the win probability against a fixed reference
    rating; min-max over the observed models only when no scale is known), flipped
    if lower is better, then chance-corrected, ``max(0, (x - r) / (1 - r))``, with
    ``r`` the dataset's chance level on the same scale (stored, else the built-in or
    user table; no correction when unknown, and the matrix says so).
    ``minmax``: flip, then min-max over observed models. ``none``: raw values.

    Returns
    -------
    (pandas.DataFrame, list of str)
        The normalised matrix and, per column, a description of what was done.

    References
    ----------
    SimBA (000) §2, the normalisation of B.
    """
    params = normalisation_params(raw, meta, method)
    Z = apply_normalisation(raw.to_numpy(dtype=float), params)
    return pd.DataFrame(Z, index=raw.index, columns=raw.columns), list(params["how"])


def normalisation_params(raw: pd.DataFrame, meta: pd.DataFrame, method: str = "chance",
                         chance_levels: Optional[dict] = None) -> pd.DataFrame:
    """Per-column ``lo, span, flip, chance, how, clip, transform, ref, scale, chance_source`` of
    :func:`normalise_matrix`.

    ``chance``: each column's scale comes from :func:`harness_ext.store.scales.infer_scale`
    (the stored scale kind, declared bounds, the metric, else categorical facts of the
    values) and maps through that scale's fixed transform, so a new model's score maps
    exactly as the training models' did; only ``unbounded`` columns (no known scale) fall
    back to min-max over the observed models, and :func:`load_matrix` lists them. The
    chance level is the stored random baseline, else :func:`harness_ext.store.scales.chance_level`
    (``chance_levels``: a user table from :func:`harness_ext.store.scales.load_chance_file`),
    else unknown: no correction, and :func:`load_matrix` lists the column.

    Kept separately so a manifest can normalise a new model's raw scores exactly
    as the training matrix was, and turn predictions back into raw scores.
    """
    from .scales import ACCURACY_METRICS, PERCENT_METRICS, chance_level, infer_scale, key, pre_transform, transform_of

    X = raw.to_numpy(dtype=float)
    d = X.shape[1]
    if method == "none":
        return pd.DataFrame({"lo": 0.0, "span": 1.0, "flip": False, "chance": 0.0, "how": "raw", "clip": False,
                             "transform": "linear", "ref": 0.0, "scale": "raw", "chance_source": None},
                            index=raw.columns)
    if method not in ("chance", "minmax"):
        raise StoreError(f"unknown normalisation {method!r}; use chance, minmax or none")
    # NULL means higher is better; the column may be a nullable boolean.
    lower_better = meta["higher_is_better"].astype(object).eq(False).to_numpy(dtype=bool)
    col = lambda name: meta[name].to_numpy(dtype=object) if name in meta else np.full(d, None, dtype=object)  # noqa: E731
    metrics, hints, names, tasks = col("metric"), col("scale_kind"), col("dataset"), col("task")
    declared_lo = meta["min_score"].to_numpy(dtype=float)
    declared_hi = meta["max_score"].to_numpy(dtype=float)
    kinds = np.full(d, "unbounded", dtype=object)
    lo, hi = np.full(d, np.nan), np.full(d, np.nan)
    if method == "chance":
        for j in range(d):  # per column (its metadata), not per cell
            m = key(metrics[j] or "").split("_none")[0]
            hint = hints[j] if isinstance(hints[j], str) and hints[j] else None
            kinds[j], lo[j], hi[j] = [np.nan if v is None else v for v in infer_scale(
                X[:, j], name=str(names[j] if names[j] is not None else raw.columns[j]), metric=str(metrics[j] or ""),
                declared_lo=declared_lo[j], declared_hi=declared_hi[j], hint=hint,
                percent_ok=m in ACCURACY_METRICS or m in PERCENT_METRICS or m.startswith(("acc", "exact_match")))]
    transform = np.array([transform_of(k)[0] for k in kinds], dtype=object)
    ref = np.array([transform_of(k)[1] for k in kinds], dtype=float)
    linear = transform == "linear"
    U = pre_transform(X, transform, ref)
    col_min = np.nanmin(np.where(np.isnan(U), np.inf, U), axis=0)
    col_max = np.nanmax(np.where(np.isnan(U), -np.inf, U), axis=0)
    minmax = linear & ~(np.isfinite(lo) & np.isfinite(hi) & (hi > lo))
    lo = np.where(~linear, 0.0, np.where(minmax, col_min, lo))
    hi = np.where(~linear, 1.0, np.where(minmax, col_max, hi))
    span = np.where(hi > lo, hi - lo, 1.0)
    # 1/perplexity already points up; the other transforms keep the metric's direction.
    flip = lower_better & (transform != "inverse")
    names_how = {"proportion": "[0,1]", "percent": "[0,100]", "bounded": "declared range", "elo": "Elo win probability",
                 "perplexity": "1/perplexity", "log_likelihood": "exp(log-likelihood)", "unbounded": "min-max"}
    how = np.array([names_how[k] + (", flipped" if f else "") for k, f in zip(kinds, flip)], dtype=object)
    r = np.zeros(d)
    sources = np.full(d, None, dtype=object)
    if method == "chance":
        rb = meta["random_baseline"].to_numpy(dtype=float)
        r = np.where(linear, (rb - lo) / span, np.nan)
        r = np.where(flip, 1.0 - r, r)
        stored = np.isfinite(r)
        sources = np.where(stored, meta["baseline_source"].fillna("stored").to_numpy(dtype=object), None)
        for j in np.flatnonzero(~stored & linear & ~flip & ~minmax):
            c, src = chance_level(str(names[j] if names[j] is not None else raw.columns[j]), str(metrics[j] or "score"),
                                  task=tasks[j] if isinstance(tasks[j], str) else None, user=chance_levels)
            if c is not None:
                r[j], sources[j] = c, src
        # Unknown chance (sources None): no correction, reported by load_matrix -- never a silent 0.
        r = np.clip(np.nan_to_num(r, nan=0.0), 0.0, 0.999)
        how = np.array([h + (f", chance {rr:.3g} ({src})" if src is not None and rr > 0 else "")
                        for h, rr, src in zip(how, r, sources)], dtype=object)
    else:
        kinds[:] = "unbounded"
        lo, span = col_min, np.where(col_max > col_min, col_max - col_min, 1.0)
        transform[:], ref[:] = "linear", 0.0
        how = np.array(["min-max" + (", flipped" if f else "") for f in lower_better], dtype=object)
        flip = lower_better
    return pd.DataFrame({"lo": lo, "span": span, "flip": flip, "chance": r, "how": how, "clip": True,
                         "transform": transform, "ref": ref, "scale": kinds, "chance_source": sources},
                        index=raw.columns)


def params_frame(normalisation: dict, columns) -> pd.DataFrame:
    """:func:`normalisation_params` output rebuilt from per-column dicts
    (``df.attrs["datasets"][c]["normalisation"]``, or a manifest's datasets; manifests
    written before the fixed transforms have none: linear)."""
    rows = [normalisation[c] for c in columns]
    return pd.DataFrame(
        {"lo": [r["lo"] for r in rows], "span": [r["span"] for r in rows], "flip": [bool(r["flip"]) for r in rows],
         "chance": [r["chance"] for r in rows], "how": [r.get("description") for r in rows],
         "clip": [bool(r["clip"]) for r in rows], "transform": [r.get("transform") or "linear" for r in rows],
         "ref": [float(r.get("ref") or 0.0) for r in rows]},
        index=list(columns),
    )


def _unpack(params: pd.DataFrame) -> tuple:
    return (params["lo"].to_numpy(float), params["span"].to_numpy(float), params["flip"].to_numpy(bool),
            params["chance"].to_numpy(float))


def _transforms(params: pd.DataFrame) -> tuple:
    if "transform" not in params:
        return None, None
    t = params["transform"].to_numpy(dtype=object)
    if (t == "linear").all():
        return None, None
    return t, params["ref"].to_numpy(dtype=float)


def apply_normalisation(X, params: pd.DataFrame) -> np.ndarray:
    """Normalise raw scores ``X`` (n x d, columns in ``params`` order); NaN stays NaN."""
    from .scales import pre_transform

    X = np.asarray(X, dtype=float)
    if not params["clip"].any():
        return X.copy()
    t, ref = _transforms(params)
    if t is not None:
        X = pre_transform(X, t, ref)
    lo, span, flip, r = _unpack(params)
    Z = (X - lo) / span
    Z = np.where(flip, 1.0 - Z, Z)
    Z = np.maximum(0.0, (Z - r) / (1.0 - r))
    return np.clip(Z, 0.0, 1.0)


def invert_normalisation(Z, params: pd.DataFrame) -> np.ndarray:
    """Raw-scale scores for normalised ``Z`` (exact wherever no clipping happened)."""
    from .scales import post_transform

    Z = np.asarray(Z, dtype=float)
    if not params["clip"].any():
        return Z.copy()
    lo, span, flip, r = _unpack(params)
    U = Z * (1.0 - r) + r
    U = np.where(flip, 1.0 - U, U)
    X = lo + U * span
    t, ref = _transforms(params)
    return X if t is None else post_transform(X, t, ref)


def fingerprint(raw: pd.DataFrame) -> str:
    """SHA-256 of the matrix's labels and values (rounded to 12 digits), order-independent."""
    ordered = list(raw.index) == sorted(raw.index) and list(raw.columns) == sorted(raw.columns)
    df = raw if ordered else raw.loc[sorted(raw.index), sorted(raw.columns)]  # a store matrix is sorted: no copy
    h = hashlib.sha256()
    h.update("\x1f".join(map(str, df.index)).encode())
    h.update(b"\x1e")
    h.update("\x1f".join(map(str, df.columns)).encode())
    h.update(b"\x1e")
    h.update(np.round(df.to_numpy(dtype=float), 12).tobytes())
    return h.hexdigest()


def _describe(query: MatrixQuery) -> str:
    parts = [f"{k}={v!r}" for k, v in query.to_dict().items() if v not in (None, (), [], False) and k not in ("rows", "normalise")]
    return ", ".join(parts) or "the query"
