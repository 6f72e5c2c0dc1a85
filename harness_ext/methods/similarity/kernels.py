"""Vectorised kernels of the correlation-type similarities (Pearson, cosine) and the helpers the kernels share.

The measures themselves and their conventions (pairwise-complete rows, NaN for
undefined entries, unit diagonal) live in :mod:`harness_ext.methods.similarity.measures`
(registered by :mod:`harness_ext.plugins.similarity`); the distance kernels in
:mod:`harness_ext.methods.similarity.distances`, Spearman's in
:mod:`harness_ext.methods.similarity.spearman`, Kendall's in
:mod:`harness_ext.methods.similarity.kendall`, the thread helpers in
:mod:`harness_ext.methods.similarity.threads`. This module holds the shared
helpers (input checks, symmetrising, the per-column sorted order with tie
groups) and the Pearson and cosine kernels.

Pairwise-complete statistics are masked matrix products (BLAS). The rank
measures never re-rank a column per partner: each column is sorted once
(:class:`_SortedColumns`), and the rank of a value among the rows a pair shares
is a running count of the partner's observed-row mask in that sorted order (one
int32 ``cumsum`` per column and tile of partners, ties averaged through the tie
groups), see :func:`harness_ext.methods.similarity.spearman._shared_ranks`.

References
----------
SimBA (Subramani, Gomez, Diab), Appendix A, eqs. 9-12.
"""

from __future__ import annotations

import functools

import numpy as np

from harness_ext.base import check_matrix
from harness_ext.errors import MethodError
from harness_ext.methods.similarity.threads import (  # noqa: F401  (tests and the distance kernels use them here)
    _blas_libraries,
    _cores,
    _each_task,
    _idle_core,
    _OneBlasThread,
    _outer_blas_threads,
    _pooled,
    _syrk_thread_invariant,
)

_EPS = np.finfo(float).eps
# Broadcast intermediates are materialised per chunk; this caps one at ~32 MB of float64.
_CHUNK_ELEMENTS = 4_000_000
# Above this many elementwise terms (n q (q - 1) / 2: 1,000 x 100 columns), Minkowski and Jensen-Shannon
# work in float32 (float32 log is 2-6x faster; tests/test_similarity.py holds the result to 1e-5).
_FLOAT32_TERMS = 5_000_000


