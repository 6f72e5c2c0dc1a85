"""Full-task scores from a few items with the 2PL model: the IRT family of item estimators.

The estimators of tinyBenchmarks (Polo et al. 2024) on a simple random sample of items, and the
model-assisted AIPW estimators that take the 2PL prediction as their working model. The 2PL fit,
abilities and cross-validation are those of :mod:`.item_irt`; the estimate type, the design variance
and :class:`~.item_estimators.AIPW` those of :mod:`.item_estimators`.

* :class:`IRT`, :class:`PIRT`, :class:`GPIRT`: the IRT, p-IRT and gp-IRT estimators of tinyBenchmarks
  on a random sample, with the multidimensional 2PL model of :mod:`.item_irt` (dimensions
  cross-validated over the source models). Their intervals are model-based: the estimate's standard
  deviation (Bernoulli variance of the unanswered items plus the delta-method variance of the ability)
  times a conformal quantile of held-out source models' standardised errors (cross-validated over the
  source models): about nominal for a model like the sources, no guarantee for a model beyond them
  (use :class:`~.item_estimators.AIPW` there). ``frontier_calibration=True`` takes the larger of that
  quantile and the one of the strongest third of the sources estimated from a fit on the rest; off by
  default: on the shared item tables it over-covered models like the sources and still missed at the
  frontier.
* :class:`AIPWIRT`: :class:`~.item_estimators.AIPW` with the 2PL prediction ``p_i(theta)`` as its
  working model.
* :class:`CrossTaskAIPW`: the same with one 2PL model across a benchmark's tasks (shared abilities, as
  in metabench), so the sampled items of the other tasks inform the working model; each task's own
  residuals keep its estimate design-unbiased.

References
----------
Polo et al. (2024), "tinyBenchmarks: evaluating LLMs with fewer examples", ICML, §3 (IRT, p-IRT,
gp-IRT). Zhang, Dorner and Hardt (2025), "How Benchmark Prediction from Fewer Data Misses the Mark",
NeurIPS, §4 (AIPW). Kipnis et al. (2025), "metabench", ICLR (joint abilities).
"""

from __future__ import annotations

import numpy as np

from harness_ext.methods.engine.conformal import conformal_quantile
from harness_ext.methods.engine.item_estimators import (AIPW, ItemEstimate, _binary_variance, _design_variance,
                                                        _is_binary, _ItemEstimator)
from harness_ext.methods.engine.item_irt import (abilities, cross_validate_irt, fit_2pl, frontier_split_estimates,
                                                 model_folds, pirt_estimates)


def _require_binary(source: np.ndarray, name: str) -> None:
    vals = source[np.isfinite(source)]
    if not _is_binary(vals):
        raise ValueError(f"{name}: the 2PL model needs 0/1 item scores; these include "
                         f"{int((~np.isin(vals, (0.0, 1.0))).sum())} other values")


def _grid(dims) -> tuple:
    return (int(dims),) if np.isscalar(dims) else tuple(int(d) for d in dims)


