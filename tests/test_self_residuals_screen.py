"""``benchmarks/quality_self_residuals.py``: a new model's own subset residuals, the screen's diagnostic."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def qsr():
    from conftest import import_benchmark

    return import_benchmark("quality_self_residuals")


def test_departure_is_the_mean_weighted_residual_times_the_datasets_not_run(qsr):
    R = np.array([[0.1, 0.3, np.nan, np.nan], [np.nan, -0.2, np.nan, np.nan]])
    W = np.array([[1.0, 1.0, 2.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    O = ~np.isnan(R)
    have = np.array([[True, True, True, True], [True, True, True, False]])
    # row 0: mean of 0.1 and 0.3 (weights 1) = 0.2, one weighted dataset not run (the last has weight 0)
    # row 1: -0.2, two datasets not run that it has
    assert np.allclose(qsr.departure(R, W, O, have), [0.2, -0.4])


def test_loo_residuals_fill_only_the_observed_cells_and_follow_the_population_pattern(qsr):
    """Each residual is the cell minus the engine's prediction with that cell hidden. A model stronger than every
    fitted one but on the population's own (rank-1) pattern departs little: the residuals see how a model departs
    from the population's pattern, not how far beyond its level it lies."""
    from harness_ext.methods.engine.frontier_aggregate import engine_prediction
    from harness_ext.methods.pounce import make_predictor

    rng = np.random.default_rng(0)
    m, d = 60, 8
    u = rng.normal(size=(m + 1, 1))
    u[-1] = u[:-1].max() + 2.0  # a stronger model
    X = np.clip(0.5 + 0.08 * (u @ rng.uniform(0.5, 1.5, (1, d))) + rng.normal(0, 0.005, (m + 1, d)), 0.01, 0.99)
    est = make_predictor("lowrank", random_state=0).fit(X[:m])
    x_in = np.where(np.arange(d) < 4, X[m:], np.nan)
    z_in = est.transform_.transform(x_in)
    R = qsr.loo_residuals(est, est.fit_, est.Z_, z_in, x_in, 0.0)
    assert np.array_equal(~np.isnan(R), ~np.isnan(x_in))
    hidden = z_in.copy()
    hidden[:, 0] = np.nan
    _, mz = engine_prediction(est.fit_, est.Z_, hidden, 0.0)
    assert R[0, 0] == pytest.approx(x_in[0, 0] - est.transform_.inverse_transform(mz)[0, 0])
    assert np.abs(R[~np.isnan(R)]).max() < 0.02
