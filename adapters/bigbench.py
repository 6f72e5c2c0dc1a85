"""BIG-bench ``results/scores_<model>.json`` files (google/BIG-bench, ``bigbench/api/results.py``).

Format (``ResultsFileData``: ``scores: List[ScoreData]``, ``task: TaskData``,
``model: ModelData``, optional ``queries``)::

    {"model": {"model_family": "BIG-G T=0", "model_name": "8b", "total_params": ..,
               "non_embedding_params": .., "flop_matched_non_embedding_params": .., "training_batch_size": ..,
               "training_steps": .., "description": "..", "decoding_params": {..}, "additional_details": ".."},
     "task": {"task_name": "logical_deduction"},
     "scores": [{"preferred_score": "multiple_choice_grade",
                 "score_dict": {"multiple_choice_grade": 0.31, "exact_str_match": 0.0, ...},
                 "low_score": 0.2, "high_score": 1.0, "number_of_shots": 0,
                 "subtask_description": "logical_deduction:five_objects"}, ...]}

One dataset per task, or per subtask when the task has subtasks: the entry
whose ``subtask_description`` is the task name itself is then the aggregate
over its subtasks and is skipped. Dataset names are the subtask descriptions
(``logical_deduction:five_objects``) or the task name. Each ``number_of_shots``
is its own shot setting. Metric: ``preferred_score`` (primary) and the other
``score_dict`` entries (non-primary; ``normalized_aggregate_score`` is derived
and dropped; a secondary entry that is not a number is left out and counted in
a note; the Brier score and the expected calibration error are lower-is-better). ``multiple_choice_grade`` and ``exact_str_match`` outside [0, 1]
refuse the file.

Normalisation matches the paper: BIG-bench normalises the preferred score as
``(x - low_score) / (high_score - low_score)``. The preferred metric's record
stores ``low_score`` as the random baseline (``baseline_source`` "BIG-bench
low_score") and ``high_score`` as ``max_score``, with ``min_score =
min(0, low_score)``; the matrix's chance correction then reproduces the paper's
formula exactly (for any ``min_score <= low_score``). When ``high_score <
low_score`` the metric is lower-is-better and the bounds are stored flipped
(``min_score = high_score``, ``max_score = low_score``), which gives the same
formula.

BIG-bench Lite: the 24 tasks in :data:`BIGBENCH_LITE_TASKS` carry
``dataset_metadata["bigbench_lite"] = True`` and their records are written
twice, under benchmark ``bigbench`` (all of BIG-bench) and under benchmark
``bigbench_lite``. So ``--benchmark bigbench`` is the full benchmark and
``--benchmark bigbench_lite`` is exactly BBL; do not select both at once (the
BBL columns would appear twice).

Model name: ``<model_family>/<model_name>`` (``BIG-G T=0/8b``); the parameter
counts and training details go into the model's metadata.

References
----------
Srivastava et al., "Beyond the Imitation Game" (BIG-bench, 2022), §2.1 (preferred
metric, low/high scores and the normalised score) and §2.2 / App. (BIG-bench Lite).
"""

from __future__ import annotations

import math

from harness_ext.errors import IngestError
from harness_ext.hookspecs import hookimpl
from harness_ext.report import listed
from harness_ext.types import Adapter, ResultRecord, SourceFile

BIGBENCH_BENCHMARK = "bigbench"
BIGBENCH_LITE_BENCHMARK = "bigbench_lite"
#: The 24 BIG-bench Lite (BBL24) tasks (bigbench/benchmark_tasks/keywords_to_tasks.md, bbseqio/bigbench_lite.py).
BIGBENCH_LITE_TASKS = frozenset({
    "auto_debugging", "bbq_lite_json", "code_line_description", "conceptual_combinations", "conlang_translation",
    "emoji_movie", "formal_fallacies_syllogisms_negation", "hindu_knowledge", "known_unknowns",
    "language_identification", "linguistics_puzzles", "logic_grid_puzzle", "logical_deduction",
    "misconceptions_russian", "novel_concepts", "operators", "parsinlu_reading_comprehension",
    "play_dialog_same_or_different", "repeat_copy_logic", "strange_stories", "strategyqa",
    "symbol_interpretation", "vitaminc_fact_verification", "winowhy",
})
_DERIVED = frozenset({"normalized_aggregate_score"})
#: Metrics BIG-bench computes as a share of examples (``bigbench/api/task_metrics.py``): always in [0, 1].
_PROPORTIONS = frozenset({"multiple_choice_grade", "exact_str_match"})
#: Secondary metrics where lower is better (``bigbench/api/task_metrics.py``: Brier score, calibration error).
_LOWER_IS_BETTER = frozenset({"calibration_multiple_choice_brier_score", "expected_calibration_error"})
_MODEL_META = ("total_params", "non_embedding_params", "flop_matched_non_embedding_params", "training_batch_size",
               "training_steps", "description")


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))


def _looks_like_scores(doc) -> bool:
    return (isinstance(doc, dict) and isinstance(doc.get("scores"), list) and isinstance(doc.get("model"), dict)
            and "model_family" in doc["model"])