def _prepare(X) -> tuple:
    """``X`` as a float matrix (checked as :func:`check_matrix` does) and its observed-cell mask."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or not X.size:
        X = check_matrix(X, min_rows=1, min_cols=1)  # raises
    finite = np.isfinite(X, out=_pooled(X.shape, bool))
    if finite.all():  # complete: the finite mask is the observed one
        return X, finite
    M = np.isnan(X, out=_pooled(X.shape, bool))
    np.logical_not(M, out=M)
    if not np.array_equal(finite, M):  # an infinite cell: check_matrix names it
        check_matrix(X, min_rows=1, min_cols=1)
    return X, M


def _zero_filled(X: np.ndarray, M: np.ndarray, out=None) -> np.ndarray:
    """A copy of ``X`` with its missing cells (``~M``) set to zero (-0.0), in two fast passes: ``fmax`` replaces
    NaN by the most negative float, and the mask (bool, or 0/1 floats: faster to multiply by) multiplies it to
    zero. ``np.where(M, X, 0.0)`` is 3-4 times slower (0.1 ms against 0.03 at 838 x 57). The most negative float
    is given as a row that broadcasts, not as a scalar: numpy's fmax runs its vectorised loop only on array
    operands and takes a scalar at about a third of the speed (838 x 57: 23 against 10 us). ``out``: where to
    write it (default a new array; ``X`` itself works)."""
    Z = np.fmax(X, np.full(X.shape[-1], -np.finfo(float).max), out=out)
    Z *= M
    return Z


def _symmetrise(C: np.ndarray) -> np.ndarray:
    # Matrix products for (i, j) and (j, i) may round differently; average them so
    # C is exactly symmetric (NaN stays NaN on both sides).
    return 0.5 * (C + C.T)


def _min_periods_mask(M: np.ndarray, min_periods: int):
    """Pairs sharing fewer than ``min_periods`` rows (``None`` when no pair can: nothing to mask)."""
    if min_periods <= 1:
        return None
    m = M.astype(np.float32)
    return (m.T @ m) < min_periods  # counts are exact in float32 below 2**24 rows


def _column_ranks(X: np.ndarray, dense: bool = False) -> np.ndarray:
    """Ranks (1-based) within each column, average ranks for ties (``dense``: 1, 2, ... per distinct value).

    As ``scipy.stats.rankdata(X, axis=0, method=..., nan_policy="omit")`` (NaN stays NaN), but one
    contiguous argsort per column, and the average ranks are ``position + 1`` except on tied cells, which
    alone are visited (:func:`_tie_groups`): ties are usually few, so this is a few passes over the matrix
    where rankdata makes a dozen. The order within a tie group does not matter (all its cells get one rank),
    so the sort need not be stable.
    """
    T = np.ascontiguousarray(X.T)
    q, n = T.shape
    order = np.argsort(T, axis=1)  # NaN last
    v = np.take_along_axis(T, order, axis=1)
    if dense:
        start = np.ones((q, n), dtype=bool)
        start[:, 1:] = v[:, 1:] != v[:, :-1]
        r = np.cumsum(start, axis=1, dtype=np.float64)
    else:
        r = np.empty((q, n))
        r[:] = np.arange(1.0, n + 1.0)
        cells, first, last = _tie_groups(v)
        r.ravel()[cells] = 0.5 * (first + last) + 1.0
    r[np.isnan(v)] = np.nan
    R = np.empty((q, n))
    np.put_along_axis(R, order, r, axis=1)
    return R.T


def _tie_groups(v: np.ndarray) -> tuple:
    """Tied cells of the sorted rows of ``v`` (``(q, n)``): their flat indices, and the first and last position
    (within the row) of their tie group. NaN is never tied."""
    q, n = v.shape
    link = np.zeros((q, n), dtype=bool)  # link[i, k]: v[i, k] equals v[i, k + 1]
    link[:, :-1] = v[:, 1:] == v[:, :-1]
    a = np.flatnonzero(link)  # never the last cell of a row, so a run of links stays in its row
    if not a.size:
        return a, a, a
    new = np.ones(a.size, dtype=bool)
    new[1:] = a[1:] != a[:-1] + 1
    lo, hi = a[new], a[np.r_[new[1:], True]] + 1  # each run of links joins cells lo..hi
    size = hi - lo + 1
    cells = np.repeat(lo, size) + (np.arange(size.sum()) - np.repeat(np.cumsum(size) - size, size))
    return cells, np.repeat(lo % n, size).astype(np.float64), np.repeat(hi % n, size).astype(np.float64)


#: Matrices with at least this many cells run the per-column loops of Spearman and Wasserstein on two
#: threads: numpy releases the GIL in the elementwise passes, and each column writes its own rows of the
#: result, so the answer does not depend on the schedule.
_THREAD_CELLS = 2_000_000


def _each_column(q: int, fn, cells: int) -> None:
    """``fn(i)`` for every column ``i``, on two threads for large matrices (``cells >= _THREAD_CELLS``)."""
    _each_task(q, fn, cells >= _THREAD_CELLS)


# --------------------------------------------------------------------------- Pearson


def cross_pearson(X, Y=None) -> np.ndarray:
    """Pearson correlation between every column of ``X`` and every column of ``Y``.

    Pairwise-complete: the pair ``(i, j)`` uses the rows where both ``X[:, i]``
    and ``Y[:, j]`` are observed. Computed with masked matrix products on
    column-centred data (centring first keeps the one-pass sums from
    cancelling): four products when ``Y`` is ``X`` (counts, sums, sums of
    squares, cross products), six otherwise.

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
    Mx = ~np.isnan(X)
    if sym and Mx.all():
        return _complete_pearson(X)
    My = Mx if sym else ~np.isnan(Y)
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
        elif sym:
            # (i, j) and (j, i) sums are transposes of each other: counts, sums, sums of squares in two products.
            m = Mx.astype(float)
            n = m.T @ m
            both = np.concatenate([Xc, Xc * Xc], axis=1).T @ m
            q = X.shape[1]
            sx, sxx = both[:q], both[q:]
            sy, syy = sx.T, sxx.T
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


