"""The selection's fast paths give the numbers of the slow ones they replace (harness_ext.methods.engine.subset_cv, completion)."""

import numpy as np

from harness_ext.methods.engine import subset_cv
from harness_ext.methods.engine.completion import LowRankCompleter, direct_predict
from harness_ext.methods.engine.direct_ridge import ridge_design


def _matrix(m=60, d=10, missing=0.15, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((m, 3)) @ rng.random((3, d)) / 3 + 0.05 * rng.standard_normal((m, d))
    X[rng.random(X.shape) < missing] = np.nan
    return X


def test_means_only_equals_the_full_prediction():
    X = _matrix()
    est = LowRankCompleter(rank=2, lam=1.0, scales="auto").fit(X[:45])
    Xn = np.where(np.arange(10) < 4, X[45:], np.nan)
    np.testing.assert_array_equal(est.predict_new_means(Xn), est.predict_new_models(Xn, calibrate=False).mean)


def test_stacked_fold_in_equals_one_prediction_per_subset():
    X = _matrix(seed=1)
    est = LowRankCompleter(rank=2, lam=1.0, scales="auto").fit(X[:45])
    subsets = [[0, 1], [0, 2, 5], [1, 3, 4, 6, 7], list(range(9)), list(range(2, 10))]
    got = subset_cv.stacked_fold_in(est, X[45:], subsets, {})
    for s, g in zip(subsets, got):
        keep = np.isin(np.arange(10), s)
        want = est.predict_new_models(np.where(keep, X[45:], np.nan), calibrate=False).mean
        np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-12)


def test_cached_design_equals_a_fresh_one():
    """The per-fit Gram summary the estimator keeps gives what a design built from scratch gives."""
    X = _matrix(seed=2)
    est = LowRankCompleter(rank=2, lam=1.0, scales="auto", blend=1.0).fit(X[:45])
    z = est.transform_.transform(np.where(np.arange(10) % 3 == 0, X[45:], np.nan))
    fresh = direct_predict(est.fit_, est.Z_, z)
    np.testing.assert_array_equal(direct_predict(est.fit_, est.Z_, z, est._design()), fresh)
    Zc = np.where(np.isnan(est.Z_), est.fit_.mean(), est.Z_)
    np.testing.assert_array_equal(ridge_design(Zc).gram, est._design().gram)


def test_cells_made_on_first_use_equal_the_ones_made_at_fit():
    """A fit that only folds new models in does not make its own cells; made later, they are what fit made before."""
    X = _matrix(seed=3)
    est = LowRankCompleter(rank=2, lam=1.0, scales="auto", cell_blend=0.5, bp_mix=0.0).fit(X[:45])
    est.predict_new_means(np.where(np.arange(10) < 4, X[45:], np.nan))
    assert "_cells_cache" not in est.__dict__
    # What fit made at once: a second fit of the same matrix, its cell blend applied to it.
    fit, mean_z, sd_z, cells = est._cell_fit(est.Z_)
    mean_z = est._blend(mean_z, cells, est.Z_, est.Z_, est.cell_blend_)
    np.testing.assert_array_equal(est._mean_z, mean_z)
    np.testing.assert_array_equal(est._sd_z, sd_z)
    np.testing.assert_array_equal(est.mean_, np.where(np.isnan(X[:45]), est.transform_.inverse_transform(mean_z), X[:45]))
