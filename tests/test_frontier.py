"""New models beyond the training population: flagged, predicted without shrinking, intervals from frontier folds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness_ext.methods.engine.completion import LowRankCompleter
from harness_ext.methods.engine.frontier import frontier_distance, positions
from harness_ext.methods.engine.frontier_report import frontier_warnings


def _population(m=260, d=16, seed=0):
    """Proportions from a rank-2 logit model; the first factor is the model's overall strength."""
    rng = np.random.default_rng(seed)
    u = np.c_[rng.normal(0, 1.0, m), rng.normal(0, 0.5, m)]
    v = np.c_[rng.uniform(0.6, 1.2, d), rng.normal(0, 0.6, d)]
    b = rng.normal(0, 0.5, d)
    logit = u @ v.T + b + rng.normal(0, 0.25, (m, d))
    return 1 / (1 + np.exp(-logit)), u[:, 0]


def test_distance_is_zero_inside_and_signed_outside():
    train = np.linspace(-1, 1, 101)
    d = frontier_distance(np.array([0.0, 0.45, 2.0, -3.0]), train, edge=0.75)
    assert d[0] == 0 and d[1] == 0 and d[2] > 0 and d[3] < 0
    Z = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]])
    p = positions(Z, np.array([True, True, False]))
    assert p[0] == 1.0 and np.isnan(p[1])


def _stronger_coverage(seed):
    """Fit on the weaker 60% of one population, predict the strongest 25% (65 models) from 3 of 16 datasets:
    ``(aggregate covered, cells covered, frontier flags, fitted estimator, subset mask, train rows)``."""
    X, strength = _population(seed=seed)
    order = np.argsort(strength)
    train, test = order[:156], order[-65:]
    est = LowRankCompleter(random_state=0).fit(X[train])
    keep = np.zeros(X.shape[1], bool)
    keep[[0, 5, 10]] = True
    w = np.full(X.shape[1], 1.0 / X.shape[1])
    p = est.predict_new_models(np.where(keep, X[test], np.nan), weights=w)
    truth = X[test] @ w
    agg = (truth >= p.aggregate_lower) & (truth <= p.aggregate_upper)
    cells = ((X[test] >= p.lower) & (X[test] <= p.upper))[:, ~keep].ravel()
    return agg, cells, p.frontier, est, keep, train, X


@pytest.mark.slow
def test_stronger_population_is_flagged_and_covered(monkeypatch):
    """A stronger population, 8 synthetic populations pooled (520 test models: one population's 65 alone leave
    a calibrated 90% interval anywhere in about 0.84-0.96): flagged, and the intervals hold. Measured: cells 0.908;
    aggregates 0.935 with the frontier folds alone, 0.954 with the cross-benchmark allowance (``frontier_prior``,
    learnt on real leaderboards whose frontier shifts are larger than these populations')."""
    from harness_ext.methods.engine import frontier_prior
    runs = [_stronger_coverage(seed) for seed in range(8)]
    assert all((fl > 0).mean() > 0.8 for _, _, fl, *_ in runs)  # the stronger populations are flagged
    cov = float(np.concatenate([a for a, *_ in runs]).mean())
    cell_cov = float(np.concatenate([c for _, c, *_ in runs]).mean())
    assert 0.85 <= cell_cov <= 0.95, cell_cov
    assert 0.85 <= cov <= 0.97, cov
    monkeypatch.setattr(frontier_prior, "FRONTIER_ALLOWANCE", {lv: None for lv in frontier_prior.FRONTIER_ALLOWANCE})
    cov_off = float(np.concatenate([_stronger_coverage(seed)[0] for seed in range(8)]).mean())
    assert 0.85 <= cov_off <= 0.95 and cov_off <= cov, (cov_off, cov)
    monkeypatch.undo()
    # a model inside the population is not flagged and keeps the model-fold intervals
    _, _, _, est, keep, train, X = runs[0]
    w = np.full(X.shape[1], 1.0 / X.shape[1])
    pos = positions(est.Z_, keep)
    mid = train[[int(np.argmin(np.abs(pos - np.median(pos))))]]  # the training models' median subset position
    q = est.predict_new_models(np.where(keep, X[mid], np.nan), weights=w)
    assert q.frontier[0] == 0


