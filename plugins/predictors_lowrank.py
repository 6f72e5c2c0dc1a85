"""Low-rank predictors in a per-dataset transformed space: the engine's own and the BenchPress baseline.

* ``lowrank``: :class:`harness_ext.methods.engine.completion.LowRankCompleter` with
  ALS (MAP); rank and regularisation by cross-validation over held-out cells;
  adaptive conformal intervals; fold-in of new models from any cells.
* ``lowrank_bayes``: the same model by Gibbs sampling (Bayesian).
* ``benchpress``: :class:`BenchPress`, Zeng & Papailiopoulos's (2026) published
  recipe re-implemented as the external baseline (:mod:`harness_ext.methods.engine.benchpress`).

References
----------
Zeng & Papailiopoulos, "You Don't Need to Run Every Eval", arXiv 2606.24020 (2026).
"""

from __future__ import annotations

import numpy as np

from harness_ext.base import BasePredictor, check_matrix, limit_threads
from harness_ext.errors import MethodError
from harness_ext.methods.engine import benchpress as bp
from harness_ext.methods.engine import benchpress_risk as bpr
from harness_ext.methods.engine.completion import IntervalPrediction, LowRankCompleter


class LowRankBayes(LowRankCompleter):
    """:class:`LowRankCompleter` with ``method="gibbs"`` by default (registered as ``lowrank_bayes``)."""

    def __init__(self, method: str = "gibbs", rank="auto", lam="auto", lam_bias: float = 0.1,
                 ranks=(1, 2, 3, 5), lams=(0.3, 1.0, 3.0, 10.0), cv_folds: int = 3, scales="cv", scale_meta=None,
                 eps: float = 0.01, level: float = 0.9, calibration_folds: int = 5, n_burnin: int = 150,
                 n_samples: int = 150, thin: int = 3, max_iter: int = 100, bp_mix="auto", random_state: int = 0):
        super().__init__(method=method, rank=rank, lam=lam, lam_bias=lam_bias, ranks=ranks, lams=lams,
                         cv_folds=cv_folds, scales=scales, scale_meta=scale_meta, eps=eps, level=level,
                         calibration_folds=calibration_folds, n_burnin=n_burnin, n_samples=n_samples, thin=thin,
                         max_iter=max_iter, bp_mix=bp_mix, random_state=random_state)


class BenchPress(BasePredictor):
    """BenchPress (Zeng & Papailiopoulos, 2026) as published: logit bias ALS, rank 2, lambda 0.1, conformal 90% intervals.

    The completion is BenchPress's own recipe (:mod:`harness_ext.methods.engine.benchpress`):
    per-column logit of percentage columns, z-scores, the bias-decomposed
    rank-2 model ``mu + a_i + c_j + U_i . V_j`` fitted by 40 sweeps of
    alternating ridge regressions (penalty 0.1 on biases and factors) from 10
    seeded random starts, averaged. Intervals are its hybrid risk model (the
    matrix support of a cell and the disagreement of 15 other completions of the
    matrix there; :mod:`harness_ext.methods.engine.benchpress_risk`) scaled by a
    leave-fold-out conformal multiplier, trained on the paper's 30 per-model
    holdout folds of the matrix being completed.

    A new model is added to the matrix as a row and the whole matrix
    completed again, as BenchPress's ``predict.py --add-model`` does (several
    new models are added together).

    Parameters
    ----------
    rank, lam, n_iter, n_ensemble, base_seed : BenchPress's published values (2, 0.1, 40, 10, 42).
    level : float
        Interval level (the paper's 0.9).
    intervals : {"hybrid", "support"}
        The risk model's features: ``hybrid`` (BenchPress's default, matrix
        support and the completers' disagreement) or ``support`` (the matrix
        support alone: 15 times fewer completions to calibrate).
    risk_models : tuple of str
        Risk-model candidates, among ``ridge``, ``mlp16``, ``mlp32``, ``mlp64_32``
        (the paper's four, chosen on an inner split of the folds). The default,
        ridge alone, is the paper's first candidate and costs no network fits.
    random_state : int
        Unused: BenchPress fixes its seeds (``base_seed``); kept so every predictor takes it.

    References
    ----------
    Zeng & Papailiopoulos, "You Don't Need to Run Every Eval", arXiv 2606.24020 (2026), §4.2 (logit bias
    ALS), §4.4 (confidence calibration).
    """

    def __init__(self, rank: int = bp.RANK, lam: float = bp.LAM, n_iter: int = bp.N_ITER,
                 n_ensemble: int = bp.N_ENSEMBLE, base_seed: int = bp.BASE_SEED, level: float = bp.LEVEL,
                 intervals: str = "hybrid", risk_models=("ridge",), random_state: int = 0):
        self.rank = rank
        self.lam = lam
        self.n_iter = n_iter
        self.n_ensemble = n_ensemble
        self.base_seed = base_seed
        self.level = level
        self.intervals = intervals
        self.risk_models = risk_models
        self.random_state = random_state

    def _als(self):
        return dict(rank=int(self.rank), lam=float(self.lam), n_iter=int(self.n_iter),
                    n_ensemble=int(self.n_ensemble), base_seed=int(self.base_seed))

    def fit(self, X):
        kinds = bp.check_kinds(self.risk_models)
        if self.intervals not in ("hybrid", "support"):
            raise MethodError(f"intervals must be 'hybrid' or 'support', got {self.intervals!r}")
        calibrate = bpr.calibrate_hybrid if self.intervals == "hybrid" else bp.calibrate
        with limit_threads():
            X = check_matrix(X)
            self.factor_ = bp.points_factor(X)
            self.X_ = X
            self.calibration_ = calibrate(X * self.factor_, kinds=kinds, level=float(self.level),
                                             seed=int(self.base_seed), **self._als())
            self.q_ = self.calibration_.scale
            self.mean_, self.lower_, self.upper_, self.std_ = bp.completed_matrix(X, self.factor_, self.calibration_,
                                                                                 **self._als())
        return self

    def predict_new_models(self, X_new, weights=None, calibrate: bool = True) -> IntervalPrediction:
        """Add the new models as rows, complete the matrix again, and give their cells' conformal intervals.

        ``calibrate=False`` skips the intervals (the bounds equal the predictions). See
        :func:`harness_ext.methods.engine.benchpress.predict_added_models`.
        """
        if not hasattr(self, "calibration_"):
            raise MethodError("BenchPress is not fitted: call fit(X) first")
        X_new = np.atleast_2d(np.asarray(X_new, dtype=float))
        if X_new.shape[1] != self.X_.shape[1]:
            raise MethodError(f"new models have {X_new.shape[1]} datasets, the fit has {self.X_.shape[1]}")
        with limit_threads():
            return bp.predict_added_models(self.X_, X_new, self.factor_, self.calibration_, self.level, weights,
                                           calibrate, **self._als())
