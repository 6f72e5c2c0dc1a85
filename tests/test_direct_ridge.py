"""The direct regression's Gram-matrix fast path against a plain per-pattern reference (harness_ext.methods.engine.direct_ridge)."""

import numpy as np
import pytest

from harness_ext.methods.engine import direct_ridge
from harness_ext.methods.engine.direct_ridge import RIDGE_ALPHAS, direct_ridge_predict, ridge_design


@pytest.fixture
def gcv(monkeypatch):
    """Designs built under this fixture take the GCV paths whatever their number of rows."""
    monkeypatch.setattr(direct_ridge, "EXACT_LOO_ROWS", 0)


def _loo_reference(Zc, cols, Q):
    """sklearn's RidgeCV, leave-one-out per target: what the exact path of small designs must reproduce."""
    from sklearn.linear_model import RidgeCV

    return RidgeCV(alphas=RIDGE_ALPHAS, alpha_per_target=True).fit(Zc[:, cols], Zc).predict(Q)


def _reference(Zc, cols, Q, alphas=RIDGE_ALPHAS):
    """Ridge on the SVD of the m rows, GCV per target: the textbook computation the fast path must reproduce."""
    A = Zc[:, cols]
    m = A.shape[0]
    a_mu, y_mu = A.mean(0), Zc.mean(0)
    U, sv, Vt = np.linalg.svd(A - a_mu, full_matrices=False)
    Yc = Zc - y_mu
    UtY = U.T @ Yc
    s2 = sv ** 2
    best = np.full(Zc.shape[1], np.inf)
    coef = np.zeros((len(cols), Zc.shape[1]))
    for a in alphas:
        f = s2 / (s2 + a)
        err = ((Yc - U @ (f[:, None] * UtY)) ** 2).mean(0) / (1 - (1 + f.sum()) / m) ** 2
        better = err < best
        best = np.where(better, err, best)
        coef[:, better] = Vt.T @ ((sv / (s2 + a))[:, None] * UtY[:, better])
    return (Q - a_mu) @ coef + y_mu


def _matrix(m, d, seed):
    rng = np.random.default_rng(seed)
    Zc = rng.normal(size=(m, 3)) @ rng.normal(size=(3, d)) + 0.5 * rng.normal(size=(m, d))
    Zc[:, 2] = Zc[:, 1]  # a collinear pair: a zero eigenvalue in some patterns
    return Zc, rng


def test_exact_path_matches_sklearn_ridgecv_per_target():
    Zc, rng = _matrix(70, 12, 4)
    z = rng.normal(size=(30, 12))
    z[rng.random(z.shape) < 0.4] = np.nan
    design = ridge_design(Zc)
    assert design.centred is not None
    out = direct_ridge_predict(design, z)
    O = ~np.isnan(z)
    for i in range(len(z)):
        cols = np.flatnonzero(O[i])
        if cols.size and (~O[i]).any():
            ref = _loo_reference(Zc, cols, z[i:i + 1, cols])[0]
            assert np.allclose(out[i, ~O[i]], ref[~O[i]], rtol=1e-6, atol=1e-6)


