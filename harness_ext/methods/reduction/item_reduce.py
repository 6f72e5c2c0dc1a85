"""Item-level reduction: a few dozen random items of every task, and what predict needs to estimate from them.

``reduce --items N`` on a store holding item-level results (lm-eval ``samples_*.jsonl`` logs,
item-response tables, HELM per-instance scores) draws ``N`` items of each task of the benchmark by
simple random sampling (seeded per task), and writes a manifest of kind ``"items"``
(:mod:`harness_ext.methods.reduction.item_manifest`) holding, per task, the items to run and the
population's answers to every item. A new model runs only those items (lm-eval's ``--samples``);
``predict`` estimates each task's full score and the benchmark's from them
(:mod:`harness_ext.methods.reduction.item_predict`).

Why a random design: the design-based estimators (the sample mean and the cross-fitted AIPW of Zhang,
Dorner and Hardt 2025) are unbiased under it whatever the new model is, so their intervals hold at the
frontier too, where regression on the population and anchor points fail (Zhang, Dorner and Hardt
2025, Table 2). Anchor items (tinyBenchmarks) remain available as ``--item-design anchors``.

The expected error is measured on the population itself, with the items just drawn: interpolation
(5 folds of models, each predicted by the others) and extrapolation (the weakest half of the models
predict the strongest 30%, the protocol of Zhang, Dorner and Hardt 2025, §5).

References
----------
Zhang, Dorner and Hardt (2025), "How Benchmark Prediction from Fewer Data Misses the Mark", NeurIPS,
§4-5 (AIPW, interpolation and extrapolation splits). Cochran (1977), Sampling Techniques, §2.
"""

from __future__ import annotations

import hashlib
import json
from typing import Optional

import numpy as np
import pandas as pd

from ...errors import HarnessExtError, StoreError
from ...store.globs import as_globs, matches, select_names, unmatched_note
from ...report import plural
from .item_design_plan import check_binary_answers, check_design, design_block, task_seed
from .item_benchmark import KEY as BENCHMARK_CORRELATION
from .item_manifest import KIND, encode_ids, encode_scores, helm_instances_field, item_id_field, listed_by_id
from .inspect_samples import FILE_NAME as INSPECT_FILE, inspect_field, inspect_only, inspect_task_count
from .item_reduce_result import ItemReduceResult

DEFAULT_ESTIMATOR = "crosstask"
#: Preferred per-item metric when a task logs several and none is asked for (lm-eval's usual primary metrics).
PREFERRED_METRICS = ("acc", "exact_match", "acc_norm")
#: A population model missing more than this share of a task's items is left out of that task.
MAX_MISSING_SHARE = 0.5
#: Why the default estimator, recorded in the manifest (``design.estimator_why``); figures from
#: ``benchmarks/quality_items.py`` (BenchPred's protocol, 20 seeds, every shared item table).
ESTIMATOR_WHY = (
    "crosstask: a new model answers the sampled items of every task, so each task's estimate uses them all: "
    "inside the population a kernel ridge regression of the task's score on every task's sampled answers "
    "(random sampling + learn across tasks, settings by leave-one-out), beyond it the design-based AIPW, whose "
    "interval holds whatever the model is. On the shared HELM Lite and Open LLM Leaderboard item tables (50 "
    "items per task, the splits of Zhang, Dorner and Hardt 2025, mean over 8 tables) its mean |error| was "
    "0.87x the best of the paper's four methods inside the population (at most 0.97x on any table) and 0.97x "
    "the paper's AIPW at the frontier; the regression alone 0.86x inside but 2.3x at the frontier; the "
    "design-based AIPW 1.18x inside and 1.0x at the frontier")


#: Why a store's item-level results give nothing to fit: each task's come from one model.
FEW_MODELS = "no task has item-level results from 2 or more models; nothing to reduce"


class NoItemResults(StoreError):
    """The store holds no item-level results for the query (``reduce --items`` then draws from task sizes)."""


