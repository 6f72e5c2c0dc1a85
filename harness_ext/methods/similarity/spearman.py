"""The masked Spearman kernel: each column sorted once, ranks on every pair's shared rows as running counts.

:func:`spearman_similarity` ranks complete data once (one centred product of ranks,
:func:`~harness_ext.methods.similarity.kernels._complete_pearson`); with missing cells, each pair is ranked on the
rows it shares without re-sorting (:func:`_spearman_masked`): the rank of a value among those rows is a running
count of the partner's observed-row mask in the column's sorted order
(:class:`~harness_ext.methods.similarity.kernels._SortedColumns`; one int32 ``cumsum`` per column and tile of
partners, ties averaged through the tie groups), see :func:`_shared_ranks`. The shared helpers and the other
correlation kernels are in :mod:`harness_ext.methods.similarity.kernels`; the measure is registered by
:mod:`harness_ext.methods.similarity.measures`.

References
----------
SimBA (Subramani, Gomez, Diab), Appendix A, eq. 10.
"""

from __future__ import annotations

import numpy as np

from harness_ext.methods.similarity.kernels import (
    _column_ranks,
    _complete_pearson,
    _each_column,
    _prepare,
    _SortedColumns,
    _symmetrise,
)

#: Elements of one tile's ``(b, b, n)`` rank arrays in the masked Spearman kernel (8 MB of float32).
_TILE_PAIR_ROWS = 2_000_000


