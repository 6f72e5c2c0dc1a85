"""A results file's task configuration naming data through a URL that is no remote location: ``datasets`` opens
any URL with fsspec, whose ``local://`` is the local disk and whose ``zip://``, ``tar://`` and ``::`` chains open a
local file, so a task YAML written with one read the user's own files whatever folder lm-eval ran in. The
``pandas`` builder unpickles its data files (code) in the datasets versions before 5. A web address on the machine
or its network (a cloud VM's metadata service) is left out too."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from harness_ext.cli import main
from harness_ext.store.task_yaml_safety import safe_task_config
from test_hostile_data_paths import read_by_lm_eval

LOGS = Path(__file__).resolve().parent / "fixtures" / "samples" / "lm_eval_output"


@pytest.mark.parametrize("config, dropped", [
    ({"dataset_path": "text", "dataset_kwargs": {"data_files": {"test": "local:///home/me/.ssh/id_rsa"}}},
     "dataset_kwargs.data_files"),
    ({"dataset_path": "org/x", "dataset_kwargs": {"data_files": "LOCAL:///etc/passwd"}}, "dataset_kwargs.data_files"),
    ({"dataset_path": "json", "dataset_kwargs": {"data_files": ["zip://*.json::/home/me/backup.zip"]}},
     "dataset_kwargs.data_files"),
    ({"dataset_path": "json", "dataset_kwargs": {"data_files": "simplecache::file:///home/me/w.json"}},
     "dataset_kwargs.data_files"),
    ({"dataset_path": "org/x", "dataset_kwargs": {"data_dir": "tar://d::/tmp/a.tar"}}, "dataset_kwargs.data_dir"),
    ({"dataset_path": "json", "dataset_kwargs": {"data_files": "sftp://intranet/secret.json"}},
     "dataset_kwargs.data_files"),
    ({"dataset_path": "local:///home/me/data"}, "dataset_path"),
    # a web address inside the machine or its network: a cloud VM's metadata service hands out its credentials
    ({"dataset_path": "json", "dataset_kwargs": {"data_files": "http://169.254.169.254/latest/meta-data/x"}},
     "dataset_kwargs.data_files"),
    ({"dataset_path": "json", "dataset_kwargs": {"data_files": "http://localhost:8080/a.json"}},
     "dataset_kwargs.data_files"),
    ({"dataset_path": "json", "dataset_kwargs": {"data_files": "https://10.1.2.3/a.json"}}, "dataset_kwargs.data_files"),
    ({"dataset_path": "json", "dataset_kwargs": {"data_files": "http://0x7f.1/a.json"}}, "dataset_kwargs.data_files"),
    ({"dataset_path": "json", "dataset_kwargs": {"data_files": "http://intranet/a.json"}}, "dataset_kwargs.data_files"),
    ({"dataset_path": "pandas", "dataset_kwargs": {"data_files": "https://example.org/x.pkl"}}, "dataset_path"),
])
def test_a_url_that_opens_a_local_file_is_not_written(config, dropped):
    kept, gone = safe_task_config(config)
    assert dropped in [d["key"] for d in gone]
    key, _, sub = dropped.partition(".")
    assert (sub not in kept.get(key, {})) if sub else key not in kept


@pytest.mark.parametrize("config", [
    {"dataset_path": "json", "dataset_kwargs": {"data_files": {"test": "https://x.org/a.json"}}},
    {"dataset_path": "json", "dataset_kwargs": {"data_files": "https://8.8.8.8/a.json"}},
    {"dataset_path": "json", "dataset_kwargs": {"data_files": "https://huggingface.co/datasets/o/x/resolve/main/a.json"}},
    {"dataset_path": "json", "dataset_kwargs": {"data_files": "HF://datasets/org/x/a.jsonl"}},
    {"dataset_path": "parquet", "dataset_kwargs": {"data_files": ["s3://bucket/a.parquet", "gs://b/c.parquet"]}},
])
def test_remote_files_are_kept(config):
    assert safe_task_config(config) == (config, [])


def test_datasets_reads_a_local_url_from_any_folder(tmp_path, monkeypatch):
    """Not vacuous: the task YAML lm-eval loads reads a file named by ``local://``, wherever lm-eval runs."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "credentials").write_text("token=hunter2\n")
    config = {"dataset_path": "text", "dataset_kwargs": {"data_files": {"test": f"local://{home / 'credentials'}"}}}
    assert read_by_lm_eval(tmp_path, monkeypatch, config, tmp_path) == ["token=hunter2"]


@pytest.mark.slow
def test_local_urls_in_real_results_files_are_not_written(tmp_path, capsys):
    """lm-eval's own results, edited to read a local file through ``local://`` and through a ``zip::`` chain, through
    ingest and reduce --items: no task YAML names either, the warning counts them and each header says why."""
    logs = tmp_path / "logs"
    for model in ("toy__lm-small", "toy__lm-medium"):
        shutil.copytree(LOGS / model, logs / model)
    for f in logs.rglob("results_*.json"):
        doc = json.loads(f.read_text(encoding="utf-8"))
        doc["configs"]["toy_arith_gen"].update(dataset_path="text",
                                               dataset_kwargs={"data_files": {"test": "local:///etc/passwd"}})
        doc["configs"]["toy_arith_mc"].update(dataset_path="json",
                                              dataset_kwargs={"data_files": {"test": "zip://*::/home/me/a.zip"}})
        f.write_text(json.dumps(doc), encoding="utf-8")
    db, out = tmp_path / "s.duckdb", tmp_path / "reduced"
    assert main(["ingest", "--db", str(db), "-q", str(logs)]) == 0
    assert main(["reduce", "--db", str(db), "--items", "8", "--seed", "3", "--no-plot", "--out", str(out)]) == 0
    assert "dataset_kwargs.data_files x2" in capsys.readouterr().err
    for task, why in (("toy_arith_gen", "fsspec's local:// file system"), ("toy_arith_mc", "chains file systems")):
        raw = (out / f"{task}.yaml").read_text(encoding="utf-8")
        assert "dataset_kwargs" not in yaml.safe_load(raw) and why in raw and "NOT SELF-CONTAINED" in raw
    assert not any(s in p.read_text(encoding="utf-8") for p in out.iterdir() for s in ("local:///", "a.zip"))
