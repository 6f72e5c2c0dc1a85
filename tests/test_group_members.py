"""lm-eval groups keep their direct members at ingest, and ``reduce --items`` takes a group's tasks by its name.

lm-eval 0.4's results files list each group's members (``group_subtasks``); the lm-eval 0.4 reader keeps them in the
group's dataset metadata (``members``). ``reduce --items --datasets leaderboard_musr`` (or ``--benchmark``) then
draws the documents of the group's leaf tasks, a reduction of exactly one group's tasks is named after it (the
written group's alias, ``predict``'s estimate row), and whether lm-eval weights the group's tasks by size is tested
on each run's own sizes (a ``--limit`` run's too). Files used: the real lm-eval output under ``tests/fixtures``
(``lm_eval_groups``: lm-eval 0.4.13 with nested groups; ``lm_eval_limit_items``: ``--limit`` runs), the hand-made
files of ``tests/test_item_group_weights.py`` (after public Open LLM Leaderboard v2 results files) and, when present,
the shared lm-eval 0.4 results (``HARNESS_EXT_SHARED_DATA``).
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from test_item_group_weights import (MATH, MUSR, SCORES, _leaderboard_run, _store, _two_logged_models,
                                     forget_members)

from harness_ext.cli import main
from harness_ext.methods.reduction.manifest import load_manifest

from conftest import SHARED_DATA

FIXTURES = Path(__file__).resolve().parent / "fixtures"
NESTED = next((FIXTURES / "lm_eval_groups" / "Qwen__Qwen3.5-9B").glob("results_*.json"))
LIMITED = FIXTURES / "lm_eval_limit_items" / "population"
SHARED = SHARED_DATA / "lm-eval-harness" / "v04_results_from_pull_refs" / "results"


def _members(db) -> dict:
    """``{group dataset name: members}`` as the store keeps them."""
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT DISTINCT name, json_extract(metadata, '$.members') FROM datasets "
                           "WHERE kind = 'aggregate'").fetchall()
    return {n: json.loads(m) if m else None for n, m in rows}


def _reduce(db, out, *extra, items="10") -> int:
    return main(["reduce", "--db", str(db), "--items", items, "--out", str(out), "--no-plot", *extra])


def test_ingest_keeps_each_groups_direct_members_of_a_real_results_file(tmp_path):
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(NESTED)]) == 0
    kept = _members(db)
    assert kept["mmlu_redux_generative"] == ["stem", "other", "social sciences", "humanities"]
    assert len(kept["mmlu_redux_generative (stem)"]) == 19  # the subgroup, under its parent's name
    from harness_ext.methods.reduction.lm_eval_members import leaf_tasks, stored_groups
    from harness_ext.store.db import Store

    with Store.open(db, read_only=True) as store:
        leaves, unknown = leaf_tasks(stored_groups(store), "mmlu_redux_generative")
    assert len(leaves) == 57 and not unknown and all(t.startswith("mmlu_redux_") and t.endswith("_generative") for t in leaves)


def test_printed_tables_and_model_cards_keep_no_members(tmp_path):
    """Their readers rebuild group_subtasks from the rows shown, which need not be all of a group's."""
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(FIXTURES / "lm_eval_tables"),
                 str(FIXTURES / "lm_eval_details_cards")]) == 0
    assert _members(db) and not any(_members(db).values())


@pytest.mark.parametrize("subtasks,why", [
    ({"g": ["a", {"x": 1}]}, "a member is a dict"),
    ({"g": "a,b"}, "str, not a list"),
    ({"g": ["a", "h"], "h": ["g"]}, "reaches itself through its members"),
    ({"g": ["g", "a"]}, "reaches itself through its members"),
    ({"g": ["a"] + [f"t{i}" for i in range(6000)]}, "6,001 members, more than 5,000"),
    ({"g": ["a", "a"]}, "a member listed twice"),
    ({"g": ["a", "x" * 400]}, "longer than 300 characters"),
    ({"g": [["a"]]}, "a member is a list"),
    (["g"], "group_subtasks is a list, not an object of groups"),
])
def test_member_lists_that_are_no_groups_members_are_noted_and_not_kept(tmp_path, capsys, subtasks, why):
    doc = {"results": {"a": {"acc,none": 0.5, "alias": "a"}, "b": {"acc,none": 0.7, "alias": "b"},
                       "g": {"acc,none": 0.6, "alias": "g"}},
           "n-samples": {"a": {"original": 10, "effective": 10}, "b": {"original": 30, "effective": 30}},
           "group_subtasks": subtasks, "config": {"model_args": "pretrained=x"}}
    path = tmp_path / "results_x.json"
    path.write_text(json.dumps(doc))
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(path)]) == 0
    captured = capsys.readouterr()
    assert why in captured.out + captured.err
    assert not any(_members(db).values())