def item_catalogue(store, benchmarks=None, datasets: Optional[str] = None) -> pd.DataFrame:
    """One row per (benchmark, task, metric) with item-level scores: ``models``, ``items``.

    ``benchmarks``: keep these (lm-eval logs, which carry none, count as ``lm_eval``); ``datasets``: a
    glob on task names.
    """
    from ...store.samples import _has_samples, source_benchmark_sql

    if not _has_samples(store):
        raise NoItemResults("the store has no item-level results: ingest lm-eval samples_*.jsonl logs, "
                            "item-response tables or HELM runs with per-instance stats first")
    bench = source_benchmark_sql(store)
    cat = store.con.execute(
        f"""SELECT {bench} AS benchmark, s.task, s.metric, count(DISTINCT s.model) AS models,
                   count(DISTINCT s.doc_id) AS items
            FROM samples s JOIN sample_sources src USING (source_id)
            GROUP BY ALL ORDER BY benchmark, s.task, s.metric""").df()
    every = cat
    if benchmarks:  # names or globs, as the matrix's --benchmark takes them
        wanted = list(benchmarks)
        cat = cat[[b in wanted or matches(b, wanted) for b in cat["benchmark"]]]
    if datasets:
        cat = cat[[matches(t, datasets) for t in cat["task"]]]
    if cat.empty:
        raise NoItemResults(_no_match(every, benchmarks, datasets))
    return cat.reset_index(drop=True)


def _no_match(every: pd.DataFrame, benchmarks, datasets: Optional[str]) -> str:
    """The error of a query matching no item-level results: what was asked, and what the store holds (an item
    table's benchmark is its sidecar's ``benchmark:``, else its folder's name, which users rarely expect)."""
    asked = ", ".join(f"{flag} {v}" for flag, v in (("--benchmark", ", ".join(benchmarks or ())),
                                                      ("--datasets", datasets)) if v)
    held = every.groupby("benchmark", sort=True)["task"].nunique()
    listed_ = ", ".join(f"{b} ({plural(n, 'task', 'tasks')})" for b, n in held.items())
    return (f"no item-level results match {asked or 'the query'}: the store's item-level benchmarks are {listed_} "
            "(an item table's benchmark is its sidecar's benchmark:, else its folder's name; 'harness-ext info' "
            "lists them)")


def pick_metrics(cat: pd.DataFrame, metric: Optional[str]) -> tuple:
    """``(rows, warnings)``: one (benchmark, task, metric) per task: ``metric`` if given, else the task's
    only one, else the first of :data:`PREFERRED_METRICS` it logs, else its first by name (said so)."""
    rows, warnings = [], []
    for (bench, task), g in cat.groupby(["benchmark", "task"], sort=True):
        have = list(g["metric"])
        if metric is not None:
            if metric not in have:
                warnings.append(f"{task}: no per-item {metric!r} (it has {', '.join(have)}); left out")
                continue
            chosen = metric
        elif len(have) == 1:
            chosen = have[0]
        else:
            chosen = next((m for m in PREFERRED_METRICS if m in have), sorted(have)[0])
            warnings.append(f"{task}: per-item metrics {', '.join(have)}; using {chosen} (choose with --metric)")
        rows.append((bench, task, chosen))
    return rows, warnings


def population_answers(store, task: str, metric: str, models: Optional[str] = None, exclude_models=None) -> tuple:
    """``(item ids, model names, models x items answers without gaps, notes)`` of one task.

    Read as integer positions and values (never one string per score), so a 429-model x
    30,000-item task costs its matrix, not a frame of 12.9 million rows. Where a model's item
    comes from two files, the first stored is used (as everywhere the samples are read). A model
    missing more than :data:`MAX_MISSING_SHARE` of the items is left out; the remaining gaps are
    filled with the item's mean over the models that answered it. Both are counted. ``models`` and
    ``exclude_models``: globs on model names (``--models``, then ``--exclude-models``).
    """
    con = store.con
    where = "task = ? AND metric = ?"
    names = [r[0] for r in con.execute(f"SELECT DISTINCT model FROM samples WHERE {where} ORDER BY model",
                                       [task, metric]).fetchall()]
    names = select_names(names, models, exclude_models)[0]
    ids = con.execute(f"SELECT DISTINCT doc_id FROM samples WHERE {where} ORDER BY doc_id",
                      [task, metric]).fetchnumpy()["doc_id"].astype(np.int64)
    twice = con.execute("SELECT count(*) FROM (SELECT model FROM sample_sources WHERE task = ? GROUP BY model "
                        "HAVING count(*) > 1)", [task]).fetchall()[0][0]
    rows = ("SELECT model, doc_id, value FROM samples WHERE " + where
            + (" QUALIFY row_number() OVER (PARTITION BY model, doc_id ORDER BY source_id) = 1" if twice else ""))
    with store.registered(_item_models=pd.DataFrame({"model": names, "mi": np.arange(len(names), dtype=np.int32)}),
                          _item_ids=pd.DataFrame({"doc_id": ids, "di": np.arange(len(ids), dtype=np.int32)})) as c:
        got = c.execute(f"SELECT mi, di, value FROM ({rows}) JOIN _item_models USING (model) "
                        "JOIN _item_ids USING (doc_id)", [task, metric]).fetchnumpy()
    M = np.full((len(names), len(ids)), np.nan)
    M[got["mi"], got["di"]] = got["value"]
    del got
    notes = _first_stored_note(store, task, metric, names) if twice else []
    M, names, gap_notes = fill_item_gaps(M, names)
    return ids, names, M, notes + gap_notes


