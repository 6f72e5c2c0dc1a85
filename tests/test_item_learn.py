"""Kernel ridge across a benchmark's tasks: exact leave-one-out, coverage with a known truth, the other tasks used."""

import numpy as np
import pytest

from harness_ext.methods.engine.item_estimators import RandomLearn, random_items
from harness_ext.methods.engine.item_learn import KernelLearn, kernel_loo_residuals, kernel_loo_residuals_linear
from test_item_crosstask import _benchmark, _run


def test_kernel_loo_is_the_refit_without_each_observation():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(15, 4))
    y = X @ rng.normal(size=4) + rng.normal(size=15)
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 4.0) + X @ X.T
    alpha = 0.7
    sq = kernel_loo_residuals(K, y, [alpha])[0] ** 2
    for i in range(15):
        keep = np.arange(15) != i
        Kk, yk = K[np.ix_(keep, keep)], y[keep]
        J = np.eye(14) - 1.0 / 14
        dual = np.linalg.solve(J @ Kk @ J + alpha * np.eye(14), yk - yk.mean())
        kt = K[i, keep]
        kt_c = kt - Kk.mean(axis=0) - kt.mean() + Kk.mean()
        assert np.isclose((y[i] - (kt_c @ dual + yk.mean())) ** 2, sq[i])


def test_one_decomposition_serves_every_linear_weight():
    """The linear part ``lin B B'`` by Woodbury on the Gaussian part's eigenvectors: the residuals of the whole kernel."""
    rng = np.random.default_rng(3)
    X = (rng.random((40, 12)) < rng.random((40, 1))).astype(float)
    y = X.mean(axis=1) + 0.05 * rng.normal(size=40)
    B = rng.normal(size=(40, 3)) * 0.1
    B -= B.mean(axis=0)
    K0 = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 6.0)
    alphas, lins = (0.01, 0.3, 10.0), (0.0, 1.0, 50.0, 200.0)
    got = kernel_loo_residuals_linear(K0, B, lins, y, alphas)
    assert len(got) == len(lins)
    # No linear part: the very same computation as the kernel alone.
    assert np.array_equal(got[0], kernel_loo_residuals(K0, y, alphas))
    for lin, r in zip(lins[1:], got[1:]):
        assert r.shape == (3, 40)
        assert np.allclose(r, kernel_loo_residuals(K0 + lin * B @ B.T, y, alphas), rtol=1e-9, atol=1e-12)


def test_a_refit_for_its_estimate_alone_gives_the_fit_s_estimates():
    """``_fit_estimate`` (a stack's held-out refits) skips the leave-one-out search, not a digit of the estimate."""
    source = _benchmark(50, seed=4)
    items = [random_items(300, 20, k) for k in range(3)]
    fit_o = [(source[k], items[k]) for k in (1, 2)]
    fixed = KernelLearn().fit(source[0], items[0], others=fit_o).fixed_params()
    Y, pred_o = source[0][:9, items[0]], [source[k][:9, items[k]] for k in (1, 2)]
    full = KernelLearn(**fixed).fit(source[0][9:], items[0], others=[(S[9:], it) for S, it in fit_o])
    point = KernelLearn(**fixed)._fit_estimate(source[0][9:], items[0], others=[(S[9:], it) for S, it in fit_o])
    assert point.setting_ == full.setting_
    assert np.array_equal(point._estimate(Y, others=pred_o), full.predict(Y, others=pred_o).estimate)


class _Paper(RandomLearn):
    """Random sampling + learn, ignoring the other tasks (to run in the same loop)."""

    def fit(self, source, items, others=()):
        return super().fit(source, items)

    def predict(self, Y, others=()):
        return super().predict(Y)


@pytest.mark.slow
def test_covers_like_the_population_and_uses_the_other_tasks():
    cover, with_others = _run(KernelLearn, seeds=8)
    assert 0.82 <= cover <= 0.98
    _, alone = _run(KernelLearn, seeds=8, use_others=False)
    _, paper = _run(_Paper, seeds=8)
    # One ability behind every task: the other tasks' answers carry it.
    assert with_others < 0.85 * alone
    # Alone it is at least as good as random sampling + learn (within noise).
    assert alone < 1.1 * paper


def test_setting_is_chosen_and_fixed_params_reproduce_it():
    source = _benchmark(60, seed=1)
    items = [random_items(300, 20, k) for k in range(3)]
    fit_o = [(source[k], items[k]) for k in (1, 2)]
    est = KernelLearn().fit(source[0], items[0], others=fit_o)
    assert set(est.setting_) == {"weight", "bandwidth", "linear", "alpha"}
    again = KernelLearn(**est.fixed_params()).fit(source[0], items[0], others=fit_o)
    Y = source[0][:7, items[0]]
    pred_o = [source[k][:7, items[k]] for k in (1, 2)]
    assert np.allclose(est.predict(Y, others=pred_o).estimate, again.predict(Y, others=pred_o).estimate)
    v = est.error_variance(Y)
    assert v.shape == (7,) and np.all(v > 0)
    assert est.variance_power_ in est.variance_powers


def test_missing_answers_are_filled_and_counted():
    source, target = _benchmark(60, seed=1, n_tasks=2), _benchmark(4, seed=2, n_tasks=2)
    items = [random_items(300, 20, k) for k in range(2)]
    other = source[1].copy()
    other[:5] = np.nan
    est = KernelLearn().fit(source[0], items[0], others=[(other, items[1])])
    assert est.n_filled_ == 5 * 20
    y_other = target[1][:, items[1]].copy()
    y_other[0, :3] = np.nan
    got = est.predict(target[0][:, items[0]], others=[y_other]).estimate
    assert np.isfinite(got).all() and np.all((got >= 0) & (got <= 1))
    with pytest.raises(ValueError, match="other tasks"):
        est.predict(target[0][:, items[0]], others=[])
