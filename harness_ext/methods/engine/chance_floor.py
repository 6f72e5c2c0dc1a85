"""Predicted scores mapped back past the floor at chance: a censored-normal (Tobit) reading of the floor.

Normalisation floors a score below chance at chance (``z = max(0, y)`` on the normalised scale), and the
predictors are fitted on the floored scores, so what they predict for a dataset is a floored score: never
below chance. A benchmark's own score (MMLU's ``acc``) counts a score below chance as it is, and models near
chance score below it on many datasets: the floored prediction then runs high. Read as a censored normal
(Tobin, 1958), a latent score ``y ~ N(mu, sigma_j^2)`` floored at 0 has the mean

    E[max(0, y)] = mu Phi(mu / sigma_j) + sigma_j phi(mu / sigma_j),

increasing in ``mu``. :class:`ChanceFloor` takes a predicted floored score ``m`` as that mean and returns the
``mu`` that gives it: the prediction on the unfloored scale, below chance where ``m`` is below what chance
alone would give (``0.399 sigma_j``), ``m`` itself far above the floor. ``sigma_j``, the spread of a score
around chance, is read from the training models' own scores below chance in dataset ``j`` (their root mean
square: a half-normal's scale); a dataset where no training model scored below chance is left as it is, and
``mu`` is kept at or above the lowest score any training model had there.

References
----------
Tobin (1958), "Estimation of relationships for limited dependent variables", Econometrica 26(1), eq. (2)
(the censored normal's mean); Amemiya (1984), "Tobit models: a survey", J. Econometrics 24, §2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ChanceFloor"]

#: Newton steps of the inversion; from the right, on the convex mean, each step stays at or above the root.
_STEPS = 60


@dataclass(frozen=True)
class ChanceFloor:
    """The map from predicted floored scores to the unfloored scale, per dataset (see the module docstring).

    ``spread`` (d,): each dataset's ``sigma_j`` (0: left as it is); ``low`` (d,): the lowest unfloored score of
    a training model there (``mu`` stays at or above it); ``count`` (d,): the training scores below chance
    ``sigma_j`` was read from.
    """

    spread: np.ndarray
    low: np.ndarray
    count: np.ndarray

    @classmethod
    def from_truth(cls, truth: np.ndarray, floored: np.ndarray) -> "ChanceFloor":
        """From the training matrix's unfloored scores ``truth`` (m, d; NaN where missing) and which datasets
        normalisation floors at chance (``floored``, (d,) bool).

        References
        ----------
        Johnson, Kotz and Balakrishnan (1994), Continuous Univariate Distributions 1, §13.10 (the half-normal's
        scale is the root mean square of its values).
        """
        t = np.asarray(truth, dtype=float)
        below = (t < 0) & np.asarray(floored, dtype=bool)[None, :]
        count = below.sum(axis=0)
        ss = np.where(below, t, 0.0)
        spread = np.sqrt((ss ** 2).sum(axis=0) / np.maximum(count, 1))
        return cls(spread=spread, low=ss.min(axis=0), count=count)

    @property
    def active(self) -> bool:
        """Whether any dataset is mapped (a training model scored below chance somewhere)."""
        return bool((self.spread > 0).any())

    def key(self) -> bytes:
        """Bytes that identify the map (a calibration cache key)."""
        return self.spread.tobytes() + self.low.tobytes()

    def shared(self, share):
        """The map taken by ``share`` per row (n,): ``m + share (mu(m) - m)``, increasing like the map itself;
        None (no share chosen) leaves the scores as they are."""
        if share is None:
            return None
        s = np.asarray(share, dtype=float)[:, None]
        return lambda m: m + s * (self(m) - m)

    def __call__(self, m: np.ndarray) -> np.ndarray:
        """``mu`` (same shape as ``m``, (n, d)) with ``E[max(0, N(mu, sigma_j^2))] = m``, kept at or above ``low``.

        References
        ----------
        Tobin (1958), eq. (2).
        """
        from scipy.special import ndtr

        m = np.asarray(m, dtype=float)
        s = np.broadcast_to(self.spread, m.shape)
        on = (s > 0) & np.isfinite(m)
        if not on.any():
            return m
        s_on = s[on]
        r = np.maximum(m[on], 0.0) / s_on
        a_low = np.broadcast_to(self.low, m.shape)[on] / s_on
        # g(a) = a Phi(a) + phi(a) is increasing and convex (g' = Phi, g'' = phi): Newton from a = r >= root stays
        # at or above the root; stopping at a_low keeps mu inside what the training models scored.
        a = r.copy()
        for _ in range(_STEPS):
            g = a * ndtr(a) + np.exp(-0.5 * a * a) / np.sqrt(2.0 * np.pi)
            a = np.maximum(a - (g - r) / np.maximum(ndtr(a), 1e-300), a_low)
        out = m.copy()
        out[on] = a * s_on
        return out
