"""A new model's HELM run directories read as a HELM leaderboard's datasets.

A manifest built from a HELM leaderboard (helm-summarize tables, or Every Eval Ever records of them) names its
datasets by the leaderboard's titles (``helm_classic/QuAC``, ``MMLU``), while the run directories ``helm-run``
writes for the reduced conf are named by their run entries (``quac:model=meta_llama-2-70b,...``; an MMLU subject
is stored under benchmark ``mmlu``). Both are HELM: the conf's entries for a title are the runs whose scores the
leaderboard shows in that column, on the scenario's main metric, and the column is their mean (helm-summarize
averages the matching runs: HELM Classic's MMLU is the mean of its 5 subjects, RAFT of its 11 subsets). This
module makes that score from the new model's runs, so that ``predict`` reads them as the population's own
measurement, not as the other harness's.

A run matches an entry when its scenario is the entry's and its arguments, less those that name the model, the
shots or the number of instances (:data:`harness_ext.adapters.helm_run_names.MODEL_ARGS`, ``SHOT_ARGS``,
``SAMPLE_ARGS``), are the entry's, or the entry's plus the ``method`` the run-spec function writes into the name
(HELM Classic's TruthfulQA run is ``truthful_qa:task=mc_single,method=multiple_choice_joint``). A run of an
ablation (``groups=ablation_prompts``, ``instructions=expert``) is another measurement and never matches.

References
----------
Liang et al., "Holistic Evaluation of Language Models" (2022), §3 and App. B (main metric per scenario);
crfm-helm ``src/helm/benchmark/presentation/summarize.py`` (a group's cell aggregates its runs) and
``src/helm/common/object_spec.py`` (``parse_object_spec``: the description grammar).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ...benchmarks import MMLU_BENCHMARK, MMLU_METRIC, mmlu_subject

#: Arguments a run-spec function writes into a run's name beside the entry's own (HELM's default method).
ADDED_BY_RUN_SPEC = frozenset({"method"})


def _is_leaderboard(entry: dict) -> bool:
    """A HELM dataset named by a leaderboard title (``helm_classic``, ``helm_lite``, ...), not a run name."""
    bench = str(entry.get("benchmark") or "")
    return bench.startswith("helm") and bench != "helm"


def entry_key(desc: str) -> Optional[tuple]:
    """What a run of description ``desc`` is stored as: ``(benchmark, dataset, metric, args)``, or None.

    ``args`` is the frozenset of the entry's dataset arguments (None for an MMLU subject, which is matched by its
    subject); ``metric`` the scenario's main metric.
    """
    from ...adapters.helm import MAIN_METRICS, parse_run_name

    try:
        run = parse_run_name(desc)
    except ValueError:
        return None
    if run.scenario == "mmlu":
        subject = mmlu_subject(f"mmlu:subject={run.arg_dict.get('subject', '')}")
        return (MMLU_BENCHMARK, subject, MMLU_METRIC, None) if subject else None
    main = MAIN_METRICS.get(run.group)
    if not main or not main[0]:
        return None
    return ("helm", run.scenario, main[0], frozenset(run.dataset_args))


def _run_matches(key: tuple, dataset: str) -> bool:
    """Whether a stored HELM run dataset (``commonsense:dataset=hellaswag,method=...``) is entry ``key``'s run."""
    from ...adapters.helm import parse_run_name

    try:
        run = parse_run_name(dataset)
    except ValueError:
        return False
    if run.scenario != key[1]:
        return False
    args = frozenset(run.dataset_args)
    return key[3] <= args and all(k in ADDED_BY_RUN_SPEC for k, _ in args - key[3])


def helm_run_rows(datasets: list, long):
    """A new model's HELM runs as the scores of a manifest's leaderboard datasets.

    Parameters
    ----------
    datasets : list of dict
        The manifest's datasets (those not matched otherwise).
    long : pandas.DataFrame
        Results in long form (``model``, ``benchmark``, ``dataset``, ``metric``, ``task``, ``num_fewshot``,
        ``value``; a HELM run's ``task`` is its run name, which tells an MMLU subject's HELM run from lm-eval's).

    Returns
    -------
    pandas.DataFrame
        ``model``, ``column``, ``value``, ``num_fewshot``: per model and leaderboard dataset whose every run entry
        the model ran, the mean of the runs' main metric (one run per entry: the first of several). ``attrs``
        holds ``incomplete``: a message per model and dataset with part of the entries' runs (not read: the
        leaderboard's score is the mean over all of them).
    """
    import pandas as pd

    from .harness_names import helm_description_list

    rows, incomplete = [], []
    cols = ["model", "column", "value", "num_fewshot"]
    helmish = long[long["benchmark"].isin(["helm", MMLU_BENCHMARK])] if len(long) else long
    for d in datasets:
        if not _is_leaderboard(d) or helmish.empty:
            continue
        keys = [entry_key(desc) for desc in helm_description_list(d)]
        if not keys or any(k is None for k in keys):
            continue
        parts = []
        for k in keys:
            same = (helmish["benchmark"] == k[0]) & (helmish["metric"] == k[2])
            if k[3] is None:  # an MMLU subject: lm-eval's results share the benchmark, a HELM run's task is its name
                hit = same & (helmish["dataset"] == k[1]) & helmish["task"].astype(str).str.startswith("mmlu:")
            else:
                hit = same & helmish["dataset"].map(lambda n, k=k: _run_matches(k, str(n))).astype(bool)
            parts.append(helmish[hit.to_numpy()].drop_duplicates("model"))
        models = {m for p in parts for m in p["model"]}
        for model in sorted(models):
            got = [p[p["model"] == model] for p in parts]
            if any(g.empty for g in got):
                n = sum(not g.empty for g in got)
                incomplete.append(f"{model}: {d['name']} is the mean of {len(keys)} HELM runs and its runs hold "
                                  f"{n} of them, so {d['name']} is not read from them (run every entry of the conf)")
                continue
            rows.append((model, d["name"], float(np.mean([float(g["value"].iloc[0]) for g in got])),
                         got[0]["num_fewshot"].iloc[0]))
    out = pd.DataFrame(rows, columns=cols)
    out.attrs["incomplete"] = incomplete
    return out