@pytest.mark.parametrize("flag,group,tasks", [("--datasets", "leaderboard_musr", MUSR),
                                              ("--benchmark", "leaderboard_math_hard", MATH)])
def test_a_group_named_takes_its_tasks_and_names_the_reduction(tmp_path, capsys, flag, group, tasks):
    db = _store(tmp_path)
    out = tmp_path / "r"
    assert _reduce(db, out, flag, group) == 0
    text = capsys.readouterr().out
    assert f"Groups named: {group}: its {len(tasks)} tasks (lm-eval group, members kept at ingest)" in text
    m = load_manifest(out)
    assert set(m["tasks"]) == set(tasks)
    assert m["lm_eval_group"] == {"name": group, "n_tasks": len(tasks), "members_kept": True,
                                  "weighted_by_size": True, "n_models": 3}
    assert m["weights"] == {t: float(n) for t, n in tasks.items()}
    assert f"as lm-eval's {group} group (its {len(tasks)} tasks, kept with it at ingest;" in text
    alias = next(line for line in (out / "harness_ext_reduced.yaml").read_text().splitlines() if "group_alias" in line)
    assert alias.startswith(f"group_alias: {group} (estimated from ")


def test_a_group_named_with_datasets_keeps_the_tasks_both_select(tmp_path, capsys):
    db = _store(tmp_path)
    assert _reduce(db, tmp_path / "r", "--benchmark", "leaderboard_math_hard", "--datasets", "*algebra*") == 0
    assert set(load_manifest(tmp_path / "r")["tasks"]) == {"leaderboard_math_algebra_hard",
                                                           "leaderboard_math_intermediate_algebra_hard",
                                                           "leaderboard_math_prealgebra_hard"}
    assert _reduce(db, tmp_path / "r2", "--benchmark", "leaderboard_math_hard", "--datasets", "*musr*") != 0
    assert "select none of its tasks" in capsys.readouterr().err


def test_a_store_read_before_is_told_and_reread_adds_the_members(tmp_path, capsys):
    db = _store(tmp_path)
    forget_members(db)
    assert _reduce(db, tmp_path / "r", "--datasets", "leaderboard_musr") != 0
    assert "'harness-ext ingest --reread PATHS' reads them again and keeps it" in capsys.readouterr().err
    assert main(["ingest", "--db", str(db), "--reread", str(tmp_path / "runs")]) == 0
    assert _members(db)["leaderboard_musr"] == list(MUSR)
    assert _reduce(db, tmp_path / "r", "--datasets", "leaderboard_musr") == 0
    assert load_manifest(tmp_path / "r")["lm_eval_group"]["name"] == "leaderboard_musr"


def _limited_runs(folder: Path, limit: int) -> list:
    """The mirrored leaderboard runs as ``lm_eval --limit`` writes them: each task scored on its first ``limit``
    documents (n-samples effective below original), the math group's score their mean weighted by those counts, as
    lm-eval's group aggregation weights by the sizes the run scored."""
    paths = []
    for model in SCORES:
        path = _leaderboard_run(folder, model)
        doc = json.loads(path.read_text())
        for t, n in {**MATH, **MUSR}.items():
            doc["n-samples"][t] = {"original": n, "effective": min(n, limit)}
        ran = [min(n, limit) for n in MATH.values()]
        mean = sum(v * n for v, n in zip(SCORES[model][0], ran)) / sum(ran)
        doc["results"]["leaderboard_math_hard"] = {"alias": "leaderboard_math_hard", "exact_match,none": mean}
        doc["config"]["limit"] = limit
        path.write_text(json.dumps(doc))
        paths.append(str(path))
    return paths


def test_a_groups_weighting_is_tested_on_the_sizes_its_limit_runs_scored(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), "-q", *_limited_runs(tmp_path / "runs", 150)]) == 0
    assert _reduce(db, tmp_path / "r", "--datasets", "leaderboard_math_hard") == 0
    m = load_manifest(tmp_path / "r")
    assert m["lm_eval_group"]["weighted_by_size"] is True  # weighted by 150/123/132/150/150/150/135 per run
    assert m["weights"] == {t: float(n) for t, n in MATH.items()}  # the draw's weights: the full sizes
    captured = capsys.readouterr()
    assert "scored by the store's models on their first documents only" in captured.out + captured.err


