"""Split-conformal calibration of adaptive intervals.

Scores are normalised residuals ``|y - yhat| / s`` where ``s`` is the
method's own per-cell predictive standard deviation (posterior sd of a
low-rank fit, a fitted error model, ...). The calibrated half-width of a new
prediction is ``q * s`` with ``q`` the conformal quantile of the held-out
scores, so intervals stay adaptive (a model with little evidence has a large
``s``) while their marginal coverage is the nominal one on exchangeable data.

References
----------
Vovk, Gammerman & Shafer, "Algorithmic Learning in a Random World" (2005);
Lei, G'Sell, Rinaldo, Tibshirani & Wasserman, "Distribution-free predictive
inference for regression", JASA 2018, §2.2 (split conformal) and §5.2
(locally weighted scores); Barber, Candes, Ramdas & Tibshirani, "Predictive
inference with the jackknife+", Ann. Statist. 2021, §3-4 (jackknife+, CV+).
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from ...base import check_level
from ...errors import MethodError

__all__ = ["conformal_quantile", "cv_plus_bounds", "mondrian_groups", "mondrian_quantiles", "normalised_scores", "coverage",
           "rank_position", "Z90"]

#: Fewest calibration scores a group needs for its own quantile in :func:`mondrian_quantiles`.
MIN_GROUP_SCORES = 20

#: Two-sided 90% standard normal quantile (the uncalibrated fallback).
Z90 = 1.6448536269514722


def _normal_quantile(level: float) -> float:
    """The two-sided normal quantile of ``level`` (1.645 at 0.9): the interval where no calibration score exists."""
    from scipy.stats import norm

    return float(norm.ppf(0.5 + level / 2))


def conformal_quantile(scores, level: float = 0.9, conservative: bool = False) -> float:
    """The split-conformal quantile: the score at rank ``level (n + 1)`` among the ``n`` sorted scores.

    A fractional rank is interpolated linearly between the two order
    statistics around it (:func:`rank_position`). The usual conservative rule
    takes the ``ceil(level (n + 1))``-th smallest, which covers with
    probability ``ceil(level (n + 1)) / (n + 1)``: up to ``1 / (n + 1)``
    above the level. Calibrated per dataset on 30-50 held-out models, that is
    up to 2-3 points of over-coverage, as much as the 88-92% promise for a
    90% interval allows by itself. The interpolated rank covers with
    probability about ``level`` on exchangeable data (exactly, when
    ``level (n + 1)`` is an integer): nominal, not a lower bound.

    With too few scores for the level (``level (n + 1) >= n``) the largest
    score is returned (the interval is then as wide as the data allow, and
    callers should say the calibration is thin).

    Parameters
    ----------
    scores : array-like
        Calibration scores; non-finite ones are ignored.
    level : float
        Nominal coverage, in (0, 1).
    conservative : bool
        Take the ``ceil(level (n + 1))``-th smallest instead (coverage at
        least ``level``): the rule of the methods reproduced as baselines.

    Raises
    ------
    MethodError
        If there are no finite scores or ``level`` is not in (0, 1).

    References
    ----------
    Lei et al. (JASA 2018), §2.2 and Theorem 2.2 (coverage of the k-th order statistic is k / (n + 1));
    Vovk et al. (2005) §2.4 (smoothed conformal predictors: exact coverage by randomising between ranks).
    """
    level = check_level(level, "conformal_quantile")
    s = np.asarray(scores, dtype=float)
    s = np.sort(s[np.isfinite(s)])
    n = s.size
    if n == 0:
        raise MethodError("no calibration scores: too few held-out cells to calibrate intervals")
    rank = level * (n + 1)
    j, f = rank_position(np.ceil(rank) if conservative else rank, n)
    return float(_between(s, int(j), float(f)))


def rank_position(rank, n):
    """0-based index and fraction of a (fractional, 1-based) rank among ``n`` sorted values.

    ``rank`` at or below 1 gives the smallest value, at or above ``n`` the
    largest; between, the value is ``v[j] + f (v[j + 1] - v[j])``. Vectorised
    over ``rank`` and ``n`` (arrays of one shape).

    Returns
    -------
    (j, f) : int and float, or numpy arrays of them
    """
    rank, n = np.asarray(rank, dtype=float), np.asarray(n)
    low = np.clip(np.floor(rank), 1, np.maximum(n, 1)).astype(int)
    f = np.where((rank > 1) & (rank < n), rank - low, 0.0)
    return low - 1, f


def _between(v, j, f: float, axis: int = 0):
    """``v``'s ``j``-th smallest along ``axis``, moved a fraction ``f`` toward the next (one partition)."""
    if f == 0.0:
        return np.take(np.partition(v, j, axis=axis), j, axis=axis)
    part = np.partition(v, [j, j + 1], axis=axis)
    a, b = np.take(part, j, axis=axis), np.take(part, j + 1, axis=axis)
    return a + f * (b - a)


