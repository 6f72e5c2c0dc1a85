"""A low-rank ability model across a benchmark's items, and a regression stacked on it: ``crosstask``'s regression.

A new model answers ``n`` random items of every task of its benchmark. The population's models answered
every item, so their answers show the few abilities the benchmark's items share (metabench, Kipnis et al.
2025). Here:

* :func:`factor_loadings`: probabilistic PCA of the population's 0/1 answers to every item of every task
  (Tipping and Bishop 1999): item means, loadings of the leading ``rank`` components and each item's
  residual variance, for the columns the new model answers.
* :func:`factor_scores`: a model's abilities, the posterior mean of its latent factors given its answers
  to the sampled items alone (the same formula for a source model as for a target, so the regression
  below sees for both what a new model brings).
* :class:`FactorKernel`: kernel ridge regression of the full-task score on those abilities (a Gaussian
  kernel plus a linear one), rank, bandwidth, weight of the linear part and penalty chosen by exact
  leave-one-out error over the source models. The abilities pool a model's 50 answers per task through
  the loadings learnt on every item, so two models that answered differently by chance look alike.
* :class:`StackedLearn`: the stack (Breiman 1996) of :class:`~.item_learn.KernelLearn` (the kernel on
  the raw answers) and :class:`FactorKernel`: the kernel's share among ``kernel_shares`` is the one whose
  stacked prediction errs least on held-out source models (``n_folds`` interleaved folds, both members
  refitted on the other folds at the settings chosen on all of them). The factor kernel takes part only
  for a model the kernel puts inside the population's central range (its estimate between the 10% and
  90% quantiles of the source models' scores): near the edge and beyond it the kernel alone, so that
  the composite's reading of how far beyond the population a model lies is unchanged. With share 1 it is
  :class:`~.item_learn.KernelLearn` exactly. Its leave-one-out residuals are the members' mixed in the
  same shares (both are linear smoothers at their settings), so the composite's error model reads them
  as before.

References
----------
Tipping and Bishop (1999), "Probabilistic principal component analysis", JRSS B 61, eq. 6 and 7
(maximum-likelihood loadings, posterior mean of the latent variables). Kipnis et al. (2025), "metabench",
ICLR (one latent ability model across a benchmark's tasks). Breiman (1996), "Stacked regressions",
Machine Learning 24. Zhang, Dorner and Hardt (2025), "How Benchmark Prediction from Fewer Data Misses the
Mark", NeurIPS, §3 (random sampling + learn). Hastie, Tibshirani and Friedman (2009), eq. 7.52.
"""

from __future__ import annotations

import numpy as np

from .item_estimators import ItemEstimate, conformal_radius, radius_interval
from .item_learn import (KernelLearn, _centre_test, _check_targets, _fill_missing, _sq_dist, kernel_dual,
                         kernel_loo_residuals_linear)


def factor_loadings(X: np.ndarray, observed: np.ndarray, rank: int, floor: float = 0.05) -> dict:
    """Probabilistic PCA of the answers ``X`` (models x every item), read at the ``observed`` columns.

    Returns ``mu`` (item means), ``W`` (loadings, items x ``rank``: the leading components of the centred
    answers scaled to their standard deviation, so ``W W' + diag(psi)`` approximates the items'
    covariance) and ``psi`` (each item's variance beyond the components, at least ``floor`` times its
    variance), all at ``observed``. Only the models' Gram matrix is decomposed, so the cost is
    ``models**2 x items``.
    """
    Xc = X - X.mean(axis=0)
    m = X.shape[0]
    lam, U = np.linalg.eigh(Xc @ Xc.T)
    r = max(1, min(rank, m - 1))
    U = U[:, ::-1][:, :r] * (lam[::-1][:r] > 1e-9)
    XO = Xc[:, observed]
    W = XO.T @ U / np.sqrt(m)
    return {"mu": X.mean(axis=0)[observed], "W": W, "psi": residual_variance(XO.var(axis=0), W, floor)}


