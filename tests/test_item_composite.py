"""crosstask's composite: the clipped gap beyond the population, and the conformal scale of its interval."""

import numpy as np
import pytest

from harness_ext.methods.engine.item_composite import clipped_gap, coverage_scale
from harness_ext.methods.engine.item_crosstask import CrossTask
from harness_ext.methods.engine.item_estimators import random_items

from test_item_crosstask import _benchmark


def test_clipped_gap_unclipped_is_the_distance_of_the_design_estimate():
    a = np.array([0.2, 0.5, 0.95, 0.05])
    got = clipped_gap(a, a, np.full(4, 0.05), (0.1, 0.9), floor_margin=1.0, clip=np.inf)
    # Above: 0.95 - 0.9; below: only beyond one standard error under the floor (0.1 - 0.05 - 0.05 = 0).
    assert got == pytest.approx([0.0, 0.0, 0.05, 0.0])
    assert clipped_gap(np.array([0.0]), np.array([0.5]), np.array([0.02]), (0.1, 0.9), 1.0, np.inf)[0] == \
        pytest.approx(0.08)


def test_clipped_gap_believes_the_design_estimate_only_near_the_regression():
    sd = np.full(3, 0.05)
    m = np.array([0.70, 0.88, 0.90])  # the regression: well inside, at the edge, at the edge
    a = np.array([0.95, 0.95, 0.99])  # the design estimate beyond the top (0.9) in every case
    got = clipped_gap(a, m, sd, (0.1, 0.9), floor_margin=1.0, clip=1.0)
    # Well inside: min(0.95, 0.75) - 0.9 < 0 -> no gap; at the edge the gap stands, up to one sd beyond m.
    assert got == pytest.approx([0.0, 0.03, 0.05])
    below = clipped_gap(np.array([0.0]), np.array([0.3]), np.array([0.05]), (0.2, 0.9), 1.0, 1.0)
    assert below[0] == 0.0  # max(0.0, 0.25) is inside the floor margin
    assert (clipped_gap(a, m, sd, (0.1, 0.9), 1.0, 2.0) >= got).all()


def test_coverage_scale_is_the_factor_that_covers_at_the_level():
    # Errors with a known scale: sd = k0 * s on top of a fixed part f; the conformal factor recovers k0
    # and covers fresh models at the nominal rate.
    rng = np.random.default_rng(0)
    k0, n = 0.6, 4000
    s2, f = rng.uniform(0.5, 2.0, n), rng.uniform(0.0, 0.2, n)
    resid = rng.normal(size=n) * np.sqrt(k0 ** 2 * s2 + f)
    k = coverage_scale(resid, s2, np.zeros(n), f, level=0.9)
    assert k == pytest.approx(k0, rel=0.05)
    s2n, fn = rng.uniform(0.5, 2.0, n), rng.uniform(0.0, 0.2, n)
    fresh = rng.normal(size=n) * np.sqrt(k0 ** 2 * s2n + fn)
    cover = np.mean(np.abs(fresh) <= 1.6448536 * np.sqrt(k ** 2 * s2n + fn))
    assert 0.88 <= cover <= 0.92


def test_coverage_scale_zero_when_the_fixed_part_covers_and_capped_when_nothing_does():
    assert coverage_scale(np.full(20, 0.1), np.ones(20), np.zeros(20), np.ones(20)) == 0.0
    assert coverage_scale(np.full(20, 1e6), np.full(20, 1e-2), np.zeros(20), np.zeros(20), cap=7.0) == 7.0


def test_coverage_scale_ignores_models_whose_interval_is_the_design_part():
    # Half the calibration models have no regression share (scaled 0): their design-based interval misses
    # 20% of the time whatever k is. They used to push k to the cap (HELM Lite MATH: k 300-800, intervals
    # +/-50 on a 0-1 score); k now comes from the models it governs.
    rng = np.random.default_rng(1)
    n, k0 = 400, 0.8
    s2 = np.r_[np.zeros(n), rng.uniform(0.5, 2.0, n)]
    f = np.r_[np.ones(n), np.zeros(n)]
    resid = np.r_[rng.normal(size=n) * 1.3, rng.normal(size=n) * k0 * np.sqrt(s2[n:])]
    k = coverage_scale(resid, s2, np.zeros(2 * n), f, level=0.9)
    assert k == pytest.approx(k0, rel=0.1)
    assert coverage_scale(resid[:n], s2[:n], np.zeros(n), f[:n]) == 1.0  # none informative


