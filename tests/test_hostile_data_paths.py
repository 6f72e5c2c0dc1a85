"""A results file's task configuration naming data by a relative local path: ``datasets`` reads it from the folder
``lm_eval`` is run in, not from the reduced folder, so a task YAML written with it read the user's own files
(``dataset_path: text`` with ``data_files: '**'``, run from a home folder, makes every file there a prompt)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from harness_ext.cli import main
from harness_ext.store.task_yaml_safety import RELATIVE, safe_task_config

LOGS = Path(__file__).resolve().parent / "fixtures" / "samples" / "lm_eval_output"


@pytest.mark.parametrize("config, dropped", [
    ({"dataset_path": "text", "dataset_kwargs": {"data_files": {"test": "**"}}}, "dataset_kwargs.data_files"),
    ({"dataset_path": "json", "dataset_kwargs": {"data_files": ["a/b.json", "https://x.org/c.json"]}},
     "dataset_kwargs.data_files"),
    ({"dataset_path": "csv", "dataset_kwargs": {"data_dir": "secrets"}}, "dataset_kwargs.data_dir"),
    ({"dataset_path": "./notes"}, "dataset_path"),
    ({"dataset_path": ".ssh"}, "dataset_path"),
    ({"dataset_path": "a/b/c"}, "dataset_path"),
    ({"dataset_path": "a\\b"}, "dataset_path"),
    ({"dataset_path": "sql", "dataset_kwargs": {"sql": "t", "con": "sqlite:///cookies.db"}}, "dataset_path"),
    # fsspec reads a relative file:// URL from the working folder as well
    ({"dataset_path": "json", "dataset_kwargs": {"data_files": "file://credentials"}}, "dataset_kwargs.data_files"),
    ({"dataset_path": "file://notes"}, "dataset_path"),
    ({"dataset_path": "file://a/b"}, "dataset_path"),
])
def test_a_relative_local_path_is_not_written(config, dropped):
    kept, gone = safe_task_config(config)
    assert dropped in [d["key"] for d in gone]
    key, _, sub = dropped.partition(".")
    assert (sub not in kept.get(key, {})) if sub else key not in kept


@pytest.mark.parametrize("config", [{"dataset_path": "json"}, {"dataset_path": "text", "dataset_kwargs": {}},
                                    {"dataset_path": "csv", "dataset_kwargs": {"data_files": "../x.csv"}}])
def test_a_builder_left_without_data_files_is_not_written(config):
    """``datasets`` reads every matching file of the working folder for a builder given no data files."""
    kept, dropped = safe_task_config(config)
    assert "dataset_path" not in kept and "read every matching file" in dropped[-1]["reason"]


def read_by_lm_eval(tmp_path, monkeypatch, config: dict, run_in: Path) -> list:
    """The prompts (``doc_to_text: '{{text}}'``) of a task ``t`` of ``config`` that lm-eval loads from its own folder
    (``tmp_path/reduced``) while run in ``run_in``, the Hub offline."""
    tasks = pytest.importorskip("lm_eval.tasks")
    pytest.importorskip("datasets")
    folder = tmp_path / "reduced"
    folder.mkdir(exist_ok=True)
    (folder / "t.yaml").write_text(yaml.safe_dump({"task": "t", "test_split": "test", "output_type": "generate_until",
                                                   "doc_to_text": "{{text}}", "doc_to_target": "", **config}))
    monkeypatch.chdir(run_in)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    task = tasks.get_task_dict(["t"], tasks.TaskManager(include_path=str(folder), include_defaults=False))["t"]
    return [task.doc_to_text(d) for d in task.test_docs()]


def test_lm_eval_reads_the_working_folder_for_a_builder_without_data_files(tmp_path, monkeypatch):
    """Not vacuous: ``dataset_path: json`` alone reads the JSON files of the folder lm_eval is run in."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "wallet.json").write_text(json.dumps({"text": "seed words"}) + "\n")
    got = read_by_lm_eval(tmp_path, monkeypatch, {"dataset_path": "json", "test_split": "train"}, home)
    assert got == ["seed words"]


@pytest.mark.parametrize("config", [
    {"dataset_path": "cais/mmlu", "dataset_kwargs": {"data_files": {"test": "data/test-*.parquet"}}},
    {"dataset_path": "gsm8k", "dataset_name": "main"},
    {"dataset_path": "json", "dataset_kwargs": {"data_files": {"test": "hf://datasets/corypaik/prost/d.jsonl"}}},
    {"dataset_path": "hf://datasets/org/x", "dataset_kwargs": {"data_dir": "sub"}},
])
def test_hub_datasets_and_remote_files_are_kept(config):
    assert safe_task_config(config) == (config, [])


def test_a_relative_data_file_inside_a_local_data_folder_is_kept(tmp_path):
    """``reduce --local-data DIR``: a dataset folder inside DIR reads its relative data files from that folder."""
    own = tmp_path / "own" / "task"
    own.mkdir(parents=True)
    cfg = {"dataset_path": str(own), "dataset_kwargs": {"data_files": {"test": "test.jsonl"}}}
    assert safe_task_config(cfg, tmp_path / "out", [tmp_path / "own"]) == (cfg, [])
    kept, dropped = safe_task_config(cfg, tmp_path / "out")
    assert kept == {} and sorted(d["key"] for d in dropped) == ["dataset_kwargs.data_files", "dataset_path"]


