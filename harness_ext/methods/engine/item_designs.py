"""Item selection designs beyond simple random sampling: strata by difficulty, budgets across tasks, IRT anchors.

* :func:`difficulty_strata`: strata of a task's items by the population's per-item accuracy (equal-size
  groups of the items ranked by it), so that each stratum holds items of similar difficulty.
* :func:`allocate`: a sample size per stratum (or per task of a benchmark) from a total, proportional to
  the sizes or by Neyman's rule (proportional to size times standard deviation), at least ``min_per``
  and at most the size of each.
* :func:`stratified_items`: a stratified random sample (simple random sampling without replacement in
  each stratum, seeded).
* :class:`StratifiedMean`: the stratified mean with its finite-population variance (design-based: it
  holds whatever the model, a stronger one included).
* :class:`StratifiedAIPW`: the cross-fitted difference (AIPW) estimator of
  :class:`~harness_ext.methods.engine.item_estimators.AIPW` with the stratified design's weights and
  variance: the working model's residuals are expanded stratum by stratum.
* :class:`IRTAnchors`: the anchor points of tinyBenchmarks on the IRT embedding: k-means on the items'
  2PL parameters (discrimination and difficulty), the item nearest each centre an anchor weighted by
  its cluster's share. Its interval is model-based (a conformal quantile of held-out population models'
  errors, the larger of the cross-validated one and the one at the population's own frontier).

References
----------
Cochran (1977), Sampling Techniques, §5.3 (stratified mean, eq. 5.6 variance), §5.5 (proportional
allocation), §5.5-5.6 (Neyman allocation, eq. 5.26), §7.7 (difference estimator). Neyman (1934), JRSS 97.
Polo et al. (2024), "tinyBenchmarks: evaluating LLMs with fewer examples", ICML, §3.1 (anchor points
on the IRT embedding, cluster-size weights). Zhang, Dorner and Hardt (2025), §4 (AIPW).
"""

from __future__ import annotations

import numpy as np

from harness_ext.methods.engine.item_estimators import ItemEstimate, _is_binary, _ItemEstimator, _ridge_dual, \
    no_miss_variance
from harness_ext.methods.engine.item_search import SearchLearn, search_items

#: Allocation rules of :func:`allocate`.
ALLOCATIONS = ("neyman", "proportional")


def difficulty_strata(source: np.ndarray, n_strata: int = 5) -> np.ndarray:
    """Stratum label (0 = hardest) of each item: ``n_strata`` near-equal groups of the items ranked by the
    population's mean score on them (ties broken by item position, so the labels are deterministic)."""
    S = np.asarray(source, dtype=float)
    n = S.shape[1]
    k = int(max(1, min(n_strata, n)))
    order = np.lexsort((np.arange(n), np.nanmean(S, axis=0)))
    labels = np.empty(n, dtype=np.int64)
    labels[order] = np.arange(n) * k // n
    return labels