class _IRTFamily(_ItemEstimator):
    """Shared fit: cross-validated dimensions, item parameters, conformal multiplier from held-out models."""

    #: The 2PL model is of 0/1 answers: ``fit`` refuses other scores.
    requires_binary = True

    def __init__(self, *, level: float = 0.90, dims=(1, 2, 4, 8), item_prior: float = 1.0,
                 ability_prior: float = 2.0, model_folds: int = 5, frontier_calibration: bool = False):
        super().__init__(level=level)
        self.frontier_calibration = frontier_calibration
        self.dims = dims
        self.item_prior = item_prior
        self.ability_prior = ability_prior
        self.model_folds = model_folds

    def fit(self, source, items):
        super().fit(source, items)
        _require_binary(self.source_, type(self).__name__)
        self.cv_ = cross_validate_irt(self.source_, self.items_, dims_grid=_grid(self.dims),
                                      n_folds=self.model_folds, item_prior=self.item_prior,
                                      prior_sd=self.ability_prior)
        self.dims_ = self.cv_["dims"]
        self.A_, self.b_, _ = fit_2pl(self.source_, dims=self.dims_, item_prior=self.item_prior)
        self._fit_extra()
        self.radius_ = self._calibrate(self.cv_, np.ones(len(self.source_), dtype=bool))
        if self.frontier_calibration:
            fr = frontier_split_estimates(self.source_, self.items_, dims=self.dims_, item_prior=self.item_prior,
                                          prior_sd=self.ability_prior)
            self.frontier_radius_ = self._calibrate(fr, fr["held"])
            self.radius_ = max(self.radius_, self.frontier_radius_)
        return self

    def _calibrate(self, cv: dict, rows: np.ndarray) -> float:
        """Conformal quantile of held-out population models' standardised errors."""
        var_mean = _design_variance(_binary_variance(self.source_[rows][:, self.items_]), len(self.items_),
                                    self.n_total_)
        est, sd = self._combine(cv["irt"], cv["pirt"], cv["sd_irt"], cv["sd_pirt"], cv["mean"], var_mean)
        return conformal_quantile(np.abs(est - cv["truth"]) / sd, self.level)

    def _fit_extra(self):
        pass

    def predict(self, Y) -> ItemEstimate:
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        irt, pirt, sdi, sdp, _ = pirt_estimates(Y, self.items_, self.A_, self.b_, prior_sd=self.ability_prior)
        var_mean = _design_variance(_binary_variance(Y), Y.shape[1], self.n_total_)
        est, sd = self._combine(irt, pirt, sdi, sdp, Y.mean(axis=1), var_mean)
        h = self.radius_ * sd
        return ItemEstimate(est, est - h, est + h, self.level)


class IRT(_IRTFamily):
    """IRT estimate: the mean of ``p_i(theta)`` over every item, ``theta`` from the sampled items (Polo et al. 2024, §3)."""

    def _combine(self, irt, pirt, sd_irt, sd_pirt, mean, var_mean):
        return irt, sd_irt


class PIRT(_IRTFamily):
    """p-IRT: the sampled answers plus ``p_i(theta)`` for the rest (Polo et al. 2024, §3)."""

    def _combine(self, irt, pirt, sd_irt, sd_pirt, mean, var_mean):
        return pirt, sd_pirt


class GPIRT(_IRTFamily):
    """gp-IRT: ``lambda * sample mean + (1 - lambda) * p-IRT`` (Polo et al. 2024, §3).

    ``lambda = b^2 / (v + b^2)`` as the tinyBenchmarks code sets it (in the version Zhang, Dorner and
    Hardt 2025 run): ``b`` the mean |error| of p-IRT on every fifth population model, with the item
    parameters fitted on the others and the ability from every second item, predicting the rest; ``v``
    the population's mean per-item variance over ``4 n``. Random items replace the paper's IRT anchor
    points so that the sample mean is the design-based one.
    """

    def _fit_extra(self):
        S = self.source_
        folds = model_folds(S.shape[0], self.model_folds)
        val = folds == 0
        A, b, _ = fit_2pl(S[~val], dims=self.dims_, item_prior=self.item_prior)
        seen = np.arange(0, self.n_total_, 2)
        unseen = np.arange(1, self.n_total_, 2)
        th, _ = abilities(S[val][:, seen], A[seen], b[seen], prior_sd=self.ability_prior)
        p = 1.0 / (1.0 + np.exp(-(th @ A[unseen].T - b[unseen])))
        self.bias_ = float(np.mean(np.abs(p.mean(axis=1) - S[val][:, unseen].mean(axis=1))))
        v = float(np.var(S, axis=1).mean()) / (4 * len(self.items_))
        self.lambda_ = self.bias_ ** 2 / (v + self.bias_ ** 2)

    def _combine(self, irt, pirt, sd_irt, sd_pirt, mean, var_mean):
        lam = self.lambda_
        return lam * mean + (1 - lam) * pirt, np.sqrt(lam ** 2 * var_mean + (1 - lam) ** 2 * sd_pirt ** 2)