def _tile_width(q: int, n: int) -> int:
    """Columns per block so that one tile's ``(b, b, n)`` arrays hold about ``_TILE_PAIR_ROWS`` elements (equal
    blocks)."""
    b = max(1, min(q, int(np.sqrt(_TILE_PAIR_ROWS / max(1, n)))))
    return -(-q // -(-q // b))


def _each_tile(q: int, n: int, b: int, tile) -> None:
    """``tile(I, J)`` for every pair of blocks ``I <= J`` of ``b`` columns (two threads for large matrices)."""
    grid = [slice(k, min(q, k + b)) for k in range(0, q, b)]
    pairs = [(I, J) for a, I in enumerate(grid) for J in grid[a:]]
    _each_column(len(pairs), lambda k: tile(*pairs[k]), n * q)


def _shared_ranks(sc: _SortedColumns, i: int, J: slice, mask32: np.ndarray, out: np.ndarray, zero: bool, bufs):
    """Average rank of column ``i`` among the rows it shares with each column of ``J``, in row order.

    Written to ``out`` (``(b, n)`` float32: ranks are exact half-integers
    below 2**23 rows). In ``i``'s sorted order the rank of a value among the
    rows partner ``j`` also observes is the running count ``c`` of ``j``'s
    mask (int32, along the contiguous axis); a value in a tie group instead
    gets ``(c[first] - keep[first] + c[last] + 1) / 2``, written over the
    tied cells only. With ``zero``, rows not shared are 0; otherwise they
    hold junk (the caller multiplies by a side that is 0 there). ``bufs`` are
    two int32 and one float32 ``(b, n)`` scratch arrays (no allocation per
    call: fresh large arrays cost a page fault per 4 kB).

    Returns ``(m, sq)``: shared rows per partner and the ranks' sum of
    squares on them (``m (m + 1) (2m + 1) / 6`` without ties, corrected on
    the tied cells), float64.
    """
    b = J.stop - J.start
    ni = int(sc.count[i])
    cf = bufs[2][:b]
    if ni == 0:
        out[:] = 0.0
        return np.zeros(b), np.zeros(b)
    # Only column i's observed rows (sorted first): its missing rows share nothing, and their ranks stay 0.
    keep, c = (buf.ravel()[: b * ni].reshape(b, ni) for buf in bufs[:2])
    np.take(mask32[J], sc.order[i, :ni], axis=1, out=keep, mode="clip")
    np.cumsum(keep, axis=1, dtype=np.int32, out=c)
    m = c[:, -1].astype(np.float64)
    sq = m * (m + 1.0) * (2.0 * m + 1.0) / 6.0
    if zero:
        np.multiply(c, keep, out=cf[:, :ni])
    else:
        np.copyto(cf[:, :ni], c, casting="same_kind")
    cf[:, ni:] = 0.0
    if sc.tied[i]:
        # A few small arrays per call: one gather of the running counts and one of the mask (np.take, several
        # times faster than fancy indexing) instead of one per quantity; float64 from there on.
        t, at_c, at_keep, flat = sc.tie_index(i, len(bufs[2]))
        g = np.take(c, at_c, axis=1).astype(np.float64)
        k = np.take(keep, at_keep, axis=1)
        # Average rank in the group on the shared rows: (shared before the group + 1 + shared up to its end) / 2.
        tied = g[:, :t] - k[:, :t]
        tied += g[:, t : 2 * t]
        tied += 1.0
        tied *= 0.5
        tied *= k[:, t:]
        untied = g[:, 2 * t :]
        untied *= k[:, t:]
        sq += np.einsum("jk,jk->j", tied, tied) - np.einsum("jk,jk->j", untied, untied)
        # Written in sorted order, before the ranks are put back in row order.
        np.put(cf, flat[: b * t], tied)
    np.take(cf, sc.inverse[i], axis=1, out=out, mode="clip")
    return m, sq


def _spearman_masked(X: np.ndarray, M: np.ndarray, min_periods: int = 1) -> np.ndarray:
    """Spearman's rho over pairwise-complete rows, each pair ranked on its shared rows, without re-sorting.

    Each column is sorted once (:class:`_SortedColumns`). For a tile of
    column pairs ``I x J``, the ranks of every ``i`` in ``I`` among the rows
    it shares with every ``j`` in ``J`` are running counts of ``j``'s mask in
    ``i``'s sorted order (:func:`_shared_ranks`), put back in row order;
    likewise for ``J`` against ``I``. The cross sum of each pair is then one
    multiply-add over rows (float64), and Spearman is the Pearson correlation
    of the two rank vectors with mean rank ``(m + 1) / 2``. Cost: every
    ordered pair's ranks once, ``O(n q^2)`` elementwise work, in tiles on two
    threads for large matrices (no ``O(n log n)`` sort per pair as
    ``pandas.DataFrame.corr`` does). All sums are of half-integers, exact in
    float64, so a column constant on the shared rows has exactly zero
    variance.

    References
    ----------
    SimBA, Appendix A, eq. 10. Average ranks as ``scipy.stats.rankdata``.
    """
    import threading

    n, q = X.shape
    sc = _SortedColumns(X, M)
    sc.inverse, sc.tied  # built here, before the worker threads read them
    mask32 = sc.mask.astype(np.int32)
    cross = np.zeros((q, q))
    sq = np.zeros((q, q))  # sq[i, j]: sum of squares of i's ranks on the rows shared with j
    cnt = np.zeros((q, q))
    b = _tile_width(q, n)
    local = threading.local()  # scratch per thread

    def side(A: slice, B: slice, zero: bool, R: np.ndarray) -> np.ndarray:
        R = R[: A.stop - A.start, : B.stop - B.start]
        for a, i in enumerate(range(A.start, A.stop)):
            cnt[i, B], sq[i, B] = _shared_ranks(sc, i, B, mask32, R[a], zero, local.bufs)
        return R

    def tile(I: slice, J: slice) -> None:
        if not hasattr(local, "bufs"):
            local.bufs = (np.empty((b, n), np.int32), np.empty((b, n), np.int32), np.empty((b, n), np.float32))
            local.tiles = np.empty((2, b, b, n), np.float32)
        P = side(I, J, True, local.tiles[0])  # 0 off the shared rows, so Q's values there do not matter
        Q = P if I == J else side(J, I, False, local.tiles[1])
        C = np.einsum("ijk,jik->ij", P, Q, dtype=np.float64)
        cross[I, J] = C
        cross[J, I] = C.T

    _each_tile(q, n, b, tile)
    mean_sq = cnt * ((cnt + 1.0) / 2.0) ** 2  # m times the squared mean rank
    vx, vy = sq - mean_sq, sq.T - mean_sq
    ok = (cnt >= max(2, min_periods)) & (vx > 0) & (vy > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (cross - mean_sq) / np.sqrt(np.where(ok, vx * vy, 1.0))
    r = np.where(ok, np.clip(r, -1.0, 1.0), np.nan)
    np.fill_diagonal(r, np.where(np.diag(ok), 1.0, np.nan))
    return _symmetrise(r)


def spearman_similarity(X, min_periods: int = 1) -> np.ndarray:
    """Spearman's rho between columns: Pearson of average-tie ranks (pairwise-complete).

    Ranks are taken within the rows shared by the pair, as
    ``pandas.DataFrame.corr(method="spearman")`` and ``scipy.stats.spearmanr``
    on the pairwise-complete rows do. Complete data are ranked once (one
    centred product of ranks); with missing cells see :func:`_spearman_masked`
    (each column sorted once, no re-ranking per partner). Parameters and result as
    :func:`~harness_ext.methods.similarity.measures.pearson_similarity`'s: ``X`` (n, p), pairs sharing fewer
    than ``min_periods`` rows NaN, a (p, p) matrix.

    References
    ----------
    SimBA, Appendix A, eq. 10 (ties: average ranks, as scipy).
    """
    X, M = _prepare(X)
    if M.all():
        C = _complete_pearson(_column_ranks(X))
        if min_periods > X.shape[0]:
            C[:] = np.nan
        return C
    return _spearman_masked(X, M, min_periods)