def stratum_sd(source: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per stratum: the root of the population models' mean within-stratum variance of their scores (the
    ``S_h`` of Neyman's rule, as a typical model of the population sees it)."""
    S = np.asarray(source, dtype=float)
    out = np.zeros(int(labels.max()) + 1)
    for h in range(len(out)):
        cols = S[:, labels == h]
        out[h] = np.sqrt(np.nanmean(np.nanvar(cols, axis=1))) if cols.shape[1] > 1 else 0.0
    return out


def allocate(sizes, n_total: int, *, sds=None, rule: str = "neyman", min_per: int = 2, weights=None) -> np.ndarray:
    """Sample sizes summing to ``n_total`` (or to the sizes' sum, if smaller), proportional to ``sizes``
    (``rule="proportional"``) or to ``weights * sds`` (``"neyman"``; ``weights`` default to the sizes, the
    strata of one mean; for tasks of a benchmark they are the tasks' weights in its score), each between
    ``min(min_per, size)`` and its size; rounded by largest remainder, capped units handed to the others.

    Raises
    ------
    ValueError
        An unknown rule, or a total below ``min_per`` per group.
    """
    if rule not in ALLOCATIONS:
        raise ValueError(f"allocation {rule!r} is not one of {', '.join(ALLOCATIONS)}")
    sizes = np.asarray(sizes, dtype=np.int64)
    lo = np.minimum(min_per, sizes)
    n_total = int(min(n_total, sizes.sum()))
    if n_total < lo.sum():
        raise ValueError(f"{n_total} items cannot give each of {len(sizes)} groups its {min_per}")
    w = sizes.astype(float) if weights is None else np.asarray(weights, dtype=float)
    score = (sizes.astype(float) if rule == "proportional" or sds is None
             else w * np.maximum(np.asarray(sds, dtype=float), 1e-6))
    n = lo.copy()
    for _ in range(len(sizes) + 1):
        free = n < sizes
        left = n_total - n.sum()
        if left <= 0 or not free.any():
            break
        share = np.where(free, score, 0.0)
        # The target of the groups not yet full, at least what each already has.
        target = np.where(free, np.maximum(n, (n[free].sum() + left) * share / share.sum()), n)
        target = np.minimum(target, sizes)
        base = np.floor(target).astype(np.int64)
        extra = n_total - base.sum()
        if extra > 0:
            order = np.argsort(-(target - base), kind="stable")
            room = order[(base[order] < sizes[order])][:extra]
            base[room] += 1
        n = np.minimum(np.maximum(base, lo), sizes)
        if n.sum() == n_total:
            break
    return n


def stratified_items(labels: np.ndarray, n_per: np.ndarray, random_state: int = 0) -> np.ndarray:
    """Column indices of a stratified random sample: ``n_per[h]`` items of stratum ``h`` without replacement,
    each stratum drawn in turn from one ``numpy.random.RandomState(random_state)``; sorted."""
    rng = np.random.RandomState(random_state)
    picks = [np.flatnonzero(labels == h)[rng.permutation(int((labels == h).sum()))[:int(k)]]
             for h, k in enumerate(n_per)]
    return np.sort(np.concatenate(picks)) if picks else np.zeros(0, dtype=np.int64)


def _check_strata(strata, n_total: int, items: np.ndarray, name: str) -> tuple:
    """``(labels, N_h, n_h)``; a stratum left without a sampled item has no unbiased estimate: an error."""
    if strata is None:
        raise ValueError(f"{name}: needs the strata of the design (fit(source, items, strata=...))")
    labels = np.asarray(strata, dtype=np.int64)
    if labels.shape != (n_total,) or labels.min() < 0:
        raise ValueError(f"{name}: {labels.shape} stratum labels for {n_total} items (one label >= 0 each)")
    H = int(labels.max()) + 1
    N_h = np.bincount(labels, minlength=H)
    n_h = np.bincount(labels[items], minlength=H)
    empty = np.flatnonzero((N_h > 0) & (n_h == 0))
    if empty.size:
        raise ValueError(f"{name}: stratum {int(empty[0])} ({int(N_h[empty[0]])} items) has no sampled item")
    return labels, N_h, n_h


class StratifiedMean(_ItemEstimator):
    """The stratified mean ``sum_h W_h mean(y_h)`` with ``W_h = N_h / N`` and its finite-population variance
    ``sum_h W_h^2 (1 - n_h / N_h) s_h^2 / n_h`` (Cochran 1977, eq. 5.1 and 5.6); t interval on ``n - H``
    degrees of freedom. For 0/1 scores a stratum's ``s_h^2`` is floored at that of a proportion with no
    observed miss in the whole sample (as :class:`~harness_ext.methods.engine.item_estimators.AIPW` does),
    so an all-correct stratum does not claim zero error."""

    uses_strata = True
    #: Purely design-based: the tasks' errors are independent (:attr:`~.item_estimators.SampleMean.design_based`).
    design_based = True

    def fit(self, source, items, strata=None):
        super().fit(source, items)
        self.strata_, self.N_h_, self.n_h_ = _check_strata(strata, self.n_total_, self.items_, type(self).__name__)
        self.sample_strata_ = self.strata_[self.items_]
        return self

    def _stratum_stats(self, values: np.ndarray, binary: bool) -> tuple:
        """Per stratum (targets x H): means and variances of ``values`` (one column per sampled item)."""
        H = len(self.N_h_)
        means, var = np.zeros((values.shape[0], H)), np.zeros((values.shape[0], H))
        n = values.shape[1]
        pooled = values.var(axis=1, ddof=1) if n > 1 else np.zeros(values.shape[0])
        for h in range(H):
            cols = values[:, self.sample_strata_ == h]
            if cols.shape[1] == 0:
                continue
            means[:, h] = cols.mean(axis=1)
            var[:, h] = cols.var(axis=1, ddof=1) if cols.shape[1] > 1 else pooled
        if binary:
            var = np.maximum(var, no_miss_variance(n))
        return means, var

    def _variance(self, var_h: np.ndarray) -> np.ndarray:
        W = self.N_h_ / self.n_total_
        n_h = np.maximum(self.n_h_, 1)
        return ((W ** 2) * (1.0 - self.n_h_ / np.maximum(self.N_h_, 1)) / n_h * var_h).sum(axis=1)

    def _df(self) -> int:
        return max(1, len(self.items_) - int((self.n_h_ > 0).sum()))

    def predict(self, Y) -> ItemEstimate:
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        means, var_h = self._stratum_stats(Y, _is_binary(Y))
        est = means @ (self.N_h_ / self.n_total_)
        return self._interval(est, self._variance(var_h), df=self._df())


class StratifiedAIPW(StratifiedMean):
    """Cross-fitted AIPW under the stratified design.

    The sampled items are split into ``n_folds`` folds interleaved within each stratum (so every fold
    has items of every stratum); for fold ``k`` the ridge working model (penalty ``alpha``, the target's
    answers on the population's) is fitted on the other folds, and the fold's items, a stratified
    random sample of the items the model did not see, expand its residuals stratum by stratum:
    ``theta_k = (sum_train y + sum_unseen f_k + sum_h N_{h,unseen} mean_{fold k, h}(y - f_k)) / N``.
    The estimate is the mean of the ``theta_k``; the variance is the stratified one of the pooled
    out-of-fold residuals.

    References
    ----------
    Cochran (1977), §5.3 and §7.7; Zhang, Dorner and Hardt (2025), §4; Chernozhukov et al. (2018).
    """

    def __init__(self, *, level: float = 0.90, alpha: float = 10.0, n_folds: int = 5):
        super().__init__(level=level)
        self.alpha = alpha
        self.n_folds = n_folds

    def _folds(self) -> np.ndarray:
        present = self.n_h_[self.n_h_ > 0]
        k = int(max(2, min(self.n_folds, present.min())))
        fold = np.empty(len(self.items_), dtype=np.int64)
        for h in np.flatnonzero(self.n_h_):
            idx = np.flatnonzero(self.sample_strata_ == h)
            fold[idx] = np.arange(len(idx)) % k
        return fold

    def predict(self, Y) -> ItemEstimate:
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        N, binary = self.n_total_, _is_binary(Y)
        fold = self._folds()
        X_all = self.source_.T
        thetas, resid = [], np.empty_like(Y)
        for k in np.unique(fold):
            tr, te = self.items_[fold != k], self.items_[fold == k]
            coef, b = _ridge_dual(X_all[tr], Y[:, fold != k].T, self.alpha)
            f = X_all @ coef + b
            f = np.clip(f, 0.0, 1.0) if binary else f
            r = Y[:, fold == k].T - f[te]  # (fold items, targets)
            resid[:, fold == k] = r.T
            unseen = np.ones(N, dtype=bool)
            unseen[tr] = False
            theta = Y[:, fold != k].sum(axis=1) + f[unseen].sum(axis=0)
            fold_strata = self.sample_strata_[fold == k]
            for h in np.unique(fold_strata):
                n_unseen_h = int((unseen & (self.strata_ == h)).sum())
                theta = theta + n_unseen_h * r[fold_strata == h].mean(axis=0)
            thetas.append(theta / N)
        _, var_h = self._stratum_stats(resid, binary)
        return self._interval(np.mean(thetas, axis=0), self._variance(var_h), df=self._df())


def _kmeans(E: np.ndarray, k: int, rng: np.random.RandomState, n_iter: int = 50) -> tuple:
    """Lloyd's k-means from a k-means++ start (Arthur and Vassilvitskii 2007): ``(labels, centres, inertia)``.

    In numpy: the embeddings are a few columns, and a thread pool per call costs more than the work.
    """
    n = len(E)
    centres = [E[rng.randint(n)]]
    d2 = ((E - centres[0]) ** 2).sum(axis=1)
    for _ in range(1, k):
        p = d2 / d2.sum() if d2.sum() > 0 else np.full(n, 1.0 / n)
        centres.append(E[rng.choice(n, p=p)])
        d2 = np.minimum(d2, ((E - centres[-1]) ** 2).sum(axis=1))
    C = np.array(centres)
    for _ in range(n_iter):
        D = (E ** 2).sum(axis=1)[:, None] - 2 * E @ C.T + (C ** 2).sum(axis=1)[None, :]
        labels = np.argmin(D, axis=1)
        counts = np.bincount(labels, minlength=k)
        sums = np.stack([np.bincount(labels, weights=E[:, j], minlength=k) for j in range(E.shape[1])], axis=1)
        new = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], C)
        if np.allclose(new, C):
            break
        C = new
    D = (E ** 2).sum(axis=1)[:, None] - 2 * E @ C.T + (C ** 2).sum(axis=1)[None, :]
    labels = np.argmin(D, axis=1)
    return labels, C, float(np.maximum(D[np.arange(n), labels], 0).sum())


