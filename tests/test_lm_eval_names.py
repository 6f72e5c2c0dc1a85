"""Which lm-eval tasks and HELM run entries a reduced folder names, for results that are not lm-eval's own names.

A group of the user's own (stored under the group's name), lm-eval's groups and tags as built-in names, the Open
LLM Leaderboard v2's own ``leaderboard_*`` tasks, and item tables from HELM Lite whose task names lm-eval has for
other tasks (``mmlu``).
"""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pytest

from harness_ext.cli import main
from harness_ext.methods.reduction.harness_names import (LM_EVAL_HARNESS, helm_description_list, lm_eval_metric,
                                                       lm_eval_task_list, unknown_metric_warnings)
from harness_ext.store.lm_eval_tasks import builtin_task_index, foreign_task_warnings, foreign_tasks, resolve_tasks

from conftest import SHARED_DATA, load_group_yaml

TASKS = [f"toy_c{i}" for i in range(1, 7)]


def _own_group_results(folder, group: str, n_models: int = 12) -> None:
    """lm-eval v0.4 results of ``n_models`` models on TASKS, with clean configs, under ``group`` ("-": no group)."""
    folder.mkdir()
    rng = random.Random(2)
    for m in range(n_models):
        res, cfgs = {}, {}
        for i, t in enumerate(TASKS):
            v = min(0.99, max(0.01, 0.3 + 0.5 * m / n_models + rng.gauss(0, 0.05) + 0.02 * i))
            res[t] = {"acc,none": v, "acc_stderr,none": 0.01, "alias": t}
            cfgs[t] = {"task": t, "dataset_path": "json", "dataset_kwargs": {"data_files": {"test": f"data/{t}.jsonl"}},
                       "test_split": "test", "doc_to_text": "Q: {{q}}\nA:", "doc_to_target": "{{answer}}",
                       "output_type": "multiple_choice", "doc_to_choice": ["A", "B", "C", "D"], "num_fewshot": 0,
                       "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
                       "metadata": {"version": 1.0}}
        doc = {"results": res, "groups": {}, "configs": cfgs, "versions": {t: 1.0 for t in TASKS},
               "group_subtasks": {group: TASKS} if group != "-" else {t: [] for t in TASKS},
               "n-shot": {t: 0 for t in TASKS}, "higher_is_better": {t: {"acc": True} for t in TASKS},
               "n-samples": {t: {"original": 100, "effective": 100} for t in TASKS},
               "config": {"model": "hf", "model_args": f"pretrained=org/model-{m}"}, "model_name": f"org/model-{m}"}
        (folder / f"results_{m:02d}.json").write_text(json.dumps(doc))


