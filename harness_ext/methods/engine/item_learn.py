"""Random sampling + learn across a benchmark's tasks with a kernel: the regression part of ``crosstask``.

A new model answers ``n`` random items of every task of its benchmark. :class:`KernelLearn` predicts its
full score on one task from all of those answers by kernel ridge regression over the population's
models: a Gaussian (RBF) kernel on the sampled answers (this task's, and the other tasks' weighted by
``s``) plus a linear kernel on the sample means of every task. The RBF part lets models that answer
alike (a family of fine-tunes) inform each other more than a linear ridge of the full score on the
answers can ("random sampling + learn", Zhang, Dorner and Hardt 2025, §3, is that linear ridge on this
task's answers alone); the linear part on the means carries the abilities the tasks share (metabench's
idea). The weight ``s`` of the other tasks, the RBF bandwidth, the weight of the linear part and the
ridge penalty are chosen together by exact leave-one-out error over the source models (the closed form
of a linear smoother), so a benchmark whose tasks share nothing gets ``s = 0`` and a small linear part.

References
----------
Zhang, Dorner and Hardt (2025), "How Benchmark Prediction from Fewer Data Misses the Mark", NeurIPS, §3
(random sampling + learn). Kipnis et al. (2025), "metabench", ICLR (one ability model across a
benchmark's tasks). Schoelkopf and Smola (2002), "Learning with Kernels", §4 (kernel ridge regression).
Hastie, Tibshirani and Friedman (2009), The Elements of Statistical Learning, eq. 7.52 (leave-one-out
error of a linear smoother).
"""

from __future__ import annotations

import numpy as np

from .direct_ridge import loo_residuals
from .item_estimators import (ItemEstimate, _binary_variance, _design_variance, _is_binary, _ItemEstimator,
                              conformal_radius, radius_interval)


def _fill_missing(block: np.ndarray, reference: np.ndarray) -> tuple:
    """``(filled, count)``: NaN cells of ``block`` replaced by the column's mean over ``reference`` (0.5 if none)."""
    block = np.asarray(block, dtype=float)
    gaps = np.isnan(block)
    if not gaps.any():
        return block, 0
    with np.errstate(invalid="ignore"):
        ref = np.asarray(reference, dtype=float)
        cnt = np.isfinite(ref).sum(axis=0)
        mean = np.where(cnt > 0, np.nansum(ref, axis=0) / np.maximum(cnt, 1), 0.5)
    return np.where(gaps, mean[None, :], block), int(gaps.sum())


def _other_tasks(name: str, n_models: int, others) -> list:
    """The other tasks as ``[(source_k, items_k)]`` float arrays, their rows checked against this task's."""
    out = []
    for S_k, items_k in others:
        S_k = np.asarray(S_k, dtype=float)
        if S_k.shape[0] != n_models:
            raise ValueError(f"{name}: another task has {S_k.shape[0]} population models, this one {n_models}; "
                             "align the rows (NaN for a model without that task)")
        out.append((S_k, np.asarray(items_k)))
    return out


def _check_targets(name: str, n_fitted: int, others) -> list:
    if len(others) != n_fitted:
        raise ValueError(f"{name}: fitted with {n_fitted} other tasks, given answers to {len(others)}")
    return [np.atleast_2d(np.asarray(y, dtype=float)) for y in others]


