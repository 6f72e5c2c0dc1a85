"""SimBA similarity measures (plugins/similarity.py) against scipy, and their NaN / constant-column rules."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.spatial import distance

from harness_ext import get_registrations
from harness_ext.errors import MethodError
from harness_ext.methods.similarity import measures as S
from harness_ext.methods.similarity import kendall as SKD
from harness_ext.methods.similarity import kernels as SK

PAPER = S.PAPER_MEASURES


def _pairwise(X, fn):
    """Per-pair reference on pairwise-complete rows (fn gets a, b and the shared-row count)."""
    n, p = X.shape
    C = np.full((p, p), np.nan)
    for i in range(p):
        for j in range(p):
            m = ~np.isnan(X[:, i]) & ~np.isnan(X[:, j])
            if m.sum() == 0:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                C[i, j] = fn(X[m, i], X[m, j], m.sum())
    return C


def _pearson_ref(a, b, k):
    return stats.pearsonr(a, b)[0] if k >= 2 and np.ptp(a) > 0 and np.ptp(b) > 0 else np.nan


SCIPY_REF = {
    "pearson": _pearson_ref,
    "spearman": lambda a, b, k: stats.spearmanr(a, b)[0] if k >= 2 else np.nan,
    "kendall_tau": lambda a, b, k: stats.kendalltau(a, b)[0] if k >= 2 else np.nan,
    "cosine": lambda a, b, k: 1 - distance.cosine(a, b) if np.any(a) and np.any(b) else np.nan,
}


def reference(X, name):
    """scipy per pair; Lp distances scaled by (n / n_shared)^(1/p) as documented; diagonal 1 where defined."""
    n = X.shape[0]
    if name in SCIPY_REF:
        R = _pairwise(X, SCIPY_REF[name])
    elif name in ("manhattan", "euclidean", "minkowski"):
        p = {"manhattan": 1, "euclidean": 2, "minkowski": 3}[name]
        R = np.exp(-_pairwise(X, lambda a, b, k: distance.minkowski(a, b, p) * (n / k) ** (1 / p)))
    elif name == "wasserstein":
        W = _pairwise(X, lambda a, b, k: stats.wasserstein_distance(a, b))
        off = W[~np.eye(len(W), dtype=bool)]
        R = np.exp(-W / np.nanmax(off))
    elif name == "jensen_shannon":
        R = 1 - _pairwise(X, lambda a, b, k: distance.jensenshannon(a, b, base=2))
    elif name == "jaccard":
        R = 1 - _pairwise(X, lambda a, b, k: distance.jaccard(a.astype(bool), b.astype(bool)))
    elif name == "hamming":
        R = 1 - _pairwise(X, lambda a, b, k: distance.hamming(a, b))
    d = np.diag(R).copy()
    np.fill_diagonal(R, np.where(np.isnan(d), np.nan, 1.0))
    return R


def _with_holes(X, frac, seed):
    X = X.copy()
    rng = np.random.default_rng(seed)
    X[rng.random(X.shape) < frac] = np.nan
    return X


def synthetic(m=40, d=7, seed=0, missing=0.15):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.random((m, 2)) @ rng.random((2, d)) / 2 + 0.05 * rng.standard_normal((m, d)), 0, 1)
    X[:, 2] = np.round(X[:, 2], 1)  # ties for the rank measures
    return _with_holes(X, missing, seed + 1)


@pytest.mark.parametrize("name", PAPER)
@pytest.mark.parametrize("missing", [0.0, 0.15])
def test_matches_scipy_on_synthetic(name, missing):
    X = synthetic(missing=missing)
    C = S._FUNCS[name][0](X)
    R = reference(X, name)
    np.testing.assert_allclose(C, R, atol=1e-10, equal_nan=True)


@pytest.fixture(scope="module")
def real_slices(helm_classic_matrix, pythia_mmlu_matrix):
    """Small real slices: HELM Classic 25 models x 8 scenarios, Pythia MMLU 60 runs x 9 subjects, plus holes."""
    helm = helm_classic_matrix.iloc[:25, :8].to_numpy(float)
    mmlu = pythia_mmlu_matrix.iloc[::14, :9].to_numpy(float)
    return {"helm": helm, "mmlu": mmlu, "helm_holes": _with_holes(helm, 0.1, 3), "mmlu_holes": _with_holes(mmlu, 0.1, 4)}


@pytest.mark.slow
@pytest.mark.parametrize("name", PAPER)
def test_matches_scipy_on_real_slices(real_slices, name):
    for key, X in real_slices.items():
        C = S._FUNCS[name][0](X)
        R = reference(X, name)
        np.testing.assert_allclose(C, R, atol=1e-10, equal_nan=True, err_msg=f"{name} on {key}")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["jaccard", "hamming"])
def test_binary_measures_match_scipy_on_binarised_real_slices(real_slices, name):
    # No real prompt-level 0/1 data is in ../shared/data: "above the dataset's median" on the real slices stands in.
    for key, X in real_slices.items():
        B = np.where(np.isnan(X), np.nan, (X > np.nanmedian(X, axis=0)).astype(float))
        np.testing.assert_allclose(S._FUNCS[name][0](B), reference(B, name), atol=1e-12, equal_nan=True,
                                   err_msg=f"{name} on {key}")


@pytest.mark.parametrize("name", ["jaccard", "hamming"])
def test_binary_measures_match_scipy(name):
    rng = np.random.default_rng(5)
    B = (rng.random((50, 6)) < 0.4).astype(float)
    B[:, 4] = 0.0  # all-zero column: Jaccard with another all-zero column is 1 (scipy convention)
    B[:, 5] = 0.0
    B = _with_holes(B, 0.1, 6)
    np.testing.assert_allclose(S._FUNCS[name][0](B), reference(B, name), atol=1e-12, equal_nan=True)


def test_binary_measures_reject_non_binary():
    with pytest.raises(MethodError):
        S.jaccard_similarity(np.array([[0.0, 0.5], [1.0, 1.0]]))


def test_registered_with_flags():
    regs = get_registrations("similarity_measures")
    for name in PAPER:
        assert name in regs and not regs[name].binary_only
    assert regs["jaccard"].binary_only and regs["hamming"].binary_only


@pytest.mark.parametrize("name", PAPER)
def test_symmetric_unit_diagonal_and_bounded(name):
    X = synthetic(missing=0.1, seed=7)
    C = S._FUNCS[name][0](X)
    assert np.array_equal(C, C.T, equal_nan=True)
    assert np.allclose(np.diag(C), 1.0)
    assert np.nanmin(C) >= -1 and np.nanmax(C) <= 1


@pytest.mark.parametrize("name", PAPER)
def test_constant_column(name):
    X = synthetic(missing=0.0, seed=8)
    X[:, 3] = 0.37  # 0.37 is not exactly representable: the centring sums have rounding noise
    C = S._FUNCS[name][0](X)
    if name in ("pearson", "spearman", "kendall_tau"):
        # A correlation with a constant is undefined, including with itself.
        assert np.isnan(C[3]).all() and np.isnan(C[:, 3]).all()
        others = np.delete(np.delete(C, 3, 0), 3, 1)
        assert np.isfinite(others).all()
    else:
        # Distances and cosine are defined for a constant (non-zero) column.
        assert np.isfinite(C).all()
        assert C[3, 3] == 1.0


def test_constant_only_on_shared_rows_is_undefined():
    # Column 1 varies overall but is constant on the rows column 0 observes.
    X = np.array([[0.1, 0.5], [0.2, 0.5], [0.3, 0.5], [np.nan, 0.9]])
    assert np.isnan(S.pearson_similarity(X)[0, 1])
    assert np.isnan(S.spearman_similarity(X)[0, 1])
    assert np.isnan(S.kendall_similarity(X)[0, 1])


def test_fewer_than_two_shared_rows_is_nan():
    X = np.array([[0.1, np.nan], [0.2, 0.3], [np.nan, 0.5], [0.4, np.nan]])
    for name in ("pearson", "spearman", "kendall_tau"):
        assert np.isnan(S._FUNCS[name][0](X)[0, 1]), name


def test_no_shared_rows_is_nan_for_distances():
    X = np.array([[0.1, np.nan], [0.2, np.nan], [np.nan, 0.5], [np.nan, 0.6]])
    for name in ("manhattan", "euclidean", "minkowski", "cosine", "jensen_shannon"):
        assert np.isnan(S._FUNCS[name][0](X)[0, 1]), name


def test_zero_column_cosine_and_js_undefined():
    X = np.array([[0.0, 0.3], [0.0, 0.5], [0.0, 0.1]])
    assert np.isnan(S.cosine_similarity(X)[0, 1])
    assert np.isnan(S.jensen_shannon_similarity(X)[0, 1])


def test_jensen_shannon_rejects_negative():
    with pytest.raises(MethodError):
        S.jensen_shannon_similarity(np.array([[-0.1, 0.3], [0.2, 0.5]]))


def test_wasserstein_normalised_by_max():
    X = synthetic(missing=0.0, seed=9)
    W = S.wasserstein_distance_matrix(X)
    C = S.wasserstein_similarity(X)
    off = ~np.eye(len(C), dtype=bool)
    assert np.isclose(C[off].min(), np.exp(-1.0))
    assert np.isclose(C.flat[np.argmax(np.where(off, W, -1))], np.exp(-1.0))


def test_identical_distributions_wasserstein_is_one():
    x = np.array([0.1, 0.4, 0.2, 0.9])
    X = np.column_stack([x, x[::-1], x])
    assert np.allclose(S.wasserstein_similarity(X), 1.0)


def test_lp_scaled_for_missing_rows():
    # With half the rows missing, the pairwise L1 sum is doubled to the full row count.
    X = np.array([[0.0, 1.0], [0.0, 1.0], [np.nan, 0.0], [np.nan, 0.0]])
    assert np.isclose(S.lp_distance(X, 1)[0, 1], 2 * 2.0)


def test_cross_pearson_rectangular_matches_scipy():
    rng = np.random.default_rng(10)
    X = _with_holes(rng.random((30, 4)), 0.1, 11)
    Y = _with_holes(rng.random((30, 3)), 0.1, 12)
    C = S.cross_pearson(X, Y)
    for i in range(4):
        for j in range(3):
            m = ~np.isnan(X[:, i]) & ~np.isnan(Y[:, j])
            assert np.isclose(C[i, j], stats.pearsonr(X[m, i], Y[m, j])[0])


def test_kendall_complete_and_masked_paths_agree():
    X = synthetic(missing=0.0, seed=13)
    Y = X.copy()
    Y[0, -1] = np.nan  # forces the masked path; pairs not involving the last column are unchanged
    a, b = S.kendall_similarity(X), S.kendall_similarity(Y)
    np.testing.assert_allclose(a[:-1, :-1], b[:-1, :-1], atol=1e-12)


def test_similarity_matrix_lookup_by_name():
    X = synthetic(missing=0.0, seed=14)
    np.testing.assert_allclose(S.similarity_matrix(X, "Kendall-Tau"), S.kendall_similarity(X))


# --------------------------------------------------------------------------- fast paths for large matrices


def test_row_pairs_enumerate_each_unordered_pair_once():
    for n in (2, 3, 7, 50):
        for cap in (1, 3, 10, 10_000):
            got = np.concatenate([np.stack(ab, 1) for ab in SKD._row_pairs(n, cap)])
            np.testing.assert_array_equal(got, np.stack(np.triu_indices(n, 1), 1))


@pytest.mark.parametrize("holes", [False, True])
def test_sampled_kendall_within_its_standard_error_on_real_data(pythia_mmlu_matrix, monkeypatch, holes):
    # Pythia MMLU, one row per run: 838 x 57, 350,000 row pairs; chance normalisation gives ties at 0.
    X = pythia_mmlu_matrix.to_numpy(dtype=float)
    if holes:
        X = _with_holes(X, 0.05, 21)
    exact = S.kendall_similarity(X)  # 350k pairs * 57^2 is under the exact budget
    monkeypatch.setattr(SKD, "_KENDALL_EXACT_OPS", 0)
    monkeypatch.setattr(SKD, "_kendall_per_column_pair_is_cheaper", lambda n, p: False)
    B = 20_000
    est = S.kendall_similarity(X, max_pairs=B, random_state=1)
    np.testing.assert_array_equal(est, S.kendall_similarity(X, max_pairs=B, random_state=1))  # seeded
    assert not np.array_equal(est, S.kendall_similarity(X, max_pairs=B, random_state=2))
    # Documented bound: SE <= 1 / (f sqrt(B)), f the fraction of pairs untied in both columns (here per column).
    obs = ~np.isnan(X)
    untied = np.array([np.mean(np.diff(np.sort(X[obs[:, j], j])) != 0) for j in range(X.shape[1])])
    se = 1.0 / (np.sqrt(B) * np.sqrt(np.outer(untied, untied)))
    z = np.abs(est - exact) / se
    ok = np.isfinite(exact)
    np.testing.assert_array_equal(np.isnan(est), ~ok)
    # MMLU subjects are strongly correlated, so the bound is loose here (measured: max 0.2, mean 0.02).
    assert z[ok].max() < 2.0 and z[ok].mean() < 0.25, (z[ok].max(), z[ok].mean())


def test_sampled_kendall_standard_error_is_calibrated(monkeypatch):
    # Independent untied columns: tau ~ 0 and each sampled term is +-1, so the documented 1 / sqrt(B) is the SE itself.
    X = np.random.default_rng(30).random((2000, 20))
    exact = S.kendall_similarity(X)
    monkeypatch.setattr(SKD, "_KENDALL_EXACT_OPS", 0)
    monkeypatch.setattr(SKD, "_kendall_per_column_pair_is_cheaper", lambda n, p: False)
    B = 20_000
    z = (S.kendall_similarity(X, max_pairs=B, random_state=0) - exact) * np.sqrt(B)
    z = np.abs(z[np.triu_indices(20, 1)])
    assert z.max() < 4.5 and 0.5 < z.mean() < 1.1, (z.max(), z.mean())  # |N(0, 1)| has mean 0.80


def test_kendall_exact_path_ignores_the_seed(pythia_mmlu_matrix):
    X = pythia_mmlu_matrix.iloc[::4, :12].to_numpy(dtype=float)
    np.testing.assert_array_equal(S.kendall_similarity(X, random_state=0), S.kendall_similarity(X, random_state=5))
    np.testing.assert_allclose(S.kendall_similarity(X), reference(X, "kendall_tau"), atol=1e-10, equal_nan=True)


@pytest.mark.parametrize("name", ["minkowski", "jensen_shannon"])
def test_float32_terms_close_to_scipy_on_real_data(pythia_mmlu_matrix, helm_classic_matrix, monkeypatch, name):
    # Force the float32 path (used beyond _FLOAT32_TERMS) and hold it to the documented 1e-5, with a constant column.
    monkeypatch.setattr(SK, "_FLOAT32_TERMS", 0)
    for frame in (pythia_mmlu_matrix.iloc[:, :20], helm_classic_matrix):
        X = frame.to_numpy(dtype=float).copy()
        X[:, 1] = 0.25
        got = S._FUNCS[name][0](X)
        np.testing.assert_allclose(got, reference(X, name), atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("name", ["manhattan", "euclidean", "minkowski", "wasserstein", "jensen_shannon"])
def test_complete_distance_paths_equal_masked_paths(pythia_mmlu_matrix, name):
    # Complete data take pdist / upper-triangle tiles; one hole in the last column sends the rest to the masked path.
    X = pythia_mmlu_matrix.iloc[::5, :15].to_numpy(dtype=float).copy()
    X[:, 3] = 0.0  # all-zero column: JS undefined (NaN), distances defined
    Y = X.copy()
    Y[0, -1] = np.nan
    a, b = S._FUNCS[name][0](X), S._FUNCS[name][0](Y)
    if name == "wasserstein":  # normalised by the max distance, which the hole can change
        a, b = S.wasserstein_distance_matrix(X), S.wasserstein_distance_matrix(Y)
    np.testing.assert_allclose(a[:-1, :-1], b[:-1, :-1], atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(a, reference(X, name) if name != "wasserstein" else a, atol=1e-10, equal_nan=True)


def test_cross_pearson_complete_path_equals_masked_path(pythia_mmlu_matrix):
    # 0.1 repeated does not centre to exact zeros; the complete path must still call the column constant (NaN).
    X = pythia_mmlu_matrix.iloc[::7, :10].to_numpy(dtype=float).copy()
    X[:, 2] = 0.1
    Y = X.copy()
    Y[0, -1] = np.nan
    a, b = S.cross_pearson(X), S.cross_pearson(Y)
    assert np.isnan(a[2]).all() and np.isnan(a[:, 2]).all()
    np.testing.assert_allclose(a[:-1, :-1], b[:-1, :-1], atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(a, reference(X, "pearson"), atol=1e-10, equal_nan=True)
    np.testing.assert_allclose(S.cross_pearson(X[:, :4], X[:, 4:]), a[:4, 4:], atol=1e-12, equal_nan=True)


def test_kendall_per_column_pair_path_equals_sign_product(real_slices, monkeypatch):
    # Few columns x many rows go column pair by column pair through scipy; both exact paths must agree,
    # with holes and with a column constant on every row.
    assert SKD._kendall_per_column_pair_is_cheaper(4496, 6) and not SKD._kendall_per_column_pair_is_cheaper(10_000, 1_000)
    for key, X in real_slices.items():
        X = X.copy()
        X[:, 0] = 0.0
        sign = S.kendall_similarity(X)
        monkeypatch.setattr(SKD, "_kendall_per_column_pair_is_cheaper", lambda n, p: True)
        per_pair = S.kendall_similarity(X)
        monkeypatch.undo()
        np.testing.assert_allclose(per_pair, sign, atol=1e-12, equal_nan=True, err_msg=key)
        assert np.isnan(per_pair[0]).all()


# --------------------------------------------------------------------- agreement with library routines (issue 17)
def _with_holes_and_constant(n=300, q=40, missing=0.2, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3)) @ rng.random((3, q)) + 0.05 * rng.standard_normal((n, q))
    X[:, 4] = 0.1  # constant column: 0.1 is not exact in binary, so its centred values are rounding noise
    if missing:
        X[rng.random((n, q)) < missing] = np.nan
    return X


@pytest.mark.parametrize("missing", [0.0, 0.2])
def test_pearson_matches_numpy_and_pandas(missing):
    import pandas as pd

    from harness_ext.methods.similarity.measures import pearson_similarity

    X = _with_holes_and_constant(missing=missing)
    C = pearson_similarity(X)
    ref = np.corrcoef(X, rowvar=False) if not missing else pd.DataFrame(X).corr().to_numpy()
    ok = np.arange(X.shape[1]) != 4
    np.testing.assert_allclose(C[np.ix_(ok, ok)], ref[np.ix_(ok, ok)], atol=1e-12)
    assert np.isnan(C[4]).all() and np.isnan(C[:, 4]).all()


@pytest.mark.parametrize("missing", [0.0, 0.2])
def test_euclidean_matches_sklearn_nan_euclidean(missing):
    from sklearn.metrics.pairwise import nan_euclidean_distances

    from harness_ext.methods.similarity.measures import lp_distance

    X = _with_holes_and_constant(missing=missing)
    np.testing.assert_allclose(lp_distance(X, 2), nan_euclidean_distances(X.T), atol=1e-10)


@pytest.mark.parametrize("p", [1.0, 3.0, 2.5])
def test_masked_lp_matches_pairwise_loop(p):
    from harness_ext.methods.similarity.measures import lp_distance

    X = _with_holes_and_constant(n=120, q=15)
    n, q = X.shape
    D = lp_distance(X, p)
    M = ~np.isnan(X)
    for i in range(q):
        for j in range(q):
            s = M[:, i] & M[:, j]
            ref = (np.sum(np.abs(X[s, i] - X[s, j]) ** p) * n / s.sum()) ** (1 / p)
            assert D[i, j] == pytest.approx(ref, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("p", [1.0, 3.0])
def test_masked_lp_counts_in_float64_for_tall_matrices(monkeypatch, p):
    """At 2**24 rows and beyond, float32 sums of ones are no longer exact, so the pair counts go to float64: the
    same distances either way where both are exact (the threshold lowered here to exercise that path)."""
    from harness_ext.methods.similarity import distances as SD
    from harness_ext.methods.similarity.measures import lp_distance

    X = _with_holes_and_constant(n=120, q=15)
    before = lp_distance(X, p)
    monkeypatch.setattr(SD, "_EXACT_FLOAT32_COUNT", 0)
    np.testing.assert_array_equal(lp_distance(X, p), before)


@pytest.mark.parametrize("p", [1.0, 3.0])
def test_masked_lp_keeps_precision_with_row_offsets_and_an_outlying_constant_column(p):
    """The masked kernel fills each row at its observed mean; the removed terms then stay of the size of the
    row's spread. Rows offset by 50 times their spread and a constant column far from the others (7 against
    values near 0 before the offsets) stay within 1e-12 of an exactly summed pairwise loop (a fill at the row's
    largest value, the cheaper one, measured 4e-10 at p = 3 here)."""
    import math

    from harness_ext.methods.similarity.measures import lp_distance

    rng = np.random.default_rng(1)
    n, q = 300, 20
    X = rng.random((n, q)) + 50 * rng.standard_normal((n, 1))
    X[:, 3] = 7.0
    X[rng.random((n, q)) < 0.2] = np.nan
    D = lp_distance(X, p)
    M = ~np.isnan(X)
    for i in range(q):
        for j in range(i + 1, q):
            s = M[:, i] & M[:, j]
            ref = (math.fsum(np.abs(X[s, i] - X[s, j]) ** p) * n / s.sum()) ** (1 / p)
            assert D[i, j] == pytest.approx(ref, rel=1e-12)
