"""An item table's sidecar declares which lm-eval task each of its tasks is (``items: harness_tasks``): ``reduce
--items`` lists that task in the lm-eval group, the ``--samples`` file and the task list, and ``predict`` reads the
new model's ``samples_<lm-eval task>_<date>.jsonl`` as the table task's. Hostile names are refused at ingest (the
file skipped with the reason, nothing stored) and in a hand-edited manifest."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from harness_ext.cli import main
from harness_ext.errors import HarnessExtError

DATE = "2026-12-04T09-30-00.000000"


def _table(folder, sidecar: str, n_models: int = 14, n_items: int = 30, tasks=("ifeval",)) -> None:
    """``folder/ifeval.csv`` (long: model, task, item, score) of 0/1 answers with a spread of abilities, and its
    sidecar."""
    rng = np.random.default_rng(0)
    folder.mkdir(parents=True)
    lines = ["model,task,item,score"]
    for task in tasks:
        ease = rng.random(n_items)
        for m in range(n_models):
            ability = (m + 1) / (n_models + 1)
            lines += [f"m{m:02d},{task},{i},{int(rng.random() < (ability + ease[i]) / 2)}" for i in range(n_items)]
    (folder / "ifeval.csv").write_text("\n".join(lines) + "\n")
    (folder / "ifeval.csv.meta.yaml").write_text(sidecar)


DECLARED = "items:\n  metric: prompt_level_strict_acc\n  harness_tasks:\n    ifeval: leaderboard_ifeval\n"


def _logs(folder, drawn: list, values: dict) -> None:
    """lm-eval 0.4's samples file of leaderboard_ifeval for the drawn documents, with the fields it writes."""
    folder.mkdir(parents=True)
    lines = [json.dumps({"doc_id": i, "doc": {"key": i}, "target": 0, "arguments": {}, "resps": [],
                         "filtered_resps": [], "filter": "none",
                         "metrics": ["prompt_level_strict_acc", "inst_level_strict_acc"],
                         "doc_hash": hashlib.sha256(str(i).encode()).hexdigest(), "prompt_hash": "", "target_hash": "",
                         "prompt_level_strict_acc": bool(values[i]), "inst_level_strict_acc": [bool(values[i])]})
             for i in drawn]
    (folder / f"samples_leaderboard_ifeval_{DATE}.jsonl").write_text("\n".join(lines) + "\n")
    (folder / f"results_{DATE}.json").write_text(json.dumps({
        "results": {"leaderboard_ifeval": {"alias": "leaderboard_ifeval", "prompt_level_strict_acc,none": 0.5}},
        "configs": {"leaderboard_ifeval": {"task": "leaderboard_ifeval", "num_fewshot": 0}},
        "versions": {"leaderboard_ifeval": 3.0}, "n-shot": {"leaderboard_ifeval": 0},
        "config": {"model": "hf", "model_args": "pretrained=org/new"}, "model_name": "org/new",
        "lm_eval_version": "0.4.13", "date": 1764840600.0}))


