"""``inspect eval NAME`` looks NAME up in Inspect's registry and, when the registry does not hold it, matches it as a
path pattern from the folder it runs in (Inspect's ``create_tasks`` and ``task_files``: ``Path.cwd().glob(NAME)``,
every ``.py`` file of a matched folder imported). So a log naming its task with a glob character (``*``), or naming
it ``pkg/x`` or ``x`` beside a shipped folder of that name, makes the ``inspect eval TASK`` that ``reduce --items``
asks for run the attacker's code. Composed hostile task names on the real ``inspect_evals/popularity`` log
(tests/fixtures/inspect, see test_inspect_sample_ids.py)."""

from __future__ import annotations

import json

import pytest

from harness_ext.cli import main
from harness_ext.errors import HarnessExtError
from harness_ext.methods.reduction.inspect_samples import (inspect_sample_ids, local_task_problem,
                                                           task_file_problem)
from test_inspect_sample_ids import _real_population


@pytest.mark.parametrize("name", ["*", "**", "pop*", "[p]opularity", "inspect_evals/pop?larity"])
def test_a_task_named_as_a_glob_is_refused(name):
    assert "glob" in task_file_problem(name)
    with pytest.raises(HarnessExtError, match="leave it out"):
        inspect_sample_ids({"tasks": {"t": {"inspect": {"task": name, "sample_ids": [1]}}}})


def test_a_folder_of_the_tasks_name_is_found(tmp_path):
    (tmp_path / "evilpkg" / "x").mkdir(parents=True)
    (tmp_path / "plain").write_text("")
    assert "folder" in local_task_problem("evilpkg/x", [tmp_path])
    assert "file" in local_task_problem("plain", [tmp_path])
    assert local_task_problem("inspect_evals/popularity", [tmp_path]) == ""
    assert local_task_problem("a\x00b", [tmp_path]) == ""  # a name no file system holds


def hostile_logs(tmp_path, task: str):
    logs = tmp_path / "logs"
    _real_population(logs)
    for f in logs.glob("*.json"):
        doc = json.loads(f.read_text())
        doc["eval"]["task"] = task
        f.write_text(json.dumps(doc))
    return logs


def reduce_refused(tmp_path, logs, capsys) -> str:
    """Ingest ``logs``, run ``reduce --items 2``: it must fail and write nothing; returns its stderr."""
    db, out = tmp_path / "s.duckdb", tmp_path / "reduced"
    assert main(["ingest", "--db", str(db), "-q", str(logs)]) == 0
    capsys.readouterr()
    assert main(["reduce", "--db", str(db), "--benchmark", "inspect", "--items", "2", "--out", str(out),
                 "--no-plot"]) != 0
    assert not out.exists() or not any(out.iterdir())
    return capsys.readouterr().err


@pytest.mark.parametrize("task", ["evilpkg/x", "evilx"])
def test_reduce_refuses_a_task_named_as_a_folder_beside_its_logs(tmp_path, capsys, task):
    logs = hostile_logs(tmp_path, task)
    (logs / task).mkdir(parents=True)
    (logs / task / "evil.py").write_text("raise SystemExit('ran')\n")
    err = reduce_refused(tmp_path, logs, capsys)
    assert f'"{task}"' in err and "folder of that name" in err and "popularity_" in err


def test_reduce_refuses_a_task_named_as_a_glob(tmp_path, capsys):
    assert "glob character" in reduce_refused(tmp_path, hostile_logs(tmp_path, "pop*"), capsys)
