"""Standard errors of Every Eval Ever scores from ``score_details.uncertainty``: an explicit standard error, a
confidence interval at a known level, a standard deviation over a sample count; and the cases that give none, each
counted in a note. The records are real: a bundled lm-eval result written as Every Eval Ever's lm-eval converter
writes it, and the Inspect and Global MMLU Lite records among the fixtures, edited where a case needs a field."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

FIX = Path(__file__).parent / "fixtures" / "every_eval_ever"
PYTHIA = Path(__file__).parents[1] / "harness_ext" / "data" / "pythia-5shot" / "pythia-2.8b" / "2.8b-5shot_step143000.json"
Z95 = 1.959963984540054


def _ingest(tmp_path, doc: dict, name: str = "record.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        (f,) = ingest_paths(s, [path], show_progress=False).by_status("ingested")
        stderrs = dict(s.con.execute("SELECT d.name, r.stderr FROM results r JOIN datasets d USING (dataset_id)")
                       .fetchall())
    return f, stderrs


def _converted(tasks: list) -> dict:
    """The bundled Pythia 2.8b lm-eval result for ``tasks``, as Every Eval Ever's lm-eval converter writes it: one
    evaluation-run record whose scores carry ``uncertainty.standard_error`` (lm-eval's ``acc_stderr``)."""
    results = json.loads(PYTHIA.read_text())["results"]
    return {
        "schema_version": "0.2.1", "evaluation_id": "mmlu/EleutherAI/pythia-2.8b/1764806400",
        "retrieved_timestamp": "1764806400",
        "source_metadata": {"source_name": "lm-evaluation-harness", "source_type": "evaluation_run",
                            "source_organization_name": "", "evaluator_relationship": "first_party"},
        "eval_library": {"name": "lm_eval", "version": "0.3.0"},
        "model_info": {"name": "EleutherAI/pythia-2.8b", "id": "EleutherAI/pythia-2.8b"},
        "evaluation_results": [{
            "evaluation_name": t, "source_data": {"dataset_name": t, "source_type": "other"},
            "metric_config": {"evaluation_description": "acc", "lower_is_better": False, "score_type": "continuous",
                              "min_score": 0.0, "max_score": 1.0},
            "score_details": {"score": results[t]["acc"], "uncertainty": {
                "standard_error": {"value": results[t]["acc_stderr"], "method": "bootstrap"}, "num_samples": 100}},
        } for t in tasks],
    }


TASKS = ["hendrycksTest-prehistory", "hendrycksTest-astronomy", "hendrycksTest-anatomy"]


def test_an_explicit_standard_error_is_stored(tmp_path):
    """lm-eval's own ``acc_stderr``, carried through Every Eval Ever's converter, is the stored standard error."""
    results = json.loads(PYTHIA.read_text())["results"]
    f, stderrs = _ingest(tmp_path, _converted(TASKS))
    assert stderrs == {t: pytest.approx(results[t]["acc_stderr"]) for t in TASKS}
    assert not [n for n in f.notes if "standard error" in n or "confidence" in n], f.notes


def test_an_interval_at_a_level_gives_its_normal_standard_error(tmp_path):
    """A symmetric 95% interval around the score gives half its width over z = 1.96; 90% over z = 1.645; a level
    written as a percentage (95) is read as one and counted; a standard deviation over a sample count gives the
    schema's standard error of a mean. An explicit standard error wins over an interval."""
    doc = _converted(TASKS)
    evs = doc["evaluation_results"]
    score = [ev["score_details"]["score"] for ev in evs]
    evs[0]["score_details"]["uncertainty"] = {"confidence_interval": {
        "lower": score[0] - 0.05, "upper": score[0] + 0.05, "confidence_level": 0.95, "method": "normal"}}
    evs[1]["score_details"]["uncertainty"] = {"confidence_interval": {
        "lower": score[1] - 0.05, "upper": score[1] + 0.05, "confidence_level": 90}}
    evs[2]["score_details"]["uncertainty"] = {"standard_deviation": 0.4, "num_samples": 135}
    f, stderrs = _ingest(tmp_path, doc)
    assert stderrs == {TASKS[0]: pytest.approx(0.05 / Z95), TASKS[1]: pytest.approx(0.05 / 1.6448536269514722),
                       TASKS[2]: pytest.approx(0.4 / 135 ** 0.5)}
    assert "1 confidence level written as a percentage read as one (95 as 0.95): hendrycksTest-astronomy 90" in f.notes


def test_an_asymmetric_interval_uses_its_wider_side(tmp_path):
    """The real Inspect record's interval (0 to 0.987 around 1/3) at a 95% level: the wider side (0.654) over z,
    not the narrower one, counted in a note."""
    (real,) = (FIX / "ai2_arc").rglob("*.json")
    doc = json.loads(real.read_text())
    (ev,) = doc["evaluation_results"]
    ci = ev["score_details"]["confidence_interval"]
    ci["confidence_level"] = 0.95
    f, stderrs = _ingest(tmp_path, doc)
    (value,) = stderrs.values()
    assert value == pytest.approx((ci["upper"] - ev["score_details"]["score"]) / Z95)
    assert any(n.startswith("1 asymmetric confidence interval: the standard error is the wider side") for n in f.notes)


@pytest.mark.parametrize("edit, reason", [
    (lambda u: u["confidence_interval"].update(confidence_level=0), "a confidence_level that is neither"),
    (lambda u: u["confidence_interval"].update(confidence_level=150), "a confidence_level that is neither"),
    (lambda u: u["confidence_interval"].update(confidence_level="95%"), "a confidence_level that is neither"),
    (lambda u: u["confidence_interval"].update(lower=0.9, upper=0.1), "interval bounds that are not two numbers"),
    (lambda u: u["confidence_interval"].update(lower=0.9, upper=0.95), "an interval that does not contain its score"),
    (lambda u: u.update(standard_error={"value": -0.01}) or u.pop("confidence_interval"), "a standard_error that is not a non-negative number"),
])
def test_nonsense_gives_no_standard_error_and_says_so(tmp_path, edit, reason):
    doc = _converted(TASKS[:1])
    unc = doc["evaluation_results"][0]["score_details"]["uncertainty"]
    unc.pop("standard_error")
    unc["confidence_interval"] = {"lower": 0.2, "upper": 0.3, "confidence_level": 0.95}
    edit(unc)
    f, stderrs = _ingest(tmp_path, copy.deepcopy(doc))
    assert stderrs == {TASKS[0]: None}
    assert any(n.startswith("1 result with " + reason) and n.endswith(": " + TASKS[0]) for n in f.notes), f.notes
