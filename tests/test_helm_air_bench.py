"""A real HELM AIR-Bench run (stanford-crfm/air-bench-2024's benchmark_output, sliced in fixtures/helm_projects,
see its PROVENANCE.md), read with the main metric of HELM's schema_air_bench.yaml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_ext.adapters.helm import records_for_run
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

RUN = (Path(__file__).parent / "fixtures" / "helm_projects" / "air_bench" / "runs" / "run1"
       / "air_bench_2024:model=openai_gpt-4o-2024-05-13")


def _store(*paths):
    s = Store.open(":memory:")
    return s, ingest_paths(s, list(paths), show_progress=False)


def test_the_refusal_rate_is_the_runs_score():
    """It was refused: "scenario 'air_bench_2024' is not in the main-metric table and none of exact_match, ...
    is in stats.json". schema_air_bench.yaml: main_name air_score, main_split test, lower_is_better false."""
    s, rep = _store(RUN)
    st = {f.adapter: f for f in rep.files}
    assert st["helm_run"].status == "ingested", st["helm_run"].reason
    rows = s.con.execute("SELECT m.name, d.benchmark, d.name, d.metric, d.is_primary, d.higher_is_better, r.value "
                         "FROM results r JOIN datasets d USING (dataset_id) JOIN models m USING (model_id)").fetchall()
    assert rows == [("openai/gpt-4o-2024-05-13", "helm", "air_bench_2024", "air_score", True, True, 0.7)]
    # the 25 category refusal rates are not stored, and the notes say so
    assert any("25 per-category scores (air_category_*) not stored" in n for n in st["helm_run"].notes)


def test_the_item_scores_are_the_refusals_and_average_to_the_runs_score():
    s, rep = _store(RUN)
    st = {f.adapter: f for f in rep.files}
    assert st["item_table"].status == "ingested", st["item_table"].reason
    items = [v for (v,) in s.con.execute("SELECT value FROM samples ORDER BY doc_id").fetchall()]
    assert len(items) == 10 and sum(items) == 7.0  # 7 of 10 prompts refused: air_score 0.7


def test_the_perturbed_copies_are_not_read():
    spec = json.loads((RUN / "run_spec.json").read_text())
    stats = json.loads((RUN / "stats.json").read_text())
    for st in stats:
        if st["name"].get("perturbation"):
            st["mean"] = 0.0
    (rec,) = [r for r in records_for_run(spec, stats, RUN) if r.primary]
    assert (rec.metric, rec.value, rec.n_samples) == ("air_score", pytest.approx(0.7), 10)
    assert rec.dataset_metadata["main_metric"] == "schema main metric of air_bench_2024"


def test_the_suites_own_files_are_skipped_without_a_warning():
    """Ingesting the suite folder warned about four of helm-summarize's files: "summary.json", "run_specs.json",
    "runs.json" ("not a recognised result file") and the run-group list "groups.json" ("no results found")."""
    s, rep = _store(RUN.parent)
    by = {Path(f.path).name: f for f in rep.files}
    for name in ("summary.json", "run_specs.json", "runs.json", "groups.json"):
        assert by[name].status == "skipped" and by[name].quiet, (name, by[name].reason)
    assert by[RUN.name].status == "ingested"
    assert s.con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 1


def test_a_runs_list_whose_run_folders_are_missing_is_reported(tmp_path):
    """Its scores are read from the run folders; without them, the skip warns and names the run."""
    (tmp_path / "runs.json").write_text((RUN.parent / "runs.json").read_text())
    _, rep = _store(tmp_path / "runs.json")
    (f,) = rep.files
    assert f.status == "skipped" and not f.quiet
    assert "1 of its 1 runs have no run folder beside it (air_bench_2024:model=openai_gpt-4o-2024-05-13)" in f.reason
