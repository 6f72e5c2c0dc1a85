"""A new model's results from the other harness, mapped onto a manifest's datasets (:func:`cross_harness_rows`).

A manifest built from HELM results names HELM scenarios; a model run with the lm-eval group ``reduce`` wrote has
lm-eval results (and the reverse). The table of :mod:`harness_ext.methods.reduction.harness_names` says which
lm-eval tasks and HELM run entries measure the same data; this module reads a model's scores through it.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ...benchmarks import MMLU_BENCHMARK
from .harness_names import (BENCHMARK_EQUIVALENTS, _equivalent_of, _helm_run_subject, _is_helm, helm_metric,
                            lm_eval_metric, lm_eval_score, lm_eval_task_list, metric_label, metric_parts)


def _v04_task(benchmark, name, task) -> Optional[str]:
    tasks = lm_eval_task_list({"benchmark": benchmark, "name": name, "task": task})
    return tasks[0] if len(tasks) == 1 else None


def _reads_lm_eval(entry: dict) -> bool:
    """Whether a manifest dataset is read from a new model's lm-eval results through the table: a HELM scenario, or
    a title of a benchmark that ran lm-eval tasks of its own (the Open LLM Leaderboard v2's ``IFEval``)."""
    return _is_helm(entry) or (entry.get("benchmark") in BENCHMARK_EQUIVALENTS and lm_eval_metric(entry) is not None)


def cross_harness_rows(datasets: list, long):
    """A new model's results from the other harness, mapped onto a manifest's datasets.

    A manifest built from HELM results has datasets such as ``helm_classic/MMLU`` (EM, the mean of
    5 subjects); a model run with the lm-eval group ``reduce`` wrote for it has ``mmlu_<subject>``
    results on ``acc``. For each dataset with an entry in the table: from lm-eval results, the mean
    of its lm-eval tasks' :func:`lm_eval_score` (every task and metric needed; the Open LLM Leaderboard v2's
    titles too, whose tasks lm-eval runs under other names); from HELM results, the
    scenario's :func:`helm_metric` (an MMLU subject: its HELM run). The prompts differ between the
    harnesses (and for some datasets the metric, see each entry's note): the scores are used as the
    same measurement, and the caller says so.

    Parameters
    ----------
    datasets : list of dict
        The manifest's datasets.
    long : pandas.DataFrame
        Results in long form (``model``, ``benchmark``, ``dataset``, ``metric``, ``task``, ``num_fewshot``,
        ``value``), those not already matched.

    Returns
    -------
    pandas.DataFrame
        ``model``, ``column``, ``value``, ``num_fewshot`` (one row per model and dataset found). ``attrs`` holds
        ``incomplete`` (a message per model and dataset whose lm-eval results lack some of the tasks or metrics
        its score needs: not read) and ``own_tasks`` (the datasets read from the lm-eval tasks their benchmark
        ran, not another harness's).
    """
    import pandas as pd

    rows, incomplete = [], []
    if long.empty:
        return pd.DataFrame(columns=["model", "column", "value", "num_fewshot"])
    helm = long["benchmark"].astype(str).str.startswith("helm")
    lm = long[~helm]
    lm_key = pd.Series([_v04_task(b, n, t if isinstance(t, str) else None)
                        for b, n, t in zip(lm["benchmark"], lm["dataset"], lm["task"])], index=lm.index, dtype=object)
    hm = long[helm]
    hm_eq = [(_equivalent_of({"benchmark": b, "name": n}), _helm_run_subject(n)) for b, n in zip(hm["benchmark"], hm["dataset"])]
    for d in datasets:
        if _reads_lm_eval(d):
            rows += _lm_eval_rows(d, lm, lm_key, incomplete)
            continue
        eq, metric = _equivalent_of(d), helm_metric(d)
        if eq is None or not metric or hm.empty:
            continue
        subject = d["name"] if d.get("benchmark") == MMLU_BENCHMARK else None
        if subject is None and list(eq.lm_eval) != lm_eval_task_list(d):
            continue  # HELM's scenario covers several lm-eval tasks: one task is not it
        ok = [(e is eq and (sub == subject if subject else sub is None)) for e, sub in hm_eq]
        part = hm[np.asarray(ok, dtype=bool) & (hm["metric"] == metric).to_numpy()]
        for model, g in part.groupby("model", sort=False):
            rows.append((model, d["name"], float(g["value"].iloc[0]), g["num_fewshot"].iloc[0]))
    out = pd.DataFrame(rows, columns=["model", "column", "value", "num_fewshot"])
    out.attrs["incomplete"] = incomplete
    out.attrs["own_tasks"] = sorted({d["name"] for d in datasets if not _is_helm(d) and _reads_lm_eval(d)}
                                    & set(out["column"]))
    return out


def _lm_eval_rows(d: dict, lm, lm_key, incomplete: list) -> list:
    """``(model, column, value, num_fewshot)`` of dataset ``d`` from lm-eval results ``lm`` (``lm_key``: each row's
    v0.4 task): the mean over its tasks of each task's :func:`lm_eval_score`, for the models that have all of them;
    a model with part of them gets a message in ``incomplete`` naming what is missing."""
    tasks, metric = lm_eval_task_list(d), lm_eval_metric(d)
    parts = metric_parts(metric)
    if not tasks or not parts:
        return []
    part = lm[lm_key.isin(tasks).to_numpy() & lm["metric"].isin(parts).to_numpy()]
    part = part.assign(_task=lm_key[part.index]).drop_duplicates(["model", "_task", "metric"])
    rows = []
    for model, g in part.groupby("model", sort=False):
        scores, missing = [], []
        for t in tasks:
            gt = g[g["_task"] == t]
            v, lacking = lm_eval_score(metric, dict(zip(gt["metric"], gt["value"])))
            scores.append(v)
            missing += [f"{m} of {t}" for m in lacking]
        if missing:
            incomplete.append(f"{model}: {d['name']} is {metric_label(metric)} of {', '.join(tasks[:4])}"
                              f"{' ...' if len(tasks) > 4 else ''}{' (their mean)' * (len(tasks) > 1)}; its lm-eval "
                              f"results lack {', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}, so "
                              f"{d['name']} is not read from them")
            continue
        rows.append((model, d["name"], float(np.mean(scores)), g["num_fewshot"].iloc[0]))
    return rows
