"""Item estimators that borrow across a benchmark's tasks: coverage with a known truth, the other tasks used."""

import numpy as np
import pytest

from harness_ext.methods.engine.item_crosstask import CrossTask, CrossTaskLearn, DifficultyAIPW
from harness_ext.methods.engine.item_estimators import RandomLearn, random_items


def _benchmark(n_models, seed, shift=0.0, n_tasks=3, n_items=300):
    """0/1 answers to ``n_tasks`` tasks from a logistic model whose one ability is shared by every task.

    The items are fixed (seed 4321); ``seed`` draws the models; ``shift`` raises every ability.
    """
    rng_items = np.random.default_rng(4321)
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n_models) + shift
    tasks = []
    for _ in range(n_tasks):
        a, b = rng_items.gamma(4.0, 0.3, size=n_items), rng_items.normal(size=n_items)
        p = 1 / (1 + np.exp(-(theta[:, None] * a - b)))
        tasks.append((rng.random(p.shape) < p).astype(float))
    return tasks


def _run(est_cls, shift=0.0, seeds=20, n_items=30, use_others=True):
    """Coverage of the 90% interval and mean |error| for task 0 of held-out targets, over item draws."""
    source, target = _benchmark(120, seed=1), _benchmark(30, seed=2, shift=shift)
    truth = target[0].mean(axis=1)
    hits, err = [], []
    for seed in range(seeds):
        items = [random_items(S.shape[1], n_items, 100 * k + seed) for k, S in enumerate(source)]
        others_fit = [(S, it) for S, it in zip(source[1:], items[1:])] if use_others else []
        others_pred = [T[:, it] for T, it in zip(target[1:], items[1:])] if use_others else []
        res = est_cls().fit(source[0], items[0], others=others_fit).predict(target[0][:, items[0]], others=others_pred)
        hits.append((res.lower <= truth) & (truth <= res.upper))
        err.append(np.abs(res.estimate - truth))
    return float(np.mean(hits)), float(np.mean(err))


@pytest.mark.parametrize("shift", [0.0, 1.5])
def test_design_part_covers_whatever_the_model(shift):
    # shift=1.5 puts every target beyond the population: the design-based interval still holds.
    cover, _ = _run(DifficultyAIPW, shift=shift)
    assert 0.85 <= cover <= 0.97


@pytest.mark.parametrize("shift", [0.0, 1.5])
@pytest.mark.slow
def test_composite_covers_inside_and_beyond_the_population(shift):
    cover, err = _run(CrossTask, shift=shift)
    assert 0.85 <= cover <= 0.97
    # Beyond the population it is no worse than its design-based part, which the regression cannot match there.
    if shift:
        assert err <= 1.1 * _run(DifficultyAIPW, shift=shift)[1]


class _ScaleOnChosenFolds(CrossTask):
    """``crosstask`` with its interval's scale calibrated on folds refitted at the regression's chosen settings."""

    def _reselected(self, inside, others, n_folds=5):
        return inside


@pytest.mark.slow
def test_interval_scale_calibrated_on_models_that_chose_nothing_covers_new_models():
    # The regression chooses its settings by leave-one-out over every population model, so population
    # models held out of a refit at those settings err less than a new model does, and a scale calibrated
    # on them is too small. Calibrated on folds that choose their own settings, fresh models from the same
    # population are covered at the nominal rate (60 population models, 30 fresh ones, 10 draws).
    hits, scales = {"own": [], "chosen": []}, {"own": [], "chosen": []}
    for rep in range(6):
        source, target = _benchmark(60, seed=10 + rep), _benchmark(30, seed=500 + rep)
        truth = target[0].mean(axis=1)
        items = [random_items(S.shape[1], 30, 100 * k + rep) for k, S in enumerate(source)]
        fit_o, pred_o = list(zip(source[1:], items[1:])), [T[:, it] for T, it in zip(target[1:], items[1:])]
        for name, cls in (("own", CrossTask), ("chosen", _ScaleOnChosenFolds)):
            est = cls().fit(source[0], items[0], others=fit_o)
            res = est.predict(target[0][:, items[0]], others=pred_o)
            hits[name].append(np.mean((res.lower <= truth) & (truth <= res.upper)))
            scales[name].append(est.interval_scale_)
    assert 0.86 <= np.mean(hits["own"]) <= 0.95
    assert np.mean(scales["own"]) > np.mean(scales["chosen"])


def test_the_other_tasks_sharpen_the_regression():
    # One ability behind every task: the other tasks' sample means carry it, so the error drops.
    _, with_others = _run(CrossTaskLearn, seeds=10)
    _, alone = _run(CrossTaskLearn, seeds=10, use_others=False)
    assert with_others < 0.85 * alone
    # Alone it is random sampling + learn with the sample mean as one more feature: about the same error.
    source, target = _benchmark(120, seed=1), _benchmark(30, seed=2)
    errs = []
    for seed in range(10):
        it = random_items(300, 30, seed)
        errs.append(np.abs(RandomLearn().fit(source[0], it).predict(target[0][:, it]).estimate
                           - target[0].mean(axis=1)).mean())
    assert alone < 1.15 * np.mean(errs)


