"""The fitted matrix's cells: the engine's, BenchPress's (Zeng & Papailiopoulos, 2026), the column ridge's and the
neighbour residuals' completions, stacked by nested CV."""

from __future__ import annotations

import numpy as np
import pytest

from harness_ext.methods.engine import benchpress as bp
from harness_ext.methods.engine import column_ridge
from harness_ext.methods.engine.completion import LowRankCompleter
from harness_ext.methods.engine.completion_mix import MEMBERS, choose_mix, combine, stack_weights
from test_benchpress import _matrix as _proportions


def _matrix(seed=0):
    return _proportions(seed, m=24, d=8, missing=0.3)  # two factors + noise through a logistic


@pytest.mark.slow
def test_weight_zero_is_the_engine_alone_and_one_is_benchpress():
    X = _matrix(1)
    miss = np.isnan(X)
    own = LowRankCompleter(bp_mix=0.0, random_state=3).fit(X)
    assert own.bp_mix_ == 0.0 and own.mix_weights_ == (1.0, 0.0, 0.0, 0.0) and own.bp_mix_cv_ is None
    np.testing.assert_array_equal(own.mean_, own._own_mean)
    full = LowRankCompleter(bp_mix=1.0, random_state=3).fit(X)
    np.testing.assert_allclose(full.mean_[miss], bp.complete_units(X)[miss])
    np.testing.assert_array_equal(full.mean_[~miss], X[~miss])
    half = LowRankCompleter(bp_mix=0.5, random_state=3).fit(X)
    np.testing.assert_allclose(half.mean_[miss], (0.5 * own.mean_ + 0.5 * full.mean_)[miss])
    # the intervals are calibrated around the mixed centre
    lo, hi = half.lower_[miss], half.upper_[miss]
    assert (lo <= half.mean_[miss] + 1e-12).all() and (half.mean_[miss] <= hi + 1e-12).all() and (hi > lo).all()


@pytest.mark.slow
def test_auto_weights_are_stacked_and_reproducible():
    X = _matrix(2)
    a = LowRankCompleter(random_state=5).fit(X)
    w = a.mix_weights_
    assert a.bp_mix == "auto" and len(w) == len(MEMBERS) and min(w) >= 0 and np.isclose(sum(w), 1)
    assert a.bp_mix_ == w[1]
    info = a.bp_mix_cv_
    assert info["n_folds"] == a.cv_folds and set(info["member_error"]) == set(MEMBERS)
    assert info["weights"] == dict(zip(MEMBERS, (round(v, 6) for v in w)))
    # least squares, not the median the errors report, so the stack need not beat the best member's median;
    # it must not be far off it
    assert info["error"] <= 1.1 * min(info["member_error"].values())
    b = LowRankCompleter(random_state=5).fit(X)
    np.testing.assert_array_equal(a.mean_, b.mean_)
    np.testing.assert_array_equal(a.upper_, b.upper_)
    assert a.describe()["bp_mix"] == a.bp_mix_ and a.describe()["cell_mix"] == dict(zip(MEMBERS, w))
    again_w, again = choose_mix(a, X)
    assert again_w == w and again == info
    miss = np.isnan(X)
    own = LowRankCompleter(bp_mix=0.0, random_state=5).fit(X).mean_
    parts = (own, *column_ridge.completions(X, neighbours=True))
    np.testing.assert_allclose(a.mean_[miss], sum(wk * p[miss] for wk, p in zip(w, parts)))


def test_stack_weights_find_the_better_member_and_fall_back_to_equal():
    rng = np.random.default_rng(0)
    t = rng.normal(size=400)
    good, bad = t + rng.normal(0, 0.1, 400), t + rng.normal(0, 1.0, 400)
    w = stack_weights(np.stack([bad, good, bad + 0.5]), t, np.ones(400))
    assert np.isclose(sum(w), 1) and w[1] > 0.9 and min(w) >= 0
    # two independent equally good members share the weight about evenly
    a, b = t + rng.normal(0, 0.5, 400), t + rng.normal(0, 0.5, 400)
    wa, wb = stack_weights(np.stack([a, b]), t, np.ones(400))
    assert 0.35 < wa < 0.65 and np.isclose(wa + wb, 1)
    # no member correlates with the truth the right way: every NNLS weight 0, equal weights
    assert stack_weights(np.stack([-t, -2 * t]), t, np.ones(400)) == (0.5, 0.5)


def test_combine_averages_the_members_it_is_given():
    X = _matrix(4)
    miss = np.isnan(X)
    own = LowRankCompleter(bp_mix=0.0, random_state=2).fit(X).mean_
    parts = (own, bp.complete_units(X), *column_ridge.completions(X, neighbours=True)[1:])
    avg = combine((0.25, 0.25, 0.25, 0.25), own, X)
    np.testing.assert_allclose(avg[miss], np.mean([p[miss] for p in parts], axis=0))
    two = combine((0.5, 0.0, 0.5, 0.0), own, X)
    np.testing.assert_allclose(two[miss], 0.5 * (own + column_ridge.complete(X))[miss])


def test_new_models_do_not_pay_for_or_use_the_mix():
    X = _matrix(3)
    est = LowRankCompleter(random_state=1).fit(X[:20])
    p = est.predict_new_models(X[20:], calibrate=False)
    assert "_mix_cache" not in est.__dict__ and p.mean.shape == (X.shape[0] - 20, X.shape[1])