#: A column whose raw sum of squares is at most this many times its centred one (``1 + n mu^2 / ss``: mean
#: small against the spread) takes its complete-data Pearson products from the uncentred Gram matrix; the
#: others are centred exactly (:func:`_complete_pearson`). The uncentred route loses about
#: ``log10(_ONE_PASS_RATIO) / 2`` digits per column of the pair: 1.5 at 1,024, so ~1e-13 where centring gives ~1e-15.
_ONE_PASS_RATIO = 1024.0


def _complete_pearson(X: np.ndarray, sums=None) -> np.ndarray:
    """Correlation matrix of the columns of a complete ``X`` with one symmetric product, as ``np.corrcoef``.

    ``np.corrcoef`` copies ``X``, centres the copy and multiplies it by
    itself. Here the product is of ``X`` itself (no copy), centred afterwards
    by the rank-one term ``n mu mu^T``. Subtracting after the product cancels
    digits when a column's mean is large against its spread; that loss is
    bounded per column by its raw-to-centred ratio of sums of squares, so a
    column whose ratio exceeds ``_ONE_PASS_RATIO`` (near-constant or far from
    zero) gets its row and column of products again from its centred values
    (``Xc_b^T (X - mu)``, exact centring on its side, the partner's
    cancellation bounded by the partner's ratio), and when over half the
    columns do, the whole product is made from the centred copy as
    ``np.corrcoef`` does. Which columns take which route depends on the data
    alone. ``sums``: the column sums, when the caller has them.

    One product on BLAS's own threads (:func:`_syrk`), not split in row
    halves as :func:`_gram` does: in a process that has just run another BLAS
    product (the benchmark's reference, any earlier step), OpenBLAS's idle
    threads keep spinning for a while and steal the core from a second Python
    thread, while BLAS's own spinning threads take the work at once.

    A column is constant when its centred sum of squares is below ``16 n eps``
    times its raw sum of squares (rounding noise): NaN row and column.
    """
    n, q = X.shape
    mu = (np.ones(n) @ X if sums is None else sums) / n
    C = _syrk(X)
    raw = np.diag(C).copy()
    a = np.sqrt(float(n)) * mu
    C -= np.outer(a, a)  # a_i a_j == a_j a_i: C stays exactly symmetric
    d = raw - a * a  # its diagonal, bit for bit
    bad = ~(d * _ONE_PASS_RATIO >= raw)  # NaN-safe: a column the test cannot vouch for is centred
    if bad.any():
        b = np.flatnonzero(bad)
        if 2 * b.size > q:
            C = _syrk(X - mu)
        else:
            Xb = X[:, b] - mu[b]
            Cb = Xb.T @ X
            Cb -= np.outer(Xb.sum(axis=0), mu)  # = Xb^T (X - mu): the sum of Xb is rounding noise
            Cb[:, b] = Xb.T @ Xb
            C[b, :] = Cb
            C[:, b] = Cb.T
        d = np.diag(C).copy()
    ok = (n >= 2) & (d > 16.0 * _EPS * n * raw)
    s = 1.0 / np.sqrt(np.where(ok, d, 1.0))
    C *= np.outer(s, s)  # s_i s_j == s_j s_i, so C stays exactly symmetric
    return _unit_gram(C, ok)


