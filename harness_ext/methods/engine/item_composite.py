"""Pieces of ``crosstask``'s composite: where a target lies against the population, and the interval's calibration.

* :func:`clipped_gap`: the distance of a target's score beyond the source models' range of full-task
  scores, read from the design-based estimate but believed only up to ``clip`` design standard errors
  beyond the regression's estimate. A design estimate from 50 answers has a standard error of 4-7
  points; for a target inside the population near its edge, it lands beyond the range by noise alone
  about a third of the time, and the composite then dropped a regression that was right. The
  regression's estimate, which sees every task's sampled answers, says where among the population the
  target lies; a design estimate far beyond it is more likely noise than a frontier model. A frontier
  model just beyond the range, whose regression estimate sits at the range's edge, keeps its gap.
* :func:`coverage_scale`: split-conformal calibration of one variance component of an interval (Lei et
  al. 2018, §2.2, on a scale instead of a radius): per calibration model, the smallest factor ``k`` on the
  component's standard deviation at which its interval covers the truth; the interval then takes the
  conformal quantile of those factors. Held-out source models are the calibration set, so the scale is
  nominal for models like the sources and leaves the other components (the design-based part, the
  allowance for the range's edge) as they are.
* :func:`fit_gvf`, :func:`gvf_variance`: a generalised variance function (Wolter 2007, ch. 7), the design
  variance as a smooth function of the design estimate, ``v = b0 + b1 p (1 - p)``, fitted across the held-out
  source models. A target's own design variance from 50 answers is itself noisy; a composite weight chosen with
  it goes to the design part where that variance came out small by chance, and those targets' intervals
  under-cover (Fay and Herriot 1979 smoothed their direct variances for the same reason).
* :func:`edge_hull`: the interval of a target whose design estimate lies just beyond the range, reaching the
  regression's own interval on the range's side (that estimate is beyond partly by its own noise).

References
----------
Huber (1964), "Robust estimation of a location parameter", Ann. Math. Statist. 35 (clipping at a
multiple of the scale). Lei et al. (2018), "Distribution-free predictive inference for regression", JASA
113, §2.2 (split conformal). Fay and Herriot (1979), JASA 74 (composite estimation). Wolter (2007),
"Introduction to Variance Estimation", 2nd ed., ch. 7 (generalised variance functions).
"""

from __future__ import annotations

import numpy as np

from .conformal import conformal_quantile


def clipped_gap(a, m, sd_a, bounds: tuple, floor_margin: float, clip: float) -> np.ndarray:
    """Distance beyond ``bounds`` of the design estimate ``a`` clipped to ``clip`` standard errors ``sd_a`` from ``m``.

    Above the range the gap is ``min(a, m + clip sd_a) - hi``; below it ``lo - max(a, m - clip sd_a) -
    floor_margin sd_a`` (populations crowd at chance level, where a weak model falls below the range by
    noise alone); never negative. ``clip = inf`` is the unclipped distance of ``a``.
    """
    lo, hi = bounds
    a, m, sd_a = (np.asarray(v, dtype=float) for v in (a, m, sd_a))
    reach = clip * sd_a if np.isfinite(clip) else np.inf
    above = np.minimum(a, m + reach) - hi
    below = lo - np.maximum(a, m - reach) - floor_margin * sd_a
    return np.maximum(0.0, np.maximum(above, below))


#: A calibration model whose scaled component is less than this share of its interval's variance at ``k = 1``
#: is left out of :func:`coverage_scale`: its interval is the other components' (the design-based part), so ``k``
#: hardly moves it, and its misses (a design-based interval misses 10% of the time) would ask for an unbounded ``k``.
MIN_SCALED_SHARE = 0.1
#: Fewer informative calibration models than this: ``k`` is 1 (the component as estimated).
MIN_SCALE_MODELS = 10