def test_a_declared_task_runs_and_is_read_as_its_lm_eval_task(tmp_path, capsys):
    _table(tmp_path / "pop", DECLARED)
    db, red = str(tmp_path / "s.duckdb"), tmp_path / "red"
    assert main(["ingest", "-q", "--db", db, str(tmp_path / "pop")]) == 0
    assert main(["reduce", "--db", db, "--benchmark", "pop", "--items", "10", "--no-plot", "--out", str(red)]) == 0
    err = capsys.readouterr().err
    assert "ifeval runs as lm-eval's leaderboard_ifeval (items: harness_tasks" in err
    assert "gives lm-eval the tables' item ids as its document numbers (doc_id)" in err
    manifest = json.loads((red / "manifest.json").read_text())
    assert manifest["tasks"]["ifeval"]["harness_task"] == "leaderboard_ifeval"
    group = (red / "harness_ext_reduced.yaml").read_text()
    assert "task:\n- leaderboard_ifeval\n" in group and "not necessarily lm-eval" not in group
    drawn = json.loads((red / "harness_ext_reduced_samples.json").read_text())
    assert list(drawn) == ["leaderboard_ifeval"] and len(drawn["leaderboard_ifeval"]) == 10
    assert (red / "harness_ext_reduced_tasks.txt").read_text() == "leaderboard_ifeval\n"

    values = {i: i % 2 for i in range(30)}
    _logs(tmp_path / "results" / "org__new", drawn["leaderboard_ifeval"], values)
    out = tmp_path / "pred.json"
    assert main(["predict", "-m", str(red), str(tmp_path / "results"), "--json", str(out)]) == 0
    (agg,) = json.loads(out.read_text())["aggregate"]
    assert agg["model"] == "org/new" and agg["lower"] <= agg["aggregate"] <= agg["upper"]
    assert "no per-item" not in capsys.readouterr().err
    # The prediction in lm-eval's results layout names the task as lm-eval does, as the group and the logs do.
    (written,) = (tmp_path / "results" / "org__new").glob("harness_ext_prediction_*.json")
    doc = json.loads(written.read_text())
    assert "leaderboard_ifeval" in doc["results"] and "ifeval" not in doc["results"]
    assert doc["group_subtasks"][next(iter(doc["groups"]))] == ["leaderboard_ifeval"]

    # lm-eval's group row (harness_ext_estimate.py) hands predict the logs under lm-eval's task names.
    import pandas as pd

    from harness_ext.methods.reduction.item_predict import predict_logged_items

    long = pd.DataFrame({"model": "this run", "task": "leaderboard_ifeval", "doc_id": drawn["leaderboard_ifeval"],
                         "metric": "prompt_level_strict_acc", "helm": False,
                         "value": [float(values[i]) for i in drawn["leaderboard_ifeval"]]})
    pred = predict_logged_items(manifest, long, {}, [])
    assert pred.aggregate["aggregate"].iloc[0] == pytest.approx(agg["aggregate"])


@pytest.mark.parametrize("value, why", [
    ("{ifeval: ../../etc/passwd}", "is not a plain lm-eval task name"),
    ("{ifeval: a/b}", "is not a plain lm-eval task name"),
    ("{ifeval: '!function x.y'}", "is not a plain lm-eval task name"),
    ("{ifeval: \"a\\nb\"}", "is not a plain lm-eval task name"),
    ("{ifeval: 'leaderboard_*'}", "is not a plain lm-eval task name"),
    ("{ifeval: .hidden}", "is not a plain lm-eval task name"),
    ("{ifeval: {task: x}}", "is not a task name"),
    ("{ifeval: 5}", "is not a task name"),
    ("{ifeval: ''}", "is not a task name"),
    ("[leaderboard_ifeval]", "must map the table's task names to lm-eval task names"),
    ("{ifevl: leaderboard_ifeval}", "names ifevl, not a task of the table (its tasks: ifeval)"),
    ("{ifeval: leaderboard_musr}", "leaderboard_musr is a group (or tag) of lm-eval tasks, not one task"),
    ("leaderboard_instruction_following", "is a group (or tag) of lm-eval tasks, not one task"),
])
def test_a_hostile_or_wrong_declaration_skips_the_file(tmp_path, capsys, value, why):
    _table(tmp_path / "pop", f"items:\n  metric: prompt_level_strict_acc\n  harness_tasks: {value}\n")
    db = str(tmp_path / "s.duckdb")
    main(["ingest", "--db", db, str(tmp_path / "pop")])
    err = capsys.readouterr()
    text = err.out + err.err
    assert "ifeval.csv" in text and "harness_tasks" in text and why in text, text
    assert "0 files ingested" in text or "1 skipped" in text


def test_one_name_for_a_table_of_several_tasks_and_two_tasks_as_one_are_refused(tmp_path, capsys):
    _table(tmp_path / "a", "items:\n  harness_tasks: leaderboard_ifeval\n", tasks=("x", "y"))
    _table(tmp_path / "b", "items:\n  harness_tasks: {x: t1, y: t1}\n", tasks=("x", "y"))
    for folder, why in (("a", "names one lm-eval task (leaderboard_ifeval) for a table of 2 tasks"),
                        ("b", "several of the table's tasks are lm-eval's t1")):
        main(["ingest", "--db", str(tmp_path / f"{folder}.duckdb"), str(tmp_path / folder)])
        err = capsys.readouterr()
        assert why in err.out + err.err


