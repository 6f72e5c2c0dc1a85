"""CV+ bounds and the held-out-model calibration of new-model intervals (synthetic low-rank data, known noise)."""

from __future__ import annotations

import numpy as np
import pytest

from harness_ext.errors import MethodError
from harness_ext.methods.completion import LowRankCompleter
from harness_ext.methods.conformal import conformal_quantile, coverage, cv_plus_bounds


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