def test_runs_of_equal_sizes_tell_no_weighting_and_the_summary_says_so(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), "-q", *_limited_runs(tmp_path / "runs", 100)]) == 0
    assert _reduce(db, tmp_path / "r", "--datasets", "leaderboard_math_hard") == 0
    m = load_manifest(tmp_path / "r")
    assert m["lm_eval_group"]["weighted_by_size"] is None and m["weighting"] == "uniform over tasks"
    out = capsys.readouterr().out
    assert "no run in the store tells whether lm-eval weights them by size" in out
    # what the user can do, and why these runs cannot tell
    assert "scored each task on its first 100 documents (lm-eval --limit), where the mean by size and the plain " \
           "mean are one" in " ".join(out.split())
    assert "To tell, ingest one run of the group without --limit" in " ".join(out.split())
    alias = (tmp_path / "r" / "harness_ext_reduced.yaml").read_text()
    assert "group_alias: leaderboard_math_hard (estimated from " in alias
    # doing so tells: the runs of the whole tasks (a --limit above every task's size) weight them by size
    assert main(["ingest", "--db", str(db), "-q", *_limited_runs(tmp_path / "full", 10_000)]) == 0
    assert _reduce(db, tmp_path / "r2", "--datasets", "leaderboard_math_hard") == 0
    assert load_manifest(tmp_path / "r2")["lm_eval_group"]["weighted_by_size"] is True


def test_item_level_a_group_named_takes_its_logged_tasks_and_predict_names_it(tmp_path, capsys):
    from harness_ext.methods.reduction.item_predict import predict_items
    from harness_ext.methods.reduction.predict_export import estimate_row_name

    db = _two_logged_models(tmp_path)
    out = tmp_path / "r"
    assert _reduce(db, out, "--datasets", "toy_mc", items="6") == 0
    assert "Groups named: toy_mc: its 2 tasks" in capsys.readouterr().out
    m = load_manifest(out)
    assert "population" in m["tasks"]["toy_arith_mc"] and m["lm_eval_group"]["name"] == "toy_mc"
    pred = predict_items(m, [tmp_path / "pop" / "toy__lm-large"])
    assert pred.score["benchmark"] == "toy_mc"
    assert estimate_row_name(pred, m)[1].startswith("toy_mc (estimated from ")


def test_a_later_limit_run_gives_a_task_first_stored_without_sizes_its_full_size(tmp_path):
    """A task first stored from a file without n-samples (lm-eval 0.4.0-0.4.2) keeps the full size a later
    ``--limit`` run of it gives (before, the first file's dataset metadata was kept alone: 8, the documents scored)."""
    first, later = sorted(LIMITED.glob("*/results_*.json"))[:2]
    doc = json.loads(first.read_text())
    del doc["n-samples"]
    old = tmp_path / "old" / "results_2024-01-01T00-00-00.json"
    old.parent.mkdir()
    old.write_text(json.dumps(doc))
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(old)]) == 0
    assert main(["ingest", "--db", str(db), "-q", str(later)]) == 0
    from harness_ext.methods.reduction.item_design_only import task_documents
    from harness_ext.store.db import Store

    with Store.open(db, read_only=True) as store:
        assert task_documents(store, ["toy_task_00", "toy_task_01"]) == {"toy_task_00": 24, "toy_task_01": 24}


def test_a_later_file_gives_a_group_stored_without_members_its_members(tmp_path):
    """Within one batch and across batches: the first file's group has no group_subtasks (lm-eval 0.4.0 and 0.4.1
    write the group's score under ``groups`` and no member lists)."""
    for batches in (1, 2):
        runs = tmp_path / f"runs{batches}"
        paths = [Path(_leaderboard_run(runs, m)) for m in list(SCORES)[:2]]
        doc = json.loads(paths[0].read_text())
        del doc["results"]["leaderboard_musr"], doc["results"]["leaderboard_math_hard"], doc["group_subtasks"]
        doc["groups"] = {"leaderboard_musr": {"alias": "leaderboard_musr", "acc_norm,none": 0.4}}
        paths[0].write_text(json.dumps(doc))
        db = tmp_path / f"s{batches}.duckdb"
        groups = [[str(p) for p in paths]] if batches == 1 else [[str(p)] for p in paths]
        for g in groups:
            assert main(["ingest", "--db", str(db), "-q", *g]) == 0
        assert _members(db)["leaderboard_musr"] == list(MUSR)


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared lm-eval 0.4 results not present (HARNESS_EXT_SHARED_DATA)")
@pytest.mark.parametrize("group,n", [("mmlu", 57), ("mmlu_stem", 19)])
def test_shared_lm_eval_results_mmlu_groups_take_their_subjects(tmp_path, capsys, group, n):
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(SHARED)]) == 0
    assert _reduce(db, tmp_path / "r", "--datasets", group, items="20") == 0
    text = capsys.readouterr().out
    m = load_manifest(tmp_path / "r")
    assert len(m["tasks"]) == n and m["lm_eval_group"] == {"name": group, "n_tasks": n, "members_kept": True,
                                                          "weighted_by_size": True}
    assert f"subjects weighted by their items, as lm-eval's {group} group" in text
    assert f"group_alias: {group} (estimated from " in (tmp_path / "r" / "harness_ext_reduced.yaml").read_text()


