"""Every file ``predict`` writes, read as its consumer reads it, for a dataset-level and an item-level manifest.

* The lm-eval-layout file (``harness_ext_prediction_*.json``) through lm-eval's own table (``lm_eval.utils.make_table``):
  the full-benchmark row of an Open LLM Leaderboard v2 reduction (Every Eval Ever records) was named
  ``Accuracy,predicted`` (the records' word) while its tasks' rows were ``acc_norm,predicted``; lm-eval names a
  group's score by its tasks' metric. Tasks whose source names no shots got ``n-shot`` 0 (the leaderboard's BBH is
  3-shot); each alias carried lm-eval 0.4.2's `` - `` and lm-eval 0.4.13's table indents again (`` -  - task``);
  an item manifest's row repeated its score as ``normalised``.
* The Every Eval Ever record against that project's schema 0.2.1 (``eval.schema.json``; the copy and where it comes
  from: fixtures/every_eval_ever/schema/PROVENANCE.md): an item manifest's full-benchmark entry had no
  ``min_score``/``max_score``, which a continuous score requires, and its tasks' bounds were the estimate itself
  (0.625 to 0.625); a record of a model read from Every Eval Ever instance files at a precision gave
  ``org/new (bfloat16)`` as its hub id.

Real data: the bundled Pythia runs, the shared Open LLM Leaderboard v2 records and HELM Lite item tables, and a real
Every Eval Ever instance line (fixtures/eee_samples) as the template of an item population.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from conftest import SHARED_DATA, require
from harness_ext.cli import main

FIX = Path(__file__).parent / "fixtures"
SCHEMA = FIX / "every_eval_ever" / "schema" / "eval.schema.json"
EEE_LINE = FIX / "eee_samples" / "mmlu" / "openai" / "gpt2" / "None_samples.jsonl"
HFOPENLLM = SHARED_DATA / "every_eval_ever" / "data" / "hfopenllm_v2"


def schema_errors(record: dict) -> list:
    """Every Eval Ever schema 0.2.1's complaints about ``record`` (path, message)."""
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text()))
    return [(list(e.path), e.message) for e in validator.iter_errors(record)]


def lm_eval_table(doc: dict) -> str:
    """The prediction file as lm-eval prints a results file."""
    pytest.importorskip("pytablewriter")
    utils = pytest.importorskip("lm_eval.utils")
    return utils.make_table(doc)


def _records(folder: Path) -> list:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def test_group_metric_name():
    from harness_ext.methods.reduction.predict_export import group_metric_name

    assert group_metric_name("Accuracy", ["acc_norm", "acc_norm", "acc_norm"]) == "acc_norm"
    assert group_metric_name("acc", ["acc"] * 57) == "acc"
    assert group_metric_name("normalised", ["acc_norm", "acc_norm"]) == "score"
    # A mean over tasks on different lm-eval metrics (the leaderboard's IFEval beside BBH): no lm-eval group's.
    assert group_metric_name("Accuracy", ["acc_norm", "mean_of_prompt_level_strict_acc_and_inst_level_strict_acc"]) \
        == "score"


@pytest.mark.skipif(not HFOPENLLM.is_dir(), reason="needs the shared Every Eval Ever data")
def test_leaderboard_reduction_names_its_full_benchmark_row_as_lm_eval_names_the_tasks(tmp_path, capsys):
    """BBH, GPQA and MuSR of the leaderboard (Every Eval Ever ``Accuracy``, lm-eval ``acc_norm``): the tasks' rows and
    the full-benchmark row are ``acc_norm,predicted``; before, the full-benchmark row was ``Accuracy,predicted``."""
    from test_lm_eval_unscored_groups import _results_file

    files = sorted(HFOPENLLM.rglob("*.json"))[:120]
    db, out, new = tmp_path / "s.duckdb", tmp_path / "red", tmp_path / "new"
    assert main(["ingest", "--db", str(db), "-q", *map(str, files)]) == 0
    assert main(["reduce", "--db", str(db), "--benchmark", "hf_open_llm_v2", "--datasets", "BBH", "--datasets", "MUSR",
                 "--datasets", "GPQA", "--budget", "1", "--n-random", "20", "--no-plot", "--out", str(out)]) == 0
    run = _results_file(new / "org__m", "org/m").parent
    assert main(["predict", "-m", str(out), str(run), "--eee", str(tmp_path / "eee")]) == 0
    printed = capsys.readouterr().out
    assert "hf_open_llm_v2 Accuracy" in printed  # the printed table keeps the store's (the records') metric name
    doc = json.loads((run / "harness_ext_prediction_harness_ext_reduced.json").read_text())
    group = doc["results"]["hf_open_llm_v2"]
    assert "Accuracy,predicted" not in group
    assert group["acc_norm,predicted"] == doc["groups"]["hf_open_llm_v2"]["acc_norm,predicted"]
    assert group["acc_norm_lower,predicted"] <= group["acc_norm,predicted"] <= group["acc_norm_upper,predicted"]
    assert doc["higher_is_better"]["hf_open_llm_v2"] == {"acc_norm": True, "normalised": True}
    tasks = doc["group_subtasks"]["hf_open_llm_v2"]
    assert sorted(tasks) == ["leaderboard_bbh", "leaderboard_gpqa", "leaderboard_musr"]
    assert {next(k for k in doc["results"][t] if k.endswith(",predicted")) for t in tasks} == {"acc_norm,predicted"}
    # The records name no shots: no number is made up (the leaderboard's BBH is 3-shot, not 0).
    assert doc["n-shot"] == {}
    table = lm_eval_table(doc)
    assert "- leaderboard_bbh" in table and "-  -" not in table and "|acc_norm " in table and "Accuracy" not in table
    # Every key of a row is a metric to lm-eval's table: which tasks were run is said beside the results, not in them.
    assert "observed" not in table and all(k == "alias" or k.endswith(",predicted")
                                           for row in doc["results"].values() for k in row)
    assert doc["harness_ext_prediction"]["n_observed"] == len(doc["harness_ext_prediction"]["observed"])
    for record in _records(tmp_path / "eee"):
        assert schema_errors(record) == []


