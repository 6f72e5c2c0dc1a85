"""Full-task scores from a few random items of every task of a benchmark: estimators that borrow across tasks.

A new model answers ``n`` random items of EVERY task of its benchmark, so for one task it brings, besides
its answers to that task's sample, its answers to the other tasks' samples. The estimators here use them
(``fit(source, items, others=[(source_k, items_k), ...])``, ``predict(Y, others=[Y_k, ...])``, rows of
``source_k`` the same population models as ``source``, NaN where a model lacks a task; without
``others`` each falls back to the task alone).

* :class:`CrossTaskLearn`: "random sampling + learn" (Zhang, Dorner and Hardt 2025, §3) with the other
  tasks' sample means as extra features: ridge regression of the source models' full-task score on
  their answers to the sampled items and their mean on each other task's sample (the low-rank idea of
  metabench: a benchmark's tasks share a few abilities). Split-conformal interval from the source
  models' leave-one-out residuals. Model-based: strong inside the population, biased beyond it.
* :class:`DifficultyAIPW`: cross-fitted AIPW (:class:`~.item_estimators.AIPW`, with its design-based
  variance) whose working model averages the paper's ridge over the source models' answers and a
  logistic model of the target's answers on two item features from the population (the logit of the
  item's mean over all source models and over the strongest quarter of them), with one intercept per
  task, fitted on this task's training fold AND every other task's sampled items. Design-unbiased for
  this task whatever the target is: the other tasks' samples are drawn independently of this one's.
* :class:`~.item_learn.KernelLearn` (in :mod:`.item_learn`): kernel ridge regression of the full-task
  score on every task's sampled answers, settings by leave-one-out.
* :class:`~.item_factor.StackedLearn` (in :mod:`.item_factor`): that kernel regression stacked with a kernel
  regression on each model's abilities (probabilistic PCA of the population's answers to every item),
  the share chosen on held-out source models; the regression part of the composite.
* :class:`CrossTask`: a Fay-Herriot-type composite of :class:`~.item_factor.StackedLearn` and
  :class:`DifficultyAIPW`. The regression's error variance for a target is its leave-one-out error
  variance for a model like the target (:meth:`~.item_learn.KernelLearn.error_variance`), times a factor
  chosen on held-out source models (1, or 0: the regression alone inside the population), plus
  ``(gap_scale * g)**2``, ``g`` the distance of the
  design-based estimate beyond the source models' range of full-task scores (below it, only beyond
  ``floor_margin`` = 1 design standard error: populations crowd at chance level), the design estimate
  believed only up to ``clip`` of its standard errors beyond the regression's estimate
  (:func:`~.item_composite.clipped_gap`; ``clip`` chosen on held-out source models, among them the
  sources' own strongest share held out from a fit on the rest), but above the range never less than the
  design estimate's one-sided lower bound beyond the top (:data:`GAP_LOWER_Z`); the weight of the
  regression minimises the composite's variance given ``V_aipw``, ``V_model`` and the two parts' error
  correlation, cross-validated over the source models. Inside the population the regression dominates; a
  target beyond every source model falls back to the design-based estimate and its interval. The
  regression's part of the interval is scaled by a split-conformal factor from held-out source models
  whose fold regressions chose their own settings (:func:`~.item_composite.coverage_scale`).
  ``gap_scale`` (5) was chosen among 2, 3 and 5, and the one-sided floor margin among 0 and 1, on seeds
  0-4 of five shared item tables (so the figures of those seeds are in-sample for these two constants);
  they are fixed constants, not fitted per table.

References
----------
Zhang, Dorner and Hardt (2025), "How Benchmark Prediction from Fewer Data Misses the Mark", NeurIPS, §3-4
(random sampling + learn, AIPW). Kipnis et al. (2025), "metabench", ICLR (one latent ability model across a
benchmark's tasks). Fay and Herriot (1979), JASA 74, eq. 5 (composite estimation). Cochran (1977), Sampling
Techniques, §7.7 (difference estimator). Chernozhukov et al. (2018), Econometrics Journal 21 (cross-fitting).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .item_agreement import AGREEMENT_THRESHOLD, agreement_estimate, row_means, sources_agreement
from .item_estimators import AIPW, ItemEstimate, _is_binary, _ItemEstimator, _z, conformal_radius, radius_interval
from .item_composite import clipped_gap, coverage_scale, edge_hull, fit_gvf, gvf_variance
from .item_factor import StackedLearn
from .item_learn import KernelLearn, _check_targets, _fill_missing, _other_tasks
from .item_working import GROUPED_FROM, choose_working, item_loadings, logistic_working, logistic_working_grouped


#: The gap above the range is never less than ``a - hi - GAP_LOWER_Z sd_a``: the one-sided lower confidence bound
#: (about 97.7%) of the design estimate's distance beyond the sources' top, so a regression that ends below the top
#: cannot cancel the gap of a design estimate many standard errors beyond it, while one above the top by noise keeps
#: the clipped gap. Two standard errors is the conventional bound, fixed before it was measured, not tuned.
GAP_LOWER_Z = 2.0


def difficulty_features(source: np.ndarray, top: float = 0.25) -> np.ndarray:
    """Per item: the logit of its smoothed mean over all population models and over the strongest ``top`` share.

    The smoothing (successes + 0.5) / (answers + 1) keeps items no model (or every model) solved finite.
    """
    S = np.asarray(source, dtype=float)
    seen = np.isfinite(S)
    S0 = np.where(seen, S, 0.0)
    # A model with no answers here (NaN row) ranks weakest.
    strength = np.where(seen.any(axis=1), S0.sum(axis=1) / np.maximum(seen.sum(axis=1), 1), -np.inf)
    k = max(2, int(round(top * len(S))))
    strong = np.argsort(strength, kind="stable")[-k:]
    p_all = (S0.sum(axis=0) + 0.5) / (seen.sum(axis=0) + 1.0)
    p_top = (S0[strong].sum(axis=0) + 0.5) / (seen[strong].sum(axis=0) + 1.0)
    return np.column_stack([np.log(p_all / (1 - p_all)), np.log(p_top / (1 - p_top))])


def local_loo_mse(loo_residuals: np.ndarray, full: np.ndarray, centre: np.ndarray, share: float = 0.1,
                  min_models: int = 10) -> np.ndarray:
    """Per centre: the mean squared leave-one-out residual of the source models whose full-task score is nearest.

    ``loo_residuals`` and ``full`` (source models,): each source model's leave-one-out residual and full
    score; ``centre`` (targets,): the targets' estimated scores. The nearest ``max(min_models, share *
    models)`` source models count (ties by order). A locally weighted error estimate (Lei et al. 2018,
    §5.2): a regression across models errs more for a model near the population's edge than in its middle.
    """
    full = np.asarray(full, dtype=float)
    sq = np.asarray(loo_residuals, dtype=float) ** 2
    k = min(len(full), max(min_models, int(round(share * len(full)))))
    near = np.argsort(np.abs(full[None, :] - np.atleast_1d(centre)[:, None]), axis=1, kind="stable")[:, :k]
    return sq[near].mean(axis=1)


def expected_squared_gap(centre: np.ndarray, sd: np.ndarray, score_range: tuple, floor_margin) -> np.ndarray:
    """``E[g(X)**2]`` for ``X ~ N(centre, sd**2)``, ``g`` the distance of ``X`` beyond ``score_range``.

    Below the range the distance counts only beyond ``floor_margin`` (as :meth:`CrossTask._model_variance`).
    For ``Y ~ N(mu, s**2)``, ``E[max(0, Y)**2] = (mu**2 + s**2) Phi(mu / s) + mu s phi(mu / s)``.
    """
    from scipy.special import ndtr

    lo, hi = score_range
    s = np.maximum(np.asarray(sd, dtype=float), 1e-12)
    out = 0.0
    for mu in (centre - hi, lo - centre - floor_margin):
        t = mu / s
        out = out + (mu ** 2 + s ** 2) * ndtr(t) + mu * s * np.exp(-0.5 * t * t) / np.sqrt(2 * np.pi)
    return out


class CrossTaskLearn(_ItemEstimator):
    """Random sampling + learn with the other tasks' sample means as features (Zhang, Dorner and Hardt 2025, §3).

    Features of a model: its answers to this task's sampled items, their mean times ``sqrt(n)`` and, per
    other task, its mean over that task's sampled items times ``sqrt(n_k)`` (so that the ridge penalty weighs a task's mean like
    that many items). Ridge penalty by leave-one-out over the source models among ``alphas``;
    split-conformal interval on the same residuals. Missing answers of a model to another task are
    filled with the item's mean over the population (counted in ``n_filled_``).

    References
    ----------
    Zhang, Dorner and Hardt (2025), §3; Kipnis et al. (2025), "metabench", ICLR (cross-task information).
    """

    uses_other_tasks = True

    def __init__(self, *, level: float = 0.90, alphas: tuple = (0.1, 1.0, 10.0, 100.0)):
        super().__init__(level=level)
        self.alphas = alphas

    def _features(self, Y: np.ndarray, others: list) -> tuple:
        # The sample mean as its own feature: the ridge penalty shrinks the items' weights, not this direction.
        cols, filled = [Y, Y.mean(axis=1, keepdims=True) * np.sqrt(Y.shape[1])], 0
        for (S_k, items_k), Y_k in zip(self.others_, others):
            Y_k, c = _fill_missing(Y_k, S_k[:, items_k])
            filled += c
            cols.append(Y_k.mean(axis=1, keepdims=True) * np.sqrt(len(items_k)))
        return np.hstack(cols), filled

    def fit(self, source, items, others=()):
        from sklearn.linear_model import RidgeCV

        super().fit(source, items)
        self.others_ = _other_tasks(type(self).__name__, self.source_.shape[0], others)
        X, self.n_filled_ = self._features(self.source_[:, self.items_], [S[:, it] for S, it in self.others_])
        self.model_ = RidgeCV(alphas=self.alphas, store_cv_results=True).fit(X, self.source_.mean(axis=1))
        loo = np.sqrt(self.model_.cv_results_[:, list(self.alphas).index(self.model_.alpha_)])
        self.loo_residuals_ = loo
        self.radius_ = conformal_radius(loo, self.level)
        self.loo_mse_ = float(np.mean(loo ** 2))
        self.score_range_ = (0.0, 1.0) if _is_binary(self.source_) else (-np.inf, np.inf)
        return self

    def predict(self, Y, others=()) -> ItemEstimate:
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        X, _ = self._features(Y, _check_targets(type(self).__name__, len(self.others_), others))
        return radius_interval(self.model_.predict(X), self.radius_, self.score_range_, self.level)


class DifficultyAIPW(AIPW):
    """Cross-fitted AIPW whose working model averages the paper's ridge and a cross-task difficulty logit.

    The logit: ``P(y_i = 1) = sigmoid(c_task + b . x_i)`` with ``x_i`` the :func:`difficulty_features` of
    item ``i`` in its own task's population, fitted per target by penalised maximum likelihood (Gaussian
    prior of precision ``1 / prior**2`` on ``b``, nearly flat on the intercepts) on the training fold of
    this task and every other task's sampled items. Two slopes and an intercept per task cannot chase the
    sample, so the working model carries over to a target stronger than every source model; the fold's
    residuals keep the estimate design-unbiased (:class:`~.item_estimators.AIPW`).

    References
    ----------
    Zhang, Dorner and Hardt (2025), §4; Cochran (1977), §7.7; Chernozhukov et al. (2018).
    """

    uses_other_tasks = True

    def __init__(self, *, level: float = 0.90, alpha: float = 10.0, n_folds: int = 5, prior: float = 1.0,
                 n_newton: int = 25):
        super().__init__(level=level, alpha=alpha, n_folds=n_folds)
        self.prior = prior
        self.n_newton = n_newton

    def fit(self, source, items, others=()):
        super().fit(source, items)
        self.others_ = _other_tasks(type(self).__name__, self.source_.shape[0], others)
        k1 = len(self.others_) + 1
        self.features_ = difficulty_features(self.source_)
        rows = [np.hstack([difficulty_features(S_k)[it], np.eye(k1)[np.full(len(it), j + 1)]])
                for j, (S_k, it) in enumerate(self.others_)]
        self.other_rows_ = np.vstack(rows) if rows else np.empty((0, self.features_.shape[1] + k1))
        return self

    def predict(self, Y, others=()) -> ItemEstimate:
        Y_other = _check_targets(type(self).__name__, len(self.others_), others)
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        Y_other = np.hstack(Y_other) if Y_other else np.empty((Y.shape[0], 0))
        return super().predict(Y, Y_other=Y_other)

    def _logit(self, train_items, Y_train, Y_other, own=None, other_rows=None, slope_prec=None) -> np.ndarray:
        """The logit's prediction for every item (items, targets); ``own`` / ``other_rows`` replace the item features."""
        own = self.features_ if own is None else own
        other_rows = self.other_rows_ if other_rows is None else other_rows
        k1 = len(self.others_) + 1
        slope_prec = np.full(own.shape[1], 1.0 / self.prior ** 2) if slope_prec is None else slope_prec
        prec = np.r_[slope_prec, np.full(k1, 1e-2)]
        if k1 >= GROUPED_FROM:  # the design's structure, not its dense form: same steps, arithmetic to rounding
            d = own.shape[1]
            group = np.r_[np.zeros(len(train_items), dtype=int), np.argmax(other_rows[:, d:], axis=1)]
            return logistic_working_grouped(np.vstack([own[train_items], other_rows[:, :d]]), group,
                                            np.hstack([Y_train, Y_other]), own, prec, k1, self.n_newton)
        task = np.zeros((len(train_items), k1))
        task[:, 0] = 1.0
        X = np.vstack([np.hstack([own[train_items], task]), other_rows])
        every = np.zeros((self.n_total_, k1))
        every[:, 0] = 1.0
        return logistic_working(X, np.hstack([Y_train, Y_other]), np.hstack([own, every]), prec, self.n_newton)

    def _working(self, train_items, Y_train, context):
        ridge = np.clip(super()._working(train_items, Y_train, context), 0.0, 1.0)
        return 0.5 * (ridge + self._logit(train_items, Y_train, context["Y_other"]))