def _kmeans_anchors(E: np.ndarray, n_items: int, random_state: int, n_init: int = 5) -> tuple:
    """``(anchor indices sorted, weights)``: k-means (best of ``n_init`` starts) on the rows of ``E``, the
    row nearest each centre, weighted by its cluster's share of the rows."""
    k = int(min(n_items, len(E)))
    rng = np.random.RandomState(int(random_state) % 2**32)
    labels, C, _ = min((_kmeans(E, k, rng) for _ in range(n_init)), key=lambda r: r[2])
    anchors, weights = [], []
    for c in range(k):
        members = np.flatnonzero(labels == c)
        if members.size:
            dist = ((E[members] - C[c]) ** 2).sum(axis=1)
            anchors.append(int(members[np.argmin(dist)]))
            weights.append(members.size / len(E))
    order = np.argsort(anchors)
    return np.asarray(anchors)[order], np.asarray(weights)[order]


def irt_embedding(source: np.ndarray, dims: int = 2, item_prior: float = 1.0) -> np.ndarray:
    """Each item's 2PL parameters ``(a_i, b_i)`` fitted on the population's answers: the embedding on
    which tinyBenchmarks clusters items (Polo et al. 2024, §3.1)."""
    from harness_ext.methods.engine.item_irt import fit_2pl

    A, b, _ = fit_2pl(np.asarray(source, dtype=float), dims=dims, item_prior=item_prior)
    return np.hstack([A, b[:, None]])