def _item_population(root: Path, precision: str) -> tuple:
    """12 population models and a new one, each answering 40 items of MMLU in Every Eval Ever instance files made
    from one real line (its text and fields; the model, id and score changed); the new model's aggregate record
    beside its file names ``precision``."""
    base = json.loads(EEE_LINE.read_text().splitlines()[0])
    rng = random.Random(0)

    def write(folder: Path, model: str, skill: float, record: bool = False):
        folder.mkdir(parents=True)
        lines = []
        for i in range(40):
            ok = rng.random() < skill
            lines.append(json.dumps(dict(base, model_id=model, sample_id=f"id{i}", evaluation_id="run_samples",
                                         evaluation={**base["evaluation"], "score": float(ok), "is_correct": ok})))
        (folder / "run_samples.jsonl").write_text("\n".join(lines) + "\n")
        if record:
            (folder / "run.json").write_text(json.dumps({"schema_version": "0.2.1", "model_info": {
                "name": model, "id": model, "additional_details": {"precision": precision}}}))
        return folder

    for m in range(12):
        write(root / "pop" / f"m{m}", f"org/pop-{m}", 0.2 + 0.05 * m)
    return root / "pop", write(root / "new", "org/new", 0.6, record=True)


def test_item_manifest_eee_record_gives_the_hub_id_and_precision_and_meets_the_schema(tmp_path, capsys):
    """``predict --eee`` on an item manifest wrote ``model_info`` ``{"id": "org/new (bfloat16)"}`` (the stored name)
    where the dataset-level path writes the hub id and ``additional_details.precision``; its full-benchmark entry
    lacked the ``min_score``/``max_score`` the schema requires of a continuous score."""
    pop, new = _item_population(tmp_path, "bfloat16")
    db, out, eee = tmp_path / "s.duckdb", tmp_path / "red", tmp_path / "eee"
    assert main(["ingest", "--db", str(db), "-q", str(pop)]) == 0
    assert main(["reduce", "--db", str(db), "--items", "10", "--out", str(out), "--no-plot"]) == 0
    assert main(["predict", "-m", str(out), str(new), "--eee", str(eee)]) == 0
    assert "org/new (bfloat16)" in capsys.readouterr().out  # the table keeps the name the items are stored under
    [record] = _records(eee)
    assert [p.name for p in eee.glob("*.json")] == ["org__new__bfloat16.json"]
    assert record["model_info"] == {"name": "org/new", "id": "org/new", "additional_details": {"precision": "bfloat16"}}
    assert schema_errors(record) == []
    task, full = record["evaluation_results"]
    assert (task["metric_config"]["min_score"], task["metric_config"]["max_score"]) == (0.0, 1.0)
    assert (full["metric_config"]["min_score"], full["metric_config"]["max_score"]) == (0.0, 1.0)
    assert "normalised_score" not in task["score_details"]["details"]  # item scores are not normalised
    doc = json.loads((new / "harness_ext_prediction_harness_ext_reduced.json").read_text())
    [group] = doc["groups"].values()
    assert not [k for k in group if k.startswith("normalised")] and "acc,predicted" in group
    # A task the model logged no item of has no score: the record wrote NaN (no JSON); now it has no entry.
    from harness_ext.methods.reduction.item_predict import predict_items
    from harness_ext.methods.reduction.manifest import load_manifest
    from harness_ext.methods.reduction.predict_export import eee_record

    manifest = load_manifest(out)
    pred = predict_items(manifest, [new])
    pred.table.loc[:, ["score", "raw", "raw_lower", "raw_upper"]] = float("nan")
    pred.aggregate.loc[:, ["aggregate", "lower", "upper"]] = float("nan")
    empty = eee_record(pred, manifest, "org/new (bfloat16)", "1")
    assert json.loads(json.dumps(empty, allow_nan=False))["evaluation_results"] == []
    assert schema_errors(empty) == []


