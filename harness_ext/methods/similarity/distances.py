"""Vectorised kernels of the distance-type similarities (Lp, Wasserstein, Jensen-Shannon).

Conventions (pairwise-complete rows, NaN where undefined) are those of
:mod:`harness_ext.methods.similarity.measures`, which assembles the measures.

Every kernel visits each unordered column pair once, in blocks, on complete
and on incomplete data alike:

* Lp: complete data through ``scipy.spatial.distance.pdist`` (p = 1), one
  Gram product (p = 2, as sklearn's ``euclidean_distances``) or cache-sized
  tiles of the upper triangle (other p). With missing cells the same kernel
  runs on the matrix with each row's missing cells filled by that row's
  observed mean; a term where only one column is observed is then
  ``|x - fill|^p``, and those terms are removed exactly by one masked product
  (:func:`_masked_lp_sums`). Euclidean with missing cells is three masked
  products, as ``sklearn.metrics.pairwise.nan_euclidean_distances``.
* Wasserstein: each column sorted once; a pair's sorted shared-row samples are
  read off the sorted columns by running counts of the partner's mask, in
  blocks of partners (:func:`_wasserstein_masked`).
* Jensen-Shannon: the entropy form with each column's (shared-row) entropy
  from masked products and one ``log`` per pair and row, in tiles
  (:func:`_jensen_shannon`).

References
----------
SimBA (Subramani, Gomez, Diab), Appendix A, eqs. 13-15.
"""

from __future__ import annotations

import numpy as np

from harness_ext.errors import MethodError
from harness_ext.methods.similarity import kernels as K
from harness_ext.methods.similarity.kernels import _prepare, _symmetrise

#: Rows below which the pair counts are one float32 product of the mask: every partial sum of ones is an exact
#: float32 integer below 2**24.
_EXACT_FLOAT32_COUNT = 1 << 24
# Tiles of _upper_pair_sums hold about this many elements (~1 MB of float32): small enough
# to stay in cache, which makes the elementwise passes 2-3x faster than 32 MB chunks.
_TILE_ELEMENTS = 250_000
# Masked Wasserstein: partners per block so that a block's (b, n) arrays hold about this many elements.
_W1_BLOCK_ELEMENTS = 250_000


def _upper_pair_sums(T: np.ndarray, term) -> np.ndarray:
    """``U[i, j] = sum_k term(T[i, k], T[j, k])`` for every pair ``i < j`` of rows of ``T``.

    ``T`` is ``(q, n)`` with C-contiguous rows, so the sum runs along the
    contiguous axis (numpy's pairwise summation, in ``T``'s dtype). The upper
    triangle is covered by square tiles of rows ``i`` x rows ``j`` (each tile
    ``(b, b, n)`` elements, about ``_TILE_ELEMENTS``); tiles below the diagonal
    are skipped. ``term(a, b, buf1, buf2, I, J)`` gets two scratch arrays of
    the tile's shape to work in place (no allocation per tile) and the tile's
    row and column slices (for per-pair constants), and returns the terms.
    Returns the ``(q, q)`` float64 matrix, symmetric, with a zero diagonal.
    """
    import threading

    q, n = T.shape
    U = np.zeros((q, q))
    b = max(1, int(np.sqrt(_TILE_ELEMENTS / max(1, n))))
    starts = range(0, q, b)
    local = threading.local()  # scratch tiles per thread (large matrices run row blocks on two threads)

    def row_block(k: int) -> None:
        if not hasattr(local, "bufs"):
            local.bufs = np.empty((2, min(b, q), min(b, q), n), dtype=T.dtype)
        bufs = local.bufs
        i0 = starts[k]
        I = slice(i0, min(q, i0 + b))
        Ti = T[I, None, :]
        for j0 in range(i0, q, b):
            J = slice(j0, min(q, j0 + b))
            Tj = T[None, J, :]
            shape = (Ti.shape[0], Tj.shape[1])
            vals = term(Ti, Tj, bufs[0, : shape[0], : shape[1]], bufs[1, : shape[0], : shape[1]], I, J)
            U[I, J] = vals.sum(axis=-1)

    K._each_column(len(starts), row_block, q * n)
    U = np.triu(U, 1)
    return U + U.T


