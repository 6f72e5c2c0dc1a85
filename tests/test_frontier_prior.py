"""The cross-benchmark frontier allowance: raises the aggregate upper bound of frontier models only."""

from __future__ import annotations

import numpy as np
import pytest

from harness_ext.methods.engine import frontier_prior
from harness_ext.methods.engine.completion import LowRankCompleter
from harness_ext.methods.engine.frontier_report import frontier_warnings
from test_frontier import _population, _weak_frontier_split


def _off(monkeypatch):
    monkeypatch.setattr(frontier_prior, "FRONTIER_ALLOWANCE", {lv: None for lv in frontier_prior.FRONTIER_ALLOWANCE})


def test_allowance_table_and_formula():
    q = frontier_prior.FRONTIER_ALLOWANCE
    assert all(v is not None and v > 0 for v in q.values())
    assert q[0.8] <= q[0.9] <= q[0.95]
    assert frontier_prior.allowance(0.9) == q[0.9] and frontier_prior.allowance(0.85) == q[0.9]
    assert frontier_prior.allowance(0.99) == q[0.95] and frontier_prior.allowance(0.5) == q[0.8]
    assert np.allclose(frontier_prior.raised_upper(np.array([1.0, 1.0]), np.array([3.0, 1.5]), np.array([1.0, 1.0]), 1.0),
                       [3.0, 2.0])  # raised, never lowered
    g = frontier_prior.share(np.array([0.5, 0.0, 0.0, -0.3, 0.0]), np.array([0.1, 0.875, 0.5, 0.9, 1.0]), 0.75)
    assert np.allclose(g, [0.0, 0.5, 0.0, 0.0, 1.0])  # 0 below the edge or flagged below, 1 above every model


@pytest.mark.slow
def test_allowance_widens_a_stronger_population_it_could_not_see(monkeypatch):
    """Fit on the weakest 50% by the full aggregate, predict the strongest 30% from 3 datasets that load 0.6 times as
    much on the strength factor (4 populations of 200: a hidden shift the folds inside the training models see little
    of). Only the aggregate upper bounds of models placed high move, and the pooled coverage enters the 85-95% band:
    0.842 (202 of 240) without the allowance, 0.867 (208 of 240) with it (the median aggregate width 0.226 -> 0.232).
    With subset datasets loading 0.4 times: 0.671 -> 0.721; 0.25 times: 0.550 -> 0.567 (far from the band: there the
    subset shows too little of the strength for a prior learnt on real leaderboards)."""
    hits, n = {}, 0
    for seed in range(4):
        X, w, train, test, truth, X_new = _weak_frontier_split(seed, 0.6)
        p = {}
        for on in (False, True):
            monkeypatch.undo()
            if not on:
                _off(monkeypatch)
            est = LowRankCompleter(random_state=0).fit(X[train])
            p[on] = est.predict_new_models(X_new, weights=w)
            hits[on] = hits.get(on, 0) + int(((truth >= p[on].aggregate_lower) & (truth <= p[on].aggregate_upper)).sum())
        a, b = p[True], p[False]
        assert np.array_equal(a.aggregate, b.aggregate) and np.array_equal(a.aggregate_lower, b.aggregate_lower)
        assert np.array_equal(a.lower, b.lower) and np.array_equal(a.upper, b.upper)  # cells untouched
        assert (a.aggregate_upper >= b.aggregate_upper).all()
        raised = a.aggregate_upper > b.aggregate_upper
        if raised.any():
            prior = est.frontier_["prior"]
            assert set(prior.raised) == set(np.flatnonzero(raised).tolist())
            said = frontier_warnings([f"m{i}" for i in range(test.size)], a.frontier, est.frontier_)
            assert sum("learnt on other benchmarks' frontier models" in s for s in said) == raised.sum()
        n += test.size
    assert hits[True] >= hits[False] + 4 and 0.85 * n <= hits[True] <= 0.95 * n, (hits, n)


@pytest.mark.slow
def test_allowance_leaves_models_inside_the_population_untouched(monkeypatch):
    """Random held-out models of the same population: the cells, the lower bounds and the aggregate upper bound of
    every model the allowance did not raise are bit for bit those without it; models predicted below the training
    models' median, or flagged below the range, are never raised."""
    X, _ = _population(m=200, d=16, seed=3)
    perm = np.random.default_rng(0).permutation(X.shape[0])
    train, test = perm[:160], perm[160:]
    keep = np.zeros(X.shape[1], bool)
    keep[[0, 5, 10]] = True
    w = np.full(X.shape[1], 1.0 / X.shape[1])
    X_new = np.where(keep, X[test], np.nan)
    est = LowRankCompleter(random_state=0).fit(X[train])
    on = est.predict_new_models(X_new, weights=w)
    raised = set(getattr(est.frontier_.get("prior"), "raised", ()))
    _off(monkeypatch)
    off = LowRankCompleter(random_state=0).fit(X[train]).predict_new_models(X_new, weights=w)
    same = np.array([i not in raised for i in range(test.size)])
    assert np.array_equal(on.aggregate_upper[same], off.aggregate_upper[same])
    assert (on.aggregate_upper[~same] > off.aggregate_upper[~same]).all()
    assert np.array_equal(on.aggregate_lower, off.aggregate_lower) and np.array_equal(on.upper, off.upper)
    low = np.flatnonzero((on.aggregate < np.median(X[train] @ w)) | (on.frontier < 0))
    assert low.size >= 10 and not raised & set(low.tolist())
    assert same.sum() >= 0.5 * test.size  # most of a random split is inside the population