def fill_item_gaps(M: np.ndarray, names: list) -> tuple:
    """``(answers, names, notes)``: a models x items matrix with NaN where a model has no score, made whole.

    A model missing more than :data:`MAX_MISSING_SHARE` of the items is left out (its task score would be
    mostly filled in); the remaining gaps are filled with the item's mean over the models that answered it
    (an item nobody answered, with 0). ``notes`` counts both, for the user to see.
    """
    notes = []
    thin = np.isnan(M).mean(axis=1) > MAX_MISSING_SHARE
    if thin.any():
        notes.append(f"{plural(int(thin.sum()), 'model')} with scores on fewer than half of the items left out")
        M, names = M[~thin], [m for m, t in zip(names, thin) if not t]
    gaps = np.isnan(M)
    if gaps.any():
        fill = np.nanmean(np.where(gaps.all(axis=0), 0.0, M), axis=0)
        M = np.where(gaps, fill[None, :], M)
        notes.append(f"{plural(int(gaps.sum()), 'missing item score')} filled with the item's mean over the other models")
    return M, names, notes


def _truth_and_estimates(reg, M: np.ndarray, S: np.ndarray, train: np.ndarray, test: np.ndarray, level: float,
                         others=(), design: str = "random", info=None, seed: int = 0):
    from .item_design_plan import held_out_estimate
    from .item_others import fit_predict

    if design == "random":
        est = fit_predict(reg, level, M[train], S, M[test][:, S], [(O[train], it) for O, it in others],
                          [O[test][:, it] for O, it in others])
    else:
        from ...base import limit_threads

        with limit_threads():  # as fit_predict: many small solves, extra BLAS threads only contend
            est = held_out_estimate(design, reg.cls, level, info or {}, M, S, train, test, seed)
    return M[test].mean(axis=1), est