@pytest.mark.parametrize("group", ["toybench2", "-"])
def test_a_users_own_lm_eval_group_gets_a_runnable_folder(tmp_path, capsys, group):
    """Results whose group_subtasks name a group of the user's give the same folder as without the group: the
    group YAML lists the lm-eval tasks and their YAMLs sit beside it (before, no task was known for any dataset)."""
    _own_group_results(tmp_path / "runs", group)
    db, out = tmp_path / "store.duckdb", tmp_path / "red"
    assert main(["ingest", "--db", str(db), "-q", str(tmp_path / "runs")]) == 0
    assert main(["reduce", "--db", str(db), "--budget", "2", "--n-random", "20", "--no-plot", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "no lm-eval task" not in err
    m = json.loads((out / "manifest.json").read_text())
    listed = [t["task"] for t in load_group_yaml(out / "harness_ext_reduced.yaml")["task"]]
    assert listed == [e["task"] for e in m["subset"]] and len(listed) == 2
    assert all((out / f"{t}.yaml").exists() for t in listed)
    assert {e["origin"] for e in m["lm_eval_tasks"].values()} == {"results"}
    # The benchmark name says lm-eval only when it is lm_eval: a group's datasets say so themselves.
    assert all((e.get("harness") == LM_EVAL_HARNESS) == (group != "-") for e in m["subset"] + m["datasets"])


def test_builtin_index_knows_groups_and_tags(tmp_path):
    """lm-eval resolves group and tag names as it does task names; a block list under ``task:`` names no task."""
    root = tmp_path / "tasks"
    (root / "a").mkdir(parents=True)
    (root / "a" / "_group.yaml").write_text("group: my_group\ngroup_alias: My group\ntask:\n  - my_task\n")
    (root / "a" / "my_task.yaml").write_text("task: my_task\ntag:\n  - tag_a\n  - 'tag_b'\ndataset_path: x\n")
    (root / "a" / "other.yaml").write_text("tag: tag_c\ntask: other_task\n")
    index = builtin_task_index(root)
    assert set(index) == {"my_group", "my_task", "tag_a", "tag_b", "tag_c", "other_task"}
    assert index["my_group"].name == "_group.yaml"


def test_lm_evals_own_groups_are_built_in():
    """lm-eval ships 'group: mmlu_pro': the folder needs no definition of it (it said NOT SELF-CONTAINED)."""
    pytest.importorskip("lm_eval")
    found = resolve_tasks(["mmlu_pro", "leaderboard_bbh", "mmlu_anatomy"])
    assert {t: e["origin"] for t, e in found.items()} == dict.fromkeys(found, "lm_eval")


def _eee(name: str) -> dict:
    return {"name": name, "benchmark": "hf_open_llm_v2", "metric": "Accuracy", "task": None, "num_fewshot": None}


def test_open_llm_leaderboard_v2_runs_its_own_lm_eval_tasks():
    """The leaderboard ran lm-eval's leaderboard_* tasks (lm-eval's tasks/leaderboard/leaderboard.yaml), scored by
    their YAMLs' metrics; not mmlu_pro or ifeval, which prompt and score otherwise. IFEval is the mean of two."""
    expected = {"MMLU-PRO": ("leaderboard_mmlu_pro", "acc"), "BBH": ("leaderboard_bbh", "acc_norm"),
                "GPQA": ("leaderboard_gpqa", "acc_norm"), "MATH Level 5": ("leaderboard_math_hard", "exact_match"),
                "MUSR": ("leaderboard_musr", "acc_norm"),
                "IFEval": ("leaderboard_ifeval", ("prompt_level_strict_acc", "inst_level_strict_acc"))}
    for name, (task, metric) in expected.items():
        e = _eee(name)
        assert (lm_eval_task_list(e), lm_eval_metric(e), helm_description_list(e)) == ([task], metric, [])
    assert lm_eval_task_list(_eee("Some New Column")) == []  # its titles only: the general table's are other tasks
    # HELM Capabilities' MMLU-Pro keeps its mapping.
    assert lm_eval_task_list({"name": "MMLU-Pro", "benchmark": "helm_capabilities"}) == ["mmlu_pro"]
    # Its IFEval metric is known now: no warning that none is (HELM Lite's LegalBench still has none).
    assert unknown_metric_warnings([_eee("IFEval"), _eee("MMLU-PRO")]) == []
    [w] = unknown_metric_warnings([_eee("IFEval"), {"name": "LegalBench", "benchmark": "helm_lite", "metric": "EM"}])
    assert "LegalBench as legalbench_abercrombie" in w and "IFEval" not in w


def test_open_llm_leaderboard_v2_folder(tmp_path):
    """The group names the leaderboard's tasks and aggregates no EEE metric name; a HELM conf with no run entry
    says so and lists no entries (HELM's reader requires the field: a conf of comments alone stopped helm-run with
    a traceback)."""
    from harness_ext.methods.reduction.lm_eval_group import write_lm_eval_yaml
    from harness_ext.plugins.manifest_writers import write_helm_conf

    subset = [{"step": i + 1, **_eee(n), "coverage": 0.9} for i, n in enumerate(["MMLU-PRO", "BBH", "IFEval"])]
    m = {"tool": {"version": "x"}, "group_name": "g", "subset": subset,
         "datasets": [{**e, "in_subset": True} for e in subset]}
    [path] = write_lm_eval_yaml(m, tmp_path)
    text = path.read_text()
    assert load_group_yaml(path)["task"] == ["leaderboard_mmlu_pro", "leaderboard_bbh", "leaderboard_ifeval"]
    assert "Accuracy" not in text and "aggregate_metric_list" not in text
    [conf] = write_helm_conf(m, tmp_path)
    conf_text = conf.read_text()
    assert "nothing for helm-run to run" in conf_text and "Run: helm-run" not in conf_text
    assert [line for line in conf_text.splitlines() if not line.startswith("#")] == ["entries: []"]
    pyhocon = pytest.importorskip("pyhocon")
    assert list(pyhocon.ConfigFactory.parse_file(str(conf))["entries"]) == []
    run_entry = pytest.importorskip("helm.benchmark.presentation.run_entry")
    assert run_entry.read_run_entries([str(conf)]).entries == []


def test_helm_lite_commonsense_is_openbookqa():
    """HELM Lite's one commonsense scenario is OpenbookQA (items/PROVENANCE.md); HELM Classic's name stays unmapped
    (it ran HellaSwag and OpenbookQA under it)."""
    lite = {"name": "commonsense", "benchmark": "helm_lite", "metric": "acc"}
    assert helm_description_list(lite) == ["commonsense:dataset=openbookqa,method=multiple_choice_joint,model=text_code"]
    assert helm_description_list({"name": "commonsense", "benchmark": "helm_classic"}) == []


def test_item_tasks_named_like_lm_evals_own_are_left_out(monkeypatch, tmp_path):
    """A foreign item task whose name lm-eval has for another task is a clash; others are not lm-eval tasks."""
    root = tmp_path / "tasks"
    root.mkdir()
    (root / "_mmlu.yaml").write_text("group: mmlu\ntask:\n  - mmlu_stem\n")
    monkeypatch.setattr("harness_ext.store.lm_eval_tasks.lm_eval_tasks_dir", lambda: root)
    found = foreign_tasks({"mmlu": "helm_lite", "gsm": "helm_lite"})
    assert found["mmlu"]["builtin"] == "_mmlu.yaml" and "builtin" not in found["gsm"]
    clash, other = foreign_task_warnings(found)
    assert clash.startswith("1 item task has the name of another lm-eval task or group: mmlu (_mmlu.yaml)")
    assert other.startswith("1 item task is not an lm-eval task: gsm")


def _item_tables(folder, tasks, n_models: int = 14, n_items: int = 30) -> None:
    folder.mkdir()
    rng = np.random.default_rng(0)
    ability = np.linspace(-1.5, 1.5, n_models)
    for k, task in enumerate(tasks):
        p = 1 / (1 + np.exp(-(ability[:, None] - rng.normal(0, 1, n_items)[None, :])))
        score = (rng.random((n_models, n_items)) < p).astype("float32")
        pd.DataFrame({"model": np.repeat([f"org/m{i}" for i in range(n_models)], n_items),
                      "item": np.tile(np.arange(n_items, dtype="int32"), n_models),
                      "score": score.ravel()}).to_parquet(folder / f"{task}.parquet", index=False)


@pytest.mark.parametrize("tasks", [("commonsense", "mmlu"), ("mmlu",)])
def test_helm_lite_item_tables_never_point_at_lm_evals_mmlu(tmp_path, capsys, tasks):
    """HELM Lite's item table 'mmlu' (its 5 subjects) is not lm-eval's 57-subject 'mmlu': reduce --items warns, in
    the summary and the manifest, and the group leaves it out (with none left, writes no group)."""
    pytest.importorskip("lm_eval")
    _item_tables(tmp_path / "helm_lite", tasks)
    db, out = tmp_path / "store.duckdb", tmp_path / "red"
    assert main(["ingest", "--db", str(db), "-q", str(tmp_path / "helm_lite")]) == 0
    assert main(["reduce", "--db", str(db), "--items", "6", "--no-plot", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    m = json.loads((out / "manifest.json").read_text())
    assert any(w.startswith("1 item task has the name of another lm-eval task or group: mmlu")
               for w in m["warnings"])
    assert "has the name of another lm-eval task or group: mmlu" in err
    text = (out / "harness_ext_reduced.yaml").read_text()
    assert "Left out of the group" in text
    conf = (out / "run_entries_harness_ext_reduced.conf").read_text()
    # mmlu runs as 5 subject entries, whose runs could not be matched to the table's items: left out, counted;
    # commonsense's OpenbookQA entry runs the drawn count.
    assert conf.count("description: ") == len(tasks) - 1
    assert 'Not in this conf: 1 task HELM runs as several entries ("mmlu": 5)' in conf
    if tasks == ("mmlu",):
        assert all(line.startswith("#") for line in text.splitlines()) and "there is no group to run" in text
        assert "Run: lm_eval" not in text  # no run line for a group that does not exist
        return
    assert load_group_yaml(out / "harness_ext_reduced.yaml")["task"] == ["commonsense"]
    assert "1 item task is not an lm-eval task: commonsense" in err
    assert "No HELM run entry" not in conf


@pytest.mark.skipif(not (SHARED_DATA / "every_eval_ever" / "data" / "hfopenllm_v2").is_dir(),
                    reason="needs the shared Every Eval Ever data")
@pytest.mark.slow
def test_open_llm_leaderboard_v2_from_every_eval_ever(tmp_path, capsys):
    """The testers' case on the real files (a sample of models): leaderboard tasks, no 'Accuracy', no empty conf."""
    files = sorted((SHARED_DATA / "every_eval_ever" / "data" / "hfopenllm_v2").rglob("*.json"))[:60]
    db, out = tmp_path / "store.duckdb", tmp_path / "red"
    assert main(["ingest", "--db", str(db), "-q", *map(str, files)]) == 0
    assert main(["reduce", "--db", str(db), "--benchmark", "hf_open_llm_v2", "--budget", "2", "--n-random", "20",
                 "--no-plot", "--out", str(out)]) == 0
    text = (out / "harness_ext_reduced.yaml").read_text()
    assert all(t.startswith("leaderboard_") for t in load_group_yaml(out / "harness_ext_reduced.yaml")["task"])
    assert "metric: Accuracy" not in text
    assert "entries: []\n" in (out / "run_entries_harness_ext_reduced.conf").read_text()


def test_foreign_task_warnings_count_the_tasks_they_do_not_name():
    """They ended a cut list with ``...``: how many more were left unsaid."""
    found = {f"t{i}": ({"builtin": f"x{i}.yaml"} if i < 7 else {}) for i in range(15)}
    clash, other = foreign_task_warnings(found)
    assert clash.startswith("7 item tasks have the name of another lm-eval task or group: t0 (x0.yaml), "
                            "t1 (x1.yaml), t2 (x2.yaml), t3 (x3.yaml), t4 (x4.yaml) and 2 more; lm-eval would run")
    assert other.startswith("8 item tasks are not lm-eval tasks: t7, t8, t9, t10, t11, t12 and 2 more; the lm-eval")
    assert " ..." not in clash + other