def test_item_manifest_without_a_precision_keeps_the_plain_id(tmp_path):
    from harness_ext.methods.reduction.item_predict import read_item_logs

    _, new = _item_population(tmp_path, "Unknown")
    long, _, _ = read_item_logs([new])
    assert set(long["model"]) == {"org/new"} and long.attrs["variants"] == {}
    (new / "run.json").write_text(json.dumps({"model_info": {"id": "org/new", "additional_details": {"precision": "float16"}}}))
    long, _, _ = read_item_logs([new])
    assert set(long["model"]) == {"org/new (float16)"} and long.attrs["variants"] == {
        "org/new (float16)": ("org/new", "float16")}


@pytest.mark.slow
def test_pythia_readme_loop_outputs_read_by_their_consumers(tmp_path, monkeypatch, capsys):
    """The README's loop on the bundled Pythia runs: the record meets the schema, the lm-eval-layout file prints in
    lm-eval's table under ``acc`` with its 5-shot tasks, the printed table says which scale each column is on."""
    from harness_ext.store.ingest import bundled_data_path

    monkeypatch.chdir(tmp_path)
    db = tmp_path / "p.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(bundled_data_path())]) == 0
    assert main(["reduce", "--db", str(db), "--benchmark", "mmlu", "--budget", "8", "--models", "*deduped*",
                 "--out", "reduced", "--no-plot"]) == 0
    run = bundled_data_path() / "pythia-2.8b" / "2.8b-5shot_step143000.json"
    capsys.readouterr()
    assert main(["predict", "--manifest", "reduced", str(run), "--eee", "eee"]) == 0
    printed = capsys.readouterr().out
    assert ("(normalised: 0 = chance, 1 = the scale's top, below 0 = below chance; and raw: on the harness's own scale "
            "of the dataset's metric)") in printed
    assert "mmlu acc" in printed
    doc = json.loads((tmp_path / "harness_ext_prediction_harness_ext_reduced.json").read_text())
    assert "acc,predicted" in doc["results"]["mmlu"] and set(doc["n-shot"].values()) == {5}
    assert doc["results"]["mmlu_anatomy"]["alias"] in ("mmlu_anatomy", "mmlu_anatomy (predicted)")
    table = lm_eval_table(doc)
    assert "|acc " in table and "-  -" not in table
    [record] = _records(tmp_path / "eee")
    assert schema_errors(record) == []


@pytest.mark.slow
def test_helm_lite_item_loop_records_meet_the_schema(tmp_path):
    """HELM Lite's item tables (shared data): two held-out models' records meet the schema, each task bounded 0 to 1;
    the lm-eval-layout file has no ``normalised`` keys."""
    pd = pytest.importorskip("pandas")
    from test_item_loop import _write_logs

    src = require(SHARED_DATA / "items" / "helm_lite")
    tables = {p.stem: pd.read_parquet(p) for p in sorted(src.glob("*.parquet"))}
    held = sorted(set.intersection(*(set(t["model"]) for t in tables.values())))[:2]
    train = tmp_path / "helm_lite"
    train.mkdir()
    for task, t in tables.items():
        t[~t["model"].isin(held)].to_parquet(train / f"{task}.parquet", index=False)
    db, out = tmp_path / "s.duckdb", tmp_path / "red"
    assert main(["ingest", "--db", str(db), "-q", str(train)]) == 0
    assert main(["reduce", "--db", str(db), "--items", "30", "--out", str(out), "--no-plot"]) == 0
    samples = json.loads((out / "harness_ext_reduced_samples.json").read_text())
    for i, m in enumerate(held):
        _write_logs(tmp_path / "runs" / f"m{i}", m, {k: t[t["model"] == m].set_index("item")["score"]
                                                      for k, t in tables.items()}, samples)
    assert main(["predict", "-m", str(out), str(tmp_path / "runs"), "--eee", str(tmp_path / "eee")]) == 0
    records = _records(tmp_path / "eee")
    assert len(records) == 2
    for record in records:
        assert schema_errors(record) == []
        assert {(r["metric_config"]["min_score"], r["metric_config"]["max_score"])
                for r in record["evaluation_results"]} == {(0.0, 1.0)}
    doc = json.loads((tmp_path / "runs" / "m0" / "harness_ext_prediction_harness_ext_reduced.json").read_text())
    assert not [k for row in doc["results"].values() for k in row if k.startswith("normalised")]