def test_a_hand_edited_harness_task_is_refused(tmp_path, capsys):
    _table(tmp_path / "pop", DECLARED)
    db, red = str(tmp_path / "s.duckdb"), tmp_path / "red"
    assert main(["ingest", "-q", "--db", db, str(tmp_path / "pop")]) == 0
    assert main(["reduce", "--db", db, "--benchmark", "pop", "--items", "10", "--no-plot", "--out", str(red)]) == 0
    manifest = json.loads((red / "manifest.json").read_text())
    manifest["tasks"]["ifeval"]["harness_task"] = "../../outside"
    from harness_ext.methods.reduction.item_manifest import validate_item_manifest
    from harness_ext.methods.reduction.lm_eval_group import write_items_lm_eval_yaml

    with pytest.raises(HarnessExtError, match='harness_task: "../../outside" is not a plain lm-eval task name'):
        validate_item_manifest(manifest)
    out = tmp_path / "again"
    out.mkdir()
    with pytest.raises(HarnessExtError, match="is not a plain lm-eval task name"):
        write_items_lm_eval_yaml(manifest, out)
    assert not list(out.iterdir())  # nothing half-written


def test_a_metric_lm_eval_does_not_log_is_said(tmp_path, capsys):
    """The Open LLM Leaderboard v2 tables name no metric, so their 0/1 scores are stored as acc; declared to be
    lm-eval's leaderboard_ifeval, which logs prompt_level_strict_acc and others, reduce says predict would find no
    log of acc and what to do."""
    pytest.importorskip("lm_eval")
    _table(tmp_path / "pop", "items:\n  harness_tasks: {ifeval: leaderboard_ifeval}\n")
    db, red = str(tmp_path / "s.duckdb"), tmp_path / "red"
    assert main(["ingest", "-q", "--db", db, str(tmp_path / "pop")]) == 0
    assert main(["reduce", "--db", db, "--benchmark", "pop", "--items", "10", "--no-plot", "--out", str(red)]) == 0
    assert ("ifeval: scored as acc in its table, but lm-eval's leaderboard_ifeval logs inst_level_loose_acc, "
            "inst_level_strict_acc, prompt_level_loose_acc, prompt_level_strict_acc: predict would find no log of acc; "
            "name the table's metric (metric: in its sidecar) and ingest it again") in capsys.readouterr().err


def test_a_group_or_tag_of_a_task_yaml_is_told_from_its_tasks(tmp_path):
    """At reduce, a name the installed lm-eval indexes is a task only where a YAML says ``task: NAME``: a group
    (``group: NAME``) or a tag (a ``tag:`` list) of a later lm-eval than the shipped list is refused there."""
    from harness_ext.methods.reduction.item_harness_tasks import harness_task_metrics
    from harness_ext.store.lm_eval_tasks import defines_group as _defines_group

    (tmp_path / "_t_yaml").write_text("metric_list:\n  - metric: acc_norm\n")
    (tmp_path / "g.yaml").write_text("group: new_group\ntask:\n  - new_task\n")
    (tmp_path / "t.yaml").write_text("tag:\n  - new_tag\ntask: new_task\ninclude: _t_yaml\n")
    assert _defines_group(tmp_path / "g.yaml", "new_group") and _defines_group(tmp_path / "t.yaml", "new_tag")
    assert not _defines_group(tmp_path / "t.yaml", "new_task")
    assert harness_task_metrics(tmp_path / "t.yaml") == ["acc_norm"]  # its metric_list from the YAML it includes