# -- a group lm-eval writes without a score whose tasks share no metric: the Open LLM Leaderboard's `leaderboard` --
#: lm-eval 0.4.7's leaderboard group (its YAML's task list, in its order): no aggregate_metric_list in that release, so
#: its results files give it no score; its members' metrics are acc_norm (BBH, GPQA, MuSR), exact_match (MATH),
#: prompt_level_strict_acc (IFEval, its first) and acc (MMLU-Pro).
LEADERBOARD = ["leaderboard_mmlu_pro", "leaderboard_bbh", "leaderboard_gpqa", "leaderboard_math_hard",
               "leaderboard_ifeval", "leaderboard_musr"]
BBH = ["boolean_expressions", "causal_judgement", "date_understanding", "disambiguation_qa", "formal_fallacies",
       "geometric_shapes", "hyperbaton", "logical_deduction_five_objects", "logical_deduction_seven_objects",
       "logical_deduction_three_objects", "movie_recommendation", "navigate", "object_counting", "penguins_in_a_table",
       "reasoning_about_colored_objects", "ruin_names", "salient_translation_error_detection", "snarks",
       "sports_understanding", "temporal_sequences", "tracking_shuffled_objects_five_objects",
       "tracking_shuffled_objects_seven_objects", "tracking_shuffled_objects_three_objects", "web_of_lies"]
BBH_N = {"causal_judgement": 187, "penguins_in_a_table": 146, "snarks": 178}  # the rest 250
GPQA = {"leaderboard_gpqa_diamond": 198, "leaderboard_gpqa_extended": 546, "leaderboard_gpqa_main": 448}


def _task(doc: dict, task: str, values: dict, n: int, metrics: list) -> None:
    doc["results"][task] = {"alias": f" - {task}", **{f"{m},none": v for m, v in values.items()}}
    doc["configs"][task] = {"task": task, "num_fewshot": 0, "output_type": "multiple_choice", "metadata": {"version": 1.0},
                            "metric_list": [{"metric": m, "aggregation": "mean", "higher_is_better": True} for m in metrics]}
    doc["versions"][task], doc["n-shot"][task] = 1.0, 0
    doc["n-samples"][task] = {"original": n, "effective": n}


def _full_leaderboard_run(folder: Path, model: str, top=True) -> Path:
    """One model's ``lm_eval --tasks leaderboard`` results file as lm-eval 0.4.7 writes it (after the mirrored
    files: MATH and MuSR as :func:`test_item_group_weights._leaderboard_run` builds them, BBH, GPQA, IFEval and
    MMLU-Pro with their task names and sizes, scores made up), the top group ``leaderboard`` ``{" ": " "}``
    (``top`` False: a run of its member groups only)."""
    path = _leaderboard_run(folder, model)
    doc = json.loads(path.read_text())
    base = 0.2 + 0.1 * list(SCORES).index(model)
    for grp, tasks in (("leaderboard_bbh", {f"leaderboard_bbh_{t}": BBH_N.get(t, 250) for t in BBH}),
                       ("leaderboard_gpqa", GPQA)):
        doc["results"][grp] = {" ": " ", "alias": grp}
        doc["group_subtasks"][grp] = list(tasks)
        for i, (t, n) in enumerate(tasks.items()):
            _task(doc, t, {"acc_norm": base + 0.01 * i}, n, ["acc_norm"])
    ifeval = ["prompt_level_strict_acc", "inst_level_strict_acc", "prompt_level_loose_acc", "inst_level_loose_acc"]
    _task(doc, "leaderboard_ifeval", {m: base + 0.05 * i for i, m in enumerate(ifeval)}, 541, ifeval)
    _task(doc, "leaderboard_mmlu_pro", {"acc": base}, 12032, ["acc"])
    doc["group_subtasks"].update({"leaderboard_ifeval": [], "leaderboard_mmlu_pro": []})
    if top:
        doc["results"]["leaderboard"] = {" ": " ", "alias": "leaderboard"}
        doc["group_subtasks"]["leaderboard"] = list(LEADERBOARD)
    path.write_text(json.dumps(doc, indent=2))
    return path


