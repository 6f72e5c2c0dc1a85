"""`crosstask` for a target beyond the sources on the benchmark's other tasks: its interval covers the design part's."""

import numpy as np

from harness_ext.methods.engine.item_crosstask import CrossTask, other_tasks_mean, widen_beyond_sources
from harness_ext.methods.engine.item_estimators import ItemEstimate, random_items


def _benchmark(n_models, seed, shift=0.0, n_items=200):
    """0/1 answers to task 0 (its own ability) and two other tasks (a shared second ability, raised by ``shift``):
    the benchmark's strongest on the other tasks are not stronger on task 0."""
    rng_items, rng = np.random.default_rng(4321), np.random.default_rng(seed)
    own, shared = rng.normal(size=n_models), rng.normal(size=n_models) + shift
    tasks = []
    for theta in (own, shared, shared):
        a, b = rng_items.gamma(4.0, 0.3, size=n_items), rng_items.normal(size=n_items)
        p = 1 / (1 + np.exp(-(theta[:, None] * a - b)))
        tasks.append((rng.random(p.shape) < p).astype(float))
    return tasks


def _fit_predict(source, target, seed=0, n=30):
    items = [random_items(S.shape[1], n, 100 * k + seed) for k, S in enumerate(source)]
    est = CrossTask().fit(source[0], items[0], others=[(S, it) for S, it in zip(source[1:], items[1:])])
    res = est.predict(target[0][:, items[0]], others=[T[:, it] for T, it in zip(target[1:], items[1:])])
    design = est.design_.predict(target[0][:, items[0]], others=[T[:, it] for T, it in zip(target[1:], items[1:])])
    return est, res, design


def test_other_tasks_mean_weights_tasks_equally_over_answered_items():
    a = np.array([[1.0, 0.0, np.nan], [np.nan, np.nan, np.nan]])
    b = np.array([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]])
    assert np.allclose(other_tasks_mean([a, b]), [0.75, 0.5])
    assert np.isnan(other_tasks_mean([a[1:]]))[0]


def test_widening_keeps_the_estimate_and_covers_both_intervals():
    res = ItemEstimate(np.array([0.5, 0.5]), np.array([0.45, 0.45]), np.array([0.55, 0.55]), 0.9)
    design = ItemEstimate(np.array([0.6, 0.6]), np.array([0.5, 0.5]), np.array([0.7, 0.7]), 0.9)
    out = widen_beyond_sources(res, design, np.array([True, False]))
    assert np.array_equal(out.estimate, res.estimate)
    assert (out.lower[0], out.upper[0]) == (0.45, 0.7) and (out.lower[1], out.upper[1]) == (0.45, 0.55)


def test_targets_beyond_on_the_other_tasks_get_the_design_interval_covered():
    source = _benchmark(80, seed=1)
    est, res, design = _fit_predict(source, _benchmark(20, seed=2, shift=3.0))
    assert est.beyond_sources_.mean() > 0.5  # far stronger on the other tasks than every source model
    b = est.beyond_sources_
    assert np.all(res.lower[b] <= design.lower[b] + 1e-12) and np.all(res.upper[b] >= design.upper[b] - 1e-12)
    # Targets like the sources are not flagged and keep the composite's interval.
    est2, res2, _ = _fit_predict(source, _benchmark(20, seed=3))
    assert est2.beyond_sources_.sum() <= 1
    # Without the other tasks nothing is flagged.
    items = random_items(200, 30, 0)
    est3 = CrossTask().fit(source[0], items)
    est3.predict(_benchmark(5, seed=4, shift=3.0)[0][:, items])
    assert not est3.beyond_sources_.any()


def test_a_widened_target_has_the_standard_error_of_its_widened_interval_and_its_distance():
    from harness_ext.methods.engine.item_estimators import _z

    res = ItemEstimate(np.array([0.5, 0.5]), np.array([0.45, 0.45]), np.array([0.55, 0.55]), 0.9,
                       np.array([0.03, 0.03]))
    design = ItemEstimate(np.array([0.6, 0.6]), np.array([0.5, 0.5]), np.array([0.7, 0.7]), 0.9, np.array([0.06, 0.06]))
    out = widen_beyond_sources(res, design, np.array([0.08, -0.02]))
    assert np.isclose(out.se[0], (0.7 - 0.45) / (2 * _z(0.9))) and out.se[0] > res.se[0]
    assert out.se[1] == 0.03  # not beyond the sources: the composite's own
    assert np.array_equal(out.beyond_sources, [0.08, -0.02])


def test_the_result_says_how_far_beyond_the_sources_each_target_lies():
    source = _benchmark(80, seed=1)
    est, res, _ = _fit_predict(source, _benchmark(20, seed=2, shift=3.0))
    assert np.array_equal(res.beyond_sources > 0, est.beyond_sources_)
    assert np.all(res.beyond_sources[est.beyond_sources_] <= 1.0)
