"""Kendall's tau-b kernels: exact over every row pair, per column pair, or on sampled row pairs.

Split from :mod:`harness_ext.methods.similarity.kernels` (which holds the input
checks, ranks and the other correlation kernels); the measure is
:func:`harness_ext.methods.similarity.measures.kendall_similarity`.

References
----------
SimBA (Subramani, Gomez, Diab), Appendix A, eq. 12.
"""

from __future__ import annotations

import numpy as np

from harness_ext.methods.similarity import kernels as K
from harness_ext.methods.similarity.kernels import _CHUNK_ELEMENTS, _column_ranks, _min_periods_mask, _prepare, _symmetrise
from harness_ext.methods.similarity.threads import _each_task

# Kendall: all row pairs while n_pairs * p**2 stays under this many multiply-adds (or n_pairs <= max_pairs).
_KENDALL_EXACT_OPS = 1e10
# ... and on two threads from this many (838 x 57 has 2e9).
_KENDALL_THREAD_OPS = 2e8


def _row_pairs(n: int, cap: int):
    """Every unordered row pair ``(a, b)``, ``a < b``, in chunks of about ``cap`` pairs."""
    counts = np.arange(n - 1, -1, -1)  # partners after row i
    ends = np.cumsum(counts)
    start = 0
    while start < n - 1:
        done = ends[start - 1] if start else 0
        stop = int(min(n - 1, max(start + 1, np.searchsorted(ends, done + cap, side="right"))))
        rows = np.arange(start, stop)
        k = counts[rows]
        a = np.repeat(rows, k)
        # b runs over i+1..n-1 for each row i of the chunk.
        b = np.arange(a.size) - np.repeat(np.cumsum(k) - k, k) + a + 1
        yield a, b
        start = stop


def _sampled_row_pairs(n: int, n_pairs: int, cap: int, random_state):
    """``n_pairs`` row pairs drawn uniformly (with replacement) among unordered pairs of distinct rows."""
    rng = np.random.default_rng(random_state)
    a = rng.integers(0, n, n_pairs)
    b = rng.integers(0, n - 1, n_pairs)
    b = b + (b >= a)  # uniform over the other n - 1 rows
    for start in range(0, n_pairs, cap):
        yield a[start : start + cap], b[start : start + cap]


def _kendall_per_column_pair_is_cheaper(n: int, p: int) -> bool:
    """Cost model (nanoseconds, measured on one core): scipy per column pair vs the sign product over row pairs."""
    per_column_pair = p * (p - 1) / 2 * (5e4 + 150.0 * n * np.log2(max(n, 2)))
    sign_product = n * (n - 1) / 2 * (0.05 * p * p + 20.0 * p)
    return per_column_pair < sign_product and per_column_pair < 2e9  # at most a few seconds


def _kendall_per_column_pair(X: np.ndarray, M: np.ndarray) -> np.ndarray:
    """tau-b for each pair of columns with ``scipy.stats.kendalltau`` on the pairwise-complete rows.

    Only chosen for few columns (a loop over column pairs, each ``O(n log n)``).
    NaN where a column is constant on the shared rows or fewer than two rows
    are shared; the diagonal is 1 where the column has two distinct values.
    """
    from scipy.stats import kendalltau

    p = X.shape[1]
    tau = np.full((p, p), np.nan)
    for i in range(p):
        for j in range(i + 1, p):
            rows = M[:, i] & M[:, j]
            a, b = X[rows, i], X[rows, j]
            if rows.sum() >= 2 and np.ptp(a) > 0 and np.ptp(b) > 0:
                tau[i, j] = tau[j, i] = np.clip(kendalltau(a, b).statistic, -1.0, 1.0)
        col = X[M[:, i], i]
        tau[i, i] = 1.0 if col.size >= 2 and np.ptp(col) > 0 else np.nan
    return tau