def _leaderboard_store(tmp_path, top=True) -> Path:
    db = tmp_path / "s.duckdb"
    paths = [str(_full_leaderboard_run(tmp_path / "runs", m, top)) for m in SCORES]
    assert main(["ingest", "--db", str(db), "-q", *paths]) == 0
    return db


def _in_groups(db) -> dict:
    """``{dataset name: its in_groups}`` as the store keeps them (one per dataset name: its rows' agree)."""
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT DISTINCT name, json_extract(metadata, '$.in_groups') FROM datasets "
                           "WHERE json_extract(metadata, '$.in_groups') IS NOT NULL").fetchall()
    return {n: json.loads(v) for n, v in rows}


def test_a_group_without_a_score_or_a_common_metric_keeps_its_members_with_its_members(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    path = _full_leaderboard_run(tmp_path / "runs", "toy/made-up-7b")
    assert main(["ingest", "--db", str(db), str(path)]) == 0
    captured = capsys.readouterr()
    assert "members of leaderboard (no row: no score) kept with their tasks" in captured.out + captured.err
    kept = _in_groups(db)
    assert set(kept) == set(LEADERBOARD)  # its six direct members: four groups (rows made) and two tasks
    assert all(v == {"leaderboard": LEADERBOARD} for v in kept.values())
    assert "leaderboard" not in _members(db)  # still no row of its own: lm-eval gave it no score
    from harness_ext.methods.reduction.lm_eval_members import leaf_tasks, stored_groups
    from harness_ext.store.db import Store

    with Store.open(db, read_only=True) as store:
        groups = stored_groups(store)
        leaves, unknown = leaf_tasks(groups, "leaderboard")
    assert groups["leaderboard"]["scored"] is False and groups["leaderboard_bbh"]["scored"] is True
    assert len(leaves) == 24 + 3 + 7 + 1 + 3 + 1 == 39 and not unknown


@pytest.mark.parametrize("flag", ["--benchmark", "--datasets"])
def test_reduce_items_takes_the_leaderboard_groups_tasks_each_on_its_metric(tmp_path, capsys, flag):
    db = _leaderboard_store(tmp_path)
    out = tmp_path / "r"
    assert _reduce(db, out, flag, "leaderboard", items="20") == 0
    text = capsys.readouterr().out
    m = load_manifest(out)
    assert len(m["tasks"]) == 39 and m["cost"]["items_run"] == 780
    assert m["lm_eval_group"] == {"name": "leaderboard", "n_tasks": 39, "members_kept": True, "weighted_by_size": None,
                                  "n_models": 0, "scored": False}
    assert m["weighting"] == "uniform over tasks"
    assert "Groups named: leaderboard: its 39 tasks (lm-eval group without a score of its own" in text
    assert "which lm-eval gives no score (its tasks share no metric): the benchmark row, 'leaderboard task mean'" in text
    assert ("Each task on its primary metric: 30 on acc_norm, 7 on exact_match, 1 on acc, 1 on "
            "prompt_level_strict_acc.") in text
    assert {t: b["metric"] for t, b in m["tasks"].items()}["leaderboard_ifeval"] == "prompt_level_strict_acc"
    assert "group_alias: leaderboard task mean (estimated from 780 of " in (out / "harness_ext_reduced.yaml").read_text()


def test_the_leaderboard_group_with_datasets_keeps_the_tasks_both_select(tmp_path, capsys):
    db = _leaderboard_store(tmp_path)
    assert _reduce(db, tmp_path / "r", "--benchmark", "leaderboard", "--datasets", "leaderboard_[gm][pm]*") == 0
    m = load_manifest(tmp_path / "r")
    assert set(m["tasks"]) == {*GPQA, "leaderboard_mmlu_pro"}
    assert "lm_eval_group" not in m  # four tasks are no one group
    assert "Each task on its primary metric: 3 on acc_norm, 1 on acc." in capsys.readouterr().out


def test_a_scored_groups_reduction_says_nothing_of_metrics_and_is_named_as_before(tmp_path, capsys):
    db = _leaderboard_store(tmp_path)
    assert _reduce(db, tmp_path / "r", "--datasets", "leaderboard_bbh") == 0
    text = capsys.readouterr().out
    assert "Each task on its" not in text and "task mean" not in text
    assert load_manifest(tmp_path / "r")["lm_eval_group"]["name"] == "leaderboard_bbh"


def test_the_leaderboard_group_ingested_twice_and_reread_stays_as_it_was(tmp_path, capsys):
    db = _leaderboard_store(tmp_path)
    before = _in_groups(db)
    assert main(["ingest", "--db", str(db), "-q", str(tmp_path / "runs")]) == 0
    assert _in_groups(db) == before
    # As the reader before revision 7 left the store: no in_groups; --benchmark leaderboard then matches nothing.
    with duckdb.connect(str(db)) as con:
        for did, md in con.execute("SELECT dataset_id, metadata FROM datasets").fetchall():
            md = json.loads(md)
            if md.pop("in_groups", None) is not None:
                con.execute("UPDATE datasets SET metadata = ? WHERE dataset_id = ?", [json.dumps(md), did])
        con.execute("UPDATE sources SET reader = '6' WHERE adapter = 'lm_eval_v04'")
    assert not _in_groups(db)
    assert _reduce(db, tmp_path / "r0", "--benchmark", "leaderboard") != 0
    err = capsys.readouterr().err
    assert "leaderboard is an lm-eval group the store keeps no member list for" in err
    assert "than the one 3 results files were read with; 'harness-ext ingest --reread PATHS'" in err
    assert main(["ingest", "--db", str(db), "--reread", str(tmp_path / "runs")]) == 0
    assert _in_groups(db) == before
    assert _reduce(db, tmp_path / "r", "--benchmark", "leaderboard") == 0
    assert len(load_manifest(tmp_path / "r")["tasks"]) == 39


@pytest.mark.parametrize("batches", [1, 2])
def test_a_later_leaderboard_run_gives_tasks_first_stored_without_it_the_group(tmp_path, batches):
    """The first model ran the member groups alone (no top group), the second ``--tasks leaderboard``: the tasks
    stored from the first file take the group from the second, within one batch and across batches."""
    first = _full_leaderboard_run(tmp_path / "runs", list(SCORES)[0], top=False)
    later = _full_leaderboard_run(tmp_path / "runs", list(SCORES)[1])
    db = tmp_path / "s.duckdb"
    for paths in ([[first, later]] if batches == 1 else [[first], [later]]):
        assert main(["ingest", "--db", str(db), "-q", *map(str, paths)]) == 0
    assert set(_in_groups(db)) == set(LEADERBOARD)


def test_a_task_in_two_groups_without_a_score_keeps_both_from_two_files(tmp_path):
    """in_groups is filled group by group: a later file's second group is added, the stored one's list kept."""
    first = _full_leaderboard_run(tmp_path / "runs", list(SCORES)[0])
    later = _full_leaderboard_run(tmp_path / "runs", list(SCORES)[1])
    doc = json.loads(later.read_text())
    doc["results"]["openllm"] = {" ": " ", "alias": "openllm"}  # another of lm-eval's group names, no score
    doc["group_subtasks"]["openllm"] = ["leaderboard_ifeval", "leaderboard_math_hard"]
    doc["group_subtasks"]["leaderboard"] = ["leaderboard_ifeval", "leaderboard_mmlu_pro"]  # a second list: not kept
    later.write_text(json.dumps(doc))
    db = tmp_path / "s.duckdb"
    for p in (first, later):
        assert main(["ingest", "--db", str(db), "-q", str(p)]) == 0
    kept = _in_groups(db)
    assert kept["leaderboard_ifeval"] == {"leaderboard": LEADERBOARD, "openllm": ["leaderboard_ifeval",
                                                                                 "leaderboard_math_hard"]}
    assert kept["leaderboard_mmlu_pro"] == {"leaderboard": LEADERBOARD}
    from harness_ext.methods.reduction.lm_eval_members import stored_groups
    from harness_ext.store.db import Store

    with Store.open(db, read_only=True) as store:  # the second list kept beside the first: its union is the first
        top = stored_groups(store)["leaderboard"]
    assert top["members"] == LEADERBOARD and top["n_lists"] == 2 and top["scored"] is False


def test_in_groups_metadata_is_filled_group_by_group():
    from harness_ext.store.dataset_fill import filled

    stored = json.dumps({"harness": "lm-evaluation-harness", "in_groups": {"a": ["x", "y"]}})
    assert json.loads(filled(stored, {"in_groups": {"a": ["z"], "b": ["x"]}}))["in_groups"] == {"a": ["x", "y"],
                                                                                                "b": ["x"]}
    assert filled(stored, {"in_groups": {"a": ["x", "y"]}}) == stored  # nothing new: unchanged
    said: list = []  # another list of a stored group: the stored one stays, the other is kept beside it and said
    other = json.loads(filled(stored, {"in_groups": {"a": ["z"]}}, conflicts=said))
    assert other["in_groups"] == {"a": ["x", "y"]} and other["other_member_lists"] == {"a": [["z"]]}
    assert said == [(None, "a", ["x", "y"], ["z"], True)]
    assert filled(json.dumps(other), {"in_groups": {"a": ["z"]}}) == json.dumps(other)  # each list once
    from harness_ext.store.dataset_fill import MAX_LISTS, conflict_note

    full = json.dumps({"in_groups": {"a": ["x"]}, "other_member_lists": {"a": [[f"t{i}"] for i in range(MAX_LISTS)]}})
    said.clear()  # a file made to fill the store: the list beyond the cap is said, not kept
    assert filled(full, {"in_groups": {"a": ["y"]}}, conflicts=said) == full
    assert said == [(None, "a", ["x"], ["y"], False)]
    assert "this list not kept: the store holds 50 other lists of the group already" in conflict_note(*said[0][1:])


def test_a_group_without_a_row_inside_another_passes_the_outer_groups_members_on(tmp_path):
    """``leaderboard_math_hard`` without sizes gets no row (no mean by size): its tasks carry it and
    ``leaderboard`` both, so the outer group still reaches every task."""
    path = _full_leaderboard_run(tmp_path / "runs", "toy/made-up-7b")
    doc = json.loads(path.read_text())
    for t in MATH:
        del doc["n-samples"][t]
    path.write_text(json.dumps(doc))
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(path)]) == 0
    kept = _in_groups(db)
    assert "leaderboard_math_hard" not in _members(db)
    assert all(kept[t] == {"leaderboard_math_hard": list(MATH), "leaderboard": LEADERBOARD} for t in MATH)
    from harness_ext.methods.reduction.lm_eval_members import leaf_tasks, stored_groups
    from harness_ext.store.db import Store

    with Store.open(db, read_only=True) as store:
        leaves, unknown = leaf_tasks(stored_groups(store), "leaderboard")
    assert len(leaves) == 39 and set(MATH) <= set(leaves) and not unknown