def mondrian_groups(counts, min_count: int = MIN_GROUP_SCORES) -> np.ndarray:
    """The calibration group of each dataset, from its number of calibration scores.

    A dataset with at least ``min_count`` scores is its own group. Thinner
    ones are pooled with the datasets nearest to them in number of scores
    (sorted by count, cut into consecutive runs of at least ``min_count``
    scores; a short last run joins the one before), so a dataset observed on
    five models is calibrated with other thinly observed ones, not with a pool
    dominated by well-observed datasets whose normalised errors are smaller.
    If the thin datasets have fewer than ``min_count`` scores in all, they share
    the pool of every score (group ``-1``), as do datasets without any.

    Parameters
    ----------
    counts : array-like of int, (n_groups,)
        Calibration scores per dataset.
    min_count : int
        Fewest scores a group is calibrated on.

    Returns
    -------
    numpy.ndarray of int, (n_groups,)
        Group labels; ``-1``: the pool of every score.

    References
    ----------
    Vovk et al. (2005) §4.5 (Mondrian taxonomies: any partition fixed before the scores are seen, here by
    the amount of evidence); Lei et al. (JASA 2018) §5.2 (locally weighted scores).
    """
    counts = np.asarray(counts, dtype=int)
    labels = np.where(counts >= int(min_count), np.arange(counts.size), -1)
    thin = np.flatnonzero((counts > 0) & (counts < int(min_count)))
    if counts[thin].sum() < int(min_count):
        return labels
    thin = thin[np.argsort(counts[thin], kind="stable")]
    # Cut the sorted thin datasets where the running total of scores first reaches min_count.
    run = np.cumsum(counts[thin]) // int(min_count)
    ids = np.r_[0, run[:-1]]
    ids = np.minimum(ids, run[-1] - 1)  # the short last run (its total under min_count) joins the one before
    labels[thin] = counts.size + ids
    return labels


def mondrian_quantiles(scores, groups, n_groups: int, level: float = 0.9, min_count: int = MIN_GROUP_SCORES):
    """Per-dataset (Mondrian) conformal quantiles, datasets with fewer than ``min_count`` scores grouped.

    Conditioning on the dataset gives each its nominal coverage when the
    scores of different datasets are not exchangeable (one dataset's
    normalised errors systematically larger than another's), which a pooled
    quantile averages away. Datasets too thin to calibrate alone share a group
    with datasets of similar evidence (:func:`mondrian_groups`).

    Returns
    -------
    numpy.ndarray, (n_groups,)

    References
    ----------
    Vovk et al. (2005) §4.5 (Mondrian conformal predictors).
    """
    s = np.asarray(scores, dtype=float)
    g = np.asarray(groups, dtype=int)
    ok = np.isfinite(s)
    s, g = s[ok], g[ok]
    out = np.full(int(n_groups), conformal_quantile(s, level))
    labels = mondrian_groups(np.bincount(g, minlength=int(n_groups)), min_count)
    own = labels >= 0
    if not own.any():
        return out
    # Quantiles per label, vectorised: scores sorted within their group's label.
    lab = labels[g]
    keep = lab >= 0
    s, lab = s[keep], lab[keep]
    uniq, lab = np.unique(lab, return_inverse=True)
    order = np.lexsort((s, lab))
    s, lab = s[order], lab[order]
    counts = np.bincount(lab, minlength=uniq.size)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    j, f = rank_position(level * (counts + 1), counts)
    lo = starts + j
    hi = np.where(f > 0, lo + 1, lo)  # f > 0 only where the rank is below the group's count
    q = s[lo] + f * (s[hi] - s[lo])
    out[own] = q[np.searchsorted(uniq, labels[own])]
    return out


#: Largest (scores x predictions) block :func:`cv_plus_bounds` forms at once.
CV_PLUS_BLOCK = 1 << 22


