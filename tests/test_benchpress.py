"""BenchPress as published (Zeng & Papailiopoulos, 2026): its transform, bias ALS, holdout and interval layer.

The vectorised code is checked against plain loops written from the paper's
description (one ridge solve per row, then per column, then the mean residual).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness_ext.methods.engine import benchpress as bp
from harness_ext.plugins.predictors_lowrank import BenchPress


def _loop_bias_als(Z, rank=2, lam=0.1, n_iter=40, n_ensemble=10, base_seed=42):
    m, d = Z.shape
    O = ~np.isnan(Z)
    out = np.zeros((m, d))
    for e in range(n_ensemble):
        rs = np.random.RandomState(base_seed + e)
        U, V = rs.normal(0, 0.01, (m, rank)), rs.normal(0, 0.01, (d, rank))
        a, c, mu = np.zeros(m), np.zeros(d), Z[O].mean()
        for _ in range(n_iter):
            for i in range(m):
                js = np.flatnonzero(O[i])
                if js.size:
                    D = np.column_stack([np.ones(js.size), V[js]])
                    s = np.linalg.solve(D.T @ D + lam * np.eye(rank + 1), D.T @ (Z[i, js] - mu - c[js]))
                    a[i], U[i] = s[0], s[1:]
            for j in range(d):
                is_ = np.flatnonzero(O[:, j])
                if is_.size:
                    D = np.column_stack([np.ones(is_.size), U[is_]])
                    s = np.linalg.solve(D.T @ D + lam * np.eye(rank + 1), D.T @ (Z[is_, j] - mu - a[is_]))
                    c[j], V[j] = s[0], s[1:]
            fit = a[:, None] + c[None, :] + U @ V.T
            mu = (Z - fit)[O].mean()
        out += mu + a[:, None] + c[None, :] + U @ V.T
    return out / n_ensemble


def _matrix(seed=0, m=30, d=9, missing=0.3):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(m, 2)) @ rng.normal(size=(2, d)) + 0.2 * rng.normal(size=(m, d))
    X = 1 / (1 + np.exp(-Z))
    X[rng.random((m, d)) < missing] = np.nan
    return X


def test_bias_als_matches_the_per_row_loop_with_empty_rows_and_columns():
    Z = _matrix(1)
    Z[3] = np.nan
    Z[:, 4] = np.nan
    ref = _loop_bias_als(Z, n_iter=15, n_ensemble=3)
    got = bp.bias_als(Z, n_iter=15, n_ensemble=3)
    np.testing.assert_allclose(got, ref, rtol=1e-8, atol=1e-10)
    # a batch of masks gives each its own completion
    both = bp.bias_als(np.stack([Z, Z[::-1]]), n_iter=15, n_ensemble=3)
    np.testing.assert_allclose(both[0], ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(both[1], _loop_bias_als(Z[::-1], n_iter=15, n_ensemble=3), rtol=1e-8, atol=1e-10)


def test_transform_logit_of_percentages_and_zscore():
    P = np.array([[0.0, 1200.0], [50.0, 1300.0], [100.0, np.nan], [75.0, 1250.0]])
    tr = bp.Transform.fit(P)
    assert tr.is_pct.tolist() == [True, False]  # Elo is left in its units
    T = np.log(np.array([0.005, 0.5, 0.995, 0.75]) / (1 - np.array([0.005, 0.5, 0.995, 0.75])))
    np.testing.assert_allclose(tr.mean[0], T.mean())
    np.testing.assert_allclose(tr.std[0], T.std())
    z = tr.transform(P)
    np.testing.assert_allclose(tr.inverse(z)[[1, 3], 0], [50.0, 75.0])
    np.testing.assert_allclose(tr.inverse(z)[[0, 1, 3], 1], [1200.0, 1300.0, 1250.0])
    assert tr.inverse(np.full((1, 2), 50.0))[0, 0] == 100.0  # percentages clipped to [0, 100]
    assert bp.points_factor(np.array([[0.2, 30.0], [0.9, 70.0]])).tolist() == [100.0, 1.0]


def test_holdout_folds_partition_each_models_cells_per_seed():
    O = ~np.isnan(_matrix(2, m=25, d=11))
    O[0] = False
    O[1, :] = False
    O[1, 5] = True  # one cell: hidden in fold 0 only
    F = bp.holdout_folds(O, n_seeds=4)
    assert F.shape == (12,) + O.shape
    for s in range(4):
        f = F[3 * s:3 * s + 3]
        assert np.array_equal(f.sum(0), O.astype(int))  # each observed cell hidden exactly once per seed
        n = O.sum(1)
        sizes = f.sum(2)
        ok = n >= 3
        assert np.array_equal(sizes[0][ok], n[ok] // 3) and np.array_equal(sizes[1][ok], n[ok] // 3)
    assert F[0, 1, 5] and not F[1, 1].any()
    assert np.array_equal(F, bp.holdout_folds(O, n_seeds=4))
    assert not np.array_equal(F[:3], F[3:6])


def test_best_abs_correlation_matches_corrcoef_loop():
    A = _matrix(3, m=14, d=8, missing=0.35) * 100
    A[2, :] = np.where(np.isnan(A[2]), np.nan, 40.0)  # constant: never a peer
    best, over = bp.best_abs_correlation(A, block=5)
    for a in range(A.shape[0]):
        rb, ro = 0.0, 0.0
        for b in range(A.shape[0]):
            mask = ~np.isnan(A[a]) & ~np.isnan(A[b])
            if b == a or mask.sum() < 3 or np.std(A[a, mask]) <= 1e-12 or np.std(A[b, mask]) <= 1e-12:
                continue
            r = abs(np.corrcoef(A[a, mask], A[b, mask])[0, 1])
            if r > rb + 1e-12:
                rb, ro = r, mask.sum()
        assert best[a] == pytest.approx(rb, abs=1e-9) and over[a] == ro, a


def test_calibration_seeds_hold_out_the_papers_cells():
    assert bp.calibration_seeds(2604) == 10 and bp.calibration_seeds(500) == 10
    assert bp.calibration_seeds(18_000) == 2 and bp.calibration_seeds(60_000) == 1


@pytest.mark.slow
def test_plugin_completes_calibrates_and_adds_new_models():
    X = _matrix(4, m=40, d=12, missing=0.0)
    rng = np.random.default_rng(0)
    hide = rng.random(X.shape) < 0.3
    est = BenchPress().fit(np.where(hide, np.nan, X))
    assert est.calibration_.n_folds == 30 and est.calibration_.kind == "ridge" and est.q_ > 0
    assert np.isfinite(est.mean_).all() and np.array_equal(est.mean_[~hide], X[~hide])
    cov = ((X >= est.lower_) & (X <= est.upper_))[hide].mean()
    assert 0.8 <= cov <= 0.99, cov
    assert np.median(np.abs(est.mean_ - X)[hide]) < np.median(np.abs(np.nanmean(np.where(hide, np.nan, X), 0) - X)[hide])
    again = BenchPress().fit(np.where(hide, np.nan, X))
    assert np.array_equal(again.mean_, est.mean_) and np.array_equal(again.upper_, est.upper_)
    new = np.where(np.arange(12) < 4, X[:3], np.nan)
    p = est.predict_new_models(new, weights=np.full(12, 1 / 12))
    assert p.mean.shape == (3, 12) and p.aggregate.shape == (3,)
    assert np.array_equal(p.mean[:, :4], X[:3, :4]) and (p.upper[:, 4:] > p.lower[:, 4:]).all()


def test_paper_evaluation_covers_about_ninety_percent():
    X = _matrix(5, m=40, d=14, missing=0.2) * 100
    F = bp.holdout_folds(~np.isnan(X), n_seeds=2)
    out = bp.paper_evaluation(X, F)
    assert out["n_cells"] == int(F.sum()) and len(out["fold_medae"]) == 6
    assert 0.85 <= out["coverage"] <= 0.95 and out["width"] > 0


@pytest.mark.slow
def test_paper_risk_models_are_the_released_mlps():
    # The paper's §4.4 figures: hidden layers chosen from (16,), (32,), (64, 32); the released package adds ridge first.
    assert bp.PAPER_RISK_MODELS == ("mlp16", "mlp32", "mlp64_32")
    assert list(bp.RISK_MODELS) == ["ridge", *bp.PAPER_RISK_MODELS]
    assert [bp.RISK_MODELS[k] for k in bp.PAPER_RISK_MODELS] == [(16,), (32,), (64, 32)]
    X = _matrix(5, m=40, d=14, missing=0.2) * 100
    F = bp.holdout_folds(~np.isnan(X), n_seeds=2)
    y = np.log1p(np.abs(np.random.default_rng(0).normal(size=400)))
    Xf = np.random.default_rng(1).normal(size=(400, 8))
    fold = np.arange(400) % 6
    assert bp.choose_risk_model(Xf, y, fold, np.ones(400, bool), bp.PAPER_RISK_MODELS) in bp.PAPER_RISK_MODELS
    out = bp.paper_evaluation(X, F, kinds=bp.PAPER_RISK_MODELS)
    assert out["n_cells"] == int(F.sum()) and 0.8 <= out["coverage"] <= 1.0 and out["width"] > 0


# ----------------------------------------------------------------------------- the paper's own matrix
PAPER_MATRIX = Path(__file__).parent / "fixtures" / "benchpress" / "scores.csv"
#: Test cells of seed 42's folds in BenchPress's published folds file (folds_s10_f3_bs42_ms1.json): (fold, row) -> cols.
PUBLISHED_FOLD_CELLS = {
    (0, 0): [53, 67, 94, 93, 27, 88, 74, 45, 120, 32, 2], (0, 1): [2, 25, 90, 119, 54, 33, 91, 51, 53],
    (0, 40): [19, 48, 51, 121, 75, 112, 79], (0, 60): [74, 34, 50, 53, 81, 16, 103, 25, 82, 106, 7, 33],
    (0, 83): [94, 45, 130, 52, 2, 57, 46, 67, 112, 50], (1, 0): [8, 59, 62, 9, 50, 34, 3, 4, 112, 5, 109],
    (1, 2): [23, 69, 74, 120, 34, 116, 57, 72, 64, 84, 122, 41, 50, 129, 93, 82],
}


def _paper_matrix():
    if not PAPER_MATRIX.exists():
        pytest.skip(f"{PAPER_MATRIX} not found")
    import pandas as pd

    return pd.read_csv(PAPER_MATRIX, index_col=0).to_numpy(dtype=float)


def test_paper_matrix_reproduces_the_published_folds():
    P = _paper_matrix()
    assert P.shape == (84, 133) and int((~np.isnan(P)).sum()) == 2604
    F = bp.holdout_folds(~np.isnan(P), n_seeds=1)
    for (fold, row), cols in PUBLISHED_FOLD_CELLS.items():
        assert sorted(np.flatnonzero(F[fold, row]).tolist()) == sorted(cols), (fold, row)


@pytest.mark.slow
def test_paper_matrix_reproduces_the_papers_figures():
    # The paper: MedAE 4.58 in its text, 4.60 pooled in its released results (BenchPress's own code on its 30 folds:
    # 4.63 as the median of fold MedAEs); the matrix-support intervals cover 0.900 at width 29.3 with its MLP risk
    # models (PAPER_RISK_MODELS: 0.900 at 29.7 here, minutes of network fits); ridge alone, the default, is wider.
    P = _paper_matrix()
    out = bp.paper_evaluation(P, bp.holdout_folds(~np.isnan(P)))
    assert out["n_cells"] == 26040
    assert 4.55 <= out["medae"] <= 4.65, out["medae"]
    assert 4.58 <= float(np.median(out["fold_medae"])) <= 4.68
    assert 0.88 <= out["coverage"] <= 0.92 and 26.0 <= out["width"] <= 34.0, (out["coverage"], out["width"])