def _usable_split(held: np.ndarray) -> bool:
    """A held-out split leaves at least one model out and at least three to fit on."""
    return held.sum() >= 1 and (~held).sum() >= 3


def _split_others(others: list, held: np.ndarray) -> tuple:
    """``(fit, predict)``: the other tasks' ``(answers, items)`` of the source models outside ``held``, and the
    held-out models' answers to those tasks' sampled items."""
    return ([(S_k[~held], it) for S_k, it in others],
            [np.asarray(S_k, dtype=float)[held][:, it] for S_k, it in others])


def other_tasks_mean(blocks: list) -> np.ndarray:
    """Each model's mean over the other tasks' sampled items: each task's mean over the answered items, the
    tasks weighted equally, over the tasks the model answered (NaN if none)."""
    return row_means(np.column_stack([row_means(b) for b in blocks]))


def widen_beyond_sources(res: ItemEstimate, design: ItemEstimate, beyond: np.ndarray) -> ItemEstimate:
    """``res`` with the interval of each target ``beyond`` the sources (a distance above them, flagged where
    positive) widened to the hull of its own and ``design``'s; ``beyond`` recorded in the result.

    The estimate is kept; a design-based interval holds whatever the model is (Zhang, Dorner and Hardt 2025,
    §4, eq. 4), a regression's precision only for models like those it learned from. A widened target's
    standard error is the widened interval's half-width over the normal quantile of the level, the standard
    error of a normal interval as wide (what :func:`~harness_ext.methods.reduction.item_benchmark.task_standard_error`
    reads from an interval without one), so a benchmark's interval combined from the tasks' standard errors
    widens with it; the others keep theirs.
    """
    beyond = np.asarray(beyond, dtype=float)
    flag = beyond > 0
    lower = np.where(flag, np.minimum(res.lower, design.lower), res.lower)
    upper = np.where(flag, np.maximum(res.upper, design.upper), res.upper)
    se = None if res.se is None else np.where(flag, (upper - lower) / (2 * _z(res.level)), res.se)
    return ItemEstimate(res.estimate, lower, upper, res.level, se, beyond_sources=beyond)


