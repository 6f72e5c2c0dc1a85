"""Manifests across harnesses: a subset chosen from HELM results written as an lm-eval group, and back.

HELM Classic's MMLU is scored by exact match (EM) on 5 subjects; lm-eval runs ``mmlu_<subject>`` and reports
``acc``. The group reduce writes must aggregate lm-eval's metric (with HELM's, lm-eval printed an empty group
row) and predict must read lm-eval's results for the HELM dataset (it refused them: "expects (helm_classic,
MMLU, EM)"), warning that the prompts differ. Results of lm-eval v0.3 tasks (``hendrycksTest-<subject>``) behind
a group of v0.4 tasks are said too.
"""

from __future__ import annotations

import pandas as pd
import pytest

import harness_ext as hx
from harness_ext.methods.reduction.cross_harness import cross_harness_rows
from harness_ext.methods.reduction.harness_names import (EQUIVALENTS, helm_metric, lm_eval_metric, lm_eval_task_list,
                                                       population_task_warnings)

from conftest import HELM_CLASSIC, LM_EVAL_V04, PYTHIA, load_group_yaml, require


def test_every_table_entry_maps_its_metric_both_ways():
    for eq in EQUIVALENTS:
        helm = {"benchmark": "helm_classic", "name": eq.names[0], "metric": "EM"}
        if eq.lm_eval:
            assert lm_eval_metric(helm) == eq.lm_eval_metric, eq.names
        lm = {"benchmark": "lm_eval", "name": eq.lm_eval[0], "task": eq.lm_eval[0], "metric": "acc"} if eq.lm_eval else None
        if lm is not None and len(eq.lm_eval) == 1:
            assert helm_metric(lm) == eq.helm_metric, eq.names
    mmlu = {"benchmark": "helm_classic", "name": "MMLU", "metric": "EM"}
    assert lm_eval_metric(mmlu) == "acc" and lm_eval_metric({"benchmark": "mmlu", "name": "anatomy", "metric": "acc"}) == "acc"
    assert helm_metric({"benchmark": "mmlu", "name": "anatomy", "metric": "acc"}) == "EM"
    # A HELM run of one MMLU subject is that subject's lm-eval task, not the 57-subject group.
    assert lm_eval_task_list({"benchmark": "helm", "name": "mmlu:subject=anatomy,method=multiple_choice_joint"}) == [
        "mmlu_anatomy"]


def test_population_of_v03_tasks_behind_a_v04_group_is_said():
    subset = [{"name": "anatomy", "benchmark": "mmlu", "metric": "acc", "task": "hendrycksTest-anatomy"},
              {"name": "arc_easy", "benchmark": "lm_eval", "metric": "acc", "task": "arc_easy"}]
    [w] = population_task_warnings(subset)
    assert "lm-eval v0.3 tasks" in w and "hendrycksTest-anatomy -> mmlu_anatomy" in w and "arc_easy" not in w
    assert population_task_warnings(subset[1:]) == []


def _helm_store(tmp_path):
    require(HELM_CLASSIC)
    db = tmp_path / "helm.duckdb"
    hx.ingest(HELM_CLASSIC, db)
    return db


@pytest.mark.slow
def test_helm_subset_written_for_lm_eval_round_trips(tmp_path):
    """Real slices: a HELM Classic subset holding MMLU, run as lm-eval tasks (lm-eval v0.4 results of
    Llama-3.2-1B, v0.3 results of Pythia-1.4B), predicted from them."""
    db = _helm_store(tmp_path)
    llama = require(LM_EVAL_V04 / "meta-llama__Llama-3.2-1B")
    pythia = require(PYTHIA / "pythia-v1" / "pythia-1.4b" / "five-shot" / "1.4b-5shot_step143000.json")
    full = hx.load_matrix(db, "helm_classic")
    matrix = full[["MMLU", "TruthfulQA", "RAFT"]]  # a subset of one that holds MMLU (with BoolQ, BoolQ is chosen)
    matrix.attrs = full.attrs
    res = hx.reduce(matrix, budget=1, store=db, n_random=20, n_random_subsets=20)
    assert res.subset == ["MMLU"]
    assert any("come from HELM results" in w and "EM -> acc" in w for w in res.warnings)
    res.write(tmp_path / "reduced", formats=["json", "lm_eval_yaml"])
    group = load_group_yaml(tmp_path / "reduced" / "harness_ext_reduced.yaml")
    assert [t for t in group["task"]] == ["mmlu_abstract_algebra", "mmlu_college_chemistry", "mmlu_computer_security",
                                          "mmlu_econometrics", "mmlu_us_foreign_policy"]
    [agg] = group["aggregate_metric_list"]
    assert agg["metric"] == "acc"  # lm-eval's metric: the group has a row (HELM's EM left it empty)
    for results in (llama, pythia):
        pred = hx.predict(tmp_path / "reduced", [results])
        row = pred.table[pred.table["dataset"] == "MMLU"].iloc[0]
        assert row["observed"] and 0.2 < row["raw"] < 0.5
        assert any("read from the other harness's results" in w and "prompts" in w for w in pred.warnings)


@pytest.mark.slow
def test_helm_results_fill_an_lm_eval_dataset(tmp_path):
    """The reverse: a manifest dataset from lm-eval (boolq, acc) takes HELM's BoolQ (EM) of a new model."""
    db = _helm_store(tmp_path)
    from harness_ext.store.db import Store
    from harness_ext.store.matrix import MatrixQuery, query_results

    with Store.open(db, read_only=True) as s:
        long = query_results(s, MatrixQuery(), all_metrics=True)
    datasets = [{"name": "boolq", "benchmark": "lm_eval", "metric": "acc", "task": "boolq"},
                {"name": "arc_easy", "benchmark": "lm_eval", "metric": "acc", "task": "arc_easy"},
                {"name": "anatomy", "benchmark": "mmlu", "metric": "acc", "task": "mmlu_anatomy"}]
    rows = cross_harness_rows(datasets, long)
    helm = long[(long["dataset"] == "BoolQ") & (long["metric"] == "EM")].set_index("model")["value"]
    got = rows.set_index("model")["value"]
    assert set(rows["column"]) == {"boolq"}  # HELM has no ARC, and Classic's MMLU is not one subject
    pd.testing.assert_series_equal(got.sort_index(), helm.sort_index(), check_names=False)