#: Elementwise L1 terms (``n q (q - 1) / 2``) from which the masked L1 kernel runs blocks of column pairs as
#: tasks, with the correction's BLAS products as one more (838 x 57 has 1.3 million); on two threads only when
#: a core is idle (:func:`K._idle_core`): scipy releases the GIL in ``pdist``/``cdist``, but at load 7 on the
#: 2-core machine the hand-offs between two threads cost more than they save at these sizes.
_L1_THREAD_TERMS = 1_000_000
#: ... on two threads regardless from this many (about 50 ms on one core), and in four column blocks (ten
#: tasks) instead of two (three tasks): with more, smaller tasks a worker that the shared machine stalls holds
#: up less of the whole.
_L1_FOUR_BLOCK_TERMS = 100_000_000


def _cityblock(T: np.ndarray, extra=None) -> np.ndarray:
    """L1 distances between the rows of ``T`` with scipy's compiled kernel, in blocks on two threads when large.

    scipy releases the GIL in ``pdist``/``cdist``. The rows are cut into
    ``k`` equal blocks (2, or 4 from ``_L1_FOUR_BLOCK_TERMS``); each block
    pair is one task (``cdist`` across two blocks, ``pdist`` within one, half
    the pairs), and the two threads pull tasks in turn (:func:`K._each_task`),
    so one that the machine stalls delays one task, not half the work. Below
    ``_L1_FOUR_BLOCK_TERMS`` there are blocks only with ``extra`` (complete
    data: one ``pdist``) and only when a core is idle (else one ``pdist`` in
    the calling thread); the blocks' boundaries depend on the shape alone,
    and ``cdist`` and ``pdist`` sum each pair in the same order, so blocks or
    none give scipy's result to the last bit and the result does not depend
    on the load (tests/test_similarity_libs.py). ``extra``, a callable, runs as the
    first task (the masked correction's BLAS products, on one BLAS thread
    beside the other thread's distances), or after ``pdist`` when there are
    no blocks.
    """
    pdist, cdist = _l1_kernels()
    q, n = T.shape
    terms = n * q * (q - 1) / 2
    big = terms >= _L1_FOUR_BLOCK_TERMS
    if q < 4 or terms < _L1_THREAD_TERMS or not (big or (extra is not None and K._idle_core())):
        # One call when the blocks would run in the calling thread anyway (complete data below the four-block
        # size, or a busy machine): three calls there cost about 25% more at 838 x 57. The distances are the
        # same to the last bit either way, so this choice, unlike the blocks' boundaries, may follow the load.
        D = _square(pdist(T))
        if extra is not None:
            with K._OneBlasThread():  # as in the blocks below: the products' rounding never follows the load
                extra()
        return D
    k = 4 if big else 2
    edges = [q * a // k for a in range(k + 1)]
    blocks = [slice(edges[a], edges[a + 1]) for a in range(k)]
    # Cross blocks (twice the pairs of a block with itself) first: the last tasks pulled are the short ones.
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)] + [(a, a) for a in range(k)]
    D = np.empty((q, q))

    def task(t: int) -> None:
        if extra is not None:
            if t == 0:
                extra()
                return
            t -= 1
        a, b = pairs[t]
        I, J = blocks[a], blocks[b]
        if a == b:
            D[I, I] = _square(pdist(T[I]))
        else:
            D[I, J] = cdist(T[I], T[J])
            D[J, I] = D[I, J].T

    with K._OneBlasThread():  # the products beside the other thread's distances: one BLAS thread
        K._each_task(len(pairs) + (extra is not None), task, True)
    return D


