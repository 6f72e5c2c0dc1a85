"""Items chosen on cross-validated error: random search + learn.

Zhang, Dorner and Hardt (2025) compare eleven ways to predict a benchmark from a few of its items; one of
them draws many random item subsets of the budget's size, scores each by the held-out error of a ridge
regression from the subset's answers to the full score (the source models split 75/25), and keeps the
best ("random search + learn"). :func:`search_items` is that search, vectorised: every candidate's ridge
(penalty by leave-one-out on the training models, as scikit-learn's ``RidgeCV``) is solved from one
batched symmetric eigendecomposition. :class:`SearchLearn` is its estimator: the ridge on the chosen
items, with a split-conformal interval from held-out models whose items were searched without them (each
of ``model_folds`` folds, and the strongest third of the population from a search on the rest), so the
interval includes the search's own optimism; a target outside the population's range gets the radius its own
frontier needed. Model-based: the chosen items are not a random sample, so
no design-based estimator applies and nothing guarantees the interval for a model unlike the population.

References
----------
Zhang, Dorner and Hardt (2025), "How Benchmark Prediction from Fewer Data Misses the Mark", NeurIPS, §3
(random search + learn). Golub, Heath and Wahba (1979), Technometrics 21 (leave-one-out ridge from one
decomposition). Lei et al. (2018), JASA 113, §2.2 (split conformal).
"""

from __future__ import annotations

import numpy as np

from harness_ext.methods.engine.item_estimators import ItemEstimate, RandomLearn, _ItemEstimator, conformal_radius, \
    radius_interval
from harness_ext.methods.engine.item_irt import held_out_errors

__all__ = ["SearchLearn", "search_items"]


def _ridge_val_mae(X: np.ndarray, y: np.ndarray, train: np.ndarray, val: np.ndarray, alphas) -> np.ndarray:
    """Per candidate (``X``: candidates x models x items): the validation models' mean |error| of a ridge fitted
    on the training models with the penalty whose leave-one-out error there is least.

    One symmetric eigendecomposition per candidate, of the smaller of the centred answers' two Gram matrices
    (models x models when fewer models than items, else items x items): ``Q`` spans the fitted values, with
    ``Q = U`` and weights ``lam`` in the first case, ``Q = X V`` and weights 1 in the second, so that the hat
    matrix is ``Q diag(c / (lam + a)) Q'`` either way (half the time of the singular value decomposition).
    """
    Xt, yt = X[:, train], y[train]
    xm = Xt.mean(axis=1, keepdims=True)
    Xc, Xv = Xt - xm, X[:, val] - xm
    yc = yt - yt.mean()
    if Xc.shape[1] <= Xc.shape[2]:
        lam, Q = np.linalg.eigh(Xc @ Xc.transpose(0, 2, 1))
        lam = np.maximum(lam, 0.0)
        c, P = lam, Xv @ (Xc.transpose(0, 2, 1) @ Q)
    else:
        lam, V = np.linalg.eigh(Xc.transpose(0, 2, 1) @ Xc)
        lam = np.maximum(lam, 0.0)
        Q, c, P = Xc @ V, np.ones_like(lam), Xv @ V
    Qy = np.einsum("bmr,m->br", Q, yc)
    best_loo = np.full(X.shape[0], np.inf)
    mae = np.full(X.shape[0], np.inf)  # a candidate whose leave-one-out error is undefined never wins
    for a in alphas:
        g = 1.0 / (lam + a)
        h = np.einsum("bmr,br->bm", Q ** 2, c * g) + 1.0 / len(train)
        loo = (((yc - np.einsum("bmr,br->bm", Q, c * g * Qy)) / (1.0 - h)) ** 2).mean(axis=1)
        err = np.abs(np.einsum("bvr,br->bv", P, g * Qy) + yt.mean() - y[val]).mean(axis=1)
        better = loo < best_loo
        best_loo, mae = np.where(better, loo, best_loo), np.where(better, err, mae)
    return mae


