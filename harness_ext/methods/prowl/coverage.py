"""Mean win rate, the coverage ``eta`` of a subset, and the summaries of a coverage curve (SCAUC, ``|S*|``).

The definitions where SimBA is silent are listed in :mod:`harness_ext.methods.prowl`.

References
----------
SimBA (Subramani, Gomez, Diab), §3.3 (eqs. 6-7, SCAUC), Table 3, Appendix B. HELM (Liang et al. 2023)
for mean win rate.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ...base import check_matrix
from ...errors import MethodError

_MATCH_TOL = 1e-12

TIES = ("half", "strict")


def _check_ties(ties: str) -> str:
    if ties not in TIES:
        raise MethodError(f"ties must be one of {', '.join(TIES)}, got {ties!r}")
    return ties


def win_rates(X, ties: str = "half") -> np.ndarray:
    """Per-dataset win rate of every model.

    Parameters
    ----------
    X : array-like, shape (m, d)
        Scores, higher is better, NaN for missing cells.
    ties : {"half", "strict"}
        ``"half"`` (default): a tie is half a win, HELM's rule. ``"strict"``:
        only strictly beaten models count, eq. 6 as printed.

    Returns
    -------
    numpy.ndarray, shape (m, d)
        ``(#beaten + 0.5 * #tied) / (n_d - 1)`` (``"strict"``: ``#beaten / (n_d - 1)``)
        among the ``n_d`` models observed on dataset ``d``; NaN for missing
        cells and for datasets with ``n_d < 2``.

    References
    ----------
    SimBA eq. 6; HELM ``compute_aggregate_row_win_rates`` (ties: half a win).
    """
    from scipy.stats import rankdata

    X = check_matrix(X)
    # "min" ranks minus one count the strictly lower scores; "average" ranks add half the ties.
    method = {"half": "average", "strict": "min"}[_check_ties(ties)]
    observed = ~np.isnan(X)
    ranks = rankdata(X, axis=0, method=method, nan_policy="omit") if not observed.all() else rankdata(X, axis=0, method=method)
    n_d = observed.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        wr = (ranks - 1.0) / (n_d - 1.0)
    return np.where(observed & (n_d >= 2), wr, np.nan)


def mean_win_rate(X, columns=None, ties: str = "half") -> np.ndarray:
    """MWR of every model on the datasets ``columns`` (default all); ``ties`` as :func:`win_rates`.

    Returns
    -------
    numpy.ndarray, shape (m,)
        Mean of the model's per-dataset win rates over ``columns``; NaN for a
        model with none.

    References
    ----------
    SimBA eq. 6.
    """
    wr = win_rates(X, ties)
    if columns is not None:
        wr = wr[:, np.asarray(columns, dtype=int)]
    return prefix_mean_win_rates(wr, np.arange(wr.shape[1]))[:, -1]


def prefix_mean_win_rates(wr: np.ndarray, orders) -> np.ndarray:
    """MWR on every prefix of one or many dataset orders, by cumulative sums.

    Parameters
    ----------
    wr : numpy.ndarray, shape (m, d)
        From :func:`win_rates`.
    orders : array-like of int, shape (k,) or (R, k)

    Returns
    -------
    numpy.ndarray, shape (m, k) or (m, R, k)
        Entry ``[..., t]`` is the MWR on the first ``t + 1`` datasets of the order.
    """
    orders = np.asarray(orders, dtype=int)
    W = np.nan_to_num(wr, nan=0.0)[:, orders]
    N = (~np.isnan(wr))[:, orders].cumsum(axis=-1)
    S = W.cumsum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(N > 0, S / np.maximum(N, 1), np.nan)


def _coverage_of(full: np.ndarray, P: np.ndarray) -> np.ndarray:
    """eta for each column of P (m, K) against full MWR (m,)."""
    from harness_ext.methods.similarity.kernels import cross_pearson

    return cross_pearson(full[:, None], P)[0]


def coverage(X, subset, ties: str = "half") -> float:
    """Coverage ``eta(B') = Pearson(MWR(B), MWR(B'))`` of one subset of columns (``ties`` as :func:`win_rates`).

    References
    ----------
    SimBA eq. 7.
    """
    wr = win_rates(X, ties)
    full = prefix_mean_win_rates(wr, np.arange(wr.shape[1]))[:, -1]
    sub = prefix_mean_win_rates(wr, np.asarray(subset, dtype=int))[:, -1]
    return float(_coverage_of(full, sub[:, None])[0])


def coverage_curve(X, order, ties: str = "half") -> np.ndarray:
    """``eta`` for every prefix ``|S| = 1..len(order)`` of a dataset order (``ties`` as :func:`win_rates`).

    All prefixes come from one cumulative sum of per-dataset win rates, not
    from recomputing MWR per prefix.

    References
    ----------
    SimBA §3.3 (the coverage curve of SCAUC) and eq. 7.
    """
    wr = win_rates(X, ties)
    full = prefix_mean_win_rates(wr, np.arange(wr.shape[1]))[:, -1]
    return _coverage_of(full, prefix_mean_win_rates(wr, order))


def scauc(curve, k: Optional[int] = None) -> np.ndarray:
    """Signed area under a coverage curve, normalised by its width.

    ``trapz(eta_1..eta_k) / (k - 1)`` over ``|S| = 1..k`` (default the whole
    curve); NaN values of ``eta`` count as 0. Works on the last axis, so a
    ``(R, d)`` array of random curves gives ``R`` areas.

    Returns
    -------
    float or numpy.ndarray
        NaN when ``k < 2`` (one point has no area).

    References
    ----------
    SimBA §3.3 (SCAUC, signed because correlations can be negative), Table 3.
    """
    curve = np.nan_to_num(np.asarray(curve, dtype=float), nan=0.0)
    k = curve.shape[-1] if k is None else int(k)
    if k < 2 or curve.shape[-1] < k:
        return np.full(curve.shape[:-1], np.nan) if curve.ndim > 1 else float("nan")
    c = curve[..., :k]
    area = (c[..., 1:] + c[..., :-1]).sum(axis=-1) / 2.0 / (k - 1)
    return area if curve.ndim > 1 else float(area)


def check_target(target: float) -> float:
    """``target`` if it is a coverage a curve can reach and not one every curve reaches at once: in (0, 1].

    ``eta`` is a Pearson correlation, at most 1 (a target above it is never reached, so every ``|S*|`` would be
    empty); a target of 0 or below is met by almost any single dataset.
    """
    if not (isinstance(target, (int, float)) and 0 < float(target) <= 1):
        raise MethodError(f"coverage target must be in (0, 1] (eta is a correlation, at most 1), got {target}")
    return float(target)


def n_star(curve, target: float = 0.95) -> np.ndarray:
    """``|S*|``: the smallest prefix size with ``eta >= target`` (last axis).

    Returns
    -------
    int or numpy.ndarray
        1-based size; 0 if the target is never reached (arrays use 0 too).

    References
    ----------
    SimBA §6.2 and Table 3.
    """
    curve = np.asarray(curve, dtype=float)
    hit = np.nan_to_num(curve, nan=-np.inf) >= target
    first = np.where(hit.any(axis=-1), hit.argmax(axis=-1) + 1, 0)
    return int(first) if curve.ndim == 1 else first


def matched_or_beaten(value: float, baseline_values) -> float:
    """Proportion of baseline values the method matches or beats (``<= value``).

    References
    ----------
    SimBA Appendix B, Table 6.
    """
    b = np.asarray(baseline_values, dtype=float)
    b = b[np.isfinite(b)]
    if not np.isfinite(value) or b.size == 0:
        return float("nan")
    return float(np.mean(b <= value + _MATCH_TOL))