def can_handle(src: SourceFile) -> bool:
    return src.suffix == ".json" and b'"scores"' in src.head and _looks_like_scores(src.try_json())


def _task_name(doc: dict, src: SourceFile, entries: list) -> str:
    task = doc.get("task")
    if isinstance(task, dict) and isinstance(task.get("task_name"), str) and task["task_name"].strip():
        return task["task_name"].strip()
    if src.path.parent.name == "results" and src.path.parent.parent.name:
        return src.path.parent.parent.name  # bigbench/benchmark_tasks/<task>/results/scores_*.json
    prefixes = {str(e.get("subtask_description", "")).split(":", 1)[0] for e in entries}
    if len(prefixes) == 1 and next(iter(prefixes)):
        return next(iter(prefixes))
    raise IngestError(src.path, "cannot tell the task: no task.task_name and not under <task>/results/")


def _bounds(low, high) -> tuple:
    """``(min_score, max_score, higher_is_better)`` that make the matrix normalisation equal the paper's."""
    if not (_num(low) and _num(high)) or high == low:
        return None, None, True
    if high > low:
        return min(0.0, float(low)), float(high), True
    return float(high), float(low), False


def read(src: SourceFile):
    doc = src.json()
    if not _looks_like_scores(doc):
        raise IngestError(src.path, "not a BIG-bench scores file (needs 'model' with model_family and a 'scores' list)")
    info = doc["model"]
    family, name = info.get("model_family"), info.get("model_name")
    if not isinstance(family, str) or not isinstance(name, str) or not (family.strip() or name.strip()):
        raise IngestError(src.path, "model.model_family / model.model_name missing")
    family, name = family.strip(), name.strip()
    model = name if not family or name.startswith(family) else (f"{family}/{name}" if name else family)
    model_meta = {k: info[k] for k in _MODEL_META if info.get(k) is not None}
    model_meta["model_family"] = family
    entries = doc["scores"]
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise IngestError(src.path, f"scores[{i}] is not an object")
    task = _task_name(doc, src, entries)
    descriptions = [str(e.get("subtask_description") or task).strip() for e in entries]
    has_subtasks = any(d.startswith(task + ":") for d in descriptions)
    lite = task in BIGBENCH_LITE_TASKS
    out, dropped = [], []
    for i, (e, desc) in enumerate(zip(entries, descriptions)):
        if has_subtasks and desc == task:
            continue  # the aggregate over the subtasks
        dataset = desc if desc == task or desc.startswith(task + ":") else f"{task}:{desc}"
        scores = e.get("score_dict")
        preferred = e.get("preferred_score")
        if not isinstance(scores, dict) or not isinstance(preferred, str):
            raise IngestError(src.path, f"scores[{i}] ({desc}) needs score_dict and preferred_score")
        if preferred not in scores:
            raise IngestError(src.path, f"scores[{i}] ({desc}): preferred score {preferred!r} not in score_dict")
        shots = e.get("number_of_shots")
        shots = int(shots) if _num(shots) and float(shots) == int(shots) and shots >= 0 else None
        low, high = e.get("low_score"), e.get("high_score")
        lo, hi, higher = _bounds(low, high)
        meta = {"harness": "bigbench", "task": task, "bigbench_lite": lite, "low_score": low, "high_score": high}
        for metric, value in scores.items():
            if metric in _DERIVED:
                continue
            if metric != preferred and not _num(value):
                dropped.append(f"{dataset} {metric}")  # a missing secondary score: noted, not a reason to reject
                continue
            if metric in _PROPORTIONS and _num(value) and not 0.0 <= value <= 1.0:
                raise IngestError(src.path, f"scores[{i}] ({desc}): {metric} = {value!r} is outside [0, 1]")
            is_pref = metric == preferred
            rec = dict(
                model=model, dataset=dataset, metric=metric, value=value, num_fewshot=shots, task=task,
                primary=is_pref,
                higher_is_better=higher if is_pref else (False if metric in _LOWER_IS_BETTER else None),
                random_baseline=float(low) if is_pref and lo is not None else None,
                baseline_source="BIG-bench low_score" if is_pref and lo is not None else None,
                min_score=lo if is_pref else None, max_score=hi if is_pref else None,
                model_metadata=model_meta, dataset_metadata=meta,
            )
            out.append(ResultRecord(benchmark=BIGBENCH_BENCHMARK, **rec))
            if lite:
                out.append(ResultRecord(benchmark=BIGBENCH_LITE_BENCHMARK, **rec))
    if dropped:
        src.note(f"{len(dropped)} secondary score{'s' * (len(dropped) != 1)} left out (not a number): "
                 + listed(dropped, 6))
    return out


@hookimpl
def harness_ext_adapters():
    yield Adapter(
        name="bigbench",
        description="BIG-bench results/scores_<model>.json: one dataset per (sub)task, low_score as chance; BBL flagged",
        can_handle=can_handle,
        read=read,
    )