class CrossTask(_ItemEstimator):
    """Composite of :class:`~.item_factor.StackedLearn` (model-based) and :class:`DifficultyAIPW` (design-based).

    With ``V_a`` the design variance of the AIPW estimate ``a``, ``V_m`` the regression's error variance
    for the target (:meth:`~.item_learn.KernelLearn.error_variance`: fitted to the source models' leave-one-out
    residuals,
    larger for a target whose sampled answers vary more) and ``g`` the distance of ``a`` beyond the range
    of the source models' full-task scores, the regression's error variance for the target is
    ``V_model = lam V_m + (gap_scale * g)**2`` (below the range, ``g`` counts only beyond ``floor_margin``
    design standard errors) and the estimate is ``w * learn + (1 - w) * a`` with the variance-minimising
    ``w = (V_a - C) / (V_a + V_model - 2 C)`` (clipped to [0, 1]), ``C = rho sqrt(V_a lam V_m)`` and ``rho``
    the correlation of the two parts' standardised errors on held-out source models (both read the same
    sampled answers). ``lam`` (in ``variance_scales``: 1, or 0 for the regression alone inside the
    population) is the one whose composite errs least on the held-out source models (5 folds; each
    judged against its training folds' range): the two parts' errors are strongly correlated and the
    regression's variance is estimated from few models, so the variance-minimising weight is checked on
    models the regression did not see. The gap is :func:`~.item_composite.clipped_gap`'s: a design
    estimate beyond the range by more than ``clip`` standard errors over the regression's estimate is
    more likely noise than a frontier model (``clip`` in ``gap_clips``, chosen with ``lam`` by the mean
    of the held-out errors of the interleaved folds and of the sources' own frontier, the strongest
    ``frontier_share`` held out from a fit on the rest). The interval's variance ``w**2 V_model' + (1 -
    w)**2 V_a + 2 w (1 - w) C`` (``C`` at ``lam = 1``) sizes the regression's error for this target
    (:meth:`_interval_parts`: its error variance, the error of the source models of about its score,
    and its disagreement with ``a``), keeps the design interval's skewness shift in proportion ``1 - w``
    and takes the normal quantile; with ``calibrate`` the regression's error inside the population is
    scaled by ``interval_scale_``, the split-conformal factor under which the interleaved folds'
    held-out models are covered at ``level`` (:meth:`_calibrated_scale`). A target inside the
    population gets about the regression's precision; one beyond it the design-based estimate, whose interval holds whatever the model is.
    With ``hull_edge``, a target whose design estimate lies beyond the range by less than :data:`GAP_LOWER_Z`
    design standard errors has its interval reach the regression's own one on the range's side
    (:func:`~.item_composite.edge_hull`). With fewer than ``min_models`` population models there is no regression: the estimate is the design-based one.

    A target **beyond the sources on the other tasks** (its mean over its sampled items of the benchmark's other
    tasks, each task weighted equally, above every source model's mean over the same items: evidence from far
    more items than this task's sample) keeps the composite's estimate, and its interval is widened to also
    cover the design-based one (:func:`widen_beyond_sources`): the regression learned how this task follows
    the others from models below the target on them, so its precision does not carry over (a model
    strongest on the whole benchmark is often not beyond the sources on each task); its standard error becomes
    the widened interval's half-width over the normal quantile. ``beyond_sources_`` flags those targets after
    :meth:`predict`, and the result's ``beyond_sources`` says by how much (NaN without other tasks). On a task the
    other tasks do not carry (the sources' rank agreement ``agreement_`` below
    :data:`~.item_agreement.AGREEMENT_THRESHOLD`) such a target's estimate is the mean of the design part's and of
    ``own_``'s, this estimator fitted on the task's items alone (:mod:`~.item_agreement`).

    References
    ----------
    Fay and Herriot (1979), JASA 74, eq. 5; Zhang, Dorner and Hardt (2025), §3-5; Kipnis et al. (2025);
    Lei et al. (2018), JASA 113, §2.2 (split conformal) and §5.2 (locally weighted errors); Varma and Simon
    (2006), BMC Bioinformatics 7:91, and Cawley and Talbot (2010), JMLR 11 (the optimism of errors on models
    that chose the settings); Johnson (1978), JASA 73 (skewness); Huber (1964), Ann. Math. Statist. 35
    (clipping).
    """

    uses_other_tasks = True
    #: The regression part: :class:`~.item_factor.StackedLearn` (kernel ridge across the benchmark's tasks on the
    #: raw answers, stacked with one on the models' abilities; the composite reads its per-target
    #: ``error_variance`` and refits folds at its ``fixed_params``).
    learner = StackedLearn

    def __init__(self, *, level: float = 0.90, alpha: float = 10.0, n_folds: int = 5, gap_scale: float = 5.0,
                 floor_margin: float = 1.0, min_models: int = 10, edge_slope: float = 2.0,
                 variance_scales: tuple = (0.0, 1.0), gap_clips: tuple = (1.0, 2.0, np.inf),
                 frontier_share: float = 0.3, calibrate: bool = True, smooth_variance: bool = True,
                 hull_edge: bool = True):
        super().__init__(level=level)
        self.hull_edge = hull_edge
        self.gap_clips = gap_clips
        self.frontier_share = frontier_share
        self.calibrate = calibrate
        self.smooth_variance = smooth_variance
        self.edge_slope = edge_slope
        self.alpha = alpha
        self.n_folds = n_folds
        self.gap_scale = gap_scale
        self.floor_margin = floor_margin
        self.variance_scales = variance_scales
        self.min_models = min_models

    def fit(self, source, items, others=()):
        super().fit(source, items)
        others = list(others)
        self.design_ = DifficultyAIPW(level=self.level, alpha=self.alpha, n_folds=self.n_folds).fit(
            self.source_, self.items_, others=others)
        # A regression across models needs models to learn from: with fewer than ``min_models``, or a task every
        # source model scores alike (saturated: no error to learn, so it would take all the weight and never
        # follow a new model that differs), the estimate is the design-based one alone (``learn_`` is None).
        self.learn_, self.error_correlation_, self.variance_scale_ = None, 0.0, 1.0
        self.gap_clip_, self.interval_scale_, self.gvf_ = np.inf, 1.0, None
        if self.source_.shape[0] >= self.min_models and np.ptp(self.source_.mean(axis=1)) > 0:
            self.learn_ = self.learner(level=self.level).fit(self.source_, self.items_, others=others)
            held = self._held_out_errors(others)
            # the weight reads a smoothed design variance (item_composite.fit_gvf); the interval keeps the target's own
            self.gvf_ = fit_gvf(held["a"], held["sd_a"] ** 2) if self.smooth_variance else None
            held["v_s"] = gvf_variance(self.gvf_, held["a"], held["sd_a"] ** 2)
            inside = {k: v[~held["frontier"]] for k, v in held.items()}  # the interleaved folds' models
            self.error_correlation_ = self._cross_validated_correlation(inside)
            self.variance_scale_, self.gap_clip_ = self._cross_validated_choice(held)
            if self.calibrate:
                self.interval_scale_ = self._calibrated_scale(self._reselected(inside, others))
        full = self.source_.mean(axis=1)
        self.range_ = (float(full.min()), float(full.max()))
        self.others_reach_ = (float(np.nanmax(other_tasks_mean([np.asarray(S_k, dtype=float)[:, it] for S_k, it in others])))
                              if others else np.inf)
        # a task the other tasks do not carry (item_agreement): its own composite for the targets beyond the sources
        self.agreement_ = sources_agreement(self.source_, others)
        self.own_ = (CrossTask(**self.get_params()).fit(self.source_, self.items_)
                     if self.learn_ is not None and self.agreement_ < AGREEMENT_THRESHOLD else None)
        return self

    def _held_out_errors(self, others: list, n_folds: int = 5) -> dict:
        """Both parts fitted on all but one fold of the source models, evaluated on that fold.

        Folds: ``n_folds`` interleaved ones (as :func:`~.item_irt.model_folds`), and the sources' own
        frontier: the strongest ``frontier_share`` of the source models by full score, held out from a
        fit on the rest (``frontier`` True), what a model beyond the population meets. Per held-out
        source model: the errors ``e_m`` and ``e_a`` of the two parts, the design standard error
        ``sd_a``, the design-based estimate ``a`` and its interval (``al``, ``au``), the regression's
        estimate ``m``, its error variance ``v_m`` and the local leave-one-out error ``local``
        (:func:`local_loo_mse`), the truth and the training folds' range of full scores (``lo``,
        ``hi``). Empty arrays with too few models.
        """
        S = self.source_
        splits = [(held, False) for held in self._interleaved(n_folds)]
        n_top = int(round(self.frontier_share * S.shape[0]))
        if n_top >= 1:
            top = np.zeros(S.shape[0], dtype=bool)
            top[np.argsort(S.mean(axis=1), kind="stable")[-n_top:]] = True
            if _usable_split(top):
                splits.append((top, True))
        rec = {}
        for held, frontier in splits:
            for k, v in self._split_parts(others, held, frontier).items():
                rec.setdefault(k, []).append(v)
        keys = ("e_m", "e_a", "sd_a", "a", "al", "au", "m", "v_m", "local", "truth", "lo", "hi", "frontier")
        return {k: np.concatenate(rec[k]) if k in rec else np.empty(0, dtype=bool if k == "frontier" else float)
                for k in keys}

    def _reselected(self, inside: dict, others: list, n_folds: int = 5) -> dict:
        """The interleaved folds' held-out parts (``inside``, from :meth:`_held_out_errors`) with the regression's
        parts re-fitted on each fold's training models with its own choice of settings.

        The regression chose its settings (penalty, bandwidth, the stack's share, the variance's power) by
        leave-one-out over every source model, so refits at those settings predict held-out source models
        that took part in the choice: their errors are as small as the choice made them, a new model's are
        not (the selection's optimism; Varma and Simon 2006, Cawley and Talbot 2010). The interval's scale
        is calibrated on models the regression did not see at any stage, as split conformal needs
        (Lei et al. 2018, §2.2); the design-based parts do not depend on the regression and are kept. The
        refits here feed only the interval's scale: the estimate's choices (:meth:`_cross_validated_choice`)
        keep the refits at the chosen settings.
        """
        rec = {"m": [], "v_m": [], "local": []}
        for held in self._interleaved(n_folds):
            part = self._regression_part(self.learner(level=self.level), held, *_split_others(others, held))
            for k, v in part.items():
                rec[k].append(v)
        out = dict(inside, **{k: np.concatenate(v) if v else np.empty(0) for k, v in rec.items()})
        out["e_m"] = out["m"] - out["truth"]
        return out

    def _interleaved(self, n_folds: int) -> list:
        """The held-out masks of the ``n_folds`` interleaved folds of the source models (as
        :func:`~.item_irt.model_folds`) that leave a fit enough models; one order for every caller, so
        their held-out parts line up."""
        from .item_irt import model_folds

        fold = model_folds(self.source_.shape[0], n_folds)
        return [held for held in (fold == k for k in range(n_folds)) if _usable_split(held)]

    def _regression_part(self, learn, held: np.ndarray, fit_o: list, pred_o: list) -> dict:
        """The regression ``learn`` fitted on the source models outside ``held``, on the held-out ones: its
        estimate ``m``, error variance ``v_m`` and local leave-one-out error ``local``. ``fit_o``, ``pred_o``: the
        other tasks split as :func:`_split_others` splits them."""
        S, items = self.source_, self.items_
        learn = learn.fit(S[~held], items, others=fit_o)
        m = learn.predict(S[held][:, items], others=pred_o).estimate
        return {"m": m, "v_m": learn.error_variance(S[held][:, items]),
                "local": local_loo_mse(learn.loo_residuals_, S[~held].mean(axis=1), m)}

    def _split_parts(self, others: list, held: np.ndarray, frontier: bool) -> dict:
        """One held-out split's parts (see :meth:`_held_out_errors`)."""
        S, items = self.source_, self.items_
        fit_o, pred_o = _split_others(others, held)
        reg = self._regression_part(self._fold_learner(), held, fit_o, pred_o)
        design = DifficultyAIPW(level=self.level, alpha=self.alpha, n_folds=self.n_folds).fit(
            S[~held], items, others=fit_o)
        truth, full = S[held].mean(axis=1), S[~held].mean(axis=1)
        a = design.predict(S[held][:, items], others=pred_o)
        n = int(held.sum())
        # The design standard error (the interval is shifted for skewness).
        return {"e_a": a.estimate - truth, "sd_a": np.maximum(a.se, 1e-12), "a": a.estimate, "al": a.lower,
                "au": a.upper, **reg, "e_m": reg["m"] - truth, "truth": truth,
                "lo": np.full(n, full.min()), "hi": np.full(n, full.max()), "frontier": np.full(n, frontier)}

    def _cross_validated_correlation(self, held: dict) -> float:
        """Correlation of the two parts' standardised errors on held-out source models (0 to 0.95).

        Both parts read the same sampled answers, so their errors move together; the composite's weight
        and variance account for it.
        """
        if not held["e_m"].size:
            return 0.0
        z_m, z_a = held["e_m"] / np.sqrt(held["v_m"]), held["e_a"] / held["sd_a"]
        norm = np.sqrt(np.sum(z_m ** 2) * np.sum(z_a ** 2))
        if not norm > 0:  # no held-out error at all (a task every source model scores alike): nothing to correlate
            return 0.0
        return float(np.clip(np.sum(z_m * z_a) / norm, 0.0, 0.95))

    def _cross_validated_choice(self, held: dict) -> tuple:
        """``(lam, clip)``: the factor on the regression's error variance (among ``variance_scales``) and the
        gap's clip (among ``gap_clips``) whose composite has the least mean absolute error on the held-out
        source models, the interleaved folds and the sources' own frontier counting alike.

        The regression's leave-one-out variance decides how far the composite trusts it; a few models
        the regression misses badly can inflate that variance, and its errors and the design-based
        ones are correlated, so the weight is checked on models it did not see (each against its
        training folds' range). The clip (:func:`~.item_composite.clipped_gap`) trades the regression's
        precision for models inside the population against its bias beyond it: the interleaved folds
        judge the first, the sources' frontier split the second.
        """
        return self._scored_choice(held)[1:]

    def _scored_choice(self, held: dict) -> tuple:
        """``(score, lam, clip)``: :meth:`_cross_validated_choice` with its held-out mean absolute error."""
        if not held["e_m"].size:
            return np.inf, 1.0, np.inf
        groups = [g for g in (~held["frontier"], held["frontier"]) if g.any()]
        best = (np.inf, 1.0, np.inf)
        for lam in self.variance_scales:
            for clip in self.gap_clips:
                w = self._scaled_weight(held["v_s"], held["a"], held["v_m"], lam, (held["lo"], held["hi"]),
                                        m=held["m"], clip=clip)
                err = np.abs(w * held["e_m"] + (1 - w) * held["e_a"])
                score = float(np.mean([err[g].mean() for g in groups]))
                if score < best[0] - 1e-12:
                    best = (score, float(lam), float(clip))
        return best

    def _fold_learner(self):
        """The regression refitted on a fold of the source models, at the setting chosen on all of them."""
        return self.learner(level=self.level, **self.learn_.fixed_params())

    def _gap(self, a, sd_a, bounds=None, m=None, clip=None) -> np.ndarray:
        """The target's distance beyond the source models' range (``bounds``, default theirs):
        :func:`~.item_composite.clipped_gap` of the design estimate ``a``, clipped ``clip`` (default the chosen
        ``gap_clip_``) design standard errors from the regression's estimate ``m`` (unclipped without ``m``).
        With ``m``, the gap above the range is at least ``a - hi - GAP_LOWER_Z sd_a`` (:data:`GAP_LOWER_Z`)."""
        bounds = self.range_ if bounds is None else bounds
        if m is None:
            return clipped_gap(a, a, sd_a, bounds, self.floor_margin, np.inf)
        g = clipped_gap(a, m, sd_a, bounds, self.floor_margin, self.gap_clip_ if clip is None else clip)
        a, sd_a = np.asarray(a, dtype=float), np.asarray(sd_a, dtype=float)
        return np.maximum(g, a - bounds[1] - GAP_LOWER_Z * sd_a)

    def _model_variance(self, a: np.ndarray, sd_a: np.ndarray, v_m, bounds=None, m=None, clip=None) -> np.ndarray:
        """The regression's error variance for targets whose design-based estimate is ``a``.

        Its error variance inside the population ``v_m`` (:meth:`~.item_learn.KernelLearn.error_variance`) plus the
        squared gap (:meth:`_gap`), times ``gap_scale``, beyond the source models' range. Below the
        population, ``floor_margin`` design standard errors are allowed first: many populations crowd at
        chance level, where a weak model falls below the range by noise alone.
        """
        return v_m + (self.gap_scale * self._gap(a, sd_a, bounds, m, clip)) ** 2

    def _scaled_weight(self, v_a, a, v_m, lam, bounds=None, m=None, clip=None) -> np.ndarray:
        """The regression's share with its error variance ``v_m`` taken ``lam`` times (0: the regression alone
        inside the population, the composite only for a target beyond it)."""
        v_m = lam * v_m
        return self._weight(v_a, self._model_variance(a, np.sqrt(v_a), v_m, bounds, m, clip), v_m)[0]

    def _weight(self, v_a: np.ndarray, v_model: np.ndarray, v_m) -> tuple:
        """``(w, c)``: the regression's variance-minimising share given the errors' covariance ``c``."""
        # The covariance is that of the population's models (the regression's part of the error only).
        c = self.error_correlation_ * np.sqrt(v_a * v_m)
        w = np.clip((v_a - c) / np.maximum(v_a + v_model - 2 * c, 1e-300), 0.0, 1.0)
        return w, c

    def predict(self, Y, others=()) -> ItemEstimate:
        others = list(others)
        a = self.design_.predict(Y, others=others)
        if self.learn_ is None:  # the design-based estimate already: nothing to widen
            self.weight_ = np.zeros_like(a.estimate)
            self.beyond_sources_ = np.zeros(len(a.estimate), dtype=bool)
            return a
        m = self.learn_.predict(Y, others=others).estimate
        v_m = self.learn_.error_variance(Y)
        v_s = gvf_variance(self.gvf_, a.estimate, a.se ** 2)
        w = self._scaled_weight(v_s, a.estimate, v_m, self.variance_scale_, m=m)
        self.weight_ = w  # the regression's share, per target (for reports)
        local = local_loo_mse(self.learn_.loo_residuals_, self.source_.mean(axis=1), m)
        est, centre, scaled, cross, fixed = self._interval_parts(a.estimate, a.lower, a.upper, a.se, m, v_m, local, w)
        se = np.sqrt(np.maximum(self.interval_scale_ ** 2 * scaled + self.interval_scale_ * cross + fixed, 0.0))
        z = _z(self.level)
        lower, upper = centre - z * se, centre + z * se
        if self.hull_edge:  # a design estimate just beyond the range: the inner side reaches the regression's bound
            # the regression's own error (not the disagreement with a design estimate that is beyond by its noise)
            r = z * self.interval_scale_ * np.sqrt(np.maximum(v_m, local))
            lower, upper = edge_hull(lower, upper, a.estimate, a.se, self.range_, m - r, m + r, GAP_LOWER_Z)
            se = np.maximum(se, (upper - lower) / (2 * z))
        res = ItemEstimate(est, lower, upper, self.level, se)
        beyond = other_tasks_mean(others) - self.others_reach_ if others else np.full(len(est), np.nan)
        self.beyond_sources_ = beyond > 0
        res = widen_beyond_sources(res, a, beyond)
        if self.own_ is not None and self.beyond_sources_.any():
            res = replace(res, estimate=agreement_estimate(res.estimate, a.estimate, self.own_.predict(Y).estimate,
                                                           self.beyond_sources_))
        return res

    def _interval_parts(self, a, al, au, sd_a, m, v_m, local, w, bounds=None) -> tuple:
        """``(estimate, centre, scaled, cross, fixed)``: the composite and its error variance, ``k**2 scaled + k
        cross + fixed`` with ``k`` the interval's calibrated scale (:meth:`_calibrated_scale`).

        The regression's error variance for this target is (a) inside the population, its error
        variance ``v_m`` (:meth:`~.item_learn.KernelLearn.error_variance`) or, if larger, the mean squared
        leave-one-out error of the source models nearest the target's score (:func:`local_loo_mse`: the
        regression errs more near the population's edge than in its middle) or the disagreement ``(m -
        a)**2 - V_a + 2 C`` (a moment estimate of this target's squared regression error, Fay and Herriot
        1979), the part ``k`` scales; and (b) beyond it, the squared gap of :meth:`_model_variance` plus
        ``edge_slope**2`` times the expected squared distance of the target's score beyond the source
        models' range, the score drawn from the design-based estimate's distribution
        (:func:`expected_squared_gap`): a target whose noisy design estimate falls just inside the range
        may lie beyond it, where the regression cannot follow. The design part keeps
        :func:`~.item_estimators.design_interval`'s skewness shift, in proportion ``1 - w``, and the
        quantile is the normal one, as there: a target the regression gets no weight for has the
        design-based interval itself. ``edge_slope`` (2) was chosen among 1, 1.5, 2 and 3 on seeds 0-19
        of the shared item tables (in-sample for those seeds).
        """
        v_a = sd_a ** 2
        c = self.error_correlation_ * np.sqrt(v_a * v_m)
        bounds = self.range_ if bounds is None else bounds
        inside = np.maximum(v_m, np.maximum(local, (m - a) ** 2 - v_a + 2 * c))
        edge = expected_squared_gap(a, sd_a, bounds, self.floor_margin * sd_a)
        beyond = (self.gap_scale * self._gap(a, sd_a, bounds, m)) ** 2 + self.edge_slope ** 2 * edge
        est = w * m + (1 - w) * a
        centre = est + (1 - w) * ((al + au) / 2 - a)
        return est, centre, w ** 2 * inside, 2 * w * (1 - w) * c, w ** 2 * beyond + (1 - w) ** 2 * v_a

    def _calibrated_scale(self, held: dict) -> float:
        """The interval's scale ``k`` on the regression's error inside the population, split-conformal on the
        held-out source models of the interleaved folds (:func:`~.item_composite.coverage_scale`).

        The regression's error variance is estimated from leave-one-out residuals of the models that also
        chose its settings, and its excess terms enter through a maximum: its interval over- or
        under-covers by a factor the held-out models measure. Only that part is scaled: the design-based
        part and the allowance beyond the range stay as they are, so a target beyond the population keeps
        the design-based interval. The held-out models' regression parts are :meth:`_reselected`'s (each fold's
        regression chose its own settings), so they are as new to it as a target is. 1 with fewer than 10
        held-out models.
        """
        if held["e_m"].size < 10:
            return 1.0
        bounds = (held["lo"], held["hi"])
        w = self._scaled_weight(held["v_s"], held["a"], held["v_m"], self.variance_scale_, bounds, m=held["m"])
        _, centre, scaled, cross, fixed = self._interval_parts(
            held["a"], held["al"], held["au"], held["sd_a"], held["m"], held["v_m"], held["local"], w, bounds)
        return coverage_scale(held["truth"] - centre, scaled, cross, fixed, self.level, _z(self.level))


