"""Item-level ``predict`` reads a new model's per-item file of a task the manifest names by the other harness's name.

An Inspect AI log names its items' task by the Inspect task (``simpleqa_verified``); the Every Eval Ever instance file
that Every Eval Ever's Inspect converter writes from the same log names it by the log's dataset (``evaluation_name`` =
``eval.dataset.name``, ``codelion/SimpleQA-Verified``), with the record beside it (``source_data``: repository, size;
``evaluation_name``: the scorer). Item-level ``predict`` matched a new model's items by task name only, so a new model
whose folder held the record and its instance file of a task the manifest names by its Inspect task (or the reverse)
got no estimate of that task. ``reduce --items`` now keeps each task's link fields and ``predict`` matches them by
the rule dataset-level ``predict`` uses (``predict_links.match_new``), saying what it read with counts.

The population: copies of the committed real Epoch AI SimpleQA log (``fixtures/inspect/no_version``) and of the real
record converted from it (``fixtures/eee_inspect_run``), with the model, the dataset's size (200) and per-sample
scores made up (the committed log keeps no samples), beside a second task made from the log.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness_ext.cli import main

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LOG = FIXTURES / "inspect" / "no_version" / "2026-02-06T02-15-41+00-00_simpleqa-verified_claude-opus-4-6.json"
RECORD = next((FIXTURES / "eee_inspect_run").rglob("*.json"))
N = 60


def _log(folder: Path, model: str, right, task: str = "simpleqa_verified", location=None) -> Path:
    """The real log, run by ``model`` with per-sample scores ``right`` (one per sample id 1..N)."""
    doc = json.loads(LOG.read_text())
    ev = doc["eval"]
    ev["model"] = model
    ev["eval_id"] = ev["run_id"] = f"{model}-{task}".replace("/", "-")
    ev["dataset"].update(samples=N, sample_ids=list(range(1, N + 1)))
    if task != "simpleqa_verified":
        ev["task"] = ev["task_display_name"] = ev["task_registry_name"] = task
        ev["dataset"]["name"] = ev["dataset"]["location"] = location or f"example/{task}"
    doc["samples"] = [{"id": i + 1, "epoch": 1, "input": "q", "target": "a",
                       "scores": {"simpleqa_scorer": {"value": "C" if r else "I"}}} for i, r in enumerate(right)]
    doc["results"]["scores"][0]["metrics"]["accuracy"]["value"] = float(np.mean(right))
    doc["results"]["total_samples"] = doc["results"]["completed_samples"] = N
    p = folder / f"{task}_{model.replace('/', '_')}.json"
    p.write_text(json.dumps(doc))
    return p


def _record(folder: Path, model: str, right, ids=None) -> Path:
    """The real record of ``model`` with its instance file, as Every Eval Ever's Inspect converter writes it."""
    doc = json.loads(RECORD.read_text())
    doc["model_info"]["id"] = doc["model_info"]["name"] = model
    res = doc["evaluation_results"][0]
    res["score_details"]["score"] = float(np.mean(right))
    res["source_data"].update(samples_number=N, sample_ids=list(range(1, N + 1)))
    doc["detailed_evaluation_results"] = {"format": "jsonl", "file_path": "rec_samples.jsonl", "total_rows": N}
    d = folder / "SimpleQA-Verified" / model
    d.mkdir(parents=True)
    (d / "rec.json").write_text(json.dumps(doc))
    lines = [{"schema_version": "instance_level_eval_0.2.2", "evaluation_id": "x", "model_id": model,
              "evaluation_name": "codelion/SimpleQA-Verified", "sample_id": str(i), "interaction_type": "single_turn",
              "input": {"raw": "q", "reference": ["a"]}, "evaluation": {"score": float(r), "is_correct": bool(r)}}
             for i, r in zip(ids or range(1, N + 1), right)]
    (d / "rec_samples.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return d


def _manifest(tmp_path, simpleqa_as_record: bool, twin: bool = False) -> Path:
    """``reduce --items 20`` of 12 models on SimpleQA (Inspect logs, or records with instance files) and task_b;
    ``twin``: a third task reading the same repository with the same scorer and size."""
    train = tmp_path / "train"
    train.mkdir()
    rng = np.random.default_rng(0)
    for i in range(12):
        model, a = f"org/model-{i:02d}", 0.2 + 0.05 * i
        _log(train, model, rng.random(N) < a + 0.05, "task_b")
        if twin:
            _log(train, model, rng.random(N) < a, "task_twin", "codelion/SimpleQA-Verified")
        right = rng.random(N) < a
        _record(train, model, right) if simpleqa_as_record else _log(train, model, right)
    db, out = tmp_path / "train.duckdb", tmp_path / "manifest"
    assert main(["ingest", "--db", str(db), str(train)]) == 0
    assert main(["reduce", "--db", str(db), "--items", "20", "--seed", "0", "--no-plot", "--out", str(out)]) == 0
    return out / "manifest.json"


def _predict(capsys, manifest, folder):
    capsys.readouterr()
    rc = main(["predict", "--manifest", str(manifest), str(folder), "--json"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    return json.loads(captured.out)


def _row(result, task):
    return next(r for r in result["datasets"] if r["dataset"] == task)


@pytest.mark.parametrize("simpleqa_as_record", [False, True], ids=["manifest-log-new-record", "manifest-record-new-log"])
def test_the_new_models_items_are_read_under_the_manifests_task(tmp_path, capsys, simpleqa_as_record):
    manifest = _manifest(tmp_path, simpleqa_as_record)
    name = "codelion/SimpleQA-Verified" if simpleqa_as_record else "simpleqa_verified"
    tasks = json.loads(manifest.read_text())["tasks"]
    assert tasks[name]["link_fields"]["samples_number" if simpleqa_as_record else "dataset_samples"] == N
    new = tmp_path / "new"
    new.mkdir()
    right = np.random.default_rng(1).random(N) < 0.5
    _log(new, "org/new", right, "task_b")
    _record(new, "org/new", right) if not simpleqa_as_record else _log(new, "org/new", right)
    result = _predict(capsys, manifest, new)
    row = _row(result, name)
    assert row["observed"] and row["raw"] == pytest.approx(right.mean()) and row["n_used"] == N
    other = "simpleqa_verified" if simpleqa_as_record else "codelion/SimpleQA-Verified"
    (said,) = [w for w in result["warnings"] if f"task {other} of the new logs read as the manifest's {name}" in w]
    assert f"{N} item scores read under {name}" in said and f"codelion/SimpleQA-Verified, {N} samples" in said
    assert not any("no per-item" in w for w in result["warnings"])


def test_a_linked_file_whose_ids_are_not_the_drawn_items_is_counted(tmp_path, capsys):
    """Hostile: the record's instance file names items the task does not have: read under the manifest's task,
    none used, and the count said, not dropped in silence."""
    manifest = _manifest(tmp_path, simpleqa_as_record=False)
    new = tmp_path / "new"
    new.mkdir()
    right = np.random.default_rng(1).random(N) < 0.5
    _log(new, "org/new", right, "task_b")
    _record(new, "org/new", right, ids=range(5001, 5001 + N))
    result = _predict(capsys, manifest, new)
    assert _row(result, "simpleqa_verified")["n_used"] == 0
    assert any("read as the manifest's simpleqa_verified" in w and f"{N} item scores read" in w
               for w in result["warnings"])
    (said,) = [w for w in result["warnings"] if w.startswith("org/new, simpleqa_verified:")]
    assert "0 of the manifest's 20 items logged" in said and f"{N} logged items outside the manifest's sample" in said
    assert f"{N} of them not items of the task" in said


def test_a_file_fitting_two_of_the_manifests_tasks_is_read_under_neither(tmp_path, capsys):
    manifest = _manifest(tmp_path, simpleqa_as_record=False, twin=True)
    new = tmp_path / "new"
    new.mkdir()
    right = np.random.default_rng(1).random(N) < 0.5
    _log(new, "org/new", right, "task_b")
    _record(new, "org/new", right)
    capsys.readouterr()
    main(["predict", "--manifest", str(manifest), str(new), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert any("fits several of the manifest's datasets" in w and "read under none of them" in w
               for w in result["warnings"])
    assert _row(result, "simpleqa_verified")["n_used"] == 0 and _row(result, "task_twin")["n_used"] == 0