def test_calibration_pools_benchmarks_with_equal_weight_and_leaves_families_out():
    """``benchmarks/quality_frontier_prior.py``: each benchmark weighs 1 whatever its number of test models, only
    models with the full allowance are scored, and a benchmark's family is left out with it."""
    from conftest import import_benchmark

    qfp = import_benchmark("quality_frontier_prior")

    def rec(errors, share=1.0):
        e = np.asarray(errors, dtype=float)
        return dict(truth=e, pred=np.zeros_like(e), lo=-np.ones_like(e), hi=np.ones_like(e), sd=np.ones_like(e),
                    share=np.full(e.size, share), usable=np.ones(e.size, bool))

    records = {("big", "frontier"): rec(np.zeros(1000)), ("small", "frontier"): rec([10.0] * 10),
               ("rewardbench", "frontier"): rec([5.0] * 10), ("rewardbench_2", "frontier"): rec([5.0] * 10),
               ("half", "frontier"): rec([100.0] * 10, share=0.5)}
    # big and small weigh the same: the 90% quantile lies in the top half (small's or the reward benchmarks' 5 or 10)
    assert qfp.pooled_quantile(records, (), 0.9) == 10.0
    assert qfp.pooled_quantile(records, ("small",), 0.3) == 0.0
    # the share-0.5 models are never scored; leaving RewardBench out takes RewardBench 2 with it
    assert qfp.pooled_quantile(records, {"rewardbench"} | qfp.FAMILIES["rewardbench"], 0.99) == 10.0
    cov, width = qfp.figures(records[("small", "frontier")], 10.0)
    assert cov == 1.0 and width == 11.0
    # --pool: the constant is pooled over the named benchmarks only; the others are measured with it
    import io

    assert qfp.report(records, 0.9, file=io.StringIO()) == 10.0
    assert qfp.report(records, 0.9, file=io.StringIO(), pool=["big", "rewardbench", "rewardbench_2"]) == 5.0


@pytest.mark.slow
def test_exchangeable_models_near_the_top_get_little_allowance(monkeypatch):
    """A model drawn like the training models has a predicted-strength quantile uniform on [0, 1], so its expected
    share is ``(1 - PRIOR_EDGE) / 2`` (0.05) and a model in the training models' top quarter but below the edge gets
    none. On random 80/20 splits of 4 same-population matrices (200 models, 3 subset datasets) the allowance raises
    only models placed above the edge (4 of 160) and leaves every split's median aggregate width as it is without it
    (from the flag's quantile, 0.75, it raised 5)."""
    from harness_ext.methods.engine import frontier

    edge = frontier_prior.PRIOR_EDGE
    u = np.linspace(0.0, 1.0, 100001)
    g = frontier_prior.share(np.zeros_like(u), u, edge)
    assert abs(g.mean() - (1.0 - edge) / 2.0) < 1e-3 and g.mean() <= 0.05 + 1e-3
    assert not g[(u >= 0.75) & (u <= edge)].any()

    placed, orig = {}, frontier._placement

    def record(*args):
        placed["u"] = orig(*args)
        return placed["u"]

    monkeypatch.setattr(frontier, "_placement", record)
    keep = np.zeros(16, bool)
    keep[[0, 5, 10]] = True
    w = np.full(16, 1.0 / 16)
    n_raised, n_near = 0, 0
    for seed in range(4):
        X, _ = _population(m=200, d=16, seed=seed)
        perm = np.random.default_rng(seed).permutation(X.shape[0])
        train, test = perm[:160], perm[160:]
        X_new = np.where(keep, X[test], np.nan)
        est = LowRankCompleter(random_state=0).fit(X[train])
        on = est.predict_new_models(X_new, weights=w)
        raised = np.array(sorted(getattr(est.frontier_.get("prior"), "raised", ())), dtype=int)
        assert (placed["u"][raised] > edge).all()
        n_raised += raised.size
        n_near += int(((placed["u"] >= 0.75) & (placed["u"] <= edge)).sum())
        with monkeypatch.context() as m:
            _off(m)
            off = LowRankCompleter(random_state=0).fit(X[train]).predict_new_models(X_new, weights=w)
        width = [np.median(p.aggregate_upper - p.aggregate_lower) for p in (on, off)]
        assert width[0] <= 1.01 * width[1], (seed, width)
    assert n_near >= 10 and n_raised <= 8, (n_near, n_raised)
