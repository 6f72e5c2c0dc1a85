"""``crosstask_greg``: main's ``crosstask`` whose design part is the regression (GREG) estimator with a power-tuned
slope (criterion: CRITERION.md). Imported by screen.py, look.py and the test beside it.

The design part :class:`GregAIPW` is :class:`~harness_ext.methods.engine.item_crosstask.DifficultyAIPW` with the
cross-fitted working model scaled per target by ``b = cov_S(y, f_oof) / var_S(f_oof)``, clipped to [0, 1] (1 when
``var_S(f_oof)`` is 0), ``f_oof`` the sampled items' out-of-fold predictions. Each fold's estimate is the difference
estimator with ``b f_k`` in place of ``f_k`` (scaling about any constant gives the same estimate: the constant
cancels between the unseen items' sum and the fold's residual mean); the design variance is that of ``y - b f_oof``
with ddof 2 (one more parameter), the interval's skewness shift as :func:`design_interval`'s.

References: Cochran (1977), §7.1-7.3; Särndal, Swensson and Wretman (1992), §6.5; Angelopoulos, Duchi and Zrnic
(2023), "PPI++: efficient prediction-powered inference" (power tuning; ppi_py clips its parameter to [0, 1]).
"""
import numpy as np

from harness_ext.methods.engine import item_crosstask as ict
from harness_ext.methods.engine.item_estimators import (AIPW, ItemEstimate, _design_variance, _is_binary, _z,
                                                        design_interval, no_miss_variance)

#: below this variance of the out-of-fold predictions a target's slope is 1 (the criterion's "variance 0")
FLAT = 1e-12


def greg_slope(Y: np.ndarray, f_oof: np.ndarray, clip: bool = True) -> np.ndarray:
    """Per target (rows), ``cov(y, f) / var(f)`` over the sampled items, clipped to [0, 1] (``clip``); 1 where
    ``var(f)`` is 0."""
    fc = f_oof - f_oof.mean(axis=1, keepdims=True)
    var = (fc ** 2).mean(axis=1)
    cov = ((Y - Y.mean(axis=1, keepdims=True)) * fc).mean(axis=1)
    flat = var <= FLAT
    b = cov / np.where(flat, 1.0, var)
    return np.where(flat, 1.0, np.clip(b, 0.0, 1.0) if clip else b)


class _GregAIPW(AIPW):
    """:class:`AIPW`'s cross-fitted estimator with the power-tuned slope (module docstring). ``fixed_slope`` (None:
    estimated) forces ``b``; then the variance keeps ddof 1 and the estimator is :class:`AIPW`'s exactly."""

    fixed_slope = None

    def predict(self, Y, **context) -> ItemEstimate:
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        n, N = Y.shape[1], self.n_total_
        fold = self._folds(n)
        binary = _is_binary(Y)
        fits, f_oof = [], np.empty_like(Y)
        for k in np.unique(fold):
            tr, te = self.items_[fold != k], self.items_[fold == k]
            f = self._working(tr, Y[:, fold != k], context)
            f = np.clip(f, 0.0, 1.0) if binary else f
            f_oof[:, fold == k] = f[te].T
            fits.append((k, tr, te, f))
        b = greg_slope(Y, f_oof) if self.fixed_slope is None else np.full(Y.shape[0], float(self.fixed_slope))
        if getattr(self, "slope_override", None) is not None:  # oracle.py's population slopes (a diagnosis only)
            b = np.asarray(self.slope_override, dtype=float)
        self.working_all_ = np.mean([f for _, _, _, f in fits], axis=0)  # (items, targets): the folds' mean
        self.slope_ = b  # the last prediction's slopes and the unclipped ones (the screen's look reports them)
        self.raw_slope_ = greg_slope(Y, f_oof, clip=False)
        thetas = []
        for k, tr, te, f in fits:
            g = f * b if self.fixed_slope != 1.0 else f
            unseen = np.ones(N, dtype=bool)
            unseen[tr] = False
            r = Y[:, fold == k].T - g[te]
            theta = (Y[:, fold != k].sum(axis=1) + g[unseen].sum(axis=0) + unseen.sum() * r.mean(axis=0)) / N
            thetas.append(theta)
        est = np.mean(thetas, axis=0)
        resid = Y - b[:, None] * f_oof if self.fixed_slope != 1.0 else Y - f_oof
        lo, hi, se = design_interval(est, resid, N, self.level, binary)
        if self.fixed_slope is None and n > 2:  # one more parameter: the variance with ddof 2, the same shift
            centre = 0.5 * (lo + hi)
            s2 = resid.var(axis=1, ddof=2)
            s2 = np.maximum(s2, no_miss_variance(n)) if binary else s2
            se = np.sqrt(_design_variance(s2, n, N))
            lo, hi = centre - _z(self.level) * se, centre + _z(self.level) * se
        return ItemEstimate(est, lo, hi, self.level, se)


class GregAIPW(ict.DifficultyAIPW, _GregAIPW):
    """``DifficultyAIPW`` (its working model, its other tasks) with :class:`_GregAIPW`'s estimator: the method order
    puts ``_GregAIPW.predict`` where ``DifficultyAIPW.predict`` calls ``super().predict``."""


class GregAIPWSlopeOne(GregAIPW):
    """:class:`GregAIPW` with ``b = 1`` forced: ``DifficultyAIPW`` exactly (the test's check)."""

    fixed_slope = 1.0


class CrossTaskGreg(ict.CrossTask):
    """main's ``crosstask`` with :class:`GregAIPW` as its design part everywhere ``crosstask`` fits one: the full fit,
    the held-out splits its choices read (``_split_parts``) and the own-task composite ``own_``. ``CrossTask``
    names ``DifficultyAIPW`` from its module, so the fit runs with that name bound to :class:`GregAIPW`
    (single-threaded screen; restored on exit)."""

    def fit(self, source, items, others=()):
        saved = ict.DifficultyAIPW
        ict.DifficultyAIPW = GregAIPW
        try:
            super().fit(source, items, others=others)
        finally:
            ict.DifficultyAIPW = saved
        assert type(self.design_) is GregAIPW
        assert self.own_ is None or type(self.own_.design_) is GregAIPW
        return self


ict.ESTIMATORS["crosstask_greg"] = CrossTaskGreg
