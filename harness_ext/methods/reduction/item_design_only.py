"""Random items of tasks known only by their scores: the design-based plan, from each task's size alone.

``reduce --items N`` reads the population's answers to every item, and most stores hold none: lm-eval's results
files give a task's score and its number of documents (``n-samples``), not its per-sample logs. Nothing can be
fitted on item answers then, but a simple random sample of a task's documents still estimates the task's full score
without bias, with the finite-population interval of the sample mean (Cochran 1977, §2.5), whatever the new model is.
That is the estimate whose interval holds at the frontier by construction, where every estimator fitted on the
population shrinks toward it (Zhang, Dorner and Hardt 2025, §5). So when the store has no item-level results for the
tasks asked, ``reduce --items N`` draws ``N`` of each lm-eval task's documents by their index (what lm-eval's
``--samples`` takes) and writes a manifest whose estimator is the sample mean, with no population answers
(``design["population"] == "none"``).

The expected figures need no held-out fit: for a model whose task score is ``p`` on ``N`` documents, the number of
correct answers among ``n`` drawn is hypergeometric, so the sample mean's error, its interval's width and whether
the interval holds have a known distribution. :func:`design_expected` draws it for the store's models' own task
scores (every model: ``in``; the strongest 30% by the benchmark's score: ``frontier``), as 0/1 answers (the widest
case for a score in [0, 1]: a graded metric of the same mean errs less).

References
----------
Cochran (1977), Sampling Techniques, §2.5 (the finite-population variance), §5.3 (independent strata). Zhang,
Dorner and Hardt (2025), "How Benchmark Prediction from Fewer Data Misses the Mark", NeurIPS, §4-5.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd

from ...errors import HarnessExtError
from ...report import listed, plural
from ...store.globs import as_globs, matches, select_names
from ...store.lm_eval_tasks import MAX_DOCUMENTS, N_DOCUMENTS
from .item_design_plan import NO_POPULATION
from .lm_eval_members import REREAD, group_weights, rowless_hint, stored_groups

#: The estimator of such a manifest (one that reads nothing from the population but the task's size).
ESTIMATOR = "sample_mean"
#: The harness whose task documents the drawn indices name (lm-eval's ``--samples``).
LM_EVAL = "lm-evaluation-harness"
#: The adapter that reads lm-eval 0.4's results files.
V04_READER = "lm_eval_v04"
#: Its first revision that keeps a --limit run's full task size (6 on also keeps a group's members).
SIZES_SINCE = 5
#: Draws of the design per model and task for the expected figures (seeded by ``random_state``).
DRAWS = 2000
#: Elements (draws x models x tasks) of one block of the benchmark's combination in :func:`design_expected`.
_BLOCK = 2_000_000
WHY = ("no item-level results for these tasks (per-sample logs, item-response tables): each task's items are drawn at "
       "random from its documents, counted by the results files (lm-eval's n-samples), and estimated by their mean "
       "with the finite-population interval (Cochran 1977), which holds whatever the new model is, at the frontier "
       "too (Zhang, Dorner and Hardt 2025); with the population's per-item answers (ingest lm-eval's --log_samples "
       "output) reduce can also borrow from them")
NO_SIZES = ("no item-level results match, and the lm-eval results that do give no task's number of documents "
            "(n-samples, which lm-eval writes from 0.4.3 on: files of 0.3 and of 0.4.0 to 0.4.2 have none): nothing to "
            "draw items from (the population's runs with lm-eval 0.4.3 or later give them; their per-sample logs, "
            "--log_samples, let reduce draw from their answers)")
#: lm-eval 0.4's metrics whose default aggregation is over the whole task, not a mean of per-document scores
#: (``lm_eval.api.registry``'s aggregation of each): their per-sample logs hold each document's inputs to it.
CORPUS_METRICS = {"mcc": "matthews_corrcoef", "f1": "f1_score", "bleu": "bleu", "chrf": "chrf", "chrf++": "chrfpp",
                  "ter": "ter", "perplexity": "perplexity", "word_perplexity": "weighted_perplexity",
                  "byte_perplexity": "weighted_perplexity", "bits_per_byte": "bits_per_byte",
                  "brier_score": "brier_score"}


class NoTaskScores(HarnessExtError):
    """No lm-eval task scores match the query: there is nothing to draw documents of (``reduce`` then says what the
    store's item-level results are, and, when the store has lm-eval scores, what the query missed: this message)."""


def _no_scores(store, benchmarks, datasets, models, exclude_models, metric) -> str:
    """What the query missed among the store's lm-eval task scores (``""`` when it has none)."""
    held = _results(store, None)
    if held.empty:
        return ""
    asked = "; ".join(f"{flag} {v}" for flag, v in (
        ("--benchmark", ", ".join(benchmarks or ())), ("--datasets", " ".join(as_globs(datasets))), ("--metric", metric),
        ("--models", models), ("--exclude-models", " ".join(exclude_models or ()))) if v)
    per = held.groupby("benchmark", sort=True)["name"].nunique()
    said = ", ".join(f"{b} ({plural(n, 'task')})" for b, n in per.items())
    return (f"nor do the store's lm-eval task scores match {asked or 'the query'} (they are {said}; 'harness-ext "
            f"info' lists them){_groups_named(store, held, [*(benchmarks or ()), *([datasets] if datasets else [])])}"
            f"{rowless_hint(store, [*(benchmarks or ()), *as_globs(datasets)])}")


def _groups_named(store, held: pd.DataFrame, names: list) -> str:
    """What ``_no_scores`` adds when the query names lm-eval groups the store holds only as scores (aggregates, as
    ``--tasks leaderboard_bbh`` would run them): documents are drawn of tasks, so name those; a glob of the group's
    name that matches tasks is given with its count."""
    groups = store.con.execute(
        f"""SELECT DISTINCT benchmark, name FROM datasets WHERE kind = 'aggregate'
              AND json_extract_string(metadata, '$.harness') = '{LM_EVAL}' ORDER BY name""").fetchall()
    named = [(b, g) for b, g in groups if any(g == n or matches(g, n) for n in names)]
    if not named:
        return ""
    kept = stored_groups(store)
    bare = [g for _, g in named if (kept.get(g) or {}).get("members") is None]
    tips = []
    for bench, g in named[:3]:
        under = held[held["benchmark"] == bench]
        n = len({t for t in set(under["name"]) | set(under["task"].dropna()) if matches(t, f"{g}_*")})
        tips.append(f"{g}: --benchmark {bench} --datasets '{g}_*' ({plural(n, 'task')})" if n else
                    f"{g}: its tasks by name with --benchmark {bench} --datasets")
    return (f". {listed([g for _, g in named], 3)} {'is an lm-eval group' if len(named) == 1 else 'are lm-eval groups'} "
            f"the store holds only as {'its score' if len(named) == 1 else 'their scores'}: reduce --items draws the "
            f"documents of tasks, so name {'its' if len(named) == 1 else 'their'} tasks ({'; '.join(tips)})"
            + (f"; {REREAD.format(what=listed(bare, 3))}" if bare else ""))


def design_only_text(manifest: dict, unit: str, level: str) -> str:
    """``reduce``'s summary of a manifest drawn from task sizes alone: what the estimate is and what the figures are."""
    n = manifest["source"]["n_models"]
    whose = plural(n, "model") + ("'s" if n == 1 else "'")  # 1 model's, 2 models'
    return (f"No item-level results for these tasks, only their lm-eval scores: each task's items are drawn from its "
            f"documents (lm-eval's n-samples) and estimated by their mean with the finite-population interval, which "
            f"holds whatever the new model is, at the frontier too; nothing is fitted. Expected figures of this design "
            f"({unit}) for the store's {whose} own task scores ({DRAWS:,} draws each, as 0/1 answers, "
            f"the widest case for scores in [0, 1]): 'in' = every model, 'frontier' = the strongest 30%; widths and "
            f"coverage of the {level} intervals. With the population's per-sample logs (lm-eval's --log_samples "
            f"output) ingested, reduce --items can also borrow from their answers.{_missing_figures(manifest)} "
            f"Manifest {manifest['sizes']['manifest_bytes']:,} bytes.")


def _missing_figures(manifest: dict) -> str:
    """What the summary says when the design has no benchmark (nor 'frontier') figures: no model has a score on
    every task, so none is ranked by the benchmark's score; or too few models for a strongest 30%."""
    ex = manifest.get("expected_error") or {}
    n_in = ((ex.get("interpolation") or {}).get("benchmark") or {}).get("n_models")
    if not n_in and len((ex.get("interpolation") or {}).get("tasks") or {}) > 1:
        return (" No benchmark figures and no 'frontier': no model has a score on every task, so none is ranked by "
                "the benchmark's score (--datasets or --models choose tasks and models that do).")
    if n_in and not ((ex.get("extrapolation") or {}).get("benchmark") or {}).get("n_models"):
        return f" No 'frontier': the strongest 30% of {plural(n_in, 'model')} is none."
    return ""


def _results(store, metric) -> pd.DataFrame:
    """Every dataset-level lm-eval result: benchmark, name, task, metric, model, value, n_samples, the task's full
    number of documents where a ``--limit`` run gave it (``n_documents``), and the adapter and its revision that
    read the result's file (``adapter``, ``reader``)."""
    cond = "d.metric = ?" if metric is not None else "d.is_primary"
    return store.con.execute(
        f"""SELECT d.benchmark, d.name, d.task, d.metric, m.name AS model, r.value, r.n_samples,
                   json_extract_string(d.metadata, '$.{N_DOCUMENTS}') AS n_documents, s.adapter, s.reader
            FROM results r JOIN datasets d USING (dataset_id) JOIN models m USING (model_id)
            JOIN sources s USING (source_id)
            WHERE coalesce(d.kind, 'dataset') = 'dataset' AND {cond}
              AND json_extract_string(d.metadata, '$.harness') = '{LM_EVAL}'
            ORDER BY d.benchmark, d.name, m.name""", [metric] if metric is not None else []).df()


def _selected(df: pd.DataFrame, benchmarks, datasets, models, exclude_models) -> pd.DataFrame:
    """The rows of :func:`_results` the query selects, as ``reduce`` selects: benchmarks (names or globs), a glob on
    dataset or task names, model globs."""
    if benchmarks:
        wanted = list(benchmarks)
        df = df.loc[np.array([b in wanted or matches(b, wanted) for b in df["benchmark"]], dtype=bool)]
    if datasets:
        df = df.loc[np.array([matches(n, datasets) or matches(t, datasets) for n, t in zip(df["name"], df["task"])],
                             dtype=bool)]
    return df[df["model"].isin(select_names(sorted(set(df["model"])), models, exclude_models)[0])]


def _counts(col: pd.Series) -> np.ndarray:
    """A column of document counts as floats (NaN: unknown; text, negatives, fractions and counts above
    :data:`~harness_ext.store.lm_eval_tasks.MAX_DOCUMENTS`, which a store read before it was checked may hold, are no
    counts)."""
    x = pd.to_numeric(col, errors="coerce").astype("float64").to_numpy()
    return np.where((x >= 0) & (x == np.floor(x)) & (x <= MAX_DOCUMENTS), x, np.nan)


def _most_documents(g: pd.DataFrame) -> tuple:
    """``(scores, documents)`` per model of one task's results: each model's score measured on the most documents
    (as the matrix takes a cell's value: a ``--limit`` run beside the whole run counts for nothing), the mean where
    several share that count or none has one; and that count (NaN: unknown)."""
    ns = _counts(g["n_samples"])
    most = pd.Series(ns, index=g.index).groupby(g["model"]).transform("max").to_numpy()
    keep = np.isnan(most) | (ns == most)
    kept = g.loc[keep]
    return (kept.groupby("model", sort=True)["value"].mean(),
            pd.Series(most[keep], index=kept.index).groupby(kept["model"], sort=True).max())


def _largest(counts: np.ndarray) -> float:
    """The largest known count (NaN: none known)."""
    known = counts[~np.isnan(counts)]
    return float(known.max()) if len(known) else np.nan


def _task_size(g: pd.DataFrame) -> float:
    """A task's number of documents from its results ``g`` (columns ``n_samples``, ``n_documents``): the most any
    result was scored on, or its full number a ``--limit`` run kept (NaN: none known)."""
    return float(np.fmax(_largest(_counts(g["n_samples"])), _largest(_counts(g["n_documents"]))))


def _first_documents(n: float, scored: pd.Series) -> dict:
    """What a task's scores rest on when models scored only its first documents (``--limit``): ``{}`` when every
    model's score covers its ``n`` documents (or says not), else ``{"documents_scored", "n_documents",
    "n_models", "of_models"}``."""
    short = scored[scored < n]
    if short.empty:
        return {}
    return {"documents_scored": sorted({int(e) for e in short}), "n_documents": int(n), "n_models": int(len(short)),
            "of_models": int(len(scored))}


def first_documents_warning(limited: dict) -> list:
    """``reduce --items``'s warning (a list of at most one) naming the tasks some models scored on their first
    documents only, with the counts (``task -> :func:`_first_documents```), and what the figures rest on then."""
    if not limited:
        return []
    shown = [f"{t} {'/'.join(f'{e:,}' for e in b['documents_scored'])} of {b['n_documents']:,} "
             f"({b['n_models']} of {plural(b['of_models'], 'model')})" for t, b in sorted(limited.items())]
    return [f"{plural(len(limited), 'task')} scored by the store's models on their first documents only (lm-eval "
            f"--limit): {listed(shown, 5)}. The items are drawn from all of each task's documents, so the run covers "
            "the task; the expected figures take such a model's score on its first documents for its score on the "
            "whole task (the first documents need not be like the rest of them)"]


def older_readings_warning(df: pd.DataFrame) -> list:
    """The warning (a list of at most one) of results read by a revision of the lm-eval 0.4 reader before
    :data:`SIZES_SINCE`, which kept no task's full number of documents: a task those files ran with ``--limit`` is
    sized by its first ones."""
    older = pd.to_numeric(df["reader"].astype(object), errors="coerce")
    n = int(((df["adapter"] == V04_READER) & ~(older >= SIZES_SINCE)).sum())  # NULL: read before revisions were kept
    return [f"{plural(n, 'result')} read from lm-eval 0.4 results files by an older harness-ext, which kept no "
            "task's full number of documents: a task those files ran with --limit is drawn from the documents they "
            "scored, its first ones, not from all of it ('harness-ext ingest --reread PATHS' reads them again with "
            "the full sizes)"] if n else []


def task_documents(store, tasks) -> dict:
    """``task -> number of documents`` of the lm-eval ``tasks`` whose results files give it (the most a result was
    scored on, or the full number a ``--limit`` run kept), for any metric."""
    tasks = sorted(set(tasks))
    if not tasks:
        return {}
    df = store.con.execute(
        f"""SELECT d.task, r.n_samples, json_extract_string(d.metadata, '$.{N_DOCUMENTS}') AS n_documents
            FROM results r JOIN datasets d USING (dataset_id)
            WHERE list_contains(?, d.task) AND json_extract_string(d.metadata, '$.harness') = '{LM_EVAL}'""",
        [tasks]).df()
    out = {}
    for task, g in df.groupby("task", sort=True):
        n = _task_size(g)
        if np.isfinite(n):
            out[task] = int(n)
    return out


def logged_part_warning(tasks: dict) -> list:
    """The warning (a list of at most one) of item-level tasks whose per-sample logs hold fewer documents than the
    task has (logs of ``--limit`` runs): ``tasks`` maps a task to its manifest block, whose ``logged_documents``
    gives the counts (``n_logged``, ``n_documents``)."""
    part = {t: b["logged_documents"] for t, b in tasks.items() if isinstance(b.get("logged_documents"), dict)}
    if not part:
        return []
    shown = [f"{t} {p.get('n_logged', 0):,} of {p.get('n_documents', 0):,}" for t, p in sorted(part.items())]
    return [f"{plural(len(part), 'task')} with items logged for part of {'its' if len(part) == 1 else 'their'} "
            f"documents (per-sample logs of lm-eval --limit runs, or of runs of part of a task): {listed(shown, 5)}; "
            "the items are drawn from the logged documents, and each such task's estimate (and the benchmark's) is of "
            "the logged documents' mean, not of the whole task's"]


def aggregation(metric: str, config) -> str:
    """How lm-eval aggregates ``metric`` (``name,filter``) over a task's documents: the task configuration's own
    ``metric_list`` entry (kept from its results file) where it names one, else lm-eval's default for the metric
    (:data:`CORPUS_METRICS`, else ``"mean"``). Anything but ``"mean"`` is not a mean of per-document scores."""
    name = str(metric).split(",")[0]
    for entry in ((config or {}).get("metric_list") or []) if isinstance(config, dict) else []:
        if isinstance(entry, dict) and entry.get("metric") == name and isinstance(entry.get("aggregation"), str):
            return entry["aggregation"] if entry["aggregation"] == "mean" else "not a mean"
    return CORPUS_METRICS.get(name, "mean")


def _lacking(store, df: pd.DataFrame, metric, benchmarks, datasets, models, exclude_models) -> list:
    """The warning (a list of at most one) naming the tasks the query selects that lack the ``metric`` asked for
    (``df``: the results that have it): said, not dropped unsaid."""
    if metric is None:
        return []
    lack = sorted(set(_selected(_results(store, None), benchmarks, datasets, models, exclude_models)["name"])
                  - set(df["name"]))
    return [f"{plural(len(lack), 'task')} without {metric} left out: {listed(lack, 5)}"] if lack else []


def sized_tasks(store, benchmarks=None, datasets=None, models=None, exclude_models=None, metric=None,
                warnings=None) -> dict:
    """``task -> {benchmark, name, metric, n_items, scores, first_documents}`` of the lm-eval tasks the query selects,
    each with its number of documents (the largest ``n-samples`` its results files give, or the full number a
    ``--limit`` run kept), the models' task scores (a Series: each model's on the most documents) and, where models
    scored only its first documents, their counts (:func:`_first_documents`).

    ``benchmarks`` (names or globs), ``datasets`` (a glob on dataset or task names), ``models`` and ``exclude_models``
    (globs) and ``metric`` (default: each dataset's primary one) select as ``reduce`` does. A task whose files give
    no size is left out, said in ``warnings``.

    Raises
    ------
    NoTaskScores
        No lm-eval results match.
    HarnessExtError
        None of them has a size, or they span several benchmarks and none was chosen.
    """
    from ...benchmarks import MMLU_TEST_SIZES
    from ...store.lm_eval_tasks import stored_configs
    from .harness_names import LM_EVAL_HARNESS, MMLU_BENCHMARK, lm_eval_task

    warnings = [] if warnings is None else warnings
    df = _selected(_results(store, metric), benchmarks, datasets, models, exclude_models)
    if df.empty:
        raise NoTaskScores(_no_scores(store, benchmarks, datasets, models, exclude_models, metric))
    warnings += _lacking(store, df, metric, benchmarks, datasets, models, exclude_models)
    sizable = (df["benchmark"] == MMLU_BENCHMARK) & df["name"].isin(list(MMLU_TEST_SIZES))  # MMLU's test set
    if df["n_samples"].isna().all() and not sizable.any():  # lm-eval 0.3's files: said before asking to choose
        raise HarnessExtError(NO_SIZES)
    if not benchmarks and df["benchmark"].nunique() > 1:
        raise HarnessExtError("the store's lm-eval results span several benchmarks "
                              f"({', '.join(sorted(df['benchmark'].unique()))}): choose with --benchmark")
    out, unsized, corpus, beyond, known = {}, [], [], [], []
    configs = stored_configs(store, [t for t in df["task"].dropna().unique()] + list(df["name"].unique()))
    for (bench, name, met), g in df.groupby(["benchmark", "name", "metric"], sort=True):
        task = lm_eval_task({"benchmark": bench, "name": name, "task": g["task"].iloc[0], "harness": LM_EVAL_HARNESS})
        n = _task_size(g)
        if not np.isfinite(n) and bench == MMLU_BENCHMARK and name in MMLU_TEST_SIZES:
            n = MMLU_TEST_SIZES[name]  # lm-eval 0.3 wrote no n-samples; lm-eval 0.4's subject task is its test set
            known.append(name)
        scores, scored = _most_documents(g)
        if task is None or not np.isfinite(n) or n < 2:
            unsized.append(name)
        # A score lm-eval computes over the whole task (MCC, corpus F1, BLEU, perplexity) is no mean of its documents'
        # scores: a sample's mean does not estimate it, and the run's logs hold no per-document score of it.
        elif aggregation(met, (configs.get(task) or {}).get("config")) != "mean":
            corpus.append(f"{name} ({met})")
        # As reduce --items refuses item scores outside [0, 1]: the benchmark's interval is for proportions.
        elif not ((scores >= 0) & (scores <= 1)).all():
            beyond.append(f"{name} ({met}, {scores.min():g} to {scores.max():g})")
        else:
            out[task] = {"benchmark": bench, "name": name, "metric": met, "n_items": int(n), "scores": scores,
                         "first_documents": _first_documents(n, scored)}
    left = [(unsized, "without a number of documents in the results files (n-samples, written by lm-eval 0.4.3 "
                        "and later)"),
            (corpus, "whose metric lm-eval computes over the whole task, not as a mean of its documents' scores (a "
                     "sample's mean does not estimate it, and lm-eval's per-sample logs hold no score of each "
                     "document; --metric chooses another)"),
            (beyond, "scored outside [0, 1] (the item-level estimates need correctness or a proportion per document, "
                     "and the benchmark's interval is that of a mean of proportions)")]
    if known:
        warnings.append(f"{plural(len(known), 'MMLU subject')} without n-samples in the results files (lm-eval 0.3 "
                        "writes none) sized by MMLU's test set (Hendrycks et al. 2021), the documents of lm-eval 0.4's "
                        "subject task")
    warnings += [f"{plural(len(names), 'task')} {why} left out: {listed(names, 5)}" for names, why in left if names]
    warnings += first_documents_warning({t: b["first_documents"] for t, b in out.items() if b["first_documents"]})
    warnings += older_readings_warning(df)
    if not out and (corpus or beyond):
        raise HarnessExtError("no item-level results match, and no lm-eval task that does has scores a sample's mean "
                              "estimates: " + "; ".join(f"{listed(names, 5)} {why.split(' (')[0]}"
                                                        for names, why in left[1:] if names)
                              + ("; --metric chooses another metric" if corpus else ""))
    if not out:
        raise HarnessExtError(NO_SIZES)
    return out


def scored_only_warning(store, manifest: dict, query: dict) -> list:
    """``reduce --items``'s warning (a list of at most one) naming the lm-eval tasks the query selects that have
    scores and sizes but no item-level results from 2 or more models, so are not in the item-level ``manifest``
    (none when the manifest has no task from lm-eval logs, the query spans several benchmarks' lm-eval scores or
    none have sizes)."""
    if not any(b.get("benchmark") == "lm_eval" for b in manifest["tasks"].values()):
        return []
    try:
        found = sized_tasks(store, query.get("benchmarks"), query.get("datasets"), query.get("models"),
                            query.get("exclude_models"), query.get("metric"), [])
    except HarnessExtError:
        return []
    missing = sorted(set(found) - set(manifest["tasks"]))
    if not missing:
        return []
    return [f"{plural(len(missing), 'lm-eval task')} with scores and sizes but no item-level results from 2 or more "
            f"models not in this reduction: {listed(missing, 5)}; reduce --items with --datasets naming only them draws "
            "their documents at random (estimated by their mean)"]


def allocate_documents(tasks: dict, weights: dict, n_items, n_total, allocation: str) -> dict:
    """``task -> items to run`` (:func:`~.item_design_plan.spread_items`) of tasks known by their sizes and models'
    scores: a task's per-item standard deviation is that of 0/1 answers at its models' mean score."""
    from .item_design_plan import spread_items

    def sd_of(t):
        p = float(np.clip(tasks[t]["scores"].mean(), 0.0, 1.0))
        return float(np.sqrt(p * (1.0 - p)))

    return spread_items({t: b["n_items"] for t, b in tasks.items()}, sd_of, weights, n_items, n_total, allocation)


def _outcome_intervals(n: int, N: int, level: float) -> tuple:
    """``(lower, upper, standard error)`` of the sample mean for each count ``k = 0..n`` of correct answers among ``n``
    drawn of ``N``: the estimator itself on the ``n + 1`` possible samples of 0/1 answers, the interval clipped to
    [0, 1] as ``predict`` clips a proportion's (the standard error is the estimator's, before clipping)."""
    from ..engine.item_estimators import SampleMean

    Y = (np.arange(n)[None, :] < np.arange(n + 1)[:, None]).astype(float)  # row k: k ones
    est = SampleMean(level=level).fit(np.empty((0, N)), np.arange(n)).predict(Y)
    return np.maximum(est.lower, 0.0), np.minimum(est.upper, 1.0), est.se


def design_expected(tasks: dict, n_run: dict, weights: dict, level: float = 0.9, random_state: int = 0,
                    draws: int = DRAWS) -> dict:
    """The sample mean's expected figures under the design, for the store's models' own task scores.

    Per task and model (score ``p`` on ``N`` documents, ``round(p N)`` of them correct), ``draws`` samples of ``n``
    documents: the number correct is hypergeometric. Returns the manifest's ``expected_error`` (per split, per task
    and for the benchmark: mean |error|, mean width, coverage, models), ``interpolation`` every model with a score in
    [0, 1], ``extrapolation`` the strongest 30% by the benchmark's weighted score (models with every task). The
    benchmark combines the tasks' estimates and standard errors as ``predict`` does (independent draws). A task whose
    scores are not in [0, 1] has no figures (NaN), nor has the benchmark then.

    Each task's figures are taken as soon as its counts are drawn, and only the counts are kept (in the smallest
    integer type that holds them) for the benchmark, which combines them a block of draws at a time: the draws x
    models x tasks estimates are never held whole (at 838 models x 57 tasks they were 7.6 GB).
    """
    from .item_benchmark import benchmark_interval

    rng = np.random.default_rng(random_state)
    names = list(tasks)
    frame = pd.DataFrame({t: tasks[t]["scores"] for t in names})
    unit = ((frame >= 0) & (frame <= 1)) | frame.isna()
    w = np.array([weights[t] for t in names], dtype=float)
    w = w / w.sum()
    complete = frame.dropna().index[unit.loc[frame.dropna().index].all(axis=1)]
    strength = frame.loc[complete].to_numpy() @ w
    order = complete[np.argsort(strength, kind="stable")]
    strong = list(order[len(order) - int(round(0.3 * len(order))):])
    splits = (("interpolation", None), ("extrapolation", set(strong)))
    out = {split: {"tasks": {}} for split, _ in splits}
    cells = {}  # task -> _DrawnTask
    for t in names:
        N, n, s = tasks[t]["n_items"], n_run[t], frame[t].dropna()
        s = s[unit[t].loc[s.index]]
        K = np.rint(s.to_numpy() * N).astype(np.int64)
        if n >= N:
            cells[t] = _DrawnTask(list(s.index), K, N, n, None, None)
        else:
            k = rng.hypergeometric(K, N - K, n, size=(draws, len(K)))
            cells[t] = _DrawnTask(list(s.index), K, N, n, k, _outcome_intervals(n, N, level))
        for split, members in splits:
            out[split]["tasks"][t] = cells[t].figures(members)
        cells[t].compact()
    centre, lo, hi, truth = _benchmark_draws(cells, names, w, level, list(order), draws, benchmark_interval)
    for split, members in splits:
        keep = slice(None) if members is None else slice(len(order) - len(strong), None)
        out[split]["benchmark"] = _benchmark_figures(centre, lo, hi, truth, keep)
    return out


class _DrawnTask:
    """One task's drawn counts of correct documents (draws x models; None when it is measured whole) and the sample
    mean's ``(lower, upper, se)`` for each count."""

    def __init__(self, models, K, N, n, k, outcome):
        self.models, self.K, self.N, self.n, self.k, self.outcome = models, K, N, n, k, outcome
        self.truth = K / N

    def figures(self, members) -> dict:
        """Mean |error|, mean width and coverage over the models ``members`` (None: all) and the draws."""
        keep = np.array([members is None or m in members for m in self.models], dtype=bool)
        if not keep.any():
            return {"mean_abs_error": None, "mean_width": None, "coverage": None, "n_models": 0}
        if self.k is None:  # measured whole
            return {"mean_abs_error": 0.0, "mean_width": 0.0, "coverage": 1.0, "n_models": int(keep.sum())}
        k, truth = self.k[:, keep], self.truth[keep]
        lo, hi = self.outcome[0][k], self.outcome[1][k]
        err = np.abs(k / self.n - truth)
        cover = (lo <= truth) & (truth <= hi)
        return {"mean_abs_error": round(float(err.mean()), 6), "mean_width": round(float((hi - lo).mean()), 6),
                "coverage": round(float(cover.mean()), 4), "n_models": int(keep.sum())}

    def compact(self) -> None:
        """Keep the counts in the smallest unsigned type that holds ``n`` (they are read back as int64)."""
        if self.k is not None:
            self.k = self.k.astype(np.min_scalar_type(self.n))

    def rows(self, block: slice, pos: list) -> tuple:
        """``(estimates, ses, lowers, uppers)`` of the draws ``block`` for the models at ``pos`` (draws x models);
        lowers and uppers None when measured whole."""
        if self.k is None:
            est = np.broadcast_to(self.K[pos], (block.stop - block.start, len(pos))).astype(float) / self.N
            return est, np.zeros_like(est), None, None
        k = self.k[block][:, pos].astype(np.int64)
        return k / self.n, self.outcome[2][k], self.outcome[0][k], self.outcome[1][k]


def _benchmark_draws(cells: dict, names: list, w: np.ndarray, level: float, models: list, draws: int,
                     combine) -> tuple:
    """``(centre, lower, upper, truth)`` of the benchmark for every draw (rows) and model of ``models`` (columns,
    each with every task): the tasks' estimates and standard errors combined as
    :func:`~.item_benchmark.benchmark_interval` combines a new model's, a block of draws at a time (each row is
    combined on its own, so the blocks give the figures of one whole combination)."""
    if not models:
        return None, None, None, None
    pos = {}
    for t in names:
        where = {m: i for i, m in enumerate(cells[t].models)}
        pos[t] = [where[m] for m in models]
    truth = np.stack([cells[t].truth[pos[t]] for t in names], axis=-1) @ w
    step = max(1, _BLOCK // (len(models) * len(names)))
    centre, lo, hi = (np.empty((draws, len(models))) for _ in range(3))
    for start in range(0, draws, step):
        block = slice(start, min(draws, start + step))
        got = [cells[t].rows(block, pos[t]) for t in names]
        est, se = np.stack([g[0] for g in got], axis=-1), np.stack([g[1] for g in got], axis=-1)
        bounds = None
        if len(names) == 1 and got[0][2] is not None:  # a benchmark of one task: its task's interval, as predict's
            bounds = (got[0][2].reshape(-1, 1), got[0][3].reshape(-1, 1))
        c, low, up, _ = combine(est.reshape(-1, len(names)), se.reshape(-1, len(names)), w, level, bounds=bounds)
        shape = est.shape[:2]
        centre[block], lo[block], hi[block] = c.reshape(shape), low.reshape(shape), up.reshape(shape)
    return centre, lo, hi, truth


def _benchmark_figures(centre, lo, hi, truth, keep: slice) -> dict:
    """The benchmark's figures over the models ``keep`` (a slice of :func:`_benchmark_draws`'s columns)."""
    if centre is None or not len(truth[keep]):
        return {"mean_abs_error": None, "mean_width": None, "coverage": None, "n_models": 0}
    centre, lo, hi, truth = (np.ascontiguousarray(a[..., keep]) for a in (centre, lo, hi, truth))
    return {"mean_abs_error": round(float(np.abs(centre - truth).mean()), 6),
            "mean_width": round(float((hi - lo).mean()), 6),
            "coverage": round(float(((lo <= truth) & (truth <= hi)).mean()), 4), "n_models": int(len(truth))}


def build_design_only_manifest(store, n_items=None, *, benchmarks=None, datasets=None, models=None, metric=None,
                               estimator=None, random_state: int = 0, group_name: str = "harness_ext_reduced",
                               level: float = 0.9, warnings=(), n_total=None, design: str = "random",
                               allocation: str = "neyman", n_strata: int = 5, stratum_allocation: str = "proportional",
                               exclude_models=None) -> dict:
    """The item-level manifest of tasks known only by their lm-eval scores and sizes (:func:`sized_tasks`): ``n_items``
    random documents of each (or ``n_total`` over them), the sample mean as the estimator, the design's expected
    figures (:func:`design_expected`). Takes :func:`~.item_reduce.build_item_manifest`'s arguments.

    Raises
    ------
    HarnessExtError
        A design other than random items or an estimator that needs the population's answers (with none here), or
        what :func:`sized_tasks` and the budget checks raise.

    References
    ----------
    Cochran (1977), §2.5; Zhang, Dorner and Hardt (2025), §4-5.
    """
    from ... import __version__
    from .item_benchmark import KEY
    from .item_design_plan import check_design, design_block, draw_task, task_seed
    from .item_manifest import KIND, encode_ids
    from .manifest_validation import MANIFEST_VERSION

    if design != "random" or (estimator or ESTIMATOR) != ESTIMATOR:
        raise HarnessExtError(
            f"the store has no item-level results for these tasks, only their scores: only random items estimated by "
            f"their mean (--item-design random, --item-estimator {ESTIMATOR}) need no population answers; "
            f"{'--item-design ' + design if design != 'random' else '--item-estimator ' + str(estimator)} needs them "
            "(ingest the population's per-sample logs, lm-eval's --log_samples output)")
    check_design(design, ESTIMATOR, n_items, n_total, (allocation, stratum_allocation), n_strata, ESTIMATOR)
    warnings = list(warnings)
    found = sized_tasks(store, benchmarks, datasets, models, exclude_models, metric, warnings)
    weights, weighting, group = group_weights(store, found)
    n_of = allocate_documents(found, weights, n_items, n_total, allocation)
    names = sorted({m for b in found.values() for m in b["scores"].index})
    index = {m: i for i, m in enumerate(names)}
    tasks = {}
    for t, b in found.items():
        S = draw_task("random", np.empty((0, b["n_items"])), n_of[t], task_seed(random_state, t))[0]
        tasks[t] = {"benchmark": "lm_eval", "metric": b["metric"], "n_items": b["n_items"], "n_run": int(len(S)),
                    "items": encode_ids(np.arange(b["n_items"])), "sample": encode_ids(S),
                    "task_scores": {"models": [index[m] for m in b["scores"].index],
                                    "values": [round(float(v), 10) for v in b["scores"]]},
                    "notes": first_documents_warning({t: b["first_documents"]}) if b["first_documents"] else []}
        if b["first_documents"]:  # with the counts: predict and the exports can say what the estimate rests on
            tasks[t]["first_documents"] = b["first_documents"]
    expected = design_expected(found, n_of, weights, level, random_state)
    bench = sorted({b["benchmark"] for b in found.values()})
    block = design_block("random", n_items, n_total, random_state, ESTIMATOR, level, allocation, n_strata,
                         stratum_allocation, WHY)
    manifest = {
        "manifest_version": MANIFEST_VERSION, "kind": KIND,
        "tool": {"name": "harness-ext", "version": __version__}, "group_name": group_name,
        "benchmark": bench[0] if len(bench) == 1 else group_name,
        "design": dict(block, population=NO_POPULATION),
        "models": names, "weights": weights, "weighting": weighting, **({"lm_eval_group": group} if group else {}),
        "tasks": tasks,
        "datasets": [{"name": t, "benchmark": "lm_eval", "metric": b["metric"], "task": t, "num_fewshot": None}
                     for t, b in tasks.items()],
        "cost": {"items_run": int(sum(b["n_run"] for b in tasks.values())),
                 "items_full": int(sum(b["n_items"] for b in tasks.values())), "tasks": len(tasks)},
        "expected_error": expected,
        KEY: {"estimator": ESTIMATOR, "tasks": list(tasks), "matrix": np.eye(len(tasks)).tolist(), "n_errors": 0,
              "method": "each task's documents are drawn at random apart from the other tasks', and its sample mean "
                        "uses nothing else"},
        "warnings": warnings,
        "source": {"n_models": len(names), "fingerprint": hashlib.sha256(json.dumps(
            {t: b["task_scores"] for t, b in tasks.items()}, sort_keys=True).encode()).hexdigest()[:16]},
        "prediction": {"predictor": {"name": f"item estimator {ESTIMATOR}"}},
    }
    manifest["subset"] = [dict(d, step=i + 1, coverage=None) for i, d in enumerate(manifest["datasets"])]
    manifest["sizes"] = {"population_bytes": 0, "manifest_bytes": 0}
    manifest["sizes"]["manifest_bytes"] = len(json.dumps(manifest, indent=2)) + 1
    return manifest
