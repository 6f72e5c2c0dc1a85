"""lighteval ``results_*.json`` files of any task suite (Hugging Face's evaluation suite, 2024 on).

Format::

    {"config_general": {"model_name": "gpt2", "model_sha": "...", "lighteval_sha": "...", ...},
     "results": {"lighteval|gsm8k|0": {"em": .., "em_stderr": .., "maj@8": .., ...},
                 "leaderboard|mmlu:abstract_algebra|5": {"acc": .., "acc_stderr": ..}, "all": {...}},
     "versions": {...}, "config_tasks": {"lighteval|gsm8k": {"metric": [{"metric_name": "em",
                                                                          "higher_is_better": true}, ...]}}, ...}

Result keys are ``<suite>|<task>|<shots>`` (lighteval writes ``<task>|<shots>`` without a suite since
0.11, and ``config_general.model_config.model_name`` for the model). Files whose keys are the v1 Open
LLM Leaderboard's ``harness|...`` are :mod:`harness_ext.adapters.open_llm_leaderboard`'s.

Benchmarks: a suite's prompts are its own (``helm|hellaswag`` and ``leaderboard|hellaswag`` score
differently), so the tasks of suite ``S`` are datasets of benchmark ``lighteval_S`` (``lighteval`` for
lighteval's own suite and for keys without one), ``:`` written ``_`` (``arc_challenge``). MMLU
subjects of the ``leaderboard`` and ``original`` suites (the prompts the v1 leaderboard and the MMLU
paper used, as lm-eval does) become benchmark ``mmlu`` with the canonical subject, so they land in
the cells lm-eval's ``mmlu_<s>`` fill. A ``<task>:_average`` row (lighteval's mean over a task's
subsets) is an aggregate; ``all`` (the mean over every task of the run) is left out, with a note.

Metrics: ``<m>_stderr`` is ``<m>``'s standard error, never a score. Direction is the
``higher_is_better`` of the task's ``config_tasks`` entry, else lower for perplexities and
bits-per-byte. Primary metric: the v1 leaderboard's for its tasks, else the first of
:data:`PRIMARY_ORDER`, else the first the task lists. A task's size is its ``effective_num_docs``
(the documents scored, fewer under ``--max_samples``).

Chance levels (the random baseline of ``acc``-like metrics): from the answer choices of each document in the
run's details files beside the results, else from the task's name (lighteval's ``glue:mnli`` is lm-eval's
``mnli``), see :mod:`harness_ext.adapters.lighteval_choices`; multiple-choice tasks left without one are counted
in a note.
"""

from __future__ import annotations

import re
from typing import Optional

from harness_ext.benchmarks import MMLU_BENCHMARK, chance_baseline, mmlu_subject
from harness_ext.errors import IngestError
from harness_ext.hookspecs import hookimpl
from harness_ext.report import listed
from harness_ext.types import Adapter, ResultRecord, SourceFile

from .lighteval_choices import CHOICE_METRICS, LIGHTEVAL_NAMES, details_chance
from .lighteval_files import KEY_RE as _KEY_RE
from .lm_eval import LOWER_IS_BETTER
from .lm_eval_values import as_number
from .open_llm_leaderboard import LEADERBOARD_METRIC

PRIMARY_ORDER = ("acc", "acc_norm", "em", "exact_match", "extractive_match", "quasi_exact_match", "f1", "mc2")
#: Metrics lighteval reports as proportions (0.62 for 62%).
_PROPORTIONS = frozenset({"acc", "acc_norm", "em", "exact_match", "quasi_exact_match", "extractive_match", "mc1", "mc2"})
#: Suites whose MMLU prompts are the ones lm-eval's ``mmlu_<subject>`` and the v1 leaderboard use.
_MMLU_SUITES = frozenset({"leaderboard", "original"})


def _model(doc: dict) -> Optional[str]:
    cfg = doc.get("config_general")
    if not isinstance(cfg, dict):
        return None
    for block in (cfg, cfg.get("model_config")):
        if isinstance(block, dict) and isinstance(block.get("model_name"), str) and block["model_name"].strip():
            return block["model_name"].strip()
    return None


