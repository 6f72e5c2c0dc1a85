"""The prediction engine: transform per dataset, fit a biased low-rank model, fold in new models, conformal intervals.

:class:`LowRankCompleter` is a predictor (``fit(X)`` sets ``mean_`` and
``std_`` like every registered predictor) with two additions that
``reduce``/``predict`` and the selectors call:

* intervals on each dataset's own scale for the fitted matrix (``lower_``,
  ``upper_``), conformalised over held-out observed cells;
* :meth:`LowRankCompleter.predict_new_models`: new models with any subset of
  cells observed are folded in; cell and aggregate intervals are
  conformalised by K-fold over the training models, each held-out model
  observed on the same cells as a new model, so the calibration matches the
  situation of the prediction.

Intervals are adaptive: the conformal score is the residual divided by the
model's own predictive sd, so a model with fewer observed cells (larger fold-in
posterior) gets a wider interval.

A new model's mean blends the fold-in with a direct regression (ridge from the
datasets the model has to every other dataset, on the low-rank-completed
training matrix, penalty per target by leave-one-out or GCV; :mod:`.direct_ridge`): the fold-in is limited to
the rank of the fit, the regression is not. The blend weight is chosen with
the rank in the same held-out-model folds that calibrate the intervals.

References
----------
Lei et al. (JASA 2018) §5.2 (locally weighted split conformal); Hastie,
Tibshirani & Friedman, *Elements of Statistical Learning* (2009), eq. 7.52
(generalised cross-validation of a linear smoother); Zeng &
Papailiopoulos (arXiv 2606.24020) §3-4 (logit-space biased low-rank completion
with conformal intervals); Salakhutdinov & Mnih (ICML 2008).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ...base import BasePredictor, check_level, check_matrix, limit_threads
from ...errors import MethodError
from .conformal import Z90, IntervalPrediction, _normal_quantile, conformal_quantile, mondrian_quantiles, normalised_scores
from .lowrank import DEFAULT_LAMS, DEFAULT_RANKS, RankEnsemble, fit_als, fit_gibbs, fold_in
from .lowrank import MAX_CV_ROWS, select_rank_lam  # noqa: F401 - importable from here as before the settings moved
from .direct_ridge import BLEND_GRID, CELL_FLOPS_BUDGET, cell_regression_flops  # noqa: F401 - as above
from .direct_ridge import direct_predict, ridge_design
from .transforms import DEFAULT_EPS, ColumnScaled, as_transform
from .cell_cv import _cell_cv_error, _cell_cv_errors  # noqa: F401 - the cell CV behind transform, blend, ensemble
from .completion_mix import MEMBERS, mixed_cells, mixed_fold
from .completion_settings import choose_scales, fixed_settings
from .completion_settings import (  # noqa: F401 - the settings search's budgets, importable from here as before
    MIN_SETTINGS_ROWS, SCALE_CANDIDATES, SEARCH_SWEEPS, SETTINGS_FLOPS_BUDGET, settings_search_flops)

__all__ = ["LowRankCompleter", "IntervalPrediction", "direct_predict", "settings_search_flops"]

#: Weight used where no held-out-model calibration chose one (selection's inner CV).
BLEND_UNCALIBRATED = 0.5


class LowRankCompleter(BasePredictor):
    """Biased low-rank completion in a per-dataset transformed space, with conformal intervals.

    Parameters
    ----------
    method : {"als", "gibbs"}
        MAP by alternating least squares, or Bayesian by Gibbs sampling.
    rank, lam : int/float or "auto"
        ``"auto"`` chooses them by ``cv_folds``-fold cross-validation over held-out
        observed cells of the matrix given to ``fit`` (grid ``ranks`` x ``lams``).
        Gibbs samples its factor precision, so ``lam`` only matters for ALS
        (and for choosing the rank).
    lam_bias : float
        Penalty on the model and dataset biases.
    scales : "cv", None, "auto", str, list, dict
        Per-dataset transforms (:func:`harness_ext.methods.engine.transforms.as_transform`):
        detected (``"auto"``), a kind for all, per-column overrides, or a stored
        ``ScaleTransform.to_dict()``. ``"cv"`` (default) chooses between the
        candidates of ``SCALE_CANDIDATES`` (detected, i.e. logit for bounded
        scores; or a z-score of every column) by the same K-fold cross-validation
        over held-out observed cells, scored on each dataset's own scale (the median
        over held-out cells of the absolute error over the column's sd: a few
        near-zero scores of broken runs sit at the logit clip and make huge errors,
        which decided a mean for the z-score on matrices where the logit predicts
        the typical cell better).
    scale_meta : list of dict, optional
        Per-dataset metadata for detection (``min_score``, ``max_score``, ``random_baseline``).
    eps : float
        Proportion clip before the logit.
    level : float
        Nominal coverage of the intervals (0.9).
    calibration_folds : int
        Folds of held-out cells (``fit``) or models (:meth:`predict_new_models`)
        behind the conformal quantile; 0 uses the raw predictive sd with a normal quantile.
    n_burnin, n_samples, thin : int
        Gibbs settings.
    max_iter : int
        ALS sweeps.
    blend : "auto" or float
        Weight of the direct regression in a new model's prediction (0: fold-in
        only). ``"auto"`` chooses it from ``BLEND_GRID`` with the rank, on the
        held-out training models of :meth:`predict_new_models`' calibration;
        uncalibrated predictions (selection's inner CV) use 0.5.
    cell_blend : "auto" or float
        The same blend for the fitted matrix's missing cells (``mean_``): each
        model's direct regression from its own observed cells. ``"auto"``
        chooses it from ``BLEND_GRID`` in the cross-validation over held-out
        cells that chooses the transform.
    mondrian : bool
        Conformal quantile per dataset (Mondrian) where a dataset has at least
        ``MIN_GROUP_SCORES`` calibration cells, the pooled one elsewhere: datasets
        whose normalised errors run larger than the others' keep their coverage.
    column_scale : bool
        Z-score each transformed column over its observed cells before the fit
        (and undo it after), so every dataset weighs alike in the least-squares
        fit and the penalties mean the same on every column. Cross-validated
        on the shared matrices: lower held-out error on HELM Classic and CrossPred.
    new_intervals : {"cv+", "split"}
        New models' calibrated intervals: CV+ over the model folds (each score applied
        to the fold fit it was held out of, :mod:`~harness_ext.methods.engine.newmodel_intervals`),
        or the split-conformal multiplier around the fit on all training models.
    frontier : bool
        Flag new models whose subset lies beyond the training models' range and give them a
        prediction and intervals calibrated on frontier folds (:mod:`~harness_ext.methods.engine.frontier`).
    bp_mix : "auto" or float
        Weight of BenchPress's completion (Zeng & Papailiopoulos, 2026) against the engine's in the fitted matrix's
        missing cells (``mean_``, cell intervals; not new models); ``"auto"``: the engine's, BenchPress's, a column
        ridge regression's and a nearest-models residual correction's completions, stacked with weights from nested
        CV (:mod:`.completion_mix`).
    random_state : int
        Seeds the CV folds, the calibration folds and the sampler.

    Attributes
    ----------
    mean_, std_ : numpy.ndarray
        The :class:`~harness_ext.types.Predictor` contract, own scale; ``std_`` is
        the conformal half-width divided by the normal 90% quantile (so
        ``1.645 * std_`` is the calibrated half-width, as ``predict`` uses it).
    lower_, upper_ : numpy.ndarray
        Calibrated interval per cell (observed cells: the value itself).
    transform_ : ScaleTransform
    rank_, lam_ : int, float
    cv_ : dict
        The cross-validation behind ``rank_``/``lam_`` (``None`` when given).
    q_cells_ : float
        Conformal multiplier of the predictive sd for held-out cells.
    mix_weights_ : tuple of float
        Weights of the completers of :data:`~harness_ext.methods.engine.completion_mix.MEMBERS` in ``mean_``
        (chosen on first use).
    bp_mix_ : float
        The weight of BenchPress's completion in ``mean_``.
    """

    def __init__(self, method: str = "als", rank="auto", lam="auto", lam_bias: float = 0.1, ranks=DEFAULT_RANKS,
                 lams=DEFAULT_LAMS, cv_folds: int = 3, scales="cv", scale_meta=None, eps: float = DEFAULT_EPS,
                 level: float = 0.9, calibration_folds: int = 5, n_burnin: int = 150, n_samples: int = 150,
                 thin: int = 3, max_iter: int = 100, column_scale: bool = True, blend="auto", cell_blend="auto",
                 mondrian: bool = True, new_intervals: str = "cv+", frontier: bool = True, bp_mix="auto",
                 random_state: int = 0):
        self.method = method
        self.rank = rank
        self.lam = lam
        self.lam_bias = lam_bias
        self.ranks = ranks
        self.lams = lams
        self.cv_folds = cv_folds
        self.scales = scales
        self.scale_meta = scale_meta
        self.eps = eps
        self.level = level
        self.calibration_folds = calibration_folds
        self.n_burnin = n_burnin
        self.n_samples = n_samples
        self.thin = thin
        self.max_iter = max_iter
        self.column_scale = column_scale
        self.blend = blend
        self.cell_blend = cell_blend
        self.mondrian = mondrian
        self.new_intervals = new_intervals
        self.frontier = frontier
        self.bp_mix = bp_mix
        self.random_state = random_state

    # -- fitting -------------------------------------------------------------------------
    def _fit_z(self, Z, seed_offset: int = 0, rank: Optional[int] = None):
        rank = self.rank_ if rank is None else int(rank)
        als = fit_als(Z, rank=rank, lam=self.lam_, lam_bias=self.lam_bias, max_iter=self.max_iter,
                      random_state=self.random_state + seed_offset)
        if self.method == "als":
            return als
        return fit_gibbs(Z, rank=rank, n_burnin=self.n_burnin, n_samples=self.n_samples, thin=self.thin,
                         lam_bias=self.lam_bias, random_state=self.random_state + seed_offset, init=als)

    def _cell_fit(self, Z, seed_offset: int = 0, fit=None):
        """``(fit, mean, sd, cells)`` of the fitted matrix's cells: the single ``fit`` and its sd; its mean, or the
        rank ensemble's when the cell cross-validation chose one (ALS); ``cells``, the fit the cells' direct
        regression uses (that ensemble, else ``fit``). New models use the single ``fit`` (``fit``: already made)."""
        fit = self._fit_z(Z, seed_offset) if fit is None else fit
        mean, sd = fit.predictive()
        ens = self.scales_cv_.get("ensemble")
        if not ens:
            return fit, mean, sd, fit
        # The chosen rank's member is the single fit (the same fit_als call in _fit_z): not fitted twice.
        same = self.method == "als" and ens["lam"] == self.lam_
        avg = RankEnsemble(fit if same and r == self.rank_ else
                           fit_als(Z, rank=r, lam=ens["lam"], lam_bias=self.lam_bias, max_iter=self.max_iter,
                                   random_state=self.random_state + seed_offset) for r in ens["ranks"])
        return fit, avg.mean(), sd, avg

    def with_fixed_settings(self, X) -> "LowRankCompleter":
        """A copy with rank and penalty fixed to what cross-validation chooses on ``X``.

        Evaluation loops that refit on many subsets of the same models (``reduce``'s
        model folds, the selector's objective) call this once and fit the copy in
        every fold, instead of repeating the rank/penalty search inside each fold.
        The copy's ``get_params()`` record the chosen values.
        """
        return fixed_settings(self, X)

    def _transform_for(self, spec, X):
        t = as_transform(spec, X, self.scale_meta, self.eps)
        return t, (ColumnScaled(t, X) if self.column_scale else t)

    def fit(self, X, settings=None):
        """Fit on ``X`` (models x datasets, NaN where not run).

        ``settings``: ``(spec, info, rank_cv)`` as :func:`~harness_ext.methods.engine.completion_settings.choose_scales`
        returns them, chosen on this same ``X`` with these parameters (a manifest records ``reduce``'s choice:
        ``predict`` passes it back instead of choosing again, which is most of its time on a large matrix).
        """
        with limit_threads():  # small batched solves: extra BLAS threads only contend on a busy machine
            return self._fit(check_matrix(X), settings)

    def _fit(self, X, settings=None):
        if self.method not in ("als", "gibbs"):
            raise MethodError(f"method must be 'als' or 'gibbs', got {self.method!r}")
        if self.new_intervals not in ("cv+", "split"):
            raise MethodError(f"new_intervals must be 'cv+' or 'split', got {self.new_intervals!r}")
        check_level(self.level, type(self).__name__)
        obs = ~np.isnan(X)
        if obs.sum() < 2:
            raise MethodError("the matrix has fewer than two observed cells")
        self.scales_, self.scales_cv_, self.cv_ = choose_scales(self, X) if settings is None else settings
        self.cell_blend_ = self.scales_cv_["cell_blend"]
        self.scale_transform_, self.transform_ = self._transform_for(self.scales_, X)
        Z = self.transform_.transform(X)
        if self.cv_ is not None:
            self.rank_, self.lam_ = int(self.cv_["rank"]), float(self.cv_["lam"])
        else:
            self.rank_, self.lam_ = int(self.rank), float(self.lam)
        self.X_, self.Z_ = X, Z
        self.__dict__.pop("_intervals", None)
        self.__dict__.pop("_cal_cache", None)
        self.__dict__.pop("_fits_by_rank", None)
        self.__dict__.pop("_mix_cache", None)
        self.__dict__.pop("_cells_cache", None)
        self.fit_ = self._fit_z(Z)
        return self

    def _cells(self):
        """``(mean_z, sd_z, own_mean)`` of the fitted matrix's cells (rank ensemble and cell blend included), made on
        first use: a fit that only folds new models in (reduce's model folds: the selection's and the calibration's,
        about sixty per reduce) never needs them, and on sparse matrices the cell blend's regression of every row
        from its own cells was most of such a fit."""
        if "_cells_cache" not in self.__dict__:
            X, Z = self.X_, self.Z_
            with limit_threads():
                _, mean_z, sd_z, cells = self._cell_fit(Z, fit=self.fit_)
                if self.cell_blend_ > 0:
                    mean_z = self._blend(mean_z, cells, Z, Z, self.cell_blend_)
                self._cells_cache = (mean_z, sd_z, np.where(~np.isnan(X), X, self.transform_.inverse_transform(mean_z)))
        return self._cells_cache

    _mean_z = property(lambda self: self._cells()[0])
    _sd_z = property(lambda self: self._cells()[1])
    _own_mean = property(lambda self: self._cells()[2])

    def _fold_fit(self, Zt, seed_offset: int):
        """``(mean, sd)`` of a fold's training matrix ``Zt`` at the chosen settings (cell blend included; transformed space)."""
        _, mean, sd, cells = self._cell_fit(Zt, seed_offset=seed_offset)
        return self._blend(mean, cells, Zt, Zt, self.cell_blend_), sd

    def _mixed(self):  # on first use of mean_: reduce's folds (new models only) skip the mix's cv_folds fits
        if "_mix_cache" not in self.__dict__:
            with limit_threads():
                self._mix_cache = mixed_cells(self)
        return self._mix_cache

    mean_ = property(lambda self: self._mixed()[0])
    mix_weights_ = property(lambda self: self._mixed()[2], doc="Weights of the completers in ``mean_`` "
                            "(:data:`~harness_ext.methods.engine.completion_mix.MEMBERS`).")
    bp_mix_ = property(lambda self: self._mixed()[2][1])
    bp_mix_cv_ = property(lambda self: self._mixed()[3], doc="The CV behind ``mix_weights_`` (None when ``bp_mix`` is given).")

    # Cell intervals need K calibration refits: computed on first use, so a caller that only
    # predicts new models (predict_new_models calibrates its own way) does not pay for them.
    def _cell_intervals(self):
        if "_intervals" not in self.__dict__:
            with limit_threads():
                mean_z = self._mixed()[1]
                self.q_cells_, self.q_by_dataset_, self.n_cal_cells_ = self._calibrate_cells(self.Z_)
            q = self.q_by_dataset_[None, :]
            lo_x, hi_x = self.transform_.inverse_interval(mean_z - q * self._sd_z, mean_z + q * self._sd_z)
            obs = ~np.isnan(self.X_)
            lower, upper = np.where(obs, self.X_, lo_x), np.where(obs, self.X_, hi_x)
            self._intervals = (lower, upper, np.where(obs, 0.0, (upper - lower) / (2 * Z90)))
        return self._intervals

    @property
    def lower_(self):
        return self._cell_intervals()[0]

    @property
    def upper_(self):
        return self._cell_intervals()[1]

    @property
    def std_(self):
        return self._cell_intervals()[2]

    def _calibrate_cells(self, Z):
        """Conformal multipliers from K folds of held-out observed cells (refits with the chosen rank/lam).

        Returns ``(pooled q, per-dataset q (d,), n_scores)``; per dataset with
        ``mondrian`` (:func:`~harness_ext.methods.engine.conformal.mondrian_quantiles`), else the pooled one.
        """
        K = int(self.calibration_folds)
        d = Z.shape[1]
        if K < 2:
            q = Z90 if self.level == 0.9 else _normal_quantile(self.level)
            return q, np.full(d, q), 0
        idx = np.flatnonzero(~np.isnan(Z).ravel())
        rng = np.random.default_rng(self.random_state + 7919)
        fold = rng.permutation(idx.size) % K
        scores, cols = [], []
        for f in range(K):
            hide = idx[fold == f]
            Zt = Z.ravel().copy()
            Zt[hide] = np.nan
            Zt = Zt.reshape(Z.shape)
            mean, sd = self._fold_fit(Zt, seed_offset=f + 1)
            mean = mixed_fold(self, Zt, mean)  # the cells' centre is the mix: calibrate the mix
            # every hidden cell has finite truth, mean and sd, so scores and columns stay aligned
            scores.append(normalised_scores(Z.ravel()[hide], mean.ravel()[hide], sd.ravel()[hide]))
            cols.append(hide % d)
        scores, cols = np.concatenate(scores), np.concatenate(cols)
        q = conformal_quantile(scores, self.level)
        by = mondrian_quantiles(scores, cols, d, self.level) if self.mondrian else np.full(d, q)
        return q, by, int(scores.size)

    # -- new models ----------------------------------------------------------------------
    def predict_new_models(self, X_new, weights=None, calibrate: bool = True, reselect=None,
                           extra_weights=None, extra_truth=None) -> IntervalPrediction:
        """Fold in new models observed on any subset of cells; calibrated cell and aggregate intervals.

        Parameters
        ----------
        X_new : array-like, (n, d) or (d,)
            New models' scores on the fitted datasets' own scales, NaN where not run.
        weights : array-like, (d,) or (n, d), optional
            Dataset weights of the aggregate ``sum_j w_j x_j`` (one row per new model
            for per-model weights; calibration then uses ``newmodel_intervals.calibration_weights``);
            None skips the aggregate.
        calibrate : bool
            Conformalise by K-fold over the training models (each held out with
            a new model's pattern of observed cells). False uses the predictive
            sd with the normal quantile.
        reselect : callable, optional
            ``reselect(rows) -> subset``: the selection that chose the new models' subset,
            run on training models ``rows`` (indices into the fitted matrix). Each
            calibration fold's models are then observed on the subset chosen without
            them, so the intervals hold for select-then-predict (models that chose a
            subset predict it better than new models do).
        extra_weights : array-like, (k, d), optional
            ``k`` further aggregates (with ``weights``; e.g. the benchmark's own score), calibrated
            on the same held-out folds: ``extra_aggregate``/``extra_lower``/``extra_upper`` (n, k).
        extra_truth : array-like, (m, d), optional
            The training models' values the ``extra_weights`` aggregates are scored against in the
            calibration (default the fitted matrix): e.g. scores below chance as they are, where the
            fitted matrix floors them at chance and the further aggregate (MMLU's accuracy) does not.

        Returns
        -------
        IntervalPrediction
        """
        with limit_threads():
            return self._predict_new(X_new, weights, calibrate, reselect, extra_weights, extra_truth)

    def _predict_new(self, X_new, weights, calibrate, reselect=None, extra_weights=None, extra_truth=None):
        self._check_fitted()
        X_new = np.atleast_2d(np.asarray(X_new, dtype=float))
        d = self.Z_.shape[1]
        if X_new.shape[1] != d:
            raise MethodError(f"new models have {X_new.shape[1]} datasets, the predictor was fitted on {d}")
        w = None if weights is None else np.asarray(weights, dtype=float)
        if w is not None and w.shape not in ((d,), (X_new.shape[0], d)):
            raise MethodError(f"weights must have one entry per dataset ({d}) or one row per new model, got shape {w.shape}")
        W_extra = None if extra_weights is None else np.atleast_2d(np.asarray(extra_weights, dtype=float))
        if W_extra is not None and (w is None or W_extra.shape[1] != d):
            raise MethodError(f"extra_weights need weights and one entry per dataset ({d}), got shape {W_extra.shape}")
        T_extra = None if extra_truth is None or W_extra is None else np.asarray(extra_truth, dtype=float)
        if T_extra is not None and T_extra.shape != self.X_.shape:
            raise MethodError(f"extra_truth must have the fitted matrix's shape {self.X_.shape}, got {T_extra.shape}")
        O = ~np.isnan(X_new)
        z = self.transform_.transform(X_new)
        fit = self.fit_
        alpha = self._uncalibrated_blend()
        if calibrate and int(self.calibration_folds) >= 2:
            from .newmodel_intervals import calibration_weights

            w_cal = None if w is None else (w if w.ndim == 1 else calibration_weights(w))
            if W_extra is not None:
                w_cal = np.vstack([w_cal, W_extra])
            q_cell, q_agg, n_cal, rank, alpha, q_by, cal = self._calibrate_new(O, w_cal, reselect, T_extra)
            self.rank_new_, self.blend_new_ = rank, alpha
            if rank != self.rank_:
                fits = self.__dict__.setdefault("_fits_by_rank", {})
                if rank not in fits:
                    fits[rank] = self._fit_z(self.Z_, rank=rank)
                fit = fits[rank]
        else:
            q_cell = q_agg = _normal_quantile(self.level)
            q_by, n_cal, cal = np.full(d, q_cell), (0, 0), None
        fi = fold_in(fit, z)
        mz = self._blend(fi.mean, fit, self.Z_, z, alpha, self._design() if fit is self.fit_ else None)
        lo_x, hi_x = self.transform_.inverse_interval(mz - q_by * fi.sd, mz + q_by * fi.sd)
        mean = np.where(O, X_new, self.transform_.inverse_transform(mz))
        lower = np.where(O, X_new, lo_x)
        upper = np.where(O, X_new, hi_x)
        sd = np.where(O, 0.0, fi.sd * self.transform_.derivative(mz))
        agg = agg_lo = agg_hi = None
        if w is not None:
            W = np.broadcast_to(w, mean.shape)
            agg = (mean * W).sum(1)
            J = np.where(O, 0.0, W * self.transform_.derivative(mz))
            half = q_agg * fi.linear_sd(J)
            agg_lo, agg_hi = agg - half, agg + half
        ex = ex_lo = ex_hi = None
        if W_extra is not None:
            ex = mean @ W_extra.T
            qs = [c["q"] for c in cal["extra"]] if cal is not None else [q_agg] * len(W_extra)
            half = np.stack([q * fi.linear_sd(np.where(O, 0.0, row * self.transform_.derivative(mz)))
                             for q, row in zip(qs, W_extra)], axis=1)
            ex_lo, ex_hi = ex - half, ex + half
        if calibrate and int(self.calibration_folds) >= 2 and self.new_intervals == "cv+":
            from .newmodel_intervals import cv_plus_new_models

            lower, upper, agg_lo, agg_hi = cv_plus_new_models(self, cal, X_new, z, O, None if w is None else W,
                                                              self.mondrian)
            if W_extra is not None:
                from .newmodel_intervals import cv_plus_extra_aggregates

                ex_lo, ex_hi = cv_plus_extra_aggregates(self, cal, X_new, z, O, W_extra)
        dist = None
        if calibrate and int(self.calibration_folds) >= 2 and getattr(self, "frontier", True):  # beyond the range
            from .frontier import apply_frontier
            from .newmodel_intervals import calibration_weights

            out = {"mean": mean, "lower": lower, "upper": upper, "agg": agg, "agg_lo": agg_lo, "agg_hi": agg_hi,
                   "ex": ex, "ex_lo": ex_lo, "ex_hi": ex_hi}
            w_cal = None if w is None else (w if w.ndim == 1 else calibration_weights(w))
            dist, self.frontier_ = apply_frontier(self, fit, fi, mz, z, X_new, O, None if w is None else W, w_cal, out,
                                                  W_extra=W_extra, extra_truth=T_extra)
            mean, lower, upper, agg, agg_lo, agg_hi, ex, ex_lo, ex_hi = (
                out[k] for k in ("mean", "lower", "upper", "agg", "agg_lo", "agg_hi", "ex", "ex_lo", "ex_hi"))
        return IntervalPrediction(mean, lower, upper, sd, O, agg, agg_lo, agg_hi, float(self.level), float(q_cell),
                                  None if w is None else float(q_agg), n_cal, ex, ex_lo, ex_hi, dist)

    def predict_new_means(self, X_new) -> np.ndarray:
        """``predict_new_models(X_new, calibrate=False).mean`` without the intervals (selection's inner loop)."""
        self._check_fitted()
        X_new = np.atleast_2d(np.asarray(X_new, dtype=float))
        if X_new.shape[1] != self.Z_.shape[1]:
            raise MethodError(f"new models have {X_new.shape[1]} datasets, the predictor was fitted on {self.Z_.shape[1]}")
        with limit_threads():
            z = self.transform_.transform(X_new)
            mz = self._blend(fold_in(self.fit_, z).mean, self.fit_, self.Z_, z, self._uncalibrated_blend(), self._design())
            return np.where(np.isnan(X_new), self.transform_.inverse_transform(mz), X_new)

    def _uncalibrated_blend(self) -> float:
        """``BLEND_UNCALIBRATED``, or 0 (fold-in only) on a matrix whose cell blend the flops budget turned off:
        the selection's inner loop regresses every candidate subset's ~``d`` targets, as wide a cost."""
        if self.blend != "auto":
            return self._fixed_blend(self.blend)
        return 0.0 if "cell_blend_rule" in self.scales_cv_ else BLEND_UNCALIBRATED

    @staticmethod
    def _fixed_blend(value) -> float:
        a = float(value)
        if not 0.0 <= a <= 1.0:
            raise MethodError(f"blend weights must be 'auto' or in [0, 1], got {value!r}")
        return a

    @staticmethod
    def _blend(fold_mean, fit, Z_train, z_new, alpha, design=None):
        """``(1 - alpha) * fold-in + alpha * direct regression`` (transformed space)."""
        if alpha <= 0.0:
            return fold_mean
        return (1.0 - alpha) * fold_mean + alpha * direct_predict(fit, Z_train, z_new, design)

    def _design(self):
        """The direct regression's summary of the training matrix completed by the fit, cached per fit."""
        if self.__dict__.get("_design_for") is not self.fit_:
            Zc = np.where(np.isnan(self.Z_), self.fit_.mean(), self.Z_)
            self._ridge_design, self._design_for = ridge_design(Zc), self.fit_
        return self._ridge_design

    def _calibrate_new(self, O_new, w, reselect=None, extra_truth=None):
        """See :func:`~harness_ext.methods.engine.newmodel_intervals.calibrate_model_folds` (cached per pattern and weights)."""
        key = (np.packbits(O_new, axis=1).tobytes(), O_new.shape, None if w is None else w.tobytes(), id(reselect),
               None if extra_truth is None else extra_truth.tobytes())
        cache = getattr(self, "_cal_cache", None)
        if cache is None or cache[0] != key:
            from .newmodel_intervals import calibrate_model_folds

            self._cal_cache = (key, calibrate_model_folds(self, O_new, w, reselect, extra_truth=extra_truth))
        return self._cal_cache[1]

    def predict_subsets(self, X_train, X_new, subsets) -> list:
        """Fit on ``X_train`` once, then fold in ``X_new`` masked to each subset in turn (fast path of reduce).

        Returns one ``(n_new, d)`` array of predicted means per subset (own scale,
        observed cells passed through); ``subset_std_`` holds the matching
        uncalibrated predictive sds (own scale, delta method), ``dataset_factors_``
        the fitted dataset loadings. Calibrated intervals for the chosen subset
        come from :meth:`predict_new_models`. Fits this estimator on ``X_train``.
        """
        self.fit(X_train)
        X_new = np.atleast_2d(np.asarray(X_new, dtype=float))
        out, stds = [], []
        with limit_threads():
            for subset in subsets:
                keep = np.zeros(X_new.shape[1], bool)
                keep[np.asarray(subset, dtype=int)] = True
                Xn = np.where(keep, X_new, np.nan)
                O = ~np.isnan(Xn)
                zn = self.transform_.transform(Xn)
                fi = fold_in(self.fit_, zn)
                mz = self._blend(fi.mean, self.fit_, self.Z_, zn, self._uncalibrated_blend(), self._design())
                out.append(np.where(O, Xn, self.transform_.inverse_transform(mz)))
                stds.append(np.where(O, 0.0, fi.sd * self.transform_.derivative(mz)))
        self.subset_std_ = stds
        return out

    @property
    def dataset_factors_(self) -> np.ndarray:
        """``(d, r)`` dataset loadings of the fit (posterior mean for Gibbs), for design-based selectors."""
        self._check_fitted()
        return self.fit_.V.mean(0)

    def _check_fitted(self):
        if not hasattr(self, "fit_"):
            raise MethodError(f"{type(self).__name__} is not fitted: call fit(X) first")

    def describe(self) -> dict:
        """What was chosen and why, for manifests: transforms, rank/lam with their CV errors, calibration."""
        self._check_fitted()
        cv = None
        if self.cv_ is not None:
            cv = {"n_folds": self.cv_["n_folds"], "rank": self.rank_, "lam": self.lam_,
                  "grid_mse": [{"rank": r, "lam": l, "mse": round(float(v), 8)} for (r, l), v in sorted(self.cv_["cv_mse"].items())]}
        self._cell_intervals()
        return {"method": self.method, "rank": self.rank_, "lam": self.lam_, "cross_validation": cv,
                "scales": self.scale_transform_.to_dict(), "scales_cross_validation": self.scales_cv_,
                "cell_blend": float(self.cell_blend_), "bp_mix": self.bp_mix_, "cell_mix": dict(zip(MEMBERS, self.mix_weights_)),
                "bp_mix_cross_validation": self.bp_mix_cv_,
                "column_scale": bool(self.column_scale), "level": float(self.level),
                "q_cells": float(self.q_cells_), "n_calibration_cells": int(self.n_cal_cells_)}