def test_composite_records_its_choices():
    source = _benchmark(120, seed=1)
    items = [random_items(S.shape[1], 30, 3 + k) for k, S in enumerate(source)]
    est = CrossTask().fit(source[0], items[0], others=list(zip(source[1:], items[1:])))
    assert est.gap_clip_ in est.gap_clips and est.variance_scale_ in est.variance_scales
    assert np.isfinite(est.interval_scale_) and est.interval_scale_ >= 0
    raw = CrossTask(calibrate=False).fit(source[0], items[0], others=list(zip(source[1:], items[1:])))
    assert raw.interval_scale_ == 1.0


@pytest.mark.slow
def test_inside_the_population_a_noisy_design_estimate_keeps_the_regression():
    source = _benchmark(120, seed=1)
    items = [random_items(S.shape[1], 30, 3 + k) for k, S in enumerate(source)]
    est = CrossTask(gap_clips=(1.0,)).fit(source[0], items[0], others=list(zip(source[1:], items[1:])))
    lo, hi = est.range_
    sd = np.array([0.08])
    v_m = np.array([0.02 ** 2])
    # The design estimate two sd beyond the top, the regression well inside: clipped, no gap, weight kept.
    w_clip = est._scaled_weight(sd ** 2, np.array([hi + 2 * sd[0]]), v_m, 1.0, m=np.array([hi - 0.15]))
    w_raw = est._scaled_weight(sd ** 2, np.array([hi + 2 * sd[0]]), v_m, 1.0)
    assert w_clip[0] > 0.5 > w_raw[0]


def _fay_herriot_areas(seed, n_areas=4000, n=50, df=8):
    """Areas with a known truth ``p``: a direct estimate of design variance ``0.6 p (1 - p) / n`` whose estimated
    variance is noisy (chi-square on ``df`` degrees of freedom, independent of the estimate's error, as a residual
    variance from ``n`` answers is), and a model estimate with a known error sd between 2 and 8 points."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.1, 0.9, n_areas)
    v_true = 0.6 * p * (1 - p) / n
    a = p + np.sqrt(v_true) * rng.normal(size=n_areas)
    v_own = v_true * rng.chisquare(df, n_areas) / df
    sd_m = rng.uniform(0.02, 0.08, n_areas)
    return p, a, v_own, p + sd_m * rng.normal(size=n_areas), sd_m


def _composite(p, a, v_own, m, sd_m, v_weight):
    """Squared error (x 1e4) and the 90% interval's coverage of the targets the design part carries (w < 0.5) and
    of the others, the weight from ``v_weight``, the interval from the target's own variance."""
    w = v_weight / (v_weight + sd_m ** 2)
    est = w * m + (1 - w) * a
    hit = np.abs(est - p) <= 1.645 * np.sqrt(w ** 2 * sd_m ** 2 + (1 - w) ** 2 * v_own)
    return np.mean((est - p) ** 2) * 1e4, hit[w < 0.5].mean(), hit[w >= 0.5].mean()


def test_a_weight_from_the_smoothed_variance_errs_less_and_covers_the_design_carried_targets():
    # Chosen with each area's own noisy variance, the weight goes to the direct estimate where that variance
    # came out small by chance, and those areas under-cover; the variance function fitted on 300 other areas
    # (held-out models in crosstask) does not select on the noise.
    from harness_ext.methods.engine.item_composite import fit_gvf, gvf_variance

    for seed in range(3):
        p, a, v_own, m, sd_m = _fay_herriot_areas(seed)
        coef = fit_gvf(a[:300], v_own[:300])
        assert coef[1] == pytest.approx(0.6 / 50, rel=0.25)
        own = _composite(p, a, v_own, m, sd_m, v_own)
        smooth = _composite(p, a, v_own, m, sd_m, gvf_variance(coef, a, v_own))
        assert smooth[0] < own[0]
        assert own[1] < 0.86 and smooth[1] > own[1] + 0.02 and 0.86 <= smooth[1] <= 0.94
        assert 0.88 <= smooth[2] <= 0.93