def residual_variance(var: np.ndarray, W: np.ndarray, floor: float) -> np.ndarray:
    """Each item's variance beyond the components ``W``: ``var - rowsum(W**2)``, at least ``floor`` times its
    variance (plus a small constant, so an item every model answers alike keeps a positive variance)."""
    return np.maximum(var - (W ** 2).sum(axis=1), floor * np.maximum(var, 1e-3) + 1e-4)


def factor_scores(model: dict, Y_obs: np.ndarray, rank: int | None = None) -> np.ndarray:
    """Posterior means (rows, rank) of the latent factors given the answers ``Y_obs`` at the observed columns.

    ``z = (I + W' Psi^-1 W)^-1 W' Psi^-1 (y - mu)`` (Tipping and Bishop 1999, eq. 7 with unit prior
    variance): a model with few or noisy answers is shrunk towards the population's centre. ``rank``
    uses the leading columns of ``W`` only.
    """
    W = model["W"] if rank is None else model["W"][:, :rank]
    WP = W / model["psi"][:, None]
    A = W.T @ WP + np.eye(W.shape[1])
    return np.linalg.solve(A, WP.T @ (np.asarray(Y_obs, dtype=float) - model["mu"]).T).T


def _factor_kernel(Z: np.ndarray, Zs: np.ndarray, scale: float, bandwidth: float, lin: float) -> np.ndarray:
    """Gaussian kernel on the abilities (bandwidth times the sources' median squared distance) plus a linear one."""
    return np.exp(-_sq_dist(Z, Zs) / (bandwidth * scale)) + lin * (Z @ Zs.T) / Z.shape[1]