def _l1_kernels() -> tuple:
    """scipy's compiled L1 kernels ``(pdist(T), cdist(A, B))`` for C-contiguous float64 rows.

    scipy's own ``pdist``/``cdist`` call them after argument handling that costs about 0.3 ms a call (as
    much as the 838 x 57 L1 kernel itself); the inputs here are already validated, so the kernels are called
    directly where scipy has them (``scipy.spatial._distance_pybind``, scipy >= 1.8), else through the public
    functions. tests/test_similarity_libs.py checks the result against ``pdist``.
    """
    try:
        from scipy.spatial._distance_pybind import cdist_cityblock, pdist_cityblock

        return pdist_cityblock, cdist_cityblock
    except (ImportError, AttributeError):  # pragma: no cover - older or reorganised scipy
        from scipy.spatial.distance import cdist, pdist

        return (lambda T: pdist(T, "cityblock")), (lambda A, B: cdist(A, B, "cityblock"))


def _square(condensed: np.ndarray) -> np.ndarray:
    """Square, symmetric matrix with a zero diagonal from ``pdist``'s condensed distances."""
    from scipy.spatial.distance import squareform

    return squareform(np.asarray(condensed, dtype=float), checks=False)


def _power_sums(X: np.ndarray, p: float) -> np.ndarray:
    """``sum_k |x_ki - x_kj|^p`` for every column pair of a complete ``X`` (p != 2), each pair once."""
    n, q = X.shape
    T = np.ascontiguousarray(X.T)
    if p == 1:
        return _cityblock(T)
    if n * q * (q - 1) / 2 > K._FLOAT32_TERMS:
        T = T.astype(np.float32)

    def term(a, b, diff, out, I, J):
        np.abs(np.subtract(a, b, out=diff), out=diff)
        if p == 3:  # integer power by multiplication: np.power with a float exponent is the slow part
            return np.multiply(np.multiply(diff, diff, out=out), diff, out=out)
        return np.power(diff, p, out=out)

    return _upper_pair_sums(T, term)


def _euclidean_complete(X: np.ndarray) -> np.ndarray:
    """Euclidean distances between the columns of a complete ``X``: one Gram product.

    Each row is centred first (a per-row shift leaves every difference
    unchanged) so the squared norms stay small and ``|a|^2 + |b|^2 - 2 a.b``
    cancels little.
    """
    Xr = X - X.mean(axis=1, keepdims=True)
    G = Xr.T @ Xr
    sq = np.diag(G).copy()
    D2 = sq[:, None] + sq[None, :] - 2.0 * G
    np.maximum(D2, 0.0, out=D2)
    D = np.sqrt(_symmetrise(D2))
    np.fill_diagonal(D, 0.0)
    return D