def search_items(source, n_items: int, random_state: int = 0, *, n_search: int = 2000, val_share: float = 0.25,
                 alphas=(0.1, 1.0, 10.0), chunk: int = 250) -> tuple:
    """``(sorted items, validation error)``: the best of ``n_search`` random ``n_items``-subsets of the items.

    Each candidate is scored by the mean |error| on a random ``val_share`` of the source models of a ridge
    fitted on the others (the full score on the candidate's answers; penalty among ``alphas`` by
    leave-one-out), as the authors' code does. Seeded by ``random_state`` (the candidates and the split).

    References
    ----------
    Zhang, Dorner and Hardt (2025), §3 (random search + learn).
    """
    S = np.asarray(source, dtype=float)
    m, N = S.shape
    n = int(min(n_items, N))
    rng = np.random.RandomState(random_state)
    order = rng.permutation(m)
    n_val = int(round(val_share * m))
    if n == N or n_val < 1 or m - n_val < 3:
        return np.arange(N) if n == N else np.sort(rng.permutation(N)[:n]), np.nan
    val, train = np.sort(order[:n_val]), np.sort(order[n_val:])
    y = S.mean(axis=1)
    cands = np.stack([rng.permutation(N)[:n] for _ in range(int(n_search))])
    scores = np.concatenate([_ridge_val_mae(np.transpose(S[:, c], (1, 0, 2)), y, train, val, alphas)
                             for c in np.array_split(cands, max(1, -(-len(cands) // chunk)))])
    best = int(np.argmin(scores))
    return np.sort(cands[best]), float(scores[best])


class SearchLearn(_ItemEstimator):
    """Random search + learn: ridge on items chosen by :func:`search_items`, with a held-out conformal interval.

    ``select(source, n_items, random_state)`` runs the search on the population; ``fit(source, items)`` fits
    :class:`~.item_estimators.RandomLearn` (the paper's ridge) on the chosen items and calibrates two
    radii, each a split-conformal quantile of absolute errors: inside the population, that of items
    searched on all but one of ``model_folds`` folds of population models estimating the held-out fold;
    beyond it (``frontier_calibration``), that of items searched on the weaker two thirds estimating the
    strongest third. A target gets the second (if larger) when its estimate or its mean on the chosen
    items lies outside the population's range of either: what the population's own frontier erred by.
    The ridge's own leave-one-out residuals are not used: the search chose the items for them.

    References
    ----------
    Zhang, Dorner and Hardt (2025), §3; Lei et al. (2018), §2.2; Varma and Simon (2006), BMC
    Bioinformatics 7:91 (the optimism of errors on the data that chose the model).
    """

    #: Estimates from the search design's items (:func:`~.item_designs.design_estimator` checks it).
    uses_search = True

    def __init__(self, *, level: float = 0.90, n_search: int = 2000, alphas: tuple = (0.1, 1.0, 10.0),
                 model_folds: int = 5, frontier_calibration: bool = True, random_state: int = 0):
        super().__init__(level=level)
        self.n_search = n_search
        self.alphas = alphas
        self.model_folds = model_folds
        self.frontier_calibration = frontier_calibration
        self.random_state = random_state

    def select(self, source, n_items: int, random_state=None) -> np.ndarray:
        rs = self.random_state if random_state is None else random_state
        items, self.search_error_ = search_items(source, n_items, rs, n_search=self.n_search, alphas=self.alphas)
        return items

    def _held_out(self, held: np.ndarray) -> np.ndarray:
        """Errors on the ``held`` population models of a search (of as many items) and ridge on the others."""
        S = self.source_
        items, _ = search_items(S[~held], len(self.items_), self.random_state, n_search=self.n_search,
                                alphas=self.alphas)
        ridge = RandomLearn(alphas=self.alphas).fit(S[~held], items)
        return ridge.model_.predict(S[held][:, items]) - S[held].mean(axis=1)

    def fit(self, source, items):
        super().fit(source, items)
        self.learn_ = RandomLearn(level=self.level, alphas=self.alphas).fit(self.source_, self.items_)
        cv, fr = held_out_errors(self.source_, self._held_out, n_folds=self.model_folds,
                                 frontier=self.frontier_calibration, min_train=4)
        self.cv_errors_, self.frontier_errors_ = cv, fr
        self.radius_ = conformal_radius(cv, self.level) if len(cv) else np.inf
        self.frontier_radius_ = max(self.radius_, conformal_radius(fr, self.level) if len(fr) else 0.0)
        full, sampled = self.source_.mean(axis=1), self.source_[:, self.items_].mean(axis=1)
        self.range_ = (float(full.min()), float(full.max()))
        self.sample_range_ = (float(sampled.min()), float(sampled.max()))
        return self

    def beyond(self, estimate, Y) -> np.ndarray:
        """Whether each target's ``estimate`` or its mean on the chosen items ``Y`` lies outside the population's
        range of full scores or of means on those items."""
        m = np.asarray(Y, dtype=float).mean(axis=1)
        return ((estimate < self.range_[0]) | (estimate > self.range_[1])
                | (m < self.sample_range_[0]) | (m > self.sample_range_[1]))

    def predict(self, Y) -> ItemEstimate:
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        est = self.learn_.model_.predict(Y)
        radius = np.where(self.beyond(est, Y), self.frontier_radius_, self.radius_)
        if np.isinf(self.radius_):
            return radius_interval(est, np.inf, self.learn_.score_range_, self.level)
        return ItemEstimate(est, est - radius, est + radius, self.level)
