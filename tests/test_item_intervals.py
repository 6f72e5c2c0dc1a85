"""Design-based item intervals: nominal coverage on finite populations with a known truth.

The estimand is a model's mean over a task's fixed items; the randomness is only the draw of the
sampled items (simple random sampling without replacement), as when a new model answers ``n`` of ``N``.
"""

import numpy as np
import pytest

from harness_ext.methods.engine.item_estimators import (AIPW, RandomLearn, _design_variance, _residual_variance, _z,
                                                        design_interval, random_items)
from harness_ext.methods.engine.item_irt_estimators import GPIRT, IRT, PIRT


def _draws(N, n, count, seed=0):
    rng = np.random.default_rng(seed)
    return np.array([rng.permutation(N)[:n] for _ in range(count)])


def _finite_population_coverage(p, N=1000, n=50, count=3000):
    """Coverage of the skew-corrected and of the plain t interval for the mean of a 0/1 population."""
    pop = np.zeros(N)
    pop[: int(round(p * N))] = 1.0
    Y = pop[_draws(N, n, count)]
    est, truth = Y.mean(axis=1), pop.mean()
    lo, hi, se = design_interval(est, Y, N, 0.9, binary=True)
    h = _z(0.9, n - 1) * np.sqrt(_design_variance(_residual_variance(Y, True), n, N))
    assert np.allclose(se, h / _z(0.9, n - 1))
    return float(np.mean((lo <= truth) & (truth <= hi))), float(np.mean((est - h <= truth) & (truth <= est + h)))


@pytest.mark.parametrize("p", [0.1, 0.2, 0.8, 0.9])
def test_design_interval_covers_skewed_finite_populations(p):
    # 0/1 items far from 1/2: the plain t interval misses on the short side (about 0.87-0.89 here).
    cover, cover_t = _finite_population_coverage(p)
    assert 0.88 <= cover <= 0.93
    assert abs(cover - 0.9) <= abs(cover_t - 0.9) + 0.01


def test_design_interval_is_the_t_interval_without_skew():
    resid = np.tile([-1.0, 1.0], (3, 10))  # symmetric residuals: no shift
    est = np.array([0.2, 0.5, 0.7])
    lo, hi, se = design_interval(est, resid, 200, 0.9)
    assert (lo + hi) / 2 == pytest.approx(est)
    assert (hi - lo) / 2 == pytest.approx(_z(0.9) * se)


def _stratified_population(n_models=240, n_items=600, seed=0):
    """0/1 answers of a two-dimensional logistic item-response model, models sorted by their mean."""
    items = np.random.default_rng(4321)
    a = items.gamma(2.0, 0.6, size=(n_items, 2))
    b = items.normal(size=n_items)
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(n_models, 2))
    R = (rng.random((n_models, n_items)) < 1 / (1 + np.exp(-(theta @ a.T - b)))).astype(float)
    return R[np.argsort(R.mean(axis=1), kind="stable")]


def test_aipw_covers_models_stronger_than_every_source():
    # The extrapolation split: sources the weakest half, targets the strongest 30%, every target above
    # every source. The working model is biased there; the design-based interval is not.
    R = _stratified_population()
    S, T = R[:120], R[-72:]
    truth = T.mean(axis=1)
    assert truth.min() > S.mean(axis=1).max()
    hits = []
    for seed in range(40):
        items = random_items(R.shape[1], 50, seed)
        res = AIPW().fit(S, items).predict(T[:, items])
        hits.append((res.lower <= truth) & (truth <= res.upper))
    assert 0.87 <= np.mean(hits) <= 0.93


def test_random_learn_with_too_few_sources_gives_the_whole_range():
    # Two source models cannot calibrate a 90% split-conformal radius (it needs nine).
    rng = np.random.default_rng(0)
    S = (rng.random((2, 200)) < 0.6).astype(float)
    S[1] = S[0]  # identical sources: a leave-one-out radius of zero
    res = RandomLearn().fit(S, np.arange(20)).predict(S[:, :20])
    assert np.all(res.lower == 0.0) and np.all(res.upper == 1.0)
    nine = (rng.random((9, 200)) < 0.6).astype(float)
    assert np.isfinite(RandomLearn().fit(nine, np.arange(20)).radius_)


def test_cross_task_learn_with_too_few_sources_gives_the_whole_range():
    from harness_ext.methods.engine.item_crosstask import CrossTaskLearn

    rng = np.random.default_rng(1)
    S = (rng.random((3, 200)) < 0.6).astype(float)
    other = (rng.random((3, 100)) < 0.5).astype(float)
    items, o_items = np.arange(20), np.arange(10)
    est = CrossTaskLearn().fit(S, items, others=[(other, o_items)])
    res = est.predict(S[:, items], others=[other[:, o_items]])
    assert np.all(res.lower == 0.0) and np.all(res.upper == 1.0) and np.isinf(est.radius_)


@pytest.mark.parametrize("cls", [IRT, PIRT, GPIRT])
def test_irt_frontier_calibration_is_off_by_default(cls):
    assert cls().frontier_calibration is False


def test_design_interval_with_constant_residuals_is_a_point():
    lo, hi, se = design_interval(np.array([0.4]), np.full((1, 10), 0.25), 100, 0.9)
    assert lo[0] == hi[0] == pytest.approx(0.4) and se[0] == 0.0
