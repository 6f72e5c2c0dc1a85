"""SimBA's RANDOM baseline: the coverage curves of many random dataset orders, in one vectorised pass.

References
----------
SimBA §3.2 "Baselines" (1000 random runs), Table 3, Table 6.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import MethodError
from ...report import progress
from .coverage import _coverage_of, n_star, prefix_mean_win_rates, scauc, win_rates

# (m, runs, d) float blocks of the random baseline are capped at ~32 MB.
_CHUNK_ELEMENTS = 4_000_000


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
        for start in progress(range(0, n_runs, step), desc="prowl random baseline"):
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
    for r in progress(range(runs), desc="prowl random baseline"):  # one d x d pass per run; the rest is vectorised over runs
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
