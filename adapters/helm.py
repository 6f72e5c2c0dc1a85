"""HELM (crfm-helm) results: run directories, whole run-suite trees, and helm-summarize tables.

Run directories
---------------
``benchmark_output/runs/<suite>/<run name>/`` holds ``run_spec.json`` and
``stats.json`` (plus instances, predictions, ...). A directory is claimed by the
``helm-run`` adapter when it has both files, so ingesting a whole
``benchmark_output/runs/<suite>/`` tree ingests every run in it (the ingest
walker offers each directory to directory adapters before descending).

A run's primary record is the scenario's *main metric*, picked the way HELM's
schema does it: each run group in ``schema_classic.yaml`` names an
``environment: {main_name, main_split}`` and HELM's tables show the
unperturbed stat with that name on that split. :data:`MAIN_METRICS` copies
those pairs for the HELM Classic/Lite, Safety, Capabilities, AIR-Bench, MedHELM and VHELM scenarios
(``schema_classic.yaml``, ``schema_safety.yaml``, ``schema_capabilities.yaml``, ``schema_air_bench.yaml``,
``schema_medhelm.yaml``, ``schema_vhelm.yaml``). HELM
Safety's BBQ runs also carry ``bbq_accuracy``, the column its tables show: it is
stored beside Classic's main metric for BBQ (``quasi_exact_match``, which it equals
on the runs seen), not instead of it, since only the latter has per-instance
scores. The value is the stat's
``mean`` (over train trials). Stats whose ``name`` carries a ``perturbation``
key (robustness and fairness variants) are never used; neither are stats with
a ``sub_split``. When the table names a split that is not in ``stats.json`` the
run is skipped with that reason rather than read from another split (HELM would
show an empty cell).

Fallback, for a scenario not in the table: the first of
:data:`FALLBACK_METRICS` present on the ``test`` split, else on ``valid``; the ingest notes name the run group
and the metric read, since HELM's own table may show another column. AIR-Bench's per-category refusal rates
(``air_category_*``) are not stored, and the notes count them.
Scenarios for which HELM defines no main metric at all (copyright,
disinformation, BOLD, RealToxicityPrompts, synthetic efficiency) are not
capability scores: reading them raises :class:`IngestError`, so they show up in
the ingest report as skipped with that reason.

Other higher-is-better accuracy metrics found on the same split (exact_match
next to quasi_exact_match, ...) are stored as non-primary metrics (``--metric``
picks them); MMLU runs store the main metric only.

Naming
------
Run names look like ``babi_qa:task=15,model=AlephAlpha_luminous-base`` (see
:func:`parse_run_name`; all 8,526 HELM Classic run names parse). The model is
``adapter_spec.model`` (``AlephAlpha/luminous-base``); for a bare run name the
model token's first ``_`` becomes ``/``. The dataset is the scenario plus its
arguments other than the model: ``babi_qa:task=15``. Arguments that describe
how a particular model was prompted rather than what was evaluated are left
out of the dataset name, so that a model run with HELM's model-specific
adaptations lands in the same column as the others: ``model``,
``model_deployment``, ``tokenizer``, ``stop`` and ``global_prefix`` (HELM adds
``stop=hash`` / ``global_prefix=nlg`` for T0pp, UL2, YaLM, ...), and
``data_augmentation=canonical`` (the default perturbation set, whose stats are
excluded anyway). Over the 8,526 real names this keeps (dataset, model)
unique.

MMLU runs (``mmlu:subject=<s>`` with the standard ``multiple_choice_joint``
method and no ablation arguments; HELM MMLU v1.x's ``eval_split=test`` and
``groups=mmlu_<s>`` are standard too) go to benchmark ``mmlu`` with the canonical
subject name (:func:`harness_ext.benchmarks.mmlu_subject`) and metric ``acc``
(:data:`harness_ext.benchmarks.MMLU_METRIC`; HELM's exact_match on
multiple_choice_joint is accuracy), so HELM, lm-eval and the Open LLM
Leaderboard land in the same cells. Only the main metric is stored for them. Every other run is
benchmark ``helm``.

Leaderboard tables
------------------
``helm-summarize`` writes ``groups/<group>.json`` (a list of tables) and
``groups/json/<group>_<table>.json`` (one table), each table
``{"title", "name", "header": [{"value", "lower_is_better", "metadata":
{"metric", "run_group", ["perturbation"]}}, ...], "rows": [[{"value",
"run_spec_names", ...}, ...]]}`` (``helm.benchmark.presentation.table``). The
``helm-table`` adapter reads the accuracy table of a group (one column per run
group) and per-scenario tables (first metric column = the main metric);
calibration, robustness, fairness, efficiency, bias, toxicity and
general-information tables are not capability scores and are passed over.
Aggregate columns ("Mean win rate", "Mean score") have no ``metadata.metric``:
they are stored as aggregates (``kind='aggregate'``, dataset and metric "Mean win
rate"), never subset members; perturbation columns are skipped. Benchmark ``helm_<project>_<group>``
(``helm_capabilities_core_scenarios``) when the file lies under a HELM project's folder
(``capabilities/benchmark_output/releases/...``) or its tables' links name one
(:func:`harness_ext.adapters.helm_suite.helm_project`): HELM Classic's and Capabilities' leaderboards are both group
``core_scenarios``. HELM Classic's (the public bucket's own ``benchmark_output``) keeps ``helm_<group>``
(``helm_core_scenarios``), and so does a file whose project is not told, which the ingest notes say. Dataset = the run group's display name ("BoolQ"),
metric = the header's metric ("EM"). A per-scenario table's dataset is its name,
``<group>_<arguments>`` (``bbq_subject:all``; ``simple_safety_tests`` for HELM's
``simple_safety_tests_``, a group without arguments). helm-summarize's suite files with no scores of their own
(``runs_to_run_suites.json``, ``summary.json``, ``run_specs.json``, ``runs.json``, the run-group list
``groups.json``; :mod:`harness_ext.adapters.helm_suite`) are skipped without a warning. The model comes from the
``run_spec_names`` the cells link to when they name one model, else the row's
display name. MMLU subject columns (run specs ``mmlu:subject=...``) go to
benchmark ``mmlu``, metric ``acc``.

References
----------
Liang et al., "Holistic Evaluation of Language Models" (2022), §3 and App. B
(main metric per scenario); crfm-helm ``src/helm/benchmark/static/schema_classic.yaml`` and ``schema_safety.yaml``
(run_groups ``environment.main_name/main_split``) and
``src/helm/benchmark/presentation/{summarize,table}.py`` (table format).
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from harness_ext.adapters.helm_schemas import JURY_METRICS, PROJECT_MAIN_METRICS
from harness_ext.adapters.helm_suite import SHARED_GROUPS, helm_project, refuse_suite_file, suite_file_kind
from harness_ext.benchmarks import MMLU_BENCHMARK, MMLU_METRIC, MMLU_SUBJECTS, chance_baseline, mmlu_subject
from harness_ext.errors import IngestError
from harness_ext.hookspecs import hookimpl
from harness_ext.report import listed
from harness_ext.types import Adapter, ResultRecord, SourceFile

HELM_BENCHMARK = "helm"

#: run group -> (main_name, main_split), from crfm-helm schema_classic.yaml (run_groups[*].environment).
#: ``None`` main_name: HELM defines no main (accuracy) metric for the group.
MAIN_METRICS = {
    "boolq": ("quasi_exact_match", "valid"),
    "narrative_qa": ("f1_score", "test"),
    "natural_qa_closedbook": ("f1_score", "valid"),
    "natural_qa_openbook_longans": ("f1_score", "valid"),
    "quac": ("f1_score", "valid"),
    "hellaswag": ("exact_match", "valid"),
    "openbookqa": ("exact_match", "test"),
    "truthful_qa": ("exact_match", "valid"),
    "mmlu": ("exact_match", "test"),
    "msmarco_regular": ("RR@10", "valid"),
    "msmarco_trec": ("NDCG@10", "valid"),
    "summarization_cnndm": ("rouge_2", "test"),
    "summarization_xsum": ("rouge_2", "test"),
    "imdb": ("quasi_exact_match", "valid"),
    "raft": ("quasi_exact_match", "test"),
    "civil_comments": ("quasi_exact_match", "test"),
    "ice": ("bits_per_byte", "test"),
    "the_pile": ("bits_per_byte", "test"),
    "twitter_aae": ("bits_per_byte", "test"),
    "twitter_aae_aa": ("bits_per_byte", "test"),
    "twitter_aae_white": ("bits_per_byte", "test"),
    "blimp": ("exact_match", "test"),
    "wikifact": ("quasi_exact_match", "test"),
    "babi_qa": ("quasi_exact_match", "test"),
    "dyck_language": ("exact_match_indicator", "test"),
    "numeracy": ("absolute_value_difference", "test"),
    "synthetic_reasoning": ("quasi_exact_match", "test"),
    "synthetic_reasoning_natural": ("f1_set_match", "test"),
    "gsm": ("exact_match_indicator", "test"),
    "math_regular": ("math_equiv", "test"),
    "math_chain_of_thought": ("math_equiv_chain_of_thought", "test"),
    "code_apps": ("test_avg", "test"),
    "code_humaneval": ("pass", "test"),
    "legalbench": ("quasi_exact_match", "test"),
    "legal_support": ("quasi_exact_match", "test"),
    "lsat_qa": ("quasi_exact_match", "test"),
    "med_qa": ("quasi_exact_match", "test"),
    "wmt_14": ("bleu_4", "test"),
    "entity_data_imputation": ("quasi_exact_match", "test"),
    "entity_matching": ("quasi_exact_match", "test"),
    "bbq": ("quasi_exact_match", "test"),
    "copyright_text": (None, "test"),
    "copyright_code": (None, "test"),
    "disinformation_reiteration": (None, "valid"),
    "disinformation_wedging": (None, "valid"),
    "bold": (None, "test"),
    "real_toxicity_prompts": (None, "test"),
    "synthetic_efficiency": (None, "test"),
    # HELM Safety (schema_safety.yaml): "LM Evaluated Safety score", 0 worst, 1 best.
    "harm_bench": ("safety_score", "test"),
    "harm_bench_gcg_transfer": ("safety_score", "test"),
    "simple_safety_tests": ("safety_score", "test"),
    "xstest": ("safety_score", "test"),
    "anthropic_red_team": ("safety_score", "test"),
    # HELM Capabilities (schema_capabilities.yaml); WildBench's score rescaled from 1-10 to [0, 1].
    "mmlu_pro": ("chain_of_thought_correctness", "test"),
    "gpqa": ("chain_of_thought_correctness", "test"),
    "ifeval": ("ifeval_strict_accuracy", "test"),
    "wildbench": ("wildbench_score_rescaled", "test"),
    "omni_math": ("omni_math_accuracy", "test"),
    **PROJECT_MAIN_METRICS,
}
#: Used, in this order, for scenarios missing from :data:`MAIN_METRICS`.
FALLBACK_METRICS = ("exact_match", "quasi_exact_match", "f1_score", "exact_match_indicator", "math_equiv",
                    "rouge_2", "bleu_4", "f1_set_match", "prefix_exact_match", "quasi_prefix_exact_match")
#: HELM metrics where lower is better (schema_classic.yaml ``lower_is_better: true``).
LOWER_IS_BETTER = frozenset({"bits_per_byte", "perplexity", "absolute_value_difference", "distance", "toxic_frac",
                             "ece_10_bin", "ece_1_bin", "inference_runtime"})
#: Accuracy metrics also stored (as non-primary) when present on the main split.
#: ``bbq_accuracy``: HELM Safety's BBQ column (schema_safety.yaml), next to Classic's main metric for the same runs.
SECONDARY_METRICS = ((frozenset(FALLBACK_METRICS) | {m for m, _ in MAIN_METRICS.values() if m} | {"bbq_accuracy"})
                     - LOWER_IS_BETTER)
#: Run-name arguments that say how a model was prompted, not what was evaluated (left out of dataset names).
MODEL_ARGS = frozenset({"model", "model_deployment", "tokenizer", "stop", "global_prefix"})
#: Arguments at their default value, left out of dataset names.
DEFAULT_ARGS = {"data_augmentation": "canonical"}
#: Arguments that set the shots, not what was evaluated: HELM's run expander appends ``max_train_instances=K`` to a
#: run's name (a conf asking for the manifest's shots), and ``adapter_spec.max_train_instances`` stores ``K`` as the
#: result's shots, so ``mmlu:subject=anatomy,...,max_train_instances=0`` is still the MMLU subject, at 0 shots.
SHOT_ARGS = frozenset({"max_train_instances"})
#: Arguments that set how many instances were run, not which dataset: HELM's ``max_eval_instances`` run expander
#: appends ``max_eval_instances=N`` to a run's name (HELM's own confs write it into entries, and it outranks
#: ``helm-run --max-eval-instances``), so ``quac:...,max_eval_instances=1000`` is still QuAC.
SAMPLE_ARGS = frozenset({"max_eval_instances"})
#: Chance accuracy of fixed-choice HELM scenarios (1 / number of answer choices), for EM-type metrics.
HELM_CHOICES = {"mmlu": 4, "hellaswag": 4, "openbookqa": 4, "boolq": 2, "imdb": 2, "civil_comments": 2,
                "legal_support": 2, "blimp": 2, "lsat_qa": 5, "bbq": 3}
_EM_METRICS = frozenset({"exact_match", "quasi_exact_match", "prefix_exact_match", "quasi_prefix_exact_match",
                         "bbq_accuracy"})
#: helm-summarize metric-group tables that are not capability scores.
NON_ACCURACY_TABLES = frozenset({"calibration", "calibration_detailed", "robustness", "robustness_detailed",
                                 "fairness", "fairness_detailed", "efficiency", "efficiency_detailed",
                                 "general_information", "bias", "toxicity", "summarization_metrics",
                                 "classification_metrics", "copyright_metrics", "disinformation_metrics",
                                 "bbq_metrics", "apps_metrics", "instruction_following_metrics"})
_NON_ACCURACY_TITLES = frozenset({"calibration", "robustness", "fairness", "efficiency", "general information",
                                  "bias", "toxicity", "summarization metrics"})
_SUBJECT_BY_TITLE = {s.replace("_", " "): s for s in MMLU_SUBJECTS}


# -- run names ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunName:
    """A parsed HELM run name.

    ``scenario`` is the run-spec function's name as written (``babi_qa``,
    ``dyck_language_np=3``); ``args`` the ordered ``(key, value)`` arguments,
    model included; ``model_token`` the raw ``model=`` value
    (``AlephAlpha_luminous-base``).
    """

    name: str
    scenario: str
    args: tuple

    @property
    def arg_dict(self) -> dict:
        return dict(self.args)

    @property
    def model_token(self) -> Optional[str]:
        return self.arg_dict.get("model")

    @property
    def model(self) -> Optional[str]:
        """``organisation/name`` from the model token (HELM writes ``/`` as ``_`` in run names)."""
        tok = self.model_token
        return tok.replace("_", "/", 1) if tok and "/" not in tok else tok

    @property
    def dataset_args(self) -> tuple:
        return tuple((k, v) for k, v in self.args if k not in MODEL_ARGS and k not in SHOT_ARGS and k not in SAMPLE_ARGS
                     and DEFAULT_ARGS.get(k) != v)

    @property
    def dataset(self) -> str:
        """Scenario plus the arguments that define what was evaluated: ``babi_qa:task=15``."""
        rest = ",".join(f"{k}={v}" for k, v in self.dataset_args)
        return f"{self.scenario}:{rest}" if rest else self.scenario

    @property
    def group(self) -> str:
        """The HELM run group whose environment gives the main metric (``natural_qa_closedbook``, ...)."""
        a, s = self.arg_dict, self.scenario
        if "=" in s:  # dyck_language_np=3: the spec function baked its argument into the name
            s = s.split("=", 1)[0].rsplit("_", 1)[0]
        if s == "summarization_xsum_sampled":  # HELM Classic's XSUM run spec samples its test split
            return "summarization_xsum"
        if s == "commonsense" and a.get("dataset"):
            return a["dataset"]
        if s == "natural_qa" and a.get("mode"):
            return f"natural_qa_{a['mode']}"
        if s == "msmarco" and a.get("track"):
            return f"msmarco_{a['track']}"
        if s == "math":
            return "math_chain_of_thought" if a.get("use_chain_of_thought") == "True" else "math_regular"
        if s == "code":
            return "code_humaneval" if a.get("dataset") == "humaneval" else "code_apps"
        if s == "copyright":
            return "copyright_code" if "code" in a.get("datatag", "") else "copyright_text"
        if s == "disinfo":
            return f"disinformation_{a.get('type', 'reiteration')}"
        return s

    @property
    def mmlu_subject(self) -> Optional[str]:
        """The canonical subject when this is a standard MMLU run (no ablation arguments), else None."""
        if self.scenario != "mmlu":
            return None
        subject = self.arg_dict.get("subject", "")
        for k, v in self.dataset_args:
            if k == "subject" or (k, v) in (("method", "multiple_choice_joint"), ("eval_split", "test")):
                continue
            if k == "groups" and v in ("mmlu", f"mmlu_{subject}"):  # HELM MMLU v1.x names carry their run group
                continue
            return None
        return mmlu_subject(f"mmlu:subject={subject}")


def parse_run_name(name: str) -> RunName:
    """Parse a HELM run name such as ``mmlu:subject=anatomy,method=multiple_choice_joint,model=openai_davinci``.

    The part before the first ``:`` is the run-spec function; some functions put
    arguments there too (``legal_support,method=multiple_choice_joint:model=...``),
    which are kept as arguments. A comma-separated piece without ``=`` belongs to
    the previous value.

    Raises
    ------
    ValueError
        If the name is empty or has no scenario.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"not a HELM run name: {name!r}")
    head, _, tail = name.strip().partition(":")
    head_parts = head.split(",")
    scenario = head_parts[0].strip()
    if not scenario:
        raise ValueError(f"HELM run name {name!r} has no scenario")
    args: list = []
    for piece in head_parts[1:] + (tail.split(",") if tail else []):
        if "=" in piece:
            k, v = piece.split("=", 1)
            args.append([k.strip(), v.strip()])
        elif args:
            args[-1][1] += "," + piece
        elif piece.strip():
            raise ValueError(f"HELM run name {name!r}: argument {piece!r} has no '='")
    return RunName(name.strip(), scenario, tuple((k, v) for k, v in args))