def _columns_of_blocks(blocks: list, ends: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``hstack([filled block for block in blocks])[:, cols]`` built block by block (``ends``: the blocks' column
    offsets, from 0): each block's gaps are filled from its own columns' means (:func:`_fill_missing`), column
    by column, so only the kept columns of a block are read and copied."""
    out = np.empty((blocks[0].shape[0], len(cols)))
    which = np.searchsorted(ends, cols, side="right") - 1
    for b in np.unique(which):
        at = np.flatnonzero(which == b)
        part = np.asarray(blocks[b], dtype=float)[:, cols[at] - ends[b]]
        out[:, at] = _fill_missing(part, part)[0]
    return out


class FactorKernel:
    """Kernel ridge regression of the full-task score on the models' abilities (:func:`factor_scores`).

    ``fit(X, observed, y)``: ``X`` the source models' answers to every item of the benchmark (gaps
    filled), ``observed`` the columns a new model answers, ``y`` their full-task scores; the setting
    (rank, bandwidth, linear weight, penalty) minimises the exact leave-one-out error over the grids.
    ``predict(Y_obs)`` takes the answers at ``observed``. ``loo_residuals_`` are signed.
    """

    def __init__(self, *, ranks: tuple = (2, 3, 5, 8, 12, 20), bandwidths: tuple = (0.5, 1.0, 2.0, 4.0),
                 linear: tuple = (0.0, 1.0, 10.0), alphas: tuple = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0),
                 floor: float = 0.05):
        self.ranks = ranks
        self.bandwidths = bandwidths
        self.linear = linear
        self.alphas = alphas
        self.floor = floor

    def _abilities(self, X: np.ndarray, observed: np.ndarray):
        """Per rank of ``ranks``: ``(rank, model, Z, scale)``, the factor model, the source models' abilities and
        the Gaussian kernel's scale (their median positive squared distance)."""
        model = factor_loadings(X, observed, max(self.ranks), self.floor)
        var = (X[:, observed] - model["mu"]).var(axis=0)
        for r in self.ranks:
            W = model["W"][:, :r]
            sub = {"mu": model["mu"], "W": W, "psi": residual_variance(var, W, self.floor)}
            Z = factor_scores(sub, X[:, observed])
            d2 = _sq_dist(Z, Z)
            yield r, sub, Z, float(np.median(d2[d2 > 0])) if (d2 > 0).any() else 1.0

    def _fit_estimate(self, X: np.ndarray, observed: np.ndarray, y: np.ndarray):
        """Fit at the grids' first setting without the leave-one-out search: :meth:`predict` works,
        ``loo_residuals_`` is not set (for refits whose predictions alone are read)."""
        r, self.model_, self.Z_, self.scale_ = next(self._abilities(X, observed))
        self._solve(y, (r, self.bandwidths[0], self.linear[0], self.alphas[0]))
        return self

    def _solve(self, y: np.ndarray, setting: tuple) -> None:
        self.setting_ = dict(zip(("rank", "bandwidth", "linear", "alpha"), setting))
        self.K_ = _factor_kernel(self.Z_, self.Z_, self.scale_, setting[1], setting[2])
        self.y_mean_, self.dual_ = kernel_dual(self.K_, y, setting[3])

    def fit(self, X: np.ndarray, observed: np.ndarray, y: np.ndarray):
        best = (np.inf, None)
        for r, sub, Z, scale in self._abilities(X, observed):
            # The linear part Z Z' / rank, centred: one eigendecomposition of the Gaussian part per bandwidth
            # serves every linear weight (kernel_loo_residuals_linear).
            B = (Z - Z.mean(axis=0)) / np.sqrt(Z.shape[1])
            for bw in self.bandwidths:
                by_lin = kernel_loo_residuals_linear(_factor_kernel(Z, Z, scale, bw, 0.0), B, self.linear, y,
                                                     self.alphas)
                for lin, res in zip(self.linear, by_lin):
                    sq = (res ** 2).mean(axis=1)
                    j = int(np.argmin(sq))
                    if sq[j] < best[0]:
                        best = (sq[j], (r, bw, lin, self.alphas[j]), sub, Z, scale, res[j])
        _, setting, self.model_, self.Z_, self.scale_, self.loo_residuals_ = best
        self._solve(y, setting)
        return self

    def fixed_params(self) -> dict:
        """Constructor arguments that fix the chosen setting."""
        st = self.setting_
        return {"ranks": (st["rank"],), "bandwidths": (st["bandwidth"],), "linear": (st["linear"],),
                "alphas": (st["alpha"],), "floor": self.floor}

    def predict(self, Y_obs: np.ndarray) -> np.ndarray:
        st = self.setting_
        Zt = factor_scores(self.model_, Y_obs)
        Kt = _factor_kernel(Zt, self.Z_, self.scale_, st["bandwidth"], st["linear"])
        return _centre_test(Kt, self.K_) @ self.dual_ + self.y_mean_


