"""Full-task scores from a few items: design-based and model-assisted estimators with intervals.

A new model answers ``n`` of a task's ``N`` items, drawn by simple random sampling; the population's
models answered all of them (the ``source`` matrix, models x items). Each estimator gives the new model's
mean score over all ``N`` items with a two-sided interval at ``level``.

* :class:`SampleMean`: the sample mean, with the finite-population variance (design-based: unbiased
  whatever the model, including one stronger than every source model).
* :class:`RandomLearn`: ridge regression (cross-validated penalty) of the source models' full scores on
  their scores on the sampled items ("random sampling + learn" of Zhang, Dorner and Hardt 2025), with a
  split-conformal interval from the source models' leave-one-out residuals. Strong when the new model
  resembles the source models, biased at the frontier.
* :class:`AIPW`: the augmented inverse-probability-weighted (difference) estimator of Zhang, Dorner and
  Hardt (2025, §4): a working model predicts the new model's answer on every item from the source
  models' answers to it, and the sampled items' residuals correct its bias. The working model is
  cross-fitted over the sampled items, so the estimate is design-unbiased and its design variance is
  estimated from out-of-fold residuals (cross-fitting as in Chernozhukov et al. 2018).
* :class:`AIPWPaper`: the same estimator exactly as the authors' code computes it (ridge with penalty
  10 fitted on all sampled items), kept as the published baseline; its interval uses in-sample residuals.
* :class:`~.item_irt_estimators.IRT`, :class:`~.item_irt_estimators.PIRT`,
  :class:`~.item_irt_estimators.GPIRT`, :class:`~.item_irt_estimators.AIPWIRT` and
  :class:`~.item_irt_estimators.CrossTaskAIPW`, the estimators on the 2PL model of tinyBenchmarks
  (Polo et al. 2024), live in :mod:`.item_irt_estimators`.
* :class:`AnchorWeighted`: anchor points (Vivek et al. 2024): k-medoids of the items on one minus the
  correlation of their source answers; an anchor's weight is the share of items nearest to it.
* :class:`Composite`: a Fay-Herriot-type combination of the model-based :class:`RandomLearn` and the
  design-based :class:`AIPW`: the regression gets weight ``V_aipw / (V_aipw + V_model)``, where the model
  error ``V_model`` is the larger of the source models' leave-one-out error and the squared
  disagreement between the two estimates beyond what their variances explain. Where the new model
  lies outside the source population the disagreement grows and the estimate falls back to AIPW.

References
----------
Zhang, Dorner and Hardt (2025), "How Benchmark Prediction from Fewer Data Misses the Mark", NeurIPS,
§3-4 (random sampling, random sampling + learn, AIPW). Vivek et al. (2024), "Anchor Points:
Benchmarking Models with Much Fewer Examples", EACL (anchor weighting). Cochran (1977), Sampling
Techniques, §2.5 (finite-population variance) and §7.7 (difference estimator). Fay and Herriot (1979),
JASA 74 (composite estimation). Polo et al. (2024), "tinyBenchmarks: evaluating LLMs with fewer
examples", ICML, §3 (IRT, p-IRT, gp-IRT).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from harness_ext.base import BaseEstimator, check_level, check_source_items, check_targets

from harness_ext.methods.engine.conformal import _normal_quantile

@dataclass
class ItemEstimate:
    """Estimates of the full-task mean for each target model, with a two-sided interval at ``level``."""

    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    level: float
    #: The estimate's standard error where the interval is built from one (design-based estimators); an
    #: interval shifted for skewness is not symmetric, so its width alone does not give the standard error.
    se: np.ndarray | None = None
    #: Per target, how far its mean over the benchmark's other tasks' sampled items lies above every source
    #: model's on the same items (positive: beyond the sources there, and its interval widened; NaN: not looked
    #: at), for an estimator that flags it (:class:`~.item_crosstask.CrossTask`); None for the others.
    beyond_sources: np.ndarray | None = None

    @property
    def width(self) -> np.ndarray:
        return self.upper - self.lower


def random_items(n_total: int, n_items: int, random_state: int = 0) -> np.ndarray:
    """Indices of ``n_items`` of ``n_total`` items drawn uniformly without replacement.

    ``numpy.random.RandomState(random_state).permutation(n_total)[:n_items]``: the draw of the
    benchmark-prediction code of Zhang, Dorner and Hardt (2025) for the same seed.
    """
    return np.random.RandomState(random_state).permutation(n_total)[:n_items]


def _z(level: float, df: float | None = None) -> float:
    """The two-sided quantile of ``level``: Student's t with ``df`` degrees of freedom, else the normal's."""
    if df is None:
        return _normal_quantile(level)
    from scipy import stats

    return float(stats.t.ppf(0.5 + level / 2, df))


def _design_variance(residual_var: np.ndarray, n: int, n_total: int) -> np.ndarray:
    """Variance of a mean of ``n`` of ``n_total`` items under simple random sampling (Cochran 1977, eq. 2.8)."""
    return (1.0 - n / n_total) * residual_var / n


def _is_binary(Y: np.ndarray) -> bool:
    """Whether every score is 0 or 1 (correctness), so the binary variance rules apply."""
    return bool(np.isin(Y, (0.0, 1.0)).all())


def _binary_variance(Y: np.ndarray) -> np.ndarray:
    """Per-row variance of sampled scores; for 0/1 scores the Agresti-Coull-adjusted p(1-p).

    An all-correct sample has sample variance 0, which would give a zero-width interval; the adjusted
    proportion (successes + 2) / (n + 4) keeps it honest (Agresti and Coull 1998).
    """
    n = Y.shape[1]
    if _is_binary(Y):
        p = (Y.sum(axis=1) + 2.0) / (n + 4.0)
        return p * (1.0 - p) * n / (n - 1.0)
    return Y.var(axis=1, ddof=1)


def _residual_variance(resid: np.ndarray, binary: bool) -> np.ndarray:
    """Per-row variance of out-of-fold residuals (targets, items), floored for 0/1 scores.

    A sample whose residuals are all (near) zero says little about the items not drawn: for 0/1 scores the
    per-item variance is floored at that of a proportion with no observed misses (Agresti and Coull 1998).
    """
    s2 = resid.var(axis=1, ddof=1)
    return np.maximum(s2, no_miss_variance(resid.shape[1])) if binary else s2


def no_miss_variance(n: int) -> float:
    """The variance floor of 0/1 scores sampled ``n`` at a time: that of the Agresti-Coull proportion of a sample
    with no observed miss, ``p0 (1 - p0)`` with ``p0 = 2 / (n + 4)`` (Agresti and Coull 1998)."""
    p0 = 2.0 / (n + 4.0)
    return p0 * (1.0 - p0)


def design_interval(est: np.ndarray, resid: np.ndarray, n_total: int, level: float, binary: bool = False):
    """``(lower, upper, se)``: the design-based interval of a difference estimator, corrected for skewness.

    ``est`` (targets,) is design-unbiased with error the mean of the ``n`` sampled items' residuals
    ``resid`` (targets, n) minus their population mean, the sample drawn without replacement from
    ``n_total`` items. The standard error is the finite-population one (Cochran 1977, eq. 2.8) of the
    residual variance (:func:`_residual_variance`). The interval is Johnson's (1978, eq. 2.5) for a skewed
    mean: the inversion of his modified t, ``est + mu3 (1 + 2 z^2) / (6 s^2 n) -/+ z se``, with ``mu3``
    the residuals' third central moment (unbiased form) times ``1 - 2 n / n_total``, the factor of the
    third cumulant of a mean without replacement. On 0/1 scores far from 1/2 the residuals are skewed
    and the sample's variance moves with its mean (a sample with fewer misses than the population gives
    both a higher estimate and a narrower interval); the shift moves the interval against the skew. The
    quantile is the normal one: the correction is the Edgeworth term of the studentised mean, which
    already accounts for the estimated variance to this order (Hall 1992).

    Parameters
    ----------
    est : ndarray (targets,)
        The design-unbiased estimates.
    resid : ndarray (targets, n)
        Each target's residuals on the sampled items (out-of-fold for a cross-fitted working model).
    n_total : int
        Items in the task.
    level : float
        Two-sided coverage.
    binary : bool
        Whether the scores are 0/1 (then the residual variance is floored, :func:`_residual_variance`).

    References
    ----------
    Johnson (1978), "Modified t tests and confidence intervals for asymmetrical populations", JASA 73,
    eq. 2.5; Hall (1992), "On the removal of skewness by transformation", JRSS B 54 (the Edgeworth
    basis of Johnson's correction); Cochran (1977), §2.5, §7.7.
    """
    resid = np.atleast_2d(resid)
    n = resid.shape[1]
    s2 = _residual_variance(resid, binary)
    se = np.sqrt(_design_variance(s2, n, n_total))
    z = _z(level)
    if n > 2:
        m3 = ((resid - resid.mean(axis=1, keepdims=True)) ** 3).mean(axis=1) * n * n / ((n - 1.0) * (n - 2.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            shift = (1.0 - 2.0 * n / n_total) * m3 * (1.0 + 2.0 * z * z) / (6.0 * s2 * n)
        shift = np.where(s2 > 0, shift, 0.0)  # constant residuals (non-0/1 scores): no skew to correct
    else:
        shift = np.zeros_like(est)
    centre = est + shift
    return centre - z * se, centre + z * se, se


def _ridge_dual(X: np.ndarray, Y: np.ndarray, alpha: float):
    """Ridge with intercept of each column of ``Y`` on ``X`` (rows are observations), in dual form.

    Returns ``(coef, intercept)`` with ``coef`` of shape (features, targets). The dual form solves an
    observations x observations system, cheap when there are fewer sampled items than source models.
    """
    xm, ym = X.mean(axis=0), Y.mean(axis=0)
    Xc, Yc = X - xm, Y - ym
    K = Xc @ Xc.T
    K[np.diag_indices_from(K)] += alpha
    coef = Xc.T @ np.linalg.solve(K, Yc)
    return coef, ym - xm @ coef


class _ItemEstimator(BaseEstimator):
    """Base: ``fit(source, items)`` with the population's answers, ``predict(Y)`` for the targets' samples.

    As scikit-learn's estimators: ``__init__`` stores its parameters unchanged, ``set_params`` changes them,
    and ``fit``/``predict`` check them and their inputs (:func:`harness_ext.base.check_source_items`), raising a ValueError.
    """

    def __init__(self, *, level: float = 0.90):
        self.level = level

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Every estimator's own predict gets the input check, so a plugin's predict needs no code for it.
        if "predict" in vars(cls) and not getattr(cls.predict, "_checks_targets", False):
            cls.predict = _checking_targets(cls.predict)

    def get_params(self, deep: bool = True) -> dict:
        return {k: v for k, v in vars(self).items() if not k.endswith("_")}

    #: The fewest population models ``fit`` needs (0: the estimator reads only the task's number of items).
    min_source_models = 1

    def fit(self, source: np.ndarray, items: np.ndarray):
        name = type(self).__name__
        check_level(self.level, name)
        self.source_, self.items_ = check_source_items(source, items, name, self.min_source_models)
        self.n_total_ = self.source_.shape[1]
        return self

    def _n_sampled(self) -> int:
        """How many answers per target ``predict`` takes (a ValueError before ``fit``)."""
        if not hasattr(self, "items_"):
            raise ValueError(f"{type(self).__name__} is not fitted: call fit(source, items) before predict")
        return len(self.items_)

    def _interval(self, est, var, df=None) -> ItemEstimate:
        se = np.sqrt(np.maximum(var, 0.0))
        h = _z(self.level, df) * se
        return ItemEstimate(est, est - h, est + h, self.level, se)


def _checking_targets(predict):
    """``predict`` with the level and the targets' answers checked first (:func:`harness_ext.base.check_targets`)."""
    @functools.wraps(predict)
    def checked(self, Y, *args, **kwargs):
        name = type(self).__name__
        check_targets(Y, self._n_sampled(), name)
        check_level(self.level, name)  # set_params may have changed it after fit
        return predict(self, Y, *args, **kwargs)

    checked._checks_targets = True
    return checked


class SampleMean(_ItemEstimator):
    """Mean of the sampled items, with the finite-population t interval (Cochran 1977, §2.5)."""

    #: Purely design-based: the error comes from this task's own random draw, so the errors of a benchmark's
    #: tasks (drawn independently) are independent and the benchmark's variance is the sum of theirs.
    design_based = True
    #: Nothing but the task's size comes from the population: a task known only by its size (``source`` with no
    #: rows) is estimated as well.
    min_source_models = 0

    def predict(self, Y: np.ndarray) -> ItemEstimate:
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        n = Y.shape[1]
        var = _design_variance(_binary_variance(Y), n, self.n_total_)
        return self._interval(Y.mean(axis=1), var, df=n - 1)


class RandomLearn(_ItemEstimator):
    """Ridge regression of the full score on the sampled items (Zhang, Dorner and Hardt 2025, §3).

    The penalty is chosen by leave-one-out over the source models among ``alphas`` (scikit-learn's
    RidgeCV, as the authors' code); the interval is split-conformal on the same leave-one-out residuals.
    With fewer source models than the level needs (9 at 90%) it is the whole score range ([0, 1] for
    0/1 scores): no narrower interval is justified.
    """

    def __init__(self, *, level: float = 0.90, alphas: tuple = (0.1, 1.0, 10.0)):
        super().__init__(level=level)
        self.alphas = alphas

    def fit(self, source, items):
        from sklearn.linear_model import RidgeCV

        super().fit(source, items)
        X, y = self.source_[:, self.items_], self.source_.mean(axis=1)
        self.model_ = RidgeCV(alphas=self.alphas, store_cv_results=True).fit(X, y)
        # With the default scoring, RidgeCV stores each source model's leave-one-out squared error.
        sq = self.model_.cv_results_[:, list(self.alphas).index(self.model_.alpha_)]
        self.loo_residuals_ = np.sqrt(sq)
        self.radius_ = conformal_radius(self.loo_residuals_, self.level)
        self.loo_mse_ = float(np.mean(self.loo_residuals_ ** 2))
        self.score_range_ = (0.0, 1.0) if _is_binary(self.source_) else (-np.inf, np.inf)
        return self

    def predict(self, Y) -> ItemEstimate:
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        return radius_interval(self.model_.predict(Y), self.radius_, self.score_range_, self.level)


def conformal_radius(residuals, level: float) -> float:
    """Split-conformal radius of absolute leave-one-out ``residuals``, or ``inf`` with too few of them.

    Split conformal needs ``ceil(level (m + 1)) <= m`` residuals (9 at 90%): with fewer, no finite radius
    covers at the level, so the interval is the whole range of scores.

    References
    ----------
    Vovk, Gammerman and Shafer (2005); Lei et al. (2018), split conformal prediction.
    """
    r = np.sort(np.asarray(residuals, dtype=float))
    k = int(np.ceil(level * (len(r) + 1)))
    return float(r[k - 1]) if k <= len(r) else np.inf


def radius_interval(est, radius: float, score_range: tuple, level: float) -> ItemEstimate:
    """``est +/- radius``, or the whole ``score_range`` when the radius is infinite."""
    lo, hi = est - radius, est + radius
    if np.isinf(radius):
        lo, hi = np.full_like(est, score_range[0]), np.full_like(est, score_range[1])
    return ItemEstimate(est, lo, hi, level)


class AIPWPaper(_ItemEstimator):
    """AIPW exactly as the authors' code: ridge (penalty 10) on all sampled items, PPI-style correction.

    ``mean(y_S) + (mean f(rest) - mean f(S)) / (1 + n / N_rest)`` (Zhang, Dorner and Hardt 2025, §4).
    The interval uses the in-sample residuals' design variance: too narrow, since ``f`` saw them.
    """

    def __init__(self, *, level: float = 0.90, alpha: float = 10.0):
        super().__init__(level=level)
        self.alpha = alpha

    def predict(self, Y) -> ItemEstimate:
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        n = Y.shape[1]
        rest = np.setdiff1d(np.arange(self.n_total_), self.items_)
        X_s, X_r = self.source_[:, self.items_].T, self.source_[:, rest].T
        coef, b = _ridge_dual(X_s, Y.T, self.alpha)
        f_s, f_r = X_s @ coef + b, X_r @ coef + b
        est = Y.mean(axis=1) + (f_r.mean(axis=0) - f_s.mean(axis=0)) / (1.0 + n / len(rest))
        var = _design_variance((Y.T - f_s).var(axis=0, ddof=1), n, self.n_total_)
        return self._interval(est, var, df=n - 1)


class AIPW(_ItemEstimator):
    """Cross-fitted AIPW (difference) estimator with its design-based variance.

    The sampled items are split into ``n_folds``; for each fold the working model (ridge with penalty
    ``alpha`` of the target's answers on the source models' answers, items as observations) is fitted on
    the other folds, and the fold's items are a simple random sample of the items it did not see:
    ``theta_k = (sum_{train} y + sum_{unseen} f_k + (N_unseen / n_k) sum_{fold} (y - f_k)) / N``.
    The estimate is the mean of the ``theta_k``; its variance is the design variance of the pooled
    out-of-fold residuals, which stays valid whatever the target model is, and the interval is
    :func:`design_interval`'s (Johnson's skewness correction: 0/1 answers near 0 or 1 give skewed
    residuals, where the plain t interval misses more often on one side).

    References
    ----------
    Zhang, Dorner and Hardt (2025), §4 (AIPW for benchmark prediction); Cochran (1977), §7.7
    (difference estimator); Chernozhukov et al. (2018), Econometrics Journal 21 (cross-fitting).
    """

    #: Purely design-based (cross-fitted residuals of this task's own draw): see :attr:`SampleMean.design_based`.
    design_based = True

    def __init__(self, *, level: float = 0.90, alpha: float = 10.0, n_folds: int = 5):
        super().__init__(level=level)
        self.alpha = alpha
        self.n_folds = n_folds

    def _folds(self, n: int) -> np.ndarray:
        # Deterministic: the items are already a random sample, so interleaved folds are random folds.
        return np.arange(n) % max(2, min(self.n_folds, n))

    def _working(self, train_items: np.ndarray, Y_train: np.ndarray, context: dict) -> np.ndarray:
        """The working model's prediction for every item (items, targets) from the targets' answers to ``train_items``."""
        X_all = self.source_.T
        coef, b = _ridge_dual(X_all[train_items], Y_train.T, self.alpha)
        return X_all @ coef + b

    def predict(self, Y, **context) -> ItemEstimate:
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        n, N = Y.shape[1], self.n_total_
        fold = self._folds(n)
        binary = _is_binary(Y)
        thetas, resid = [], np.empty_like(Y)
        for k in np.unique(fold):
            tr, te = self.items_[fold != k], self.items_[fold == k]
            f = self._working(tr, Y[:, fold != k], context)
            f = np.clip(f, 0.0, 1.0) if binary else f
            unseen = np.ones(N, dtype=bool)
            unseen[tr] = False
            r = Y[:, fold == k].T - f[te]
            resid[:, fold == k] = r.T
            n_unseen = unseen.sum()
            theta = (Y[:, fold != k].sum(axis=1) + f[unseen].sum(axis=0) + n_unseen * r.mean(axis=0)) / N
            thetas.append(theta)
        est = np.mean(thetas, axis=0)
        lo, hi, se = design_interval(est, resid, N, self.level, binary)
        return ItemEstimate(est, lo, hi, self.level, se)


class AnchorWeighted(_ItemEstimator):
    """Anchor points (Vivek et al. 2024): k-medoids anchors on item correlations, cluster-share weights.

    Selects its own items (``select``); ``predict`` is the weighted mean of the target's anchor answers.
    The medoids come from alternating k-medoids (Park and Jun 2009) with a random start, where the
    authors' code uses FasterPAM; both minimise the same objective. No interval: the method has none.
    """

    def __init__(self, *, level: float = 0.90, max_iter: int = 50):
        super().__init__(level=level)
        self.max_iter = max_iter

    def select(self, source: np.ndarray, n_items: int, random_state: int = 0) -> np.ndarray:
        S = np.asarray(source, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            C = np.corrcoef(S, rowvar=False)
        C[np.isnan(C)] = 0.0
        D = 1.0 - C
        rng = np.random.RandomState(random_state)
        med = rng.permutation(D.shape[0])[:n_items]
        for _ in range(self.max_iter):
            lab = np.argmin(D[med], axis=0)
            new = med.copy()
            for c in range(len(med)):
                members = np.flatnonzero(lab == c)
                if members.size:
                    new[c] = members[np.argmin(D[np.ix_(members, members)].sum(axis=0))]
            if np.array_equal(np.sort(new), np.sort(med)):
                break
            med = new
        med = np.unique(med)
        lab = np.argmax(C[med], axis=0)
        self.weights_ = np.bincount(lab, minlength=len(med)) / D.shape[0]
        return med

    def _n_sampled(self) -> int:
        # Its answers are the anchors that select() chose, weighted by select()'s cluster shares.
        if getattr(self, "weights_", None) is None:
            raise ValueError("AnchorWeighted is not fitted: call select(source, n_items) and fit(source, anchors) "
                             "before predict")
        return len(self.weights_)

    def predict(self, Y) -> ItemEstimate:
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        est = Y @ self.weights_
        nan = np.full_like(est, np.nan)
        return ItemEstimate(est, nan, nan, self.level)


class Composite(_ItemEstimator):
    """Fay-Herriot-type combination of :class:`RandomLearn` (model-based) and :class:`AIPW` (design-based).

    With ``d`` the difference of the two estimates, ``V_a`` AIPW's design variance and ``V_m`` the
    regression's leave-one-out mean squared error on the source models, the regression's error
    variance for this target is ``max(V_m, d**2 - V_a)`` (a per-target moment estimate: a target unlike
    the source models shows it as a disagreement no variance explains), and the estimate is
    ``w * learn + (1 - w) * aipw`` with ``w = V_a / (V_a + V_model)``. The interval uses the combined
    variance ``w**2 V_model + (1 - w)**2 V_a`` inflated by ``inflation`` for the two estimates' correlation.

    References
    ----------
    Fay and Herriot (1979), JASA 74, eq. 5 (composite of a direct and a synthetic estimate);
    Zhang, Dorner and Hardt (2025), §3-4 (the two components).
    """

    def __init__(self, *, level: float = 0.90, alpha: float = 10.0, n_folds: int = 5, inflation: float = 1.0):
        super().__init__(level=level)
        self.alpha = alpha
        self.n_folds = n_folds
        self.inflation = inflation

    def fit(self, source, items):
        super().fit(source, items)
        self.learn_ = RandomLearn(level=self.level).fit(source, items)
        self.aipw_ = AIPW(level=self.level, alpha=self.alpha, n_folds=self.n_folds).fit(source, items)
        return self

    def predict(self, Y) -> ItemEstimate:
        a = self.aipw_.predict(Y)
        m = self.learn_.predict(Y)
        v_a = a.se ** 2
        d2 = (a.estimate - m.estimate) ** 2
        v_m = np.maximum(self.learn_.loo_mse_, d2 - v_a)
        w = v_a / (v_a + v_m)
        est = w * m.estimate + (1 - w) * a.estimate
        var = self.inflation * (w ** 2 * v_m + (1 - w) ** 2 * v_a)
        return self._interval(est, var, df=len(self.items_) - 1)


ESTIMATORS = {
    "sample_mean": SampleMean,
    "random_learn": RandomLearn,
    "aipw_paper": AIPWPaper,
    "aipw": AIPW,
    "anchor_weighted": AnchorWeighted,
    "composite": Composite,
}
