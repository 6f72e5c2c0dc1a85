"""Similarity of column performance vectors (cosine, Jaccard, Hamming) and the order statistics the permutation test summarises them by (Ailem et al. §3.1-3.2)."""

from __future__ import annotations

import functools

from typing import Sequence

import numpy as np

from ...errors import MethodError
from .common import BINARY_MEASURES, SIMILARITY_MEASURES, ZERO_NORM


def column_similarities(Q, measures: Sequence[str]) -> dict:
    """Similarity matrices between the rows of ``Q`` for several measures at once.

    Parameters
    ----------
    Q : array (n_items, n_models), complete
        The paper's orientation (prompts x models), i.e. ``X.T``.
    measures : sequence of {"cosine", "jaccard", "hamming"}
        ``jaccard`` and ``hamming`` need 0/1 data.

    Returns
    -------
    dict
        ``measure -> (n_items, n_items)`` array.

    Notes
    -----
    Closed forms through matrix products (Jaccard and Hamming share one), so a
    permutation test can compute a thousand of these. Conventions: cosine with
    an all-zero vector is 0; Jaccard of two all-zero vectors is 1 (they are
    identical); Hamming similarity is the fraction of models on which two items
    agree, ``(m - c_i - c_j + 2 <q_i, q_j>) / m`` for counts ``c``.

    References
    ----------
    Ailem et al. §3.1 (cosine, Jaccard and Hamming similarity of performance vectors).
    """
    Q = np.asarray(Q, dtype=float)
    out = {}
    unknown = [mm for mm in measures if mm not in SIMILARITY_MEASURES]
    if unknown:
        raise MethodError(f"unknown similarity {unknown[0]!r}; choose from {SIMILARITY_MEASURES}")
    if "cosine" in measures:
        norms = np.linalg.norm(Q, axis=1)
        U = Q / np.where(norms > ZERO_NORM, norms, np.inf)[:, None]
        out["cosine"] = U @ U.T
    if any(mm in BINARY_MEASURES for mm in measures):
        inter = Q @ Q.T
        cnt = Q.sum(axis=1)
        csum = cnt[:, None] + cnt[None, :]
        if "hamming" in measures:
            out["hamming"] = (Q.shape[1] - csum + 2.0 * inter) / Q.shape[1]
        if "jaccard" in measures:
            union = csum - inter
            with np.errstate(invalid="ignore", divide="ignore"):
                out["jaccard"] = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 1.0)
    return out


def column_similarity(Q, measure: str) -> np.ndarray:
    """One similarity matrix between the rows of ``Q``; see :func:`column_similarities`."""
    return column_similarities(Q, [measure])[measure]


def _pair_similarities(Q: np.ndarray, measures: Sequence[str], flat: np.ndarray, i0: np.ndarray, i1: np.ndarray) -> dict:
    """Upper-triangle values of :func:`column_similarities`, computed on the pairs only.

    Same formulas; the Gram matrix is formed once and gathered at the flat
    pair indices, and the element-wise work is done on n(n-1)/2 values instead
    of n^2 (this is the permutation test's inner loop).
    """
    out = {}
    m = Q.shape[1]
    if "cosine" in measures:
        norms = np.linalg.norm(Q, axis=1)
        U = Q / np.where(norms > ZERO_NORM, norms, np.inf)[:, None]
        out["cosine"] = np.take(U @ U.T, flat)
    if any(mm in BINARY_MEASURES for mm in measures):
        inter = np.take(Q @ Q.T, flat)
        cnt = Q.sum(axis=1)
        csum = cnt[i0] + cnt[i1]
        if "hamming" in measures:
            out["hamming"] = (m - csum + 2.0 * inter) / m
        if "jaccard" in measures:
            union = csum - inter
            with np.errstate(invalid="ignore", divide="ignore"):
                out["jaccard"] = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 1.0)
    return out