def cv_plus_bounds(centres, scales, scores, folds, level: float = 0.9):
    """CV+ interval bounds from K fold fits: per test point, quantiles over the calibration scores.

    Calibration point ``i`` was held out of fold fit ``k(i)`` and has the
    normalised score ``R_i = |y_i - mu_k(i)(x_i)| / s_k(i)(x_i)``. For a test
    point with fold-fit predictions ``mu_k``, ``s_k`` the bounds are the values at
    rank ``(1 - level)(n + 1)`` of ``mu_k(i) - R_i s_k(i)`` and at rank
    ``level (n + 1)`` of ``mu_k(i) + R_i s_k(i)`` (fractional ranks interpolated,
    as :func:`conformal_quantile` says why): every score
    is applied to the prediction of the fit it was held out of, so the
    calibration and the prediction come from fits of the same size and neither
    saw the point. Too few scores for the level give the extreme ones.

    Parameters
    ----------
    centres, scales : array-like, (K, n)
        Each fold fit's prediction and predictive scale at the ``n`` test points.
    scores : array-like, (N,)
        Calibration scores (normalised residuals).
    folds : array-like of int, (N,)
        The fold (row of ``centres``) each score was held out of.

    Returns
    -------
    (lower, upper) : numpy.ndarray, (n,) each

    References
    ----------
    Barber et al., Ann. Statist. 2021, eq. (9) (CV+); Lei et al. (JASA 2018) §5.2 (scaled scores).
    """
    level = check_level(level, "cv_plus_bounds")
    centres, scales = np.asarray(centres, dtype=float), np.asarray(scales, dtype=float)
    r, k = np.asarray(scores, dtype=float), np.asarray(folds, dtype=int)
    ok = np.isfinite(r)
    r, k = r[ok], k[ok]
    n_cal, n = r.size, centres.shape[1]
    if n_cal == 0:
        raise MethodError("no calibration scores: too few held-out models to calibrate intervals")
    (j_lo, f_lo), (j_hi, f_hi) = (rank_position(p * (n_cal + 1), n_cal) for p in (1 - level, level))
    lower, upper = np.empty(n), np.empty(n)
    step = max(1, CV_PLUS_BLOCK // n_cal)
    for a in range(0, n, step):  # blocks of test points bound the (N, block) temporaries
        c, s = centres[k, a:a + step], r[:, None] * scales[k, a:a + step]
        lower[a:a + step] = _between(c - s, int(j_lo), float(f_lo))
        upper[a:a + step] = _between(c + s, int(j_hi), float(f_hi))
    return lower, upper


def normalised_scores(truth, pred, scale, floor: float = 1e-9) -> np.ndarray:
    """``|truth - pred| / scale`` on the cells where all three are finite (1-D)."""
    truth, pred, scale = (np.asarray(a, dtype=float) for a in (truth, pred, scale))
    ok = np.isfinite(truth) & np.isfinite(pred) & np.isfinite(scale)
    return np.abs(truth[ok] - pred[ok]) / np.maximum(scale[ok], floor)


def coverage(truth, lower, upper) -> float:
    """Share of finite ``truth`` cells inside ``[lower, upper]``."""
    truth, lower, upper = (np.asarray(a, dtype=float) for a in (truth, lower, upper))
    ok = np.isfinite(truth)
    if not ok.any():
        return float("nan")
    return float(((truth[ok] >= lower[ok]) & (truth[ok] <= upper[ok])).mean())


class IntervalPrediction(NamedTuple):
    """Predictions for new models, every array on each dataset's own scale.

    ``mean``, ``lower``, ``upper``, ``sd`` are ``(n, d)``; observed cells pass
    through with zero width. ``aggregate*`` are ``(n,)`` for the weighted sum
    ``sum_j w_j x_j`` (None without weights). ``q_cells``/``q_aggregate`` are
    the conformal multipliers and ``n_calibration`` the number of held-out
    scores behind each. ``frontier`` (n,): each model's signed distance beyond the
    training models' range of subset positions (0 inside; :mod:`.frontier`), None when
    not calibrated.
    """

    mean: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    sd: np.ndarray
    observed: np.ndarray
    aggregate: Optional[np.ndarray]
    aggregate_lower: Optional[np.ndarray]
    aggregate_upper: Optional[np.ndarray]
    level: float
    q_cells: float
    q_aggregate: Optional[float]
    n_calibration: tuple
    #: ``(n, k)``: the aggregates of ``extra_weights`` (k, d) with their calibrated bounds (None without).
    extra_aggregate: Optional[np.ndarray] = None
    extra_lower: Optional[np.ndarray] = None
    extra_upper: Optional[np.ndarray] = None
    frontier: Optional[np.ndarray] = None
