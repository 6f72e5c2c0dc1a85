"""Groups lm-eval names for their place inside another group (``- group: stem``) are stored under that group's name.

A real lm-eval 0.4.11 run of ``mmlu_redux_generative`` (tests/fixtures/lm_eval_groups, provenance there) writes its
subgroups as ``stem``, ``humanities``, ``other`` and ``social sciences``; lm-eval's ``mmlu_continuation``,
``mmlu_generative`` and five more groups name theirs the same, each over other tasks. Stored under those names, one
model's runs of two families met in one cell, reported as conflicting values of one measurement.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_ext.adapters.lm_eval import inline_groups
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, query_results

REDUX = (Path(__file__).parent / "fixtures" / "lm_eval_groups" / "Qwen__Qwen3.5-9B"
         / "results_2026-04-12T19-36-06.549915.json")
SUBGROUPS = ("humanities", "other", "social sciences", "stem")


def _aggregates(store) -> dict:
    long = query_results(store, MatrixQuery(benchmarks=("lm_eval",), aggregates="only"), all_metrics=True)
    return dict(zip(long.dataset, long.value))


def test_a_generic_subgroup_keeps_its_parents_name_and_the_file_says_so():
    doc = json.loads(REDUX.read_text())
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [REDUX], show_progress=False)
        (f,) = report.files
        assert f.status == "ingested" and f.adapter == "lm_eval_v04"
        got = _aggregates(s)
        want = {f"mmlu_redux_generative ({g})": doc["groups"][g]["exact_match,default"] for g in SUBGROUPS}
        want["mmlu_redux_generative"] = doc["groups"]["mmlu_redux_generative"]["exact_match,default"]
        assert got == want  # 0.6271 for stem, as the file; no dataset is called plain "stem"
        # the subject tasks keep their lm-eval names and scores
        subjects = query_results(s, MatrixQuery(benchmarks=("lm_eval",)), all_metrics=True)
        assert len(subjects) == 57 and "mmlu_redux_abstract_algebra_generative" in set(subjects.dataset)
        # the task each row came from is still lm-eval's own name
        assert set(query_results(s, MatrixQuery(benchmarks=("lm_eval",), aggregates="only"),
                                 all_metrics=True).task) == {"mmlu_redux_generative", *SUBGROUPS}
    assert any(n.startswith("4 groups lm-eval names for their place in another group stored under that group's "
                            "name: stem as 'mmlu_redux_generative (stem)'") for n in f.notes)


def test_two_families_subgroups_of_one_model_are_two_measurements(tmp_path):
    """The same run read as lm-eval's ``mmlu_continuation`` with other scores: its ``stem`` is its own cell."""
    doc = json.loads(REDUX.read_text())
    other = json.loads(REDUX.read_text())
    for block in ("results", "groups"):
        other[block]["mmlu_continuation"] = other[block].pop("mmlu_redux_generative")
        for g in SUBGROUPS:
            other[block][g]["exact_match,default"] = 0.5
    other["group_subtasks"]["mmlu_continuation"] = other["group_subtasks"].pop("mmlu_redux_generative")
    (tmp_path / "results_other.json").write_text(json.dumps(other))
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [REDUX, tmp_path / "results_other.json"], show_progress=False)
        assert [f.status for f in report.files] == ["ingested", "ingested"]
        assert s.conflicts().empty  # before: 4 cells (stem, humanities, ...) with two values each
        got = _aggregates(s)
    assert got["mmlu_continuation (stem)"] == 0.5
    assert got["mmlu_redux_generative (stem)"] == doc["groups"]["stem"]["exact_match,default"]


@pytest.mark.parametrize("subtasks, expected", [
    # lm-eval's own subgroups have names of their own: kept
    ({"mmlu": ["mmlu_stem"], "mmlu_stem": ["mmlu_anatomy"], "mmlu_anatomy": []}, {}),
    ({"openllm": ["mmlu", "arc_challenge"], "mmlu": ["mmlu_stem"], "mmlu_stem": ["mmlu_anatomy"]}, {}),
    # a user's own group is a benchmark of its own, which keeps its subgroups apart
    ({"mine": ["part"], "part": ["t1"], "t1": []}, {}),
    # a task (no subtasks) is not a group
    ({"mmlu_continuation": ["stem", "t1"], "stem": ["t2"], "t1": [], "t2": []}, {"stem": "mmlu_continuation"}),
])
def test_which_groups_are_named_for_their_place(subtasks, expected):
    assert inline_groups(subtasks) == expected
