"""``GregAIPW`` (greg.py) on a synthetic finite population: with a noisy working model its variance over draws is below
the difference estimator's (``DifficultyAIPW``) and its 90% interval covers about 0.90; with ``b = 1`` forced it is
``DifficultyAIPW`` exactly.

    HARNESS_EXT_NO_PROGRESS=1 python -m pytest -q -p no:cacheprovider benchmarks/screens/greg/test_greg.py
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import greg  # noqa: E402
from harness_ext.methods.engine.item_crosstask import DifficultyAIPW  # noqa: E402
from harness_ext.methods.engine.item_estimators import random_items  # noqa: E402


def population(seed=0, n_total=600, n_sources=30):
    """0/1 answers of ``n_sources`` source models and one target on ``n_total`` items of a finite population: the
    items' difficulty drives every model a little and the target weakly, so the working model fitted on 40 answers
    carries mostly noise (its best slope is well below 1)."""
    rng = np.random.default_rng(seed)
    d = rng.normal(size=n_total)
    ability = rng.normal(size=n_sources)
    S = (rng.random((n_sources, n_total)) < 1 / (1 + np.exp(-(ability[:, None] - d[None, :])))).astype(float)
    y = (rng.random(n_total) < 1 / (1 + np.exp(-(0.3 - 0.15 * d)))).astype(float)
    return S, y


def draws(cls, S, y, n_draws, n=50):
    est, covered = [], []
    for r in range(n_draws):
        items = random_items(S.shape[1], n, 1000 + r)
        e = cls(level=0.90).fit(S, items).predict(y[None, items])
        est.append(e.estimate[0])
        covered.append(e.lower[0] <= y.mean() <= e.upper[0])
    return np.array(est), np.array(covered)


def test_slope_one_is_difficulty_aipw_exactly():
    S, y = population(1)
    Y = np.vstack([y, 1 - y, S[0]])
    for seed in range(3):
        items = random_items(S.shape[1], 50, seed)
        a = DifficultyAIPW(level=0.90).fit(S, items).predict(Y[:, items])
        b = greg.GregAIPWSlopeOne(level=0.90).fit(S, items).predict(Y[:, items])
        for k in ("estimate", "lower", "upper", "se"):
            np.testing.assert_array_equal(getattr(a, k), getattr(b, k))


def test_slope_rule():
    Y = np.array([[0, 1, 0, 1], [0, 0, 1, 1], [1, 0, 1, 0]], dtype=float)
    f = np.array([[0.2, 0.4, 0.2, 0.4], [0.3, 0.3, 0.3, 0.3], [0.1, 0.2, 0.3, 0.4]])
    np.testing.assert_allclose(greg.greg_slope(Y, f), [1.0, 1.0, 0.0])  # cov/var = 5 -> 1; flat -> 1; negative -> 0
    np.testing.assert_allclose(greg.greg_slope(np.array([[0.0, 1.0, 1.0, 2.0]]), np.array([[0.0, 2.0, 2.0, 4.0]])),
                               [0.5])


def test_noisy_working_model_lower_variance_and_coverage():
    S, y = population(0)
    d_est, d_cov = draws(DifficultyAIPW, S, y, 300)
    g_est, g_cov = draws(greg.GregAIPW, S, y, 300)
    truth = y.mean()
    assert np.mean((g_est - truth) ** 2) < 0.95 * np.mean((d_est - truth) ** 2)
    assert np.var(g_est) < np.var(d_est)
    assert abs(np.mean(g_est) - truth) < 0.01  # design-consistent: bias O(1/n)
    assert 0.85 <= g_cov.mean() <= 0.95