def _syrk(A: np.ndarray, out=None) -> np.ndarray:
    """``A.T @ A``, one symmetric rank-k update (numpy calls syrk for a matrix times its own transpose), on
    BLAS's own threads when a core is idle (:func:`_idle_core`), even inside a one-thread section (matrices
    under ``similarity._ONE_THREAD_CELLS``); else on the threads the caller set.

    OpenBLAS sums each entry of a symmetric update in the same order on one thread or two (bit-identical at
    every shape tried; tests/test_similarity_libs.py checks it for the BLAS in use), so the thread count may
    follow the load without changing the answer. Matrix-vector and general products do not have that
    property (their sums split differently on two threads at some shapes, e.g. ``ones @ X`` at 10,000 x 57),
    so they stay on one thread. At 1,000 x 200 the update takes about 1.0 ms on one thread and 0.7 ms on two,
    as ``np.corrcoef``'s (on two threads). ``out``: where to write it (default a new array).
    """
    if _OneBlasThread.outer is None or not _idle_core() or not _syrk_thread_invariant():
        return np.matmul(A.T, A, out=out)
    with _outer_blas_threads():
        return np.matmul(A.T, A, out=out)


#: Multiply-adds (``n q^2``) from which :func:`_gram` computes the product in two row halves (1,000 x 200 has 4e7,
#: 838 x 57 has 2.7e6), on two threads when a core is idle (:func:`_idle_core`) ...
_GRAM_SPLIT_FLOPS = 20_000_000
#: ... and regardless from this many (about 30 ms on one core).
_GRAM_THREAD_FLOPS = 1e9


def _gram(A: np.ndarray) -> np.ndarray:
    """``A.T @ A``, exactly symmetric, on two threads of one BLAS thread each when large.

    numpy runs ``A.T @ A`` (C- or Fortran-ordered ``A``) as one symmetric
    rank-k update: half the work of a general product, and the result is
    exactly symmetric. From ``_GRAM_SPLIT_FLOPS`` the rows are halved: each
    half is one symmetric update (the same work as one update of all rows,
    measured at 1,000 x 200; halving the columns instead costs 13% more), the
    two are added, and :func:`_each_task` runs them with BLAS on one thread,
    on two threads when a core is idle or the product is large
    (``_GRAM_THREAD_FLOPS``). BLAS's own two threads synchronise inside the
    product, so a thread that the shared machine stalls holds up the other;
    these two tasks are independent calls, and the caller runs both itself
    when the worker is not scheduled. The halves depend on the shape alone,
    so the result does not depend on the schedule.
    """
    n = A.shape[0]
    flops = n * float(A.shape[1]) ** 2
    if flops < _GRAM_SPLIT_FLOPS or n < 2:
        return A.T @ A
    h = n // 2
    halves = [None, None]

    def task(t: int) -> None:
        P = A[:h] if t == 0 else A[h:]
        halves[t] = P.T @ P

    with _OneBlasThread():
        _each_task(2, task, flops >= _GRAM_THREAD_FLOPS or _idle_core())
    return np.add(halves[0], halves[1], out=halves[0])