class StackedLearn(KernelLearn):
    """The stack of :class:`~.item_learn.KernelLearn` and :class:`FactorKernel`, the share chosen on held-out sources.

    The kernel on the raw answers (:class:`~.item_learn.KernelLearn`, its settings by leave-one-out) and
    the kernel on the models' abilities (:class:`FactorKernel`, its own settings by leave-one-out) are
    refitted at those settings on all but one of ``n_folds`` interleaved folds of the source models and
    predict the fold; the kernel's share among ``kernel_shares`` is the one with the least mean squared
    held-out error (ties: the larger share). The estimate is ``share * kernel + (1 - share) * factor``
    for a model whose kernel estimate lies between the ``inner`` quantiles of the source models' full
    scores, the kernel's alone elsewhere; its leave-one-out residuals, error variance and split-conformal interval are the kernel's formulas
    on the mixed residuals. Without other tasks, or with fewer than ``min_models`` source models, it is
    the kernel alone.

    Parameters
    ----------
    level : float
        Two-sided coverage of the interval.
    weights, bandwidths, linear, alphas, variance_powers : tuples
        :class:`~.item_learn.KernelLearn`'s grids.
    factor : dict or None
        :class:`FactorKernel`'s constructor arguments (None: its defaults).
    kernel_shares : tuple
        The kernel's candidate shares of the stack.
    n_folds : int
        Held-out folds of the source models that choose the share.
    min_models : int
        Fewer source models: the kernel alone.
    inner : tuple
        Quantiles of the source models' full scores between which the factor kernel takes part: a model
        the kernel puts near the population's edge, or beyond it, gets the kernel alone (the abilities
        are shrunk towards the population's centre, and the composite reads the regression's estimate to
        tell how far beyond the population a model lies).
    max_items : int
        The factor model reads at most this many items of the benchmark (the sampled ones and evenly
        spaced others); the shared item tables have 2,200-3,500.

    References
    ----------
    Breiman (1996), Machine Learning 24 (stacked regressions); Tipping and Bishop (1999), JRSS B 61;
    Kipnis et al. (2025); Zhang, Dorner and Hardt (2025), §3.
    """

    def __init__(self, *, level: float = 0.90, weights: tuple = (0.0, 0.5, 1.0),
                 bandwidths: tuple = (0.5, 1.0, 2.0, 4.0), linear: tuple = (0.0, 10.0, 50.0, 200.0),
                 alphas: tuple = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0),
                 variance_powers: tuple = (0.0, 0.5, 1.0), factor: dict | None = None,
                 kernel_shares: tuple = (1.0, 0.75, 0.5, 0.25, 0.0), n_folds: int = 5, min_models: int = 20,
                 max_items: int = 8000, inner: tuple = (0.1, 0.9)):
        super().__init__(level=level, weights=weights, bandwidths=bandwidths, linear=linear, alphas=alphas,
                         variance_powers=variance_powers)
        self.factor = factor
        self.kernel_shares = kernel_shares
        self.n_folds = n_folds
        self.min_models = min_models
        self.max_items = max_items
        self.inner = inner

    def _answers(self, S: np.ndarray, others: list) -> tuple:
        """``(X, observed)``: every answer of the models ``S`` (this task, then the others; gaps filled) and the
        columns of the sampled items."""
        raw = [S] + [S_k for S_k, _ in others]
        ends = np.cumsum([0] + [b.shape[1] for b in raw])
        observed = np.concatenate([self.items_] + [ends[k + 1] + np.asarray(it) for k, (_, it) in enumerate(others)])
        if ends[-1] <= self.max_items:
            return np.hstack([_fill_missing(b, b)[0] for b in raw]), observed
        # A very large benchmark: the loadings from the sampled items and evenly spaced others (the cost of
        # the factor model grows with the items; a few thousand show the few abilities as well).
        rest = np.setdiff1d(np.arange(ends[-1]), observed)
        keep = rest[np.linspace(0, len(rest) - 1, max(0, self.max_items - len(observed))).astype(int)]
        cols = np.concatenate([observed, np.unique(keep)])
        # The kept columns taken task by task (a gap is filled from its own column alone): the same matrix as
        # stacking every item first and keeping the columns, without copying every item of every task.
        return _columns_of_blocks(raw, ends, cols), np.arange(len(observed))

    def _observed(self, Y: np.ndarray, others: list) -> np.ndarray:
        """The answers of the rows of ``Y`` (and of ``others``) at the factor model's observed columns, gaps filled."""
        cols = [_fill_missing(Y, self.source_[:, self.items_])[0]]
        cols += [_fill_missing(Y_k, S_k[:, it])[0] for (S_k, it), Y_k in zip(self.others_, others)]
        return np.hstack(cols)

    def fit(self, source, items, others=()):
        super().fit(source, items, others=others)
        self.share_, self.factor_ = 1.0, None
        if not self.others_ or self.source_.shape[0] < self.min_models or tuple(self.kernel_shares) == (1.0,):
            return self
        y = self.source_.mean(axis=1)
        self.inner_range_ = tuple(float(q) for q in np.quantile(y, self.inner))
        X, observed = self._answers(self.source_, self.others_)
        self.factor_ = FactorKernel(**(self.factor or {})).fit(X, observed, y)
        self.share_ = self._choose_share(X, observed, y)
        if self.share_ < 1.0:
            # The stack's leave-one-out prediction is the mix of the members' (linear smoothers at fixed settings).
            res = y - self._mix(y - self.loo_signed_, y - self.factor_.loo_residuals_, self.share_)
            self.loo_residuals_ = np.abs(res)
            self.loo_mse_ = float(np.mean(res ** 2))
            self.radius_ = conformal_radius(self.loo_residuals_, self.level)
            self._fit_error_variance(res ** 2)
        return self

    def _choose_share(self, X: np.ndarray, observed: np.ndarray, y: np.ndarray) -> float:
        """The kernel's share with the least mean squared error on the interleaved held-out folds (one share: that one)."""
        from .item_irt import model_folds

        shares = np.asarray(self.kernel_shares, dtype=float)
        if len(shares) == 1:
            return float(shares[0])
        fold = model_folds(len(y), self.n_folds)
        held_k, held_f = np.empty(len(y)), np.empty(len(y))
        for f in np.unique(fold):
            h = fold == f
            held_k[h], held_f[h] = self._held_out(X, observed, y, h, self.others_sampled_)
        mse = np.array([np.mean((self._mix(held_k, held_f, s) - y) ** 2) for s in shares])
        order = np.argsort(-shares, kind="stable")  # ties: the larger share (the kernel alone first)
        return float(shares[order[int(np.argmin(mse[order]))]])

    def _mix(self, k: np.ndarray, f: np.ndarray, share: float) -> np.ndarray:
        """The stack of the kernel's estimates ``k`` and the factor kernel's ``f``: ``share`` on the kernel where
        ``k`` lies inside the sources' central range (``inner_range_``), the kernel alone outside it."""
        lo, hi = self.inner_range_
        return np.where((k >= lo) & (k <= hi), share * k + (1.0 - share) * f, k)

    def _held_out(self, X: np.ndarray, observed: np.ndarray, y: np.ndarray, h: np.ndarray, sampled: list) -> tuple:
        """Both members refitted at their settings without the source models ``h``, predicting them; ``sampled``, the
        other tasks' answers to their sampled items (the kernel reads no others: passed without the rest)."""
        fit_o = [(S_k[~h], np.arange(S_k.shape[1])) for S_k in sampled]
        pred_o = [S_k[h] for S_k in sampled]
        # Only the refits' estimates are read: fitted without their leave-one-out residuals and intervals.
        k = KernelLearn(level=self.level, **KernelLearn.fixed_params(self))._fit_estimate(
            self.source_[~h], self.items_, others=fit_o)._estimate(self.source_[h][:, self.items_], others=pred_o)
        f = FactorKernel(**self.factor_.fixed_params())._fit_estimate(X[~h], observed, y[~h]).predict(X[h][:, observed])
        return k, np.clip(f, *self.score_range_)

    def fixed_params(self) -> dict:
        """Constructor arguments that fix both members' settings and the share (a refit skips every search)."""
        out = {**super().fixed_params(), "kernel_shares": (self.share_,), "min_models": self.min_models,
               "max_items": self.max_items, "inner": self.inner}
        if self.factor_ is not None:
            out["factor"] = self.factor_.fixed_params()
        return out

    def predict(self, Y, others=()) -> ItemEstimate:
        res = super().predict(Y, others=others)
        if self.factor_ is None or self.share_ >= 1.0:
            return res
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        others = _check_targets(type(self).__name__, len(self.others_), others)
        f = self.factor_.predict(self._observed(Y, others))
        est = np.clip(self._mix(res.estimate, f, self.share_), *self.score_range_)
        return radius_interval(est, self.radius_, self.score_range_, self.level)