@pytest.mark.slow
def test_predict_marks_a_frontier_model():
    """predict: the aggregate table has the distance, and a warning names the model and the distance."""
    from harness_ext.methods.api import predict, reduce

    X, strength = _population(m=80, d=20, seed=1)
    order = np.argsort(strength)
    cols = [f"d{j}" for j in range(X.shape[1])]
    train = pd.DataFrame(X[order[:70]], index=[f"m{i}" for i in range(70)], columns=cols)
    red = reduce(train, budget=3, n_random=5, n_random_subsets=5)
    fr = red.manifest["prediction"]["expected_error"]["frontier"]
    assert fr["calibrated"] and 0 <= fr["aggregate_coverage_90"] <= 1
    subset = [s["name"] for s in red.manifest["subset"]]
    new = pd.DataFrame(X[order[[-1, 35]]][:, [cols.index(c) for c in subset]], index=["strong", "typical"],
                       columns=subset)
    res = predict(red, new)
    agg = res.aggregate.set_index("model")
    assert agg.loc["strong", "frontier"] > 0 and agg.loc["typical", "frontier"] == 0
    assert any(w.startswith("strong: at the frontier") and " sd above" in w for w in res.warnings)
    assert not any(w.startswith("typical: at the frontier") for w in res.warnings)