class SelectedAIPW(DifficultyAIPW):
    """Cross-fitted AIPW whose working model is chosen per target by nested cross-fitting.

    Candidates: the paper's ridge, :class:`DifficultyAIPW`'s difficulty logit, a multidimensional logit
    (the difficulty features plus each item's loadings on the ``dims`` leading answer patterns of the
    benchmark's population, :func:`~.item_working.item_loadings`, slopes with prior standard deviation
    ``loading_prior``; its abilities are the target's own, fitted on every task's sampled items with one
    free intercept per task), and the ridge's mean with each logit. For each fold of the sampled items,
    :func:`~.item_working.choose_working` takes the candidate whose residuals vary least in an
    ``n_inner``-fold cross-fit inside the other folds, so the estimate stays design-unbiased and its
    interval is :class:`~.item_estimators.AIPW`'s design-based one. ``choices_`` counts the candidates
    chosen (over targets and folds) in the last ``predict``.

    References
    ----------
    Zhang, Dorner and Hardt (2025), §4; Chernozhukov et al. (2018) (cross-fitting); Reckase (2009), ch. 4.
    """

    #: Names of the candidates, in :meth:`_candidates`' order (``choices_`` counts them).
    CANDIDATES = ("ridge", "logit", "loadings_logit", "ridge+logit", "ridge+loadings_logit")

    def __init__(self, *, level: float = 0.90, alpha: float = 10.0, n_folds: int = 5, prior: float = 1.0,
                 n_newton: int = 25, dims: int = 2, loading_prior: float = 0.3, n_inner: int = 4):
        super().__init__(level=level, alpha=alpha, n_folds=n_folds, prior=prior, n_newton=n_newton)
        self.dims = dims
        self.loading_prior = loading_prior
        self.n_inner = n_inner

    def fit(self, source, items, others=()):
        super().fit(source, items, others=others)
        loads = item_loadings([self.source_] + [S_k for S_k, _ in self.others_], self.dims)
        self.loadings_own_ = np.hstack([self.features_, loads[0]])
        k1 = len(self.others_) + 1
        rows = [np.hstack([difficulty_features(S_k)[it], L[it], np.eye(k1)[np.full(len(it), j + 1)]])
                for j, ((S_k, it), L) in enumerate(zip(self.others_, loads[1:]))]
        self.loadings_rows_ = np.vstack(rows) if rows else np.empty((0, self.loadings_own_.shape[1] + k1))
        self.slope_prec_ = np.r_[np.full(self.features_.shape[1], 1.0 / self.prior ** 2),
                                 np.full(loads[0].shape[1], 1.0 / self.loading_prior ** 2)]
        return self

    def predict(self, Y, others=()) -> ItemEstimate:
        self.choices_ = dict.fromkeys(self.CANDIDATES, 0)
        return super().predict(Y, others=others)

    def _candidates(self, train_items, Y_train, Y_other) -> list:
        ridge = np.clip(AIPW._working(self, train_items, Y_train, {}), 0.0, 1.0)
        logit = self._logit(train_items, Y_train, Y_other)
        loaded = self._logit(train_items, Y_train, Y_other, self.loadings_own_, self.loadings_rows_, self.slope_prec_)
        return [ridge, logit, loaded, 0.5 * (ridge + logit), 0.5 * (ridge + loaded)]

    def _working(self, train_items, Y_train, context):
        Y_other = context["Y_other"]
        F, choice = choose_working(lambda it, Y: self._candidates(it, Y, Y_other), train_items, Y_train,
                                   self.n_inner)
        for k, c in zip(self.CANDIDATES, np.bincount(choice, minlength=len(self.CANDIDATES))):
            self.choices_[k] += int(c)
        return F


#: name -> estimator, registered as item estimator plugins next to those of :mod:`.item_estimators` and
#: :mod:`.item_irt_estimators`.
ESTIMATORS = {
    "random_learn_crosstask": CrossTaskLearn,
    "aipw_difficulty": DifficultyAIPW,
    "kernel_learn": KernelLearn,
    "stacked_learn": StackedLearn,
    "crosstask": CrossTask,
    "aipw_select": SelectedAIPW,
}
