"""A real VHELM run (MM-SafetyBench, from a public repository's benchmark_output, sliced in fixtures/helm_projects,
see its PROVENANCE.md), read with the main metric of HELM's schema_vhelm.yaml: a lower-is-better toxicity rate."""

from __future__ import annotations

import json
from pathlib import Path

from harness_ext.adapters.helm import MAIN_METRICS, records_for_run
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

RUN = (Path(__file__).parent / "fixtures" / "helm_projects" / "vhelm" / "runs" / "icl"
       / "mm_safety_bench:subset=fraud,model=custom_qwen2.5-vl-3b-instruct-ft-50")


def test_mm_safety_bench_is_read_with_its_toxic_fraction_lower_is_better():
    """It was refused (no exact_match or other fallback metric in stats.json); schema_vhelm.yaml's MM-SafetyBench
    column is toxic_frac on test, and a toxic fraction is better low."""
    s = Store.open(":memory:")
    rep = ingest_paths(s, [RUN], show_progress=False)
    (f,) = [f for f in rep.files if f.adapter == "helm_run"]
    assert f.status == "ingested" and not f.notes
    rows = s.con.execute("SELECT m.name, d.name, d.metric, d.is_primary, d.higher_is_better, r.value FROM results r "
                         "JOIN datasets d USING (dataset_id) JOIN models m USING (model_id)").fetchall()
    assert rows == [("custom/qwen2.5-vl-3b-instruct-ft-50", "mm_safety_bench:subset=fraud", "toxic_frac", True,
                     False, 0.0)]


def test_a_perturbed_toxic_fraction_is_not_the_score():
    spec = json.loads((RUN / "run_spec.json").read_text())
    stats = json.loads((RUN / "stats.json").read_text())
    for st in stats:
        if st["name"].get("perturbation"):
            st["mean"] = 0.9
    (rec,) = [r for r in records_for_run(spec, stats, RUN) if r.primary]
    assert (rec.metric, rec.value, rec.higher_is_better, rec.n_samples) == ("toxic_frac", 0.0, False, 10)


def test_groups_whose_column_is_a_perturbed_score_are_not_in_the_table():
    """VHELM's dialect and translation groups show the main metric under a perturbation, which runs are never
    read for: they go to the fallback, and its note, rather than to an unperturbed score under their name."""
    for g in ("vqa_dialect", "a_okvqa_dialect", "a_okvqa_chinese", "a_okvqa_hindi", "a_okvqa_spanish",
              "a_okvqa_swahili"):
        assert g not in MAIN_METRICS
    assert MAIN_METRICS["mmmu"] == ("quasi_prefix_exact_match", "valid")


def test_the_suites_accuracy_table_keeps_the_columns_direction():
    """helm-summarize's table of the same suite (groups/json/safety_accuracy.json, whole): the column says
    lower_is_better, and its cell (the mean over 13 subsets) links the runs that name the model."""
    table = RUN.parent / "groups" / "json" / "safety_accuracy.json"
    s = Store.open(":memory:")
    rep = ingest_paths(s, [table], show_progress=False)
    (f,) = rep.files
    assert f.status == "ingested" and f.notes == ["1 empty cell (not run) left out: "
                                                  "Qwen2.5-VL-3B-Instruct-FT-50% on Mean win rate"]
    rows = s.con.execute("SELECT m.name, d.benchmark, d.name, d.metric, d.higher_is_better, r.value FROM results r "
                         "JOIN datasets d USING (dataset_id) JOIN models m USING (model_id)").fetchall()
    assert rows == [("custom/qwen2.5-vl-3b-instruct-ft-50", "helm_safety", "MM-SafetyBench", "Toxic fraction", False,
                     0.0)]
