"""Building the models x datasets performance matrix from the store.

References
----------
SimBA (Subramani, Gomez and Diab 2025), §2: B is m models x d datasets; scores are
normalised per dataset by x' = max(0, (x - x_random) / (1 - x_random)).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np
import pandas as pd

from ..errors import StoreError
from .dataset_links import query_links
from .digest import fingerprint_arrays
from .pivot import benchmark_filter as _benchmark_filter
from .pivot import dataset_filter, exclude_models_sql, note_conflicts
from .pivot import describe as _describe
from .pivot import raw_arrays


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
    datasets, models, source : str or tuple of str, optional
        Globs on dataset names, model names and source file paths; with several, a name matching any passes
        (:mod:`harness_ext.store.globs`).
    exclude_models : str or tuple of str, optional
        Globs on model names applied after ``models``: a model any of whose names (its canonical id or a name
        a source used, as ``models`` matches) matches one is left out with all its names, so a held-out
        model leaves no result behind under another name. What it removed is ``attrs["excluded"]``
        (:func:`harness_ext.store.pivot.exclude_models`).
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
        names sources give one model meet in one row, and its dataset links
        (:mod:`harness_ext.store.dataset_links`), so one dataset under two harnesses' names is one column (default).
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
    exclude_models: Optional[str] = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["benchmarks"] = list(self.benchmarks)
        if d["exclude_models"] is None:  # not given: the manifests written before the option stay byte-identical
            del d["exclude_models"]
        return d


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
    from .globs import glob_sql

    if query.models:  # a glob on either the canonical id or the name a source used
        cond, ps = glob_sql([model_col, "m.name"], query.models)
        where.append(cond)
        params.extend(ps)
    if query.exclude_models:
        cond, ps = exclude_models_sql(query.exclude_models, aliased)
        where.append(cond)
        params.extend(ps)
    for col, glob in (("d.name", query.datasets), ("s.path", query.source)):
        if glob:
            cond, ps = glob_sql([col], glob)
            where.append(cond)
            params.extend(ps)
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


def load_matrix(store, query: MatrixQuery = MatrixQuery(), fingerprint: bool = True) -> pd.DataFrame:
    """Build the performance matrix for ``query``.

    Parameters
    ----------
    store : Store
        An open store.
    query : MatrixQuery
        Which results, and how they are normalised.
    fingerprint : bool
        Compute ``attrs["fingerprint"]``: SHA-256 of the raw values, what ``reduce`` records in
        its manifest and ``predict`` checks against the store. Default True. ``False`` leaves it
        None: for callers that write and check no manifest (``matrix``, ``stalk``, ``prowl``,
        ``weights``), which then do not pay for it (about half of a dense store read's time: one
        sequential SHA-256 stream over the values, computed beside the scan).

    Returns
    -------
    pandas.DataFrame
        Models x datasets, NaN where missing, normalised per ``query.normalise``.
        ``df.attrs`` holds ``query`` (as a dict), ``datasets`` (per-column
        metadata: benchmark, metric, task, baseline, how the column was
        normalised, as the dict :func:`params_frame` reads),
        ``fingerprint`` (of the raw values; None without ``fingerprint``) and ``dropped`` (the models, datasets and
        count of observed cells ``query.dense`` removed; empty without it -- missing cells are otherwise kept as
        missing); ``clipped`` (:func:`pack_clipped`'s text) where normalisation clipped a score below chance or above
        the scale; ``excluded`` (:func:`~harness_ext.store.pivot.exclude_models`) with ``query.exclude_models``;
        ``conflicts`` (:func:`~harness_ext.store.pivot.note_conflicts`); ``dataset_links`` (:func:`query_links`). Query
        again with ``normalise="none"`` for raw scores.

    Raises
    ------
    StoreError
        If the store is empty or the query selects nothing.
    """
    if query.rows not in ("model", "model_shots", "run"):
        raise StoreError(f"rows must be 'model', 'model_shots' or 'run', not {query.rows!r}")
    extra: dict = {}
    # One float matrix all the way: the raw values are fingerprinted, then normalised in place.
    X, index, columns, meta = raw_arrays(store, query, extra, fingerprint=fingerprint and not query.dense)
    X, columns, meta, links = query_links(store, query, X, index, columns, meta, extra)
    dropped = {"models": [], "datasets": []}
    if query.dense:
        X, index, columns, meta, dropped = _dense_block(X, index, columns, meta, query)
    user_chance = _user_chance_levels(query)
    # The fingerprint of the raw values (rounding and hashing release the GIL) runs beside the read-only
    # normalisation parameters and labels; the in-place normalisation waits for it.
    from concurrent.futures import ThreadPoolExecutor
    from contextlib import nullcontext

    with ThreadPoolExecutor(1) if fingerprint else nullcontext() as pool:
        # Started while the store was read, where the layout allowed (harness_ext.store.pivot).
        hashed = None
        if fingerprint:
            hashed = extra.get("fingerprint") or pool.submit(fingerprint_arrays, X, index, columns)
        params = normalisation_params(X, meta, method=query.normalise, chance_levels=user_chance)
        labels, cols = pd.Index(index, name="model"), pd.Index(columns, name="dataset")
        normalisation, datasets = _dataset_records(params, meta)
        raw_fingerprint = hashed.result() if fingerprint else None
    clipped = clipped_cells(X, params, index, columns)  # before the in-place normalisation clips them
    X = apply_normalisation(X, params, out=X)
    norm = pd.DataFrame(X, index=labels, columns=cols, copy=False)
    merged = extra.get("merged") or {}
    if merged:  # only the rows kept (a set of tens of thousands of labels costs milliseconds: only when needed)
        rows = set(index)
        merged = {m: n for m, n in merged.items() if m in rows}
    norm.attrs = {
        "query": query.to_dict(),
        # canonical id -> the names its results were stored under, where several sources' names merged
        "model_aliases": merged,
        "datasets": datasets,
        "fingerprint": raw_fingerprint,
        "dropped": dropped,
        **_scale_notes(query, cols, normalisation, params),
    }
    norm.attrs.update({k: v for k, v in (("shots", extra.get("shots")), ("clipped", clipped), ("excluded", extra.get(
        "excluded")), ("dataset_links", links or None)) if v is not None})
    if fingerprint:  # a manifest's matrix: the cells whose values disagree (how many the counts decided), for its warning
        note_conflicts(store, norm, query.rows)
    return norm


def _user_chance_levels(query) -> Optional[dict]:
    """The chance levels of ``query.chance_file`` (:func:`harness_ext.store.scales.load_chance_file`), or None."""
    if not query.chance_file:
        return None
    from .scales import load_chance_file

    return load_chance_file(query.chance_file)


def _dense_block(X, index, columns, meta, query) -> tuple:
    """``(X, index, columns, meta, dropped)`` cut to a complete block (``query.dense``), with what the cut removed."""
    before = pd.DataFrame(X, index=index, columns=columns, copy=False)
    raw = densify(before, drop="auto" if query.dense is True else query.dense)
    # --dense is a cut the user asked for: what it removed travels with the matrix so commands can name it.
    dropped = {"models": [str(i) for i in before.index.difference(raw.index)],
               "datasets": [str(c) for c in before.columns.difference(raw.columns)],
               "observed_cells": int(before.notna().to_numpy().sum() - raw.notna().to_numpy().sum())}
    meta = meta.loc[raw.columns]
    if raw.empty:
        raise StoreError(f"no complete block of models x datasets exists for {_describe(query)}")
    return raw.to_numpy(dtype=float, copy=True), list(raw.index), list(raw.columns), meta, dropped


def _dataset_records(params: pd.DataFrame, meta: pd.DataFrame) -> tuple:
    """``(normalisation, datasets)``: each column's normalisation record (the dict :func:`params_frame` reads)
    and its metadata with that record, as plain types."""
    p = {k: params[k].tolist() for k in ("how", "lo", "span", "flip", "chance", "clip", "transform", "ref",
                                          "scale", "chance_source")}
    normalisation = [
        {"description": how, "lo": float(lo), "span": float(span), "flip": bool(flip), "chance": float(r),
         "clip": bool(clip), "transform": t, "ref": float(ref), "scale": k,
         "chance_source": src if isinstance(src, str) else None}
        for how, lo, span, flip, r, clip, t, ref, k, src in zip(*p.values())]
    # attrs hold plain types only: pandas compares and deep-copies attrs on many operations. Built a
    # column at a time (the per-row dicts of DataFrame.to_dict cost a Python call per cell).
    fields = {k: [_plain(v) for v in meta[k].tolist()] for k in meta.columns}
    fields["normalisation"] = normalisation
    datasets = {c: dict(zip(fields, row)) for c, row in zip(meta.index.tolist(), zip(*fields.values()))}
    return normalisation, datasets


def _scale_notes(query, cols, normalisation: list, params: pd.DataFrame) -> dict:
    """``no_chance`` and ``training_dependent``: the columns :func:`load_matrix` lists in its ``attrs``."""
    from .scales import lacks_chance_level

    # Said, not silently assumed: datasets with no known chance level (no correction applied) and
    # datasets whose scale is unknown (min-max over these models, so it moves with the model set).
    # Only where a chance level would apply (bounded, higher is better): an Elo column has none to miss.
    return {
        "no_chance": [] if query.normalise == "none" else [
            str(c) for c, n in zip(cols, normalisation) if lacks_chance_level(n)],
        "training_dependent": [str(c) for c in cols[(params["scale"] == "unbounded").to_numpy()]]
        if query.normalise != "none" else [],
    }


def load_metric_tensor(store, query: MatrixQuery, models, datasets) -> tuple:
    """``(T, metrics)``: every metric the query's datasets report, as a models x datasets x metrics tensor.

    :func:`load_matrix` runs once per metric with ``query.metric`` set to it (rows, aliases,
    aggregates, chance file and normalisation as the query says), each slice aligned on
    ``models`` and ``datasets`` (the primary-metric matrix's labels); a dataset without a
    metric is NaN in that slice.

    References
    ----------
    Zhao et al. §3.3 (the models x datasets x metrics tensor).
    """
    from dataclasses import replace

    where, params = dataset_filter(store, query, metrics=False)
    metrics = [r[0] for r in store.con.execute(
        f"SELECT DISTINCT metric FROM datasets {'WHERE ' + ' AND '.join(where) if where else ''} ORDER BY metric",
        params).fetchall()]
    models, datasets = list(models), list(datasets)
    # Only the values are used: no fingerprint, nor the manifest's conflict count, per slice.
    slices = [load_matrix(store, replace(query, metric=m, dense=False), fingerprint=False)
              .reindex(index=models, columns=datasets).to_numpy(dtype=float) for m in metrics]
    shape = (len(models), len(datasets), 0)
    return (np.stack(slices, axis=2) if slices else np.empty(shape)), metrics


def _raw_matrix(store, query: MatrixQuery, extra: Optional[dict] = None) -> tuple:
    """Raw matrix (a DataFrame) and per-column metadata for ``query``: :func:`harness_ext.store.pivot.raw_arrays`."""
    X, index, columns, meta = raw_arrays(store, query, extra)
    return pd.DataFrame(X, index=pd.Index(index, name="model"), columns=pd.Index(columns, name="dataset"),
                        copy=False), meta


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
    SimBA §2, the normalisation of B.
    """
    params = normalisation_params(raw, meta, method)
    Z = apply_normalisation(raw.to_numpy(dtype=float), params)
    return pd.DataFrame(Z, index=raw.index, columns=raw.columns), list(params["how"])


def normalisation_params(raw, meta: pd.DataFrame, method: str = "chance",
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
    ``raw`` is a DataFrame, or an array whose columns are ``meta``'s rows.
    """
    from .scales import pre_transform, transform_of

    labels = raw.columns if isinstance(raw, pd.DataFrame) else meta.index
    X = raw.to_numpy(dtype=float) if isinstance(raw, pd.DataFrame) else np.asarray(raw, dtype=float)
    d = X.shape[1]
    if method == "none":
        return pd.DataFrame({"lo": 0.0, "span": 1.0, "flip": False, "chance": 0.0, "how": "raw", "clip": False,
                             "transform": "linear", "ref": 0.0, "scale": "raw", "chance_source": None},
                            index=labels)
    if method not in ("chance", "minmax"):
        raise StoreError(f"unknown normalisation {method!r}; use chance, minmax or none")
    # NULL means higher is better; the column may be a nullable boolean.
    lower_better = meta["higher_is_better"].astype(object).eq(False).to_numpy(dtype=bool)
    col = lambda name: meta[name].to_numpy(dtype=object) if name in meta else np.full(d, None, dtype=object)  # noqa: E731
    metrics, hints, names, tasks = col("metric"), col("scale_kind"), col("dataset"), col("task")
    kinds = np.full(d, "unbounded", dtype=object)
    lo, hi = np.full(d, np.nan), np.full(d, np.nan)
    if method == "chance":
        kinds, lo, hi = _scale_kinds(X, labels, metrics, hints, names, meta)
    transform = np.array([transform_of(k)[0] for k in kinds], dtype=object)
    ref = np.array([transform_of(k)[1] for k in kinds], dtype=float)
    linear = transform == "linear"
    # Range of each column after its transform (infinities count, all-missing columns give inf/-inf): the
    # linear columns' is the raw range; only the transformed columns are computed again.
    col_min, col_max = _column_range(X, finite_only=False)
    bent = np.flatnonzero(~linear)
    if bent.size:
        col_min[bent], col_max[bent] = _column_range(pre_transform(X[:, bent], transform[bent], ref[bent]), False)
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
        r, sources = _chance_levels(meta, labels, names, metrics, tasks, lo, span, flip, linear, minmax,
                                    chance_levels)
        how = np.array([h + (f", chance {rr:.3g} ({src})" if src is not None and rr > 0 else "")
                        for h, rr, src in zip(how, r, sources)], dtype=object)
    else:
        kinds[:] = "unbounded"
        lo, span = col_min, np.where(col_max > col_min, col_max - col_min, 1.0)
        transform[:], ref[:] = "linear", 0.0
        how = np.array(["min-max" + (", flipped" if f else "") for f in lower_better], dtype=object)
        flip = lower_better
    # A column with no known scale is min-max over the observed models: a new model beyond them lies outside
    # [0, 1] and keeps that distance (clipped, the strongest new model read as the strongest training one).
    clip = kinds != "unbounded"
    return pd.DataFrame({"lo": lo, "span": span, "flip": flip, "chance": r, "how": how, "clip": clip,
                         "transform": transform, "ref": ref, "scale": kinds, "chance_source": sources},
                        index=labels)



def _scale_kinds(X: np.ndarray, labels, metrics, hints, names, meta: pd.DataFrame) -> tuple:
    """``(kinds, lo, hi)``: each column's scale (:func:`harness_ext.store.scales.infer_scale`) and its bounds
    (NaN where it has none), from its metadata and its finite range."""
    from .scales import PERCENT_METRICS, infer_scale, is_accuracy_metric, key

    d = X.shape[1]
    declared_lo = meta["min_score"].to_numpy(dtype=float)
    declared_hi = meta["max_score"].to_numpy(dtype=float)
    kinds = np.full(d, "unbounded", dtype=object)
    lo, hi = np.full(d, np.nan), np.full(d, np.nan)
    raw_min, raw_max = _column_range(X)
    for j in range(d):  # per column (its metadata), not per cell; the scale needs only the column's finite range
        m = key(metrics[j] or "").split("_none")[0]
        hint = hints[j] if isinstance(hints[j], str) and hints[j] else None
        finite = [v for v in (raw_min[j], raw_max[j]) if np.isfinite(v)]
        kinds[j], lo[j], hi[j] = [np.nan if v is None else v for v in infer_scale(
            finite, name=str(names[j] if names[j] is not None else labels[j]), metric=str(metrics[j] or ""),
            declared_lo=declared_lo[j], declared_hi=declared_hi[j], hint=hint,
            percent_ok=m in PERCENT_METRICS or is_accuracy_metric(m))]
    return kinds, lo, hi


def _chance_levels(meta: pd.DataFrame, labels, names, metrics, tasks, lo, span, flip, linear, minmax,
                   chance_levels: Optional[dict]) -> tuple:
    """``(chance, source)`` per column on the normalised scale: the stored random baseline, else the known chance
    level of a linear, unflipped, fixed-scale column (:func:`harness_ext.store.scales.chance_level`); 0 with
    source None where none is known."""
    from .scales import chance_level

    rb = meta["random_baseline"].to_numpy(dtype=float)
    r = np.where(linear, (rb - lo) / span, np.nan)
    r = np.where(flip, 1.0 - r, r)
    stored = np.isfinite(r)
    sources = np.where(stored, meta["baseline_source"].fillna("stored").to_numpy(dtype=object), None)
    for j in np.flatnonzero(~stored & linear & ~flip & ~minmax):
        c, src = chance_level(str(names[j] if names[j] is not None else labels[j]), str(metrics[j] or "score"),
                              task=tasks[j] if isinstance(tasks[j], str) else None, user=chance_levels)
        if c is not None:
            r[j], sources[j] = c, src
    # Unknown chance (sources None): no correction, reported by load_matrix -- never a silent 0.
    return np.clip(np.nan_to_num(r, nan=0.0), 0.0, 0.999), sources

def _column_range(X: np.ndarray, finite_only: bool = True, block: int = 4096) -> tuple:
    """Per-column minimum and maximum, missing cells ignored, in row blocks (no full-size temporary).

    ``finite_only``: infinities ignored too, and an all-missing column gives NaN; otherwise
    infinities count and an all-missing column gives ``(inf, -inf)``.
    """
    d = X.shape[1]
    lo, hi = np.full(d, np.inf), np.full(d, -np.inf)
    for s in range(0, X.shape[0], block):
        B = X[s:s + block]
        if finite_only and np.isinf(B).any():
            B = np.where(np.isinf(B), np.nan, B)
        np.fmin(lo, np.fmin.reduce(B, axis=0, initial=np.inf), out=lo)  # fmin: NaN ignored
        np.fmax(hi, np.fmax.reduce(B, axis=0, initial=-np.inf), out=hi)
    if finite_only:
        lo[np.isinf(lo)], hi[np.isinf(hi)] = np.nan, np.nan
    return lo, hi


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


def apply_normalisation(X, params: pd.DataFrame, out: Optional[np.ndarray] = None, block: int = 4096,
                        clip: bool = True) -> np.ndarray:
    """Normalise raw scores ``X`` (n x d, columns in ``params`` order); NaN stays NaN.

    ``out``: write the result there (may be ``X`` itself, a float64 array: normalised in
    place, no second matrix); default a new array. Row blocks keep the temporaries small.
    ``clip=False``: the same map without the floor at chance and the ceiling at 1 (a score
    below chance is negative), what :func:`clipped_cells` records.
    """
    from .scales import pre_transform

    X = np.asarray(X, dtype=float)
    if out is None:
        out = np.empty(X.shape)
    t, ref = _transforms(params)
    lo, span, flip, r = _unpack(params)
    on = params["clip"].to_numpy(dtype=bool)
    if not on.any() and t is None and not np.any(flip) and np.all(lo == 0) and np.all(span == 1) and np.all(r == 0):
        if out is not X:  # no normalisation (``none``): the raw scores
            out[...] = X
        return out
    bent = None if t is None else np.flatnonzero(t != "linear")
    fl = np.flatnonzero(flip)
    for s in range(0, X.shape[0], block):
        Z = out[s:s + block]
        if bent is not None:  # the non-linear transforms, on their columns only
            B = X[s:s + block]
            Z[...] = B
            Z[:, bent] = pre_transform(B[:, bent], t[bent], ref[bent])
            np.subtract(Z, lo, out=Z)
        else:
            np.subtract(X[s:s + block], lo, out=Z)
        # The same operations, in the same order, as (X - lo) / span, flip, max(0, (Z - r) / (1 - r)), clip.
        np.divide(Z, span, out=Z)
        if fl.size:
            Z[:, fl] = 1.0 - Z[:, fl]
        np.subtract(Z, r, out=Z)
        np.divide(Z, 1.0 - r, out=Z)
        if clip and on.all():
            np.maximum(0.0, Z, out=Z)
            np.clip(Z, 0.0, 1.0, out=Z)
        elif clip and on.any():  # columns without a known scale are not clipped (normalisation_params)
            Z[:, on] = np.clip(Z[:, on], 0.0, 1.0)
    return out


def pack_clipped(index, columns, rows, cols, values) -> str:
    """The clipped cells of a matrix (positions in ``index`` x ``columns``, values before clipping) as JSON text:
    what :func:`load_matrix` puts in ``attrs["clipped"]`` (:func:`clipped_cells`; read by :func:`unpack_clipped`).

    Text because pandas deep-copies ``attrs`` on most operations (text is copied for free, a list of cells is not:
    seconds for a large leaderboard) and writes them to Parquet as JSON. The positions and values are little-endian
    arrays in base64, the labels a list, so the cells follow their labels into any frame of these models and datasets.
    """
    import base64
    import json

    def b64(a, dtype):
        return base64.b64encode(np.ascontiguousarray(a, dtype=dtype).tobytes()).decode("ascii")

    return json.dumps({"models": [str(i) for i in index], "datasets": [str(c) for c in columns],
                       "rows": b64(rows, "<i8"), "cols": b64(cols, "<i8"), "values": b64(values, "<f8")})


def unpack_clipped(text: str, index, columns) -> tuple:
    """``(rows, cols, values)`` of :func:`pack_clipped`'s text, as positions in a frame with labels ``index`` x
    ``columns`` (cells of models or datasets it does not hold are left out) and the values before clipping."""
    import base64
    import json

    doc = json.loads(text)
    rows, cols = (np.frombuffer(base64.b64decode(doc[k]), dtype="<i8") for k in ("rows", "cols"))
    values = np.frombuffer(base64.b64decode(doc["values"]), dtype="<f8")
    r = pd.Index([str(i) for i in index]).get_indexer(np.asarray(doc["models"], dtype=object)[rows])
    c = pd.Index([str(j) for j in columns]).get_indexer(np.asarray(doc["datasets"], dtype=object)[cols])
    keep = (r >= 0) & (c >= 0)
    return r[keep], c[keep], values[keep].copy()


def clipped_cells(X, params: pd.DataFrame, index, columns, block: int = 4096) -> Optional[str]:
    """The cells :func:`apply_normalisation` clips in raw ``X`` (n x d), with their values before clipping
    (:func:`pack_clipped`'s text); None when it clips none.

    Normalisation floors a score below chance at chance: what selection and prediction model.
    The benchmark's own score (MMLU's accuracy) counts a below-chance score as it is, so its
    intervals are calibrated on these values (:mod:`harness_ext.methods.reduction.benchmark_score`).
    """
    on = np.flatnonzero(params["clip"].to_numpy(dtype=bool))
    if on.size == 0 or X.shape[0] == 0:
        return None
    sub = params.iloc[on]
    rows, cols, vals = [], [], []
    for s in range(0, X.shape[0], block):
        Z = apply_normalisation(X[s:s + block][:, on], sub, clip=False)
        i, j = np.nonzero((Z < 0.0) | (Z > 1.0))
        rows.append(i + s)
        cols.append(on[j])
        vals.append(Z[i, j])
    rows = np.concatenate(rows)
    if rows.size == 0:
        return None
    return pack_clipped(index, columns, rows, np.concatenate(cols), np.concatenate(vals))


def invert_normalisation(Z, params: pd.DataFrame) -> np.ndarray:
    """Raw-scale scores for normalised ``Z`` (exact wherever no clipping happened)."""
    from .scales import post_transform

    Z = np.asarray(Z, dtype=float)
    # Not ``clip`` as a sign of raw scores: a column without a known scale is min-max but not clipped.
    lo, span, flip, r = _unpack(params)
    U = Z * (1.0 - r) + r
    U = np.where(flip, 1.0 - U, U)
    X = lo + U * span
    t, ref = _transforms(params)
    return X if t is None else post_transform(X, t, ref)


def fingerprint(raw: pd.DataFrame) -> str:
    """SHA-256 of the matrix's labels and values (rounded to 12 digits), order-independent."""
    index, columns = raw.index.tolist(), raw.columns.tolist()
    if index == sorted(index) and columns == sorted(columns):  # a store matrix is sorted: no copy
        return fingerprint_arrays(raw.to_numpy(dtype=float), index, columns)
    df = raw.loc[sorted(index), sorted(columns)]
    return fingerprint_arrays(df.to_numpy(dtype=float), df.index.tolist(), df.columns.tolist())