@pytest.mark.slow
def test_every_dataset_path_of_lm_eval_s_own_tasks_is_kept():
    """The rule costs lm-eval's own tasks nothing: each is a Hub id, a builder with remote files, or absolute."""
    tasks = pytest.importorskip("lm_eval.tasks")
    root = Path(tasks.__file__).parent

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda *_: None)
    refused = []
    for f in root.rglob("*.yaml"):
        try:
            text = f.read_text(encoding="utf-8")
            doc = yaml.load(text, Loader) if "dataset_path" in text else None
        except (yaml.YAMLError, UnicodeDecodeError):
            continue
        path = doc.get("dataset_path") if isinstance(doc, dict) else None
        if isinstance(path, str) and "{" not in path and path.strip():
            cfg = {"dataset_path": path, "dataset_kwargs": doc.get("dataset_kwargs") or {}}
            refused += [(f.name, d["key"]) for d in safe_task_config(cfg)[1] if d["reason"] == RELATIVE]
    assert refused == []


def test_lm_eval_reads_a_relative_data_file_from_the_working_folder(tmp_path, monkeypatch):
    """Not vacuous: the task YAML lm-eval loads from one folder reads the file of the folder it is run in."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "credentials").write_text("token=hunter2\n")
    config = {"dataset_path": "text", "dataset_kwargs": {"data_files": {"test": "credentials"}}}
    assert read_by_lm_eval(tmp_path, monkeypatch, config, home) == ["token=hunter2"]


@pytest.mark.slow
def test_a_relative_data_file_in_a_real_results_file_is_not_written(tmp_path, capsys):
    """lm-eval's own results (data_files 'toy_arith.jsonl', relative to where it ran), edited to read every file
    of the working folder, through ingest and reduce --items: no task YAML names a relative local path."""
    logs = tmp_path / "logs"
    for model in ("toy__lm-small", "toy__lm-medium"):
        shutil.copytree(LOGS / model, logs / model)
    for f in logs.rglob("results_*.json"):
        doc = json.loads(f.read_text(encoding="utf-8"))
        doc["configs"]["toy_arith_gen"].update(dataset_path="text", dataset_kwargs={"data_files": {"test": "**"}})
        f.write_text(json.dumps(doc), encoding="utf-8")
    db, out = tmp_path / "s.duckdb", tmp_path / "reduced"
    assert main(["ingest", "--db", str(db), "-q", str(logs)]) == 0
    assert main(["reduce", "--db", str(db), "--items", "8", "--seed", "3", "--no-plot", "--out", str(out)]) == 0
    assert "task YAMLs written from results files" in capsys.readouterr().err
    written = {p.stem: p.read_text(encoding="utf-8") for p in out.glob("toy_arith_*.yaml")}
    assert sorted(written) == ["toy_arith_gen", "toy_arith_mc"]
    for raw in written.values():
        assert {"dataset_kwargs", "dataset_path"}.isdisjoint(yaml.safe_load(raw))
        assert f"dataset_kwargs.data_files: {RELATIVE}" in raw and "NOT SELF-CONTAINED" in raw


@pytest.mark.parametrize("name", ["code_eval", " Code_Eval "])
def test_a_metric_that_runs_the_tasks_test_code_is_not_written(name, monkeypatch):
    """evaluate's code_eval runs the model's answer with the document's test code: the dataset's author's Python."""
    kept, dropped = safe_task_config({"metric_list": [{"metric": "acc"}, {"metric": name}], "dataset_path": "org/x"})
    assert kept == {"dataset_path": "org/x"} and "runs the model's answers and the task's test code" in dropped[0]["reason"]
    # Not vacuous: lm-eval hands the name to evaluate.load, whose code_eval is that script.
    registry = pytest.importorskip("lm_eval.api.registry")
    evaluate = pytest.importorskip("evaluate")
    loaded = []
    monkeypatch.setattr(evaluate, "load", lambda metric, *a, **k: loaded.append(metric))
    registry.get_metric("code_eval")
    assert loaded == ["code_eval"]


@pytest.mark.slow
def test_a_task_named_as_the_group_is_refused_before_anything_is_written(tmp_path, capsys):
    """lm-eval indexed the group or the task, not both: the group listed itself, or the task ran as the group."""
    logs = tmp_path / "logs"
    for model in ("toy__lm-small", "toy__lm-medium"):
        shutil.copytree(LOGS / model, logs / model)
    for f in list(logs.rglob("*toy_arith_mc*")):
        text = f.read_text(encoding="utf-8").replace('"toy_arith_mc"', '"harness_ext_reduced"')
        f.write_text(text, encoding="utf-8")
        f.rename(f.with_name(f.name.replace("toy_arith_mc", "harness_ext_reduced")))
    for f in logs.rglob("results_*.json"):
        f.write_text(f.read_text(encoding="utf-8").replace('"toy_arith_mc"', '"harness_ext_reduced"'), encoding="utf-8")
    db, out = tmp_path / "s.duckdb", tmp_path / "reduced"
    assert main(["ingest", "--db", str(db), "-q", str(logs)]) == 0
    capsys.readouterr()
    assert main(["reduce", "--db", str(db), "--items", "8", "--seed", "3", "--no-plot", "--out", str(out)]) != 0
    err = capsys.readouterr().err
    assert 'named "harness_ext_reduced", as the lm-eval group' in err and "--group-name" in err
    assert not out.exists() or not any(out.iterdir())
    assert main(["reduce", "--db", str(db), "--items", "8", "--seed", "3", "--no-plot", "--out", str(out),
                 "--group-name", "mine"]) == 0
    group = (out / "mine.yaml").read_text(encoding="utf-8").replace("!function ", "")  # the estimate's tag
    assert "harness_ext_reduced" in yaml.safe_load(group)["task"]
