"""Every similarity fast path against the library routine a user would call (issue 17).

Complete data, 20% missing cells and a constant column, each against pandas /
numpy / scipy / sklearn: the routine the benchmark (benchmarks/bench_similarity_libs.py)
times us against where one exists, otherwise scipy's per-pair function on the
pairwise-complete rows. Ties are included (a rounded column, a clipped one).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.spatial import distance

from harness_ext.methods.similarity import measures as S
from harness_ext.methods.similarity import kendall as SKD

CASES = ["complete", "missing", "constant", "constant_missing"]


def _matrix(case: str, n: int = 150, q: int = 12, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = np.clip(rng.random((n, 3)) @ rng.random((3, q)) / 2 + 0.1 * rng.standard_normal((n, q)), 0, 1)
    X[:, 2] = np.round(X[:, 2], 1)  # many ties
    if case.startswith("constant"):
        X[:, 5] = 0.1  # 0.1 is not exact in binary: centring leaves rounding noise
    if case.endswith("missing"):
        X[rng.random((n, q)) < 0.2] = np.nan
    return X


def _pairs(X, fn) -> np.ndarray:
    """fn on the pairwise-complete rows of every column pair (NaN if none)."""
    q = X.shape[1]
    R = np.full((q, q), np.nan)
    for i in range(q):
        for j in range(q):
            m = ~np.isnan(X[:, i]) & ~np.isnan(X[:, j])
            if m.any():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    R[i, j] = fn(X[m, i], X[m, j], m.sum())
    return R


def _offdiag(A, B, atol):
    off = ~np.eye(A.shape[0], dtype=bool)
    np.testing.assert_allclose(A[off], B[off], atol=atol, equal_nan=True)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_correlations_match_pandas(case, method):
    X = _matrix(case)
    name = {"kendall": "kendall_tau"}.get(method, method)
    ours = S._FUNCS[name][0](X)
    ref = pd.DataFrame(X).corr(method=method).to_numpy().copy()
    if case.startswith("constant"):
        assert np.isnan(ours[5]).all() and np.isnan(ours[:, 5]).all()
        ref[5, :] = ref[:, 5] = np.nan  # pandas' Kendall puts 1 on a constant column's diagonal; we say undefined
    np.testing.assert_allclose(ours, ref, atol=1e-10, equal_nan=True)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_min_periods_as_pandas(method):
    X = _matrix("missing", n=40)
    X[:30, 0] = np.nan  # column 0 shares at most 10 rows with anyone
    fn = {"pearson": S.pearson_similarity, "spearman": S.spearman_similarity, "kendall": S.kendall_similarity}[method]
    ref = pd.DataFrame(X).corr(method=method, min_periods=8).to_numpy()
    np.testing.assert_allclose(fn(X, min_periods=8), ref, atol=1e-10, equal_nan=True)
    assert np.isnan(fn(X, min_periods=11)[0]).all()


@pytest.mark.parametrize("case", ["complete", "constant"])
def test_complete_spearman_matches_scipy(case):
    X = _matrix(case)
    ours = S.spearman_similarity(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = stats.spearmanr(X).statistic
    np.testing.assert_allclose(ours, ref, atol=1e-10, equal_nan=True)


@pytest.mark.parametrize("case", ["complete", "constant"])
def test_complete_pearson_matches_corrcoef(case):
    X = _matrix(case)
    ref = np.corrcoef(X, rowvar=False)
    if case == "constant":  # corrcoef gives rounding noise / NaN for the constant column: we give NaN throughout
        ref[5, :] = ref[:, 5] = np.nan
    np.testing.assert_allclose(S.pearson_similarity(X), ref, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("case", CASES)
def test_cosine_matches_sklearn_and_scipy(case):
    from sklearn.metrics.pairwise import cosine_similarity

    X = _matrix(case)
    ours = S.cosine_similarity(X)
    if not case.endswith("missing"):
        np.testing.assert_allclose(ours, cosine_similarity(X.T), atol=1e-12)
    ref = _pairs(X, lambda a, b, k: 1 - distance.cosine(a, b))
    _offdiag(ours, ref, 1e-10)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("p", [1, 2, 3])
def test_lp_matches_pdist_and_pairwise(case, p):
    from scipy.spatial.distance import pdist, squareform

    X = _matrix(case)
    n = X.shape[0]
    D = S.lp_distance(X, p)
    if not case.endswith("missing"):
        metric = {1: "cityblock", 2: "euclidean", 3: "minkowski"}[p]
        kw = {"p": 3} if p == 3 else {}
        np.testing.assert_allclose(D, squareform(pdist(X.T, metric, **kw)), atol=1e-10)
    elif p == 2:
        from sklearn.metrics.pairwise import nan_euclidean_distances

        np.testing.assert_allclose(D, nan_euclidean_distances(X.T), atol=1e-10)
    ref = _pairs(X, lambda a, b, k: distance.minkowski(a, b, p) * (n / k) ** (1 / p))
    _offdiag(D, ref, 1e-9)


@pytest.mark.parametrize("case", CASES)
def test_wasserstein_matches_scipy(case):
    X = _matrix(case)
    ref = _pairs(X, lambda a, b, k: stats.wasserstein_distance(a, b))
    _offdiag(S.wasserstein_distance_matrix(X), ref, 1e-12)


@pytest.mark.parametrize("case", CASES)
def test_jensen_shannon_matches_scipy(case):
    from scipy.spatial.distance import pdist, squareform

    X = _matrix(case)
    X[:, 7] = 0.0  # an all-zero column: no distribution, NaN
    ours = S.jensen_shannon_similarity(X)
    ref = 1 - _pairs(X, lambda a, b, k: distance.jensenshannon(a, b, base=2))
    _offdiag(ours, ref, 1e-9)
    if not case.endswith("missing"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref2 = 1 - squareform(pdist(X.T, "jensenshannon")) / np.sqrt(np.log(2))  # natural-log distance
        ref2[~np.isfinite(ref2)] = np.nan  # pdist: inf for the all-zero column
        _offdiag(ours, ref2, 1e-9)
    assert np.isnan(ours[7]).all()


@pytest.mark.parametrize("name", ["spearman", "wasserstein", "jensen_shannon", "kendall_tau"])
def test_masked_blocked_kernels_on_real_data(pythia_mmlu_matrix, name):
    # Pythia MMLU (838 x 57, chance-normalised: ties at 0) with 20% holes: several partner blocks per column.
    X = pythia_mmlu_matrix.iloc[::3, :30].to_numpy(dtype=float).copy()
    X[np.random.default_rng(5).random(X.shape) < 0.2] = np.nan
    if name == "spearman":
        ref = pd.DataFrame(X).corr(method="spearman").to_numpy()
        np.testing.assert_allclose(S.spearman_similarity(X), ref, atol=1e-10, equal_nan=True)
    elif name == "kendall_tau":
        ref = pd.DataFrame(X).corr(method="kendall").to_numpy()
        np.testing.assert_allclose(S.kendall_similarity(X), ref, atol=1e-10, equal_nan=True)
    elif name == "wasserstein":
        ref = _pairs(X, lambda a, b, k: stats.wasserstein_distance(a, b))
        _offdiag(S.wasserstein_distance_matrix(X), ref, 1e-12)
    else:
        ref = 1 - _pairs(np.maximum(X, 0), lambda a, b, k: distance.jensenshannon(a, b, base=2))
        _offdiag(S.jensen_shannon_similarity(np.maximum(X, 0)), ref, 1e-9)


def test_two_thread_column_loops_give_identical_results(monkeypatch):
    # Large matrices run the Spearman and Wasserstein column loops on two threads; the result must not change.
    from harness_ext.methods.similarity import kernels as SK

    X = _matrix("constant_missing", n=120, q=30)
    single = (S.spearman_similarity(X), S.wasserstein_distance_matrix(X))
    monkeypatch.setattr(SK, "_THREAD_CELLS", 0)
    threaded = (S.spearman_similarity(X), S.wasserstein_distance_matrix(X))
    for a, b in zip(single, threaded):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("case", ["missing", "constant_missing"])
def test_small_tiles_and_blocks_match_the_libraries(monkeypatch, case):
    # Large matrices cut the masked Spearman into tiles of column pairs and the masked Wasserstein into blocks of
    # partners, on two threads; force several uneven tiles and blocks (and the threads) on a small matrix.
    from harness_ext.methods.similarity import distances as SD
    from harness_ext.methods.similarity import kernels as SK
    from harness_ext.methods.similarity import spearman as SS

    X = _matrix(case, n=60, q=13)
    X[:, 9] = np.nan
    X[:3, 9] = [0.2, 0.2, 0.5]  # a column that shares at most three rows, with a tie
    X[:3, 12] = np.nan  # ... and none with the last column: an empty pair at the end of a partner block
    monkeypatch.setattr(SS, "_TILE_PAIR_ROWS", 60 * 4 * 4)  # 4 columns per tile: 4, 4, 4, 1 -> 10 tiles
    monkeypatch.setattr(SD, "_W1_BLOCK_ELEMENTS", 60 * 3)  # 3 partners per block
    monkeypatch.setattr(SK, "_THREAD_CELLS", 0)
    ref = pd.DataFrame(X).corr(method="spearman").to_numpy()
    np.testing.assert_allclose(S.spearman_similarity(X), ref, atol=1e-10, equal_nan=True)
    ref = _pairs(X, lambda a, b, k: stats.wasserstein_distance(a, b))
    _offdiag(S.wasserstein_distance_matrix(X), ref, 1e-12)


@pytest.mark.parametrize("threads", [False, True])
def test_masked_spearman_empty_and_one_row_columns_and_integer_ties(monkeypatch, threads):
    # The masked Spearman kernel runs each column's running counts over its observed rows only: a column with no
    # observed row, one with a single row, and integer scores (large tie groups) in uneven small tiles.
    from harness_ext.methods.similarity import kernels as SK
    from harness_ext.methods.similarity import spearman as SS

    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, (80, 11)).astype(float)
    X[rng.random(X.shape) < 0.3] = np.nan
    X[:, 4] = np.nan
    X[:, 7] = np.nan
    X[10, 7] = 2.0
    X[:, 10] = 1.0  # constant
    monkeypatch.setattr(SS, "_TILE_PAIR_ROWS", 80 * 3 * 3)  # 3 columns per tile: 3, 3, 3, 2
    if threads:
        monkeypatch.setattr(SK, "_THREAD_CELLS", 0)
    ref = pd.DataFrame(X).corr(method="spearman").to_numpy()
    np.testing.assert_allclose(S.spearman_similarity(X), ref, atol=1e-10, equal_nan=True)


@pytest.mark.parametrize("case", ["complete", "missing"])
def test_two_thread_distance_kernels_match_one_thread(monkeypatch, case):
    # Large matrices split the L1 kernel into blocks of column pairs, and the tile loops of Minkowski and
    # Jensen-Shannon over two threads.
    from harness_ext.methods.similarity import distances as SD
    from harness_ext.methods.similarity import kernels as SK

    X = _matrix(case, n=90, q=23)
    names = ["manhattan", "minkowski", "jensen_shannon", "wasserstein"]
    single = [S._FUNCS[k][0](X) for k in names]
    monkeypatch.setattr(SK, "_THREAD_CELLS", 0)
    monkeypatch.setattr(SD, "_L1_THREAD_TERMS", 0)
    monkeypatch.setattr(SK, "_idle_core", lambda: True)
    for name, a in zip(names, single):
        np.testing.assert_allclose(S._FUNCS[name][0](X), a, rtol=1e-12, atol=1e-14, equal_nan=True, err_msg=name)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("schedule", ["busy: one call", "2 blocks, two threads", "4 blocks, two threads"])
def test_blocked_l1_is_pdist_to_the_last_bit_and_matches_the_pairwise_loop(monkeypatch, case, schedule):
    # From _L1_THREAD_TERMS the L1 kernel runs blocks of column pairs (cdist across two blocks, pdist within
    # one) and, with missing cells, the correction's BLAS products as one more task, on two threads when a core
    # is idle (one pdist call when busy). The blocks depend on the shape alone and scipy sums each pair in the
    # same order either way, so the distances are one pdist call's to the last bit whatever the schedule or
    # the load.
    from scipy.spatial.distance import pdist, squareform

    from harness_ext.methods.similarity import distances as SD
    from harness_ext.methods.similarity import kernels as SK

    X = _matrix(case, n=97, q=23)
    n = X.shape[0]
    plain = S.lp_distance(X, 1)
    monkeypatch.setattr(SD, "_L1_THREAD_TERMS", 0)
    monkeypatch.setattr(SD, "_L1_FOUR_BLOCK_TERMS", 0 if schedule.startswith("4") else 1e30)
    monkeypatch.setattr(SK, "_idle_core", lambda: "two" in schedule)
    D = S.lp_distance(X, 1)
    np.testing.assert_array_equal(D, plain)
    if not case.endswith("missing"):
        np.testing.assert_array_equal(D, squareform(pdist(X.T, "cityblock")))
    ref = _pairs(X, lambda a, b, k: distance.cityblock(a, b) * n / k)
    _offdiag(D, ref, 1e-9)
    np.testing.assert_array_equal(S.manhattan_similarity(X), np.exp(-D))


@pytest.mark.parametrize("case", ["complete", "constant"])
def test_split_gram_matches_the_libraries_and_does_not_depend_on_the_schedule(monkeypatch, case):
    # From _GRAM_SPLIT_FLOPS complete cosine's Gram product runs in two row halves, on two threads when a core is
    # idle: exactly symmetric, equal to the library, and the same to the last bit on one thread or two (Pearson
    # and Spearman make one product, unsplit: checked alongside). Odd column count: unequal halves.
    from sklearn.metrics.pairwise import cosine_similarity

    from harness_ext.methods.similarity import kernels as SK

    X = _matrix(case, n=150, q=13)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the constant column's zero variance
        ref = {"pearson": np.corrcoef(X, rowvar=False), "spearman": stats.spearmanr(X).statistic,
               "cosine": cosine_similarity(X.T)}
    if case == "constant":  # the libraries give rounding noise / NaN for the constant column: we give NaN
        for name in ("pearson", "spearman"):
            ref[name][5, :] = ref[name][:, 5] = np.nan
    monkeypatch.setattr(SK, "_GRAM_SPLIT_FLOPS", 0)
    runs = []
    for idle in (False, True):
        monkeypatch.setattr(SK, "_idle_core", lambda: idle)
        runs.append({name: S._FUNCS[name][0](X) for name in ref})
    for name, R in ref.items():
        C = runs[0][name]
        np.testing.assert_array_equal(C, C.T, err_msg=name)
        np.testing.assert_array_equal(C, runs[1][name], err_msg=name)
        np.testing.assert_allclose(C, R, atol=1e-12, equal_nan=True, err_msg=name)


@pytest.mark.parametrize("case", ["missing", "constant_missing"])
def test_split_masked_cosine_matches_the_pairs_and_does_not_depend_on_the_schedule(monkeypatch, case):
    # From _COSINE_SPLIT_FLOPS masked cosine's general product runs in two column blocks beside the symmetric
    # update, on two threads when a core is idle: exactly symmetric, the per-pair cosine on the shared rows, and
    # the same to the last bit on one thread or two. Odd column count: the blocks are 4/5 and 1/5, unequal.
    from harness_ext.methods.similarity import kernels as SK

    X = _matrix(case, n=150, q=13)
    ref = _pairs(X, lambda a, b, k: 1 - distance.cosine(a, b))
    monkeypatch.setattr(SK, "_COSINE_SPLIT_FLOPS", 0)
    runs = []
    for idle in (False, True):
        monkeypatch.setattr(SK, "_idle_core", lambda: idle)
        runs.append(S._FUNCS["cosine"][0](X))
    np.testing.assert_array_equal(runs[0], runs[0].T)
    np.testing.assert_array_equal(runs[0], runs[1])
    _offdiag(runs[0], ref, 1e-12)
    monkeypatch.setattr(SK, "_COSINE_SPLIT_FLOPS", float("inf"))  # unsplit: the same to rounding
    np.testing.assert_allclose(S._FUNCS["cosine"][0](X), runs[0], rtol=1e-13, atol=1e-15, equal_nan=True)


def test_each_task_runs_every_task_once_and_raises_the_first_error():
    # The caller and the worker thread pull tasks from one counter: each task runs once, and an error stops both.
    import threading

    from harness_ext.methods.similarity import kernels as SK

    seen, lock = [], threading.Lock()

    def record(t: int) -> None:
        with lock:
            seen.append(t)

    SK._each_task(200, record, True)
    assert sorted(seen) == list(range(200))

    def boom(t: int) -> None:
        if t == 3:
            raise ValueError("task 3")

    with pytest.raises(ValueError, match="task 3"):
        SK._each_task(10, boom, True)


@pytest.mark.parametrize("case", CASES)
def test_column_ranks_match_scipy_rankdata(case):
    from harness_ext.methods.similarity.kernels import _column_ranks

    X = _matrix(case)
    for dense, method in ((False, "average"), (True, "dense")):
        ref = stats.rankdata(X, axis=0, method=method, nan_policy="omit")
        np.testing.assert_array_equal(_column_ranks(X, dense=dense), ref)


def test_column_ranks_tie_groups_at_row_ends_and_binary_data():
    from harness_ext.methods.similarity.kernels import _column_ranks

    rng = np.random.default_rng(3)
    X = (rng.random((50, 6)) < 0.5).astype(float)  # two tie groups per column, one ending the row
    X[:, 1] = 1.0  # one group spanning the whole column
    X[:7, 2] = np.nan  # a group running up to the missing cells
    X[:, 3] = np.arange(50.0)  # no tie
    for dense, method in ((False, "average"), (True, "dense")):
        ref = stats.rankdata(X, axis=0, method=method, nan_policy="omit")
        np.testing.assert_array_equal(_column_ranks(X, dense=dense), ref)


@pytest.mark.parametrize("ties", ["rare", "binary"])
def test_sampled_kendall_denominators_equal_the_direct_product(ties):
    # The sampled tau-b's denominators are P.T @ P minus the tied pairs' product (sparse while ties are rare,
    # dense for 0/1 data); they must equal |S|.T @ P over the same sampled row pairs exactly.
    from harness_ext.methods.similarity import kernels as SK

    rng = np.random.default_rng(11)
    X = rng.random((300, 9)) if ties == "rare" else (rng.random((300, 9)) < 0.4).astype(float)
    X[:, 2] = np.round(X[:, 2], 1)
    X[rng.random(X.shape) < 0.2] = np.nan
    M = ~np.isnan(X)
    num, den = np.zeros((9, 9)), np.zeros((9, 9))
    for a, b in SKD._sampled_row_pairs(300, 5000, 700, 4):
        S = np.sign(X[a] - X[b])
        S[np.isnan(S)] = 0.0
        num += S.T @ S
        den += np.abs(S).T @ (M[a] & M[b])
    np.testing.assert_array_equal(SKD._kendall_sampled(X, M, 5000, 4), SKD._tau_from_sums(num, den * den.T))


@pytest.mark.parametrize("case", ["complete", "constant_missing"])
def test_two_thread_exact_kendall_matches_one_thread_and_pandas(monkeypatch, case):
    from harness_ext.methods.similarity import kernels as SK

    X = _matrix(case, n=80, q=9)
    monkeypatch.setattr(SKD, "_KENDALL_THREAD_OPS", float("inf"))
    single = SKD._kendall_exact(X, ~np.isnan(X))
    monkeypatch.setattr(SKD, "_KENDALL_THREAD_OPS", 0.0)
    threaded = SKD._kendall_exact(X, ~np.isnan(X))
    np.testing.assert_array_equal(threaded, single)
    ref = pd.DataFrame(X).corr(method="kendall").to_numpy()
    _offdiag(threaded, ref, 1e-10)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("name", ["pearson", "spearman", "cosine"])
def test_complete_gram_paths_are_exactly_symmetric(name, order):
    # The complete paths skip averaging C with C.T: A.T @ A and the outer-product scaling must keep it exact.
    X = np.asarray(_matrix("constant", n=300, q=40), order=order)
    C = S._FUNCS[name][0](X)
    assert np.array_equal(C, C.T, equal_nan=True)


@pytest.mark.parametrize("case", ["complete", "missing", "constant"])
def test_registered_measures_restore_blas_threads_and_match_their_kernels(case):
    # The registry's wrapper runs small matrices on one BLAS thread, except complete matrices whose kernel makes
    # no BLAS call (Manhattan); either way the numbers are the
    # kernel's (to rounding: BLAS sums in another order on another thread count), and the BLAS thread counts
    # are back as they were afterwards, also when the kernel raises.
    X = _matrix(case)
    libs = S._blas_libraries()
    before = [lib.get_num_threads() for lib in libs]
    for name in ("pearson", "cosine", "euclidean", "manhattan"):
        np.testing.assert_allclose(S._FUNCS[name][0](X), S._FUNCS[name][0].__wrapped__(X), rtol=1e-12, atol=1e-12)
        assert [lib.get_num_threads() for lib in libs] == before
    with pytest.raises(Exception):
        S._FUNCS["jensen_shannon"][0](X - 2.0)  # negative scores: an error inside the one-thread section
    assert [lib.get_num_threads() for lib in libs] == before


@pytest.mark.parametrize("shift", ["none", "few columns", "most columns", "near-constant"])
def test_complete_pearson_one_pass_and_centred_columns_match_corrcoef(shift):
    # Complete Pearson multiplies X by itself and centres afterwards; a column whose mean is large against its
    # spread (raw / centred sum of squares over _ONE_PASS_RATIO) gets its products from centred values, and over
    # half such columns centre the whole matrix: every route agrees with np.corrcoef and is exactly symmetric.
    from harness_ext.methods.similarity import kernels as SK

    rng = np.random.default_rng(3)
    X = _matrix("complete", n=400, q=30)
    if shift == "few columns":
        X[:, [3, 17]] = X[:, [3, 17]] * 0.1 + 100.0
    elif shift == "most columns":
        X = X * 0.1 + 100.0
    elif shift == "near-constant":
        X[:, 4] = 0.25 + 1e-5 * rng.standard_normal(400)
    d = (X - X.mean(axis=0)).var(axis=0) * 400
    assert ((X * X).sum(axis=0) > SK._ONE_PASS_RATIO * d).any() == (shift != "none")
    C = S.pearson_similarity(X)
    np.testing.assert_array_equal(C, C.T)
    np.testing.assert_allclose(C, np.corrcoef(X, rowvar=False), atol=1e-12, rtol=0)
    assert np.all(np.diag(C) == 1.0)


@pytest.mark.parametrize("name", ["cosine", "manhattan", "euclidean", "minkowski"])
def test_masked_product_paths_are_exactly_symmetric(name):
    # With missing cells these kernels skip averaging the result with its transpose: every term they combine is
    # a symmetric product or a matrix plus its transpose.
    X = _matrix("constant_missing", n=300, q=40)
    C = S._FUNCS[name][0](X)
    assert np.array_equal(C, C.T, equal_nan=True)


@pytest.mark.parametrize("case", ["complete", "missing"])
@pytest.mark.parametrize("name", ["pearson", "cosine", "manhattan"])
def test_infinite_cells_are_refused(case, name):
    from harness_ext.errors import MethodError

    X = _matrix(case)
    X[3, 4] = np.inf
    with pytest.raises(MethodError, match="infinite"):
        S._FUNCS[name][0](X)


def test_symmetric_update_on_two_blas_threads_is_the_one_thread_one():
    # _syrk lifts a one-thread section for complete Pearson's product when a core is idle: that is only sound if
    # the BLAS in use sums each entry of A.T @ A in the same order on one thread and on two (OpenBLAS does; a
    # matrix-vector product does not, so it stays on one thread). Then the answer does not follow the load, and
    # the section is on one thread again afterwards.
    # Where the BLAS in use lacks the property, _syrk must know it and stay on one thread.
    from harness_ext.methods.similarity import kernels as SK

    libs = S._blas_libraries()
    rng = np.random.default_rng(5)
    invariant = SK._syrk_thread_invariant()
    for n, q in [(838, 57), (1000, 200), (777, 333), (150, 13)]:
        A = rng.random((n, q)) * 10 - 3
        with SK._OneBlasThread():
            one = A.T @ A
            with SK._outer_blas_threads():
                two = A.T @ A
            assert all(lib.get_num_threads() == 1 for lib in libs)
            lifted = SK._syrk(A)
        np.testing.assert_array_equal(one, lifted, err_msg=f"{n} x {q}: _syrk followed the load")
        if invariant:
            np.testing.assert_array_equal(one, two, err_msg=f"{n} x {q}")


def test_complete_pearson_on_blas_threads_when_idle_is_bit_identical(monkeypatch):
    # 1,000 x 200 is under the one-thread size: the product gets BLAS's threads back only when a core is idle.
    from harness_ext.methods.similarity import kernels as SK

    X = _matrix("constant", n=1000, q=200)
    libs = S._blas_libraries()
    before = [lib.get_num_threads() for lib in libs]
    runs = []
    for idle in (False, True):
        monkeypatch.setattr(SK, "_idle_core", lambda: idle)
        runs.append(S._FUNCS["pearson"][0](X))
        assert [lib.get_num_threads() for lib in libs] == before
    np.testing.assert_array_equal(runs[0], runs[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = np.corrcoef(X, rowvar=False)
    ref[5, :] = ref[:, 5] = np.nan
    np.testing.assert_allclose(runs[0], ref, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("case", ["complete", "missing", "constant_missing"])
def test_pooled_scratch_changes_no_value(monkeypatch, case):
    # The kernels' large temporaries come from Arrow's pool from _POOL_BYTES on: every array pooled or none,
    # the answers are the same to the last bit.
    from harness_ext.methods.similarity import threads as ST

    X = _matrix(case, n=300, q=40)
    runs = []
    for limit in (0, 1 << 60):
        monkeypatch.setattr(ST, "_POOL_BYTES", limit)
        runs.append({name: S._FUNCS[name][0](X) for name in ("pearson", "cosine", "manhattan", "minkowski")})
    for name, C in runs[0].items():
        np.testing.assert_array_equal(C, runs[1][name], err_msg=name)
    A = ST._pooled((3, 5), bool)
    assert A.shape == (3, 5) and A.dtype == bool and A.flags.writeable and A.flags.c_contiguous