def _sq_dist(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances between the rows of ``A`` and of ``B``."""
    d = (A * A).sum(axis=1)[:, None] + (B * B).sum(axis=1)[None, :] - 2.0 * A @ B.T
    return np.maximum(d, 0.0)


def _centre_test(Kt: np.ndarray, K: np.ndarray) -> np.ndarray:
    """The test rows ``Kt`` of a kernel centred on the training rows' feature mean (as ``J K J``)."""
    return Kt - K.mean(axis=0)[None, :] - Kt.mean(axis=1, keepdims=True) + K.mean()


def _centre(K: np.ndarray) -> np.ndarray:
    """``J K J`` (``J = I - 11'/m``) of a square kernel, from its row, column and grand means.

    The same matrix as the two products up to rounding, in ``m**2`` operations instead of ``2 m**3``: the
    leave-one-out search centres a kernel for every setting of its grid.
    """
    return K - K.mean(axis=0)[None, :] - K.mean(axis=1, keepdims=True) + K.mean()


def kernel_loo_residuals(K: np.ndarray, y: np.ndarray, alphas) -> np.ndarray:
    """Signed leave-one-out residuals (alphas, observations) of kernel ridge with an unpenalised intercept.

    The fitted values are ``H y`` with ``H = 11'/m + Kc (Kc + alpha I)^-1``, ``Kc = J K J`` the centred
    kernel, so the leave-one-out residual is ``(y_i - yhat_i) / (1 - H_ii)`` exactly (Hastie, Tibshirani
    and Friedman 2009, eq. 7.52); one eigendecomposition serves every penalty.
    """
    return _kernel_loo(K, y, alphas)[0]


def _kernel_loo(K: np.ndarray, y: np.ndarray, alphas) -> tuple:
    """``(residuals, lam, U, yc)``: :func:`kernel_loo_residuals` with the centred kernel's clipped eigenpairs and
    the centred response, which :func:`kernel_loo_residuals_linear` builds on."""
    lam, U = np.linalg.eigh(_centre(K))
    lam, yc = np.clip(lam, 0.0, None), y - y.mean()
    return loo_residuals(U, lam, yc, alphas, floor=1e-12), lam, U, yc


def kernel_loo_residuals_linear(K0: np.ndarray, B: np.ndarray, lins, y: np.ndarray, alphas) -> list:
    """:func:`kernel_loo_residuals` of ``K0 + lin B B'`` for every ``lin`` of ``lins``, from one eigendecomposition.

    ``B`` has centred columns, so the linear part ``lin B B'`` is its own centred kernel and, with
    ``Kc0 = J K0 J = U diag(lam) U'`` and ``G = (Kc0 + alpha I)^-1``, Woodbury's identity gives the hat matrix
    ``H = 11'/m + U diag(lam / (lam + alpha)) U' + alpha G B (I / lin + B' G B)^-1 B' G`` in ``m**2 k``
    operations per penalty: a search's grid of linear weights no longer costs an ``m x m`` eigendecomposition
    per weight.

    Parameters
    ----------
    K0 : numpy.ndarray (m, m)
        The kernel without its linear part (uncentred).
    B : numpy.ndarray (m, k)
        The linear part's features, each column centred.
    lins : sequence of float
        The linear part's weights.
    y : numpy.ndarray (m,)
        The response.
    alphas : sequence of float
        Penalties.

    Returns
    -------
    list of numpy.ndarray
        Per weight of ``lins``, the ``(len(alphas), m)`` signed leave-one-out residuals. ``lin = 0`` gives
        :func:`kernel_loo_residuals` of ``K0`` itself (the same computation); a positive weight equals
        :func:`kernel_loo_residuals` of ``K0 + lin B B'`` up to rounding.

    References
    ----------
    Hastie, Tibshirani and Friedman (2009), eq. 7.52; Golub and Van Loan (2013), Matrix Computations, 4th ed.
    (the Sherman-Morrison-Woodbury formula).
    """
    base, lam, U, yc = _kernel_loo(K0, y, alphas)
    if all(lin == 0 for lin in lins):
        return [base] * len(lins)
    m, k = B.shape
    a = np.asarray(alphas, dtype=float)
    D = 1.0 / (lam[None, :] + a[:, None])                       # (alphas, m): G's eigenvalues
    f = lam[None, :] * D                                         # the RBF part's shrinkage per penalty
    Uy, UB = U.T @ yc, U.T @ B
    DUB = D[:, :, None] * UB[None, :, :]                         # (alphas, m, k): U' G B
    GB = U @ DUB                                                 # (alphas, m, k)
    BGB = UB.T @ DUB                                             # (alphas, k, k)
    BGy = DUB.transpose(0, 2, 1) @ Uy                            # (alphas, k)
    fit0 = (U @ (f * Uy[None, :]).T).T                           # (alphas, m): the RBF part's fitted values
    h0 = (U * U) @ f.T + 1.0 / m                                 # (m, alphas)
    out = []
    for lin in lins:
        if lin == 0:
            out.append(base)
            continue
        C = BGB + np.eye(k)[None] / lin
        Ci_BGy = np.linalg.solve(C, BGy[:, :, None])[:, :, 0]    # (alphas, k)
        Ci_GBt = np.linalg.solve(C, GB.transpose(0, 2, 1))       # (alphas, k, m)
        fit = fit0 + a[:, None] * (GB @ Ci_BGy[:, :, None])[:, :, 0]
        h = h0.T + a[:, None] * (GB * Ci_GBt.transpose(0, 2, 1)).sum(axis=2)
        out.append((yc[None, :] - fit) / np.maximum(1.0 - h, 1e-12))
    return out


def kernel_dual(K: np.ndarray, y: np.ndarray, alpha: float) -> tuple:
    """``(mean of y, dual coefficients)`` of kernel ridge with an unpenalised intercept on the centred kernel
    (the fit :func:`kernel_loo_residuals` leaves one out of); a new row predicts ``mean + centred k' dual``."""
    m = len(y)
    y_mean = float(y.mean())
    return y_mean, np.linalg.solve(_centre(K) + alpha * np.eye(m), y - y_mean)


class KernelLearn(_ItemEstimator):
    """Kernel ridge regression of the full-task score on every task's sampled answers.

    ``K = exp(-d2 / (bandwidth * median d2)) + lin * M M'`` over the source models, ``d2`` the squared
    distance between two models' answers to this task's sampled items plus ``s**2`` times that over the
    other tasks' sampled items (a missing answer is filled with the item's population mean, counted in
    ``n_filled_``), ``M`` the centred sample means of every task. ``s`` in ``weights``, the bandwidth in
    ``bandwidths``, ``lin`` in ``linear`` and the penalty in ``alphas`` are chosen by exact leave-one-out
    error over the source models (:func:`kernel_loo_residuals`); the interval is split-conformal on the chosen
    setting's leave-one-out residuals (slightly optimistic: they also chose the setting; ``loo_signed_``
    keeps their signs, ``loo_residuals_`` their sizes). Predictions of 0/1 scores are clipped to [0, 1].
    Without ``others`` it uses this task alone.

    Parameters
    ----------
    level : float
        Two-sided coverage of the interval.
    weights, bandwidths, linear, alphas : tuples
        The grids searched by leave-one-out error.

    References
    ----------
    Zhang, Dorner and Hardt (2025), §3; Kipnis et al. (2025); Schoelkopf and Smola (2002), §4;
    Hastie, Tibshirani and Friedman (2009), eq. 7.52.
    """

    uses_other_tasks = True

    def __init__(self, *, level: float = 0.90, weights: tuple = (0.0, 0.5, 1.0),
                 bandwidths: tuple = (0.5, 1.0, 2.0, 4.0), linear: tuple = (0.0, 10.0, 50.0, 200.0),
                 alphas: tuple = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0),
                 variance_powers: tuple = (0.0, 0.5, 1.0)):
        super().__init__(level=level)
        self.variance_powers = variance_powers
        self.weights = weights
        self.bandwidths = bandwidths
        self.linear = linear
        self.alphas = alphas

    def _blocks(self, Y: np.ndarray, others: list) -> tuple:
        """``(own answers, other tasks' answers, sample means)`` of the rows of ``Y``, gaps filled."""
        blocks, means, filled = [], [Y.mean(axis=1)], 0
        for (S_k, items_k), Y_k in zip(self.others_, others):
            Y_k, c = _fill_missing(Y_k, S_k[:, items_k])
            filled += c
            blocks.append(Y_k)
            means.append(Y_k.mean(axis=1))
        other = np.hstack(blocks) if blocks else np.empty((Y.shape[0], 0))
        return Y, other, np.column_stack(means), filled

    def _kernel(self, own, other, means, setting) -> np.ndarray:
        """The kernel between the rows given and the source models at ``setting`` = (s, bandwidth, lin)."""
        return self._combine(_sq_dist(own, self.own_), _sq_dist(other, self.other_),
                             (means - self.mean_centre_) @ self.means_c_.T, setting)

    def _combine(self, d_own, d_other, lin_part, setting) -> np.ndarray:
        s, bw, lin = setting
        return np.exp(-(d_own + s * s * d_other) / (bw * self.scale_[s])) + lin * lin_part

    def _prepare(self, source, items, others) -> tuple:
        """Fit's common start: the blocks of the source models and their full scores ``(own, other, means, y)``."""
        super().fit(source, items)
        self.others_ = _other_tasks(type(self).__name__, self.source_.shape[0], others)
        # the other tasks' sampled answers, kept: a stack's held-out refits read them (StackedLearn._choose_share)
        self.others_sampled_ = [S[:, it] for S, it in self.others_]
        own, other, means, self.n_filled_ = self._blocks(self.source_[:, self.items_], self.others_sampled_)
        self.own_, self.other_ = own, other
        self.mean_centre_ = means.mean(axis=0)
        self.means_c_ = means - self.mean_centre_
        self.score_range_ = (0.0, 1.0) if _is_binary(self.source_) else (-np.inf, np.inf)
        return own, other, means, self.source_.mean(axis=1)

    def _scale(self, d_own, d_other, s) -> None:
        """The RBF part's scale at other-task weight ``s``: the median positive squared distance."""
        d2 = d_own + s * s * d_other
        pos = d2[d2 > 0]
        self.scale_[s] = float(np.median(pos)) if pos.size else 1.0

    def _fit_estimate(self, source, items, others=()):
        """Fit at the grids' first setting without the leave-one-out search: the estimate only.

        For refits at a chosen setting whose estimates alone are read (a stack's held-out folds): the same
        estimates (:meth:`_estimate`) as :meth:`fit` with one-setting grids gives, without its leave-one-out
        residuals, error model and interval (an ``m x m`` eigendecomposition each).
        """
        own, other, means, y = self._prepare(source, items, others)
        s = self.weights[0] if other.shape[1] else 0.0
        self.scale_ = {}
        self._scale(_sq_dist(own, own), _sq_dist(other, other), s)
        self.setting_ = {"weight": s, "bandwidth": self.bandwidths[0], "linear": self.linear[0],
                         "alpha": self.alphas[0]}
        self._solve(own, other, means, y)
        return self

    def fit(self, source, items, others=()):
        own, other, means, y = self._prepare(source, items, others)
        weights = self.weights if other.shape[1] else (0.0,)
        d_own, d_other = _sq_dist(own, own), _sq_dist(other, other)
        # The linear part's own centring (its columns are the centred means already, up to rounding).
        B = self.means_c_ - self.means_c_.mean(axis=0)
        self.scale_ = {}
        best = (np.inf, None, None)
        for s in weights:
            self._scale(d_own, d_other, s)
            for bw in self.bandwidths:
                # One eigendecomposition of the RBF part serves every linear weight (kernel_loo_residuals_linear).
                rbf = self._combine(d_own, d_other, 0.0, (s, bw, 0.0))
                for lin, r in zip(self.linear, kernel_loo_residuals_linear(rbf, B, self.linear, y, self.alphas)):
                    sq = r ** 2
                    j = int(np.argmin(sq.mean(axis=1)))
                    if sq[j].mean() < best[0]:
                        best = (sq[j].mean(), (s, bw, lin, self.alphas[j]), r[j])
        self.loo_mse_, setting, self.loo_signed_ = best
        self.setting_ = dict(zip(("weight", "bandwidth", "linear", "alpha"), setting))
        self._solve(own, other, means, y)
        self.loo_residuals_ = np.abs(self.loo_signed_)
        self.radius_ = conformal_radius(self.loo_residuals_, self.level)
        self._fit_error_variance(self.loo_signed_ ** 2)
        return self

    def _sampling_variance(self, Y: np.ndarray) -> np.ndarray:
        """Per row: the design variance of the mean of its answers to this task's sampled items."""
        v = _design_variance(_binary_variance(Y), Y.shape[1], self.n_total_)
        return np.maximum(v, 1e-6 * max(float(np.mean(v)), 1e-12))

    def _fit_error_variance(self, sq: np.ndarray) -> None:
        """The regression's error variance as ``c * v**power``, ``v`` the model's :meth:`_sampling_variance`.

        A regression on a sample of 0/1 answers errs less for a model near 0 or 1, whose answers vary less;
        ``power`` (in ``variance_powers``; 0 is one variance for every model) and ``c`` maximise the Gaussian
        likelihood of the source models' leave-one-out residuals (``c`` in closed form given ``power``).
        """
        v = self._sampling_variance(self.source_[:, self.items_])
        best = (np.inf, 0.0, float(np.mean(sq)))
        for p in self.variance_powers:
            c = max(float(np.mean(sq / v ** p)), 1e-300)
            nll = float(np.sum(np.log(c * v ** p)))  # + m: the residual term is m at the maximum
            if nll < best[0]:
                best = (nll, float(p), c)
        _, self.variance_power_, self.variance_scale_ = best

    def error_variance(self, Y) -> np.ndarray:
        """The regression's error variance for targets with answers ``Y`` to this task's sampled items."""
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        return self.variance_scale_ * self._sampling_variance(Y) ** self.variance_power_

    def fixed_params(self) -> dict:
        """Constructor arguments that fix the chosen setting (a refit on other models skips the search)."""
        st = self.setting_
        return {"weights": (st["weight"],), "bandwidths": (st["bandwidth"],), "linear": (st["linear"],),
                "alphas": (st["alpha"],), "variance_powers": (self.variance_power_,)}

    def _solve(self, own, other, means, y) -> None:
        st = self.setting_
        self.K_ = self._kernel(own, other, means, (st["weight"], st["bandwidth"], st["linear"]))
        self.y_mean_, self.dual_ = kernel_dual(self.K_, y, st["alpha"])

    def _estimate(self, Y, others=()) -> np.ndarray:
        """The estimates alone (clipped to the score range), as :meth:`predict` gives them."""
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        own, other, means, _ = self._blocks(Y, _check_targets(type(self).__name__, len(self.others_), others))
        st = self.setting_
        Kt = self._kernel(own, other, means, (st["weight"], st["bandwidth"], st["linear"]))
        est = _centre_test(Kt, self.K_) @ self.dual_ + self.y_mean_
        return np.clip(est, *self.score_range_)

    def predict(self, Y, others=()) -> ItemEstimate:
        return radius_interval(self._estimate(Y, others), self.radius_, self.score_range_, self.level)
