"""The task list ``<group>_tasks.txt`` names each subset dataset by its harness task, else by its own name, which
comes from files anyone can write (a leaderboard CSV's column). ``lm_eval --tasks`` reads a name ending in ``.yaml``
as a file from the folder it runs in (lm-eval 0.4.13, ``EvaluatorConfig.process_tasks``) and imports the Python its
``!function`` tags name: a name read as a path or a YAML file is left out of the list, warned and counted."""

from __future__ import annotations

import json
import random

import pytest

from harness_ext.cli import main
from harness_ext.methods.reduction.harness_names import reads_as_file
from harness_ext.safe_output import harness_task_problem

HOSTILE = ["/tmp/evil.yaml", "../../x.yaml", "~/.bashrc", "evil.YML", "C:\\win\\x.yaml", "mmlu,/tmp/evil.yaml"]


@pytest.mark.parametrize("name", HOSTILE)
def test_names_lm_eval_reads_as_files(name):
    assert reads_as_file(name)


@pytest.mark.parametrize("name", ["mmlu_anatomy", "arc_easy,arc_challenge", "MT-bench (multi-turn)", "bench 1.5"])
def test_task_names_are_not_files(name):
    assert not reads_as_file(name)


def test_a_declared_harness_task_named_as_a_yaml_file_is_refused():
    assert "loads a name ending in .yaml as a file" in harness_task_problem("evil.yaml")


@pytest.mark.slow
def test_the_task_list_leaves_out_dataset_names_read_as_files(tmp_path, capsys):
    rng = random.Random(0)
    cols = HOSTILE[:5] + [f"bench{i}" for i in range(6)]
    rows = ["model," + ",".join(f'"{c}"' for c in cols)]
    rows += [f"m{m}," + ",".join(f"{rng.uniform(20, 80):.2f}" for _ in cols) for m in range(30)]
    (tmp_path / "board.csv").write_text("\n".join(rows) + "\n")
    db, out = tmp_path / "s.duckdb", tmp_path / "reduced"
    assert main(["ingest", "--db", str(db), "-q", str(tmp_path / "board.csv")]) == 0
    capsys.readouterr()
    assert main(["reduce", "--db", str(db), "--budget", "10", "--no-plot", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    subset = [e["name"] for e in json.loads((out / "manifest.json").read_text())["subset"]]
    hostile = [n for n in subset if reads_as_file(n)]
    assert len(hostile) >= 4 and f"{len(hostile)} of the 10 subset datasets are named as a path or a YAML file" in err
    assert (out / "harness_ext_reduced_tasks.txt").read_text().splitlines() == [n for n in subset if n not in hostile]
