"""Similarity measures between the columns (datasets, or prompts) of a performance matrix.

Every measure is a function ``func(X) -> C``: ``X`` is ``(n_obs, n_items)``
(models x datasets for SimBA, models x prompts for 0/1 prompt-level data) and
may contain NaN; ``C`` is the ``(n_items, n_items)`` similarity between
columns. All measures are symmetric.

Conventions (shared by every measure here)
------------------------------------------
* Missing cells: each pair of columns uses only the rows observed in both
  (pairwise-complete observations).
* Undefined entries are NaN: a correlation involving a column that is constant
  on the shared rows (or fewer than two shared rows); cosine or Jensen-Shannon
  with an all-zero column (no direction / no distribution); any pair with no
  shared row. Selectors in :mod:`harness_ext.plugins.selectors` read NaN as
  similarity 0, i.e. "covers nothing".
* Diagonal: 1 wherever the column's self-similarity is defined (a constant
  column has NaN on the diagonal under the correlations).
* Distance-based measures (Lp, Wasserstein, Jensen-Shannon) are defined for
  constant columns.

Vectorisation: correlations and cosine are masked matrix products; Kendall's
tau is a masked product of pairwise-difference sign matrices over chunks of
row pairs (all pairs while that is cheap, else a seeded uniform sample of
row pairs: see :func:`kendall_similarity`); Spearman and Wasserstein sort or
rank once when the data are complete and, with missing cells, re-rank/re-sort
once per incomplete column (vectorised over all its partners), never per cell.
On complete data the distances visit each unordered column pair once:
Manhattan, Euclidean and Wasserstein through ``scipy.spatial.distance.pdist``
(compiled; Wasserstein as the L1 distance of sorted columns), Minkowski and
Jensen-Shannon in chunks of the upper triangle. With missing cells, Euclidean
is three masked matrix products (as sklearn's ``nan_euclidean_distances``),
other Lp distances visit each pair once in cache-sized tiles (a missing term
is dropped by ``fmax(NaN, 0) = 0``), and Jensen-Shannon broadcasts over column
blocks of the full square. Complete Pearson is one centred product, as
``np.corrcoef``.

Precision: everything is float64 except (i) the Kendall sign products, which
are exact in float32 (integer counts per chunk well below 2**24, accumulated
in float64), and (ii) Minkowski (p=3) and Jensen-Shannon on complete data
when a matrix needs more than ``_FLOAT32_TERMS`` elementwise terms
(``n * q * (q - 1) / 2``; about 1,000 x 450 columns): their per-element terms
are then computed in float32 (float32 ``log`` is ~6x faster) and summed with
pairwise summation. tests/test_similarity.py bounds the resulting difference
from the float64 result on real data (below 1e-5 for the similarities).

References
----------
SimBA (Subramani, Gomez, Diab), §3.1 and Appendix A, eqs. 9-15. Jaccard and
Hamming for 0/1 prompt-level vectors: Ailem et al., §3.1.
"""

from __future__ import annotations

import warnings

import numpy as np

from harness_ext.base import check_matrix
from harness_ext.errors import MethodError
from harness_ext.hookspecs import hookimpl
from harness_ext.types import SimilarityMeasure

#: The nine measures of SimBA Table 3, in the paper's order.
PAPER_MEASURES = (
    "pearson",
    "spearman",
    "kendall_tau",
    "cosine",
    "manhattan",
    "euclidean",
    "minkowski",
    "wasserstein",
    "jensen_shannon",
)

#: Display labels (paper spelling) for tables and plots.
LABELS = {
    "pearson": "PEARSON",
    "spearman": "SPEARMAN",
    "kendall_tau": "KENDALL-TAU",
    "cosine": "COSINE",
    "manhattan": "MANHATTAN",
    "euclidean": "EUCLIDEAN",
    "minkowski": "MINKOWSKI (P=3)",
    "wasserstein": "WASSERSTEIN",
    "jensen_shannon": "JENSEN-SHANNON",
    "jaccard": "JACCARD",
    "hamming": "HAMMING",
}

