"""``predict`` reads a new model's file of a dataset the manifest names by the other harness's name.

The store links the committed Epoch AI SimpleQA Inspect log (task ``simpleqa_verified``) and the Every Eval Ever
record converted from it (``SimpleQA-Verified``) into one column. ``predict`` matched a new model's results by the
manifest's dataset names only, so a new model whose folder held the record of a dataset the manifest names by its
Inspect task (or the reverse) was told the dataset was missing. The manifest now keeps what the links compare, and
predict reads the file under the manifest's name by the same rules, saying so with counts; a file that fits several
of the manifest's datasets is read under none, and said.

The population: copies of the real log and record with the model and score changed, beside two more tasks made
from the log (another dataset repository each), so ``reduce`` has models to learn from.
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
OTHER = ("task_b", "task_c")


def _log(folder: Path, model: str, score: float, task: str = "simpleqa_verified") -> Path:
    """The real log, run by ``model`` with ``score``; another ``task`` reads another dataset repository."""
    doc = json.loads(LOG.read_text())
    ev = doc["eval"]
    ev["model"] = model
    ev["eval_id"] = ev["run_id"] = f"{model}-{task}".replace("/", "-")
    if task != "simpleqa_verified":
        ev["task"] = ev["task_display_name"] = ev["task_registry_name"] = task
        ev["dataset"]["name"] = ev["dataset"]["location"] = f"example/{task}"
    doc["results"]["scores"][0]["metrics"]["accuracy"]["value"] = score
    p = folder / f"{task}_{model.replace('/', '_')}.json"
    p.write_text(json.dumps(doc))
    return p


def _record(folder: Path, model: str, score: float) -> Path:
    """The real Every Eval Ever record, of ``model`` with ``score``."""
    doc = json.loads(RECORD.read_text())
    doc["evaluation_results"][0]["score_details"]["score"] = score
    doc["model_info"]["id"] = doc["model_info"]["name"] = model
    p = folder / model.replace("/", "_") / "record.json"
    p.parent.mkdir(parents=True)
    p.write_text(json.dumps(doc))
    return p


def _manifest(tmp_path, simpleqa_as_record: bool, alias_file: str = "") -> Path:
    """``reduce`` of 14 models on SimpleQA (as logs, or as records) and two more tasks; the subset is SimpleQA and one
    other task (``--budget 2`` of 3 columns, then checked)."""
    train = tmp_path / "train"
    train.mkdir()
    rng = np.random.default_rng(0)
    for i in range(14):
        model, a = f"org/model-{i:02d}", 0.2 + 0.04 * i
        for task in OTHER:
            _log(train, model, float(np.clip(a + rng.normal(0, 0.02), 0, 1)), task)
        s = float(np.clip(a + rng.normal(0, 0.02), 0, 1))
        _record(train, model, s) if simpleqa_as_record else _log(train, model, s)
    db, out = tmp_path / "train.duckdb", tmp_path / "manifest"
    assert main(["ingest", "--db", str(db), str(train)]) == 0
    if alias_file:
        (tmp_path / "aliases.yaml").write_text(alias_file)
        assert main(["info", "--db", str(db), "--dataset-aliases", str(tmp_path / "aliases.yaml")]) == 0
    assert main(["reduce", "--db", str(db), "--benchmark", "inspect", "--budget", "2", "--no-plot", "--out",
                 str(out), "--json"]) == 0
    return out / "manifest.json"


def _predict(capsys, manifest, *paths):
    capsys.readouterr()
    rc = main(["predict", "--manifest", str(manifest), *map(str, paths), "--json"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    return json.loads(captured.out), captured.err


def _cell(result, dataset):
    row = next(r for r in result["datasets"] if r["dataset"] == dataset)
    return row["raw"] if row["observed"] else row["raw_actual"]


@pytest.mark.parametrize("simpleqa_as_record", [False, True], ids=["manifest-log-new-record", "manifest-record-new-log"])
def test_the_new_models_file_is_read_under_the_manifests_name(tmp_path, capsys, simpleqa_as_record):
    manifest = _manifest(tmp_path, simpleqa_as_record)
    doc = json.loads(manifest.read_text())
    name = "SimpleQA-Verified" if simpleqa_as_record else "simpleqa_verified"
    entry = next(d for d in doc["datasets"] if d["name"] == name)
    assert entry["link_fields"]["samples_number" if simpleqa_as_record else "dataset_samples"] == 1000
    new = tmp_path / "new"
    new.mkdir()
    files = [_log(new, "org/new", 0.5, task) for task in OTHER]
    files.append(_log(new, "org/new", 0.431) if simpleqa_as_record else _record(new, "org/new", 0.431))
    result, err = _predict(capsys, manifest, *files)
    assert _cell(result, name) == pytest.approx(0.431)
    other = "simpleqa_verified" if simpleqa_as_record else "SimpleQA-Verified"
    said = [w for w in result["warnings"] if f"dataset {other} of the new results read as the manifest's {name}" in w]
    assert len(said) == 1 and "1 result read under" in said[0] and "codelion/SimpleQA-Verified, 1000 samples" in said[0]
    assert not any(f"no result for {name}" in w for w in result["warnings"])


def test_both_names_in_the_new_folder_one_run_counted_once_and_a_disagreement_counted(tmp_path, capsys):
    manifest = _manifest(tmp_path, simpleqa_as_record=False)
    new = tmp_path / "new"
    new.mkdir()
    files = [_log(new, "org/new", 0.5, task) for task in OTHER] + [_log(new, "org/new", 0.431),
                                                                    _record(new, "org/new", 0.431)]
    result, _ = _predict(capsys, manifest, *files)
    assert _cell(result, "simpleqa_verified") == pytest.approx(0.431)
    (said,) = [w for w in result["warnings"] if "dataset SimpleQA-Verified of the new results" in w]
    assert "0 results read under" in said and "1 with the same value" in said and "0 that disagree" in said
    # the record disagreeing with the log: the log (the manifest's own name) is kept, and the disagreement counted
    other = tmp_path / "other"
    other.mkdir()
    files[-1] = _record(other, "org/new", 0.2)
    result, _ = _predict(capsys, manifest, *files)
    assert _cell(result, "simpleqa_verified") == pytest.approx(0.431)
    assert any("1 that disagree" in w for w in result["warnings"])


def test_a_record_fitting_several_of_the_manifests_tasks_is_read_under_none(tmp_path, capsys):
    """Two manifest tasks reading the one repository with the one scorer and an unknown size: the record could be
    either, so it is read under neither, and said."""
    from harness_ext.methods.reduction.predict_links import new_result_links
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths

    fields = {"harness": "inspect_ai", "dataset_location": "codelion/SimpleQA-Verified", "dataset_samples": 1000,
              "scorers": ["simpleqa_scorer"]}
    datasets = [{"name": n, "benchmark": "inspect", "metric": "accuracy", "link_fields": fields}
                for n in ("simpleqa_verified", "simpleqa_again")]
    doc = json.loads(RECORD.read_text())
    doc["evaluation_results"][0]["source_data"].pop("samples_number", None)
    (tmp_path / "r.json").write_text(json.dumps(doc))
    with Store.open(":memory:") as store:
        ingest_paths(store, [str(tmp_path / "r.json")], show_progress=False)
        renames, notes = new_result_links(datasets, store)
    assert renames == {}
    (note,) = notes
    assert "SimpleQA-Verified of the new results fits several" in note and "simpleqa_again, simpleqa_verified" in note
    # one of them alone: linked
    with Store.open(":memory:") as store:
        ingest_paths(store, [str(RECORD)], show_progress=False)
        renames, notes = new_result_links(datasets[:1], store)
    assert renames[("inspect", "SimpleQA-Verified")][:2] == ("inspect", "simpleqa_verified") and not notes


def test_a_manifest_written_before_it_kept_the_links_reads_them_from_its_store(tmp_path, capsys):
    manifest = _manifest(tmp_path, simpleqa_as_record=False)
    doc = json.loads(manifest.read_text())
    for d in doc["datasets"]:
        d.pop("link_fields", None)
    manifest.write_text(json.dumps(doc))
    new = tmp_path / "new"
    new.mkdir()
    files = [_log(new, "org/new", 0.5, task) for task in OTHER] + [_record(new, "org/new", 0.431)]
    result, _ = _predict(capsys, manifest, *files)
    assert _cell(result, "simpleqa_verified") == pytest.approx(0.431)
    # without the store either: the record is not read, and predict says the dataset is missing, as before
    Path(doc["source"]["store"]).unlink()
    result, _ = _predict(capsys, manifest, *files)
    assert not any("read as the manifest's" in w for w in result["warnings"])


def test_the_users_alias_file_reaches_predict(tmp_path, capsys):
    """``separate:`` keeps the record apart at predict too; a declared alias links a record no built-in rule would
    (its repository a mirror's)."""
    manifest = _manifest(tmp_path, simpleqa_as_record=False, alias_file="separate: [SimpleQA-Verified]\n")
    new = tmp_path / "new"
    new.mkdir()
    files = [_log(new, "org/new", 0.5, task) for task in OTHER] + [_record(new, "org/new", 0.431)]
    result, _ = _predict(capsys, manifest, *files)
    assert not any("read as the manifest's" in w for w in result["warnings"])

    other = tmp_path / "declared"
    other.mkdir()
    manifest = _manifest(other, simpleqa_as_record=False,
                         alias_file="aliases:\n  inspect/simpleqa_verified: [inspect/SimpleQA-Verified]\n")
    doc = json.loads(RECORD.read_text())
    doc["evaluation_results"][0]["source_data"]["hf_repo"] = "mirror/simpleqa"
    doc["model_info"]["id"] = doc["model_info"]["name"] = "org/new"
    mirror = other / "mirror.json"
    mirror.write_text(json.dumps(doc))
    result, _ = _predict(capsys, manifest, *files[:2], mirror)
    assert _cell(result, "simpleqa_verified") == pytest.approx(0.431)
    assert any("SimpleQA-Verified of the new results read as the manifest's simpleqa_verified (an alias of "
               "simpleqa_verified in the manifest's training store)" in w for w in result["warnings"])


def test_a_linked_result_on_another_metric_is_not_read_and_said():
    import pandas as pd

    from harness_ext.methods.reduction.predict_links import relink_rows

    long = pd.DataFrame({"model": ["m", "m"], "benchmark": ["inspect"] * 2, "dataset": ["SimpleQA-Verified"] * 2,
                         "metric": ["accuracy", "f1"], "num_fewshot": [-1, -1], "value": [0.4, 0.3]})
    renames = {("inspect", "SimpleQA-Verified"): ("inspect", "simpleqa_verified", "the same run")}
    out, notes = relink_rows(long, renames, [{"name": "simpleqa_verified", "benchmark": "inspect",
                                              "metric": "accuracy"}])
    assert sorted(zip(out["dataset"], out["metric"])) == [("SimpleQA-Verified", "f1"), ("simpleqa_verified", "accuracy")]
    assert any("1 result on another metric than its accuracy (f1): not read as simpleqa_verified" in n for n in notes)
    assert any("1 result read under simpleqa_verified" in n for n in notes)