def test_fast_path_matches_reference_on_every_pattern(gcv):
    Zc, rng = _matrix(120, 15, 0)
    z = rng.normal(size=(60, 15))
    z[:30][rng.random((30, 15)) < 0.6] = np.nan  # mostly k <= c: eigendecomposition of G_PP
    z[30:][rng.random((30, 15)) < 0.15] = np.nan  # mostly c < k: the complement path
    z[0] = np.nan  # no observed cell: column means
    z[1] = rng.normal(size=15)  # every cell observed: nothing to predict
    z[2:6] = np.where(np.arange(15) < 4, z[2], np.nan)  # a shared pattern
    out = direct_ridge_predict(ridge_design(Zc), z)
    O = ~np.isnan(z)
    assert np.array_equal(out[O], z[O])
    assert np.allclose(out[0], Zc.mean(0))
    for i in range(2, len(z)):
        cols = np.flatnonzero(O[i])
        if cols.size:
            ref = _reference(Zc, cols, z[i:i + 1, cols])[0]
            assert np.allclose(out[i, ~O[i]], ref[~O[i]], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("exact", [True, False])
def test_batches_do_not_change_the_result(monkeypatch, exact):
    if not exact:
        monkeypatch.setattr(direct_ridge, "EXACT_LOO_ROWS", 0)
    Zc, rng = _matrix(80, 12, 1)
    z = rng.normal(size=(40, 12))
    z[rng.random(z.shape) < 0.3] = np.nan
    design = ridge_design(Zc)
    whole = direct_ridge_predict(design, z)
    monkeypatch.setattr(direct_ridge, "BATCH_FLOATS", 1)
    assert np.allclose(direct_ridge_predict(design, z), whole, rtol=1e-12, atol=1e-12)


def test_both_gcv_paths_agree(gcv):
    from harness_ext.methods.engine.direct_ridge import _complement_coefs, _eigen_coefs

    Zc, rng = _matrix(90, 10, 2)
    design = ridge_design(Zc)
    P = np.array([np.sort(rng.permutation(10)[:7]) for _ in range(5)])
    C = np.array([np.setdiff1d(np.arange(10), p) for p in P])
    assert np.allclose(_complement_coefs(design, P, C, RIDGE_ALPHAS), _eigen_coefs(design, P, C, RIDGE_ALPHAS),
                       rtol=1e-7, atol=1e-9)


def _describe(X, **kw):
    from harness_ext.methods.engine.completion import LowRankCompleter

    est = LowRankCompleter(ranks=(1, 2), lams=(0.1, 1.0), calibration_folds=3, **kw).fit(X)
    return est, est.describe()


@pytest.mark.slow
def test_cell_blend_budget_leaves_small_matrices_unchanged(monkeypatch):
    """Below the flops budget (every matrix of hundreds of datasets) the rule changes nothing, byte for byte."""
    from harness_ext.methods.engine import completion, completion_settings
    from harness_ext.report import dumps

    X = np.clip(_matrix(60, 12, 3)[0] / 6 + 0.5, 0.01, 0.99)
    X[np.random.default_rng(1).random(X.shape) < 0.1] = np.nan
    assert direct_ridge.cell_regression_flops(~np.isnan(X), 1 / 3) < direct_ridge.CELL_FLOPS_BUDGET
    est, ref = _describe(X)
    assert "cell_blend_rule" not in ref["scales_cross_validation"]
    assert est._uncalibrated_blend() == completion.BLEND_UNCALIBRATED
    assert est.with_fixed_settings(X).get_params()["blend"] == "auto"
    monkeypatch.setattr(completion_settings, "CELL_FLOPS_BUDGET", float("inf"))
    est2, unlimited = _describe(X)
    assert dumps(ref) == dumps(unlimited)
    assert np.array_equal(est.mean_, est2.mean_, equal_nan=True)


def test_cell_blend_off_over_the_budget_is_recorded(monkeypatch):
    """Over the budget (wide matrices) the cell blend is 0 (low-rank only), with the rule in describe()."""
    from harness_ext.methods.engine import completion, completion_settings

    X = np.clip(_matrix(60, 12, 3)[0] / 6 + 0.5, 0.01, 0.99)
    monkeypatch.setattr(completion_settings, "CELL_FLOPS_BUDGET", 1.0)
    monkeypatch.setattr(completion, "direct_predict", lambda *a, **k: pytest.fail("direct regression ran"))
    est, desc = _describe(X)
    assert desc["cell_blend"] == 0.0 and est._uncalibrated_blend() == 0.0
    est.predict_new_means(X[:5])  # selection's inner loop: fold-in only
    assert est.with_fixed_settings(X).get_params()["blend"] == 0.0  # the copies reduce's folds refit
    rule = desc["scales_cross_validation"]["cell_blend_rule"]
    assert rule["budget"] == 1.0 and rule["flops"] > 1.0
    assert {e["cell_blend"] for e in desc["scales_cross_validation"]["error"]} == {0.0}


def test_cell_regression_flops_grow_with_width():
    """The cost estimate is about k^3 per row: a 2,000-dataset matrix is far over the budget, 2,000 x 100 far under."""
    rng = np.random.default_rng(0)
    assert direct_ridge.cell_regression_flops(rng.random((2000, 100)) > 0.05, 0.2) < direct_ridge.CELL_FLOPS_BUDGET / 5
    assert direct_ridge.cell_regression_flops(rng.random((500, 2000)) > 0.05, 0.2) > direct_ridge.CELL_FLOPS_BUDGET * 10


def _loo_inputs(Zc, P):
    """What :func:`direct_ridge._exact_loo_coefs` passes to its penalty picks, for the patterns ``P``."""
    design = ridge_design(Zc)
    d = Zc.shape[1]
    C = np.array([np.setdiff1d(np.arange(d), p) for p in P])
    U, sv, _ = np.linalg.svd(design.centred[:, P].transpose(1, 0, 2), full_matrices=False)
    Y = design.centred[:, C].transpose(1, 0, 2)
    return U, sv * sv, Y, U.transpose(0, 2, 1) @ Y, RIDGE_ALPHAS, design.m


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_expanded_loo_errors_pick_as_the_residual_sums(seed):
    # The expanded weighted square must pick every penalty the residual-by-residual sums pick, near-ties included:
    # a collinear pair, a constant column (every penalty's error equal), a column on a 1e-8 scale (tiny s^2).
    from harness_ext.methods.engine.direct_ridge import _loo_errors_expanded, _loo_picks, _loo_picks_direct

    Zc, rng = _matrix(120, 14, seed)
    Zc[:, 5] = 0.3
    Zc[:, 6] *= 1e-8
    P = np.array([np.sort(rng.permutation(14)[:k]) for k in (1, 2, 3, 5) for _ in range(6)] +
                 [[5], [6], [1, 2], [2, 5, 6]], dtype=object)
    for k in sorted({len(p) for p in P}):
        Pk = np.array([p for p in P if len(p) == k], dtype=int)
        args = _loo_inputs(Zc, Pk)
        np.testing.assert_array_equal(_loo_picks(*args), _loo_picks_direct(*args))
        err, scale = _loo_errors_expanded(*args)
        assert np.all(err >= -1e-12 * scale) and np.all(scale > 0)


def test_unsure_expanded_picks_are_rescored(monkeypatch):
    Zc, rng = _matrix(60, 9, 3)
    P = np.array([np.sort(rng.permutation(9)[:3]) for _ in range(8)])
    args = _loo_inputs(Zc, P)
    called = []
    direct = direct_ridge._loo_picks_direct
    monkeypatch.setattr(direct_ridge, "_loo_picks_direct", lambda U, *a: called.append(len(U)) or direct(U, *a))
    monkeypatch.setattr(direct_ridge, "LOO_TIE_RTOL", np.inf)  # every pattern unsure
    np.testing.assert_array_equal(direct_ridge._loo_picks(*args), direct(*args))
    assert called == [len(P)]


def _tied_target(Zc, P, t, rng):
    """``Zc`` with column ``t`` moved (bisection along a random direction) to where the residual sums' pick for it
    changes under the pattern ``P``: its two lowest leave-one-out errors equal to rounding. ``(below, above)``."""
    from harness_ext.methods.engine.direct_ridge import _loo_picks_direct

    y, v = Zc[:, t].copy(), rng.normal(size=Zc.shape[0])

    def pick(lam):
        Z = Zc.copy()
        Z[:, t] = y + lam * v
        return Z, _loo_picks_direct(*_loo_inputs(Z, P[None]))[0, list(np.setdiff1d(np.arange(Z.shape[1]), P)).index(t)]

    lo, hi = 0.0, 1.0
    while pick(hi)[1] == pick(lo)[1]:
        hi *= 4
        assert hi < 1e6
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if pick(mid)[1] == pick(lo)[1] else (lo, mid)
    return pick(lo)[0], pick(hi)[0]


@pytest.mark.parametrize("seed", [0, 1])
def test_expanded_picks_up_to_the_rank_limit_in_chunks(monkeypatch, seed):
    # 9 to LOO_EXPANDED_MAX_RANK predictors (formerly residual sums only), in chunks of a few patterns: the picks are
    # the residual sums' picks, near-ties included (a collinear pair, a constant column, a column on a 1e-8 scale;
    # two identical columns in the targets give equal errors), and do not depend on the chunk size.
    from harness_ext.methods.engine.direct_ridge import LOO_EXPANDED_MAX_RANK, _loo_picks, _loo_picks_direct

    Zc, rng = _matrix(90, 200, seed)
    Zc[:, 5] = 0.3
    Zc[:, 6] *= 1e-8
    Zc[:, 40] = Zc[:, 41]
    for k in (9, 12, 18, LOO_EXPANDED_MAX_RANK):
        P = np.array([np.sort(rng.permutation(200)[:k]) for _ in range(7)] + [np.r_[1, 2, 5, 6, 7:k + 3][:k]])
        args = _loo_inputs(Zc, P)
        assert args[0].shape[2] ** 2 < 4 * args[2].shape[2]  # the expanded path's shapes
        expected = _loo_picks_direct(*args)
        np.testing.assert_array_equal(_loo_picks(*args), expected)
        monkeypatch.setattr(direct_ridge, "LOO_CHUNK_FLOATS", 1)  # one pattern per chunk
        np.testing.assert_array_equal(_loo_picks(*args), expected)
        monkeypatch.undo()


@pytest.mark.parametrize("k", [9, 16])
def test_expanded_picks_break_near_ties_as_the_residual_sums(monkeypatch, k):
    # A target whose two best penalties' errors are equal to rounding (found by bisection): the pattern is flagged
    # unsure and scored again by the residual sums, on both sides of the tie.
    Zc, rng = _matrix(80, 160, 7)
    P = np.sort(rng.permutation(160)[:k])
    t = int(np.setdiff1d(np.arange(160), P)[3])
    called = []
    direct = direct_ridge._loo_picks_direct
    monkeypatch.setattr(direct_ridge, "_loo_picks_direct", lambda U, *a: called.append(len(U)) or direct(U, *a))
    for Z in _tied_target(Zc, P, t, rng):
        others = np.array([np.sort(rng.permutation(160)[:k]) for _ in range(5)])
        args = _loo_inputs(Z, np.vstack([others, P]))
        called.clear()
        np.testing.assert_array_equal(direct_ridge._loo_picks(*args), direct(*args))
        assert called == [1]  # the tied pattern, and only it, went back to the residual sums
