"""Canonical benchmark knowledge shared by adapters: MMLU subjects, chance levels.

One canonical MMLU naming (the 57 subject identifiers of Hendrycks et al.) so
that the same model evaluated by lm-eval v0.3 (``hendrycksTest-<s>``), v0.4
(``mmlu_<s>``), HELM (``mmlu:subject=<s>``) or the Open LLM Leaderboard v1
(``harness|hendrycksTest-<s>|5``) lands in the same cell.
"""

from __future__ import annotations

import functools
import re
from typing import Optional

MMLU_BENCHMARK = "mmlu"
#: The one metric name MMLU subject scores are stored under, whichever harness produced them:
#: lm-eval's ``acc``, HELM's ``exact_match`` / "EM" (multiple_choice_joint: the letter is the answer)
#: and the Open LLM Leaderboard's ``acc`` all measure accuracy on the same 4-way questions, so the
#: same model from two sources meets in one cell and disagreements show up as conflicts.
MMLU_METRIC = "acc"

MMLU_SUBJECTS = (
    "abstract_algebra", "anatomy", "astronomy", "business_ethics", "clinical_knowledge", "college_biology",
    "college_chemistry", "college_computer_science", "college_mathematics", "college_medicine", "college_physics",
    "computer_security", "conceptual_physics", "econometrics", "electrical_engineering", "elementary_mathematics",
    "formal_logic", "global_facts", "high_school_biology", "high_school_chemistry", "high_school_computer_science",
    "high_school_european_history", "high_school_geography", "high_school_government_and_politics",
    "high_school_macroeconomics", "high_school_mathematics", "high_school_microeconomics", "high_school_physics",
    "high_school_psychology", "high_school_statistics", "high_school_us_history", "high_school_world_history",
    "human_aging", "human_sexuality", "international_law", "jurisprudence", "logical_fallacies", "machine_learning",
    "management", "marketing", "medical_genetics", "miscellaneous", "moral_disputes", "moral_scenarios", "nutrition",
    "philosophy", "prehistory", "professional_accounting", "professional_law", "professional_medicine",
    "professional_psychology", "public_relations", "security_studies", "sociology", "us_foreign_policy", "virology",
    "world_religions",
)
_MMLU_SET = frozenset(MMLU_SUBJECTS)

#: Test questions per MMLU subject (Hendrycks et al., 2021; 14,042 in all), as lm-eval v0.4 counts them
#: (``n-samples``): its ``mmlu`` group score is the mean of the subjects' accuracies weighted by these.
MMLU_TEST_SIZES = {
    "abstract_algebra": 100, "anatomy": 135, "astronomy": 152, "business_ethics": 100, "clinical_knowledge": 265,
    "college_biology": 144, "college_chemistry": 100, "college_computer_science": 100, "college_mathematics": 100,
    "college_medicine": 173, "college_physics": 102, "computer_security": 100, "conceptual_physics": 235,
    "econometrics": 114, "electrical_engineering": 145, "elementary_mathematics": 378, "formal_logic": 126,
    "global_facts": 100, "high_school_biology": 310, "high_school_chemistry": 203,
    "high_school_computer_science": 100, "high_school_european_history": 165, "high_school_geography": 198,
    "high_school_government_and_politics": 193, "high_school_macroeconomics": 390, "high_school_mathematics": 270,
    "high_school_microeconomics": 238, "high_school_physics": 151, "high_school_psychology": 545,
    "high_school_statistics": 216, "high_school_us_history": 204, "high_school_world_history": 237,
    "human_aging": 223, "human_sexuality": 131, "international_law": 121, "jurisprudence": 108,
    "logical_fallacies": 163, "machine_learning": 112, "management": 103, "marketing": 234, "medical_genetics": 100,
    "miscellaneous": 783, "moral_disputes": 346, "moral_scenarios": 895, "nutrition": 306, "philosophy": 311,
    "prehistory": 324, "professional_accounting": 282, "professional_law": 1534, "professional_medicine": 272,
    "professional_psychology": 612, "public_relations": 110, "security_studies": 245, "sociology": 201,
    "us_foreign_policy": 100, "virology": 166, "world_religions": 171,
}

_MMLU_PATTERNS = (
    re.compile(r"^hendrycksTest-(?P<s>[a-z_]+)$"),
    re.compile(r"^harness\|hendrycksTest-(?P<s>[a-z_]+)\|\d+$"),
    # Only the standard v0.4 subject tasks: the prompt-format variants (mmlu_continuation_*,
    # mmlu_generative_*, mmlu_flan_*) score differently and stay lm_eval tasks of their own.
    re.compile(r"^mmlu_(?P<s>[a-z_]+)$"),
    re.compile(r"^mmlu:subject=(?P<s>[a-z_]+)(?:,.*)?$"),
)