def test_a_scored_group_over_several_metrics_is_named_its_task_mean_too(tmp_path, capsys):
    """lm-eval 0.4.13's leaderboard YAML aggregates each metric over the tasks that have it (acc: MMLU-Pro alone), so
    its rows are scores per metric, none of them the mean of the 39 tasks the reduction's row is."""
    paths = []
    for m in SCORES:
        path = _full_leaderboard_run(tmp_path / "runs", m)
        doc = json.loads(path.read_text())
        doc["results"]["leaderboard"] = {"alias": "leaderboard", "acc,none": 0.3, "acc_norm,none": 0.4,
                                         "exact_match,none": 0.1, "prompt_level_strict_acc,none": 0.5}
        path.write_text(json.dumps(doc))
        paths.append(str(path))
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), "-q", *paths]) == 0
    assert _reduce(db, tmp_path / "r", "--benchmark", "leaderboard") == 0
    text = capsys.readouterr().out
    g = load_manifest(tmp_path / "r")["lm_eval_group"]
    assert g["name"] == "leaderboard" and g["mixed_metrics"] is True and "scored" not in g
    assert "which lm-eval scores per metric over the tasks that have it: the benchmark row, 'leaderboard task mean'" in text
    assert "group_alias: leaderboard task mean (estimated from " in (tmp_path / "r" / "harness_ext_reduced.yaml").read_text()


