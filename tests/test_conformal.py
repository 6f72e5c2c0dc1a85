"""CV+ bounds and the held-out-model calibration of new-model intervals (synthetic low-rank data, known noise)."""

from __future__ import annotations

import numpy as np
import pytest

from harness_ext.errors import MethodError
from harness_ext.methods.engine.completion import LowRankCompleter
from harness_ext.methods.engine.conformal import (conformal_quantile, coverage, cv_plus_bounds, mondrian_groups, mondrian_quantiles,
                                          rank_position)


def test_cv_plus_with_one_fit_is_split_conformal():
    s = np.random.default_rng(0).exponential(size=57)
    lo, hi = cv_plus_bounds(np.zeros((1, 3)), np.full((1, 3), 2.0), s, np.zeros(57, int), 0.9)
    assert np.allclose(hi, 2.0 * conformal_quantile(s, 0.9))
    assert np.allclose(lo, -hi)


def test_cv_plus_applies_each_score_to_its_own_fold_fit():
    # fold 0 predicts 0, fold 1 predicts 10: the bounds mix both fits' intervals
    centres = np.array([[0.0], [10.0]])
    lo, hi = cv_plus_bounds(centres, np.ones((2, 1)), np.full(40, 1.0), np.repeat([0, 1], 20), 0.9)
    assert lo[0] == -1.0 and hi[0] == 11.0
    with pytest.raises(MethodError):
        cv_plus_bounds(centres, np.ones((2, 1)), [], [], 0.9)


@pytest.mark.slow
def test_interpolated_rank_covers_at_the_level_not_above_it():
    # n = 40 exchangeable scores: the conservative ceil rule (37th of 40) covers 37/41 = 0.902;
    # the interpolated rank 36.9 covers 0.900 (mean over 40,000 calibration sets, se 0.0015)
    rng = np.random.default_rng(3)
    cal, test = np.abs(rng.standard_normal((40_000, 40))), np.abs(rng.standard_normal(40_000))
    q = np.array([conformal_quantile(c, 0.9) for c in cal])
    assert abs((test <= q).mean() - 0.9) < 0.005
    assert np.allclose(q, np.sort(cal, 1)[:, 35] + 0.9 * (np.sort(cal, 1)[:, 36] - np.sort(cal, 1)[:, 35]))
    j, f = rank_position(np.array([0.5, 1.0, 36.9, 40.0, 41.0]), 40)
    assert j.tolist() == [0, 0, 35, 39, 39] and np.allclose(f, [0, 0, 0.9, 0, 0])


def test_mondrian_and_cv_plus_use_the_same_interpolated_rank():
    rng = np.random.default_rng(4)
    s, g = rng.exponential(size=150), np.repeat([0, 1, 2], [60, 75, 15])
    q = mondrian_quantiles(s, g, 4, 0.9, min_count=20)
    assert np.allclose(q, [conformal_quantile(s[:60], 0.9), conformal_quantile(s[60:135], 0.9),
                           conformal_quantile(s, 0.9), conformal_quantile(s, 0.9)])
    lo, hi = cv_plus_bounds(np.zeros((1, 1)), np.ones((1, 1)), s[:60], np.zeros(60, int), 0.9)
    assert np.isclose(hi[0], q[0]) and np.isclose(lo[0], -q[0])


def test_thin_datasets_are_calibrated_with_datasets_of_similar_evidence():
    # counts 30 and 25: their own groups; the thin ones sorted by count (3, 4, 5, 8 | 9, 12) in runs of >= 20
    labels = mondrian_groups([30, 5, 8, 0, 12, 3, 25, 9, 4], min_count=20)
    assert labels[0] == 0 and labels[6] == 6 and labels[3] == -1
    assert len({labels[i] for i in (5, 8, 1, 2)}) == 1 and labels[7] == labels[4] != labels[1]
    assert (mondrian_groups([30, 5, 8]) == [0, -1, -1]).all()  # 13 thin scores: the pool of every score
    assert len(set(mondrian_groups([5] * 7))) == 1  # a short last run joins the one before
    # The thin group's quantile comes from its own scores: large errors there, small in the well-observed dataset
    rng = np.random.default_rng(5)
    g = np.r_[np.zeros(200, int), np.repeat([1, 2, 3, 4], 6)]
    s = np.r_[rng.exponential(size=200), 10 * rng.exponential(size=24)]
    q = mondrian_quantiles(s, g, 5, 0.9, min_count=20)
    assert np.allclose(q[1:], conformal_quantile(s[200:], 0.9)) and q[1] > 3 * conformal_quantile(s, 0.9)


