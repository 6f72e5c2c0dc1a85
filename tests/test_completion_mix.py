"""The fitted matrix's cells mixed with BenchPress's completion (Zeng & Papailiopoulos, 2026), weight by nested CV."""

from __future__ import annotations

import numpy as np

from harness_ext.methods.engine import benchpress as bp
from harness_ext.methods.engine.completion import LowRankCompleter
from harness_ext.methods.engine.completion_mix import MIX_GRID, choose_mix, mix
from test_benchpress import _matrix as _proportions


def _matrix(seed=0):
    return _proportions(seed, m=24, d=8, missing=0.3)  # two factors + noise through a logistic


def test_weight_zero_is_the_engine_alone_and_one_is_benchpress():
    X = _matrix(1)
    miss = np.isnan(X)
    own = LowRankCompleter(bp_mix=0.0, random_state=3).fit(X)
    assert own.bp_mix_ == 0.0 and own.bp_mix_cv_ is None
    np.testing.assert_array_equal(own.mean_, own._own_mean)
    full = LowRankCompleter(bp_mix=1.0, random_state=3).fit(X)
    np.testing.assert_allclose(full.mean_[miss], bp.complete_units(X)[miss])
    np.testing.assert_array_equal(full.mean_[~miss], X[~miss])
    half = LowRankCompleter(bp_mix=0.5, random_state=3).fit(X)
    np.testing.assert_allclose(half.mean_[miss], mix(own.mean_, full.mean_, 0.5)[miss])
    # the intervals are calibrated around the mixed centre
    lo, hi = half.lower_[miss], half.upper_[miss]
    assert (lo <= half.mean_[miss] + 1e-12).all() and (half.mean_[miss] <= hi + 1e-12).all() and (hi > lo).all()


def test_auto_weight_is_chosen_on_the_grid_and_reproducible():
    X = _matrix(2)
    a = LowRankCompleter(random_state=5).fit(X)
    assert a.bp_mix == "auto" and a.bp_mix_ in MIX_GRID
    info = a.bp_mix_cv_
    assert info["n_folds"] == a.cv_folds and [e["weight"] for e in info["error"]] == list(MIX_GRID)
    assert info["weight"] == min(info["error"], key=lambda e: (e["error"], e["weight"]))["weight"]
    b = LowRankCompleter(random_state=5).fit(X)
    np.testing.assert_array_equal(a.mean_, b.mean_)
    np.testing.assert_array_equal(a.upper_, b.upper_)
    assert a.describe()["bp_mix"] == a.bp_mix_
    w, again = choose_mix(a, X)
    assert w == a.bp_mix_ and again == info


def test_new_models_do_not_pay_for_or_use_the_mix():
    X = _matrix(3)
    est = LowRankCompleter(random_state=1).fit(X[:20])
    p = est.predict_new_models(X[20:], calibrate=False)
    assert "_mix_cache" not in est.__dict__ and p.mean.shape == (X.shape[0] - 20, X.shape[1])