def _unit_gram(C: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """A Gram matrix of unit-scaled columns as a similarity: clipped to [-1, 1], NaN rows and columns where
    ``ok`` is False (undefined), 1 on the diagonal where defined. ``C`` must be exactly symmetric already
    (from ``A.T @ A``, scaled by an outer product), as both callers' are: it is not averaged with its transpose."""
    np.clip(C, -1.0, 1.0, out=C)
    if not ok.all():
        C[~ok, :] = np.nan
        C[:, ~ok] = np.nan
    np.fill_diagonal(C, np.where(ok, 1.0, np.nan))
    return C


# --------------------------------------------------------------------------- sorted columns (rank measures)


class _SortedColumns:
    """Each column sorted once, stored column by column as rows of ``(q, n)`` arrays.

    Row ``i`` of ``order`` sorts column ``i`` ascending with its missing rows
    last (ties in any order); ``values`` are the sorted values, ``count[i]`` the number
    observed, ``inverse[i, k]`` the sorted position of row ``k`` (built on first
    use, as ``tied``), ``mask`` the
    observed-cell mask (row ``i`` for column ``i``). Transposed because the
    running counts of the rank kernels run along the contiguous axis, where
    numpy's int32 ``cumsum`` is about 5x faster than down a column.
    ``groups(i)`` gives, for each sorted position of a column with ties, the
    first and last position of its tie group; ``tie_index`` the same as
    gather and scatter indices.
    """

    def __init__(self, X: np.ndarray, M: np.ndarray):
        n, q = X.shape
        T = np.ascontiguousarray(X.T)
        self.order = np.argsort(T, axis=1)  # NaN sorts last; the order within a tie group does not matter
        self.values = np.take_along_axis(T, self.order, axis=1)
        self.count = M.sum(axis=0)
        self.mask = np.ascontiguousarray(M.T)
        self._groups = {}
        self._ties = {}

    @functools.cached_property
    def inverse(self) -> np.ndarray:
        # Spearman only (Wasserstein reads the sorted columns in sorted order alone).
        q, n = self.order.shape
        inverse = np.empty_like(self.order)
        np.put_along_axis(inverse, self.order, np.broadcast_to(np.arange(n), (q, n)), axis=1)
        return inverse

    @functools.cached_property
    def tied(self) -> np.ndarray:
        # NaN never equals NaN, so missing cells are never tied.
        return (self.values[:, 1:] == self.values[:, :-1]).any(axis=1)

    def groups(self, i: int) -> tuple:
        """Tied cells of column ``i``: their sorted positions and the first and last position of their group."""
        if i not in self._groups:
            v = self.values[i]
            n = v.size
            idx = np.arange(n)
            start = np.ones(n, dtype=bool)
            start[1:] = v[1:] != v[:-1]
            end = np.ones(n, dtype=bool)
            end[:-1] = start[1:]
            first = np.maximum.accumulate(np.where(start, idx, 0))
            last = np.minimum.accumulate(np.where(end, idx, n)[::-1])[::-1]
            pos = np.flatnonzero(first != last)
            self._groups[i] = (pos, first[pos], last[pos])
        return self._groups[i]

    def tie_index(self, i: int, b: int) -> tuple:
        """Gather and scatter indices of column ``i``'s tied cells for :func:`~harness_ext.methods.similarity.spearman._shared_ranks` (``b`` rows of
        partners): ``(t, at_c, at_keep, flat)``, ``t`` tied cells, ``at_c`` their groups' first and last sorted
        positions and their own (``3t``), ``at_keep`` the first positions and their own (``2t``), ``flat`` their
        positions in a C-ordered ``(b, n)`` buffer, row by row."""
        key = (i, b)
        if key not in self._ties:
            pos, first, last = self.groups(i)
            n = self.values.shape[1]
            flat = (np.arange(b)[:, None] * n + pos).ravel()
            self._ties[key] = (pos.size, np.concatenate([first, last, pos]), np.concatenate([first, pos]), flat)
        return self._ties[key]


# --------------------------------------------------------------------------- cosine


def cosine_similarity(X) -> np.ndarray:
    """Cosine of the angle between columns, over the rows both observe.

    Complete data: columns scaled to unit norm, one product (as sklearn's
    ``cosine_similarity``). With missing cells: two masked products, the
    cross products and each column's squared norm on the rows its partner
    observes. NaN when either column is all zero on the shared rows
    (no direction).

    The reference a user could call on data with missing cells is sklearn's
    ``cosine_similarity`` of the zero-filled matrix: the cross products alone,
    ``n q^2`` multiply-adds as one symmetric update. The per-pair norms are
    a general product of the squared values with the mask (``2 n q^2``), which
    no rearrangement avoids (``sq[i, j]`` and ``sq[j, i]`` differ, and a
    symmetric update yields only symmetric sums such as ``sq + sq.T``): the
    pairwise-complete cosine costs about three times the zero-filled one in
    BLAS work. With a core idle the two share it between two threads
    (:func:`_masked_cosine`).

    References
    ----------
    SimBA, Appendix A, eq. 12.
    """
    X, M = _prepare(X)
    if M.all():
        norm = np.sqrt(np.einsum("ij,ij->j", X, X))
        ok = norm > 0
        Xn = X / np.where(ok, norm, 1.0)
        return _unit_gram(_gram(Xn), ok)
    return _masked_cosine(X, M)


#: Multiply-adds of masked cosine's general product (``n q^2``) from which it shares the work with a second
#: thread (1,000 x 200 has 4e7; 838 x 57 has 2.7e6, about 0.15 ms of products: not worth a hand-off).
_COSINE_SPLIT_FLOPS = 10_000_000


def _masked_cosine(X: np.ndarray, M: np.ndarray) -> np.ndarray:
    """Pairwise-complete cosine of a matrix with missing cells (``M``: the observed cells, not all).

    Two products: the cross products (one symmetric update of the zero-filled matrix ``X0``) and ``sq[i, j]``,
    the squared norm of column ``i`` over the rows where ``j`` is observed (the general product
    ``(X0**2).T @ M``, about 1.6 times the update's time on one thread). From ``_COSINE_SPLIT_FLOPS`` the
    general product is cut in two column blocks, four fifths and one fifth of the columns, and
    :func:`_each_task` runs the large block and then the update and the small block, with BLAS on one thread:
    with a core idle one thread takes the large block while the other takes the rest, and both finish
    together (1,000 x 200: 1.05 ms and 0.83 + 0.29 ms against 2.2 ms on one thread; the two blocks together
    cost what the whole product does). On two threads when a core is idle or the products are large
    (``_GRAM_THREAD_FLOPS``), else one after the other in the calling thread, squaring ``X0`` in place once
    the update is done (on a busy machine: one large temporary fewer). Each task writes its own columns and
    the blocks depend on the shape alone, so the answer does not depend on the schedule.

    References
    ----------
    SimBA, Appendix A, eq. 12.
    """
    n, q = X.shape
    Mf = _pooled(X.shape)
    np.copyto(Mf, M)
    X0 = _zero_filled(X, Mf, out=_pooled(X.shape))  # multiplied by the float mask: faster than by the bool one
    C = _pooled((q, q))
    sq = _pooled((q, q))
    flops = n * float(q) * q
    if flops < _COSINE_SPLIT_FLOPS:
        _syrk(X0, out=C)
        np.matmul(np.multiply(X0, X0, out=X0).T, Mf, out=sq)
    else:
        blocks = (slice(0, q * 4 // 5), slice(q * 4 // 5, q))
        with _OneBlasThread():
            if _cores() >= 2 and (flops >= _GRAM_THREAD_FLOPS or _idle_core()):
                # The squares in their own array: the update may still be reading X0.
                X2 = np.multiply(X0, X0, out=_pooled(X.shape))

                def task(t: int) -> None:
                    if t == 1:
                        np.matmul(X0.T, X0, out=C)
                    np.matmul(X2.T, Mf[:, blocks[t]], out=sq[:, blocks[t]])

                _each_task(2, task, True)
            else:
                # The same products one after the other (the same values), the squares in place: one array fewer.
                np.matmul(X0.T, X0, out=C)
                X2 = np.multiply(X0, X0, out=X0)
                for J in blocks:
                    np.matmul(X2.T, Mf[:, J], out=sq[:, J])
    prod = np.multiply(sq, sq.T, out=_pooled((q, q)))  # exactly symmetric, as C: so is their quotient
    ok = prod > 0
    np.sqrt(prod, out=prod)
    with np.errstate(invalid="ignore", divide="ignore"):
        np.divide(C, prod, out=C)
    np.clip(C, -1.0, 1.0, out=C)
    np.copyto(C, np.nan, where=~ok)
    np.fill_diagonal(C, np.where(np.diag(ok), 1.0, np.nan))
    return C