def test_standard_mean_keeps_the_subset_level():
    """The subset mean on the standardised scale: a model 3 sd above the fitted models on every subset dataset is
    predicted 3 sd above them on every dataset (no shrinkage), on each dataset's own mean and sd; a dataset no fitted
    model has falls back to the transformed scale's own (mean 0, sd 1) without a warning."""
    import warnings

    from harness_ext.methods.engine.frontier import _standard_mean

    rng = np.random.default_rng(0)
    Z = rng.normal([0.0, 1.0, -2.0, 0.5], [1.0, 2.0, 0.5, 1.5], (200, 4))
    Z[:, 3] = np.nan
    mu, sd = Z[:, :3].mean(0), Z[:, :3].std(0)
    O = np.array([[True, True, False, False]])
    z = np.where(O, np.r_[mu + 3 * sd, np.nan][None, :], np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = _standard_mean(Z, z, O)
    assert np.allclose(out[0, :3], mu + 3 * sd) and np.isclose(out[0, 3], 3.0)


def test_frontier_multipliers_bracket_zero_and_share_the_refits():
    """The multipliers bracket 0 and the folds' held-out coverage is recorded; a calibration on refits computed once
    (as every further aggregate of one prediction is calibrated) is the same as one that refits."""
    from harness_ext.methods.engine import frontier

    X, strength = _population(m=160, d=12, seed=3)
    order = np.argsort(strength)
    est = LowRankCompleter(random_state=0).fit(X[order[:100]])
    keep = np.zeros(X.shape[1], bool)
    keep[[0, 4, 8]] = True
    cal = frontier.calibrate_frontier(est, keep, np.full(X.shape[1], 1.0 / X.shape[1]), 1)
    assert cal is not None
    assert cal.q_aggregate[0] <= 0 <= cal.q_aggregate[1] and cal.aggregate_coverage is not None
    records = frontier.frontier_folds(est, keep, 1)
    assert frontier.calibrate_frontier(est, keep, np.full(X.shape[1], 1.0 / X.shape[1]), 1, records=records) == cal
    # The same folds' errors under other weights (a benchmark's points per unit): the same weights scaled give the
    # same errors; weights on other datasets give others, without changing what was chosen and calibrated.
    w = np.full(X.shape[1], 1.0 / X.shape[1])
    same = frontier.calibrate_frontier(est, keep, w, 1, records=records, w_points=7 * w)
    assert (same.points_mae, same.points_bias) == pytest.approx((7 * cal.aggregate_mae, 7 * cal.aggregate_bias),
                                                                rel=1e-12)
    assert frontier.calibrate_frontier(est, keep, w, 1, records=records, w_points=7 * w, w_base=3 * w) == same
    other = frontier.calibrate_frontier(est, keep, w, 1, records=records, w_points=np.linspace(1, 12, X.shape[1]))
    assert other._replace(points_mae=None, points_bias=None) == cal and other.points_mae != cal.aggregate_mae


def test_blend_ramp_rises_from_the_edge_to_the_range():
    """The blend's share: 0 inside the edge, linear between the edge and the training models' extreme, 1 beyond;
    the mirror image below."""
    from harness_ext.methods.engine.frontier import blend_ramp

    train = np.linspace(0.0, 1.0, 101)
    up = blend_ramp(np.array([0.5, 0.75, 0.875, 1.0, 3.0]), train, 1)
    down = blend_ramp(np.array([0.5, 0.25, 0.125, 0.0, -3.0]), train, -1)
    assert np.allclose(up, [0, 0, 0.5, 1, 1]) and np.allclose(down, [0, 0, 0.5, 1, 1])


def test_frontier_prediction_is_less_shrunk_than_the_engines():
    """A stronger population predicted from 3 datasets: the frontier-aware aggregate is less biased toward the
    training population than the engine's own (the blend chosen on frontier folds), and its error is not larger
    (measured: bias -0.019 and MAE 0.024 for the engine, -0.006 and 0.018 frontier-aware)."""
    X, strength = _population(m=220, d=14, seed=0)
    order = np.argsort(strength)
    train, test = order[:120], order[-60:]
    keep = np.zeros(X.shape[1], bool)
    keep[[1, 6, 11]] = True
    X_new = np.where(keep, X[test], np.nan)
    w = np.full(X.shape[1], 1.0 / X.shape[1])
    truth = X[test] @ w
    errs = {}
    for frontier in (False, True):
        p = LowRankCompleter(random_state=0, frontier=frontier).fit(X[train]).predict_new_models(X_new, weights=w)
        errs[frontier] = p.aggregate - truth
    assert errs[False].mean() < 0  # the engine alone shrinks the stronger models toward the population
    assert abs(errs[True].mean()) < abs(errs[False].mean())
    assert np.abs(errs[True]).mean() <= np.abs(errs[False]).mean()


def test_conformal_minimum_and_design_sd():
    """A two-sided interval at level L needs ``2 / (1 - L) - 1`` exchangeable scores (19 at 90%); the design-style sd
    of an aggregate is 0 for a row that has every cell and grows with the share of datasets it did not run."""
    from harness_ext.methods.engine.frontier_design import design_aggregate_sd, min_calibration_models

    assert [min_calibration_models(v) for v in (0.8, 0.9, 0.95)] == [9, 19, 39]
    rng = np.random.default_rng(0)
    X = rng.normal(0, 1, (60, 1)) + rng.normal(0, 1, (1, 10)) + rng.normal(0, 0.3, (60, 10))  # additive + noise
    W = np.full((3, 10), 0.1)
    O = np.zeros((3, 10), bool)
    O[0], O[1, :5], O[2, :2] = True, True, True
    sd = design_aggregate_sd(X, O, W)
    assert sd[0] == 0 and 0 < sd[1] < sd[2]
    # the formula: hidden datasets' residual variance plus the level read from k cells, residual sd about 0.3
    s2 = 0.3 ** 2 * 0.9 * 0.98  # the two-way fit's residual variance (degrees of freedom used by the means)
    assert abs(sd[1] - np.sqrt(5 * 0.01 * s2 + 0.25 * s2 / 5)) < 0.25 * sd[1]


@pytest.mark.slow
def test_thin_frontier_folds_fall_back_to_a_design_interval(monkeypatch):
    """Few training models (40) and a far stronger population (the strongest 60 of 200, 3 to 4 sd beyond the edge):
    the frontier folds hold out 12 different models, fewer than the 19 a 90% interval needs, so the flagged
    aggregates are joined with the design-style interval (the normal quantile times its sd). Pooled over 6 populations
    the aggregate coverage rises from 0.58 (207 of 360, the folds alone) to 0.80 (288 of 360; 287 with the multiplier
    calibrated on the folds within their reach): better, still below 0.85 (one population's point prediction is far off: 0.35 covered)."""
    from harness_ext.methods.engine import frontier, frontier_prior

    hits = {True: 0, False: 0}
    n = 0
    for seed in range(6):
        X, strength = _population(m=200, d=16, seed=seed)
        order = np.argsort(strength)
        train, test = order[:40], order[-60:]
        keep = np.zeros(X.shape[1], bool)
        keep[[0, 5, 10]] = True
        w = np.full(X.shape[1], 1.0 / X.shape[1])
        truth = X[test] @ w
        est = LowRankCompleter(random_state=0).fit(X[train])
        for design in (True, False):
            # the design interval's own effect: the cross-benchmark allowance off (with it, 288 and 250 of 360)
            monkeypatch.setattr(frontier_prior, "FRONTIER_ALLOWANCE", {lv: None for lv in frontier_prior.FRONTIER_ALLOWANCE})
            if not design:
                monkeypatch.setattr(frontier, "is_thin", lambda est, cal: False)
            p = est.predict_new_models(np.where(keep, X[test], np.nan), weights=w)
            hits[design] += int(((truth >= p.aggregate_lower) & (truth <= p.aggregate_upper)).sum())
            if design:
                cal = est.frontier_[1]
                assert cal.n_distinct == 12 and frontier.is_thin(est, cal)
                assert (p.frontier > 0).all()
        monkeypatch.undo()
        n += test.size
    assert hits[True] / n >= 0.78 and hits[True] >= hits[False] + 0.15 * n, (hits, n)


def test_thin_calibration_is_said(monkeypatch):
    """The warning of a flagged model says when the folds were too thin (and that the small-population rule then
    predicts it) and when it lies beyond their reach."""
    from harness_ext.methods.engine import frontier
    from harness_ext.methods.engine.frontier import FrontierCalibration

    monkeypatch.setattr(frontier, "THIN_RULE", "small")  # screened, off by default: its words
    cal = FrontierCalibration(direction=1, candidate="subset_mean", weight=0.5, q_cell=(-1.0, 1.0),
                              q_aggregate=(-1.0, 1.0), n_models=30, aggregate_mae=1.0, aggregate_bias=0.0,
                              engine_aggregate_mae=1.0, aggregate_coverage=0.9, cell_coverage=0.9, n_distinct=10,
                              max_distance=1.5)
    [near, far] = frontier_warnings(["near", "far"], np.array([0.5, 2.0]), {1: cal})
    assert "only 10 different models" in near and "design-style" in near and "reach" not in near
    assert "too few to choose a blend on" in near and "level left free" in near and "subset_mean" not in near
    assert "beyond the frontier folds' reach (1.50 sd)" in far
    [none] = frontier_warnings(["m"], np.array([0.5]), {1: None})
    assert "design-style" in none
    monkeypatch.setattr(frontier, "THIN_RULE", None)  # the folds' own blend, the design interval beyond the extreme
    [near] = frontier_warnings(["near"], np.array([0.5]), {1: cal})
    assert "only 10 different models" in near and "0.5 x subset_mean" in near and "design-style" in near


def _weak_subset_population(m=200, d=16, seed=0, weak=0.6, subset=(0, 5, 10)):
    """Rank-2 logit proportions whose ``subset`` datasets load ``weak`` times as much on the strength factor: a
    stronger model shows only part of its strength on the subset (the hidden shift of a frontier model)."""
    rng = np.random.default_rng(seed)
    u = np.c_[rng.normal(0, 1.0, m), rng.normal(0, 1.0, m)]
    v = np.c_[rng.uniform(0.6, 1.2, d), rng.normal(0, 0.6, d)]
    v[list(subset), 0] *= weak
    logit = u @ v.T + rng.normal(0, 0.5, d) + rng.normal(0, 0.3, (m, d))
    return 1 / (1 + np.exp(-logit))


def _weak_frontier_split(seed, weak):
    """The frontier split of :func:`_weak_subset_population`: fit on the weakest 50% by the full aggregate (equal
    weights ``w``), predict the strongest 30% from datasets 0, 5 and 10. ``(X, w, train, test, truth, X_new)``."""
    X = _weak_subset_population(seed=seed, weak=weak)
    m, d = X.shape
    w = np.full(d, 1.0 / d)
    order = np.argsort(X @ w)
    train, test = order[:m // 2], order[-int(0.3 * m):]
    keep = np.zeros(d, bool)
    keep[[0, 5, 10]] = True
    return X, w, train, test, X[test] @ w, np.where(keep, X[test], np.nan)


def test_predicted_quantile_and_symmetric_minimum():
    from harness_ext.methods.engine.frontier_design import min_symmetric_models
    from harness_ext.methods.engine.frontier_shift import predicted_quantile

    assert [min_symmetric_models(v) for v in (0.8, 0.9, 0.95)] == [4, 9, 19]
    assert np.allclose(predicted_quantile([0.0, 2.5, 10.0, 1.0], [1.0, 2.0, 3.0, 4.0]), [0.0, 0.5, 1.0, 0.125])


@pytest.mark.slow
def test_hidden_shift_widens_the_upper_bound_of_unflagged_models_placed_high(monkeypatch):
    """Fit on the weakest 50% by the full aggregate, predict the strongest 30% from 3 datasets that load a quarter as
    much on the strength factor (4 populations of 200: 10-35% of the strongest models are not flagged). The protocol
    folds' upper quantile raises the upper bound of the unflagged models placed in the training models' top quarter
    by predicted strength, and nothing else: pooled aggregate coverage 0.500 (120 of 240) without the rule, 0.550
    (132 of 240) with it. Not the 85-95% band: the subset shows too little of the strength for any interval
    calibrated inside the training models (the folds see a fraction of the real frontier's shift)."""
    from harness_ext.methods.engine import frontier_shift

    hits, n = {}, 0
    for seed in range(4):
        X, w, train, test, truth, X_new = _weak_frontier_split(seed, 0.25)
        p = {}
        for edge in (None, 0.75):
            monkeypatch.setattr(frontier_shift, "SHIFT_EDGE", edge)
            est = LowRankCompleter(random_state=0).fit(X[train])
            p[edge] = est.predict_new_models(X_new, weights=w)
            hits[edge] = hits.get(edge, 0) + int(((truth >= p[edge].aggregate_lower)
                                                  & (truth <= p[edge].aggregate_upper)).sum())
        on, off = p[0.75], p[None]
        assert np.array_equal(on.aggregate, off.aggregate) and np.array_equal(on.aggregate_lower, off.aggregate_lower)
        assert (on.aggregate_upper >= off.aggregate_upper).all()
        raised = on.aggregate_upper > off.aggregate_upper
        assert not (raised & (on.frontier != 0)).any()  # flagged models keep the frontier folds' interval
        if raised.any():
            shift = est.frontier_["shift"]
            assert shift.q_upper > 0 and set(shift.raised) == set(np.flatnonzero(raised).tolist())
            names = [f"m{i}" for i in range(test.size)]
            said = frontier_warnings(names, on.frontier, est.frontier_)
            assert sum("upper bound is raised" in s for s in said) == raised.sum()
        n += test.size
    assert hits[0.75] >= hits[None] + 0.03 * n, (hits, n)


def test_held_out_errors_in_points_are_exact_for_rows_missing_datasets():
    """A row's points aggregate is its weighted mean of points over the datasets it has: the folds' error in points
    is that, also for a row without every dataset (datasets of 100, 1 and 50 points per unit)."""
    from types import SimpleNamespace

    from harness_ext.methods.engine.frontier_aggregate import held_out_errors

    est = SimpleNamespace(transform_=SimpleNamespace(inverse_transform=lambda z: z))
    truth = np.array([[0.5, 30.0, 0.2], [0.7, 40.0, 0.9]])
    pred = truth + np.array([[0.0, 2.0, -0.1], [0.0, 5.0, 0.3]])
    have = np.array([[True, True, True], [True, False, True]])
    seen = np.array([[True, False, False], [True, False, False]])
    w, factors = np.array([2.0, 1.0, 1.0]), np.array([100.0, 1.0, 50.0])
    rec = {"Tt": truth, "have": have, "seen": seen}
    got = held_out_errors(est, rec, pred, w, w / w.sum() * factors)

    def points(X, row):
        on = have[row]
        return float((w[on] * factors[on] * X[row, on]).sum() / w[on].sum())

    mixed = np.where(seen, truth, pred)
    want = [points(mixed, r) - points(truth, r) for r in range(2)]
    assert got == pytest.approx(want, rel=1e-12)
