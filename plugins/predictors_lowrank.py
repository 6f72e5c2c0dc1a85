"""Low-rank predictors in a per-dataset transformed space: the engine's own and the BenchPress baseline.

* ``lowrank``: :class:`harness_ext.methods.completion.LowRankCompleter` with
  ALS (MAP); rank and regularisation by cross-validation over held-out cells;
  adaptive conformal intervals; fold-in of new models from any cells.
* ``lowrank_bayes``: the same model by Gibbs sampling (Bayesian).
* ``benchpress``: :class:`BenchPress`, a re-implementation of Zeng &
  Papailiopoulos (arXiv 2606.24020) as a baseline.

References
----------
Zeng & Papailiopoulos, "You Don't Need to Run Every Eval", arXiv 2606.24020.
"""

from __future__ import annotations

import numpy as np

from harness_ext.base import BasePredictor, check_matrix, limit_threads
from harness_ext.errors import MethodError
from harness_ext.methods.completion import IntervalPrediction, LowRankCompleter
from harness_ext.methods.conformal import Z90, conformal_quantile
from harness_ext.methods.lowrank import fit_als
from harness_ext.methods.transforms import ScaleTransform


class LowRankBayes(LowRankCompleter):
    """:class:`LowRankCompleter` with ``method="gibbs"`` by default (registered as ``lowrank_bayes``)."""

    def __init__(self, method: str = "gibbs", rank="auto", lam="auto", lam_bias: float = 0.1,
                 ranks=(1, 2, 3, 5), lams=(0.3, 1.0, 3.0, 10.0), cv_folds: int = 3, scales="cv", scale_meta=None,
                 eps: float = 0.01, level: float = 0.9, calibration_folds: int = 5, n_burnin: int = 150,
                 n_samples: int = 150, thin: int = 3, max_iter: int = 100, random_state: int = 0):
        super().__init__(method=method, rank=rank, lam=lam, lam_bias=lam_bias, ranks=ranks, lams=lams,
                         cv_folds=cv_folds, scales=scales, scale_meta=scale_meta, eps=eps, level=level,
                         calibration_folds=calibration_folds, n_burnin=n_burnin, n_samples=n_samples, thin=thin,
                         max_iter=max_iter, random_state=random_state)


