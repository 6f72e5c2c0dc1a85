"""prowl: find a representative subset of datasets and measure how well it covers the benchmark.

SimBA phase 2. A selector orders the datasets; for every prefix ``S`` of that
order, coverage ``eta(S)`` is the Pearson correlation between the models' mean
win rate on ``S`` and on the full benchmark (eqs. 6-7). The curve of ``eta``
over ``|S| = 1..d`` is summarised by its signed area (SCAUC) and by ``|S*|``,
the smallest prefix reaching the target coverage (0.95 in the paper). The
RANDOM baseline is the same curve for 1000 random orders, computed in one
vectorised pass; every method is also scored by the proportion of random runs
it matches or beats on SCAUC ("AUC") and on the SCAUC up to ``|S*|`` ("Max2",
Appendix B).

Definitions where the paper is silent (each is tested in tests/test_prowl.py)
-----------------------------------------------------------------------------
* Mean win rate, ties and missing cells: by default HELM's rule (the paper
  cites HELM's "mean win rate"). On each dataset a model's win rate is
  ``(#models it beats + 0.5 * #models it ties) / (n_d - 1)`` over the ``n_d``
  models observed on that dataset (datasets with ``n_d < 2`` carry no win
  rate); a model's MWR on ``S`` is the mean over the datasets of ``S`` it has a
  win rate on. Eq. 6 as printed counts strict wins only
  (``I[B'[mu, d] > B'[mu', d]]``): ``ties="strict"`` gives that literal reading
  (CLI ``--ties strict``). The two differ only where scores tie, which the
  chance normalisation makes common (every model at or below chance scores
  exactly 0). Eq. 6 also divides the win count by ``m - 1`` only; the
  per-dataset mean differs from it by the factor ``|S|`` on complete data,
  which Pearson ignores.
* Coverage with missing MWR: ``eta`` is computed over the models that have an
  MWR on both ``S`` and the full benchmark. An undefined ``eta`` (constant MWR
  on ``S``, e.g. every model tied) is reported as NaN and counts as 0 in areas
  and never reaches the target.
* SCAUC: trapezoid area under ``eta`` against ``|S|`` = 1..k, divided by the
  width ``k - 1`` so a curve that is 1 everywhere scores 1 (Table 3 reports
  values near 0.98 for HELM's 16 datasets, which fixes this normalisation).
  A single point has no area (NaN).
* Max2: SCAUC over ``|S| = 1..max(|S*|, 2)`` (the paper: "if |S*| = 1, we
  consider the first two datasets"), compared with each random run over the
  same range.
* "Matches or beats": the fraction of random runs whose value is <= the
  method's (with a 1e-12 tolerance).
* RANDOM row of the table: the mean over runs of SCAUC and of ``|S*|`` (the
  paper's 2.5 for HELM is such a mean).

References
----------
SimBA (Subramani, Gomez, Diab), §3.3 (eqs. 6-7, SCAUC), §6.2 (Table 3,
Figure 2), Appendix B (Table 6). HELM (Liang et al. 2023) for mean win rate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional, Sequence

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from ..base import check_matrix
from ..errors import MethodError

# (m, runs, d) float blocks of the random baseline are capped at ~32 MB.
_CHUNK_ELEMENTS = 4_000_000
_MATCH_TOL = 1e-12

BASELINE_LABELS = {"random": "RANDOM", "greedy_minimum": "GREEDY MINIMUM", "greedy_maximum": "GREEDY MAXIMUM"}


# --------------------------------------------------------------------------- mean win rate and coverage


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
    from harness_ext.plugins.similarity import cross_pearson

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


# --------------------------------------------------------------------------- random baseline


@dataclass
class RandomBaseline:
    """Coverage curves of ``n_runs`` random dataset orders.

    Attributes
    ----------
    curves : numpy.ndarray, shape (n_runs, d)
    orders : numpy.ndarray, shape (n_runs, d)
    scauc : numpy.ndarray, shape (n_runs,)
    n_star : numpy.ndarray, shape (n_runs,)
        0 where a run never reaches the target.
    target : float
    random_state : int
    ties : str
        Tie rule of the win rates (see :func:`win_rates`).
    """

    curves: np.ndarray
    orders: np.ndarray
    scauc: np.ndarray
    n_star: np.ndarray
    target: float
    random_state: int
    ties: str = "half"

    @property
    def n_runs(self) -> int:
        return self.curves.shape[0]

    @property
    def mean_curve(self) -> np.ndarray:
        return np.nanmean(self.curves, axis=0)

    def quantile_curve(self, q: float) -> np.ndarray:
        return np.nanquantile(self.curves, q, axis=0)

    def scauc_upto(self, k: int) -> np.ndarray:
        """Each run's SCAUC over ``|S| = 1..k`` (for Max2)."""
        return scauc(self.curves, k)