def mmlu_subject(task: str) -> Optional[str]:
    """The canonical MMLU subject a task name refers to, or None if it is not an MMLU subject task.

    Group rows (``mmlu``, ``mmlu_humanities``, ``hendrycksTest``) are not subjects, and
    neither are lm-eval's prompt-format variants (``mmlu_continuation_<s>``,
    ``mmlu_generative_<s>``, ``mmlu_flan_*_<s>``): they are other tasks with other
    scores, and merging them into the subject's cell would only produce conflicts.

    Examples
    --------
    >>> mmlu_subject("hendrycksTest-abstract_algebra"), mmlu_subject("mmlu_virology"), mmlu_subject("mmlu_stem")
    ('abstract_algebra', 'virology', None)
    """
    for pat in _MMLU_PATTERNS:
        m = pat.match(task)
        if m and m.group("s") in _MMLU_SET:
            return m.group("s")
    return None


#: Chance accuracy of multiple-choice tasks whose number of choices is fixed
#: (1 / choices). Used as the random baseline for ``acc``-like metrics.
CHOICES = {
    "mmlu": 4, "arc_easy": 4, "arc_challenge": 4, "hellaswag": 4, "sciq": 4, "logiqa": 4, "openbookqa": 4,
    "piqa": 2, "winogrande": 2, "wsc": 2, "wsc273": 2, "boolq": 2, "copa": 2, "cola": 2, "sst2": 2, "mrpc": 2,
    "qqp": 2, "qnli": 2, "rte": 2, "wnli": 2, "mnli": 3, "mnli_mismatch": 3, "anli_r1": 3, "anli_r2": 3, "anli_r3": 3,
    "truthfulqa_mc1": None, "headqa_en": 4, "headqa_es": 4, "mathqa": 5, "pubmedqa": 3, "race": 4,
    # SuperGLUE's CB (entailment, contradiction, neutral) and WiC (yes, no). Not MultiRC: lm-eval's `acc` there is
    # the share of questions with every answer right (0.016 for LLaMA-13B), not one choice of two.
    "cb": 3, "wic": 2,
}
ACCURACY_METRICS = frozenset({"acc", "acc_norm", "exact_match", "em"})


def chance_baseline(task: str, metric: str) -> tuple:
    """``(random_baseline, source)`` for an accuracy-like metric of a known task, else ``(None, None)``."""
    if metric.split(",")[0] not in ACCURACY_METRICS:
        return None, None
    key = MMLU_BENCHMARK if mmlu_subject(task) else task
    n = CHOICES.get(key)
    if not n:
        return None, None
    return 1.0 / n, f"{n} answer choices"


#: The benchmark of an Every Eval Ever record that names no source.
EEE_BENCHMARK = "every_eval_ever"
#: The benchmark Inspect AI's own logs are stored under (:mod:`harness_ext.adapters.inspect_ai`).
INSPECT_BENCHMARK = "inspect"
#: Every Eval Ever source names (as :func:`benchmark_name` writes them) of harnesses whose own files another adapter
#: reads: their records are stored under that adapter's benchmark, so one product has one name in a store
#: (Every Eval Ever's records of Inspect runs name their source ``inspect_ai``).
EEE_SOURCE_BENCHMARKS = {"inspect_ai": INSPECT_BENCHMARK}


@functools.lru_cache(maxsize=4096)  # one name per leaderboard, asked once per file
def benchmark_name(source_name: str) -> str:
    """A leaderboard's name as a benchmark name: lower case, runs of other characters as ``_``."""
    return re.sub(r"[^a-z0-9]+", "_", source_name.strip().lower()).strip("_")


def eee_benchmark(doc: dict) -> str:
    """The benchmark an Every Eval Ever record's results are stored under: its ``source_metadata.source_name``
    (schema 0.0.1's ``evaluation_source.evaluation_source_name``) as :func:`benchmark_name` writes it, else
    :data:`EEE_BENCHMARK`; a harness another adapter reads directly has that adapter's benchmark
    (:data:`EEE_SOURCE_BENCHMARKS`: ``inspect_ai`` records are ``inspect``, as Inspect's own logs are). Its
    instance-level file's items are stored under the same benchmark."""
    source = doc.get("source_metadata") if isinstance(doc.get("source_metadata"), dict) else {}
    legacy = doc.get("evaluation_source") if isinstance(doc.get("evaluation_source"), dict) else {}
    name = benchmark_name(str(source.get("source_name") or legacy.get("evaluation_source_name") or EEE_BENCHMARK))
    return EEE_SOURCE_BENCHMARKS.get(name, name)