def kendall_similarity(X, max_pairs: int = 200_000, random_state: int = 0, min_periods: int = 1) -> np.ndarray:
    """Kendall's tau-b between columns (pairwise-complete), as ``scipy.stats.kendalltau``.

    With ``s_i(k, l) = sign(x_ki - x_li)``, tau-b is
    ``sum s_i s_j / sqrt(N_i(j) N_j(i))`` where ``N_i(j)`` counts the pairs of
    rows not tied in column ``i`` among those observed in both columns. So the
    whole matrix is a masked product of sign matrices, accumulated over chunks
    of row pairs (each unordered pair once).

    Few columns and many rows (e.g. the Open LLM Leaderboard's 4,500 x 6)
    are cheaper column pair by column pair with ``scipy.stats.kendalltau``
    (``O(n log n)`` per pair, against ``O(n^2)`` row pairs here); a rough
    cost model picks that path (:func:`_kendall_per_column_pair_is_cheaper`).
    Otherwise the product is exact (every row pair) when there are at most
    ``max_pairs`` row pairs or
    the product costs at most ``_KENDALL_EXACT_OPS`` (1e10) multiply-adds
    (``n_pairs * p**2``). Otherwise both sums run over ``max_pairs`` row pairs
    drawn uniformly with replacement (seeded by ``random_state``, so the same
    input gives the same matrix): tau-b is a ratio of U-statistics over row
    pairs and this is its incomplete-U-statistic estimate. Each sampled pair
    adds a term in {-1, 0, 1}, so the standard error of an entry is at most
    ``1 / (f * sqrt(max_pairs))`` with ``f`` the fraction of sampled pairs not
    tied in either column (0.0022 for 200,000 untied pairs); entries are
    biased by less than that (ratio estimator). The sampled cost is
    ``max_pairs * p**2`` instead of ``n**2 p**2 / 2``: a 10,000 x 1,000 matrix
    in seconds instead of hours.

    Parameters
    ----------
    X : array-like, shape (n, p)
    max_pairs : int, default 200_000
        Row pairs sampled when the exact product is too expensive.
    random_state : int, default 0
        Seed of the pair sample (unused on the exact path).
    min_periods : int, default 1
        Pairs sharing fewer rows are NaN (as ``pandas.DataFrame.corr``).

    References
    ----------
    SimBA, Appendix A, eq. 11. Eq. 11 is ``(C - D) / (C + D)``; we use tau-b,
    which equals it without ties and is what scipy (and so, we assume, the
    SimBA code) computes with ties. Incomplete U-statistics: Blom (1976),
    Biometrika 63(3), 573-580.
    """
    X, M = _prepare(X)
    n, p = X.shape
    n_pairs = n * (n - 1) // 2
    if _kendall_per_column_pair_is_cheaper(n, p):
        tau = _kendall_per_column_pair(X, M)
    elif n_pairs <= max_pairs or n_pairs * float(p) * p <= _KENDALL_EXACT_OPS:
        tau = _kendall_exact(X, M)
    else:
        tau = _kendall_sampled(X, M, int(max_pairs), random_state)
    few = _min_periods_mask(M, min_periods)
    return tau if few is None else np.where(few, np.nan, tau)


