"""The steps of a reduction (harness_ext.methods.reduction.manifest_steps) and the manifest's sections, one by one."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from harness_ext.errors import MethodError
from harness_ext.methods.reduction import manifest as M
from harness_ext.methods.reduction import manifest_steps as S


class _Bar:
    """A stand-in for the progress stages: records the stage names."""

    def __init__(self):
        self.names = []

    def set_postfix_str(self, name):
        self.names.append(name)

    def update(self):
        pass

    def close(self):
        pass


def _matrix(m=24, d=8, seed=0, names=None):
    """Scores in (0, 1) of a rank-2 population (models x datasets)."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(m, 2)) @ rng.normal(size=(2, d)) + rng.normal(0, 0.1, size=(m, d))
    X = 1 / (1 + np.exp(-Z))
    return pd.DataFrame(X, index=names or [f"m{i}" for i in range(m)], columns=[f"d{j}" for j in range(d)])


OPTS = dict(selector="prediction_greedy", similarity="pearson", random_state=0)


@pytest.fixture(scope="module")
def run():
    """Every step on one small matrix, the way build_manifest runs them."""
    df = _matrix()
    facts = S.read_matrix(df, "3")
    plan = S.plan_models(df, facts, selector=OPTS["selector"], predictor="lowrank", weighting="uniform",
                         weighting_params=None, random_state=0)
    sel = S.select_subset(df, facts, plan, budget="3", n_random=10, max_models=None, **OPTS)
    folds = S.plan_folds(df.index, sel.sample, sel.m_sel, facts.d, 5, 0)
    bar = _Bar()
    cv = S.cross_validate(facts, plan, sel, folds, random_state=0, n_random_subsets=5, bar=bar)
    cal = S.calibrate(df, facts, plan, sel, folds, cv, **OPTS)
    return df, S.Reduction(facts, plan, sel, folds, cv, cal), bar


def test_read_matrix_checks_and_reads_the_budget():
    df = _matrix()
    facts = S.read_matrix(df, "0.25")
    assert (facts.m, facts.d, facts.kind, facts.value) == (24, 8, "fraction", 0.25)
    assert facts.missing == 0 and facts.thin_note is None and facts.availability is None and facts.cost_vec is None
    with pytest.raises(MethodError, match="at least 4"):
        S.read_matrix(df.iloc[:3])
    with pytest.raises(MethodError, match="nothing to reduce"):
        S.read_matrix(df[["d0"]])
    with pytest.raises(MethodError, match="cost budget needs a cost"):
        S.read_matrix(df, "cost=3")
    costs = S.read_matrix(df, "cost=3", costs={c: 1.0 for c in df.columns})
    assert costs.kind == "cost" and costs.cost_vec.tolist() == [1.0] * 8


def test_read_matrix_names_thin_and_rarely_run_datasets():
    df = _matrix()
    df.iloc[1:, 0] = np.nan  # d0: one model
    df.iloc[12:, 1] = np.nan  # d1: half the models
    facts = S.read_matrix(df, None, min_availability=0.6)
    assert "1 dataset has a result from fewer than two models" in facts.thin_note and "d0" in facts.thin_note
    assert sorted(e["name"] for e in facts.availability["demoted"]) == ["d0", "d1"]
    with pytest.raises(MethodError, match="no dataset has results from two models"):
        S.read_matrix(df.where(np.eye(24, 8, dtype=bool)))


def test_thin_columns_and_selection_sample():
    assert S.thin_columns(["a", "b"], [1, 5]) == (["a"], "1 dataset has a result from fewer than two models and is "
                                                          "predicted from column-level information only: a")
    assert S.selection_sample(10, None, 0) is None and S.selection_sample(10, 0, 0) is None
    s = S.selection_sample(10, 4, 3)
    assert s.tolist() == sorted(s.tolist()) and len(set(s.tolist())) == 4
    assert np.array_equal(s, S.selection_sample(10, 4, 3))


def test_plan_models_gives_a_prediction_selector_its_predictor_and_weights(run):
    df, r, _ = run
    assert r.plan.pred_reg.name == "lowrank" and np.isclose(r.plan.w.sum(), 1.0)
    assert r.plan.sel_params["predictor"] == "lowrank" and len(r.plan.sel_params["weights"]) == 8
    plan = S.plan_models(df, r.facts, selector="greedy_coverage", predictor="ridge", weighting="uniform",
                         weighting_params=None, random_state=0)
    assert "predictor" not in plan.sel_params and plan.pred_reg.name == "ridge"