class IRTAnchors(_ItemEstimator):
    """tinyBenchmarks' anchor points on the IRT embedding, weighted by cluster size.

    ``select(source, n_items, random_state)`` fits the 2PL model (``dims`` dimensions) on the
    population, clusters the items' parameters by k-means into ``n_items`` clusters and returns the
    item nearest each centre; its weight is its cluster's share of the items. ``fit(source, items,
    weights=None)`` takes the anchors (and their weights, else those of the last ``select``) and
    calibrates the interval: anchors chosen on all but one of ``model_folds`` folds of population models
    estimate the held-out fold, and with ``frontier_calibration`` anchors chosen on the weaker two
    thirds estimate the strongest third; the radius is the larger conformal quantile of the absolute
    errors. Model-based: no design guarantee for a model unlike the population.

    References
    ----------
    Polo et al. (2024), §3.1; Vivek et al. (2024), EACL (anchor weighting).
    """

    def __init__(self, *, level: float = 0.90, dims: int = 2, item_prior: float = 1.0, model_folds: int = 5,
                 frontier_calibration: bool = True, random_state: int = 0):
        super().__init__(level=level)
        self.dims = dims
        self.item_prior = item_prior
        self.model_folds = model_folds
        self.frontier_calibration = frontier_calibration
        self.random_state = random_state

    def select(self, source, n_items: int, random_state=None) -> np.ndarray:
        rs = self.random_state if random_state is None else random_state
        E = irt_embedding(source, self.dims, self.item_prior)
        anchors, self.weights_ = _kmeans_anchors(E, n_items, rs)
        return anchors

    def _held_out_errors(self, S: np.ndarray, n: int) -> tuple:
        from harness_ext.methods.engine.item_irt import held_out_errors

        def errors_of(held):  # anchors chosen without the held-out models
            sub = IRTAnchors(dims=self.dims, item_prior=self.item_prior, random_state=self.random_state)
            idx = sub.select(S[~held], n)
            return S[held][:, idx] @ sub.weights_ - S[held].mean(axis=1)

        return held_out_errors(S, errors_of, n_folds=self.model_folds, frontier=self.frontier_calibration)

    def fit(self, source, items, weights=None):
        from harness_ext.methods.engine.conformal import conformal_quantile

        super().fit(source, items)
        if weights is not None:
            self.weights_ = np.asarray(weights, dtype=float)
        if getattr(self, "weights_", None) is None or len(self.weights_) != len(self.items_):
            raise ValueError("IRTAnchors: fit needs the anchors' weights (select first, or pass weights=)")
        cv, fr = self._held_out_errors(self.source_, len(self.items_))
        self.radius_ = max(conformal_quantile(e, self.level) if len(e) else 0.0 for e in (cv, fr))
        return self

    def predict(self, Y) -> ItemEstimate:
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        est = Y @ self.weights_ / self.weights_.sum()
        return ItemEstimate(est, est - self.radius_, est + self.radius_, self.level)


