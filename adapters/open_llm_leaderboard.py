"""Open LLM Leaderboard v1 result files (``open-llm-leaderboard/details_<org>__<model>`` results_*.json).

Format (written by lighteval for the v1 leaderboard, 2023-2024)::

    {"config_general": {"model_name": "org/model", "model_sha": "...", "model_dtype": "torch.float16",
                        "num_few_shot_default": 0, "lighteval_sha": "...", ...},
     "results": {"harness|arc:challenge|25": {"acc": .., "acc_stderr": .., "acc_norm": .., "acc_norm_stderr": ..},
                 "harness|hellaswag|10": {...},
                 "harness|hendrycksTest-abstract_algebra|5": {"acc": .., "acc_stderr": .., ...}, ...,
                 "harness|truthfulqa:mc|0": {"mc1": .., "mc2": .., ...}, "harness|winogrande|5": {...},
                 "harness|gsm8k|5": {...}, "all": {...}},
     "versions": {...}, "config_tasks": {...}, "summary_tasks": {...}, "summary_general": {...}}

Early files (mid-2023) call the block ``config`` instead of ``config_general``;
both are read. Result keys are ``<suite>|<task>|<num_fewshot>``.

MMLU subjects (``harness|hendrycksTest-<s>|5``) become benchmark ``mmlu`` with
the canonical subject (:func:`harness_ext.benchmarks.mmlu_subject`), so a model
evaluated here and by lm-eval lands in the same cells (and disagreements are
reported as conflicts). The other leaderboard tasks are benchmark
``open_llm_leaderboard_v1`` with ``:`` in task names written ``_``
(``arc_challenge``, ``truthfulqa_mc``); their primary metric is the one the
leaderboard ranked by (:data:`LEADERBOARD_METRIC`: acc_norm for ARC and
HellaSwag, mc2 for TruthfulQA, acc for MMLU, Winogrande and GSM8K, f1 for
DROP). The ``all`` row is an average and is skipped. ``model_sha`` and dtype go
into the model's metadata, not its name.
"""

from __future__ import annotations

import re

from harness_ext.benchmarks import MMLU_BENCHMARK, chance_baseline, mmlu_subject
from harness_ext.errors import IngestError
from harness_ext.hookspecs import hookimpl
from harness_ext.report import listed
from harness_ext.types import Adapter, ResultRecord, SourceFile

BENCHMARK = "open_llm_leaderboard_v1"
_KEY_RE = re.compile(r"^(?P<suite>[A-Za-z0-9_\-]+)\|(?P<task>[^|]+)\|(?P<shots>\d+)$")
#: Metric the v1 leaderboard ranked each task by (the dataset's primary metric here).
LEADERBOARD_METRIC = {"arc_challenge": "acc_norm", "hellaswag": "acc_norm", "truthfulqa_mc": "mc2",
                      "winogrande": "acc", "gsm8k": "acc", "drop": "f1"}
_FALLBACK_ORDER = ("acc", "acc_norm", "mc2", "em", "f1", "exact_match")
#: Metrics lighteval writes as proportions (0.62 for 62%).
_PROPORTIONS = frozenset({"acc", "acc_norm", "mc1", "mc2", "em", "exact_match"})
#: Chance accuracy of the multiple-choice leaderboard tasks (1 / number of choices).
_CHOICES = {"arc_challenge": 4, "hellaswag": 4, "winogrande": 2}


def _config(doc: dict):
    for key in ("config_general", "config"):
        cfg = doc.get(key)
        if isinstance(cfg, dict) and isinstance(cfg.get("model_name"), str):
            return cfg
    return None


def _is_leaderboard(doc) -> bool:
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict) or _config(doc) is None:
        return False
    # Only the v1 leaderboard's own suite: lighteval's other suites are the lighteval adapter's.
    return any(isinstance(k, str) and k.startswith("harness|") and _KEY_RE.match(k) for k in doc["results"])


def can_handle(src: SourceFile) -> bool:
    return src.suffix == ".json" and b"harness|" in src.head and _is_leaderboard(src.try_json())


def read(src: SourceFile):
    return read_doc(src.json(), src)


def read_doc(doc, src: SourceFile) -> list:
    """The records of a v1 results document ``doc`` read from ``src`` (the file itself, or a details dataset's card
    quoting its results: :mod:`harness_ext.adapters.model_card`)."""
    cfg = _config(doc) if isinstance(doc, dict) else None
    if cfg is None or not cfg["model_name"].strip():
        raise IngestError(src.path, "no config_general.model_name")
    results = doc.get("results")
    if not isinstance(results, dict):
        raise IngestError(src.path, "results is not an object")
    model = cfg["model_name"].strip()
    model_meta = {k: cfg[k] for k in ("model_sha", "model_dtype", "model_size", "lighteval_sha") if cfg.get(k) is not None}
    model_meta["source"] = "open_llm_leaderboard_v1"
    out, unread = [], []
    for key, block in results.items():
        m = _KEY_RE.match(key) if isinstance(key, str) else None
        if m is None:
            if key != "all":  # "all" is the leaderboard's average; anything else not a task row is noted
                unread.append(str(key))
            continue
        if not isinstance(block, dict):
            raise IngestError(src.path, f"results[{key!r}] is {type(block).__name__}, expected an object of metrics")
        task, shots = m.group("task"), int(m.group("shots"))
        subject = mmlu_subject(key)
        if subject:
            benchmark, dataset, primary = MMLU_BENCHMARK, subject, "acc"
        else:
            benchmark, dataset = BENCHMARK, re.sub(r"[^a-z0-9]+", "_", task.lower()).strip("_")
            primary = LEADERBOARD_METRIC.get(dataset)
        metrics = {k: v for k, v in block.items() if not k.endswith("_stderr")}
        if not metrics:
            continue
        if primary not in metrics:
            primary = next((x for x in _FALLBACK_ORDER if x in metrics), next(iter(metrics)))
        for metric, value in metrics.items():
            if metric in _PROPORTIONS and isinstance(value, (int, float)) and not 0.0 <= value <= 1.0:
                raise IngestError(src.path, f"results[{key!r}]: {metric} = {value!r} is outside [0, 1]; the "
                                            "leaderboard writes it as a proportion (0.62 for 62%)")
            if subject:
                rb, rb_src = chance_baseline(key, metric)
            elif metric in ("acc", "acc_norm") and dataset in _CHOICES:
                rb, rb_src = 1.0 / _CHOICES[dataset], f"{_CHOICES[dataset]} answer choices"
            else:
                rb, rb_src = None, None
            out.append(ResultRecord(
                model=model, benchmark=benchmark, dataset=dataset, metric=metric, value=value,
                stderr=block.get(f"{metric}_stderr"), num_fewshot=shots, higher_is_better=True,
                random_baseline=rb, baseline_source=rb_src, task=key, primary=(metric == primary),
                model_metadata=model_meta, dataset_metadata={"harness": "open_llm_leaderboard_v1", "suite": m.group("suite")},
            ))
    if unread:
        src.note(f"{len(unread)} result key{'s' * (len(unread) != 1)} not of the form <suite>|<task>|<shots> left out: "
                 + listed(unread, 5))
    return out


@hookimpl
def harness_ext_adapters():
    yield Adapter(
        name="open-llm-leaderboard-v1",
        description="Open LLM Leaderboard v1 results_*.json (config_general + 'harness|task|shots' results)",
        can_handle=can_handle,
        read=read,
    )