def _is_lighteval(doc) -> bool:
    if not (isinstance(doc, dict) and isinstance(doc.get("config_general"), dict)
            and isinstance(doc.get("results"), dict)):
        return False
    keys = [_KEY_RE.match(k) for k in doc["results"] if isinstance(k, str)]
    return any(keys) and not any(m and m.group("suite") == "harness" for m in keys)


def can_handle(src: SourceFile) -> bool:
    return src.suffix == ".json" and b'"config_general"' in src.head and _is_lighteval(src.try_json())


def _task_configs(doc: dict) -> dict:
    """``{task key without shots: ({metric: higher_is_better}, documents scored or None)}`` from ``config_tasks``
    (its metrics under ``metric`` or ``metrics``; ``effective_num_docs``, fewer than the task has under
    ``--max_samples``)."""
    out: dict = {}
    tasks = doc.get("config_tasks")
    for key, cfg in (tasks.items() if isinstance(tasks, dict) else ()):
        if not isinstance(cfg, dict):
            continue
        metrics = cfg.get("metrics") or cfg.get("metric")
        dirs = {m["metric_name"]: m["higher_is_better"] for m in (metrics if isinstance(metrics, list) else ())
                if isinstance(m, dict) and isinstance(m.get("metric_name"), str)
                and isinstance(m.get("higher_is_better"), bool)}
        n = cfg.get("effective_num_docs")
        n = n if isinstance(n, int) and not isinstance(n, bool) and 0 < n < 2**63 else None
        out[str(key).rsplit("|", 1)[0] if _KEY_RE.match(str(key)) else str(key)] = (dirs, n)
    return out


def dataset_name(path, key: str, task: str) -> str:
    """``task`` snake-cased as a dataset name (``evil.yaml`` -> ``evil_yaml``).

    Raises
    ------
    IngestError
        Naming the file and the key as written when ``task`` has no letter or digit (``custom|..|0``).
    """
    name = re.sub(r"[^a-z0-9]+", "_", task.lower()).strip("_")
    if not name:
        from harness_ext.safe_output import quoted

        raise IngestError(path, f"the result key {quoted(key)} names the task {quoted(task)}, which has no letter or "
                                "digit to name a dataset by")
    return name


def _dataset(suite: Optional[str], task: str, path=None, key: Optional[str] = None) -> tuple:
    """``(benchmark, dataset, aggregate)`` of a result key's suite and task (``path`` and ``key`` for the error of
    :func:`dataset_name`)."""
    name = task[: -len(":_average")] if task.endswith(":_average") else task
    subject = mmlu_subject(f"mmlu_{name[5:]}") if suite in _MMLU_SUITES and name.startswith("mmlu:") else None
    if subject:
        return MMLU_BENCHMARK, subject, False
    benchmark = "lighteval" if suite in (None, "lighteval") else f"lighteval_{suite}"
    if name == "mmlu" and suite in _MMLU_SUITES:
        benchmark = MMLU_BENCHMARK
    return benchmark, dataset_name(path, task if key is None else key, name), name != task


def read(src: SourceFile):
    doc = src.json()
    model = _model(doc) if isinstance(doc, dict) else None
    if model is None:
        raise IngestError(src.path, "a lighteval results file naming no model (config_general.model_name or "
                                    "config_general.model_config.model_name)")
    cfg = doc["config_general"]
    meta = {k: cfg[k] for k in ("model_sha", "model_dtype", "model_size", "lighteval_sha") if cfg.get(k) is not None}
    meta["source"] = "lighteval"
    configs = _task_configs(doc)
    notes: list = []
    chances = details_chance(src.path, doc, notes)
    out, unread, missing = [], [], []
    for key, block in doc["results"].items():
        m = _KEY_RE.match(key) if isinstance(key, str) else None
        if m is None:
            unread.append(str(key))
            continue
        if not isinstance(block, dict):
            raise IngestError(src.path, f"results[{key!r}] is {type(block).__name__}, expected an object of metrics")
        out += _records(src, key, m, block, configs, model, meta, missing, chances)
    if unread:
        src.note(f"{len(unread)} result key{'s' * (len(unread) != 1)} not of the form [<suite>|]<task>|<shots> left "
                 f"out (\"all\" is the run's mean over its tasks): {listed(unread, 5)}")
    if missing:
        src.note(f"{len(missing)} metric{'s' * (len(missing) != 1)} written as null or not a number left out: "
                 f"{listed(missing, 8)}")
    for text in notes:
        src.note(text)
    _note_without_chance(src, out)
    return out