#: Designs :func:`draw_design` draws: simple random, stratified by difficulty, tinyBenchmarks' IRT anchors, and
#: items chosen on cross-validated error (:mod:`.item_search`).
DESIGNS = ("random", "stratified", "irt-anchors", "search")


def draw_design(design: str, source: np.ndarray, n_items: int, random_state: int = 0, *, n_strata: int = 5,
                allocation: str = "neyman", dims: int = 2) -> tuple:
    """``(sorted item indices, info)``: ``n_items`` items of a task under ``design`` from the population's answers.

    ``info`` holds what the estimators need besides the items: ``strata`` (stratum label of every item)
    and ``n_per_stratum`` for ``"stratified"``, ``weights`` (of the anchors) for ``"irt-anchors"``, the
    chosen subset's validation error for ``"search"`` (:func:`~.item_search.search_items`).
    ``"random"``: :func:`~harness_ext.methods.engine.item_estimators.random_items` with the same seed.
    """
    from harness_ext.methods.engine.item_estimators import random_items

    S = np.asarray(source, dtype=float)
    N = S.shape[1]
    n = int(min(n_items, N))
    if design == "random":
        return np.sort(random_items(N, n, random_state)), {}
    if design == "stratified":
        labels = difficulty_strata(S, n_strata=min(int(n_strata), max(1, n // 2)))
        n_h = allocate(np.bincount(labels), n, sds=stratum_sd(S, labels), rule=allocation)
        return stratified_items(labels, n_h, random_state), {"strata": labels, "n_per_stratum": n_h}
    if design == "irt-anchors":
        est = IRTAnchors(dims=dims, random_state=random_state)
        return est.select(S, n), {"weights": est.weights_}
    if design == "search":
        items, err = search_items(S, n, random_state)
        return items, {"search_error": err}
    raise ValueError(f"item design {design!r} is not one of {', '.join(DESIGNS)}")


def design_estimator(design: str, cls, level: float, info: dict, source, items):
    """``cls`` (an item estimator class) fitted for ``design``: the strata or anchor weights passed on.

    Raises
    ------
    ValueError
        An estimator that does not fit the design: the stratified design needs one using its strata
        (unequal inclusion probabilities), the anchors one taking their weights.
    """
    strat, anchors = getattr(cls, "uses_strata", False), cls is IRTAnchors or issubclass(cls, IRTAnchors)
    if design == "stratified":
        if not strat:
            raise ValueError(f"the stratified design needs an estimator that uses its strata (stratified_mean, "
                             f"stratified_aipw), not {cls.__name__}")
        return cls(level=level).fit(source, items, strata=info["strata"])
    if design == "irt-anchors":
        if not anchors:
            raise ValueError(f"the irt-anchors design is estimated by its anchors' weights (irt_anchors), "
                             f"not {cls.__name__}")
        return cls(level=level).fit(source, items, weights=info["weights"])
    if design == "search":
        if not getattr(cls, "uses_search", False):
            raise ValueError(f"the search design's items were chosen for a regression on them (search_learn), "
                             f"not {cls.__name__}")
        return cls(level=level).fit(source, items)
    if strat or anchors or hasattr(cls, "select"):
        raise ValueError(f"{cls.__name__} does not estimate from a simple random sample of items")
    return cls(level=level).fit(source, items)


#: The estimators of this module, by their plugin names (registered beside the item_estimators table).
DESIGN_ESTIMATORS = {"stratified_mean": StratifiedMean, "stratified_aipw": StratifiedAIPW, "irt_anchors": IRTAnchors,
                     "search_learn": SearchLearn}
#: The estimators each design is measured with and ``reduce`` defaults to (first).
DESIGN_DEFAULT_ESTIMATORS = {"stratified": ("stratified_aipw", "stratified_mean"), "irt-anchors": ("irt_anchors",),
                             "search": ("search_learn",)}