#: The exact counting path of the permutation test for 0/1 matrices is used
#: while its cosine lookup table, (m + 1) * (m^2 + 1) entries, stays below this.
MAX_CODE_TABLE = 2_000_000


def _binary_pair_codes(Q: np.ndarray, measures: Sequence[str], flat, i0, i1) -> dict:
    """For a 0/1 ``Q``: per measure, an integer code per pair and a code -> similarity table.

    With 0/1 data every measure is a function of three small integers, the
    intersection ``<q_i, q_j>`` and the counts ``c_i``, ``c_j``, so statistics
    can be computed exactly by counting codes (``np.bincount``) instead of
    partitioning n(n-1)/2 floats. Same conventions as :func:`column_similarities`.
    """
    m = Q.shape[1]
    Q32 = Q.astype(np.float32)  # sums of at most 2**24 ones are exact in float32: half the matrix product's time
    inter = np.rint(np.take(Q32 @ Q32.T, flat)).astype(np.int64)
    cnt = np.rint(Q.sum(axis=1)).astype(np.int64)
    ci, cj = cnt[i0], cnt[i1]
    out = {}
    if "hamming" in measures:
        out["hamming"] = (m - ci - cj + 2 * inter, _code_table("hamming", m))
    if "jaccard" in measures:
        out["jaccard"] = (inter * (m + 1) + (ci + cj - inter), _code_table("jaccard", m))
    if "cosine" in measures:
        out["cosine"] = (inter * (m * m + 1) + ci * cj, _code_table("cosine", m))
    return out


@functools.lru_cache(maxsize=16)
def _code_table(measure: str, m: int) -> np.ndarray:
    """The code -> similarity table of :func:`_binary_pair_codes` for ``m`` answers (the same for every
    permutation: built once). Read-only."""
    if measure == "hamming":
        table = np.arange(m + 1) / m
    elif measure == "jaccard":
        inter_t, union_t = np.divmod(np.arange((m + 1) ** 2), m + 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            table = np.where(union_t > 0, inter_t / np.where(union_t > 0, union_t, 1), 1.0)
    else:
        inter_t, prod_t = np.divmod(np.arange((m + 1) * (m * m + 1)), m * m + 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            table = np.where(prod_t > 0, inter_t / np.sqrt(np.where(prod_t > 0, prod_t, 1)), 0.0)
    table.flags.writeable = False
    return table


def _quantiles_sorted_counts(vals: np.ndarray, cnt: np.ndarray, probs) -> np.ndarray:
    """Quantiles (numpy's linear method) of a sample given as sorted distinct values and counts."""
    cum = np.cumsum(cnt)
    n = cum[-1]
    pos = np.asarray(probs) * (n - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    v_lo = vals[np.searchsorted(cum, lo, side="right")]
    v_hi = vals[np.searchsorted(cum, hi, side="right")]
    return v_lo + (pos - lo) * (v_hi - v_lo)


def _stats_from_codes(codes: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Mean, 75th and 95th percentile of ``table[codes]`` by counting codes."""
    counts = np.bincount(codes, minlength=len(table))
    used = np.flatnonzero(counts)
    vals, cnt = table[used], counts[used]
    order = np.argsort(vals, kind="stable")
    vals, cnt = vals[order], cnt[order]
    mean = float((vals * cnt).sum() / cnt.sum())
    return np.concatenate(([mean], _quantiles_sorted_counts(vals, cnt, [0.75, 0.95])))


def _stats(values: np.ndarray) -> np.ndarray:
    """Mean, 75th and 95th percentile (linear interpolation, numpy's default) with one partition."""
    n = len(values)
    pos = np.array([0.75, 0.95]) * (n - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, n - 1)
    kth = np.unique(np.concatenate([lo, hi]))
    part = np.partition(values, kth)
    q = part[lo] + (pos - lo) * (part[hi] - part[lo])
    return np.array([values.mean(), q[0], q[1]])


STAT_NAMES = ("average", "75th percentile", "95th percentile")