def _note_without_chance(src, out) -> None:
    """Count the multiple-choice tasks (scored by ``acc`` or ``acc_norm``) left without a chance level: the matrix
    normalises them as tasks without one, which the user should know."""
    without = sorted({r.task for r in out if r.metric in CHOICE_METRICS and r.random_baseline is None})
    if without:
        src.note(f"{len(without)} multiple-choice task{'s' * (len(without) != 1)} (acc, acc_norm) without a chance "
                 "level (the number of answer choices is neither in the run's details files beside the results nor "
                 f"known for the task's name): {listed(without, 8)}")


def _chance(key, benchmark, dataset, task, metric, chances) -> tuple:
    """``(random_baseline, source)`` of one metric of a task: the run's details files' (``acc``, ``acc_norm``), else
    the task's name's (lighteval's name mapped to lm-eval's by :data:`LIGHTEVAL_NAMES`), else ``(None, None)``."""
    if metric in CHOICE_METRICS and key in chances:
        return chances[key]
    if task in LIGHTEVAL_NAMES:
        return chance_baseline(LIGHTEVAL_NAMES[task], metric)
    return chance_baseline(f"mmlu_{dataset}" if benchmark == MMLU_BENCHMARK else dataset, metric)


def _records(src, key, m, block, configs, model, meta, missing, chances) -> list:
    suite, task, shots = m.group("suite"), m.group("task"), int(m.group("shots"))
    benchmark, dataset, aggregate = _dataset(suite, task, src.path, key)
    listed_dirs, n_docs = configs.get(f"{suite}|{task}" if suite else task, ({}, None))
    metrics = {}
    for k, v in block.items():
        if isinstance(k, str) and not k.endswith("_stderr"):
            value = as_number(v)
            if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
                missing.append(f"{key} {k}")
            else:
                metrics[k] = value
    primary = LEADERBOARD_METRIC.get(dataset) if suite == "leaderboard" else None
    if primary not in metrics:
        primary = next((x for x in PRIMARY_ORDER if x in metrics), next(iter(metrics), None))
    out = []
    for metric, value in metrics.items():
        if metric in _PROPORTIONS and not 0.0 <= value <= 1.0:
            raise IngestError(src.path, f"results[{key!r}]: {metric} = {value!r} is outside [0, 1]; lighteval "
                                        "writes it as a proportion (0.62 for 62%)")
        higher = listed_dirs.get(metric)
        if higher is None:
            higher = not (metric in LOWER_IS_BETTER or "perplexity" in metric)
        rb, rb_src = _chance(key, benchmark, dataset, task, metric, chances)
        stderr = as_number(block.get(f"{metric}_stderr"))
        out.append(ResultRecord(
            model=model, benchmark=benchmark, dataset=dataset, metric=metric, value=value,
            stderr=stderr if isinstance(stderr, (int, float)) and not isinstance(stderr, bool) else None,
            num_fewshot=shots, higher_is_better=higher, n_samples=n_docs,
            random_baseline=rb, baseline_source=rb_src, task=key, primary=metric == primary, aggregate=aggregate,
            model_metadata=meta, dataset_metadata={"harness": "lighteval", "suite": suite}))
    return out


@hookimpl
def harness_ext_adapters():
    yield Adapter(
        name="lighteval",
        description="lighteval results_*.json (config_general + '<suite>|<task>|<shots>' results, any suite)",
        can_handle=can_handle,
        read=read,
        revision="2",  # 2: chance levels from the run's details files and lighteval's task names
    )