def coverage_scale(resid, scaled, cross, fixed, level: float = 0.9, z: float | None = None,
                   cap: float = 1e3) -> float:
    """The conformal factor ``k`` on one variance component so that intervals cover at ``level``.

    A calibration model's interval is ``centre -/+ z sqrt(k**2 scaled + k cross + fixed)`` with
    ``resid = truth - centre``; per model the smallest ``k >= 0`` that covers solves that quadratic
    (0 when the fixed part covers; ``cap`` when no ``k`` up to it does). The result is the
    split-conformal quantile of those factors (:func:`~.conformal.conformal_quantile`), nominal for
    exchangeable models. Only models whose scaled component is at least :data:`MIN_SCALED_SHARE` of their
    variance at ``k = 1`` take part (``k`` governs only their intervals); with fewer than
    :data:`MIN_SCALE_MODELS` of them ``k`` is 1. ``z`` defaults to the normal quantile of ``level``.
    """
    from .conformal import _normal_quantile

    z = _normal_quantile(level) if z is None else z
    A, B, C = (np.asarray(v, dtype=float) for v in (scaled, cross, fixed))
    total = A + np.abs(B) + C
    keep = A >= MIN_SCALED_SHARE * np.where(total > 0, total, np.inf)
    if keep.sum() < MIN_SCALE_MODELS:
        return 1.0
    A, B, C = A[keep], B[keep], C[keep]
    r2 = (np.asarray(resid, dtype=float)[keep] / z) ** 2
    C = C - r2
    disc = np.maximum(B * B - 4.0 * A * C, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.where(A > 0, (-B + np.sqrt(disc)) / (2.0 * A), np.where(B > 0, -C / B, np.inf))
    k = np.where(C >= 0, 0.0, np.minimum(root, cap))
    return float(conformal_quantile(k, level))


#: Fewer held-out models than this: no variance function (:func:`fit_gvf` returns None, each target keeps its own).
MIN_GVF_MODELS = 10


def fit_gvf(a, v) -> tuple | None:
    """``(b0, b1)`` of the variance function ``v = b0 + b1 p (1 - p)``, ``p`` the design estimate ``a`` in [0, 1].

    Least squares over the models (the held-out source models' design estimates ``a`` and variances ``v``), both
    coefficients kept non-negative: with a negative intercept the line through the origin, with a negative slope
    the mean variance. For a proportion from ``n`` sampled items the variance is about ``p (1 - p) / n`` times
    a design effect (Wolter 2007, §7.2); the intercept keeps what a working model leaves at the extremes. None
    with fewer than :data:`MIN_GVF_MODELS` finite pairs.
    """
    a, v = np.asarray(a, dtype=float), np.asarray(v, dtype=float)
    ok = np.isfinite(a) & np.isfinite(v)
    if ok.sum() < MIN_GVF_MODELS:
        return None
    p = np.clip(a[ok], 0.0, 1.0)
    x, y = p * (1.0 - p), v[ok]
    if np.ptp(x) > 0:
        b1, b0 = np.polyfit(x, y, 1)
        if b0 < 0 and b1 > 0:
            b0, b1 = 0.0, float(np.sum(x * y) / np.sum(x * x))
        if b1 > 0:
            return float(b0), float(b1)
    return float(y.mean()), 0.0


def gvf_variance(coef: tuple | None, a, own) -> np.ndarray:
    """The smoothed design variance of targets with design estimates ``a`` (:func:`fit_gvf`'s ``coef``); their own
    variances ``own`` where there is no function (``coef`` None) or it gives no positive variance."""
    own = np.asarray(own, dtype=float)
    if coef is None:
        return own
    p = np.clip(np.asarray(a, dtype=float), 0.0, 1.0)
    v = coef[0] + coef[1] * p * (1.0 - p)
    return np.where(v > 0, v, own)


def edge_hull(lower, upper, a, sd_a, bounds: tuple, reg_lower, reg_upper, reach: float):
    """``(lower, upper)`` with the range's side of each interval reaching the regression's own interval where the
    design estimate ``a`` lies beyond ``bounds`` by less than ``reach`` design standard errors ``sd_a``.

    A design estimate just beyond the sources' range gets the composite's weight because of its distance beyond
    the range, and that distance is partly its own noise: among such targets the design estimate errs outward
    (the selection that conditioning on ``a`` beyond the range makes). Their truth lies beyond the range or inside
    it, where the regression (``reg_lower``, ``reg_upper``) reads it; the interval keeps its outer side and reaches
    the regression's bound on the inner one. Beyond ``reach`` standard errors the distance is confidently real
    and nothing changes.
    """
    lo, hi = bounds
    a, sd_a = np.asarray(a, dtype=float), np.asarray(sd_a, dtype=float)
    above = (a > hi) & (a - hi < reach * sd_a)
    below = (a < lo) & (lo - a < reach * sd_a)
    return (np.where(above, np.minimum(lower, reg_lower), lower),
            np.where(below, np.maximum(upper, reg_upper), upper))
