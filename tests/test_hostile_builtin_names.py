"""A population's own lm-eval task named as one of lm-eval's built-in tasks (``arc_easy``, ``gpqa_diamond_zeroshot``)
but run on local files: the reduced group named it alone, so lm-eval ran its own task of that name, on other documents
than the population's, and the ``--samples`` file's numbers picked documents of that other dataset, without a word.
A live ``lm_eval`` run of such a reduced folder tried to download ``allenai/ai2_arc`` (benchmarks/HISTORY.md, the
fourth red-team pass). Composed values on the real lm-eval 0.4.11 results file of tests/fixtures/lm_eval_v04."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness_ext.cli import main
from harness_ext.methods.reduction.manifest import attach_lm_eval_tasks
from harness_ext.store.db import Store
from harness_ext.store.lm_eval_tasks import builtin_dataset, other_data_than_builtin, resolve_tasks

pytest.importorskip("lm_eval", reason="lm-eval not installed: its built-in tasks cannot be looked up")

REAL = Path(__file__).parent / "fixtures" / "lm_eval_v04" / "Qwen__Qwen3.5-9B"
TASK = "gpqa_diamond_zeroshot"
LOCAL = {"dataset_path": "json", "dataset_name": None, "dataset_kwargs": {"data_files": {"test": "/data/gpqa.jsonl"}}}


def _store(tmp_path, change: dict, functions: bool = True):
    """A store of the real results file with its task's configuration changed by ``change``."""
    folder = tmp_path / "in"
    shutil.copytree(REAL, folder)
    [f] = folder.glob("results_*.json")
    doc = json.loads(f.read_text())
    config = doc["configs"][TASK]
    config.update(change)
    if not functions:  # a task of the user's own, defined without Python functions
        config.pop("process_docs")
        config["fewshot_config"].pop("process_docs", None)
    f.write_text(json.dumps(doc))
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(folder)]) == 0
    return db


def _resolved(db, local_data=()):
    with Store.open(db, read_only=True) as store:
        return resolve_tasks([TASK], store, local_data)[TASK]


def test_the_installed_tasks_dataset_is_read_through_its_includes():
    assert builtin_dataset("arc_easy") == ("allenai/ai2_arc", "ARC-Easy")
    assert builtin_dataset("mmlu_anatomy") == ("cais/mmlu", "anatomy")  # through lm-eval's include chain
    assert builtin_dataset("mmlu") is None  # a group: nothing to compare
    assert builtin_dataset("no_such_task_x") is None


@pytest.mark.parametrize("config,other", [
    ({"dataset_path": "json", "dataset_kwargs": {"data_files": "x.jsonl"}}, True),
    ({"dataset_path": "csv"}, True),
    ({"dataset_path": "/data/arc"}, True),
    ({"dataset_path": "ai2_arc", "dataset_name": "ARC-Easy"}, False),  # the Hub's older name: the same data
    ({"dataset_path": "allenai/ai2_arc", "dataset_name": "ARC-Easy"}, False),
    ({"dataset_path": "evil/other"}, False),  # a Hub dataset: lm-eval's own task runs, as named
])
def test_local_data_under_a_builtin_name_is_told_from_a_hub_rename(config, other):
    assert (other_data_than_builtin("arc_easy", config) is not None) is other


def test_the_real_file_is_still_lm_evals_own_task(tmp_path):
    got = _resolved(_store(tmp_path, {}))
    assert got["origin"] == "lm_eval" and "other_data" not in got


def test_a_builtin_name_run_on_local_files_is_defined_in_the_folder_and_warned(tmp_path):
    db = _store(tmp_path, LOCAL, functions=False)
    got = _resolved(db, ["/data"])  # reduce --local-data /data: the user's own data files are written
    assert got["origin"] == "results" and got["config"]["dataset_path"] == "json"
    assert got["other_data"] == (("json", None), ("Idavidrein/gpqa", "gpqa_diamond"))
    m = attach_lm_eval_tasks({"subset": [{"name": TASK, "benchmark": "lm_eval", "task": TASK}], "warnings": []}, db)
    [w] = [w for w in m["warnings"] if "lm-eval's own" in w]
    assert f'"{TASK}" (json, where lm-eval\'s reads Idavidrein/gpqa gpqa_diamond)' in w
    assert "the folder defines it" in w and "overrides" in w


def test_one_that_cannot_be_rebuilt_runs_lm_evals_own_task_and_says_so(tmp_path):
    db = _store(tmp_path, LOCAL)  # process_docs kept: its source text cannot be rebuilt
    got = _resolved(db)
    assert got["origin"] == "lm_eval" and got["other_data"][0] == ("json", None)
    m = attach_lm_eval_tasks({"subset": [{"name": TASK, "benchmark": "lm_eval", "task": TASK}], "warnings": []}, db)
    assert any("the group runs lm-eval's own task of that name, on other documents" in w for w in m["warnings"])


def test_a_local_task_named_as_an_lm_eval_group_or_tag_is_other_data():
    """lm-eval's ``mmlu`` is a group of 57 subjects and ``ai2_arc`` a tag: named alone, lm-eval ran all of them."""
    local = {"dataset_path": "json", "dataset_kwargs": {"data_files": "x.jsonl"}}
    assert other_data_than_builtin("mmlu", local) == (("json", None), None)
    assert other_data_than_builtin("ai2_arc", local) == (("json", None), None)
    assert other_data_than_builtin("mmlu", {"dataset_path": "cais/mmlu"}) is None
    from harness_ext.methods.reduction.manifest import other_data_warnings

    [w] = other_data_warnings({"mmlu": {"origin": "results", "other_data": (("json", None), None)}})
    assert "\"mmlu\" (json, where lm-eval's is a group or tag of its own tasks)" in w
