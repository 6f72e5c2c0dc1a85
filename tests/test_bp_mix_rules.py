"""benchmarks/quality_bp_mix_rules.py: the weights its nested-CV rules replay, its oracles, one fold's record."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def mr():
    from conftest import import_benchmark

    return import_benchmark("quality_bp_mix_rules")


def test_simplex_enumerates_every_weight_vector_on_the_grid(mr):
    W = np.array(list(mr.simplex(3, 0.25)))
    assert W.shape == (15, 3) and np.allclose(W.sum(1), 1) and (W >= 0).all()
    assert len({tuple(w) for w in W}) == 15
    assert [tuple(w) for w in mr.simplex(2, 0.5)] == [(0.0, 1.0), (0.5, 0.5), (1.0, 0.0)]


def test_rule_weights_follow_the_inner_cv_and_ties_go_to_the_engine(mr):
    rng = np.random.default_rng(0)
    t = rng.normal(size=500)
    rec = {"i_truth": t, "i_invsd": np.ones(500), "i_lr": t + rng.normal(0, 1.0, 500), "i_bp": t + rng.normal(0, 0.1, 500)}
    assert np.allclose(mr.rule_weights(rec, ("lr", "bp"), 0.5, "invsd"), [0, 1])
    rec["i_bp"] = rec["i_lr"].copy()  # the same predictions: every weight ties
    assert np.allclose(mr.rule_weights(rec, ("lr", "bp"), 0.1, "invsd"), [1, 0])


def test_oracle_is_never_worse_than_one_fixed_weight(mr):
    rng = np.random.default_rng(1)
    t = rng.normal(size=300)
    a, b = t + rng.normal(0, 1, 300), t + rng.normal(0, 1, 300)
    groups, fac = np.arange(300) % 5, np.ones(300)
    best = min(np.median(np.abs(w * a + (1 - w) * b - t)) for w in np.linspace(0, 1, 11))
    assert np.median(np.abs(mr.oracle(t, a, b, np.zeros(300), fac) - t)) == pytest.approx(best)
    assert np.median(np.abs(mr.oracle(t, a, b, groups, fac) - t)) <= best + 0.05


@pytest.mark.slow
def test_fold_record_replays_the_default_mix(mr):
    from harness_ext.methods.engine import benchpress as bp
    from harness_ext.methods.engine.completion import LowRankCompleter

    rng = np.random.default_rng(3)
    X = 1 / (1 + np.exp(-(rng.normal(size=(24, 2)) @ rng.normal(size=(2, 7)) + 0.3 * rng.normal(size=(24, 7)))))
    X[rng.random(X.shape) < 0.15] = np.nan
    hide = bp.holdout_folds(~np.isnan(X), n_seeds=1)[0] & ~np.isnan(X)
    rec = mr.fold_record(X, hide, 0, bp.points_factor(X))
    assert rec["o_truth"].size == hide.sum() and rec["i_truth"].size == (~np.isnan(X) & ~hide).sum()
    # The default's rule replayed on the record gives the weights the default predictor chooses on the same matrix.
    w = mr.default_weights(rec)
    est = LowRankCompleter(random_state=0).fit(np.where(hide, np.nan, X))
    assert np.allclose(est.mix_weights_, w)
    r, c = np.nonzero(hide)
    assert np.allclose(est.mean_[r, c], w @ np.stack([rec["o_" + k] for k in mr.DEFAULT_KEYS]))
