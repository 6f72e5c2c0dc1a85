"""The low-rank ability model across a benchmark's items and the stacked regression of ``crosstask``."""

import numpy as np
import pytest

from harness_ext.methods.engine.item_estimators import random_items
from harness_ext.methods.engine.item_factor import FactorKernel, StackedLearn, factor_loadings, factor_scores
from harness_ext.methods.engine.item_learn import KernelLearn
from test_item_crosstask import _benchmark, _run


def _low_rank(n_models, seed, rank=2, n_items=400, noise=0.3):
    """Answers ``Z W' + noise`` of a known rank, the items fixed (seed 99), ``seed`` drawing the models."""
    W = np.random.default_rng(99).normal(size=(n_items, rank))
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n_models, rank))
    return Z, Z @ W.T + noise * rng.normal(size=(n_models, n_items))


def test_factor_scores_recover_the_latent_abilities_from_a_sample_of_items():
    _, X = _low_rank(200, seed=0)
    Z_new, X_new = _low_rank(50, seed=1)
    observed = random_items(X.shape[1], 60, 0)
    model = factor_loadings(X, observed, rank=2)
    Z_hat = factor_scores(model, X_new[:, observed])
    # Up to a rotation: the true abilities are a linear function of the estimated ones.
    coef, *_ = np.linalg.lstsq(np.c_[Z_hat, np.ones(50)], Z_new, rcond=None)
    resid = Z_new - np.c_[Z_hat, np.ones(50)] @ coef
    assert (resid ** 2).sum() / ((Z_new - Z_new.mean(axis=0)) ** 2).sum() < 0.05


def test_factor_kernel_recovers_a_linear_truth_in_the_abilities():
    _, X = _low_rank(200, seed=0)
    _, X_new = _low_rank(50, seed=1)
    # The score to predict: the mean over the first 100 items (a linear function of the two abilities).
    y, truth = X[:, :100].mean(axis=1), X_new[:, :100].mean(axis=1)
    observed = random_items(X.shape[1], 40, 3)
    est = FactorKernel().fit(X, observed, y)
    err = np.abs(est.predict(X_new[:, observed]) - truth).mean()
    naive = np.abs(X_new[:, observed[observed < 100]].mean(axis=1) - truth).mean()
    assert err < 0.3 * naive
    assert set(est.setting_) == {"rank", "bandwidth", "linear", "alpha"}
    assert est.setting_["rank"] >= 2
    # The leave-one-out residuals are exact: signed, one per source model.
    assert est.loo_residuals_.shape == (200,) and (est.loo_residuals_ < 0).any()


def test_factor_kernel_refit_for_its_predictions_alone_predicts_as_the_fit():
    _, X = _low_rank(120, seed=0)
    _, X_new = _low_rank(10, seed=1)
    y = X[:, :100].mean(axis=1)
    observed = random_items(X.shape[1], 40, 3)
    fixed = FactorKernel().fit(X, observed, y).fixed_params()
    full = FactorKernel(**fixed).fit(X[20:], observed, y[20:])
    point = FactorKernel(**fixed)._fit_estimate(X[20:], observed, y[20:])
    assert point.setting_ == full.setting_ and not hasattr(point, "loo_residuals_")
    assert np.array_equal(point.predict(X_new[:, observed]), full.predict(X_new[:, observed]))


@pytest.mark.slow
def test_stacked_learn_covers_and_is_no_worse_than_the_kernel():
    cover, err = _run(StackedLearn, seeds=8)
    assert 0.82 <= cover <= 0.98
    _, kernel = _run(KernelLearn, seeds=8)
    assert err <= 1.05 * kernel


def test_share_one_is_the_kernel_and_fixed_params_reproduce_the_fit():
    source = _benchmark(60, seed=1)
    items = [random_items(300, 20, k) for k in range(3)]
    fit_o = [(source[k], items[k]) for k in (1, 2)]
    Y, pred_o = source[0][:7, items[0]], [source[k][:7, items[k]] for k in (1, 2)]
    only = StackedLearn(kernel_shares=(1.0,)).fit(source[0], items[0], others=fit_o)
    kernel = KernelLearn().fit(source[0], items[0], others=fit_o)
    assert only.factor_ is None
    assert np.allclose(only.predict(Y, others=pred_o).estimate, kernel.predict(Y, others=pred_o).estimate)
    assert np.allclose(only.loo_residuals_, kernel.loo_residuals_)
    est = StackedLearn(kernel_shares=(0.5,)).fit(source[0], items[0], others=fit_o)
    assert est.share_ == 0.5 and est.factor_ is not None
    again = StackedLearn(**est.fixed_params()).fit(source[0], items[0], others=fit_o)
    assert np.allclose(est.predict(Y, others=pred_o).estimate, again.predict(Y, others=pred_o).estimate)
    assert np.all(est.error_variance(Y) > 0)
    chosen = StackedLearn().fit(source[0], items[0], others=fit_o)
    assert chosen.share_ in StackedLearn().kernel_shares


def test_without_other_tasks_it_is_the_kernel_alone():
    source = _benchmark(60, seed=1)
    items = random_items(300, 20, 0)
    est = StackedLearn().fit(source[0], items)
    assert est.share_ == 1.0 and est.factor_ is None
    Y = source[0][:5, items]
    assert np.allclose(est.predict(Y).estimate, KernelLearn().fit(source[0], items).predict(Y).estimate)


def test_a_large_benchmark_reads_a_bounded_share_of_its_items():
    source = _benchmark(60, seed=1)
    items = [random_items(300, 20, k) for k in range(3)]
    fit_o = [(source[k], items[k]) for k in (1, 2)]
    est = StackedLearn(kernel_shares=(0.5,), max_items=400).fit(source[0], items[0], others=fit_o)
    X, observed = est._answers(est.source_, est.others_)
    assert X.shape[1] == 400 and np.array_equal(observed, np.arange(60))
    # The observed columns are the sampled answers themselves.
    assert np.array_equal(X[:, :20], source[0][:, items[0]])
    Y, pred_o = source[0][:5, items[0]], [source[k][:5, items[k]] for k in (1, 2)]
    assert np.all(np.isfinite(est.predict(Y, others=pred_o).estimate))