def test_a_group_name_too_long_to_be_one_is_noted_and_its_membership_not_kept(tmp_path, capsys):
    path = _full_leaderboard_run(tmp_path / "runs", "toy/made-up-7b")
    doc = json.loads(path.read_text())
    name = "g" * 400
    doc["results"][name] = {" ": " ", "alias": "long"}
    doc["group_subtasks"][name] = ["leaderboard_ifeval", "leaderboard_mmlu_pro"]
    path.write_text(json.dumps(doc))
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(path)]) == 0
    captured = capsys.readouterr()
    assert "1 group name of group_subtasks blank or longer than 300 characters" in captured.out + captured.err
    assert all(set(v) == {"leaderboard"} for v in _in_groups(db).values())


def _musr_lists(folder: Path, short_first: bool) -> list:
    """Two models' leaderboard runs whose files list ``leaderboard_musr``'s members differently, as two lm-eval
    releases could: one lists its three tasks, the other two of them (its results still hold the third)."""
    paths = []
    for k, model in enumerate(list(SCORES)[:2]):
        path = _leaderboard_run(folder, model)
        if (k == 0) == short_first:
            doc = json.loads(path.read_text())
            doc["group_subtasks"]["leaderboard_musr"] = list(MUSR)[:2]
            path.write_text(json.dumps(doc))
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("short_first", [False, True], ids=["full-list-first", "short-list-first"])
@pytest.mark.parametrize("batches", [1, 2])
def test_a_groups_second_member_list_is_said_kept_and_reduce_takes_the_union(tmp_path, capsys, short_first, batches):
    from harness_ext.methods.reduction.lm_eval_members import stored_groups
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths

    paths = _musr_lists(tmp_path / "runs", short_first)
    db = tmp_path / "s.duckdb"
    notes = []
    with Store.open(db) as store:
        for part in ([paths] if batches == 1 else [[p] for p in paths]):
            report = ingest_paths(store, part, show_progress=False)
            notes += [n for f in report.files for n in f.notes if "lm-eval group leaderboard_musr" in n]
        groups = stored_groups(store)
    kept, other = (3, 2) if not short_first else (2, 3)
    assert notes == [f"lm-eval group leaderboard_musr: this file lists {other} members, the store kept {kept} from an "
                     f"earlier file ({1 if kept == 3 else 0} of them not here, {1 if other == 3 else 0} here not "
                     "there); both lists kept, reduce --items takes the union"]
    assert sorted(groups["leaderboard_musr"]["members"]) == sorted(MUSR) and groups["leaderboard_musr"]["n_lists"] == 2
    assert _reduce(db, tmp_path / "r", "--datasets", "leaderboard_musr") == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "leaderboard_musr: its 3 tasks (lm-eval group, members kept at ingest; the union of the 2 member lists " \
           "the store's files give it, 3 direct members in all" in out
    assert set(load_manifest(tmp_path / "r")["tasks"]) == set(MUSR)
    assert main(["ingest", "--db", str(db), "-q", *paths]) == 0  # again: unchanged, nothing more said or kept
    with Store.open(db, read_only=True) as store:
        assert stored_groups(store)["leaderboard_musr"]["n_lists"] == 2


