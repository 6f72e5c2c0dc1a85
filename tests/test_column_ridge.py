"""The column ridge completer: each dataset regressed on the others over BenchPress's rank 1-3 filling."""

from __future__ import annotations

import numpy as np
import pytest

from harness_ext.methods.engine import benchpress as bp
from harness_ext.methods.engine import column_ridge as cr


def _nonlinear(seed=0, m=60, d=10, missing=0.3):
    """Scores in (0, 1) with a low-rank part and an interaction no rank-2 model holds (a product of two
    latent traits), some cells missing; no column or row left empty."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(m, 3))
    v = rng.normal(size=(3, d))
    z = u @ v + 0.8 * (u[:, :1] * u[:, 1:2]) * rng.normal(size=(1, d)) + 0.1 * rng.normal(size=(m, d))
    X = 1 / (1 + np.exp(-z / 2))
    hide = rng.random(X.shape) < missing
    hide[np.arange(m), rng.integers(0, d, m)] = False
    return X, np.where(hide, np.nan, X)


def test_loo_ridge_matches_refitting_without_each_row():
    rng = np.random.default_rng(1)
    F, y = rng.normal(size=(15, 4)), rng.normal(size=15)
    b0, coef, lam = cr.loo_ridge(F, y, lams=(lam_ := 3.0,))
    assert lam == lam_
    fm, ym = F.mean(0), y.mean()
    want = np.linalg.solve((F - fm).T @ (F - fm) + lam * np.eye(4), (F - fm).T @ (y - ym))
    np.testing.assert_allclose(coef, want, atol=1e-10)
    assert b0 == pytest.approx(ym - fm @ want)
    # the penalty is the one of the grid with the lowest exact leave-one-out error
    def loo(lam):
        errs = []
        for i in range(15):
            k = np.arange(15) != i
            fmi, ymi = F[k].mean(0), y[k].mean()
            c = np.linalg.solve((F[k] - fmi).T @ (F[k] - fmi) + lam * np.eye(4), (F[k] - fmi).T @ (y[k] - ymi))
            errs.append(y[i] - ymi - (F[i] - fmi) @ c)
        return np.mean(np.square(errs))
    grid = (0.1, 1.0, 10.0, 100.0)
    assert cr.loo_ridge(F, y, lams=grid)[2] == min(grid, key=loo)


def test_completion_keeps_observed_cells_and_beats_the_filling_on_a_nonlinear_matrix():
    full, X = _nonlinear()
    out = cr.complete(X)
    miss = np.isnan(X)
    np.testing.assert_array_equal(out[~miss], X[~miss])
    assert np.isfinite(out).all() and ((out >= 0) & (out <= 1)).all()
    err = np.median(np.abs(out - full)[miss])
    bpc, again = cr.completions(X)
    np.testing.assert_array_equal(again, out)  # deterministic
    np.testing.assert_allclose(bpc, bp.complete_units(X))  # the first member is BenchPress as published
    assert err < np.median(np.abs(bpc - full)[miss])
    assert err < np.median(np.abs(np.nanmean(X, 0) - full)[miss])


def test_sparse_columns_keep_the_filling_and_a_share_without_predictors_predicts_it():
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(12, 4))
    fill = rng.normal(size=(12, 4))
    Z[2:, 0] = np.nan  # two observed cells: below MIN_ROWS, keeps the filling
    Z[:6, 3] = np.nan  # column 3 seen on rows 6-11; column 1 only on rows 0-5, so never with column 3
    Z[6:, 1] = np.nan
    out = cr.regress_columns(Z, fill, shares=(0.0,))
    np.testing.assert_array_equal(out[2:, 0], fill[2:, 0])
    obs = ~np.isnan(Z)
    np.testing.assert_array_equal(out[obs], Z[obs])
    # at share 1 a column's predictors are those seen on all its rows (column 3: only column 2); the shares' average
    one = cr.regress_columns(Z, fill, shares=(1.0,))
    both = cr.regress_columns(Z, fill, shares=(0.0, 1.0))
    np.testing.assert_allclose(both[~obs], ((out + one) / 2)[~obs])
    Z2 = Z.copy()
    Z2[6:, 2] = np.nan  # now nothing is seen with column 3 on all its rows: share 1 predicts the filling
    out1 = cr.regress_columns(Z2, fill, shares=(1.0,))
    np.testing.assert_array_equal(out1[:6, 3], fill[:6, 3])
