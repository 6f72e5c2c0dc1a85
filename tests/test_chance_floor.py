"""Predicted scores mapped back past the floor at chance (a censored-normal reading of the floor)."""

from __future__ import annotations

import numpy as np
import pytest

from harness_ext.methods.engine.chance_floor import ChanceFloor


def _censored_mean(mu, s):
    from scipy.stats import norm

    return mu * norm.cdf(mu / s) + s * norm.pdf(mu / s)


def test_the_censored_mean_is_inverted():
    s = np.array([0.05, 0.02, 0.1])
    floor = ChanceFloor(spread=s, low=np.full(3, -1.0), count=np.full(3, 5))
    mu = np.array([[-0.05, -0.01, 0.3], [0.0, 0.0, 0.0], [0.1, 0.05, -0.1]])
    np.testing.assert_allclose(floor(_censored_mean(mu, s)), mu, atol=1e-9)
    # far above the floor a score is left as it is; what chance alone gives (0.399 sigma) maps to chance
    assert floor(np.array([[0.9, 0.9, 0.9]])) == pytest.approx(np.array([[0.9, 0.9, 0.9]]), abs=1e-12)


def test_the_spread_and_the_lowest_score_come_from_the_training_scores_below_chance():
    truth = np.array([[-0.03, 0.2, -0.5, 0.1],
                      [-0.04, 0.3, 0.1, np.nan],
                      [0.5, 0.4, 0.2, 0.3]])
    floored = np.array([True, True, False, True])
    floor = ChanceFloor.from_truth(truth, floored)
    # column 0: the root mean square of its two scores below chance; column 2 is not floored; 1 and 3 never below
    np.testing.assert_allclose(floor.spread, [np.sqrt((0.03 ** 2 + 0.04 ** 2) / 2), 0.0, 0.0, 0.0])
    np.testing.assert_allclose(floor.low, [-0.04, 0.0, 0.0, 0.0])
    assert floor.count.tolist() == [2, 0, 0, 0] and floor.active
    m = np.array([[0.0, 0.0, 0.0, 0.05], [1e-6, 0.2, 0.3, np.nan]])
    out = floor(m)
    # datasets without scores below chance are left as they are (NaN too); near 0 the map stops at the lowest score
    np.testing.assert_array_equal(out[:, 1:], m[:, 1:])
    assert out[0, 0] == pytest.approx(-0.04) and -0.04 <= out[1, 0] < 0
    assert not ChanceFloor.from_truth(np.abs(truth), floored).active


def test_the_map_is_increasing_and_never_raises_a_score():
    floor = ChanceFloor(spread=np.array([0.04]), low=np.array([-0.3]), count=np.array([9]))
    m = np.linspace(0.0, 0.3, 301)[:, None]
    out = floor(m)[:, 0]
    assert (np.diff(out) >= 0).all() and (out <= m[:, 0] + 1e-12).all()