def test_the_other_tasks_answers_move_the_estimate():
    source, target = _benchmark(120, seed=1), _benchmark(5, seed=2)
    items = [random_items(300, 30, k) for k in range(3)]
    est = CrossTask().fit(source[0], items[0], others=[(source[k], items[k]) for k in (1, 2)])
    Y = target[0][:, items[0]]
    low = est.predict(Y, others=[np.zeros((5, 30)), np.zeros((5, 30))]).estimate
    high = est.predict(Y, others=[np.ones((5, 30)), np.ones((5, 30))]).estimate
    assert np.all(high > low)


def test_missing_rows_are_filled_and_bad_shapes_refused():
    source, target = _benchmark(60, seed=1, n_tasks=2), _benchmark(4, seed=2, n_tasks=2)
    items = [random_items(300, 20, k) for k in range(2)]
    other = source[1].copy()
    other[:5] = np.nan  # five population models without the other task
    est = CrossTaskLearn().fit(source[0], items[0], others=[(other, items[1])])
    assert est.n_filled_ == 5 * 20
    y_other = target[1][:, items[1]].copy()
    y_other[0, :3] = np.nan
    assert np.isfinite(est.predict(target[0][:, items[0]], others=[y_other]).estimate).all()
    with pytest.raises(ValueError, match="population models"):
        CrossTask().fit(source[0], items[0], others=[(other[:10], items[1])])
    with pytest.raises(ValueError, match="other tasks"):
        est.predict(target[0][:, items[0]], others=[])


def test_few_population_models_give_the_design_based_estimate():
    source, target = _benchmark(6, seed=1), _benchmark(3, seed=2)
    items = [random_items(300, 20, k) for k in range(3)]
    fit_o = [(source[k], items[k]) for k in (1, 2)]
    pred_o = [target[k][:, items[k]] for k in (1, 2)]
    est = CrossTask().fit(source[0], items[0], others=fit_o)
    assert est.learn_ is None
    got = est.predict(target[0][:, items[0]], others=pred_o)
    want = DifficultyAIPW().fit(source[0], items[0], others=fit_o).predict(target[0][:, items[0]], others=pred_o)
    assert np.array_equal(got.estimate, want.estimate) and np.array_equal(got.upper, want.upper)


def test_reduce_and_predict_hand_the_other_tasks_over():
    from harness_ext.methods.reduction.item_others import align_rows, population_others

    M = np.arange(6.0).reshape(3, 2)
    got = align_rows(M, ["a", "b", "c"], ["c", "x", "a"])
    assert np.array_equal(got[[0, 2]], M[[2, 0]]) and np.isnan(got[1]).all()
    pops = {"t1": (np.zeros((2, 4)), ["a", "b"]), "t2": (np.ones((1, 5)), ["b"])}
    [(aligned, cols)] = population_others(pops, {"t1": [0, 1], "t2": [3, 4]}, "t1")
    assert np.isnan(aligned[0]).all() and (aligned[1] == 1).all() and list(cols) == [3, 4]


def test_the_gap_above_the_range_is_at_least_the_design_estimates_lower_bound():
    """A regression that ends below the sources' top cannot cancel the gap of a design estimate many standard errors
    beyond it; a design estimate just above the top by noise keeps the clipped gap."""
    from harness_ext.methods.engine.item_composite import clipped_gap
    from harness_ext.methods.engine.item_crosstask import GAP_LOWER_Z

    est = CrossTask()
    est.range_, est.gap_clip_ = (0.3, 0.6), 1.0
    sd = np.array([0.04, 0.04])
    a = np.array([0.80, 0.62])  # 5 standard errors beyond the top; half of one above it
    m = np.array([0.55, 0.50])  # the regression below the top for both
    clipped = clipped_gap(a, m, sd, est.range_, est.floor_margin, est.gap_clip_)
    got = est._gap(a, sd, m=m)
    assert clipped[0] == 0.0  # the clip alone lets the regression cancel the far target's gap
    assert got[0] >= a[0] - 0.6 - GAP_LOWER_Z * sd[0] - 1e-12 and got[0] == pytest.approx(0.12)
    assert got[1] == clipped[1]
    # The far target's regression share falls: its error variance now carries the gap.
    assert est._model_variance(a, sd, 0.0001, m=m)[0] > 0.0001 + 0.1
    # Without the regression's estimate the gap is the design estimate's whole distance, as before.
    assert np.allclose(est._gap(a, sd), clipped_gap(a, a, sd, est.range_, est.floor_margin, np.inf))