#: The Open LLM Leaderboard v2 tables' lm-eval subtasks, in the tables' item order (docs/guide/items.md).
OLLB_PARTS = {
    "ifeval": ("prompt_level_strict_acc", [("ifeval", "leaderboard_ifeval", 541)]),
    "musr": ("acc_norm", [("musr_murder_mysteries", "leaderboard_musr_murder_mysteries", 250),
                          ("musr_object_placements", "leaderboard_musr_object_placements", 256),
                          ("musr_team_allocation", "leaderboard_musr_team_allocation", 250)]),
    "openllm_math": ("exact_match", [("math_geometry_hard", "leaderboard_math_geometry_hard", 132),
                                     ("math_intermediate_algebra_hard", "leaderboard_math_intermediate_algebra_hard", 280),
                                     ("math_num_theory_hard", "leaderboard_math_num_theory_hard", 154),
                                     ("math_prealgebra_hard", "leaderboard_math_prealgebra_hard", 193),
                                     ("math_precalculus_hard", "leaderboard_math_precalculus_hard", 135)]),
}


@pytest.mark.slow
def test_the_open_llm_v2_loop_with_declared_tasks(tmp_path, capsys):
    """As docs/guide/items.md runs it: the tables split into lm-eval's subtasks and declared, the strongest model held
    out, reduce --items 50, the group checked by lm-eval's own task index (when installed), the held-out model's
    answers to the drawn items written as lm-eval 0.4's logs, predict: its interval holds its true score."""
    import pandas as pd
    import yaml

    from conftest import SHARED_DATA, require

    src = require(SHARED_DATA / "items" / "open_llm_v2")
    frames = {f: pd.read_parquet(src / f"{f}.parquet") for f in OLLB_PARTS}
    means = pd.DataFrame({f: d.groupby("model")["score"].mean() for f, d in frames.items()}).dropna()
    new = means.mean(axis=1).idxmax()
    pop, mine, runs_as = tmp_path / "open_llm_v2", [], {}
    pop.mkdir()
    for f, (metric, parts) in OLLB_PARTS.items():
        d, out, start = frames[f], [], 0
        for task, harness, n in parts:
            out.append(d[d["item"].between(start, start + n - 1)].assign(item=lambda x: x["item"] - start, task=task))
            start += n
            runs_as[harness] = task
        long = pd.concat(out)[["model", "task", "item", "score"]]
        mine.append(long[long["model"] == new])
        long[long["model"] != new].to_parquet(pop / f"{f}.parquet", index=False)
        side = {"items": {"metric": metric, "harness_tasks": {t: h for t, h, _ in parts}}}
        (pop / f"{f}.parquet.meta.yaml").write_text(yaml.safe_dump(side))
    answers = pd.concat(mine).set_index(["task", "item"])["score"]
    db, red = str(tmp_path / "s.duckdb"), tmp_path / "red"
    assert main(["ingest", "-q", "--db", db, str(pop)]) == 0
    assert main(["reduce", "--db", db, "--benchmark", "open_llm_v2", "--items", "50", "--no-plot",
                 "--out", str(red)]) == 0
    drawn = json.loads((red / "harness_ext_reduced_samples.json").read_text())
    assert sorted(drawn) == sorted(runs_as)
    try:
        from lm_eval.tasks import TaskManager
    except ImportError:
        pass
    else:  # lm-eval's own index: the group and every task it lists resolve, without a model or the datasets
        tm = TaskManager(include_path=str(red))
        assert "harness_ext_reduced" in tm.all_groups and set(drawn) <= set(tm.all_tasks)

    folder = tmp_path / "results" / new.replace("/", "__")
    folder.mkdir(parents=True)
    metric_of = {t: m for m, parts in OLLB_PARTS.values() for t, _, _ in parts}
    for harness, ids in drawn.items():
        task, metric = runs_as[harness], metric_of[runs_as[harness]]
        lines = [json.dumps({"doc_id": i, "doc": {}, "target": "", "arguments": {}, "resps": [], "filtered_resps": [],
                             "filter": "none", "metrics": [metric], "doc_hash": "", "prompt_hash": "",
                             "target_hash": "", metric: float(answers[(task, i)])}) for i in ids]
        (folder / f"samples_{harness}_{DATE}.jsonl").write_text("\n".join(lines) + "\n")
    (folder / f"results_{DATE}.json").write_text(json.dumps({
        "results": {h: {"alias": h} for h in drawn}, "configs": {h: {"task": h} for h in drawn},
        "versions": {h: 1.0 for h in drawn}, "config": {"model": "hf", "model_args": f"pretrained={new}"},
        "model_name": new, "lm_eval_version": "0.4.13", "date": 1764840600.0}))
    capsys.readouterr()
    out = tmp_path / "pred.json"
    assert main(["predict", "-m", str(red), str(tmp_path / "results"), "--json", str(out)]) == 0
    assert "no per-item" not in capsys.readouterr().err
    # The prediction in lm-eval's results layout names the task as lm-eval does, as the group and the logs do.
    (written,) = folder.glob("harness_ext_prediction_*.json")
    doc = json.loads(written.read_text())
    assert "leaderboard_ifeval" in doc["results"] and "ifeval" not in doc["results"]
    assert sorted(doc["group_subtasks"][next(iter(doc["groups"]))]) == sorted(drawn)
    (agg,) = json.loads(out.read_text())["aggregate"]
    truth = answers.groupby(level="task").mean().mean()  # the manifest weighs the nine tasks alike
    assert agg["model"] == new and agg["lower"] <= truth <= agg["upper"] and abs(agg["aggregate"] - truth) < 0.02


