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


def _reduce_board(tmp_path, capsys, cols, budget):
    """A 30-model board of random scores with columns ``cols`` ingested and reduced to ``budget`` datasets:
    ``(reduce's stderr, the subset's names, the reduced folder)``."""
    rng = random.Random(0)
    rows = ["model," + ",".join(f'"{c}"' for c in cols)]
    rows += [f"m{m}," + ",".join(f"{rng.uniform(20, 80):.2f}" for _ in cols) for m in range(30)]
    (tmp_path / "board.csv").write_text("\n".join(rows) + "\n")
    db, out = tmp_path / "s.duckdb", tmp_path / "reduced"
    assert main(["ingest", "--db", str(db), "-q", str(tmp_path / "board.csv")]) == 0
    capsys.readouterr()
    assert main(["reduce", "--db", str(db), "--budget", str(budget), "--no-plot", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    return err, [e["name"] for e in json.loads((out / "manifest.json").read_text())["subset"]], out


@pytest.mark.slow
def test_the_task_list_leaves_out_dataset_names_read_as_files(tmp_path, capsys):
    err, subset, out = _reduce_board(tmp_path, capsys, HOSTILE[:5] + [f"bench{i}" for i in range(6)], 10)
    hostile = [n for n in subset if reads_as_file(n)]
    assert len(hostile) >= 4 and f"{len(hostile)} of the 10 subset datasets are named as a path or a YAML file" in err
    assert (out / "harness_ext_reduced_tasks.txt").read_text().splitlines() == [n for n in subset if n not in hostile]


# A dataset-level task list names each subset dataset by its lm-eval tasks where they are known (lm-eval's results,
# or harness-ext's name table), else by its own name. A board's column is no lm-eval task name: a comma in it is
# left out (lm_eval --tasks would split it into lm-eval's own tasks), and the rest is said to be unverified.
def _subset(*entries):
    return {"group_name": "harness_ext_reduced", "subset": [dict(e, coverage=0.5) for e in entries]}


BOARD = [{"name": n, "benchmark": "board", "task": None} for n in
         ("mmlu", "arc_easy,piqa", "bench_a", "winogrande", "hellaswag")]


def test_a_board_name_with_a_comma_is_left_out_of_the_task_list_and_counted(tmp_path):
    from harness_ext.methods.reduction.lm_eval_group import task_list_lines, task_list_warnings
    from harness_ext.plugins.manifest_writers import write_task_list

    m = _subset(*BOARD)
    kept, as_file, with_comma, globs = task_list_lines(m)
    assert kept == ["mmlu", "bench_a", "winogrande", "hellaswag"] and with_comma == ["arc_easy,piqa"]
    [path] = write_task_list(m, tmp_path)
    assert path.read_text().splitlines() == kept
    said = " ".join(task_list_warnings(m))
    assert '1 of the 5 subset datasets is named with a comma ("arc_easy,piqa"), where lm_eval --tasks splits' in said
    assert "the task list leaves it out" in said


def test_harness_ext_s_own_join_and_lm_eval_s_own_tasks_keep_their_commas():
    from harness_ext.methods.reduction.lm_eval_group import task_list_lines, task_list_warnings

    math = {"name": "MATH", "benchmark": "helm_lite", "task": None}  # 7 minerva_math tasks, joined by harness-ext
    lm = {"name": "arc_easy", "benchmark": "lm_eval", "task": "arc_easy", "harness": "lm-eval"}
    odd = {"name": "x,y", "benchmark": "lm_eval", "task": "x,y"}  # an lm-eval results file naming a task so
    kept, _, with_comma, _ = task_list_lines(_subset(math, lm, odd))
    assert kept[0].count(",") == 6 and kept[0].startswith("minerva_math_") and kept[1] == "arc_easy"
    assert with_comma == ["x,y"]
    assert not [w for w in task_list_warnings(_subset(math, lm)) if "unverified" in w or "group" in w]


def test_board_names_are_said_to_be_unverified_lm_eval_task_names_and_a_group_to_run_whole():
    from harness_ext.methods.reduction.lm_eval_group import task_list_warnings

    said = task_list_warnings(_subset(*BOARD))
    [own] = [w for w in said if "unverified" in w]
    # winogrande: no lm-eval equivalent in the name table, so listed by its own name, as bench_a is.
    assert own.startswith('the task list names 2 of the 5 subset datasets as lm-eval tasks by the names they have in '
                          'board\'s results ("bench_a", "winogrande"), unverified')
    [group] = [w for w in said if "lm-eval's own group" in w]
    assert group.startswith("1 line of the task list names lm-eval's own group (\"mmlu\")")
    assert "runs a group whole" in group and "lm-eval's mmlu: its 57 subjects" in group


def test_lm_eval_s_own_results_get_no_unverified_warning():
    from harness_ext.methods.reduction.lm_eval_group import task_list_warnings

    m = _subset({"name": "mmlu", "benchmark": "lm_eval", "task": "mmlu"},
                {"name": "bench_a", "benchmark": "lm_eval", "task": "bench_a"})
    assert task_list_warnings(m) == []


@pytest.mark.slow
def test_reduce_on_a_board_says_what_its_task_list_names(tmp_path, capsys):
    cols = ["mmlu", "arc_easy,piqa", "hellaswag", "gsm8k", "bench_a", "bench_b", "winogrande", "bench_c"]
    err, subset, out = _reduce_board(tmp_path, capsys, cols, 7)
    listed = (out / "harness_ext_reduced_tasks.txt").read_text().splitlines()
    assert "arc_easy,piqa" not in listed and len(listed) == len(subset) - ("arc_easy,piqa" in subset)
    assert ("arc_easy,piqa" not in subset) or 'is named with a comma ("arc_easy,piqa")' in err
    own = [n for n in subset if n.startswith("bench_") or n == "winogrande"]
    assert f"the task list names {len(own)} of the 7 subset datasets as lm-eval tasks by the names they have" in err
    assert ("mmlu" not in subset) or "lm-eval's own group (\"mmlu\")" in err


def test_a_dataset_only_helm_runs_is_left_out_of_the_task_list_not_listed_by_its_helm_group(tmp_path):
    """XSUM from HELM results has no lm-eval task: its ``task`` is helm-summarize's group (``accuracy``), which the
    task list once listed (twice, with NarrativeQA). The lm-eval YAML lists it as a comment; the task list leaves it
    out, and the no-equivalent warning says so."""
    from harness_ext.methods.reduction.harness_names import no_equivalent_warnings
    from harness_ext.methods.reduction.lm_eval_group import task_list_lines, task_list_warnings
    from harness_ext.plugins.manifest_writers import write_task_list

    helm = [{"name": n, "benchmark": "helm_core_scenarios", "task": "accuracy"} for n in ("XSUM", "BoolQ", "NarrativeQA")]
    m = _subset(*helm)
    assert task_list_lines(m)[0] == ["boolq"]
    [path] = write_task_list(m, tmp_path)
    assert path.read_text().splitlines() == ["boolq"]
    assert not [w for w in task_list_warnings(m) if "accuracy" in w]
    [said] = [w for w in no_equivalent_warnings(m["subset"]) if "no lm-eval task" in w]
    assert "(XSUM, NarrativeQA)" in said and "the task list leaves them out" in said