def test_the_variance_function_falls_back_on_the_targets_own_variances():
    from harness_ext.methods.engine.item_composite import fit_gvf, gvf_variance

    assert fit_gvf(np.linspace(0.2, 0.8, 5), np.ones(5)) is None  # too few models
    assert fit_gvf(np.full(20, 0.5), np.arange(20.0)) == (9.5, 0.0)  # no spread in p: the mean variance
    own = np.array([0.01, 0.02])
    assert np.array_equal(gvf_variance(None, [0.3, 0.6], own), own)
    assert np.allclose(gvf_variance((0.0, 0.01), [0.5, 1.0], own), [0.0025, 0.02])  # p = 1: no variance, its own


def test_crosstask_smooths_the_design_variance_its_weight_reads():
    from harness_ext.methods.engine.item_composite import gvf_variance

    source, target = _benchmark(60, seed=3), _benchmark(20, seed=4)
    items = [random_items(S.shape[1], 30, 100 * k + 7) for k, S in enumerate(source)]
    fit_o, pred_o = list(zip(source[1:], items[1:])), [T[:, it] for T, it in zip(target[1:], items[1:])]
    est = CrossTask().fit(source[0], items[0], others=fit_o)
    assert est.gvf_ is not None and est.gvf_[1] > 0
    a = est.design_.predict(target[0][:, items[0]], others=pred_o)
    ratio = gvf_variance(est.gvf_, a.estimate, a.se ** 2) / a.se ** 2
    assert 0.6 <= np.median(ratio) <= 1.6  # the function follows the targets' own variances, without their noise
    assert CrossTask(smooth_variance=False).fit(source[0], items[0], others=fit_o).gvf_ is None


def test_the_edge_hull_covers_the_design_carried_targets_just_beyond_the_range():
    # Targets from the sources' population (scores 0.2-0.8, the sources' range 0.216-0.784): the design estimate
    # has sd 5 points, the regression 2 points but cannot follow a target beyond the range. The composite's weight
    # goes to the design part where its estimate lies beyond the range, partly by its own noise, so among those
    # targets it errs outward and their intervals under-cover; reaching the regression's bound on the range's
    # side covers them and leaves the rest as they were.
    from harness_ext.methods.engine.item_composite import edge_hull

    z, lo, hi = 1.6448536, 0.216, 0.784
    for seed in range(3):
        rng = np.random.default_rng(seed)
        p = rng.uniform(0.2, 0.8, 20000)
        s, sd_m = np.full(p.size, 0.05), np.full(p.size, 0.02)
        a, m = p + s * rng.normal(size=p.size), np.clip(p, lo, hi) + sd_m * rng.normal(size=p.size)
        gap = np.maximum(0.0, np.maximum(a - hi, lo - a - s))
        v_model = sd_m ** 2 + (5 * gap) ** 2
        w = s ** 2 / (s ** 2 + v_model)
        est, h = w * m + (1 - w) * a, z * np.sqrt(w ** 2 * v_model + (1 - w) ** 2 * s ** 2)
        lower, upper = edge_hull(est - h, est + h, a, s, (lo, hi), m - z * sd_m, m + z * sd_m, 2.0)
        before, after = np.abs(est - p) <= h, (lower <= p) & (p <= upper)
        carried = w < 0.5
        assert 0.03 <= carried.mean() <= 0.08
        assert before[carried].mean() < 0.80 and after[carried].mean() > 0.88
        assert 0.88 <= after[~carried].mean() <= 0.92 and after[~carried].mean() - before[~carried].mean() < 0.005
        beyond = np.abs(np.where(a > hi, a - hi, np.where(a < lo, lo - a, 0.0))) >= 2 * s
        assert np.array_equal(lower[beyond], (est - h)[beyond]) and np.array_equal(upper[beyond], (est + h)[beyond])
        assert (lower <= est - h).all() and (upper >= est + h).all()  # only ever wider, the outer side kept


def test_crosstask_hull_edge_off_is_the_interval_without_it():
    source, target = _benchmark(60, seed=3), _benchmark(20, seed=4)
    items = [random_items(S.shape[1], 30, 100 * k + 7) for k, S in enumerate(source)]
    fit_o, pred_o = list(zip(source[1:], items[1:])), [T[:, it] for T, it in zip(target[1:], items[1:])]
    on = CrossTask().fit(source[0], items[0], others=fit_o).predict(target[0][:, items[0]], others=pred_o)
    off = CrossTask(hull_edge=False).fit(source[0], items[0], others=fit_o).predict(target[0][:, items[0]],
                                                                                    others=pred_o)
    assert np.array_equal(on.estimate, off.estimate)  # the point estimate is the same
    assert (on.lower <= off.lower).all() and (on.upper >= off.upper).all()
