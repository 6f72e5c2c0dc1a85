"""Working models of the design-based item estimators: the nested choice, and the interval with a known truth."""

import numpy as np
import pytest

from harness_ext.methods.engine.item_crosstask import CrossTask, SelectedAIPW, local_loo_mse
from harness_ext.methods.engine.item_estimators import design_interval, random_items
from harness_ext.methods.engine.item_working import choose_working, item_loadings


def _benchmark(n_models, seed, shift=0.0, n_tasks=3, n_items=300):
    """0/1 answers to ``n_tasks`` tasks from a two-dimensional logistic model shared by every task.

    The items are fixed (seed 4321); ``seed`` draws the models; ``shift`` raises both abilities, so the
    targets of a shifted draw lie beyond every source model.
    """
    rng_items = np.random.default_rng(4321)
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(n_models, 2)) + shift
    tasks = []
    for _ in range(n_tasks):
        a, b = rng_items.gamma(3.0, 0.3, size=(n_items, 2)), rng_items.normal(size=n_items)
        p = 1 / (1 + np.exp(-(theta @ a.T - b)))
        tasks.append((rng.random(p.shape) < p).astype(float))
    return tasks


def _coverage(est_cls, shift, seeds=40, n_items=30):
    source, target = _benchmark(100, seed=1), _benchmark(20, seed=2, shift=shift)
    truth = target[0].mean(axis=1)
    hits, errs, ses = [], [], []
    for seed in range(seeds):
        items = [random_items(S.shape[1], n_items, 100 * k + seed) for k, S in enumerate(source)]
        res = est_cls().fit(source[0], items[0], others=list(zip(source[1:], items[1:]))).predict(
            target[0][:, items[0]], others=[T[:, it] for T, it in zip(target[1:], items[1:])])
        hits.append((res.lower <= truth) & (truth <= res.upper))
        errs.append(res.estimate - truth)
        ses.append(res.se)
    return float(np.mean(hits)), np.array(errs), np.array(ses)


@pytest.mark.slow
@pytest.mark.parametrize("shift", [0.0, 1.5])
def test_selected_working_model_covers_at_the_nominal_rate(shift):
    # 40 item draws x 20 targets; shift=1.5 puts every target beyond the population. The choice of the
    # working model is nested inside each fold's training items, so the estimate stays design-unbiased.
    cover, errs, ses = _coverage(SelectedAIPW, shift)
    assert 0.85 <= cover <= 0.95
    # Unbiased over the item draws: the mean error is within a few standard errors of its mean.
    assert abs(errs.mean()) < 3 * np.sqrt(np.mean(ses ** 2) / errs.size) + 0.005


def test_choose_working_takes_the_candidate_whose_residuals_vary_least():
    rng = np.random.default_rng(0)
    truth = rng.random((200, 3))  # items x targets
    Y = (rng.random((3, 200)) < truth.T).astype(float)
    items = np.arange(0, 200, 2)

    def candidates(it, Y_it):
        return [np.full_like(truth, 0.5), truth]  # a constant, and the true probabilities

    F, choice = choose_working(candidates, items, Y[:, items])
    assert np.all(choice == 1)
    assert np.allclose(F, truth)


def test_item_loadings_are_standardised_and_split_by_task():
    blocks = _benchmark(60, seed=3, n_items=80)
    blocks[1][:5] = np.nan  # a model without that task
    L = item_loadings(blocks, dims=2)
    assert [x.shape for x in L] == [(80, 2)] * 3
    assert np.allclose(np.vstack(L).std(axis=0), 1.0)
    assert all(np.isfinite(x).all() for x in L)


def test_local_loo_mse_reads_the_nearest_source_models():
    full = np.linspace(0, 1, 30)
    resid = np.where(full > 0.8, 0.3, 0.05)  # the regression errs more at the population's edge
    out = local_loo_mse(resid, full, np.array([0.1, 0.95]), share=0.1, min_models=5)
    assert out[0] == pytest.approx(0.05 ** 2)
    assert out[1] == pytest.approx(0.3 ** 2)


def test_composite_beyond_the_population_is_the_design_interval():
    # Far beyond the population the regression gets no weight: the estimate and interval are the design part's.
    source, target = _benchmark(100, seed=1), _benchmark(10, seed=2, shift=3.0)
    items = [random_items(S.shape[1], 30, 7 + k) for k, S in enumerate(source)]
    est = CrossTask().fit(source[0], items[0], others=list(zip(source[1:], items[1:])))
    others = [T[:, it] for T, it in zip(target[1:], items[1:])]
    res = est.predict(target[0][:, items[0]], others=others)
    a = est.design_.predict(target[0][:, items[0]], others=others)
    far = est.weight_ < 1e-2  # w falls with the squared gap: 0.002-0.008 here
    assert far.any()
    for x, y in ((res.lower, a.lower), (res.upper, a.upper), (res.estimate, a.estimate)):
        assert np.allclose(x[far], y[far], atol=2e-3)