def _masked_lp_sums(X: np.ndarray, M: np.ndarray, p: float) -> tuple:
    """``sum_k |x_ki - x_kj|^p`` over the rows both columns observe, for every pair (p != 2), and those rows'
    counts.

    Filling row ``k``'s missing cells with a constant ``f_k`` makes a row
    missing in both columns add ``|f_k - f_k|^p = 0`` and a row missing only
    in ``j`` add ``|x_ki - f_k|^p``; the latter, summed, is the masked product
    ``G.T @ (1 - M)`` with ``G = |X - f|^p`` on observed cells. So the masked
    sums are the complete kernel on the filled matrix minus that product and
    its transpose. ``f_k`` is the row's observed mean, and each row is
    shifted by it (differences do not change), so the filled cells are zeros,
    ``G`` is ``|shifted|^p`` as it stands, and the removed terms are of the
    size of typical differences (no cancellation of large offsets; one
    constant for the whole matrix would leave offsets between rows, which
    p = 3 cubes: 2e-11 relative error with row offsets 50 times the spread;
    the row's largest value, which needs no mask to zero the filled cells
    again, had about 1,000 times the error at p = 3 with one outlying column).
    The counts are one float32 symmetric product of the mask (exact integers
    below 2**24 rows; float64 from there on). For p = 1 both products run
    beside scipy's distances on the worker threads (:func:`_cityblock`). On
    one core they add to scipy's L1 kernel, the bulk of what ``pdist`` of
    ``np.nan_to_num(X).T`` costs: at 838 x 57 about 0.34 ms for the kernel,
    0.11 ms for the correction and 0.04 ms for the counts, against about
    0.5 ms for that ``pdist`` call with its filling and transposing copy.

    Returns ``(S, counts)``, both ``(q, q)`` float64.
    """
    # Everything is built in the transposed layout scipy and the tiles read: one transposing copy, then passes
    # along contiguous memory, where the row sums are a reduction over the first axis (one vectorised pass;
    # along the short rows of X it is several times slower) and the row counts one product. The mask as
    # float64: multiplying by it is faster than by a bool mask, and it then becomes the correction's
    # missing-cell mask in place. The large temporaries come from the pool (K._pooled).
    # 838 x 57: 0.10 ms to G and N, against 0.13 ms in X's layout.
    n, q = X.shape
    T = K._pooled((q, n))  # columns as contiguous rows, for scipy and the tiles
    np.copyto(T, X.T)
    Mq = K._pooled((q, n))
    np.isnan(T, out=Mq)
    np.subtract(1.0, Mq, out=Mq)  # 1.0 on observed cells
    K._zero_filled(T, Mq, out=T)
    mean = T.sum(axis=0)
    mean /= np.maximum(np.ones(q) @ Mq, 1.0)
    T -= mean
    T *= Mq  # shifted, the filled cells zeros again
    out = {}

    def products() -> None:
        # G and N are built here, not before: for p = 1 this task runs beside scipy's kernel when a core is idle.
        G = np.abs(T, out=K._pooled((q, n)))  # (q, n): 0 on missing cells
        if p != 1:
            G **= p
        N = np.subtract(1.0, Mq, out=Mq)  # 1.0 on missing cells: the correction's right-hand side, (q, n)
        # float32 sums of ones are exact integers only below 2**24 rows
        m = M.astype(np.float32 if M.shape[0] < _EXACT_FLOAT32_COUNT else np.float64)
        out["counts"] = (m.T @ m).astype(np.float64)
        out["C"] = G @ N.T

    if p == 1:
        U = _cityblock(T, extra=products)
    else:
        U = _power_sums(T.T, p)  # T.T: the transpose _power_sums makes contiguous again, without a copy
        products()
    C = out["C"]
    U -= C + C.T  # C + C.T is exactly symmetric, so U stays so
    return np.maximum(U, 0.0, out=U), out["counts"]


def lp_distance(X, p: float) -> np.ndarray:
    """Lp distance between columns over pairwise-complete rows, rescaled for missing rows.

    ``D[i, j] = (n / n_ij * sum_k |x_ki - x_kj|^p) ** (1/p)`` where ``n_ij`` rows
    are shared out of ``n``: exactly the scipy distance when nothing is missing;
    with missing rows the sum is scaled up to the full row count (as
    ``sklearn.metrics.pairwise.nan_euclidean_distances`` does) so that a pair
    sharing few rows does not look artificially close. NaN if no row is shared.
    Terms are float32 beyond ``_FLOAT32_TERMS`` for p other than 1 and 2.

    References
    ----------
    SimBA, Appendix A, eq. 13.
    """
    X, M = _prepare(X)
    n, q = X.shape
    if M.all():
        if p == 2:
            return _euclidean_complete(X)
        S = _power_sums(X, p)
        return S if p == 1 else S ** (1.0 / p)
    if p == 2:
        m = M.astype(float)
        cnt = m.T @ m  # rows shared by each pair
        # sum_k (x_ki - x_kj)^2 over shared rows = sq_i(j) + sq_j(i) - 2 x_i.x_j: three products (what
        # sklearn's nan_euclidean_distances does, on columns), shifted by the overall mean (differences do not
        # change) so that the squares stay small.
        X0 = np.where(M, X - X[M].mean(), 0.0)
        sq = (X0 * X0).T @ m
        s = np.maximum(sq + sq.T - 2.0 * (X0.T @ X0), 0.0)
    else:
        s, cnt = _masked_lp_sums(X, M, p)
    # s and cnt are exactly symmetric (sums of a matrix and its transpose, symmetric products), so D is.
    D = s  # a fresh array of the kernel's: scaled in place
    D *= n
    D /= np.maximum(cnt, 1)
    if p != 1:
        D **= 1.0 / p
    np.copyto(D, np.nan, where=cnt == 0)
    np.fill_diagonal(D, np.where(np.diagonal(cnt) > 0, 0.0, np.nan))  # a column's count: its observed rows
    return D