def expected_errors_and_correlation(pops: dict, samples: dict, weights: dict, estimator: str, level: float = 0.9,
                                    random_state: int = 0, n_folds: int = 5, design: str = "random",
                                    infos=None) -> tuple:
    """``(figures, correlation)``: the estimator on the population's own models, and its tasks' error correlation.

    ``pops``: task -> (models x items answers, model names); ``samples``: task -> sampled column
    indices. ``interpolation``: each of ``n_folds`` folds of models predicted from the others.
    ``extrapolation``: the strongest 30% of the models (by their weighted benchmark score) predicted
    from the weakest 50% (Zhang, Dorner and Hardt 2025, §5). Per task: mean |error|, mean width,
    coverage. For the benchmark (models with every task): the same, the tasks combined by
    :func:`~.item_benchmark.benchmark_interval` with ``correlation``, the tasks' error correlation
    estimated from both splits' held-out errors (:func:`~.item_benchmark.correlation_block`; independence
    for a design-based estimator). The benchmark's coverage thus uses a correlation estimated on the
    same models' errors: in-sample for it. ``design`` and ``infos`` (task -> what its estimator needs,
    :func:`~.item_design_plan.draw_task`): the item design.
    """
    from ...plugin_manager import get_registration
    from ...report import progress
    from ..engine.item_agreement import sources_agreement
    from .item_benchmark import correlation_block, is_design_based
    from .item_others import population_others, uses_other_tasks

    reg = get_registration("item_estimators", estimator)
    check_binary_answers(reg, estimator, {t: M for t, (M, _) in pops.items()}, design)
    others = {t: population_others(pops, samples, t) if uses_other_tasks(reg) else [] for t in pops}
    agreement = {t: sources_agreement(pops[t][0], others[t]) for t in pops}  # the population's, read once per task
    names = sorted({m for _, models in pops.values() for m in models})
    rng = np.random.default_rng(random_state)
    fold_of = dict(zip(names, rng.permutation(len(names)) % n_folds))
    common = sorted(set.intersection(*(set(models) for _, models in pops.values())))
    wsum = sum(weights.values())
    strength = {m: sum(weights[t] * pops[t][0][pops[t][1].index(m)].mean() for t in pops) / wsum for m in common}
    order = sorted(common, key=lambda m: strength[m])
    weak, strong = set(order[: len(order) // 2]), set(order[len(order) - int(round(0.3 * len(order))):])
    out, split_cells = {}, {}
    # the held-out fits are most of an item-level reduce's time (minutes on many tasks): a bar a user sees move
    bar = progress(None, total=2 * len(pops), desc="held-out estimates (task x split)")
    for split in ("interpolation", "extrapolation"):
        per_task, cells = {}, {}
        for t, (M, models) in pops.items():
            m_arr = np.asarray(models)
            parts = ([(np.array([fold_of[m] != k for m in models]), np.array([fold_of[m] == k for m in models]))
                      for k in range(n_folds)] if split == "interpolation"
                     else [(np.isin(m_arr, list(weak)), np.isin(m_arr, list(strong)))])
            got, n_widened = _task_cells(reg, M, np.asarray(samples[t]), m_arr, parts, level, others[t], design,
                                         (infos or {}).get(t), task_seed(random_state, t))
            bar.update()
            if got:
                per_task[t] = _figures(*_cell_arrays(got.values()), len(got))
                if n_widened is not None:  # the estimator's heuristics, counted where its figures are
                    per_task[t].update(n_widened=n_widened, agreement=agreement[t])
                cells.update({(m, t): c for m, c in got.items()})
        out[split], split_cells[split] = {"tasks": per_task}, cells
    bar.close()
    tasks = sorted({t for c in split_cells.values() for _, t in c})
    corr = correlation_block(split_cells, tasks, common, estimator, is_design_based(reg))
    for split, cells in split_cells.items():
        out[split]["benchmark"] = _benchmark_figures(cells, weights, common, level, corr["matrix"], tasks)
    return out, corr


def _task_cells(reg, M, S, m_arr, parts, level, others, design, info, seed) -> tuple:
    """``(cells, n_widened)`` of one task's held-out models over the ``parts`` (train, test): ``cells``, model ->
    (estimate, lower, upper, truth, se); ``n_widened``, how many of them the estimator widened the interval of for
    lying beyond its training models on the other tasks' sampled items (``crosstask``; None for an estimator that
    does not look, or a benchmark of one task)."""
    from .item_benchmark import task_standard_error

    if len(S) >= M.shape[1]:  # every item runs: the task's score is measured, not estimated
        return {}, None
    cells, n_widened = {}, None
    unit = bool(np.isin(M, (0.0, 1.0)).all())
    for train, test in parts:
        if train.sum() < 2 or not test.any():
            continue
        truth, e = _truth_and_estimates(reg, M, S, train, test, level, others, design, info, seed)
        se = task_standard_error(e.lower, e.upper, e.se, level)
        lower, upper = np.asarray(e.lower, dtype=float), np.asarray(e.upper, dtype=float)
        if unit:  # as predict gives a proportion's interval: within [0, 1]
            lower, upper = np.maximum(lower, 0.0), np.minimum(upper, 1.0)
        for m, v, lo, hi, tr, s in zip(m_arr[test], e.estimate, lower, upper, truth, se):
            cells[m] = (float(v), float(lo), float(hi), float(tr), float(s))
        beyond = None if e.beyond_sources is None else np.asarray(e.beyond_sources, dtype=float)
        if beyond is not None and np.isfinite(beyond).any():  # looked at: there are other tasks
            n_widened = (n_widened or 0) + int(np.sum(beyond > 0))
    return cells, n_widened


def _cell_arrays(cells) -> tuple:
    """``(errors, widths, covered)`` of cells (estimate, lower, upper, truth, se)."""
    v = np.array(list(cells), dtype=float).reshape(-1, 5)
    return v[:, 0] - v[:, 3], v[:, 2] - v[:, 1], (v[:, 1] <= v[:, 3]) & (v[:, 3] <= v[:, 2])


def _figures(err, width, cover, n) -> dict:
    ok = np.isfinite(width)
    return {"mean_abs_error": round(float(np.mean(np.abs(err))), 6),
            "mean_width": round(float(np.mean(width[ok])), 6) if ok.any() else None,
            "coverage": round(float(np.mean(cover[ok])), 4) if ok.any() else None, "n_models": int(n)}


def _benchmark_figures(cells: dict, weights: dict, common: list, level: float, corr=None,
                       tasks=None) -> Optional[dict]:
    """The benchmark-level figures over models with an estimate on every estimated task.

    The tasks combined by :func:`~.item_benchmark.benchmark_interval` (the rule ``predict`` uses), with
    ``corr`` (over ``tasks``, the tasks of the correlation; default independence). Tasks run whole add
    their measured score to both sides; only the estimated ones carry error.
    """
    from .item_benchmark import benchmark_interval

    here = sorted({t for _, t in cells})
    if not here:
        return None
    R = None
    if corr is not None:
        pos = [list(tasks).index(t) for t in here]
        R = np.asarray(corr, dtype=float)[np.ix_(pos, pos)]
    rows = [m for m in common if all((m, t) in cells for t in here)]
    if not rows:
        return None
    v = np.array([[cells[(m, t)] for t in here] for m in rows])  # models x tasks x 5
    w = np.array([weights[t] for t in here]) / sum(weights.values())
    # Weights over all tasks (not only the estimated ones): the measured tasks' share carries no error.
    est, lo, hi, _ = benchmark_interval(v[:, :, 0], v[:, :, 4], w, level, R, bounds=(v[:, :, 1], v[:, :, 2]))
    truth = v[:, :, 3] @ w
    return _figures(est - truth, hi - lo, (lo <= truth) & (truth <= hi), len(rows))


def _check_unit_scores(store, task: str, metric: str, M: np.ndarray) -> None:
    """Refuse a task whose item scores leave [0, 1], naming the files: the item estimators model correctness
    (0/1) or a proportion, and a score of 2 or -1 would turn their figures into NaN, not an error."""
    if not M.size or (M.min() >= 0.0 and M.max() <= 1.0):
        return
    files = [r[0] for r in store.con.execute("SELECT DISTINCT source FROM samples WHERE task = ? AND metric = ? AND "
                                             "(value < 0 OR value > 1) ORDER BY source LIMIT 3", [task, metric]).fetchall()]
    raise HarnessExtError(f"{task}: item scores ({metric}) range from {M.min() + 0.0:g} to {M.max() + 0.0:g}, outside [0, 1] "
                          f"(in {', '.join(files)}): item-level estimates need correctness (0/1) or a proportion per "
                          "item; rescale those scores, or leave the task out with --datasets")


def _first_stored_note(store, task: str, metric: str, names: list) -> list:
    """The note of a task whose population models have items two source files score differently: each answer is
    the score stored first, so the order the files were ingested in chose it."""
    from ...store.item_info import item_conflicts

    c = item_conflicts(store)
    n = len(c[(c["task"] == task) & (c["metric"] == metric) & c["model"].isin(names)].drop_duplicates(["model", "item"]))
    return [f"{n} item scores that two source files give differently are the one stored first, so the same files "
            "ingested in another order give other answers (harness-ext info --conflicts lists them)"] if n else []


def read_populations(store, chosen: list, models: Optional[str], warnings: list, exclude_models=None) -> dict:
    """``task -> (benchmark, metric, item numbers, answers, model names, notes, store's numbers)`` of each (benchmark,
    task, metric) of ``chosen``; a task with fewer than 2 population models is left out, said in ``warnings``. The
    item numbers are the manifest's: the store's, except for a task whose text ids the store numbered
    (:func:`~.item_manifest.listed_by_id`)."""
    out = {}
    for bench, task, met in chosen:
        ids, cols, M, notes = population_answers(store, task, met, models, exclude_models)
        stored, listed = ids, listed_by_id(store, bench, task, ids)
        if listed is not None:  # the store's numbers of text ids depend on the order files were ingested in
            stored, M, ids = ids[listed[0]], M[:, listed[0]], listed[1]
        _check_unit_scores(store, task, met, M)
        if len(cols) < 2:
            warnings.append(f"{task}: {len(cols)} population model(s) with its items; left out (2 or more needed)")
            continue
        out[task] = (bench, met, ids, M, cols, notes, stored)
    return out


def _task_means(M: np.ndarray) -> np.ndarray:
    """Each model's task score from its answers (models x items): their mean, NaN for a model with none."""
    seen = np.isfinite(M).sum(axis=1)
    return np.where(seen > 0, np.nansum(M, axis=1) / np.maximum(seen, 1), np.nan)


def draw_items(store, chosen: list, n_items, models: Optional[str], random_state: int, warnings: list, *,
               n_total=None, design: str = "random", allocation: str = "neyman", n_strata: int = 5,
               stratum_allocation: str = "proportional", exclude_models=None) -> tuple:
    """Per (benchmark, task, metric) of ``chosen``: the population's answers and the items to run.

    ``n_items`` per task, or ``n_total`` over the tasks (:func:`~.item_design_plan.items_per_task`);
    drawn under ``design`` (:func:`~.item_design_plan.draw_task`), seeded per task. Returns ``(model
    names, task blocks for the manifest, task -> (answers, models), task -> sampled columns, task ->
    what the design's estimators need, (task -> weight, weighting, lm-eval group))``: the weights make the harness's
    benchmark score (:func:`~.lm_eval_members.group_weights`).
    """
    from .item_design_only import logged_part_warning, task_documents
    from .item_design_plan import draw_task, items_per_task
    from .lm_eval_members import group_weights
    from .item_links import attach_link_fields

    read = read_populations(store, chosen, models, warnings, exclude_models)
    # An lm-eval task its results files size beyond the documents logged: the logs are of part of it (--limit).
    sizes = task_documents(store, [t for t, r in read.items() if r[0] == "lm_eval"])
    pops = {t: (r[3], r[4]) for t, r in read.items()}
    # As the harness's benchmark score: lm-eval's group of these tasks where the store holds its score.
    weights, weighting, group = group_weights(store, {t: {"metric": r[1], "n_items": len(r[2]),
                                                   "scores": pd.Series(_task_means(r[3]), index=r[4])}
                                               for t, r in read.items()})
    n_of = items_per_task(pops, weights, n_items, n_total, allocation) if pops else {}
    names, index, tasks, samples, infos = [], {}, {}, {}, {}
    for task, (bench, met, ids, M, cols, notes, stored) in read.items():
        S, infos[task], fields = draw_task(design, M, n_of[task], task_seed(random_state, task), n_strata=n_strata,
                                           allocation=stratum_allocation)
        if sizes.get(task, 0) > len(ids):  # said once for every such task below
            fields = dict(fields, logged_documents={"n_logged": len(ids), "n_documents": sizes[task]})
        for m in cols:
            if m not in index:
                index[m] = len(names)
                names.append(m)
        samples[task] = S
        tasks[task] = {"benchmark": bench, "metric": met, "n_items": len(ids), "n_run": int(len(S)),
                       "items": encode_ids(ids), "sample": encode_ids(ids[S]), **fields,
                       **item_id_field(store, bench, task, stored),
                       **helm_instances_field(store, bench, task),
                       **inspect_field(store, bench, task, stored[S], warnings),
                       "population": {"models": [index[m] for m in cols], "scores": encode_scores(M)},
                       "notes": notes}
        warnings += [f"{task}: {n}" for n in notes]
    warnings += logged_part_warning(tasks)
    attach_link_fields(store, tasks)  # what predict matches a new model's file of the task under another name by
    return names, tasks, pops, samples, infos, (weights, weighting, group)


def excluded_population(store, chosen: list, models, exclude_models, warnings: list) -> dict:
    """What ``exclude_models`` leaves out of the population of the tasks ``chosen`` (``patterns``, ``n_models``,
    ``models``, as a dataset-level manifest's ``source.excluded_models``); its globs that matched no model of the
    population ``models`` selects are said in ``warnings``."""
    tasks = sorted({t for _, t, _ in chosen})
    names = [r[0] for r in store.con.execute("SELECT DISTINCT model FROM samples WHERE list_contains(?, task) "
                                             "ORDER BY model", [tasks]).fetchall()]
    selected = select_names(names, models)[0]
    kept, unmatched = select_names(names, models, exclude_models)
    gone = sorted(set(selected) - set(kept))
    if unmatched:
        warnings.append(unmatched_note(unmatched, "the population"))
    return {"patterns": list(as_globs(exclude_models)), "n_models": len(gone), "models": gone}


def build_item_manifest(store, n_items=None, *, benchmarks=None, datasets: Optional[str] = None,
                        models: Optional[str] = None, metric: Optional[str] = None, estimator: Optional[str] = None,
                        random_state: int = 0, group_name: str = "harness_ext_reduced", level: float = 0.9,
                        warnings=(), n_total=None, design: str = "random", allocation: str = "neyman",
                        n_strata: int = 5, stratum_allocation: str = "proportional", exclude_models=None) -> dict:
    """The item-level manifest: ``n_items`` items of every task with item-level results in ``store`` (or
    ``n_total`` over the tasks), drawn under ``design`` (:mod:`.item_design_plan`).

    Parameters
    ----------
    store : harness_ext.store.db.Store
    n_items : int
        Items per task; a task with no more items runs whole (its score then measured: the harness's own).
    benchmarks, datasets, models, exclude_models, metric
        Which tasks (benchmarks; a glob on task names), which population models (a glob; then globs of those left
        out, :func:`excluded_population`) and which per-item metric (default: per task, see :func:`pick_metrics`).
    estimator : str, optional
        The item estimator plugin ``predict`` uses by default and the expected error is measured with
        (default: the design's, :func:`~.item_design_plan.check_design`).
    n_total, design, allocation, n_strata, stratum_allocation
        A total budget instead of ``n_items``; the item design; the allocation rule of the total over the
        tasks; the stratified design's strata per task and the allocation of a task's items over them.
    warnings : sequence of str
        Notes from the caller (options it ignored), recorded first.

    Returns
    -------
    dict
        The manifest (kind ``"items"``), with per task its item list, sample and population answers,
        the expected error inside the population and at its frontier, the item cost and the sizes.

    References
    ----------
    Zhang, Dorner and Hardt (2025), §4-5.
    """
    from ... import __version__
    from .manifest_validation import MANIFEST_VERSION

    estimator = check_design(design, estimator, n_items, n_total, (allocation, stratum_allocation), n_strata,
                             DEFAULT_ESTIMATOR)
    cat = item_catalogue(store, benchmarks, datasets)
    if not benchmarks and cat["benchmark"].nunique() > 1:
        raise HarnessExtError("the store's item-level results span several benchmarks "
                              f"({', '.join(sorted(cat['benchmark'].unique()))}): choose with --benchmark")
    chosen, picked = pick_metrics(cat, metric)
    warnings = list(warnings) + picked
    gone = excluded_population(store, chosen, models, exclude_models, warnings) if exclude_models else None
    names, tasks, pops, samples, infos, (weights, weighting, group) = draw_items(
        store, chosen, n_items, models, random_state, warnings, n_total=n_total, design=design, allocation=allocation,
        n_strata=n_strata, stratum_allocation=stratum_allocation, exclude_models=exclude_models)
    if not tasks:  # reduce_items then draws from the lm-eval tasks' sizes, which need no population answers
        raise NoItemResults(FEW_MODELS)
    expected, correlation = expected_errors_and_correlation(pops, samples, weights, estimator, level, random_state,
                                                            design=design, infos=infos)
    benchmark = sorted({b["benchmark"] for b in tasks.values()})
    manifest = {
        "manifest_version": MANIFEST_VERSION, "kind": KIND,
        "tool": {"name": "harness-ext", "version": __version__}, "group_name": group_name,
        "benchmark": benchmark[0] if len(benchmark) == 1 else group_name,
        "design": design_block(design, n_items, n_total, random_state, estimator, level, allocation, n_strata,
                               stratum_allocation, ESTIMATOR_WHY if estimator == DEFAULT_ESTIMATOR else None),
        "models": names, "weights": weights, "weighting": weighting, **({"lm_eval_group": group} if group else {}),
        "tasks": tasks,
        "datasets": [{"name": t, "benchmark": b["benchmark"], "metric": b["metric"], "task": t, "num_fewshot": None}
                     for t, b in tasks.items()],
        "cost": {"items_run": int(sum(b["n_run"] for b in tasks.values())),
                 "items_full": int(sum(b["n_items"] for b in tasks.values())), "tasks": len(tasks)},
        "expected_error": expected, BENCHMARK_CORRELATION: correlation,  # how predict combines the tasks' errors
        "warnings": warnings,
        # What the exports name as the method and the population (as a dataset-level manifest's keys do).
        "source": {"n_models": len(names), "fingerprint": hashlib.sha256("".join(
            b["population"]["scores"]["data"] for b in tasks.values()).encode()).hexdigest()[:16],
                   **({"excluded_models": gone} if gone else {})},
        "prediction": {"predictor": {"name": f"item estimator {estimator}"}},
    }
    manifest["subset"] = [dict(d, step=i + 1, coverage=None) for i, d in enumerate(manifest["datasets"])]
    manifest["sizes"] = {"population_bytes": int(sum(len(b["population"]["scores"]["data"]) for b in tasks.values())),
                         "manifest_bytes": 0}
    manifest["sizes"]["manifest_bytes"] = len(json.dumps(manifest, indent=2)) + 1
    return manifest


def reduce_items(db, n_items: int, local_data=(), **kwargs) -> ItemReduceResult:
    """Open the store ``db`` read-only and build the item-level reduction (:func:`build_item_manifest`; for tasks
    with no item-level results, only lm-eval scores and sizes,
    :func:`~.item_design_only.build_design_only_manifest`).

    Tasks whose items came from lm-eval logs get their definitions looked up as ``reduce`` does for a
    dataset subset (:func:`harness_ext.methods.reduction.manifest.attach_lm_eval_tasks`), so the
    lm-eval folder is self-contained; ``local_data``: folders of the user's own task data.
    """
    from pathlib import Path

    from ...store.db import Store
    from ...store.lm_eval_tasks import foreign_task_warnings, foreign_tasks
    from .item_design_only import NoTaskScores, build_design_only_manifest, scored_only_warning
    from .item_harness_tasks import attach_harness_tasks, declared_harness_tasks
    from .lm_eval_group import task_list_warnings
    from .lm_eval_members import take_group_tasks
    from .lm_eval_release import FIELD, attach_release
    from .manifest import attach_lm_eval_tasks

    if db in (None, ":memory:") or not Path(db).exists():
        raise HarnessExtError(f"--items needs a store with item-level results; {db} does not exist")
    with Store.open(db, read_only=True) as store:
        taken = take_group_tasks(store, kwargs.get("benchmarks"), kwargs.get("datasets"))
        kwargs = dict(kwargs, benchmarks=taken["benchmarks"], datasets=taken["datasets"])
        try:
            manifest = build_item_manifest(store, n_items, **kwargs)
            manifest["warnings"] += scored_only_warning(store, manifest, kwargs)
        except NoItemResults as exc:  # tasks known by their scores alone: random documents of each, their mean
            try:
                kw = dict(kwargs, warnings=[*kwargs.get("warnings", ()), *(
                    ["item-level results (per-sample logs) of fewer than 2 models on every task: not used (the "
                     "sample mean needs none)"]
                    if str(exc) == FEW_MODELS else [])])
                manifest = build_design_only_manifest(store, n_items, **kw)
            except NoTaskScores as none:  # nothing either way: what the store's item-level results are (and scores)
                raise (HarnessExtError(f"{exc}; {none}") if str(none) else exc) from None
        if taken["notes"]:  # what a group named in the query stood for, said with the count
            manifest["groups_taken"] = taken["notes"]
        declared = declared_harness_tasks(store, {(b.get("benchmark"), t) for t, b in manifest["tasks"].items()})
    # Item ids of other sources are positions in their own order, not lm-eval documents: no definition looked up,
    # but a name lm-eval has itself (HELM Lite's "mmlu") must not make the group run lm-eval's task instead. A table
    # task its sidecar declares to be an lm-eval task runs as that task (item_harness_tasks).
    view = {"subset": [e for e in manifest["subset"] if e["benchmark"] == "lm_eval"], "warnings": []}
    foreign = {t: b.get("benchmark") for t, b in manifest["tasks"].items()
               if b.get("benchmark") not in (None, "", "lm_eval") and t not in declared}
    if inspect_only(manifest):  # no lm-eval file is written: no lm-eval name to look up, nor a warning on them
        foreign, declared = {}, {}
    if view["subset"]:
        attach_lm_eval_tasks(view, db, local_data)
    own = attach_harness_tasks(manifest, declared)
    if view["subset"] or foreign or own:
        found = foreign_tasks(foreign) if foreign else {}
        manifest["lm_eval_tasks"] = {**view.get("lm_eval_tasks", {}), **found, **own}
        n_inspect = inspect_task_count(manifest)
        elsewhere = (f"the {n_inspect} from Inspect AI logs run under Inspect, their drawn samples listed in "
                     f"{INSPECT_FILE} beside the lm-eval files") if n_inspect else ""
        manifest["warnings"] += view["warnings"] + foreign_task_warnings(found, elsewhere) + task_list_warnings(manifest)
    if FIELD in attach_release(manifest) or view["subset"] or foreign or own:
        manifest["sizes"]["manifest_bytes"] = len(json.dumps(manifest, indent=2)) + 1
    return ItemReduceResult(manifest)