class BenchPress(BasePredictor):
    """BenchPress (Zeng & Papailiopoulos 2606.24020), re-implemented as a baseline.

    What the paper describes, and what is implemented:

    * scores are mapped to logit space (``logit(p)``, ``p`` the score as a
      proportion, clipped to ``[eps, 1 - eps]``); columns that are not
      proportions or percentages (Elo, judge scores) are z-scored, as the paper
      handles non-percentage benchmarks by rescaling;
    * ``z_ij = mu + a_i + b_j + u_i . v_j`` with rank 2, fitted by alternating
      least squares with a fixed ridge penalty on the factors (``lam``; the
      paper's value is not given in what we could retrieve, 1.0 is used) and a
      small one on the offsets;
    * a new model is placed by the same ridge solve on its observed cells
      (the ALS row update with the columns fixed);
    * 90% intervals are split-conformal: the ``ceil((n+1) 0.9)``-th absolute
      logit-space residual of held-out observed cells (K folds), one width for
      every cell, mapped back through the inverse logit.

    Differences from the engine's ``lowrank``: fixed rank and penalty (no
    cross-validation), no chance floor, a MAP (penalty-prior) fold-in, and
    intervals of one width in logit space instead of adaptive ones.

    References
    ----------
    Zeng & Papailiopoulos, arXiv 2606.24020, §3 (logit-space rank-2 ALS with
    global, model and benchmark offsets), §4 (confidence layer).
    """

    def __init__(self, rank: int = 2, lam: float = 1.0, lam_bias: float = 0.1, eps: float = 0.01, level: float = 0.9,
                 calibration_folds: int = 5, max_iter: int = 100, random_state: int = 0):
        self.rank = rank
        self.lam = lam
        self.lam_bias = lam_bias
        self.eps = eps
        self.level = level
        self.calibration_folds = calibration_folds
        self.max_iter = max_iter
        self.random_state = random_state

    def _als(self, Z, seed=0):
        return fit_als(Z, rank=self.rank, lam=self.lam, lam_bias=self.lam_bias, max_iter=self.max_iter,
                       random_state=self.random_state + seed)

    def fit(self, X):
        with limit_threads():
            return self._fit(check_matrix(X))

    def _fit(self, X):
        obs = ~np.isnan(X)
        self.transform_ = ScaleTransform(eps=self.eps).fit(X)
        Z = self.transform_.transform(X)
        self.X_, self.Z_ = X, Z
        self.fit_ = self._als(Z)
        zhat = self.fit_.mean()
        # Split-conformal over K folds of held-out observed cells: absolute logit residuals.
        idx = np.flatnonzero(obs.ravel())
        K = int(self.calibration_folds)
        if K >= 2 and idx.size >= 2 * K:
            fold = np.random.default_rng(self.random_state + 7919).permutation(idx.size) % K
            res = []
            for f in range(K):
                hide = idx[fold == f]
                Zt = Z.ravel().copy()
                Zt[hide] = np.nan
                pred = self._als(Zt.reshape(Z.shape), seed=f + 1).mean().ravel()[hide]
                res.append(np.abs(pred - Z.ravel()[hide]))
            self.q_ = conformal_quantile(np.concatenate(res), self.level, conservative=True)
        else:
            resid = np.abs(zhat - Z)[obs]
            self.q_ = conformal_quantile(resid, self.level, conservative=True) if resid.size else 1.0
        lo_x, hi_x = self.transform_.inverse_interval(zhat - self.q_, zhat + self.q_)
        self.mean_ = np.where(obs, X, self.transform_.inverse_transform(zhat))
        self.lower_ = np.where(obs, X, lo_x)
        self.upper_ = np.where(obs, X, hi_x)
        self.std_ = np.where(obs, 0.0, (self.upper_ - self.lower_) / (2 * Z90))
        return self

    def predict_new_models(self, X_new, weights=None, calibrate: bool = True) -> IntervalPrediction:
        """Place new models by the ALS row update on their observed cells; conformal cell intervals.

        The aggregate (when ``weights`` are given) is the weighted sum of the
        predictions; BenchPress defines no aggregate interval, so the bounds
        are the weighted sums of the cell bounds (conservative).
        """
        if not hasattr(self, "fit_"):
            raise MethodError("BenchPress is not fitted: call fit(X) first")
        X_new = np.atleast_2d(np.asarray(X_new, dtype=float))
        O = ~np.isnan(X_new)
        z = self.transform_.transform(X_new)
        f = self.fit_
        V, b, r = f.V[0], f.b[0], f.rank
        Xd = np.concatenate([V, np.ones((V.shape[0], 1))], axis=1)
        prior = np.r_[np.full(r, float(self.lam)), float(self.lam_bias)]
        A = np.einsum("nj,jk,jl->nkl", O.astype(float), Xd, Xd) + np.diag(prior)[None]
        rhs = np.einsum("nj,jk->nk", np.where(O, z - f.mu - b, 0.0), Xd)
        w = np.linalg.solve(A, rhs[:, :, None])[:, :, 0]
        zhat = w @ Xd.T + f.mu + b
        lo_x, hi_x = self.transform_.inverse_interval(zhat - self.q_, zhat + self.q_)
        mean = np.where(O, X_new, self.transform_.inverse_transform(zhat))
        lower = np.where(O, X_new, lo_x)
        upper = np.where(O, X_new, hi_x)
        sd = np.where(O, 0.0, (upper - lower) / (2 * Z90))
        agg = lo = hi = None
        if weights is not None:
            wt = np.asarray(weights, dtype=float)
            agg, lo, hi = mean @ wt, lower @ wt, upper @ wt
        return IntervalPrediction(mean, lower, upper, sd, O, agg, lo, hi, float(self.level), float(self.q_), None,
                                  (0, 0))