def test_a_group_without_a_score_none_of_whose_tasks_has_one_is_said_and_reduce_told(tmp_path, capsys):
    """``leaderboard`` whose six members have no score in the file (their tasks' results absent, as when every task
    of a run failed): no task carries its list, so it is kept nowhere; the file's notes say so with the count of its
    tasks, and ``reduce --items --benchmark leaderboard`` says why the name matches nothing and what to do."""
    path = _full_leaderboard_run(tmp_path / "runs", "toy/made-up-7b")
    doc = json.loads(path.read_text())
    doc["results"] = {"leaderboard": doc["results"]["leaderboard"],  # another task of the run scored, no other
                      "other_task": {"alias": "other_task", "acc,none": 0.5, "acc_stderr,none": 0.01}}
    doc["n-samples"]["other_task"] = {"original": 100, "effective": 100}
    path.write_text(json.dumps(doc))
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(path)]) == 0
    said = " ".join((lambda c: c.out + c.err)(capsys.readouterr()).split())
    assert ("5 groups without a score none of whose tasks has a score in the file: their member lists kept nowhere "
            "(no task to carry them), so reduce --items cannot take their tasks by their name; a later file scoring "
            "their tasks with them keeps them: ") in said  # leaderboard and its four member groups
    assert "leaderboard_bbh (24 tasks)" in said and "leaderboard (39 tasks)" in said
    assert not _in_groups(db)
    assert _reduce(db, tmp_path / "r", "--benchmark", "leaderboard") != 0
    err = " ".join(capsys.readouterr().err.split())
    assert ("leaderboard is one of lm-eval's group names the store keeps no member list for: a results file keeps a "
            "group's list when it gives the group with a score of one of its tasks at least") in err