# --------------------------------------------------------------------------- Wasserstein


def wasserstein_distance_matrix(X) -> np.ndarray:
    """1-Wasserstein distance between the empirical distributions of columns.

    Each pair uses its pairwise-complete rows, so both samples have the same
    size and ``W1 = mean |sort(u) - sort(v)|`` (the quantile-function form of
    ``scipy.stats.wasserstein_distance`` for equal-size, equal-weight
    samples). Complete data are sorted once and the sorted columns go through
    the L1 kernel; with missing cells see :func:`_wasserstein_masked`.

    References
    ----------
    SimBA, Appendix A, eq. 14.
    """
    X, M = _prepare(X)
    n, q = X.shape
    if M.all():
        # W1 of equal-size samples = L1 distance of the sorted samples / n.
        return _power_sums(np.sort(X, axis=0), 1) / n
    return _wasserstein_masked(X, M)


def _wasserstein_masked(X: np.ndarray, M: np.ndarray) -> np.ndarray:
    """W1 over pairwise-complete rows with each column sorted once.

    For column ``i`` and a block of partners ``J``: filtering each ``j``'s
    sorted values by ``i``'s mask gives ``j``'s sorted shared-row sample, all
    of them one after the other (one ``np.compress``). In ``i``'s sorted
    order, the running count of ``j``'s mask is the position of each of
    ``i``'s shared values in its own sorted sample, so reading the partner's
    sample at that position lines up the order statistics, and ``W1`` is the
    mean absolute difference. Cost ``O(n q^2 / 2)`` elementwise, no sort per
    pair, columns on two threads for large matrices.
    """
    n, q = X.shape
    sc = K._SortedColumns(X, M)
    W = np.full((q, q), np.nan)
    # Sorted positions with the missing rows pointing at a sentinel row n that is never observed.
    padded = np.where(np.arange(n) < sc.count[:, None], sc.order, n)
    block = max(1, min(q, _W1_BLOCK_ELEMENTS // max(1, n)))

    def column(i: int) -> None:
        ni = int(sc.count[i])
        if ni == 0:
            return
        own = sc.values[i, :ni]
        rows = sc.order[i, :ni]
        mask_i = np.append(M[:, i], False)
        for j0 in range(i + 1, q, block):
            J = slice(j0, min(q, j0 + block))
            theirs = np.compress(mask_i.take(padded[J]).ravel(), sc.values[J].ravel())
            keep = np.take(sc.mask[J], rows, axis=1)  # (b, ni): partner observes the row, in i's sorted order
            pos = np.cumsum(keep, axis=1, dtype=np.int32)  # int32: ~10x faster running sum than int64 from bool
            m = pos[:, -1].astype(np.intp)
            pos += (np.cumsum(m) - m - 1).astype(np.int32)[:, None]  # into the partner's sample (counts are 1-based)
            # Rows i observes but j does not read a neighbour (or are clipped into range): masked by keep below.
            D = theirs.take(pos, mode="clip") if theirs.size else np.zeros(pos.shape)
            D -= own
            np.abs(D, out=D)
            D *= keep
            with np.errstate(invalid="ignore", divide="ignore"):
                W[i, J] = np.where(m > 0, D.sum(axis=1) / np.maximum(m, 1), np.nan)

    K._each_column(q, column, n * q)

    iu = np.triu_indices(q, 1)
    W[iu[::-1]] = W[iu]
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


# --------------------------------------------------------------------------- Jensen-Shannon


def jensen_shannon_similarity(X) -> np.ndarray:
    """``1 - JS distance`` between columns normalised to probability vectors.

    For each pair, both columns are restricted to the shared rows and divided
    by their sums; the JS distance uses base-2 logarithms so it lies in [0, 1]
    and the similarity does too (SimBA footnote 6: ``1 - DISTANCE`` for bounded
    distances). Equals ``1 - scipy.spatial.distance.jensenshannon(u, v, base=2)``
    on the shared rows. NaN when a column sums to zero on the shared rows. See
    :func:`_jensen_shannon` for the computation (float32 terms beyond
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
    J = _jensen_shannon(X, M)
    diag = np.diag(J).copy()
    np.fill_diagonal(J, np.where(np.isnan(diag), np.nan, 1.0))
    return J


def _jensen_shannon(X: np.ndarray, M: np.ndarray) -> np.ndarray:
    """JS similarity of every column pair through the entropy form, one ``log`` per pair and row.

    With ``a, b`` the two columns on the shared rows, ``A, B`` their sums and
    ``u = a + (A / B) b``, the mixture term is
    ``sum (a/A + b/B) log(a/A + b/B) = (1/A) sum u log u - 2 log A``; each
    column's own entropy on the shared rows is ``E_ij / A_ij - log A_ij`` with
    ``E = (x log x).T @ M``. The only elementwise work is ``sum u log u`` over
    all rows of the zero-filled matrix (tiles of the upper triangle); rows that
    only one column observes add ``a log a`` or ``(rho b) log(rho b)``, which
    masked products remove exactly. On complete data ``A = B = 1`` after
    normalising, and no correction is needed.
    """
    n, q = X.shape
    complete = bool(M.all())
    X0 = np.where(M, X, 0.0)
    tot = X0.sum(axis=0)
    P = X0 / np.where(tot > 0, tot, 1.0)  # global normalisation keeps float32 terms in range
    L = P * np.log(np.where(P > 0, P, 1.0))
    if complete:
        A = np.broadcast_to(np.where(tot > 0, 1.0, 0.0)[:, None], (q, q))
        E = np.broadcast_to(L.sum(axis=0)[:, None], (q, q))
    else:
        m = M.astype(float)
        A = P.T @ m  # A[i, j]: sum of column i over the rows j observes
        E = L.T @ m
    ok = (A > 0) & (A.T > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where(ok, A / np.where(ok, A.T, 1.0), 1.0)
    T = np.ascontiguousarray(P.T)
    if n * q * (q - 1) / 2 > K._FLOAT32_TERMS:
        T = T.astype(np.float32)
    # Offsetting by the smallest normal number makes 0 log 0 a normal ~1e-36 (float32) instead of NaN,
    # without a maximum() pass per tile; values above ~1e-30 are unchanged.
    T = T + np.finfo(T.dtype).tiny
    rho_t = rho.astype(T.dtype)

    def term(a, b, s, out, I, J):
        if complete:
            np.add(a, b, out=s)
        else:
            np.add(a, np.multiply(b, rho_t[I, J, None], out=s), out=s)
        return np.multiply(s, np.log(s, out=out), out=out)

    with np.errstate(invalid="ignore", divide="ignore"):
        U = _upper_pair_sums(T, term)  # sum u log u over all rows, upper triangle (rho of (i, j), i < j)
        if not complete:
            mc = (~M).astype(float)
            Eo = L.T @ mc  # sum of p log p of column i over the rows j misses
            Ao = P.T @ mc
            iu = np.triu_indices(q, 1)
            r = rho[iu]
            U[iu] -= Eo[iu] + r * (Eo.T[iu] + np.log(r) * Ao.T[iu])
            U[iu[::-1]] = U[iu]
        Aij = np.where(ok, A, 1.0)
        # Upper triangle uses A = A[i, j]; the lower one is its mirror, so take A from the upper side.
        Au = np.triu(Aij, 1) + np.triu(Aij, 1).T + np.diag(np.diag(Aij))
        mix = U / Au - 2.0 * np.log(Au)
        own = E / Aij - np.log(Aij)
        js = (np.log(2.0) + 0.5 * (own + own.T - mix)) / np.log(2.0)
    return np.where(ok, 1.0 - np.sqrt(np.clip(js, 0.0, 1.0)), np.nan)
