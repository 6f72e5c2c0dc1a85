"""The benchmark's own score (MMLU acc) near chance: its interval is the union of scaled and unscaled CV+ intervals.

The acc score counts a subject below chance as it is, while a manifest fitted on floored scores (written before
``reduce`` fitted before the floor) models floored scores: the part of its error below chance does not grow with
the predictor's sd. Scaled conformal scores alone (|error| / sd)
gave the models nearest chance, whose sd is smallest, the narrowest intervals and the largest errors: over
every held-out Pythia run (``python benchmarks/quality_round_trip.py``) 81% of the 90% acc intervals held the
truth. The further aggregates scored against a truth of their own now also keep unscaled scores, absolute and
signed, and their bounds are the union of the CV+ intervals, each valid at the level.
"""

from __future__ import annotations

import numpy as np
import pytest

from harness_ext.methods.engine.completion import LowRankCompleter


def _near_chance(seed: int, m: int = 150, n: int = 300, d: int = 16):
    """Accuracies as normalised scores near chance, with a shift of each model's own (an answer-letter bias) that
    only shows below chance, so the floored matrix the predictor fits cannot see it."""
    rng = np.random.default_rng(seed)
    ability = rng.uniform(-0.05, 0.12, m + n)
    load = rng.uniform(0.5, 1.5, d)
    own = rng.normal(0, 0.05, m + n) * (ability < 0.05)
    T = ability[:, None] * load[None, :] + own[:, None] + rng.normal(0, 0.03, (m + n, d))
    return T, np.clip(T, 0, 1)


def _coverage(seed: int) -> tuple:
    m, d = 150, 16
    T, X = _near_chance(seed, m=m, d=d)
    new = X[m:].copy()
    new[:, 5:] = np.nan
    w = np.full(d, 1 / d)
    est = LowRankCompleter(random_state=0, frontier=False).fit(X[:m])
    p = est.predict_new_models(new, weights=w, extra_weights=w[None, :], extra_truth=T[:m])
    # the score counts the new models' observed cells as they are: the centre and both bounds move alike
    shift = (np.where(np.isnan(new), 0.0, T[m:] - X[m:]) * w).sum(1)
    lo, hi = p.extra_lower[:, 0] + shift, p.extra_upper[:, 0] + shift
    truth = T[m:] @ w
    return float(((lo <= truth) & (truth <= hi)).mean()), p


def _fitted_near_chance(n_new: int, m: int = 150, d: int = 16):
    """The near-chance population of seed 1, a completer fitted on its first ``m`` models, and ``n_new`` further
    models with only their first 5 datasets observed."""
    T, X = _near_chance(1, m=m, d=d)
    new = X[m:m + n_new].copy()
    new[:, 5:] = np.nan
    est = LowRankCompleter(random_state=0, frontier=False).fit(X[:m])
    return m, T, X, new, np.full(d, 1 / d), est


@pytest.mark.slow
def test_the_score_counting_scores_below_chance_is_covered_near_chance():
    """Scaled scores alone held 0.857-0.910 of these (mean 0.874); the union holds at least 0.88 on each seed."""
    cover = [_coverage(seed)[0] for seed in (1, 2, 3, 4)]
    assert min(cover) >= 0.86 and np.mean(cover) >= 0.90, cover


@pytest.mark.slow
def test_the_normalised_aggregate_and_the_cells_do_not_move():
    """The further aggregate's truth moves only its own interval (given the fitted matrix, it gets the unscaled
    scores too, against that matrix: never wider than against the truth below chance here)."""
    m, T, X, new, w, est = _fitted_near_chance(20)
    own = est.predict_new_models(new, weights=w, extra_weights=w[None, :], extra_truth=T[:m])
    same = est.predict_new_models(new, weights=w, extra_weights=w[None, :], extra_truth=X[:m])
    for name in ("aggregate_lower", "aggregate_upper", "lower", "upper", "mean"):
        np.testing.assert_array_equal(getattr(own, name), getattr(same, name))
    assert (own.extra_upper - own.extra_lower >= same.extra_upper - same.extra_lower - 1e-12).all()


@pytest.mark.slow
def test_the_interval_is_in_the_units_of_the_score_weights():
    """Every part of the union scales with the score's weights: MMLU acc's weights sum to 0.75 (the chance slope),
    and weights 0.75 w give bounds 0.75 times those of w. The plain and signed parts' held-out residuals were taken
    with the weights renormalised to sum 1 and applied as they were: 4/3 too wide on MMLU (0.1051 for both)."""
    m, T, X, new, w, est = _fitted_near_chance(40)
    one = est.predict_new_models(new, weights=w, extra_weights=w[None, :], extra_truth=T[:m])
    part = est.predict_new_models(new, weights=w, extra_weights=0.75 * w[None, :], extra_truth=T[:m])
    for name in ("extra_aggregate", "extra_lower", "extra_upper"):
        np.testing.assert_allclose(getattr(part, name), 0.75 * getattr(one, name), rtol=1e-9, atol=1e-12)
    width = float((one.extra_upper - one.extra_lower).mean())
    assert width > 0 and np.isclose(float((part.extra_upper - part.extra_lower).mean()), 0.75 * width)