def random_baseline(X, n_runs: int = 1000, random_state: int = 0, target: float = 0.95, wr=None,
                    ties: str = "half") -> RandomBaseline:
    """SimBA's RANDOM baseline: coverage curves of ``n_runs`` uniformly random orders.

    All runs are evaluated together: orders are drawn as one ``(n_runs, d)``
    array. With missing win rates, prefix MWRs come from cumulative sums over
    a gathered ``(m, runs, d)`` block and ``eta`` is one masked correlation
    per block (blocks of runs bound memory). With complete win rates the
    curves come from the ``d x d`` covariance of the win rates instead
    (:func:`_complete_random_curves`), with no ``m x runs x d`` work. ``wr``
    (from :func:`win_rates`) overrides ``X`` and ``ties``.

    References
    ----------
    SimBA §3.2 "Baselines" (1000 random runs), Table 3, Table 6.
    """
    if wr is None:
        wr = win_rates(X, ties)
    m, d = wr.shape
    n_runs = int(n_runs)
    if n_runs < 1:
        raise MethodError(f"n_random must be >= 1, got {n_runs}")
    rng = np.random.default_rng(random_state)
    orders = rng.permuted(np.tile(np.arange(d), (n_runs, 1)), axis=1)
    if not np.isnan(wr).any():
        curves = _complete_random_curves(wr, orders)
    else:
        full = prefix_mean_win_rates(wr, np.arange(d))[:, -1]
        curves = np.empty((n_runs, d))
        step = max(1, _CHUNK_ELEMENTS // max(1, m * d))
        for start in range(0, n_runs, step):
            blk = orders[start : start + step]
            P = prefix_mean_win_rates(wr, blk)  # (m, b, d)
            curves[start : start + step] = _coverage_of(full, P.reshape(m, -1)).reshape(blk.shape)
    return RandomBaseline(
        curves=curves,
        orders=orders,
        scauc=scauc(curves),
        n_star=n_star(curves, target),
        target=float(target),
        random_state=int(random_state),
        ties=ties,
    )


def _complete_random_curves(wr: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """``eta`` at every prefix of every order, for win rates with no missing cell.

    Then the prefix MWR is ``S_k / k`` with ``S_k`` the sum of the first ``k``
    win-rate columns of the order, and Pearson ignores the ``1 / k``. With
    ``Wc`` the column-centred win rates, ``f`` the centred full MWR,
    ``G = Wc' Wc`` and ``c = Wc' f``:

    * ``cov(full, S_k) = sum_{t <= k} c[o_t]`` (a cumulative sum), and
    * ``var(S_k) = var(S_{k-1}) + G[o_k, o_k] + 2 sum_{t < k} G[o_t, o_k]``,
      where the inner sum is read off the prefix sums of the columns
      ``G[:, o_1], G[:, o_2], ...``.

    So the cost is ``O(m d^2)`` once plus ``O(d^2)`` per run, instead of
    ``O(m d)`` per run (10,000 models x 1,000 datasets x 1,000 runs: seconds
    instead of many minutes). A prefix whose summed win rates are constant
    (``var(S_k)`` at rounding level, below ``1e-12`` of its Cauchy-Schwarz
    bound) has NaN coverage, as in :func:`_coverage_of`; the two paths agree
    to ~1e-12 elsewhere (tests/test_prowl.py).

    References
    ----------
    SimBA eqs. 6-7 (MWR and coverage); the variance of a sum of columns.
    """
    m, d = wr.shape
    Wc = wr - wr.mean(axis=0)
    f = wr.mean(axis=1)
    f = f - f.mean()
    G = Wc.T @ Wc
    c = Wc.T @ f
    ff = float(f @ f)
    sd = np.sqrt(np.diag(G))
    runs = orders.shape[0]
    cross = np.zeros((runs, d))
    steps = np.arange(d - 1)
    buf = np.empty((d, d))
    for r in range(runs):  # one d x d pass per run; everything else is vectorised over runs below
        o = orders[r]
        # B[j, t] = sum_{u <= t} G[j, o_u] (prefix sums along the contiguous axis, the fast one for numpy);
        # so sum_{t < k} G[o_t, o_k] = B[o_k, k - 1].
        B = np.cumsum(np.take(G, o, axis=1, out=buf), axis=1, out=buf)
        cross[r, 1:] = B[o[1:], steps]
    var = np.cumsum(G[orders, orders] + 2.0 * cross, axis=1)
    cov = np.cumsum(c[orders], axis=1)
    ok = (var > 1e-12 * np.cumsum(sd[orders], axis=1) ** 2) & (ff > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        eta = cov / np.sqrt(np.where(ok, var * ff, 1.0))
    curves = np.where(ok, np.clip(eta, -1.0, 1.0), np.nan)
    return curves


# --------------------------------------------------------------------------- one method end to end


@dataclass
class ProwlResult:
    """A selector's ordering of the datasets and its coverage evaluation.

    Attributes
    ----------
    selector : str
        Registered selector name.
    similarity : str or None
        Similarity measure, for selectors that use one.
    params : dict
        The selector's ``get_params()`` (repeatable run).
    datasets : list of str
        All dataset names (columns of the matrix), in matrix order.
    order : list of str
        Dataset names in selection order (all ``d``).
    coverage : numpy.ndarray, shape (d,)
        ``eta`` for ``|S| = 1..d``.
    proxy_coverage : numpy.ndarray or None
        The selector's ``delta`` per step, when it has one.
    target : float
    n_star : int
        ``|S*|`` (0 if never reached).
    subset : list of str
        ``order[:n_star]``: the representative subset.
    scauc, max2 : float
        SCAUC over the whole curve and over ``1..max(n_star, 2)``.
    n_models : int
    auc_vs_random, max2_vs_random : float or None
        Proportion of random runs matched or beaten (None without a baseline).
    ties : str
        Tie rule of the mean win rate (see :func:`win_rates`).
    """

    selector: str
    similarity: Optional[str]
    params: dict
    datasets: list
    order: list
    coverage: np.ndarray
    proxy_coverage: Optional[np.ndarray]
    target: float
    n_star: int
    subset: list
    scauc: float
    max2: float
    n_models: int
    auc_vs_random: Optional[float] = None
    max2_vs_random: Optional[float] = None
    random: Optional[RandomBaseline] = field(default=None, repr=False)
    ties: str = "half"

    @property
    def label(self) -> str:
        from harness_ext.plugins.similarity import LABELS

        if self.similarity is not None and self.selector in ("greedy_coverage", "beam_coverage"):
            name = LABELS.get(self.similarity, self.similarity.upper())
            return name if self.selector == "greedy_coverage" else f"{name} (beam {self.params.get('beam_width')})"
        return BASELINE_LABELS.get(self.selector, self.selector.upper())

    def to_dict(self) -> dict:
        """JSON-ready summary (what a manifest records)."""

        def num(v):
            return None if v is None or (isinstance(v, float) and not np.isfinite(v)) else float(v)

        return {
            "selector": self.selector,
            "similarity": self.similarity,
            "params": {k: (v if isinstance(v, (int, float, str, bool, type(None))) else str(v)) for k, v in self.params.items()},
            "target": self.target,
            "n_star": int(self.n_star),
            "subset": list(self.subset),
            "order": list(self.order),
            "coverage": [num(v) for v in self.coverage],
            "proxy_coverage": None if self.proxy_coverage is None else [float(v) for v in self.proxy_coverage],
            "scauc": num(self.scauc),
            "max2": num(self.max2),
            "n_models": int(self.n_models),
            "n_datasets": len(self.datasets),
            "auc_vs_random": num(self.auc_vs_random),
            "max2_vs_random": num(self.max2_vs_random),
            "n_random": None if self.random is None else self.random.n_runs,
            "ties": self.ties,
        }


def _as_matrix(df) -> tuple:
    if isinstance(df, pd.DataFrame):
        X = check_matrix(df.to_numpy(dtype=float), min_rows=2, min_cols=2)
        names = [str(c) for c in df.columns]
    else:
        X = check_matrix(df, min_rows=2, min_cols=2)
        names = [str(i) for i in range(X.shape[1])]
    return X, names


def _make_selector(selector: str, similarity: Optional[str], random_state: int, selector_params: Optional[dict]):
    from ..plugin_manager import get_registration

    reg = get_registration("selectors", selector)
    params = dict(selector_params or {})
    defaults = reg.cls().get_params()
    if "similarity" in defaults and similarity is not None:
        params["similarity"] = similarity
    if "random_state" in defaults:
        params.setdefault("random_state", random_state)
    # The coverage curve needs every dataset ordered.
    for key in ("n_select", "gamma"):
        if key in defaults:
            params[key] = None
    est = reg.cls(**params)
    used_similarity = est.get_params().get("similarity") if "similarity" in defaults else None
    return reg.name, est, used_similarity


def evaluate_order(
    X,
    order,
    *,
    datasets: Sequence[str],
    selector: str,
    params: dict,
    similarity: Optional[str] = None,
    proxy=None,
    target: float = 0.95,
    baseline: Optional[RandomBaseline] = None,
    wr=None,
    ties: str = "half",
) -> ProwlResult:
    """Coverage curve, ``|S*|``, SCAUC, Max2 and the comparison with random for one order.

    ``wr`` (from :func:`win_rates`) overrides ``X`` and ``ties``.

    References
    ----------
    SimBA §3.3, Table 3, Appendix B.
    """
    if wr is None:
        wr = win_rates(X, ties)
    order = np.asarray(order, dtype=int)
    d = wr.shape[1]
    if order.size != d or len(set(order.tolist())) != d:
        raise MethodError(f"selector {selector!r} ordered {order.size} of {d} datasets; the coverage curve needs all of them")
    full = prefix_mean_win_rates(wr, np.arange(d))[:, -1]
    curve = _coverage_of(full, prefix_mean_win_rates(wr, order))
    ns = n_star(curve, target)
    k2 = max(ns if ns > 0 else d, 2)
    area, max2 = scauc(curve), scauc(curve, k2)
    auc_p = max2_p = None
    if baseline is not None:
        auc_p = matched_or_beaten(area, baseline.scauc)
        max2_p = matched_or_beaten(max2, baseline.scauc_upto(k2))
    names = [datasets[i] for i in order]
    return ProwlResult(
        selector=selector,
        similarity=similarity,
        params=dict(params),
        datasets=list(datasets),
        order=names,
        coverage=curve,
        proxy_coverage=None if proxy is None else np.asarray(proxy, dtype=float),
        target=float(target),
        n_star=int(ns),
        subset=names[:ns],
        scauc=area,
        max2=max2,
        n_models=int(np.isfinite(full).sum()),
        auc_vs_random=auc_p,
        max2_vs_random=max2_p,
        random=baseline,
        ties=ties,
    )


def run_prowl(
    df,
    similarity: Optional[str] = "pearson",
    selector: str = "greedy_coverage",
    target: float = 0.95,
    random_state: int = 0,
    n_random: int = 1000,
    selector_params: Optional[dict] = None,
    baseline: Optional[RandomBaseline] = None,
    ties: str = "half",
    wr: Optional[np.ndarray] = None,
) -> ProwlResult:
    """Order the datasets with a selector and evaluate the order's coverage (SimBA prowl).

    Parameters
    ----------
    df : pandas.DataFrame or array-like, shape (m models, d datasets)
        Performance matrix (higher is better, NaN for missing), as from
        :func:`harness_ext.store.matrix.load_matrix`.
    similarity : str, optional
        Similarity measure for selectors that take one (``greedy_coverage``,
        ``beam_coverage``); ignored by the baselines.
    selector : str
        Registered selector name, e.g. ``greedy_coverage``, ``beam_coverage``,
        ``random``, ``greedy_minimum``, ``greedy_maximum``.
    target : float
        Coverage ``eta`` that defines ``|S*|`` (paper: 0.95).
    random_state : int
        Seed for the selector (tie-breaks, random order) and the random baseline.
    n_random : int
        Runs of the RANDOM baseline used for the "matched or beaten"
        proportions; 0 skips it.
    selector_params : dict, optional
        Extra selector parameters (e.g. ``{"beam_width": 10}``). ``n_select``
        and ``gamma`` are overridden to ``None``: the curve needs every dataset.
    baseline : RandomBaseline, optional
        Reuse a baseline computed earlier on the same matrix (and ``ties``).
    ties : {"half", "strict"}
        Ties in the mean win rate: half a win (HELM, default) or none (eq. 6
        as printed); see :func:`win_rates`.
    wr : numpy.ndarray, optional
        ``win_rates(X, ties)`` of this matrix when already computed (several
        selectors or similarities on one matrix compute it once).

    Returns
    -------
    ProwlResult
        ``order`` (all datasets), ``coverage`` per ``|S|``, ``n_star``,
        ``subset`` (= ``order[:n_star]``), ``scauc``, ``max2``, and the
        proportions of random runs matched or beaten.

    Raises
    ------
    MethodError
        Fewer than 2 models or datasets, or a selector that does not order every dataset.

    References
    ----------
    SimBA §3 (Algorithm 1, eqs. 3-7), §6.2 (Table 3), Appendix B (Table 6).
    """
    X, names = _as_matrix(df)
    wr = win_rates(X, ties) if wr is None else wr
    if baseline is not None and baseline.ties != ties:
        raise MethodError(f"the random baseline was computed with ties={baseline.ties!r}, not {ties!r}")
    name, est, used_similarity = _make_selector(selector, similarity, random_state, selector_params)
    est.fit(X)
    if baseline is None and n_random:
        baseline = random_baseline(X, n_runs=n_random, random_state=random_state, target=target, wr=wr, ties=ties)
    return evaluate_order(
        X,
        est.order_,
        datasets=names,
        selector=name,
        params=est.get_params(),
        similarity=used_similarity,
        proxy=getattr(est, "coverage_", None),
        target=target,
        baseline=baseline,
        wr=wr,
        ties=ties,
    )


# --------------------------------------------------------------------------- Table 3 / Table 6


@dataclass
class ProwlReport:
    """Every method of Table 3 on one matrix.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per method: SCAUC, |S*|, S* (the subset), AUC and Max2
        proportions of random runs matched or beaten.
    results : dict
        Method label -> :class:`ProwlResult`.
    baseline : RandomBaseline
    n_models, n_datasets : int
    """

    table: pd.DataFrame
    results: Dict[str, ProwlResult]
    baseline: RandomBaseline
    n_models: int
    n_datasets: int

    def curves(self) -> pd.DataFrame:
        """Long table of every curve: method, |S|, eta, dataset added (random: mean curve)."""
        rows = []
        for label, res in self.results.items():
            for k, (eta, ds) in enumerate(zip(res.coverage, res.order), start=1):
                rows.append({"method": label, "k": k, "eta": eta, "dataset_added": ds})
        mean = self.baseline.mean_curve
        lo, hi = self.baseline.quantile_curve(0.05), self.baseline.quantile_curve(0.95)
        for k in range(len(mean)):
            rows.append({"method": f"RANDOM (n = {self.baseline.n_runs}) mean", "k": k + 1, "eta": mean[k], "dataset_added": None,
                         "q05": lo[k], "q95": hi[k]})
        return pd.DataFrame(rows)


def default_measures(X) -> tuple:
    """SimBA's nine measures, plus every registered 0/1-only measure when ``X`` is 0/1.

    References
    ----------
    SimBA §3.1 (the nine); Ailem et al. §3.1 (Jaccard, Hamming for 0/1 prompt vectors).
    """
    from harness_ext.plugins.similarity import PAPER_MEASURES

    from ..plugin_manager import get_registrations

    X = np.asarray(X, dtype=float)
    vals = X[~np.isnan(X)]
    if vals.size == 0 or not np.isin(vals, (0.0, 1.0)).all():
        return tuple(PAPER_MEASURES)
    binary = [name for name, reg in get_registrations("similarity_measures").items() if reg.binary_only]
    return tuple(PAPER_MEASURES) + tuple(b for b in binary if b not in PAPER_MEASURES)


def prowl_table(
    df,
    similarities: Optional[Sequence[str]] = None,
    selector: str = "greedy_coverage",
    selector_params: Optional[dict] = None,
    target: float = 0.95,
    n_random: int = 1000,
    random_state: int = 0,
    baselines: Sequence[str] = ("greedy_minimum", "greedy_maximum"),
    ties: str = "half",
) -> ProwlReport:
    """Table 3 (+ Table 6 proportions) for one performance matrix.

    Rows: RANDOM (mean over ``n_random`` runs), the greedy baselines, then the
    selector with each similarity measure: by default SimBA's nine, plus the
    registered 0/1-only measures (Jaccard, Hamming) when every observed score
    is 0 or 1 (prompt-level correctness). A measure that cannot run on this
    matrix (e.g. Jensen-Shannon on negative scores) gets a row of NaN and its
    error in the ``note`` column. ``ties`` as :func:`win_rates`.

    References
    ----------
    SimBA §6.2 (Table 3), Appendix B (Table 6).
    """
    from harness_ext.plugins.similarity import LABELS

    X, names = _as_matrix(df)
    wr = win_rates(X, ties)
    baseline = random_baseline(X, n_runs=n_random, random_state=random_state, target=target, wr=wr, ties=ties)
    rows, results = [], {}
    rand_label = f"RANDOM (n = {baseline.n_runs})"
    reached = baseline.n_star[baseline.n_star > 0]
    rows.append({"method": rand_label, "SCAUC": float(np.nanmean(baseline.scauc)),
                 "|S*|": float(reached.mean()) if reached.size else np.nan,
                 "AUC>=random": np.nan, "Max2>=random": np.nan, "S*": "", "note": ""})
    methods = [(b, None) for b in baselines] + [(selector, s) for s in (similarities or default_measures(X))]
    frame = pd.DataFrame(X, columns=names)
    from ..report import progress

    for sel, sim in progress(methods, total=len(methods), desc="prowl"):
        try:
            res = run_prowl(frame, similarity=sim, selector=sel, target=target, random_state=random_state,
                            selector_params=selector_params if sim is not None else None, baseline=baseline, ties=ties,
                            wr=wr)
        except MethodError as exc:
            label = LABELS.get(sim, str(sim).upper()) if sim else BASELINE_LABELS.get(sel, sel)
            rows.append({"method": label, "SCAUC": np.nan, "|S*|": np.nan, "AUC>=random": np.nan,
                         "Max2>=random": np.nan, "S*": "", "note": str(exc)})
            continue
        results[res.label] = res
        rows.append({"method": res.label, "SCAUC": res.scauc, "|S*|": float(res.n_star) if res.n_star else np.nan,
                     "AUC>=random": res.auc_vs_random, "Max2>=random": res.max2_vs_random,
                     "S*": ", ".join(res.subset) if res.n_star <= 3 else f"{', '.join(res.subset[:3])}, ... (+{res.n_star - 3})",
                     "note": ""})
    table = pd.DataFrame(rows).set_index("method")
    if not table["note"].astype(bool).any():
        table = table.drop(columns="note")
    return ProwlReport(table=table, results=results, baseline=baseline, n_models=X.shape[0], n_datasets=X.shape[1])


def plot_coverage_curves(report: ProwlReport, path, title: str = ""):
    """Figure-2-style plot: coverage ``eta`` against ``|S|`` for every method, random as mean and 5-95% band."""
    from ..report import get_pyplot, save_figure

    plt = get_pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    d = report.n_datasets
    k = np.arange(1, d + 1)
    base = report.baseline
    ax.fill_between(k, base.quantile_curve(0.05), base.quantile_curve(0.95), color="0.85", label="RANDOM 5-95%")
    ax.plot(k, base.mean_curve, color="black", lw=2, ls="--", label=f"RANDOM (n = {base.n_runs}) mean")
    cmap = plt.get_cmap("tab20")
    for i, (label, res) in enumerate(report.results.items()):
        style = ":" if res.selector in BASELINE_LABELS else "-"
        ax.plot(k, res.coverage, ls=style, lw=1.4, color=cmap(i % 20), label=label, marker="o", ms=2.5)
    ax.axhline(base.target, color="red", lw=0.8, ls="-.", label=f"target {base.target:g}")
    finite = np.concatenate([r.coverage[np.isfinite(r.coverage)] for r in report.results.values()] + [base.mean_curve])
    lo = max(-1.0, float(np.min(finite)) - 0.02) if finite.size else 0.0
    ax.set_ylim(lo, 1.01)
    ax.set_xlim(1, d)
    ax.set_xlabel("|S| (datasets in the representative subset)")
    ax.set_ylabel("coverage  eta = Pearson(MWR(B), MWR(B_S))")
    ax.set_title(title or f"prowl coverage curves ({report.n_models} models x {d} datasets)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="lower right")
    return save_figure(fig, path)


# --------------------------------------------------------------------------- CLI


def run(args) -> int:
    df = matrix_from_args_safe(args)
    selector, params = args.selector, None
    if args.beam_width is not None:
        selector, params = "beam_coverage", {"beam_width": args.beam_width}
    report = prowl_table(df, similarities=args.similarity, selector=selector, selector_params=params,
                         target=args.target, n_random=args.n_random, random_state=args.random_state, ties=args.ties)
    from ..report import format_table

    bench = f"prompts {Path(args.prompts).name}" if args.prompts else ", ".join(args.benchmark or ["all benchmarks"])
    print(f"prowl: {report.n_models} models x {report.n_datasets} datasets ({bench}); "
          f"|S*| = smallest subset with coverage >= {args.target:g}; "
          f"AUC/Max2>=random = share of {report.baseline.n_runs} random runs matched or beaten")
    shown = report.table.copy()
    shown["|S*|"] = shown["|S*|"].map(lambda v: "" if pd.isna(v) else (f"{v:.1f}" if v != int(v) else f"{int(v)} of {report.n_datasets}"))
    print(format_table(shown))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report.table.to_csv(out / "prowl_table.csv")
    report.curves().to_csv(out / "prowl_curves.csv", index=False)
    png = plot_coverage_curves(report, out / "prowl_coverage.png", title=f"prowl coverage: {bench}")
    print(f"wrote {out / 'prowl_table.csv'}, {out / 'prowl_curves.csv'}, {png}")
    return 0


def matrix_from_args_safe(args):
    """The matrix from the CLI options, refusing shapes prowl cannot use."""
    from ..cli.options import matrix_from_args

    if getattr(args, "prompts", None):
        from .weighting import read_prompt_matrix

        df = read_prompt_matrix(args.prompts, args.prompts_layout)
    else:
        df = matrix_from_args(args)
    if df.shape[0] < 2 or df.shape[1] < 2:
        raise MethodError(f"prowl needs at least 2 models and 2 datasets; the matrix is {df.shape[0]} x {df.shape[1]}")
    return df