def test_a_table_task_named_as_lm_evals_runs_once_declared(tmp_path, capsys):
    """A table whose task is named as lm-eval's (leaderboard_ifeval) is left out of the group as another evaluation,
    and the warning says how to declare it; declared as itself, the group lists it."""
    pytest.importorskip("lm_eval")
    _table(tmp_path / "a", "items:\n  metric: prompt_level_strict_acc\n", tasks=("leaderboard_ifeval",))
    _table(tmp_path / "b", "items:\n  metric: prompt_level_strict_acc\n  harness_tasks: leaderboard_ifeval\n",
           tasks=("leaderboard_ifeval",))
    for name in ("a", "b"):
        db, red = str(tmp_path / f"{name}.duckdb"), tmp_path / f"red_{name}"
        assert main(["ingest", "-q", "--db", db, str(tmp_path / name)]) == 0
        assert main(["reduce", "--db", db, "--benchmark", name, "--items", "10", "--no-plot", "--out", str(red)]) == 0
        err, group = capsys.readouterr().err, (red / "harness_ext_reduced.yaml").read_text()
        if name == "a":
            assert "declare it in the table's sidecar (items: harness_tasks, the task mapped to itself)" in err
            assert "task:\n" not in group
        else:
            assert "task:\n- leaderboard_ifeval\n" in group and "another evaluation" not in err


def test_the_task_list_holds_the_groups_tasks_not_full_lm_eval_tasks(tmp_path, capsys):
    """HELM Lite's item tables name their tasks as HELM does: ``commonsense`` is lm-eval's openbookqa as a dataset,
    but its items are numbered in HELM's order, and ``mmlu`` is lm-eval's own 57-subject group. The item-level task
    list is what the group runs (the names ``--samples`` keys): listing openbookqa, or mmlu, would make
    ``lm_eval --tasks`` run all of that task, ``--samples`` matching none of its documents."""
    _table(tmp_path / "helm_lite", "items:\n  metric: acc\n", tasks=("commonsense", "mmlu"))
    db, red = str(tmp_path / "s.duckdb"), tmp_path / "red"
    assert main(["ingest", "-q", "--db", db, str(tmp_path / "helm_lite")]) == 0
    assert main(["reduce", "--db", db, "--benchmark", "helm_lite", "--items", "10", "--no-plot", "--out", str(red)]) == 0
    capsys.readouterr()
    group = (red / "harness_ext_reduced.yaml").read_text()
    assert "task:\n- commonsense\n" in group and "- mmlu" not in group
    assert (red / "harness_ext_reduced_tasks.txt").read_text() == "commonsense\n"
    assert "commonsense" in json.loads((red / "harness_ext_reduced_samples.json").read_text())
