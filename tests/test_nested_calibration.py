"""Nested calibration of new-model intervals through the product: reduce stores the subset chosen without each
calibration fold, predict calibrates on them (issue 14 item 4)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest

from harness_ext.errors import HarnessExtError, MethodError
from harness_ext.methods.engine.completion import LowRankCompleter
from harness_ext.methods.reduction.manifest import build_manifest, validate_manifest
from harness_ext.methods.engine.newmodel_intervals import (CALIBRATION_FOLDS, FOLD_RESELECTION, FoldSubsets, fold_labels,
                                                    label_folds, run_groups, run_of, select_fold_subsets)
from harness_ext.methods.reduction.predict import predict_scores
from harness_ext.methods.engine.subset_cv import model_folds


def _low_rank_proportions(m, d, seed, noise=0.3):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(m, 2)) @ rng.normal(size=(d, 2)).T + 0.5 * rng.normal(size=(m, 1)) + rng.normal(size=(1, d))
    return 1 / (1 + np.exp(-(Z + noise * rng.standard_normal((m, d)))))


def test_fold_labels_are_reduces_cross_validation_folds():
    labels = fold_labels(23, 5, 3)
    for f, (tr, te) in enumerate(model_folds(23, 5, 3)):
        assert np.array_equal(np.flatnonzero(labels == f), te) and np.array_equal(np.flatnonzero(labels != f), tr)
    assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
               for a, b in zip(label_folds(labels), model_folds(23, 5, 3)))  # and back


def test_fold_subsets_answer_only_a_fold_complement():
    labels = np.array([0, 1, 2, 0, 1, 2, 0])
    seen = []
    subsets = select_fold_subsets(labels, lambda rows: seen.append(rows) or [int(rows[0]), int(rows[-1])])
    assert [list(r) for r in seen] == [[1, 2, 4, 5], [0, 2, 3, 5, 6], [0, 1, 3, 4, 6]]
    fs = FoldSubsets(labels, subsets)
    assert list(fs(np.array([6, 0, 2, 3, 5]))) == [0, 6]  # fold 1's complement, in any order
    with pytest.raises(MethodError, match="not the complement of one stored fold"):
        fs(np.array([0, 1, 2]))


def test_stored_folds_replace_the_seeded_ones():
    X = _low_rank_proportions(60, 12, 1)
    fast = dict(ranks=(2,), lams=(1.0,), scales="auto", blend=0.0, cell_blend=0.0, calibration_folds=3)
    est = LowRankCompleter(random_state=0, **fast).fit(X)
    Xn = np.where(np.arange(12) < 3, X[:5], np.nan)
    w = np.full(12, 1 / 12)
    seeded = np.random.default_rng(0 + 104729).permutation(60) % 3  # the calibration's own folds
    plain = est.predict_new_models(Xn, weights=w)
    same = LowRankCompleter(random_state=0, **fast).fit(X).predict_new_models(
        Xn, weights=w, reselect=FoldSubsets(seeded, [[0, 1, 2]] * 3))
    assert np.allclose(plain.lower, same.lower) and np.allclose(plain.aggregate_upper, same.aggregate_upper)
    other = LowRankCompleter(random_state=0, **fast).fit(X).predict_new_models(
        Xn, weights=w, reselect=FoldSubsets(fold_labels(60, 4, 0), [[0, 1, 2]] * 4))
    assert not np.allclose(plain.aggregate_upper, other.aggregate_upper)  # four other folds: other scores
    with pytest.raises(MethodError, match="label 59 models"):
        LowRankCompleter(random_state=0, **fast).fit(X).predict_new_models(
            Xn, weights=w, reselect=FoldSubsets(fold_labels(59, 3, 0), [[0]] * 3))


def test_partial_models_are_observed_on_the_same_positions_of_each_fold_subset():
    labels = np.array([0, 1, 0, 1, 0, 1])
    fs = FoldSubsets(labels, [[5, 2, 7], [1, 3, 0]])
    rows0 = np.flatnonzero(labels != 0)
    full = fs.patterns(rows0, 2, 8)
    assert full.shape == (2, 8) and (np.flatnonzero(full[0]) == [2, 5, 7]).all() and (full[0] == full[1]).all()
    part = fs.restrict([[True, False, True], [False, True, False]])  # two partial models: positions 0 and 2; 1
    p0 = part.patterns(rows0, 3, 8)
    assert [list(np.flatnonzero(r)) for r in p0] == [[5, 7], [2], [5, 7]]  # cycles through the parts
    assert [list(np.flatnonzero(r)) for r in part.patterns(np.flatnonzero(labels != 1), 2, 8)] == [[0, 1], [3]]
    with pytest.raises(MethodError, match="not the complement"):
        part.patterns(np.array([0, 1]), 2, 8)


def test_partial_model_calibration_is_nested():
    X = _low_rank_proportions(60, 12, 1)
    fast = dict(ranks=(2,), lams=(1.0,), scales="auto", blend=0.0, cell_blend=0.0, calibration_folds=3)
    labels = fold_labels(60, 3, 0)
    fs = FoldSubsets(labels, [[0, 1, 2], [3, 4, 5], [6, 7, 8]])
    Xn = np.where(np.arange(12) < 2, X[:4], np.nan)  # ran positions 0 and 1 of the subset [0, 1, 2]
    w = np.full(12, 1 / 12)
    est = LowRankCompleter(random_state=0, **fast).fit(X)
    nested = est.predict_new_models(Xn, weights=w, reselect=fs.restrict([[True, True, False]]))
    plain_like = LowRankCompleter(random_state=0, **fast).fit(X).predict_new_models(
        Xn, weights=w, reselect=FoldSubsets(labels, [[0, 1], [0, 1], [0, 1]]))
    other = LowRankCompleter(random_state=0, **fast).fit(X).predict_new_models(
        Xn, weights=w, reselect=FoldSubsets(labels, [[0, 1], [3, 4], [6, 7]]))
    assert not np.allclose(nested.aggregate_upper, plain_like.aggregate_upper)
    assert np.allclose(nested.aggregate_upper, other.aggregate_upper) and np.allclose(nested.lower, other.lower)


@pytest.fixture(scope="module")
def nested_manifest():
    rng = np.random.default_rng(0)
    X = _low_rank_proportions(100, 12, 0)
    X[:40][rng.random((40, 12)) < 0.08] = np.nan  # new models complete: their true aggregate is known
    df = pd.DataFrame(X[:40], index=[f"m{i}" for i in range(40)], columns=[f"d{j}" for j in range(12)])
    return build_manifest(df, budget="3", n_random_subsets=10), X[40:], df


@pytest.mark.slow
def test_manifest_stores_a_subset_per_fold_and_round_trips(nested_manifest):
    manifest, _, df = nested_manifest
    cal = manifest["prediction"]["calibration"]
    K = CALIBRATION_FOLDS
    assert cal["n_folds"] == K and len(cal["fold"]) == 40 and sorted(set(cal["fold"])) == list(range(K))
    assert cal["fold"] == fold_labels(40, K, 0).tolist()  # the calibration's folds, seeded as the CV's
    assert manifest["prediction"]["cross_validation"]["n_splits"] == 5  # the evidence keeps 5 folds
    assert cal["reselection"] == FOLD_RESELECTION and len(cal["subsets"]) == K and all(len(s) == 3 for s in cal["subsets"])
    assert manifest["prediction"]["expected_error"]["nested"] is True
    back = json.loads(json.dumps(manifest))
    validate_manifest(back)
    assert back == manifest
    again = build_manifest(df.copy(), budget="3", n_random_subsets=10)
    assert json.dumps(again, sort_keys=True) == json.dumps(manifest, sort_keys=True)  # same inputs and seed


@pytest.mark.slow
def test_checkpoints_of_one_run_share_a_calibration_fold():
    # 8 training runs x 5 checkpoints (lm-eval's "<model>@<revision>" names): each run is held out whole
    assert run_groups(["a@s1", "a@s2", "b"]).tolist() == ["a", "a", "b"]
    assert run_groups(["a", "b", "c@s1"]) is None and run_groups(["a@s1", "a@s2"]) is None  # no siblings; one run
    # Checkpoints named with a step suffix are runs too (real names from Open LLM v2 and lm-eval users)
    names = ["EleutherAI/pythia-160m@step1000", "pythia-160m-step1000", "pythia-160m_step_2000", "m/checkpoint-26000",
             "m-ckpt80", "UCLA-AGI/Gemma-2-9B-It-SPPO-Iter3", "t-step-1431k-3T", "olmo-step1000-tokens4B", "m-epoch2",
             "m-global_step500", "m-iter-3"]
    assert [run_of(n) for n in names] == ["EleutherAI/pythia-160m", "pythia-160m", "pythia-160m", "m", "m",
                                          "UCLA-AGI/Gemma-2-9B-It-SPPO", "t", "olmo", "m", "m", "m"]
    # ... and only at the end of the name: a variant, a date, a version or a bare step is its own model
    for n in ["xkp24/Llama-3-8B-Instruct-SPPO-Iter2_bt_2b-table", "gpt-3.5-turbo-0613", "mistral-7b-v0.1", "step1000",
              "Qwen2.5-7B"]:
        assert run_of(n) == n
    assert run_groups(["r-step1", "r-step2", "s-step1"]).tolist() == ["r", "r", "s"]
    runs = np.repeat([f"org/run{r}" for r in range(8)], 5)
    labels = fold_labels(40, 10, 0, runs)
    assert all(len(set(labels[runs == r])) == 1 for r in set(runs)) and sorted(set(labels)) == list(range(8))
    assert (fold_labels(40, 10, 0, np.full(40, "org/run0")) == fold_labels(40, 10, 0)).all()  # one run: plain folds
    X = _low_rank_proportions(40, 12, 1)
    df = pd.DataFrame(X, index=[f"{r}@step{i % 5}" for i, r in enumerate(runs)], columns=[f"d{j}" for j in range(12)])
    manifest = build_manifest(df, budget="3", n_random_subsets=10)
    cal = manifest["prediction"]["calibration"]
    fold = np.array(cal["fold"])
    assert all(len(set(fold[runs == r])) == 1 for r in set(runs)) and cal["n_folds"] == 8
    assert cal["grouped_by"].startswith("training run") and "8 runs" in cal["grouped_by"]
    validate_manifest(json.loads(json.dumps(manifest)))
    assert "grouped_by" not in build_manifest(df.set_axis([f"m{i}" for i in range(40)]), budget="3",
                                              n_random_subsets=10)["prediction"]["calibration"]


@pytest.mark.parametrize("edit, msg", [
    (lambda c: c["fold"].pop(), "labels 39 models"),
    (lambda c: c["subsets"].pop(), "one subset per fold"),
    (lambda c: c["subsets"][0].append("nope"), "subset of fold 0"),
    (lambda c: c["fold"].__setitem__(0, CALIBRATION_FOLDS + 2), "one subset per fold"),
])
def test_validation_rejects_broken_fold_subsets(nested_manifest, edit, msg):
    bad = copy.deepcopy(nested_manifest[0])
    edit(bad["prediction"]["calibration"])
    with pytest.raises(HarnessExtError, match=msg):
        validate_manifest(bad)


@pytest.mark.slow
def test_predict_calibrates_on_the_stored_fold_subsets(nested_manifest, monkeypatch):
    manifest, X_new, _ = nested_manifest
    cal = manifest["prediction"]["calibration"]
    calls = []
    original = FoldSubsets.__call__

    def spy(self, rows):
        out = original(self, rows)
        calls.append([manifest["datasets"][j]["name"] for j in out])
        return out

    monkeypatch.setattr(FoldSubsets, "__call__", spy)
    subset = [s["name"] for s in manifest["subset"]]
    cols = [d["name"] for d in manifest["datasets"]]
    raw = pd.DataFrame(np.where(np.isin(cols, subset), X_new[:6], np.nan), columns=cols, index=[f"n{i}" for i in range(6)])
    raw.iloc[0, cols.index(subset[0])] = np.nan  # one model ran part of the subset: its own call, same fold subsets
    res = predict_scores(manifest, raw)
    assert sorted(calls) == sorted(cal["subsets"] * 2)  # per fold: the stored subset, for each of the two calls
    assert not any("fold subsets" in w or "older reduce" in w for w in res.warnings)
    agg = res.aggregate.set_index("model")
    assert (agg["lower"] < agg["aggregate"]).all() and (agg["aggregate"] < agg["upper"]).all()

    old = copy.deepcopy(manifest)
    del old["prediction"]["calibration"]
    calls.clear()
    res_old = predict_scores(old, raw)
    assert not calls and any("older reduce" in w for w in res_old.warnings)
    other = copy.deepcopy(manifest)
    other["source"]["models"] = list(reversed(other["source"]["models"]))
    assert any("not the one the manifest's fold subsets" in w for w in predict_scores(other, raw).warnings)


@pytest.mark.slow
def test_model_sample_gets_fold_labels_for_every_model(nested_manifest):
    _, X_new, df = nested_manifest
    manifest = build_manifest(df, budget="3", n_random_subsets=5, max_models=31)
    cal = manifest["prediction"]["calibration"]
    assert len(cal["fold"]) == 40 and sorted(set(cal["fold"])) == list(range(CALIBRATION_FOLDS)) and "selected_on" in cal
    validate_manifest(json.loads(json.dumps(manifest)))
    cols = [d["name"] for d in manifest["datasets"]]
    subset = [s["name"] for s in manifest["subset"]]
    raw = pd.DataFrame(np.where(np.isin(cols, subset), X_new[:6], np.nan), columns=cols)
    assert not any("fold subsets" in w for w in predict_scores(manifest, raw).warnings)


@pytest.mark.slow
def test_nested_aggregate_intervals_cover_new_models(nested_manifest):
    """Synthetic low-rank data with known noise: 60 new models, 90% aggregate intervals through reduce -> predict."""
    manifest, X_new, _ = nested_manifest
    cols = [d["name"] for d in manifest["datasets"]]
    subset = [s["name"] for s in manifest["subset"]]
    w = np.array([d["weight"] for d in manifest["datasets"]])
    raw = pd.DataFrame(np.where(np.isin(cols, subset), X_new, np.nan), columns=cols)
    agg = predict_scores(manifest, raw).aggregate
    truth = X_new @ w
    cover = float(((agg["lower"].to_numpy() <= truth) & (truth <= agg["upper"].to_numpy())).mean())
    assert 0.8 <= cover <= 1.0, cover  # 60 models: a binomial sd of 0.04 around 0.9


def test_pooled_calibration_keeps_the_nested_and_the_plain_scores():
    """POOL_PLAIN_SCORES: each fold's models are scored on the subset chosen without them and on the new models'
    subset, from the same fold fit, and CV+ keeps both (the union of the two calibrations in the same folds);
    its aggregate interval lies between theirs."""
    X = _low_rank_proportions(60, 12, 2)
    fast = dict(ranks=(2,), lams=(1.0,), scales="auto", blend=0.0, cell_blend=0.0, calibration_folds=3)
    Xn = np.where(np.arange(12) < 3, X[:5], np.nan)
    w = np.full(12, 1 / 12)
    labels = fold_labels(60, 3, 0)
    other = [[3, 4, 5], [0, 6, 7], [8, 9, 1]]

    def run(subsets, pool):
        est = LowRankCompleter(random_state=0, **fast).fit(X)
        p = est.predict_new_models(Xn, weights=w, reselect=FoldSubsets(labels, subsets, pool=pool))
        return p, est._cal_cache[1][6]

    p_nested, nested = run(other, False)
    p_plain, plain = run([[0, 1, 2]] * 3, False)
    p_pool, pooled = run(other, True)
    for key in ("cell", "agg"):
        got = sorted(zip(pooled[f"{key}_scores"], pooled[f"{key}_folds"]))
        want = sorted(zip(np.r_[nested[f"{key}_scores"], plain[f"{key}_scores"]],
                          np.r_[nested[f"{key}_folds"], plain[f"{key}_folds"]]))
        assert np.allclose(np.array(got), np.array(want))
    assert np.array_equal(np.sort(pooled["cell_cols"]), np.sort(np.r_[nested["cell_cols"], plain["cell_cols"]]))
    width = {k: p.aggregate_upper - p.aggregate_lower for k, p in (("n", p_nested), ("p", p_plain), ("x", p_pool))}
    assert np.all(width["x"] <= np.maximum(width["n"], width["p"]) + 1e-9)
    assert np.all(width["x"] >= np.minimum(width["n"], width["p"]) - 1e-9)
    assert np.allclose(p_pool.mean, p_nested.mean)  # only the intervals change
    assert FoldSubsets(labels, other, pool=True).restrict(np.ones((1, 3), bool)).pool


def test_reselection_falls_back_to_the_design_criterion_past_its_budget(monkeypatch):
    import harness_ext.methods.engine.newmodel_intervals as N

    assert N.reselection_mode(N.SAME_RESELECTION_CELLS) == (N.FOLD_RESELECTION, None)
    mode, rule = N.reselection_mode(N.SAME_RESELECTION_CELLS + 1)
    assert mode == "design" and rule["cells"] == N.SAME_RESELECTION_CELLS + 1 and "design criterion" in rule["reason"]
    monkeypatch.setattr(N, "SAME_RESELECTION_CELLS", 100)  # the manifest says which it used, and why
    df = pd.DataFrame(_low_rank_proportions(30, 8, 2), index=[f"m{i}" for i in range(30)],
                      columns=[f"d{j}" for j in range(8)])
    cal = build_manifest(df, budget="2", n_random_subsets=5)["prediction"]["calibration"]
    assert cal["reselection"] == "design" and cal["reselection_rule"]["budget"] == 100
    assert cal["n_folds"] == 5  # the cross-validation's folds, whose fits are already made


@pytest.mark.slow
def test_thin_datasets_are_kept_and_said_by_reduce_as_by_weights():
    """A dataset one model ran is kept and predicted from column-level information; the manifest says so in the
    words harness-ext weights' completion uses (manifest.thin_columns, one rule for both)."""
    from harness_ext.methods.weighting.complete import complete_matrix

    X = _low_rank_proportions(30, 8, 3)
    X[1:, 5] = np.nan  # d5: one model only
    df = pd.DataFrame(X, index=[f"m{i}" for i in range(30)], columns=[f"d{j}" for j in range(8)])
    manifest = build_manifest(df, budget="2", n_random_subsets=5)
    said = [w for w in manifest["warnings"] if "fewer than two models" in w]
    assert said == ["1 dataset has a result from fewer than two models and is predicted from column-level "
                    "information only: d5"]
    assert "d5" in [d["name"] for d in manifest["datasets"]]
    assert complete_matrix(df).notes == (said[0].replace("dataset", "column", 1),)
