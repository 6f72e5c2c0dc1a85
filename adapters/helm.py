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
A run's name (``babi_qa:task=15,model=AlephAlpha_luminous-base``) gives its dataset and run group
(:mod:`harness_ext.adapters.helm_run_names` says how). The model is ``adapter_spec.model``
(``AlephAlpha/luminous-base``), else the name's model token.

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
The ``helm-table`` adapter reads the tables ``helm-summarize`` writes
(``groups/<group>.json``, ``groups/json/<group>_<table>.json``): :mod:`harness_ext.adapters.helm_tables`.

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
from pathlib import Path
from typing import Optional

from harness_ext.adapters.helm_run_names import (DEFAULT_ARGS, MODEL_ARGS, SAMPLE_ARGS, SHOT_ARGS,  # noqa: F401
                                                 RunName, parse_run_name)
from harness_ext.adapters.helm_schemas import JURY_METRICS, PROJECT_MAIN_METRICS
from harness_ext.adapters.helm_tables import NON_ACCURACY_TABLES, can_handle_table, read_table  # noqa: F401
from harness_ext.benchmarks import MMLU_BENCHMARK, MMLU_METRIC, chance_baseline
from harness_ext.errors import IngestError
from harness_ext.hookspecs import hookimpl
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
#: Chance accuracy of fixed-choice HELM scenarios (1 / number of answer choices), for EM-type metrics.
HELM_CHOICES = {"mmlu": 4, "hellaswag": 4, "openbookqa": 4, "boolq": 2, "imdb": 2, "civil_comments": 2,
                "legal_support": 2, "blimp": 2, "lsat_qa": 5, "bbq": 3}
_EM_METRICS = frozenset({"exact_match", "quasi_exact_match", "prefix_exact_match", "quasi_prefix_exact_match",
                         "bbq_accuracy"})


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


@hookimpl
def harness_ext_adapters():
    # revision 4: HELM Safety v3's Anthropic Red Team runs read by their art_score (refused before)
    yield Adapter(name="helm-run", can_handle=can_handle_run, read=read_run, directory=True, revision="4",
                  description="HELM run directory (run_spec.json + stats.json): the scenario's main metric, no perturbations")
    # helm-table 2: a table under a HELM project's folder (capabilities/benchmark_output/...) is benchmark
    # helm_<project>_<group>: HELM Classic's and Capabilities' core_scenarios were one benchmark.
    yield Adapter(name="helm-table", can_handle=can_handle_table, read=read_table, revision="2",
                  description="HELM leaderboard tables from helm-summarize (groups/*.json, groups/json/*.json)")