def _low_rank_proportions(m, d, seed, noise=0.3):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(m, 2)) @ rng.normal(size=(d, 2)).T + 0.5 * rng.normal(size=(m, 1)) + rng.normal(size=(1, d))
    return 1 / (1 + np.exp(-(Z + noise * rng.standard_normal((m, d)))))


FAST = dict(ranks=(2,), lams=(1.0,), scales="auto", blend=0.0, cell_blend=0.0)


@pytest.mark.parametrize("new_intervals", ["cv+", "split"])
def test_new_model_coverage_on_synthetic_low_rank(new_intervals):
    cells, aggs = [], []
    w = np.full(16, 1 / 16)
    for seed in range(4):
        X = _low_rank_proportions(140, 16, seed)
        est = LowRankCompleter(random_state=seed, new_intervals=new_intervals, **FAST).fit(X[:100])
        Xn = np.where(np.arange(16) < 3, X[100:], np.nan)
        p = est.predict_new_models(Xn, weights=w)
        cells.append(coverage(X[100:, 3:], p.lower[:, 3:], p.upper[:, 3:]))
        aggs.append(coverage(X[100:] @ w, p.aggregate_lower, p.aggregate_upper))
        assert (p.lower[:, 3:] < p.upper[:, 3:]).all()
    assert 0.85 <= np.mean(cells) <= 0.95, cells
    assert 0.8 <= np.mean(aggs) <= 0.98, aggs


def test_reselect_calibrates_each_fold_on_its_own_subset():
    X = _low_rank_proportions(60, 12, 1)
    est = LowRankCompleter(random_state=0, calibration_folds=3, **FAST).fit(X)
    seen = []

    def reselect(rows):
        seen.append(np.asarray(rows))
        return [0, 1, 2]

    Xn = np.where(np.arange(12) < 3, X[:5], np.nan)
    p = est.predict_new_models(Xn, weights=np.full(12, 1 / 12), reselect=reselect)
    assert len(seen) == 3 and all(r.size == 40 for r in seen)
    assert len(np.unique(np.concatenate(seen))) == 60  # every model is held out of exactly one fold's selection
    # a fixed subset equal to the new models' pattern gives the plain calibration's scores
    q = est.predict_new_models(Xn, weights=np.full(12, 1 / 12))
    assert np.allclose(p.lower, q.lower) and np.allclose(p.aggregate_upper, q.aggregate_upper)


def test_calibration_weights_recover_the_base_weights_of_per_model_aggregates():
    from harness_ext.methods.engine.newmodel_intervals import calibration_weights

    base = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    have = np.array([[1, 1, 0, 1, 0], [0, 1, 1, 1, 0], [1, 0, 0, 1, 0]], bool)  # dataset 4: no model ran it
    W = np.where(have, base, 0.0) / np.where(have, base, 0.0).sum(1, keepdims=True)  # renormalised per model
    w = calibration_weights(W)
    assert w[4] == 0 and np.allclose(w[:4] / base[:4], w[0] / base[0])  # the base weights up to a constant
    assert not np.allclose(W.mean(0)[:4] / base[:4], W.mean(0)[0] / base[0])  # the column mean is not
    assert np.allclose(calibration_weights(np.tile(base, (3, 1))), base / base.max())
    assert np.allclose(calibration_weights(-np.tile(base, (2, 1))), -base / base.max())  # signs kept


def test_sparse_per_model_aggregate_coverage_on_synthetic_low_rank():
    """Known noise, columns run by 15-95% of models, each new model's aggregate over what it ran: 88-95% pooled."""
    hits = []
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        X = _low_rank_proportions(200, 16, seed)
        p_obs = np.linspace(0.95, 0.15, 16)
        p_obs[:3] = 0.9
        Xs = np.where(rng.random(X.shape) < p_obs, X, np.nan)
        est = LowRankCompleter(random_state=seed, **FAST).fit(Xs[:120])
        Xt = Xs[120:]
        have = ~np.isnan(Xt)
        W = np.where(have, np.linspace(1, 3, 16), 0.0)
        W /= W.sum(1, keepdims=True)
        Xn = np.where(np.arange(16) < 3, Xt, np.nan)
        ok = (~np.isnan(Xn)).any(1) & (have & np.isnan(Xn)).any(1)
        p = est.predict_new_models(Xn, weights=W)
        truth = (np.where(have, Xt, 0.0) * W).sum(1)
        hits.append(((truth >= p.aggregate_lower) & (truth <= p.aggregate_upper))[ok])
    # Models at the edges of the training population (outside its quartiles of subset position) get the
    # frontier-calibrated interval when it is wider, so a random split covers a little above nominal
    # (docs/frontier.md, "The price inside the population"): the upper bound allows that, not more.
    assert 0.88 <= np.concatenate(hits).mean() <= 0.95, [h.mean() for h in hits]
