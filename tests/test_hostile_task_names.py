"""A task name from someone else's results file that lm-eval would read as a path when it saves the samples."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness_ext.cli import main
from test_reduced_folder import TASKS, _write_population


def _rename(pop, old: str, new: str) -> None:
    for f in pop.rglob("results_*.json"):
        f.write_text(f.read_text().replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1]))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["../../evil", "a/b", "C:\\evil\\t"])
def test_a_subset_task_named_as_a_path_is_left_out_of_what_reduce_writes(tmp_path, capsys, name):
    """It stopped reduce; now the group and the task list leave it out, counted and named in reduce's warning and the
    group's header, and nothing written names it for lm-eval to run (so nothing reads or writes outside the folder)."""
    pop = _write_population(tmp_path / "pop")
    for t in TASKS[1:]:  # every task but one, so the subset holds one or two
        _rename(pop, t, f"{name}{t[-1]}")
    db, out = tmp_path / "s.duckdb", tmp_path / "reduced"
    assert main(["ingest", "--db", str(db), str(pop)]) == 0
    assert main(["reduce", "--db", str(db), "--budget", "2", "--n-random", "20", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    hostile = [e["name"] for e in manifest["subset"] if e["name"] != TASKS[0]]
    assert hostile and all(h.startswith(name) for h in hostile)
    n = len(hostile)
    said = (f"{n} of the 2 subset datasets {'is an lm-eval task' if n == 1 else 'are lm-eval tasks'} named with a '/' "
            "or '\\'")
    assert said in err and any(w.startswith(said) for w in manifest["warnings"])
    assert "--log_samples would write their samples to a path through folders that do not exist" in err
    yaml_text = (out / "harness_ext_reduced.yaml").read_text()
    body = [line for line in yaml_text.splitlines() if not line.startswith("#")]
    assert not any(h in line or json.dumps(h)[1:-1] in line for h in hostile for line in body)
    assert f"Left out of the group: {n} subset dataset" in yaml_text
    tasks = (out / "harness_ext_reduced_tasks.txt").read_text().split()
    assert not set(tasks) & set(hostile) and tasks == [t for t in (TASKS[0],) if t in
                                                        [e["name"] for e in manifest["subset"]]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pop", "reduced", "s.duckdb"]


def test_names_that_are_no_path_are_written():
    """Colons, spaces, YAML's own signs: data in the YAML, and a safe file name."""
    from harness_ext.methods.reduction.lm_eval_group import check_task_paths

    check_task_paths(["x: include y", "!function evil.x", "*alias &a", "mmlu_anatomy", "a..b"], {})


@pytest.mark.parametrize("name", ["a/b", "../x"])
def test_lm_eval_loses_the_samples_of_a_task_named_as_a_path(tmp_path, name, caplog):
    """Not vacuous: lm-eval's --log_samples joins the task name into the samples file's path, and then logs that it
    could not save them."""
    tracker = pytest.importorskip("lm_eval.loggers.evaluation_tracker")
    t = tracker.EvaluationTracker(output_path=str(tmp_path / "results"))
    t.general_config_tracker.model_name_sanitized, t.date_id = "m", "2025-01-01T00-00-00"  # as its run sets them
    t.save_results_samples(name, [{"doc_id": 0, "resps": [], "filtered_resps": [], "arguments": [], "target": 1}])
    assert [p for p in (tmp_path / "results").rglob("*") if p.is_file()] == []
    t.save_results_samples("ab", [{"doc_id": 0, "resps": [], "filtered_resps": [], "arguments": [], "target": 1}])
    assert [p.name.split("_")[1] for p in (tmp_path / "results").rglob("*.jsonl")] == ["ab"]


@pytest.mark.parametrize("value, kept", [(0, True), (25, True), (None, True), (1000, True), (1001, False),
                                         (10 ** 30, False), (-1, False), (True, False), (2.5, False), ("5", False)])
def test_shots_and_repeats_a_run_could_not_finish_are_not_written(value, kept):
    """lm-eval runs each request ``repeats`` times and puts ``num_fewshot`` examples in each prompt."""
    from harness_ext.store.task_yaml_safety import safe_task_config

    out, dropped = safe_task_config({"num_fewshot": value, "repeats": 64 if value is None else value})
    assert ("num_fewshot" in out) is kept and (value is None or ("repeats" in out) is (kept and value != 0))
    assert kept or "outside" in dropped[0]["reason"] or "not a whole number" in dropped[0]["reason"]


@pytest.mark.slow
def test_a_tag_named_as_another_task_of_the_group_is_not_written(tmp_path, capsys):
    """A results file's task tagged with the names of the other tasks and the group: lm-eval indexed the tag in the
    task's place (skipping its file), and the group ran the tagged task twice."""
    yaml = pytest.importorskip("yaml")
    pop = _write_population(tmp_path / "pop")
    for f in pop.rglob("results_*.json"):
        doc = json.loads(f.read_text())
        for cfg in doc["configs"].values():
            cfg["tag"] = [*TASKS, "harness_ext_reduced", "my_own_tag"]
        f.write_text(json.dumps(doc))
    db, out = tmp_path / "s.duckdb", tmp_path / "reduced"
    assert main(["ingest", "--db", str(db), str(pop)]) == 0
    assert main(["reduce", "--db", str(db), "--budget", "2", "--n-random", "20", "--out", str(out)]) == 0
    assert "tag x2" in capsys.readouterr().out + "".join(json.loads((out / "manifest.json").read_text())["warnings"])
    written = sorted(out.glob("my_task_*.yaml"))
    assert len(written) == 2
    others = [t for t in TASKS if t not in {p.stem for p in written}]  # not in this folder: kept
    for p in written:
        assert yaml.safe_load(p.read_text())["tag"] == [*others, "my_own_tag"] and "# Not written" in p.read_text()
    tasks = pytest.importorskip("lm_eval.tasks")
    tm = tasks.TaskManager(include_path=str(out), include_defaults=False)
    assert sorted(tm.all_subtasks) == sorted(p.stem for p in written)
    assert sorted(tm.all_tags) == sorted([*others, "my_own_tag"])


def test_lm_eval_puts_a_tag_in_a_task_s_place(tmp_path):
    """Not vacuous: with the tag written, lm-eval indexes 'b' as a tag of 'a' and skips b.yaml."""
    tasks = pytest.importorskip("lm_eval.tasks")
    (tmp_path / "a.yaml").write_text("task: a\ntag: [b]\ndataset_path: x\noutput_type: generate_until\n")
    (tmp_path / "b.yaml").write_text("task: b\ndataset_path: y\noutput_type: generate_until\n")
    tm = tasks.TaskManager(include_path=str(tmp_path), include_defaults=False)
    assert tm.all_subtasks == ["a"] and tm.all_tags == ["b"]


def test_predict_says_why_a_task_left_out_of_the_group_has_no_result():
    """A subset dataset whose lm-eval task is named as a path was reported only as missing from the new model's
    results: reduce left it out of the group, so running the group could never give it. The warning says so."""
    from harness_ext.methods.reduction.predict_steps import subset_warnings

    Z = np.array([[0.5, np.nan, np.nan], [0.4, 0.3, np.nan]])
    _, warnings = subset_warnings(["org/new", "org/other"], Z, ["t0", "a/b1", "t2"], {"a/b1": ["a/b1"]})
    assert len(warnings) == 2
    assert warnings[0].startswith("org/new: no result for a/b1, t2; predicted from the other 1 subset datasets")
    assert ('. "a/b1" was left out of the lm-eval group at reduce because its name has a \'/\' or \'\\\' '
            "(lm-eval's --log_samples would lose its samples): run it by hand (lm_eval --tasks NAME) and pass its "
            "results file to predict too, or it stays predicted") in warnings[0]
    assert "left out of the lm-eval group" not in warnings[1]  # t2 is missing, but not for its name
    with pytest.raises(Exception, match="no result on any subset dataset .*; \"a/b1\" was left out"):
        subset_warnings(["org/new"], np.array([[np.nan, np.nan, np.nan]]), ["t0", "a/b1", "t2"], {"a/b1": ["a/b1"]})


@pytest.mark.slow
def test_predict_on_the_group_s_run_names_the_task_reduce_left_out(tmp_path, capsys):
    """End to end: reduce a population with tasks named as a path, run 'the group' (a new model's results without
    them), and predict: the warning names each left-out task and why it has no result."""
    pop = _write_population(tmp_path / "pop")
    for t in TASKS[1:]:
        _rename(pop, t, f"a/b{t[-1]}")
    db, out = tmp_path / "s.duckdb", tmp_path / "reduced"
    assert main(["ingest", "--db", str(db), str(pop)]) == 0
    assert main(["reduce", "--db", str(db), "--budget", "2", "--n-random", "20", "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    hostile = [e["name"] for e in manifest["subset"] if "/" in e["name"]]
    assert hostile
    doc = json.loads(next(pop.rglob("results_*.json")).read_text())
    doc["model_name"], doc["config"]["model_args"] = "org/new", "pretrained=org/new"
    doc["results"] = {t: r for t, r in doc["results"].items() if "/" not in t}  # what running the group gives
    new = tmp_path / "new" / "results_2025-02-01T00-00-00.000000.json"
    new.parent.mkdir()
    new.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["predict", "--manifest", str(out), str(new)]) == 0
    err = capsys.readouterr().err
    for h in hostile:
        assert f'"{h}"' in err
    assert "left out of the lm-eval group at reduce because" in err and "stay" in err, err
