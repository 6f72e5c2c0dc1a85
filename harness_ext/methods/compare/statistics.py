"""Statistics of the rank-preservation protocol: AUC over k, quantile bands, k*, Wilcoxon + Holm, gains.

The defaults of the protocol (selectors compared, k* targets, the Random baseline) live here too,
next to the statistics that use them.

References
----------
Gusev & Zaytsev, "Benchmarking on Tasks That Matter: Dataset Selection for
Preserving Model Rankings", KDD 2026, §5.1 (eq. 15-16), §6 (eq. 17, Tables 1-3, k* in §6.2,
significance in §6.3), App. B (relative gain).
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

import numpy as np

from ...errors import MethodError
from ..ranking import check_metrics

#: Selectors compared by default (those registered are used): the paper's five and SimBA's
#: greedy coverage, the product's default ``reduce`` selector.
DEFAULT_SELECTORS = ("random-subset", "kmeans", "farthest-first-cosine", "farthest-first-euclidean", "a-optimal", "d-optimal",
                     "greedy-coverage")
#: Table 2 targets of the paper (§6.2).
DEFAULT_TARGETS = ("spearman>=0.90", "mae<=1.5")
#: Names of the Random baseline, in order of preference: the paper's fresh k-subset per k,
#: then SimBA's one random order (prefixes).
RANDOM_BASELINES = ("random-subset", "random")


def baseline_name(selectors: Sequence[str]) -> Optional[str]:
    """The selector that gains and the "vs random" tests are measured against, or None."""
    return next((b for b in RANDOM_BASELINES if b in selectors), None)


# ----------------------------------------------------------------------------- statistics
def trapezoid_auc(values, axis: int = -1) -> np.ndarray:
    """Trapezoid area under a curve sampled at consecutive k (unit spacing).

    ``AUC(y) = sum_{k=2}^{k_max-1} (y(k) + y(k+1)) / 2`` (eq. 17).

    References
    ----------
    Gusev & Zaytsev (2026), §6, eq. (17).
    """
    y = np.asarray(values, dtype=float)
    return np.trapezoid(y, dx=1.0, axis=axis)


def quantile_band(values, ci: float = 0.95, axis: int = 0):
    """Empirical-quantile confidence interval ``[F^-1(beta/2), F^-1(1 - beta/2)]``, beta = 1 - ci.

    References
    ----------
    Gusev & Zaytsev (2026), §5.1, eq. (16).
    """
    if not 0 < ci < 1:
        raise MethodError(f"ci must lie in (0, 1), got {ci}")
    beta = 1.0 - ci
    v = np.asarray(values, dtype=float)
    lo, hi = np.nanquantile(v, [beta / 2, 1 - beta / 2], axis=axis)
    return lo, hi


def holm(pvalues) -> np.ndarray:
    """Holm step-down adjusted p-values (NaN entries are left out and stay NaN).

    Sorted ascending, ``p_adj(i) = max_{j <= i} min(1, (m - j + 1) p(j))``.

    References
    ----------
    Holm (1979); used by Gusev & Zaytsev (2026), §6.3.
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    q = p[ok]
    m = q.size
    if m == 0:
        return out
    order = np.argsort(q, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * q[order]))
    res = np.empty(m)
    res[order] = adj
    out[ok] = res
    return out


def paired_wilcoxon(auc_trials, ref: int, higher_is_better: bool, ref_is_better: bool = True) -> np.ndarray:
    """One-sided paired Wilcoxon signed-rank p-values of every selector against ``ref``.

    Parameters
    ----------
    auc_trials : array-like, shape (n_selectors, T)
        Per-trial AUC of each selector (trials are the pairs).
    ref : int
        Row of the reference selector.
    higher_is_better : bool
        Direction of the metric.
    ref_is_better : bool
        True: H1 "the reference is better than selector i" (best vs the rest).
        False: H1 "selector i is better than the reference" (each vs random).

    Returns
    -------
    numpy.ndarray, shape (n_selectors,)
        Raw p-values (``scipy.stats.wilcoxon(..., alternative="greater")``,
        zero differences dropped); NaN for ``ref``; 1 where all differences are 0.
    """
    from scipy.stats import wilcoxon

    A = np.asarray(auc_trials, dtype=float)
    sign = 1.0 if higher_is_better else -1.0
    d_all = sign * (A[ref][None, :] - A)
    if not ref_is_better:
        d_all = -d_all
    p = np.full(A.shape[0], np.nan)
    others = np.array([i for i in range(A.shape[0]) if i != ref], dtype=int)
    if others.size:
        d = d_all[others]
        nonzero = (np.abs(d) > 0).any(axis=1)
        pv = np.ones(others.size)
        if nonzero.any():
            with np.errstate(all="ignore"):
                res = wilcoxon(d[nonzero], alternative="greater", axis=1, zero_method="wilcox")
            pv[nonzero] = np.where(np.isnan(res.pvalue), 1.0, res.pvalue)
        p[others] = pv
    return p


def wilcoxon_vs_best(auc_trials, higher_is_better: bool):
    """One-sided paired Wilcoxon tests of the best selector against every other, Holm-corrected.

    Parameters
    ----------
    auc_trials : array-like, shape (n_selectors, T)
        Per-trial AUC of each selector.
    higher_is_better : bool
        Direction of the metric.

    Returns
    -------
    best : int
        Index of the selector with the best mean AUC.
    p_raw, p_holm : numpy.ndarray, shape (n_selectors,)
        p-values of "best is better than this one", raw and Holm-corrected over
        the n_selectors - 1 comparisons; NaN for the best itself.

    References
    ----------
    Gusev & Zaytsev (2026), §6.3 (one-sided paired Wilcoxon, Holm within each
    domain-metric block); scipy.stats.wilcoxon.
    """
    A = np.asarray(auc_trials, dtype=float)
    sign = 1.0 if higher_is_better else -1.0
    best = int(np.nanargmax(sign * np.nanmean(A, axis=1)))
    p = paired_wilcoxon(A, best, higher_is_better, ref_is_better=True)
    return best, p, holm(p)


def relative_gain(auc_method, auc_random, higher_is_better: bool):
    """Relative AUC gain over random, positive = better than random.

    ``(AUC_m - AUC_rand) / AUC_rand`` for higher-is-better metrics and
    ``(AUC_rand - AUC_m) / AUC_rand`` for MAE (App. B).
    """
    m = np.asarray(auc_method, dtype=float)
    r = np.asarray(auc_random, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (m - r) / np.abs(r) if higher_is_better else (r - m) / np.abs(r)


def parse_target(text: str):
    """``"spearman>=0.9"`` -> ``("spearman", ">=", 0.9)``."""
    m = re.match(r"^\s*([A-Za-z@0-9_]+)\s*(>=|<=)\s*([-+0-9.eE]+)\s*$", str(text))
    if not m:
        raise MethodError(f"bad target {text!r}: use METRIC>=VALUE or METRIC<=VALUE, e.g. spearman>=0.9")
    (metric,) = check_metrics([m.group(1)])
    return metric, m.group(2), float(m.group(3))


def k_star(ks, curve, op: str, value: float):
    """Smallest k whose curve value meets ``op value``, or None.

    The smallest such k, even if a larger k falls back below the target
    (the paper: "the smallest subset size k* at which ... reaches a target").

    References
    ----------
    Gusev & Zaytsev (2026), §6.2.
    """
    c = np.asarray(curve, dtype=float)
    ok = c >= value if op == ">=" else c <= value
    idx = np.flatnonzero(ok)
    return int(np.asarray(ks)[idx[0]]) if idx.size else None

