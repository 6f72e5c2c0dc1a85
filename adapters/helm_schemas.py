"""Main metrics of the newer HELM projects' run groups, as their ``schema_*.yaml`` name them (``environment:
{main_name, main_split}``), for :data:`harness_ext.adapters.helm.MAIN_METRICS`. Kept apart so the run adapter stays
small.

References: crfm-helm ``src/helm/benchmark/static/schema_air_bench.yaml``, ``schema_medhelm.yaml`` and
``schema_vhelm.yaml``.
"""

from __future__ import annotations

#: run group -> (main_name, main_split)
PROJECT_MAIN_METRICS = {
    # AIR-Bench (schema_air_bench.yaml): the refusal rate over all categories, 0 worst, 1 best.
    "air_bench_2024": ("air_score", "test"),
    # MedHELM (schema_medhelm.yaml). The *_accuracy of the generation scenarios is an LLM jury's mean score
    # (1-5 in MedHELM's first runs, in [0, 1] once HELM normalised it by a rubric): stored as written, with the
    # bounds of its scale (see JURY_METRICS).
    **{g: (m, "test") for g, m in (
        ("medcalc_bench", "medcalc_bench_accuracy"), ("medalign", "medalign_accuracy"),
        ("mtsamples_replicate", "mtsamples_replicate_accuracy"), ("ehrshot", "exact_match"),
        ("starr_patient_instructions", "starr_patient_instructions_accuracy"), ("clear", "exact_match"),
        ("race_based_med", "exact_match"), ("n2c2_ct_matching", "exact_match"), ("med_dialog", "med_dialog_accuracy"),
        ("medi_qa", "medi_qa_accuracy"), ("mental_health", "mental_health_accuracy"),
        ("mimic_rrs", "mimic_rrs_accuracy"), ("mimic_bhc", "BERTScore-F"),
        ("mimiciv_billing_code", "mimiciv_billing_code_f1"), ("dischargeme", "dischargeme_accuracy"),
        ("pubmed_qa", "exact_match"), ("medec", "medec_error_flag_accuracy"), ("aci_bench", "aci_bench_accuracy"),
        ("chw_care_plan", "chw_care_plan_accuracy"), ("ehr_sql", "ehr_sql_execution_accuracy"),
        ("head_qa", "exact_match"), ("medbullets", "exact_match"),
        ("mtsamples_procedures", "mtsamples_procedures_accuracy"), ("medication_qa", "medication_qa_accuracy"),
        ("shc_bmt_med", "exact_match"), ("shc_gip_med", "exact_match"), ("shc_cdi_med", "exact_match"),
        ("shc_ent_med", "exact_match"), ("shc_sequoia_med", "exact_match"), ("shc_conf_med", "exact_match"),
        ("shc_ptbm_med", "exact_match"), ("shc_sei_med", "exact_match"))},
    # VHELM (schema_vhelm.yaml). Left out: the groups whose column is a perturbed score (vqa_dialect,
    # a_okvqa_dialect: fairness; a_okvqa_chinese/hindi/spanish/swahili: translate): the run adapter reads no
    # perturbed stat, so those runs go to the fallback, and the ingest notes say so.
    "mm_safety_bench": ("toxic_frac", "test"),  # lower is better
    "math_vista": ("exact_match", "test"),
    "real_world_qa": ("quasi_leave_articles_exact_match", "test"),
    **{g: ("quasi_prefix_exact_match", "valid") for g in (
        "a_okvqa_base", "mm_star_perception", "mm_star_reasoning", "mm_star_knowledge", "blink_perception",
        "blink_knowledge", "blink_reasoning", "gqa", "viz_wiz", "vqa_base", "mmmu", "fair_face")},
    **{g: ("quasi_prefix_exact_match", "test") for g in (
        "hateful_memes", "unicorn", "pope", "seed_bench", "mme", "pairs", "exams_v")},
    **{g: ("prometheus_vision", "test") for g in (
        "crossmodal_3600", "flickr30k", "bingo", "bingo_fairness", "bingo_multilinguality", "vibe_eval", "mementos")},
}
#: MedHELM's LLM-jury scores (schema_medhelm.yaml: "the average score assigned by an LLM-based jury"): the mean of
#: 1-5 ratings in MedHELM's first runs (at least 1: a response no judge rated gets 1), rubric-normalised to
#: [0, 1] in later ones. A value above 1 is on the first scale, below 1 on the second; exactly 1 could be either.
JURY_METRICS = frozenset(f"{g}_accuracy" for g in (
    "aci_bench", "chw_care_plan", "dischargeme", "med_dialog", "medalign", "medi_qa", "medication_qa",
    "mental_health", "mimic_rrs", "mtsamples_procedures", "mtsamples_replicate", "starr_patient_instructions"))
