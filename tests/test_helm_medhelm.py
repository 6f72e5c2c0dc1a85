"""A real MedHELM run (som-shahlab/medhelm's benchmark_output, sliced in fixtures/helm_projects, see its
PROVENANCE.md), read with the main metric of HELM's schema_medhelm.yaml, and the notes a scenario outside the
main-metric table gets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix

RUN = (Path(__file__).parent / "fixtures" / "helm_projects" / "medhelm" / "runs" / "TEST"
       / "medication_qa:model=openai_gpt-4o-2024-05-13,model_deployment=stanfordhealthcare_gpt-4o-2024-05-13")


def _store(*paths):
    s = Store.open(":memory:")
    return s, ingest_paths(s, list(paths), show_progress=False)


def _rows(s):
    return {m: (p, hib, v) for m, p, hib, v in s.con.execute(
        "SELECT d.metric, d.is_primary, d.higher_is_better, r.value FROM results r JOIN datasets d USING (dataset_id)"
    ).fetchall()}


def test_medication_qa_is_read_with_the_jury_score():
    """It was stored with rouge_2 (0.0837, the first fallback metric present) and no word about it;
    schema_medhelm.yaml's medication_qa shows medication_qa_accuracy, the LLM jury's mean score (1-5 here)."""
    s, rep = _store(RUN)
    (f,) = [f for f in rep.files if f.adapter == "helm_run"]
    assert f.status == "ingested" and not f.notes
    rows = _rows(s)
    assert rows["medication_qa_accuracy"] == (True, True, pytest.approx(4.544444444444444))
    assert rows["rouge_2"][:2] == (False, True) and rows["BERTScore-F"][0] is False
    assert "perplexity" not in rows and "bits_per_byte" not in rows
    model, dataset = s.con.execute("SELECT m.name, d.name FROM results JOIN models m USING (model_id) "
                                   "JOIN datasets d USING (dataset_id) LIMIT 1").fetchone()
    # the deployment (a hospital's gateway) is how the model was reached, not what was evaluated
    assert (model, dataset) == ("openai/gpt-4o-2024-05-13", "medication_qa")


def test_the_jury_score_is_normalised_on_its_1_to_5_scale():
    """Its 4.54 was taken for a percentage (0.045 in the matrix): the jury rates 1-5 and a response no judge
    rated gets 1 (medication_qa_metrics.py, default_score=1.0)."""
    s, _ = _store(RUN)
    bounds = s.con.execute("SELECT min_score, max_score FROM datasets "
                           "WHERE metric = 'medication_qa_accuracy'").fetchone()
    assert bounds == (1.0, 5.0)
    df = load_matrix(s, MatrixQuery(benchmarks=("helm",)))
    assert df.loc["openai/gpt-4o-2024-05-13", "medication_qa"] == pytest.approx((4.544444444444444 - 1) / 4)


@pytest.mark.parametrize("value, bounds", [(4.2, (1.0, 5.0)), (0.83, (0.0, 1.0)), (1.0, (None, None))])
def test_a_jury_scores_scale_is_read_from_its_value(value, bounds):
    """Later MedHELM runs write the jury score rubric-normalised to [0, 1]; exactly 1 fits both scales."""
    from harness_ext.adapters.helm import _jury_bounds

    assert _jury_bounds("medication_qa_accuracy", value) == bounds
    assert _jury_bounds("medcalc_bench_accuracy", value) == (None, None)  # an accuracy, not a jury's rating


def test_a_scenario_outside_the_table_is_read_by_the_fallback_and_the_notes_say_so(tmp_path):
    d = tmp_path / RUN.name.replace("medication_qa", "my_med_scenario")
    shutil.copytree(RUN, d)
    spec = json.loads((d / "run_spec.json").read_text())
    spec["name"] = d.name
    spec["groups"] = ["my_med_scenario"]
    (d / "run_spec.json").write_text(json.dumps(spec))
    s, rep = _store(d)
    (f,) = [f for f in rep.files if f.adapter == "helm_run"]
    assert f.status == "ingested"
    assert _rows(s)["rouge_2"][0] is True
    assert [n for n in f.notes if "has no main metric in HELM's schemas as known here: stored rouge_2 (test)" in n]