def test_select_subset_cuts_the_order_at_the_budget(run):
    df, r, _ = run
    sel = r.sel
    assert sel.k == 3 and sel.subset_idx.tolist() == sel.order_idx[:3].tolist() and sel.sample is None
    assert [r.facts.columns[j] for j in sel.order_idx] == list(sel.prowl.order)
    facts = S.read_matrix(df, "coverage=1.0")
    plan = S.plan_models(df, facts, selector="greedy_coverage", predictor="ridge", weighting="uniform",
                         weighting_params=None, random_state=0)
    with pytest.raises(MethodError, match="reached only with all"):
        S.select_subset(df, facts, plan, budget="coverage=1.0", n_random=5, max_models=None,
                        selector="greedy_coverage", similarity="pearson", random_state=0)


def test_select_subset_on_a_model_sample_counts_demoted_datasets():
    df = _matrix(m=30)
    df.iloc[10:, 7] = np.nan
    facts = S.read_matrix(df, "2")
    plan = S.plan_models(df, facts, selector="greedy_coverage", predictor="ridge", weighting="uniform",
                         weighting_params=None, random_state=0)
    sel = S.select_subset(df, facts, plan, budget="2", n_random=5, max_models=20, selector="greedy_coverage",
                          similarity="pearson", random_state=0)
    assert sel.m_sel == 20 and len(sel.sample) == 20 and facts.availability["n_in_subset"] == 0


def test_plan_folds_hold_out_whole_training_runs():
    names = [f"run{i // 3}@step{i % 3}" for i in range(24)]
    fp = S.plan_folds(pd.Index(names), None, 24, 8, 5, 0)
    assert fp.labels.shape == (24,) and fp.runs is not None
    for run in set(fp.runs):
        assert len(set(fp.labels_all[fp.runs == run])) == 1
    assert fp.n_cal == int(fp.cal_labels.max()) + 1
    plain = S.plan_folds(pd.Index([f"m{i}" for i in range(24)]), None, 24, 8, 5, 0)
    assert plain.runs is None
    sample = np.arange(0, 24, 2)
    sub = S.plan_folds(pd.Index([f"m{i}" for i in range(24)]), sample, 12, 8, 5, 0)
    assert sub.labels.shape == (12,) and sub.labels_all.shape == (24,)
    assert np.array_equal(sub.labels_all[sample], sub.cal_labels)


def test_cross_validate_scores_the_subset_and_its_evidence(run):
    _, r, bar = run
    cv = r.cv
    assert cv.cv["n_splits"] == len(cv.folds) == 5 and cv.rmse_d.shape == (8,)
    assert cv.n_draws == 5 and cv.ev_rule is None and cv.curve and all("k" in row for row in cv.curve)
    assert bar.names == ["cross-validating", "5 random subsets", "error against budget"]


def test_calibrate_reselects_without_each_fold(run):
    _, r, _ = run
    cal = r.cal
    assert len(cal.fold_subs) == r.folds.n_cal and all(len(s) == r.sel.k for s in cal.fold_subs)
    assert np.isfinite(cal.exp_agg) and "random_subsets" in cal.honest


def test_sections_are_what_the_manifest_holds(run):
    df, r, _ = run
    subset = M.subset_section(r)
    assert [s["step"] for s in subset] == [1, 2, 3] and [s["name"] for s in subset] == [
        r.facts.columns[j] for j in r.sel.subset_idx]
    datasets = M.datasets_section(r)
    assert sum(d["in_subset"] for d in datasets) == 3 and datasets[0]["normalisation"] == S.raw_normalisation()
    source = M.source_section(df, r, ":memory:")
    assert source["store"] is None and (source["n_models"], source["n_datasets"]) == (24, 8)
    sel = M.selection_section(r, None, 0)
    assert sel["subset_size"] == 3 and "default" in sel["budget"] and "model_sample" not in sel
    pred = M.prediction_section(r, 0)
    assert len(pred["calibration"]["fold"]) == 24 and pred["expected_error"]["nested"] is True
    ev = M.evidence_section(r)
    assert ev["costs"] is None and ev["default_reason"].startswith(M.DEFAULT_SELECTOR_REASON[:30])
    assert M.aggregate_section(r.plan.weights, "uniform")["weighting"]["name"] == "uniform"
    warnings = M.reduction_warnings(df, r)
    assert all(isinstance(w, str) for w in warnings)


def test_assembled_manifest_is_build_manifest_and_valid(run):
    df, r, _ = run
    doc = M.assemble_manifest(df, r, budget="3", names=("prediction_greedy", None, "lowrank", "uniform"),
                              random_state=0, group_name="g", db=None)
    M.validate_manifest(json.loads(json.dumps(doc)))
    built = M.build_manifest(df, budget="3", n_random=10, n_random_subsets=5, group_name="g")
    assert json.dumps(doc) == json.dumps(built)
    assert list(doc) == ["manifest_version", "tool", "group_name", "source", "datasets", "selection", "subset",
                         "prediction", "evidence", "aggregate", "warnings", "training_matrix"]