_EPS = np.finfo(float).eps
# Broadcast intermediates are materialised per chunk; this caps one at ~32 MB of float64.
_CHUNK_ELEMENTS = 4_000_000
# Above this many elementwise terms, Minkowski and Jensen-Shannon on complete data work in float32.
_FLOAT32_TERMS = 100_000_000
# Kendall: all row pairs while n_pairs * p**2 stays under this many multiply-adds (or n_pairs <= max_pairs).
_KENDALL_EXACT_OPS = 1e10


def _prepare(X) -> tuple:
    X = check_matrix(X, min_rows=1, min_cols=1)
    return X, ~np.isnan(X)


def _symmetrise(C: np.ndarray) -> np.ndarray:
    # Matrix products for (i, j) and (j, i) may round differently; average them so
    # C is exactly symmetric (NaN stays NaN on both sides).
    return 0.5 * (C + C.T)


def _col_blocks(p_rows: int, p: int, n: int):
    """Column blocks so that an (n, block, p) intermediate stays under the chunk cap."""
    size = max(1, _CHUNK_ELEMENTS // max(1, n * p))
    for start in range(0, p_rows, size):
        yield slice(start, min(p_rows, start + size))


# --------------------------------------------------------------------------- correlations


def cross_pearson(X, Y=None) -> np.ndarray:
    """Pearson correlation between every column of ``X`` and every column of ``Y``.

    Pairwise-complete: the pair ``(i, j)`` uses the rows where both ``X[:, i]``
    and ``Y[:, j]`` are observed. Computed with masked matrix products on
    column-centred data (centring first keeps the one-pass sums from
    cancelling).

    Parameters
    ----------
    X : array-like, shape (n, p)
    Y : array-like, shape (n, q), optional
        Default ``X`` (then the result is symmetric with unit diagonal where
        defined).

    Returns
    -------
    numpy.ndarray, shape (p, q)
        NaN where fewer than two rows are shared or either column is constant
        on the shared rows. A column counts as constant when its variance on
        the shared rows is below ``16 * n * eps`` times its mean square about
        the global column mean (rounding noise, not data).

    References
    ----------
    SimBA, Appendix A, eq. 9.
    """
    X = np.asarray(X, dtype=float)
    sym = Y is None
    Y = X if sym else np.asarray(Y, dtype=float)
    if X.ndim != 2 or Y.ndim != 2 or X.shape[0] != Y.shape[0]:
        raise MethodError(f"cross_pearson needs two 2-D arrays with the same rows, got {X.shape} and {Y.shape}")
    Mx, My = ~np.isnan(X), ~np.isnan(Y)
    if sym and Mx.all():
        return _complete_pearson(X)
    with np.errstate(invalid="ignore", divide="ignore"):
        cx = np.where(Mx, X, 0.0).sum(axis=0) / np.maximum(Mx.sum(axis=0), 1)
        Xc = np.where(Mx, X - cx, 0.0)
        if sym:
            Yc = Xc
        else:
            cy = np.where(My, Y, 0.0).sum(axis=0) / np.maximum(My.sum(axis=0), 1)
            Yc = np.where(My, Y - cy, 0.0)
        if Mx.all() and My.all():
            # Complete: the masked sums are per-column vectors, so one product (sxy) instead of six.
            n = np.full((X.shape[1], Y.shape[1]), float(X.shape[0]))
            sx, sy = Xc.sum(axis=0)[:, None], Yc.sum(axis=0)[None, :]
            sxx, syy = (Xc * Xc).sum(axis=0)[:, None], (Yc * Yc).sum(axis=0)[None, :]
        else:
            mx, my = Mx.astype(float), My.astype(float)
            n = mx.T @ my
            sx = Xc.T @ my
            sy = mx.T @ Yc
            sxx = (Xc * Xc).T @ my
            syy = mx.T @ (Yc * Yc)
        sxy = Xc.T @ Yc
        nn = np.maximum(n, 1.0)
        vx = sxx - sx * sx / nn
        vy = syy - sy * sy / nn
        cov = sxy - sx * sy / nn
        tol = 16.0 * _EPS * nn
        ok = (n >= 2) & (vx > tol * sxx) & (vy > tol * syy)
        r = cov / np.sqrt(np.where(ok, vx * vy, 1.0))
    r = np.where(ok, np.clip(r, -1.0, 1.0), np.nan)
    if sym:
        ok = ok & ok.T
        r = np.where(ok, _symmetrise(r), np.nan)
        np.fill_diagonal(r, np.where(np.diag(ok), 1.0, np.nan))
    return r


def _complete_pearson(X: np.ndarray) -> np.ndarray:
    """Correlation matrix of the columns of a complete ``X``: one centred product, as ``np.corrcoef``.

    A column is constant when its centred sum of squares is below ``16 n eps``
    times its raw sum of squares (rounding noise): NaN row and column.
    """
    n = X.shape[0]
    Xc = X - X.mean(axis=0)
    C = Xc.T @ Xc
    d = np.diag(C).copy()
    ok = (n >= 2) & (d > 16.0 * _EPS * n * np.einsum("ij,ij->j", X, X))
    s = np.sqrt(np.where(ok, d, 1.0))
    C /= s[:, None]
    C /= s[None, :]
    np.clip(C, -1.0, 1.0, out=C)
    C = _symmetrise(C)
    C[~ok, :] = np.nan
    C[:, ~ok] = np.nan
    np.fill_diagonal(C, np.where(ok, 1.0, np.nan))
    return C


def _paired_pearson(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Pearson of A[:, j] with B[:, j] for every j, over rows where both are finite."""
    m = ~(np.isnan(A) | np.isnan(B))
    n = m.sum(axis=0)
    nn = np.maximum(n, 1)
    a = np.where(m, A, 0.0)
    b = np.where(m, B, 0.0)
    a = np.where(m, a - a.sum(0) / nn, 0.0)
    b = np.where(m, b - b.sum(0) / nn, 0.0)
    va, vb = (a * a).sum(0), (b * b).sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (a * b).sum(0) / np.sqrt(va * vb)
    # Ranks are exact small numbers, so a zero variance is exactly zero here.
    return np.where((n >= 2) & (va > 0) & (vb > 0), np.clip(r, -1.0, 1.0), np.nan)


def pearson_similarity(X) -> np.ndarray:
    """Pearson correlation between columns (pairwise-complete).

    References
    ----------
    SimBA, Appendix A, eq. 9.
    """
    X, _ = _prepare(X)
    return cross_pearson(X)


def spearman_similarity(X) -> np.ndarray:
    """Spearman's rho between columns: Pearson of average-tie ranks.

    Ranks are taken within the rows shared by the pair (as
    ``scipy.stats.spearmanr`` on the pairwise-complete rows). Complete data
    are ranked once. With missing cells, pairs whose columns have the same
    missing pattern still use one ranking; every column with missing cells is
    re-ranked against all its partners in one vectorised pass.

    References
    ----------
    SimBA, Appendix A, eq. 10 (ties: average ranks, as scipy).
    """
    from scipy.stats import rankdata

    X, M = _prepare(X)
    own = rankdata(X, axis=0, nan_policy="omit") if not M.all() else rankdata(X, axis=0)
    C = cross_pearson(own)
    for i in np.flatnonzero(~M.all(axis=0)):
        rows = M[:, i]
        Xs = X[rows]
        partner_ranks = rankdata(Xs, axis=0, nan_policy="omit")
        # Column i restricted, for each partner j, to the rows where j is observed.
        xi = np.where(np.isnan(Xs), np.nan, Xs[:, [i]])
        own_ranks = rankdata(xi, axis=0, nan_policy="omit")
        row = _paired_pearson(own_ranks, partner_ranks)
        C[i, :] = row
        C[:, i] = row
    return C


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


def kendall_similarity(X, max_pairs: int = 200_000, random_state: int = 0) -> np.ndarray:
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

    References
    ----------
    SimBA, Appendix A, eq. 11. Eq. 11 is ``(C - D) / (C + D)``; we use tau-b,
    which equals it without ties and is what scipy (and so, we assume, the
    SimBA code) computes with ties. Incomplete U-statistics: Blom (1976),
    Biometrika 63(3), 573-580.
    """
    X, M = _prepare(X)
    n, p = X.shape
    complete = bool(M.all())
    n_pairs = n * (n - 1) // 2
    if _kendall_per_column_pair_is_cheaper(n, p):
        return _kendall_per_column_pair(X, M)
    cap = max(1, _CHUNK_ELEMENTS // max(1, p))
    exact = n_pairs <= max_pairs or n_pairs * float(p) * p <= _KENDALL_EXACT_OPS
    pairs = _row_pairs(n, cap) if exact else _sampled_row_pairs(n, int(max_pairs), cap, random_state)
    num = np.zeros((p, p))
    den = np.zeros((p, p))
    for a, b in pairs:
        with np.errstate(invalid="ignore"):
            S = np.sign(X[a] - X[b]).astype(np.float32)
        S = np.nan_to_num(S, nan=0.0, copy=False)
        # Counts per chunk are integers below 2**24: exact in float32, summed in float64.
        num += (S.T @ S).astype(float)
        if not complete:
            P = (M[a] & M[b]).astype(np.float32)
            den += (np.abs(S).T @ P).astype(float)
    if complete:
        d = np.diag(num).copy()
        prod = np.outer(d, d)
    else:
        prod = den * den.T
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = num / np.sqrt(prod)
    tau = np.where(prod > 0, np.clip(tau, -1.0, 1.0), np.nan)
    tau = _symmetrise(tau)
    np.fill_diagonal(tau, np.where(np.diag(prod) > 0, 1.0, np.nan))
    return tau


# --------------------------------------------------------------------------- cosine and distances


def cosine_similarity(X) -> np.ndarray:
    """Cosine of the angle between columns, over the rows both observe.

    NaN when either column is all zero on the shared rows (no direction).

    References
    ----------
    SimBA, Appendix A, eq. 12.
    """
    X, M = _prepare(X)
    X0 = np.where(M, X, 0.0)
    m = M.astype(float)
    num = X0.T @ X0
    sq = (X0 * X0).T @ m  # sq[i, j]: squared norm of column i over rows where j is observed
    prod = sq * sq.T
    with np.errstate(invalid="ignore", divide="ignore"):
        C = num / np.sqrt(prod)
    C = np.where(prod > 0, np.clip(_symmetrise(C), -1.0, 1.0), np.nan)
    np.fill_diagonal(C, np.where(np.diag(prod) > 0, 1.0, np.nan))
    return C


def lp_distance(X, p: float) -> np.ndarray:
    """Lp distance between columns over pairwise-complete rows, rescaled for missing rows.

    ``D[i, j] = (n / n_ij * sum_k |x_ki - x_kj|^p) ** (1/p)`` where ``n_ij`` rows
    are shared out of ``n``: exactly the scipy distance when nothing is missing
    (then computed once per unordered pair: ``pdist`` for p = 1, 2, upper-triangle
    chunks for other p, in float32 beyond ``_FLOAT32_TERMS`` terms);
    with missing rows the sum is scaled up to the full row count (as
    ``sklearn.metrics.pairwise.nan_euclidean_distances`` does) so that a pair
    sharing few rows does not look artificially close. NaN if no row is shared.

    References
    ----------
    SimBA, Appendix A, eq. 13.
    """
    X, M = _prepare(X)
    n, q = X.shape
    if M.all():
        return _complete_pairs(X, p)
    m = M.astype(float)
    cnt = m.T @ m  # rows shared by each pair
    if p == 2:
        # sum_k (x_ki - x_kj)^2 over shared rows = sq_i(j) + sq_j(i) - 2 x_i.x_j: three products (what
        # sklearn's nan_euclidean_distances does, on columns), shifted by the overall mean (differences do not
        # change) so that the squares stay small.
        X0 = np.where(M, X - X[M].mean(), 0.0)
        sq = (X0 * X0).T @ m
        s = np.maximum(sq + sq.T - 2.0 * (X0.T @ X0), 0.0)
    else:
        # Each unordered pair once, in cache-sized tiles; a missing cell is NaN, and fmax(NaN, 0) = 0 drops the term.
        T = np.ascontiguousarray(X.T)
        if n * q * (q - 1) / 2 > _FLOAT32_TERMS:
            T = T.astype(np.float32)

        def term(a, b, diff, out):
            np.abs(np.subtract(a, b, out=diff), out=diff)
            np.fmax(diff, 0.0, out=diff)
            if p == 1:
                return diff
            if p == 3:
                return np.multiply(np.multiply(diff, diff, out=out), diff, out=out)
            return np.power(diff, p, out=out)

        s = _upper_pair_sums(T, term)
    with np.errstate(invalid="ignore", divide="ignore"):
        D = np.where(cnt > 0, (s * n / np.maximum(cnt, 1)) ** (1.0 / p), np.nan)
    D = _symmetrise(D)
    np.fill_diagonal(D, np.where(M.any(axis=0), 0.0, np.nan))
    return D


def _square(condensed: np.ndarray) -> np.ndarray:
    """Square, symmetric matrix with a zero diagonal from ``pdist``'s condensed distances."""
    from scipy.spatial.distance import squareform

    return squareform(np.asarray(condensed, dtype=float), checks=False)


# Tiles of _upper_pair_sums hold about this many elements (~1 MB of float32): small enough
# to stay in cache, which makes the elementwise passes 2-3x faster than 32 MB chunks.
_TILE_ELEMENTS = 250_000


def _upper_pair_sums(T: np.ndarray, term) -> np.ndarray:
    """``U[i, j] = sum_k term(T[i, k], T[j, k])`` for every pair ``i < j`` of rows of ``T``.

    ``T`` is ``(q, n)`` with C-contiguous rows, so the sum runs along the
    contiguous axis (numpy's pairwise summation, in ``T``'s dtype). The upper
    triangle is covered by square tiles of rows ``i`` x rows ``j`` (each tile
    ``(b, b, n)`` elements, about ``_TILE_ELEMENTS``); tiles below the diagonal
    are skipped. ``term(a, b, buf1, buf2)`` gets two scratch arrays of the
    tile's shape to work in place (no allocation per tile) and returns the
    terms. Returns the ``(q, q)`` float64 matrix, symmetric, with a zero
    diagonal.
    """
    q, n = T.shape
    U = np.zeros((q, q))
    b = max(1, int(np.sqrt(_TILE_ELEMENTS / max(1, n))))
    bufs = np.empty((2, min(b, q), min(b, q), n), dtype=T.dtype)
    for i0 in range(0, q, b):
        Ti = T[i0 : i0 + b, None, :]
        for j0 in range(i0, q, b):
            Tj = T[None, j0 : j0 + b, :]
            shape = (Ti.shape[0], Tj.shape[1])
            vals = term(Ti, Tj, bufs[0, : shape[0], : shape[1]], bufs[1, : shape[0], : shape[1]])
            U[i0 : i0 + b, j0 : j0 + b] = vals.sum(axis=-1)
    U = np.triu(U, 1)
    return U + U.T


def _complete_pairs(X: np.ndarray, p: float) -> np.ndarray:
    """Lp distance matrix of the columns of a complete ``X``, each pair once."""
    from scipy.spatial.distance import pdist

    n, q = X.shape
    T = np.ascontiguousarray(X.T)
    if p == 1:
        return _square(pdist(T, "cityblock"))
    if p == 2:
        return _square(pdist(T, "euclidean"))
    if n * q * (q - 1) / 2 > _FLOAT32_TERMS:
        T = T.astype(np.float32)

    def term(a, b, diff, out):
        np.abs(np.subtract(a, b, out=diff), out=diff)
        if p == 3:  # integer power by multiplication: np.power with a float exponent is the slow part
            return np.multiply(np.multiply(diff, diff, out=out), diff, out=out)
        return np.power(diff, p, out=out)

    return _upper_pair_sums(T, term) ** (1.0 / p)


def _lp_similarity(p: float):
    def func(X) -> np.ndarray:
        return np.exp(-lp_distance(X, p))

    func.__name__ = f"l{p:g}_similarity"
    func.__doc__ = f"exp(-L{p:g} distance) between columns; see :func:`lp_distance`.\n\nReferences\n----------\nSimBA, Appendix A, eq. 13."
    return func


manhattan_similarity = _lp_similarity(1.0)
euclidean_similarity = _lp_similarity(2.0)
minkowski_similarity = _lp_similarity(3.0)


def wasserstein_distance_matrix(X) -> np.ndarray:
    """1-Wasserstein distance between the empirical distributions of columns.

    Each pair uses its pairwise-complete rows, so both samples have the same
    size and ``W1 = mean |sort(u) - sort(v)|`` (the quantile-function form of
    ``scipy.stats.wasserstein_distance`` for equal-size, equal-weight
    samples). Complete data are sorted once; with missing cells, each
    incomplete column is re-sorted against all partners in one pass.

    References
    ----------
    SimBA, Appendix A, eq. 14.
    """
    X, M = _prepare(X)
    n, q = X.shape
    with warnings.catch_warnings():
        # Pairs with no shared row give an all-NaN mean: NaN is the intended answer.
        warnings.filterwarnings("ignore", message="Mean of empty slice", category=RuntimeWarning)
        return _wasserstein(X, M, n, q)


def _wasserstein(X, M, n, q):
    S = np.sort(X, axis=0)  # NaN sorts last, so columns with equal counts align
    if M.all():
        # W1 of equal-size samples = L1 distance of the sorted samples / n.
        return _complete_pairs(S, 1) / n
    W = np.empty((q, q))
    for blk in _col_blocks(q, q, n):
        gap = np.abs(S[:, blk, None] - S[:, None, :])
        # Pairs with different missing patterns are wrong here and recomputed below.
        W[blk] = np.nanmean(gap, axis=0)
    for i in np.flatnonzero(~M.all(axis=0)):
        Xs = X[M[:, i]]
        if Xs.shape[0] == 0:
            W[i, :] = W[:, i] = np.nan
            continue
        xi = np.where(np.isnan(Xs), np.nan, Xs[:, [i]])
        with np.errstate(invalid="ignore"):
            row = np.nanmean(np.abs(np.sort(xi, axis=0) - np.sort(Xs, axis=0)), axis=0)
        W[i, :] = row
        W[:, i] = row
    W = _symmetrise(W)
    np.fill_diagonal(W, np.where(M.any(axis=0), 0.0, np.nan))
    return W


def wasserstein_similarity(X) -> np.ndarray:
    """``exp(-W1(i, j) / max_{k,l} W1(k, l))`` between columns.

    If every pair has ``W1 = 0`` the similarity is 1 throughout.

    References
    ----------
    SimBA, Appendix A, eq. 14.
    """
    W = wasserstein_distance_matrix(X)
    off = W[~np.eye(W.shape[0], dtype=bool)]
    wmax = np.nanmax(off) if np.isfinite(off).any() else 0.0
    if wmax <= 0:
        return np.where(np.isnan(W), np.nan, 1.0)
    return np.exp(-W / wmax)


def jensen_shannon_similarity(X) -> np.ndarray:
    """``1 - JS distance`` between columns normalised to probability vectors.

    For each pair, both columns are restricted to the shared rows and divided
    by their sums; the JS distance uses base-2 logarithms so it lies in [0, 1]
    and the similarity does too (SimBA footnote 6: ``1 - DISTANCE`` for bounded
    distances). Equals ``1 - scipy.spatial.distance.jensenshannon(u, v, base=2)``.
    NaN when a column sums to zero on the shared rows. Complete data use the
    entropy form ``JS = H(M) - (H(P) + H(Q)) / 2`` with each column's entropy
    computed once and each pair visited once (float32 terms beyond
    ``_FLOAT32_TERMS``).

    Raises
    ------
    MethodError
        If ``X`` has negative values (no probability interpretation; use the
        chance-normalised matrix).

    References
    ----------
    SimBA, Appendix A, eq. 15.
    """
    X, M = _prepare(X)
    if (X[M] < 0).any():
        raise MethodError("Jensen-Shannon similarity needs non-negative scores; normalise the matrix first")
    n, q = X.shape
    if M.all():
        J = _jensen_shannon_complete(X)
    else:
        J = _jensen_shannon_masked(X, M)
    diag = np.diag(J).copy()
    np.fill_diagonal(J, np.where(np.isnan(diag), np.nan, 1.0))
    return J


def _jensen_shannon_complete(X: np.ndarray) -> np.ndarray:
    """Complete data: ``JS = log 2 + (h_i + h_j) / 2 - (1/2) sum_k s log s`` with ``s = p_i + p_j``.

    ``h_i = sum_k p_ki log p_ki`` is computed once per column (float64), so each
    pair costs one ``log`` per row instead of three; pairs are visited once.
    """
    n, q = X.shape
    sums = X.sum(axis=0)
    ok = sums > 0
    P = X / np.where(ok, sums, 1.0)
    h = (P * np.log(np.where(P > 0, P, 1.0))).sum(axis=0)
    T = np.ascontiguousarray(P.T)
    if n * q * (q - 1) / 2 > _FLOAT32_TERMS:
        T = T.astype(np.float32)
    # Offsetting by the smallest normal number makes 0 log 0 a normal ~1e-36 (float32) instead of NaN,
    # without a maximum() pass per tile; values above ~1e-30 are unchanged.
    T = T + np.finfo(T.dtype).tiny

    def term(a, b, s, out):
        np.add(a, b, out=s)
        return np.multiply(s, np.log(s, out=out), out=out)

    with np.errstate(invalid="ignore"):
        js = (np.log(2.0) + 0.5 * (h[:, None] + h[None, :]) - 0.5 * _upper_pair_sums(T, term)) / np.log(2.0)
    return np.where(ok[:, None] & ok[None, :], 1.0 - np.sqrt(np.clip(js, 0.0, 1.0)), np.nan)


def _jensen_shannon_masked(X: np.ndarray, M: np.ndarray) -> np.ndarray:
    from scipy.special import rel_entr

    n, q = X.shape
    J = np.empty((q, q))
    for blk in _col_blocks(q, q, n):
        shared = M[:, blk, None] & M[:, None, :]
        a = np.where(shared, X[:, blk, None], 0.0)
        b = np.where(shared, X[:, None, :], 0.0)
        sa, sb = a.sum(0), b.sum(0)
        ok = (sa > 0) & (sb > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            pa = a / np.where(ok, sa, 1.0)
            pb = b / np.where(ok, sb, 1.0)
            mid = 0.5 * (pa + pb)
            js = 0.5 * (rel_entr(pa, mid).sum(0) + rel_entr(pb, mid).sum(0)) / np.log(2.0)
        J[blk] = np.where(ok, 1.0 - np.sqrt(np.clip(js, 0.0, 1.0)), np.nan)
    return _symmetrise(J)


# --------------------------------------------------------------------------- binary measures


def _binary(X) -> tuple:
    X, M = _prepare(X)
    vals = X[M]
    if not np.isin(vals, (0.0, 1.0)).all():
        raise MethodError("Jaccard and Hamming similarities need a 0/1 matrix (prompt-level correctness)")
    return np.where(M, X, 0.0), M.astype(float)


def jaccard_similarity(X) -> np.ndarray:
    """Jaccard similarity of 0/1 columns over pairwise-complete rows.

    ``|a AND b| / |a OR b|``; two columns with no 1 on their shared rows get 1
    (scipy's convention: Jaccard distance 0). NaN if no row is shared.

    References
    ----------
    Ailem et al., §3.1 (binary prompt-level vectors).
    """
    A, m = _binary(X)
    inter = A.T @ A
    ones_i = A.T @ m  # ones of column i on rows where j is observed
    union = ones_i + ones_i.T - inter
    shared = m.T @ m
    with np.errstate(invalid="ignore", divide="ignore"):
        J = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 1.0)
    return np.where(shared > 0, _symmetrise(J), np.nan)


def hamming_similarity(X) -> np.ndarray:
    """``1 - Hamming distance`` (fraction of shared rows where 0/1 columns agree).

    NaN if no row is shared.

    References
    ----------
    Ailem et al., §3.1 (binary prompt-level vectors).
    """
    A, m = _binary(X)
    inter = A.T @ A
    ones_i = A.T @ m
    mismatch = ones_i + ones_i.T - 2.0 * inter
    shared = m.T @ m
    with np.errstate(invalid="ignore", divide="ignore"):
        H = 1.0 - mismatch / shared
    return np.where(shared > 0, _symmetrise(H), np.nan)


# --------------------------------------------------------------------------- registry

#: Below this many cells a measure runs its products on one BLAS thread: on a shared 2-core machine the
#: threads of a small product spin against other processes (838 x 57 masked Pearson: 0.7 s on two
#: threads, 3 ms on one).
_ONE_THREAD_CELLS = 2_000_000


def _small_on_one_thread(func):
    import functools

    @functools.wraps(func)
    def wrapper(X, *args, **kwargs):
        if np.size(X) >= _ONE_THREAD_CELLS:
            return func(X, *args, **kwargs)
        from harness_ext.base import limit_threads

        with limit_threads(1):
            return func(X, *args, **kwargs)

    return wrapper


_FUNCS = {
    "pearson": (pearson_similarity, "Pearson correlation (SimBA eq. 9)", False),
    "spearman": (spearman_similarity, "Spearman rank correlation, average ties (SimBA eq. 10)", False),
    "kendall_tau": (kendall_similarity, "Kendall tau-b (SimBA eq. 11)", False),
    "cosine": (cosine_similarity, "cosine similarity (SimBA eq. 12)", False),
    "manhattan": (manhattan_similarity, "exp(-L1 distance) (SimBA eq. 13)", False),
    "euclidean": (euclidean_similarity, "exp(-L2 distance) (SimBA eq. 13)", False),
    "minkowski": (minkowski_similarity, "exp(-L3 distance), Minkowski p=3 (SimBA eq. 13)", False),
    "wasserstein": (wasserstein_similarity, "exp(-W1 / max W1) (SimBA eq. 14)", False),
    "jensen_shannon": (jensen_shannon_similarity, "1 - Jensen-Shannon distance, base 2 (SimBA eq. 15)", False),
    "jaccard": (jaccard_similarity, "Jaccard similarity of 0/1 vectors (Ailem et al. §3.1)", True),
    "hamming": (hamming_similarity, "1 - Hamming distance of 0/1 vectors (Ailem et al. §3.1)", True),
}


def similarity_matrix(X, name: str) -> np.ndarray:
    """The similarity matrix of a registered measure (built-in or third-party) by name."""
    from harness_ext.plugin_manager import get_registration

    reg = get_registration("similarity_measures", name)
    C = np.asarray(reg.func(X), dtype=float)
    q = np.shape(X)[1]
    if C.shape != (q, q):
        raise MethodError(f"similarity {reg.name!r} returned shape {C.shape}, expected {(q, q)}")
    return C


_FUNCS = {name: (_small_on_one_thread(f), d, b) for name, (f, d, b) in _FUNCS.items()}


@hookimpl
def harness_ext_similarity_measures():
    for name, (func, description, binary) in _FUNCS.items():
        yield SimilarityMeasure(name=name, description=description, func=func, binary_only=binary, unit_diagonal=True)