class AIPWIRT(AIPW):
    """Cross-fitted AIPW whose working model is the 2PL prediction ``p_i(theta)``.

    ``theta`` is estimated, for each fold of the sampled items, from the other folds' answers; the fold's
    residuals correct the prediction, so the estimate is design-unbiased and the interval is
    :class:`AIPW`'s design-based one. The number of dimensions is cross-validated as for :class:`PIRT`.

    References
    ----------
    Zhang, Dorner and Hardt (2025), §4; Polo et al. (2024), §3 (the IRT prediction).
    """

    requires_binary = True

    def __init__(self, *, level: float = 0.90, n_folds: int = 5, dims=(1, 2, 4, 8), item_prior: float = 1.0,
                 ability_prior: float = 2.0, model_folds: int = 5):
        super().__init__(level=level, n_folds=n_folds)
        del self.alpha  # no ridge here
        self.dims = dims
        self.item_prior = item_prior
        self.ability_prior = ability_prior
        self.model_folds = model_folds

    def _fit_irt(self, S, obs, task=None):
        _require_binary(S, type(self).__name__)
        self.cv_ = cross_validate_irt(S, obs, task=task, dims_grid=_grid(self.dims), n_folds=self.model_folds,
                                      item_prior=self.item_prior, prior_sd=self.ability_prior)
        self.dims_ = self.cv_["dims"]
        self.A_, self.b_, _ = fit_2pl(S, dims=self.dims_, item_prior=self.item_prior)

    def fit(self, source, items):
        super().fit(source, items)
        self._fit_irt(self.source_, self.items_)
        return self

    def _working(self, train_items, Y_train, context):
        return pirt_estimates(Y_train, train_items, self.A_, self.b_, prior_sd=self.ability_prior)[4].T


class CrossTaskAIPW(AIPWIRT):
    """:class:`AIPWIRT` with one 2PL model across a benchmark's tasks (abilities shared by the tasks).

    ``fit(source, items, others=[(source_k, items_k), ...])`` takes, for every other task of the
    benchmark, the same population models' answers (rows aligned; NaN where a model lacks the task) and
    that task's sampled items; ``predict(Y, others=[Y_k, ...])`` the targets' answers to them. The
    ability behind each fold's working model uses the task's other folds and every other task's sampled
    items; the task's own residuals keep its estimate design-unbiased. Without ``others`` it is
    :class:`AIPWIRT`.

    References
    ----------
    Kipnis et al. (2025), "metabench", ICLR (joint abilities); Zhang, Dorner and Hardt (2025), §4.
    """

    #: The benchmark passes the other tasks of the same benchmark.
    uses_other_tasks = True

    def fit(self, source, items, others=()):
        _ItemEstimator.fit(self, source, items)
        blocks, extra, off = [self.source_], [], self.n_total_
        for S_k, items_k in others:
            S_k = np.asarray(S_k, dtype=float)
            if S_k.shape[0] != self.source_.shape[0]:
                raise ValueError(f"CrossTaskAIPW: another task has {S_k.shape[0]} population models, this one "
                                 f"{self.source_.shape[0]}; align the rows (NaN for a missing model)")
            blocks.append(S_k)
            extra.append(off + np.asarray(items_k))
            off += S_k.shape[1]
        self.n_other_tasks_ = len(extra)
        self.other_items_ = np.concatenate(extra) if extra else np.array([], dtype=int)
        joint = np.hstack(blocks)
        self._fit_irt(joint, np.concatenate([self.items_, self.other_items_]), task=np.arange(self.n_total_))
        return self

    def predict(self, Y, others=()) -> ItemEstimate:
        if len(others) != self.n_other_tasks_:
            raise ValueError(f"CrossTaskAIPW: fitted with {self.n_other_tasks_} other tasks, given {len(others)}")
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        Y_other = np.hstack([np.atleast_2d(np.asarray(y, dtype=float)) for y in others]) if others else \
            np.empty((Y.shape[0], 0))
        return super().predict(Y, Y_other=Y_other)

    def _working(self, train_items, Y_train, context):
        obs = np.concatenate([train_items, self.other_items_])
        Y_obs = np.hstack([Y_train, context["Y_other"]])
        return pirt_estimates(Y_obs, obs, self.A_, self.b_, task=np.arange(self.n_total_),
                              prior_sd=self.ability_prior)[4].T



#: name -> estimator, registered as item estimator plugins next to those of :mod:`.item_estimators`.
ESTIMATORS = {
    "irt": IRT,
    "pirt": PIRT,
    "gpirt": GPIRT,
    "aipw_irt": AIPWIRT,
    "aipw_crosstask": CrossTaskAIPW,
}