def _tau_from_sums(num: np.ndarray, prod: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = num / np.sqrt(prod)
    tau = np.where(prod > 0, np.clip(tau, -1.0, 1.0), np.nan)
    tau = _symmetrise(tau)
    np.fill_diagonal(tau, np.where(np.diag(prod) > 0, 1.0, np.nan))
    return tau


def _kendall_exact(X: np.ndarray, M: np.ndarray) -> np.ndarray:
    """tau-b over every row pair: the sign product on blocks of rows, untied-pair counts from tie groups.

    Signs come from float32 dense ranks (exact) by broadcasting a block of
    rows against every later row, so no row-pair index is gathered. The
    denominators ``N_i(j)`` (pairs shared with ``j`` not tied in ``i``) need
    no product: ``C(n_ij, 2)`` minus, over each tie group of column ``i``,
    ``C(g_j, 2)`` with ``g_j`` the group's rows that ``j`` observes
    (:func:`_kendall_untied_pairs`).
    """
    n, p = X.shape
    has_nan = not M.all()
    R = _column_ranks(X, dense=True).astype(np.float32)
    rows = max(1, _CHUNK_ELEMENTS // max(1, n * p))
    starts = np.arange(0, n - 1, rows)
    # Two halves of the row blocks with about as many row pairs each, on two threads when the products are
    # large and BLAS itself runs on one (the registry limits it below _THREAD_CELLS cells): the elementwise
    # passes and BLAS release the GIL. Each half sums integers exactly, so the schedule cannot change the result.
    pairs = np.cumsum((n - starts) * np.minimum(rows, n - starts))
    halves = np.split(starts, [int(np.searchsorted(pairs, pairs[-1] / 2))])
    nums = [np.zeros((p, p)), np.zeros((p, p))]

    def half(t: int) -> None:
        num = nums[t]
        for k0 in halves[t]:
            k1 = min(n, k0 + rows)
            a, b = R[k0:k1, None, :], R[None, k0:, :]
            # sign(a - b) as (a > b) - (a < b): two byte-wide comparisons, and a missing cell (NaN) compares
            # False both ways, so a pair missing in either row adds nothing without a masking pass.
            D = np.subtract(np.greater(a, b), np.less(a, b), dtype=np.float32)
            # Counts per block are integers below 2**24: exact in float32, summed in float64.
            S = D.reshape(-1, p)
            num += S.T @ S
            # Pairs inside the block appear in both orders (same product): count them once.
            W = np.ascontiguousarray(D[:, : k1 - k0]).reshape(-1, p)
            num -= 0.5 * (W.T @ W)

    _each_task(2, half, n * p < K._THREAD_CELLS and pairs[-1] * float(p) * p > _KENDALL_THREAD_OPS)
    num = nums[0] + nums[1]
    if not has_nan:
        d = np.diag(num).copy()
        return _tau_from_sums(num, np.outer(d, d))
    den = _kendall_untied_pairs(X, M)
    if den is None:  # too many tie groups for the counting route: one masked product instead
        den = np.zeros((p, p))
        for a, b in _row_pairs(n, max(1, _CHUNK_ELEMENTS // max(1, p))):
            with np.errstate(invalid="ignore"):
                A = np.abs(np.sign(X[a] - X[b])).astype(np.float32)
            np.copyto(A, 0.0, where=np.isnan(A))
            den += A.T @ (M[a] & M[b]).astype(np.float32)
    return _tau_from_sums(num, den * den.T)


def _kendall_untied_pairs(X: np.ndarray, M: np.ndarray, max_cells: float = 2e7):
    """``N[i, j]``: row pairs observed in both ``i`` and ``j`` and not tied in ``i`` (``None`` if too many ties).

    ``C(n_ij, 2)`` minus the tied pairs: for a tie group of column ``i`` (rows
    sharing one value), ``C(g_j, 2)`` with ``g_j`` the group's rows observed
    in ``j``, i.e. a sparse group-indicator product ``G.T @ M``. Returns
    ``None`` when ``groups x q`` would exceed ``max_cells``.
    """
    from scipy import sparse

    n, q = X.shape
    m = M.astype(float)
    c = m.T @ m
    N = c * (c - 1.0) / 2.0
    order = np.argsort(X, axis=0, kind="stable")
    v = np.take_along_axis(X, order, axis=0)
    same = np.zeros((n, q), dtype=bool)
    same[1:] = v[1:] == v[:-1]  # NaN never equals: missing cells are never tied
    start = np.zeros((n, q), dtype=bool)
    start[:-1] = same[1:] & ~same[:-1]  # first row of a tie group of size >= 2
    in_group = same | start
    if not in_group.any():
        return N
    gid = np.cumsum(start.T.ravel()).reshape(q, n).T - 1  # global group id, column by column
    r, j = np.nonzero(in_group)
    g = gid[r, j]
    n_groups = int(g.max()) + 1
    if n_groups * q > max_cells:
        return None
    G = sparse.csr_matrix((np.ones(r.size), (order[r, j], g)), shape=(n, n_groups))
    counts = np.asarray((G.T @ m))  # (groups, q): rows of each group observed in each column
    col = np.zeros(n_groups, dtype=np.intp)
    col[g] = j
    tied = np.zeros((q, q))
    np.add.at(tied, col, counts * (counts - 1.0) / 2.0)
    return N - tied


def _kendall_sampled(X: np.ndarray, M: np.ndarray, max_pairs: int, random_state) -> np.ndarray:
    """tau-b estimated from ``max_pairs`` row pairs drawn uniformly (the ratio of the two sampled sums)."""
    from scipy import sparse

    n, p = X.shape
    complete = bool(M.all())
    cap = max(1, _CHUNK_ELEMENTS // max(1, p))
    num = np.zeros((p, p))
    den = np.zeros((p, p))
    for a, b in _sampled_row_pairs(n, max_pairs, cap, random_state):
        Xa, Xb = X[a], X[b]
        S = np.subtract(np.greater(Xa, Xb), np.less(Xa, Xb), dtype=np.float32)  # NaN compares False: 0
        # Counts per chunk are integers below 2**24: exact in float32, summed in float64.
        num += S.T @ S
        if not complete:
            # |S_i| = P_i - T_i (pairs observed in column i, minus those tied in it; NaN never equals), so
            # |S|.T @ P is the symmetric P.T @ P (half a product) minus T.T @ P, sparse while ties are rare.
            P = (M[a] & M[b]).astype(np.float32)
            den += P.T @ P
            T = Xa == Xb
            n_tied = np.count_nonzero(T)
            if n_tied > 0.05 * T.size:
                den -= T.astype(np.float32).T @ P
            elif n_tied:
                den -= sparse.csr_matrix(T, dtype=np.float32).T @ P
    if complete:
        d = np.diag(num).copy()
        return _tau_from_sums(num, np.outer(d, d))
    return _tau_from_sums(num, den * den.T)
