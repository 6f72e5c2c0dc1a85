"""The public Python API: the routine loop without the command line.

``harness_ext.ingest``, ``harness_ext.load_matrix``, ``harness_ext.reduce`` (a dataset subset),
``harness_ext.reduce_items`` (items of every task, ``reduce --items N``) and
``harness_ext.predict`` (imported lazily from :mod:`harness_ext`) are thin
functions over the store and the methods; they take a DataFrame or a store
path and return the typed results the commands print
(:class:`~harness_ext.methods.reduction.reduce.ReduceResult`,
:class:`~harness_ext.methods.reduction.predict.PredictionResult`), which render
themselves (``print(result)``, ``.to_frame()``, ``.to_json()``, ``.plot()``).
The same inputs and seed give the same manifest as ``harness-ext reduce``.

Examples
--------
>>> import harness_ext as hx                                            # doctest: +SKIP
>>> matrix = hx.load_matrix("harness-ext.duckdb", benchmark="mmlu")      # doctest: +SKIP
>>> reduced = hx.reduce(matrix, budget=8)                                # doctest: +SKIP
>>> reduced.write("reduced")                                             # doctest: +SKIP
>>> hx.predict(reduced, {"abstract_algebra": 0.31, ...}).aggregate       # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional, Union

import pandas as pd

from ..errors import HarnessExtError, StoreError
from .reduction.manifest import DEFAULT_SELECTOR
from .reduction.manifest_steps import weighting_with_file

__all__ = ["ingest", "load_matrix", "predict", "reduce", "reduce_items"]

PathLike = Union[str, os.PathLike]


def _not_a_frame(value, func: str) -> None:
    # A DataFrame is iterable (its column names) and has a str(): without this check ingest read
    # each column name as a file path and load_matrix printed the frame as a missing store's path.
    if isinstance(value, (pd.DataFrame, pd.Series)):
        raise HarnessExtError(f"{func}() takes a path, not a {type(value).__name__}: a DataFrame of scores "
                              "(models x datasets) goes straight to harness_ext.reduce(), and a new model's scores "
                              "to harness_ext.predict()")


def _as_float(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    """``frame`` as floats, or an error naming its text columns and its repeated model or dataset names."""
    try:
        out = frame.astype(float)
    except (TypeError, ValueError):
        # Which columns: a value that is there but is no number (a model family, a date left in the frame).
        bad = [str(c) for c in frame.columns
               if (pd.to_numeric(frame[c], errors="coerce").isna() & frame[c].notna()).any()]
        raise HarnessExtError(f"{what}: {len(bad)} column(s) hold values that are not numbers: {', '.join(bad[:5])}"
                              f"{' ...' if len(bad) > 5 else ''}; keep only score columns (models x datasets)") from None
    for axis, label in ((frame.index, "model"), (frame.columns, "dataset")):
        if not axis.is_unique:
            twice = sorted({str(v) for v in axis[axis.duplicated()]})
            raise HarnessExtError(f"{what}: a {label} named more than once: {', '.join(twice[:5])}"
                                  f"{' ...' if len(twice) > 5 else ''}; one row per model, one column per dataset")
    return out


def _existing_store(store: Optional[PathLike]) -> str:
    from ..store.db import default_db_path

    _not_a_frame(store, "load_matrix")
    path = str(store) if store is not None else default_db_path()
    if path != ":memory:" and not Path(path).exists():
        raise HarnessExtError(f"no harness-ext store at {path}: ingest result files into it first "
                              "(harness_ext.ingest or 'harness-ext ingest')")
    return path


def _seed(seed) -> int:
    """``seed`` as an int, or an error naming it (``int("x")``'s own message did not say which argument)."""
    import numbers

    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise HarnessExtError(f"seed must be an integer (e.g. seed=0), not {seed!r}")
    return int(seed)


def _names(value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    return tuple(value)


def ingest(paths, store: Optional[PathLike] = None, *, adapter: Optional[str] = None, group: Optional[str] = None,
           reread: bool = False, meta_columns=None, column_meta: Optional[PathLike] = None,
           mteb_split: Optional[str] = None, mteb_languages=None, keep_reference_rows: bool = False,
           models_as_columns: bool = False):
    """Read result files into a store (created if needed), transactionally and idempotently.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Result files or directories (walked recursively): lm-eval, lighteval, HELM, BIG-bench, Every Eval
        Ever, MTEB, Inspect AI logs, leaderboard CSVs and any format an adapter plugin reads; per-sample logs,
        lighteval details and item-response tables (Parquet or CSV, one score per model and item) go to the
        samples table.
    store : path-like, optional
        The DuckDB store; default ``$HARNESS_EXT_DB`` or ``./harness-ext.duckdb``.
    adapter : str, optional
        Force this adapter instead of detecting each file's format.
    group : str, optional
        Benchmark group the ingested benchmarks join (``load_matrix(benchmark=group)``).
    reread : bool, default False
        Read again the files an older version of their reader stored (``harness-ext ingest --reread``), replacing
        what that reading stored, all or nothing per file; without it such files are left as they are and counted
        (``IngestReport.n_older_reader``).
    meta_columns, column_meta, mteb_split, mteb_languages : optional
        Reading options, as ``harness-ext ingest --meta-columns`` (CSV columns stored as model metadata; a list
        or a comma-separated string), ``--column-meta`` (a sidecar YAML for every CSV), ``--mteb-split`` and
        ``--mteb-languages`` (:func:`harness_ext.store.ingest_files.reading_options`).
    keep_reference_rows : bool, default False
        As ``harness-ext ingest --keep-reference-rows``: a CSV's reference rows ("Random", "Human"), wide or long,
        stored as models rather than as the dataset's chance level and reference scores; an item table's stored as a
        model's item scores rather than left out.
    models_as_columns : bool, default False
        As ``harness-ext ingest --models-as-columns``: every CSV/TSV read as one row per dataset and one column per
        model (a file's sidecar says it with ``models: columns``).

    Returns
    -------
    harness_ext.store.ingest.IngestReport
        Per file: ingested, unchanged, skipped (with the reason) or conflicting.

    References
    ----------
    Each file is one transaction, stored whole or not at all; a skipped file is reported with its reason.
    """
    from ..store.db import Store, default_db_path
    from ..store.ingest import ingest_paths
    from ..store.ingest_files import reading_options

    _not_a_frame(paths, "ingest")
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = list(paths)
    # As 'harness-ext ingest' (exit 1): nothing that exists is an error, before the store file is created.
    if not any(Path(p).exists() for p in paths):
        raise HarnessExtError(f"ingest(): no such file or folder: {', '.join(map(str, paths[:5]))}"
                              f"{' ...' if len(paths) > 5 else ''}" if paths else "ingest(): no paths given")
    options = reading_options(meta_columns, column_meta, mteb_split, mteb_languages, keep_reference_rows,
                              models_as_columns)
    with Store.open(str(store) if store is not None else default_db_path()) as s:
        return ingest_paths(s, list(paths), adapter=adapter, options=options, group=group, reread=reread)


def load_matrix(store: Optional[PathLike] = None, benchmark=None, *, metric: Optional[str] = None,
                datasets=None, models=None, source: Optional[str] = None,
                num_fewshot: Optional[int] = None, rows: str = "model", dense=False, normalise: str = "chance",
                aggregates=False, chance_file: Optional[PathLike] = None, aliases: bool = True,
                exclude_models=None) -> pd.DataFrame:
    """The models x datasets performance matrix of a store, as ``harness-ext matrix`` builds it.

    Parameters
    ----------
    store : path-like, optional
        An existing store; default ``$HARNESS_EXT_DB`` or ``./harness-ext.duckdb``.
    benchmark : str or sequence of str, optional
        Benchmark(s) or benchmark group(s), or globs of their names (``"opencompass_*"``); default all.
    metric, datasets, models, source, num_fewshot, rows, dense, normalise, aggregates, chance_file, aliases
        As :class:`harness_ext.store.matrix.MatrixQuery` (globs for ``datasets``/``models``/``source``; a list of
        globs for ``datasets`` or ``models`` keeps a name that matches any).
        ``normalise="none"`` gives the harness's own scores (what :func:`predict` takes).
    exclude_models : str or sequence of str, optional
        Globs on model names left out after ``models`` (``--exclude-models``): hold models out of
        :func:`reduce` to check its predictions on them. A model is matched on any of its names and left out with
        all of them; ``attrs["excluded"]`` says which (and the globs that matched none), and :func:`reduce`
        records it in the manifest.

    Returns
    -------
    pandas.DataFrame
        Models x datasets, NaN where a model has no result (never cut to a dense block unless
        ``dense``); ``attrs`` carry the query, per-dataset metadata and a fingerprint, which
        :func:`reduce` records in the manifest.

    References
    ----------
    SimBA §2 (the performance matrix); missing cells are kept as missing, never cut to a dense block.
    """
    from ..store.db import Store
    from ..store.globs import query_globs
    from ..store.matrix import MatrixQuery, load_matrix as _load

    query = MatrixQuery(benchmarks=_names(benchmark), metric=metric, datasets=query_globs(datasets),
                        models=query_globs(models), exclude_models=query_globs(exclude_models), source=source,
                        num_fewshot=num_fewshot, dense=dense, rows=rows, normalise=normalise, aggregates=aggregates,
                        chance_file=None if chance_file is None else str(chance_file), aliases=aliases)
    with Store.open(_existing_store(store), read_only=True) as s:
        return _load(s, query)


def reduce(matrix: Union[pd.DataFrame, PathLike], *, budget=None, seed: int = 0, benchmark=None,
           selector: str = DEFAULT_SELECTOR, similarity: Optional[str] = None, predictor: str = "lowrank",
           weighting: str = "uniform", weights: Optional[PathLike] = None, costs=None, n_random: int = 200,
           n_random_subsets: Optional[int] = None, group_name: str = "harness_ext_reduced",
           store: Optional[PathLike] = None, items: Optional[int] = None, local_data=(),
           min_availability: Optional[float] = None, demote_saturated: bool = False,
           selector_params: Optional[dict] = None, predictor_params: Optional[dict] = None, **query):
    """Choose a small subset of datasets that predicts the rest, with the evidence, as ``harness-ext reduce``.

    Parameters
    ----------
    matrix : pandas.DataFrame or path-like
        A matrix from :func:`load_matrix`, or a store path (then ``benchmark`` is required when it holds several).
    budget : str, int or float, optional
        ``8`` (datasets), ``0.15`` (fraction), ``"coverage=0.95"`` (SimBA's coverage target) or ``"cost=50000"``.
        Default: 10% of the datasets, at least 2 and fewer than all (``budget.default_subset_size``), recorded.
    seed : int
        Seed of the selector, the random baselines and the cross-validation folds.
    selector, similarity, predictor, weighting : str
        Plugin names (``harness-ext plugins``); a selector that takes no ``similarity`` warns it went unused.
    weights : path-like, optional
        Dataset weights (JSON or CSV, e.g. ``harness-ext weights --emit-weights``); implies ``weighting="user"``.
    costs : dict or path-like, optional
        Cost of running each dataset (name -> cost, or a JSON/CSV file); default the recorded sample counts.
    n_random, n_random_subsets : int
        Random orders for the coverage baseline; random subsets the chosen one is compared with.
    group_name : str
        lm-eval group name and file stem of the harness files.
    store : path-like, optional
        With a DataFrame ``matrix``: the store it came from, recorded in the manifest and searched for the
        lm-eval task configurations the reduced folder needs.
    items : int, optional
        Keep the dataset subset; run only this many anchor items of each subset task with per-sample logs in the
        store (``reduce --item-design anchors``; ``.write()`` adds ``<group>_samples.json``). On a store of item-level
        results only, it is :func:`reduce_items` (N random items of every task, ``reduce --items N``).
    local_data : sequence of path-like
        Folders of your own task data: task configurations' absolute data paths inside them are kept in the task
        YAMLs; any other local path is left out, with a note (:mod:`harness_ext.store.task_yaml_safety`).
    min_availability : float, optional
        Datasets run by fewer than this share of the models are chosen last (default 0.5; 0: off), so a new model
        can run the subset; ``selection.availability`` lists them.
    demote_saturated : bool
        Choose for models stronger than every model in the matrix: a dataset with little headroom below its
        known ceiling is chosen last (:mod:`harness_ext.methods.prowl.saturation`; ``reduce --demote-saturated``).
    selector_params, predictor_params : dict, optional
        More parameters of ``selector`` and ``predictor`` (``{"rank": 2}``), as ``reduce --selector-param``.
    **query
        With a store path ``matrix``: which matrix, as :func:`load_matrix` takes it (``models="*deduped*"``,
        ``datasets``, ``exclude_models``, ``metric``, ...; ``reduce --models`` etc.). With a DataFrame, select its
        rows and columns yourself (or with :func:`load_matrix`).

    Returns
    -------
    ReduceResult
        ``.manifest``, ``.subset``, ``.expected_error``, ``.random_subsets``, ``.budget_curve()``;
        ``.write(folder)`` writes the manifest, lm-eval group YAML (and task YAMLs), HELM conf and
        task list; ``.plot(path)`` the error-vs-budget figure.

    References
    ----------
    SimBA §3 (coverage, |S*|), §4 (prediction); Ailem et al. §3.3 (weighting); Hastie, Tibshirani &
    Friedman (2009) §7.10 (the cross-validated evidence, over held-out models).
    """
    from .reduction.reduce import reduce_matrix

    seed = _seed(seed)  # before any work: a bad seed is refused at once
    _check_query(matrix, query)
    try:
        df, db = _reduce_input(matrix, benchmark, store, query)
    except StoreError as exc:  # a store of item-level results only: the item-level reduction, or this error
        return _reduce_item_store(exc, matrix, benchmark, items, {"budget": budget, "costs": costs}, query,
                                  seed=seed, group_name=group_name, local_data=local_data)
    weighting, weighting_params, costs, selector_params = _reduce_settings(weighting, weights, costs, selector_params,
                                                                           demote_saturated)
    return reduce_matrix(df, budget=None if budget is None else str(budget), selector=selector, similarity=similarity,
                         predictor=predictor, weighting=weighting, weighting_params=weighting_params,
                         random_state=seed, n_random=n_random, group_name=group_name, db=db, costs=costs,
                         n_random_subsets=n_random_subsets, items=items, local_data=local_data,
                         min_availability=min_availability, predictor_params=predictor_params,
                         selector_params=selector_params)


def _item_level_store(matrix, benchmark) -> bool:
    """Whether the store path ``matrix`` holds item-level results (of ``benchmark``, if named)."""
    if not isinstance(matrix, (str, os.PathLike)) or not Path(matrix).exists():
        return False
    from ..store.db import Store
    from .reduction.item_reduce import item_catalogue

    with Store.open(str(matrix), read_only=True) as s:
        try:
            return not item_catalogue(s, list(_names(benchmark)) or None).empty
        except StoreError:
            return False


def reduce_items(store: Optional[PathLike] = None, items: Optional[int] = None, *, benchmark=None, datasets=None,
                 models=None, metric: Optional[str] = None, estimator: Optional[str] = None, seed: int = 0,
                 n_total: Optional[int] = None, design: str = "random", allocation: str = "neyman",
                 n_strata: int = 5, stratum_allocation: str = "proportional",
                 group_name: str = "harness_ext_reduced", local_data=(), exclude_models=None,
                 n_items: Optional[int] = None, _notes=()):
    """Choose items to run of every task with item-level results, as ``harness-ext reduce --items N``.

    The item-level reduction: no dataset subset, but ``items`` items of *every* task of the store's
    item-level results (lm-eval ``samples_*.jsonl`` logs, item-response tables, HELM per-instance stats),
    with the expected error of the full benchmark score predicted from them. It calls the function the
    command calls, so the same store, options and seed give a byte-identical manifest. (:func:`reduce`
    with ``items=`` keeps a *dataset subset* and runs only anchor items of its tasks; on a store with
    item-level results only, ``reduce(store, items=N)`` is this function.)

    Parameters
    ----------
    store : path-like, optional
        An existing store with item-level results; default ``$HARNESS_EXT_DB`` or ``./harness-ext.duckdb``.
    items : int, optional
        Items per task (``--items``, and :func:`reduce`'s ``items=``); a task with no more items runs whole. Give
        this or ``n_total``. ``n_items=``, its former name, still works and warns (``DeprecationWarning``).
    benchmark : str or sequence of str, optional
        Benchmark(s) of the item-level results; required when they span several.
    datasets, models : str or sequence of str, optional
        Globs on task names and on the population's model names (``--datasets``, ``--models``).
    exclude_models : str or sequence of str, optional
        Globs on model names left out of the population after ``models`` (``--exclude-models``), recorded in the
        manifest's ``source.excluded_models``.
    metric, estimator : str, optional
        The per-item metric (default: per task) and the item estimator plugin (default: the design's).
    seed : int
        Seed of the item draw and of the cross-validated expected error (``--seed``).
    n_total, design, allocation, n_strata, stratum_allocation
        ``--items-total``, ``--item-design`` (``random``, ``stratified``, ``irt-anchors``, ``search``),
        ``--item-allocation``, ``--item-strata``, ``--stratum-allocation``.
    group_name : str
        lm-eval group name and file stem of the harness files.
    local_data : sequence of path-like
        Folders of your own task data (as :func:`reduce`).

    Returns
    -------
    harness_ext.methods.reduction.item_reduce_result.ItemReduceResult
        ``.manifest`` (kind ``"items"``), ``.to_frame()`` (per task the items run and the expected error),
        ``.write(folder)`` (manifest, lm-eval group YAML, ...), ``.plot(path)``; :func:`predict` takes it.

    References
    ----------
    Zhang, Dorner and Hardt (2025), §4-5 (predicting the benchmark score from a random sample of items).
    """
    from ..safe_output import check_group_name
    from ..store.globs import query_globs
    from ..store.task_yaml_safety import local_data_folders
    from .reduction.item_reduce import reduce_items as _reduce_items

    if design == "anchors":
        raise HarnessExtError("design='anchors' keeps a dataset subset: use harness_ext.reduce(matrix, items=N)")
    items = _renamed_items(items, n_items)
    check_group_name(group_name)
    local_data = local_data_folders(local_data, "local_data")
    _not_a_frame(store, "reduce_items")
    return _reduce_items(_existing_store(store), items, benchmarks=list(_names(benchmark)) or None,
                         datasets=query_globs(datasets), models=query_globs(models),
                         exclude_models=query_globs(exclude_models), metric=metric,
                         estimator=estimator, random_state=_seed(seed), group_name=group_name, warnings=list(_notes),
                         local_data=local_data, n_total=n_total, design=design, allocation=allocation,
                         n_strata=n_strata, stratum_allocation=stratum_allocation)


def _renamed_items(items, n_items):
    """:func:`reduce_items`'s count of items per task, given as ``items=`` or by its former name ``n_items=`` (which
    warns): one name for it across :func:`reduce`, :func:`reduce_items` and ``--items``."""
    if n_items is None:
        return items
    if items is not None:
        raise HarnessExtError("reduce_items: give items= only (n_items= is its former name)")
    import warnings

    warnings.warn("reduce_items(n_items=...) is now reduce_items(items=...), as reduce(items=...) and --items name it; "
                  "n_items= will be removed", DeprecationWarning, stacklevel=3)
    return n_items


def _reduce_settings(weighting, weights, costs, selector_params, demote_saturated: bool) -> tuple:
    """:func:`reduce`'s settings as :func:`~harness_ext.methods.reduction.reduce.reduce_matrix` takes them:
    ``(weighting, weighting_params, costs, selector_params)``, a weights file and a costs file read."""
    from .reduction.budget import read_costs

    weighting, weighting_params = weighting_with_file(weighting, weights)
    costs = read_costs(costs) if isinstance(costs, (str, os.PathLike)) else costs
    selector_params = {**(selector_params or {}), **({"demote_saturated": True} if demote_saturated else {})}
    return weighting, weighting_params, costs, selector_params or None


def _reduce_item_store(exc: Exception, store, benchmark, items, ignored: dict, query: dict, **kwargs):
    """:func:`reduce` on a store of item-level results only: it has no matrix, and what a user can do with it is
    the item-level reduction, which ``harness-ext reduce --items N`` runs on it (:func:`reduce_items`). ``exc``:
    why the store gave no matrix, raised again when the store holds no item-level results either. ``query``: the
    matrix options; the population's selection, which reduce_items also makes, goes to it, the rest are said
    unused."""
    shared = {k: query[k] for k in ("datasets", "models", "exclude_models", "metric") if k in query}
    ignored = {**ignored, **{k: v for k, v in query.items() if k not in shared}}
    kwargs.update(shared)
    if not _item_level_store(store, benchmark):
        raise exc
    if items is None:
        raise HarnessExtError(f"{store} holds item-level results and no dataset-level ones: reduce them with "
                              "harness_ext.reduce_items(store, items, benchmark=...) (as 'harness-ext reduce "
                              "--items N')")
    unused = [name for name, value in ignored.items() if value is not None]
    # Options of a dataset subset: said in the manifest's warnings, as the command says them, not dropped silently.
    notes = [f"{', '.join(unused)} ignored: reduce(store, items=N) on a store of item-level results runs N "
             "items of every task (harness_ext.reduce_items)"] if unused else []
    return reduce_items(store, items, benchmark=benchmark, _notes=notes, **kwargs)


def _check_query(matrix, query: dict) -> None:
    """Refuse :func:`reduce`'s matrix options that are not :func:`load_matrix`'s, or that come with a DataFrame."""
    import inspect

    if not query:
        return
    known = [p for p in inspect.signature(load_matrix).parameters if p not in ("store", "benchmark")]
    unknown = sorted(set(query) - set(known))
    if unknown:
        raise HarnessExtError(f"reduce() got unexpected keyword argument(s) {', '.join(unknown)}: besides its own, it "
                              f"takes load_matrix's options with a store path ({', '.join(known)})")
    if isinstance(matrix, pd.DataFrame):
        raise HarnessExtError(f"{', '.join(sorted(query))}= select a store's matrix: give reduce() the store path "
                              "instead of the DataFrame, or select the DataFrame's rows and columns yourself (or "
                              "with load_matrix)")


def _reduce_input(matrix, benchmark, store, query=None) -> tuple:
    """``(matrix, store path or None)`` for :func:`reduce`: a DataFrame as float (its ``attrs`` kept), or the
    matrix of a store path's ``benchmark`` (required when the store holds several), selected by ``query``
    (:func:`load_matrix`'s options)."""
    if isinstance(matrix, pd.DataFrame):
        # attrs (scales, dataset metadata) kept: astype copies them.
        return _as_float(matrix, "the matrix"), None if store is None else str(store)
    if not isinstance(matrix, (str, os.PathLike)):
        raise HarnessExtError(f"reduce() takes a DataFrame (models x datasets, named rows and columns) or a store "
                              f"path, not {type(matrix).__name__}")
    db = _existing_store(matrix)
    if not _names(benchmark):
        from ..store.db import Store

        with Store.open(db, read_only=True) as s:
            names = list(s.benchmarks()["benchmark"])
        if len(names) > 1:
            raise HarnessExtError(f"the store holds {len(names)} benchmarks ({', '.join(names[:8])}"
                                  f"{' ...' if len(names) > 8 else ''}): name one or more with benchmark=")
    return load_matrix(db, benchmark, **(query or {})), db


def _manifest_of(manifest) -> tuple:
    """``(manifest dict, where it came from)`` from a ReduceResult, a dict or a manifest file/folder."""
    from .reduction.manifest import load_manifest, validate_manifest
    from .reduction.item_reduce_result import ItemReduceResult
    from .reduction.reduce import ReduceResult

    if isinstance(manifest, (ReduceResult, ItemReduceResult)):
        # As predict reads it from manifest.json: plain JSON types.
        return json.loads(json.dumps(manifest.manifest)), None if manifest.out is None else manifest.out / "manifest.json"
    if isinstance(manifest, dict):
        from .reduction.item_manifest import is_item_manifest, validate_item_manifest

        (validate_item_manifest if is_item_manifest(manifest) else validate_manifest)(manifest)
        return manifest, None
    return load_manifest(manifest), Path(manifest)


def _score_frame(scores, manifest: dict) -> pd.DataFrame:
    """Raw scores (models x manifest dataset names) from a DataFrame, Series or mapping keyed by dataset or task."""
    from harness_ext.methods.reduction.harness_names import lm_eval_task_list
    from harness_ext.methods.reduction.predict_links import dataset_short_name

    if isinstance(scores, dict):
        scores = pd.Series(scores, name="new_model")
    if isinstance(scores, pd.Series):
        scores = scores.to_frame(name=scores.name if scores.name is not None else "new_model").T
    if not isinstance(scores, pd.DataFrame):
        raise HarnessExtError(f"scores must be a DataFrame (models x datasets), a Series or a dict, "
                              f"not {type(scores).__name__}")
    keys: dict = {}
    for d in manifest["datasets"]:
        for k in {d["name"], dataset_short_name(d), d.get("task"), *lm_eval_task_list(d)} - {None, ""}:
            keys.setdefault(k, set()).add(d["name"])
    rename, unknown = {}, []
    for c in scores.columns:
        hit = keys.get(str(c), set())
        if len(hit) == 1:
            rename[c] = next(iter(hit))
        else:
            unknown.append(str(c))
    if unknown:
        names = [d["name"] for d in manifest["datasets"]]
        raise HarnessExtError(f"{len(unknown)} score columns match no single dataset of the manifest: "
                              f"{', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''}; its datasets are "
                              f"{', '.join(names[:8])}{' ...' if len(names) > 8 else ''} (or their lm-eval task names)")
    frame = _as_float(scores, "the scores").rename(columns=rename)
    frame.index = [str(i) for i in frame.index]
    # A HELM dataset given as the lm-eval tasks it runs as (HELM Classic's MMLU: 5 mmlu_<subject> scores) is their
    # mean, as HELM scores it, and said (the prompts differ); a dataset named twice (name and task) keeps its first.
    by_name = {d["name"]: d for d in manifest["datasets"]}
    several = {c for c in set(frame.columns) if len(tasks := lm_eval_task_list(by_name[c])) > 1
               and {str(k) for k, v in rename.items() if v == c} <= set(tasks)}
    grouped = frame.T.groupby(level=0)
    out = grouped.first().T
    for c in several:
        out[c] = grouped.mean().T[c]
    out.attrs["cross_harness"] = sorted(several)
    # (model, dataset) cells the caller computed as weighted anchor estimates (lm-eval's group row, from the logs)
    out.attrs["anchored"] = [tuple(a) for a in scores.attrs.get("anchored", ())]
    return out


def predict(manifest, results, *, level: float = 0.9, adapter: Optional[str] = None,
            estimator: Optional[str] = None):
    """Predict a new model's full benchmark, with intervals (90% by default), from its results on the subset.

    Parameters
    ----------
    manifest : ReduceResult, ItemReduceResult, dict or path-like
        The reduction (:func:`reduce` or :func:`reduce_items`), a manifest, or ``manifest.json`` (or its folder).
    results : path-like, sequence of path-like, DataFrame, Series or dict
        Result files or folders of the new model(s) (read with the ``ingest`` adapters into a
        throw-away store), or raw scores on the harness's own scale: a DataFrame (one row per
        model, columns named by the manifest's datasets or their lm-eval tasks), a Series or a
        dict for one model. Missing subset datasets widen the intervals.
    level : float
        The intervals' level, in (0, 1). Conformal intervals (the default ``lowrank``
        predictor) are calibrated again at this level from the manifest's training matrix.
    adapter : str, optional
        Read the result files with this adapter instead of detecting their format (``predict --adapter``;
        ``harness-ext plugins --kind adapters``).
    estimator : str, optional
        For an item-level manifest (:func:`reduce_items`): the item estimator to use instead of the manifest's
        (``predict --item-estimator``; ``harness-ext plugins --kind item_estimators``).

    Returns
    -------
    PredictionResult
        ``.to_frame()`` (every dataset: observed or predicted score and interval, on the
        normalised and the harness's own scale), ``.aggregate`` (the full-benchmark score on the
        harness's metric, e.g. MMLU ``acc`` weighted as lm-eval's mmlu group, with its interval,
        and the normalised aggregate beside it), ``.warnings``, ``.plot()``, ``.to_json()``. No file is written
        (``harness-ext predict`` also writes lm-eval-schema results next to the run).

    References
    ----------
    SimBA §4 (prediction from the subset); Zhao et al. §3 (predictive uncertainty).
    """
    from .reduction.predict import predict_from_manifest, predict_scores

    doc, where = _manifest_of(manifest)
    items = doc.get("kind") == "items"
    # What the command refuses, refused here too; an option that would do nothing is said, not dropped.
    if estimator is not None and not items:
        raise HarnessExtError(f"estimator={estimator!r}: an item estimator is for an item-level manifest "
                              "(harness_ext.reduce_items); this one is a dataset subset: leave estimator out")
    if adapter is not None and items:
        raise HarnessExtError(f"adapter={adapter!r}: the manifest is item-level (reduce_items), predicted from "
                              "per-item logs or tables, which no adapter reads; leave adapter out")
    if isinstance(results, (pd.DataFrame, pd.Series, dict)):
        if adapter is not None:
            raise HarnessExtError(f"adapter={adapter!r} reads result files; scores given as a "
                                  f"{type(results).__name__} need none: leave adapter out")
        if items:  # was "the manifest embeds no training matrix", which said nothing of what to give instead
            raise HarnessExtError(f"an item-level manifest (reduce_items) predicts from the new model's answers to the "
                                  f"drawn items, not from scores given as a {type(results).__name__}: give the path of "
                                  "its lm-eval --log_samples logs or of an item-response table (Parquet or CSV: "
                                  "columns model, item, score; the task is a task column or the file's name)")
        return predict_scores(doc, _score_frame(results, doc), manifest_path=where, level=level)
    if isinstance(results, (str, os.PathLike)):
        results = [results]
    try:
        results = list(results)
    except TypeError:  # None, a number: no paths at all
        results = []
    if not results or not all(isinstance(p, (str, os.PathLike)) for p in results):
        raise HarnessExtError("predict() takes the new model's results: result files or folders (a path or a list of "
                              "paths), or its scores as a DataFrame, Series or dict")
    if items:  # reduce --items: from the new model's per-item logs
        from .reduction.item_predict import predict_items

        return predict_items(doc, [str(p) for p in results], manifest_path=where, level=level, estimator=estimator)
    return predict_from_manifest(doc, [str(p) for p in results], manifest_path=where, level=level, adapter=adapter)
