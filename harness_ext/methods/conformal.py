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

import math

import numpy as np

from ..errors import MethodError

__all__ = ["conformal_quantile", "cv_plus_bounds", "mondrian_quantiles", "normalised_scores", "coverage", "Z90"]

#: Fewest calibration scores a group needs for its own quantile in :func:`mondrian_quantiles`.
MIN_GROUP_SCORES = 20

#: Two-sided 90% standard normal quantile (the uncalibrated fallback).
Z90 = 1.6448536269514722


def conformal_quantile(scores, level: float = 0.9) -> float:
    """The split-conformal quantile: the ``ceil((n + 1) level)``-th smallest score.

    With too few scores for the level (``ceil((n + 1) level) > n``) the largest
    score is returned (the interval is then as wide as the data allow, and
    callers should say the calibration is thin).

    Raises
    ------
    MethodError
        If there are no finite scores or ``level`` is not in (0, 1).
    """
    if not 0 < level < 1:
        raise MethodError(f"level must be in (0, 1), got {level!r}")
    s = np.asarray(scores, dtype=float)
    s = np.sort(s[np.isfinite(s)])
    n = s.size
    if n == 0:
        raise MethodError("no calibration scores: too few held-out cells to calibrate intervals")
    k = math.ceil((n + 1) * level)
    return float(s[min(k, n) - 1])


def mondrian_quantiles(scores, groups, n_groups: int, level: float = 0.9, min_count: int = MIN_GROUP_SCORES):
    """Per-group (Mondrian) conformal quantiles; groups with fewer than ``min_count`` scores get the pooled one.

    Conditioning on the group (here: the dataset) gives each group its nominal
    coverage when the scores of different datasets are not exchangeable (one
    dataset's normalised errors systematically larger than another's), which a
    pooled quantile averages away. Small groups fall back to the pooled quantile.

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
    pooled = conformal_quantile(s, level)
    out = np.full(int(n_groups), pooled)
    order = np.lexsort((s, g))
    s, g = s[order], g[order]
    counts = np.bincount(g, minlength=int(n_groups))
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    k = np.ceil((counts + 1) * level).astype(int)
    big = counts >= int(min_count)
    idx = starts + np.minimum(k, counts) - 1
    out[big] = s[idx[big]]
    return out


#: Largest (scores x predictions) block :func:`cv_plus_bounds` forms at once.
CV_PLUS_BLOCK = 1 << 22


def cv_plus_bounds(centres, scales, scores, folds, level: float = 0.9):
    """CV+ interval bounds from K fold fits: per test point, quantiles over the calibration scores.

    Calibration point ``i`` was held out of fold fit ``k(i)`` and has the
    normalised score ``R_i = |y_i - mu_k(i)(x_i)| / s_k(i)(x_i)``. For a test
    point with fold-fit predictions ``mu_k``, ``s_k`` the bounds are the
    ``floor((1 - level)(n + 1))``-th smallest of ``mu_k(i) - R_i s_k(i)`` and the
    ``ceil(level (n + 1))``-th smallest of ``mu_k(i) + R_i s_k(i)``: every score
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
    if not 0 < level < 1:
        raise MethodError(f"level must be in (0, 1), got {level!r}")
    centres, scales = np.asarray(centres, dtype=float), np.asarray(scales, dtype=float)
    r, k = np.asarray(scores, dtype=float), np.asarray(folds, dtype=int)
    ok = np.isfinite(r)
    r, k = r[ok], k[ok]
    n_cal, n = r.size, centres.shape[1]
    if n_cal == 0:
        raise MethodError("no calibration scores: too few held-out models to calibrate intervals")
    i_lo = max(math.floor((1 - level) * (n_cal + 1)), 1) - 1
    i_hi = min(math.ceil(level * (n_cal + 1)), n_cal) - 1
    lower, upper = np.empty(n), np.empty(n)
    step = max(1, CV_PLUS_BLOCK // n_cal)
    for a in range(0, n, step):  # blocks of test points bound the (N, block) temporaries
        c, s = centres[k, a:a + step], r[:, None] * scales[k, a:a + step]
        lower[a:a + step] = np.partition(c - s, i_lo, axis=0)[i_lo]
        upper[a:a + step] = np.partition(c + s, i_hi, axis=0)[i_hi]
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