# -- run directories ----------------------------------------------------------------------------
def _load_json(path: Path, src) -> object:
    try:
        with open(path, "rb") as fh:
            return json.loads(fh.read().decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise IngestError(src, f"{path.name} is not valid JSON: {exc}") from None
    except RecursionError:  # json's decoder recurses once per bracket
        raise IngestError(src, f"{path.name} is nested too deeply to read as JSON") from None


def _stat_table(stats, src) -> dict:
    """``(name, split) -> stat`` over stats without perturbation or sub_split."""
    if not isinstance(stats, list):
        raise IngestError(src, f"stats.json holds {type(stats).__name__}, expected a list of stats")
    out: dict = {}
    for i, st in enumerate(stats):
        if not isinstance(st, dict) or not isinstance(st.get("name"), dict):
            raise IngestError(src, f"stats.json entry {i} has no 'name' object")
        nm = st["name"]
        if nm.get("perturbation") is not None or nm.get("sub_split") is not None:
            continue
        metric, split = nm.get("name"), nm.get("split")
        if isinstance(metric, str) and isinstance(split, str):
            first = out.setdefault((metric, split), st)
            if first["name"] == nm and _mean(first) != _mean(st):  # which one is the score? neither, silently
                raise IngestError(src, f"stats.json gives {metric} ({split}) twice: {_mean(first)} and {_mean(st)}")
    return out


def _mean(st) -> Optional[float]:
    v = st.get("mean")
    if v is None and isinstance(st.get("sum"), (int, float)) and isinstance(st.get("count"), int) and st["count"] > 0:
        v = st["sum"] / st["count"]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
        return None
    return float(v)


#: HELM Safety's main metric (``safety_score``) under the name a group's first release wrote it, where that is not
#: ``<group>_score``: the Anthropic Red Team runs of ``benchmark_output/runs/v3`` score ``art_score`` (their judges'
#: mean; ``art_gpt_score`` and ``art_claude_score`` are each judge's), the value HELM's own group table shows as
#: "Model Evaluated Safety score".
SAFETY_EARLIER_NAMES = {"anthropic_red_team": "art_score"}


def main_metric(run: RunName, groups, table: dict, src) -> tuple:
    """``(metric, split, how)`` for a run: from the schema table, else the documented fallback."""
    for g in list(groups or ()) + [run.group, run.scenario]:
        if g in MAIN_METRICS:
            name, split = MAIN_METRICS[g]
            if name is None:
                raise IngestError(src, f"HELM defines no main accuracy metric for run group {g!r} "
                                       f"(run {run.name}); not a capability score")
            # HELM Safety's first release (v3 runs) wrote the main metric under the group's
            # own name (harm_bench_score; Anthropic Red Team's art_score), later ones as safety_score.
            if (name, split) not in table:
                for earlier in (f"{g}_score", SAFETY_EARLIER_NAMES.get(g)):
                    if earlier and (earlier, split) in table:
                        return earlier, split, f"schema main metric of {g} ({name}) under its earlier name"
            return name, split, f"schema main metric of {g}"
    for split in ("test", "valid"):
        for m in FALLBACK_METRICS:
            if (m, split) in table:
                return m, split, f"fallback ({run.group} not in the main-metric table)"
    raise IngestError(src, f"scenario {run.group!r} is not in the main-metric table and none of "
                           f"{', '.join(FALLBACK_METRICS)} is in stats.json")


def _baseline(run: RunName, group: str, metric: str) -> tuple:
    if run.mmlu_subject:
        return chance_baseline(run.name, "exact_match")
    n = HELM_CHOICES.get(group)
    if n and metric in _EM_METRICS:
        return 1.0 / n, f"{n} answer choices (HELM {group})"
    return None, None


def _jury_bounds(metric: str, value: float) -> tuple:
    """``(min_score, max_score)`` of a MedHELM jury score, from the value (see :data:`JURY_METRICS`)."""
    if metric not in JURY_METRICS or value == 1.0:
        return None, None
    return (1.0, 5.0) if value > 1.0 else (0.0, 1.0)


def records_for_run(run_spec: dict, stats, src, suite: Optional[str] = None) -> list:
    """The records of one HELM run, from its parsed ``run_spec.json`` and ``stats.json``."""
    if not isinstance(run_spec, dict) or not isinstance(run_spec.get("name"), str):
        raise IngestError(src, "run_spec.json has no run name")
    try:
        run = parse_run_name(run_spec["name"])
    except ValueError as exc:
        raise IngestError(src, str(exc)) from None
    adapter_spec = run_spec.get("adapter_spec")
    adapter_spec = {} if adapter_spec is None else adapter_spec
    if not isinstance(adapter_spec, dict):
        raise IngestError(src, "run_spec.json adapter_spec is not an object")
    model = adapter_spec.get("model") or run.model
    if not isinstance(model, str) or not model.strip():
        raise IngestError(src, f"run {run.name}: no model in adapter_spec.model or the run name")
    groups = run_spec.get("groups") if isinstance(run_spec.get("groups"), list) else []
    table = _stat_table(stats, src)
    metric, split, how = main_metric(run, groups, table, src)
    if (metric, split) not in table:
        raise IngestError(src, f"run {run.name}: main metric {metric} on split {split!r} is not in stats.json")
    group = next((g for g in groups if g in MAIN_METRICS), run.group)
    subject = run.mmlu_subject
    benchmark, dataset = (MMLU_BENCHMARK, subject) if subject else (HELM_BENCHMARK, run.dataset)
    shots = adapter_spec.get("max_train_instances")
    shots = shots if isinstance(shots, int) and not isinstance(shots, bool) else None
    n_inst = table.get(("num_instances", split))
    n_inst = _mean(n_inst) if n_inst else None
    scenario_spec = run_spec.get("scenario_spec") if isinstance(run_spec.get("scenario_spec"), dict) else {}
    meta = {"harness": "helm", "run_group": group, "split": split, "main_metric": how,
            "scenario_class": scenario_spec.get("class_name"), "method": adapter_spec.get("method")}
    if suite:
        meta["suite"] = suite
    out = []
    # An MMLU run stores its main metric only, under the canonical MMLU metric name.
    for m in [metric] + ([] if subject else sorted(SECONDARY_METRICS - {metric})):
        st = table.get((m, split))
        if st is None:
            continue
        value = _mean(st)
        if value is None:
            if m == metric:
                raise IngestError(src, f"run {run.name}: main metric {metric} ({split}) has no value ("
                                       + (f"mean {st['mean']!r} is not a number)" if st.get("mean") is not None else "count 0)"))
            continue
        if m in _EM_METRICS and not 0.0 <= value <= 1.0:
            raise IngestError(src, f"run {run.name}: {m} ({split}) = {value!r} is outside [0, 1]; HELM writes it as a proportion")
        rb, rb_src = _baseline(run, group, m)
        lo, hi = _jury_bounds(m, value)
        out.append(ResultRecord(
            model=model.strip(), benchmark=benchmark, dataset=dataset, metric=MMLU_METRIC if subject else m, value=value,
            n_samples=int(n_inst) if n_inst is not None else None, num_fewshot=shots,
            higher_is_better=m not in LOWER_IS_BETTER, random_baseline=rb, baseline_source=rb_src,
            min_score=lo, max_score=hi, task=run.name, primary=(m == metric),
            model_metadata={"helm_model": run.model_token}, dataset_metadata=meta,
        ))
    return out


def can_handle_run(src: SourceFile) -> bool:
    # Asked of every directory a walk enters: plain os.path, no Path objects.
    if src.children is not None:
        return "run_spec.json" in src.children and "stats.json" in src.children
    d = str(src.path)
    return src.is_dir and os.path.isfile(os.path.join(d, "run_spec.json")) and os.path.isfile(os.path.join(d, "stats.json"))


def read_run(src: SourceFile):
    run_spec = _load_json(src.path / "run_spec.json", src.path)
    stats = _load_json(src.path / "stats.json", src.path)
    # benchmark_output/runs/<suite>/<run>: the parent folder names the suite.
    suite = src.path.parent.name if src.path.parent.parent.name == "runs" else None
    records = records_for_run(run_spec, stats, src.path, suite=suite)
    for note in run_notes(records, stats):
        src.note(note)
    return records


#: Run groups whose stats.json also gives a score per category (stat-name prefix), beside the main metric.
CATEGORY_SCORES = {"air_bench_2024": "air_category_"}


def run_notes(records, stats) -> list:
    """What a run's records leave to the reader's judgement: a main metric picked by the fallback (its scenario
    is not in :data:`MAIN_METRICS`), and per-category scores that are not stored."""
    primary = next((r for r in records if r.primary), None)
    if primary is None:
        return []
    meta, notes = primary.dataset_metadata, []
    if str(meta.get("main_metric", "")).startswith("fallback"):
        notes.append(f"run group {meta.get('run_group')!r} has no main metric in HELM's schemas as known here: "
                     f"stored {primary.metric} ({meta.get('split')}), the first of "
                     f"{', '.join(FALLBACK_METRICS)} in stats.json; check it is the column HELM's tables show")
    prefix = CATEGORY_SCORES.get(meta.get("run_group"))
    if prefix:
        names = {m for m, split in _stat_table(stats, "stats.json") if split == meta.get("split") and m.startswith(prefix)}
        if names:
            notes.append(f"{len(names)} per-category scores ({prefix}*) not stored: the run's score is its "
                         f"{primary.metric} over all categories")
    return notes


# -- leaderboard tables (helm-summarize groups/*.json) ------------------------------------------
def _is_table(t) -> bool:
    return isinstance(t, dict) and isinstance(t.get("header"), list) and isinstance(t.get("rows"), list)


def _tables(doc) -> Optional[list]:
    if _is_table(doc):
        return [doc]
    if isinstance(doc, list) and doc and all(_is_table(t) for t in doc):
        return doc
    return None


def can_handle_table(src: SourceFile) -> bool:
    if src.suffix != ".json":
        return False
    if b'"header"' not in src.head:
        return suite_file_kind(src) is not None
    return _tables(src.try_json()) is not None


def _group_name(path: Path, table: dict) -> str:
    stem = path.stem
    name = table.get("name")
    if path.parent.name == "json" and isinstance(name, str) and stem.endswith("_" + name) and len(stem) > len(name) + 1:
        stem = stem[: -len(name) - 1]
    return re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_") or "table"


def _run_models(names) -> set:
    out = set()
    for n in names or ():
        try:
            m = parse_run_name(n).model
        except (ValueError, TypeError, AttributeError):
            continue
        if m:
            out.add(m)
    return out


def _run_subjects(names) -> set:
    out = set()
    for n in names or ():
        try:
            out.add(parse_run_name(n).mmlu_subject)
        except (ValueError, TypeError, AttributeError):
            out.add(None)
    return out


def _cell_value(cell, src, where) -> Optional[float]:
    v = cell.get("value") if isinstance(cell, dict) else cell
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise IngestError(src, f"{where}: value {v!r} is not a number")
    return float(v) if math.isfinite(float(v)) else None


#: helm-summarize columns that aggregate the table's scenarios.
_AGGREGATE_COLUMNS = frozenset({"mean win rate", "mean score"})


def read_table(src: SourceFile):
    refuse_suite_file(src)
    tables = _tables(src.json())
    if tables is None:
        raise IngestError(src.path, "not a helm-summarize table (no header/rows)")
    names = [t.get("name") for t in tables if isinstance(t.get("name"), str)]
    project, told_by = helm_project(src.path, tables)  # Classic's and Capabilities' core_scenarios: two benchmarks
    prefix, project_md = _benchmark_prefix(project), ({"helm_project": project} if project else {})
    out, empty = [], []  # empty: cells with no value (HELM's "-", a model not run on the scenario), noted
    for ti, table in enumerate(tables):
        name = table.get("name") if isinstance(table.get("name"), str) else ""
        title = table.get("title") if isinstance(table.get("title"), str) else ""
        if name in NON_ACCURACY_TABLES or title.strip().lower() in _NON_ACCURACY_TITLES:
            continue
        # A scenario-table list starts with the aggregate over its scenarios (named like the
        # group, e.g. "mmlu" before "mmlu:subject=..."): the per-scenario tables carry the data.
        if name and ":" not in name and any(n.startswith(name + ":") for n in names):
            continue
        scenario_table = bool(name) and name != "accuracy" and title.strip().lower() != "accuracy"
        group = _group_name(src.path, table)
        header = table["header"]
        columns, seen_groups = [], set()
        for j, h in enumerate(header):
            md = h.get("metadata") if isinstance(h, dict) else None
            label = str(h.get("value") or "").strip() if isinstance(h, dict) else ""
            if j and label.lower() in _AGGREGATE_COLUMNS and not (isinstance(md, dict) and md.get("metric")):
                columns.append((j, h, label, True))  # "Mean win rate": an aggregate, a prediction target
                continue
            if j == 0 or not isinstance(md, dict) or not md.get("metric") or md.get("perturbation"):
                continue
            rg = str(md.get("run_group") or h.get("value"))
            if rg in seen_groups:  # the main metric is the first column of its run group
                continue
            seen_groups.add(rg)
            columns.append((j, h, rg, False))
        for ri, row in enumerate(table["rows"]):
            if not isinstance(row, list) or not row:
                raise IngestError(src.path, f"table {ti} row {ri} is not a list of cells")
            first = row[0] if isinstance(row[0], dict) else {"value": row[0]}
            linked = first.get("run_spec_names") or []
            for j, h, rg, aggregate in columns:
                if j >= len(row):
                    raise IngestError(src.path, f"table {ti} row {ri} has {len(row)} cells, header has {len(header)}")
                cell = row[j] if isinstance(row[j], dict) else {"value": row[j]}
                value = _cell_value(cell, src.path, f"table {ti} row {ri} column {h.get('value')!r}")
                if value is not None and not aggregate and h["metadata"]["metric"] == "EM" and not 0.0 <= value <= 1.0:
                    raise IngestError(src.path, f"table {ti} row {ri} column {h.get('value')!r}: EM {value:g} is outside [0, 1]")
                if value is None:
                    empty.append(f"{first.get('value')} on {h.get('value')}")
                    continue
                runs = list(cell.get("run_spec_names") or linked)
                models = _run_models(runs)
                display = first.get("value")
                model = next(iter(models)) if len(models) == 1 else display
                if not isinstance(model, str) or not model.strip():
                    raise IngestError(src.path, f"table {ti} row {ri}: no model name")
                subjects = _run_subjects(runs)
                subject = next(iter(subjects)) if len(subjects) == 1 else None
                if subject is None and not runs and group.startswith("mmlu"):
                    subject = _SUBJECT_BY_TITLE.get(rg.strip().lower())
                lower = h.get("lower_is_better")
                if subject:
                    benchmark, dataset = MMLU_BENCHMARK, subject
                    rb, rb_src = chance_baseline(f"mmlu:subject={subject}", "exact_match")
                else:
                    benchmark, dataset = f"{prefix}{group}", (name.rstrip("_") if scenario_table else rg)
                    rb, rb_src = None, None
                if aggregate:  # beside its scenarios: an MMLU table's win rate goes with the MMLU subjects
                    benchmark = MMLU_BENCHMARK if group.startswith("mmlu") else f"{prefix}{group}"
                    dataset, subject, rb, rb_src = rg, None, None, None
                out.append(ResultRecord(
                    model=model.strip(), benchmark=benchmark, dataset=dataset, aggregate=aggregate,
                    metric=rg.lower() if aggregate else MMLU_METRIC if subject else str(h["metadata"]["metric"]),
                    value=value, higher_is_better=None if lower is None else not bool(lower),
                    random_baseline=rb, baseline_source=rb_src, task=name or None,
                    model_metadata={"display_name": display} if isinstance(display, str) else {},
                    dataset_metadata={"harness": "helm", "table": name or title, "run_group": rg, **project_md},
                ))
    _note_table(src, out, project, told_by, empty)
    return out


def _benchmark_prefix(project) -> str:
    """``helm_<project>_`` before a table's group; ``helm_`` for HELM Classic, whose tables were always stored so
    (``helm_core_scenarios``), and for a file whose project is not told."""
    return f"helm_{re.sub(r'[^a-z0-9]+', '_', project)}_" if project not in (None, "classic") else "helm_"


def _note_table(src: SourceFile, records: list, project, told_by, empty: list) -> None:
    """Note a table file's empty cells (HELM's "-": a model not run on the scenario), and which HELM project named
    its benchmark, or that none did for a group several projects have
    (:data:`~harness_ext.adapters.helm_suite.SHARED_GROUPS`: the rows then share its name with another project's
    table of it), with the count of rows it names."""
    benches = sorted({r.benchmark for r in records if r.benchmark != MMLU_BENCHMARK})
    n = sum(r.benchmark != MMLU_BENCHMARK for r in records)
    if n and project:
        src.note(f"HELM project {project}, told by {told_by}: {n} row{'s' * (n != 1)} stored as {', '.join(benches)}")
    elif n and any(b[len("helm_"):] in SHARED_GROUPS for b in benches):
        src.note(f"HELM project not told by the file or its path (no known project folder above benchmark_output): "
                 f"{n} row{'s' * (n != 1)} stored as {', '.join(benches)}, the name another HELM project's table of "
                 "the same group (HELM Classic's and Capabilities' core_scenarios) would share; keep such files "
                 "under <project>/benchmark_output/ to keep them apart")
    if empty:
        src.note(f"{len(empty)} empty cell{'s' * (len(empty) != 1)} (not run) left out: {listed(empty, 5)}")


@hookimpl
def harness_ext_adapters():
    # revision 4: HELM Safety v3's Anthropic Red Team runs read by their art_score (refused before)
    yield Adapter(name="helm-run", can_handle=can_handle_run, read=read_run, directory=True, revision="4",
                  description="HELM run directory (run_spec.json + stats.json): the scenario's main metric, no perturbations")
    # helm-table 2: a table under a HELM project's folder (capabilities/benchmark_output/...) is benchmark
    # helm_<project>_<group>: HELM Classic's and Capabilities' core_scenarios were one benchmark.
    yield Adapter(name="helm-table", can_handle=can_handle_table, read=read_table, revision="2",
                  description="HELM leaderboard tables from helm-summarize (groups/*.json, groups/json/*.json)")
