"""The fitted matrix's cells: the engine's, BenchPress's (Zeng & Papailiopoulos, 2026) and the column ridge's
completions averaged, the set chosen by nested CV."""

from __future__ import annotations

import numpy as np

from harness_ext.methods.engine import benchpress as bp
from harness_ext.methods.engine import column_ridge
from harness_ext.methods.engine.completion import LowRankCompleter
from harness_ext.methods.engine.completion_mix import MEMBERS, MIX_GRID, choose, choose_mix, combine
from test_benchpress import _matrix as _proportions


def _matrix(seed=0):
    return _proportions(seed, m=24, d=8, missing=0.3)  # two factors + noise through a logistic


def test_weight_zero_is_the_engine_alone_and_one_is_benchpress():
    X = _matrix(1)
    miss = np.isnan(X)
    own = LowRankCompleter(bp_mix=0.0, random_state=3).fit(X)
    assert own.bp_mix_ == 0.0 and own.mix_weights_ == (1.0, 0.0, 0.0) and own.bp_mix_cv_ is None
    np.testing.assert_array_equal(own.mean_, own._own_mean)
    full = LowRankCompleter(bp_mix=1.0, random_state=3).fit(X)
    np.testing.assert_allclose(full.mean_[miss], bp.complete_units(X)[miss])
    np.testing.assert_array_equal(full.mean_[~miss], X[~miss])
    half = LowRankCompleter(bp_mix=0.5, random_state=3).fit(X)
    np.testing.assert_allclose(half.mean_[miss], (0.5 * own.mean_ + 0.5 * full.mean_)[miss])
    # the intervals are calibrated around the mixed centre
    lo, hi = half.lower_[miss], half.upper_[miss]
    assert (lo <= half.mean_[miss] + 1e-12).all() and (half.mean_[miss] <= hi + 1e-12).all() and (hi > lo).all()


def test_auto_weights_are_chosen_on_the_grid_and_reproducible():
    X = _matrix(2)
    a = LowRankCompleter(random_state=5).fit(X)
    assert a.bp_mix == "auto" and a.mix_weights_ in MIX_GRID and a.bp_mix_ == a.mix_weights_[1]
    info = a.bp_mix_cv_
    assert info["n_folds"] == a.cv_folds
    assert [tuple(e["weights"][k] for k in MEMBERS) for e in info["error"]] == [tuple(round(v, 6) for v in w) for w in MIX_GRID]
    assert info["weights"] == dict(zip(MEMBERS, (round(v, 6) for v in a.mix_weights_)))
    err = {w: e["error"] for w, e in zip(MIX_GRID, info["error"])}
    assert min(err.values()) == err[a.mix_weights_]
    b = LowRankCompleter(random_state=5).fit(X)
    np.testing.assert_array_equal(a.mean_, b.mean_)
    np.testing.assert_array_equal(a.upper_, b.upper_)
    assert a.describe()["bp_mix"] == a.bp_mix_ and a.describe()["cell_mix"] == dict(zip(MEMBERS, a.mix_weights_))
    w, again = choose_mix(a, X)
    assert w == a.mix_weights_ and again == info


def test_the_grid_averages_two_or_three_completers_and_ties_go_to_more():
    assert all(np.isclose(sum(w), 1) and sum(v > 0 for v in w) >= 2 for w in MIX_GRID)
    three = (1 / 3, 1 / 3, 1 / 3)
    assert choose({w: 0.5 for w in MIX_GRID}) == three
    assert choose({w: (0.4 if w == MIX_GRID[1] else 0.5) for w in MIX_GRID}) == MIX_GRID[1]
    X = _matrix(4)
    miss = np.isnan(X)
    own = LowRankCompleter(bp_mix=0.0, random_state=2).fit(X).mean_
    avg = combine(three, own, X)
    parts = (own, bp.complete_units(X), column_ridge.complete(X))
    np.testing.assert_allclose(avg[miss], np.mean([p[miss] for p in parts], axis=0))


def test_new_models_do_not_pay_for_or_use_the_mix():
    X = _matrix(3)
    est = LowRankCompleter(random_state=1).fit(X[:20])
    p = est.predict_new_models(X[20:], calibrate=False)
    assert "_mix_cache" not in est.__dict__ and p.mean.shape == (X.shape[0] - 20, X.shape[1])
