"""Item response theory for full-task scores from a few items: 2PL fit, abilities, IRT / p-IRT / gp-IRT.

The multidimensional two-parameter logistic model (the model of tinyBenchmarks) gives model ``j`` the
probability ``p_ij = sigmoid(a_i . theta_j - b_i)`` of answering item ``i`` correctly. The item
parameters ``(a_i, b_i)`` are fitted on the population's full 0/1 answers by regularised maximum
likelihood (joint MAP with Gaussian priors, by alternating vectorised Newton steps); a new model's ability
``theta`` is then the MAP estimate from its answers to the sampled items alone (vectorised Newton over
all targets), and its full-task score follows from the predicted ``p_i`` of the items it did not answer.

* :class:`~harness_ext.methods.engine.item_irt_estimators.IRT`: the mean of ``p_i(theta)`` over every item.
* :class:`~harness_ext.methods.engine.item_irt_estimators.PIRT`: p-IRT, the observed answers where there are any and ``p_i(theta)`` elsewhere,
  ``(n/N) mean(y_S) + (1 - n/N) mean_{i not in S} p_i(theta)``.
* :class:`~harness_ext.methods.engine.item_irt_estimators.GPIRT`: gp-IRT, ``lambda * mean(y_S) + (1 - lambda) * p-IRT`` with the tinyBenchmarks rule
  ``lambda = b^2 / (v + b^2)``: ``b`` the p-IRT error on held-out population models (every fifth one,
  seeing every second item), ``v`` the population's mean per-item variance over ``4 n``.

Settings (the number of dimensions) are chosen by cross-validation over the population's models, with the
sampled items, never by the target. Intervals: each estimate has a model-based standard deviation (the
Bernoulli variance of the unanswered items plus the delta-method variance of ``theta``); the estimators
multiply it by a conformal quantile of held-out population models' standardised errors, from
:func:`cross_validate_irt` and from the population's own frontier (:func:`frontier_split_estimates`).

References
----------
Polo, Weber, Choshen, Sun, Xu and Yurochkin (2024), "tinyBenchmarks: evaluating LLMs with fewer
examples", ICML, §3 (IRT, p-IRT, gp-IRT and its lambda). Reckase (2009),
Multidimensional Item Response Theory, ch. 4 (the M2PL model). Zhang, Dorner and Hardt (2025), "How
Benchmark Prediction from Fewer Data Misses the Mark", NeurIPS (the adapted code's validation split).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np

_CACHE: "OrderedDict[tuple, tuple]" = OrderedDict()
_CACHE_SIZE = 64


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _init(R: np.ndarray, W: np.ndarray, dims: int):
    """Deterministic start: abilities and loadings from the SVD of the centred answers, logit item means."""
    mu = (R * W).sum(axis=0) / np.maximum(W.sum(axis=0), 1.0)
    mu = np.clip(mu, 0.02, 0.98)
    C = np.where(W > 0, R - mu, 0.0)
    U, s, Vt = np.linalg.svd(C, full_matrices=False)
    d = min(dims, len(s))
    theta = np.zeros((R.shape[0], dims))
    A = np.zeros((R.shape[1], dims))
    sc = np.sqrt(R.shape[0])
    theta[:, :d] = U[:, :d] * sc
    A[:, :d] = 4.0 * Vt[:d].T * s[:d] / sc
    return theta, A, -np.log(mu / (1 - mu))


def outer_rows(X: np.ndarray) -> np.ndarray:
    """The outer products of ``X``'s rows, flattened (obs, q * q): what :func:`_weighted_grams` multiplies by."""
    q = X.shape[1]
    return (X[:, :, None] * X[:, None, :]).reshape(len(X), q * q)


def _weighted_grams(Wq: np.ndarray, X: np.ndarray, XX=None) -> np.ndarray:
    """``X.T @ diag(Wq[k]) @ X`` for every row ``k`` of ``Wq``: one matrix product with the outer products of ``X``'s
    rows (``XX``, :func:`outer_rows`, when the caller keeps them across Newton steps of the same design)."""
    q = X.shape[1]
    return (Wq @ (outer_rows(X) if XX is None else XX)).reshape(len(Wq), q, q)


def _newton_rows(X, Wt, Rt, P, prior, V, step_max=1.5, XX=None):
    """One damped Newton step for many small penalised logistic regressions at once.

    Row ``k`` has coefficients ``V[k]`` (length ``q``), design ``X`` (obs, q) shared by all rows, weights
    ``Wt[k]``, answers ``Rt[k]`` and current probabilities ``P[k]``; ``prior`` is the diagonal precision;
    ``XX`` the design's :func:`outer_rows`, if the caller computed them once for several steps.
    """
    g = (Wt * (P - Rt)) @ X + V * prior
    H = _weighted_grams(Wt * P * (1 - P), X, XX) + np.diag(prior)
    step = np.linalg.solve(H, g[..., None])[..., 0]
    norm = np.linalg.norm(step, axis=1, keepdims=True)
    return V - step * np.minimum(1.0, step_max / np.maximum(norm, 1e-12))


def fit_2pl(R: np.ndarray, *, dims: int = 1, item_prior: float = 1.0, max_iter: int = 40, tol: float = 1e-3):
    """Item parameters and abilities of the multidimensional 2PL model by joint regularised likelihood.

    Block coordinate ascent on the joint log-posterior: alternately one Newton step for every item's
    ``(a_i, b_i)`` given the abilities and one for every model's ``theta_j`` given the items, each block
    a batch of small penalised logistic regressions solved at once. Deterministic (SVD start).

    Parameters
    ----------
    R : ndarray (models, items)
        0/1 answers; NaN marks an answer not observed (left out of the likelihood).
    dims : int
        Number of ability dimensions (1 is the classical 2PL).
    item_prior : float
        Standard deviation of the Gaussian prior on the loadings ``a`` (the difficulties get ``3x``
        that); abilities get a standard normal prior, which fixes the scale.
    max_iter : int
        Alternations at most; stops once no parameter moves by more than ``tol``.

    Returns
    -------
    A : ndarray (items, dims), b : ndarray (items,), theta : ndarray (models, dims)

    References
    ----------
    Reckase (2009), Multidimensional Item Response Theory, eq. 4.5 (M2PL); Polo et al. (2024), §3.
    """
    R = np.asarray(R, dtype=float)
    key = (hashlib.sha1(np.ascontiguousarray(R).tobytes()).hexdigest(), R.shape, dims, item_prior, max_iter, tol)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    W = np.isfinite(R).astype(float)
    R0 = np.where(W > 0, R, 0.0)
    M = R.shape[0]
    th, A, b = _init(R0, W, dims)
    item_prec = np.r_[np.full(dims, 1.0 / item_prior ** 2), 1.0 / (3.0 * item_prior) ** 2]
    model_prec = np.ones(dims)
    for _ in range(max_iter):
        X = np.hstack([th, -np.ones((M, 1))])
        V = np.hstack([A, b[:, None]])
        V_new = _newton_rows(X, W.T, R0.T, _sigmoid(X @ V.T).T, item_prec, V)
        A, b = V_new[:, :dims], V_new[:, dims]
        th_new = _newton_rows(A, W, R0, _sigmoid(th @ A.T - b), model_prec, th)
        moved = max(np.abs(V_new - V).max(), np.abs(th_new - th).max())
        th = th_new
        if moved < tol:
            break
    out = (A.copy(), b.copy(), th.copy())
    _CACHE[key] = out
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return out


def abilities(Y: np.ndarray, A: np.ndarray, b: np.ndarray, *, prior_sd: float = 2.0, n_iter: int = 30):
    """MAP abilities of each row of ``Y`` (answers to the items whose parameters are ``A``, ``b``).

    Vectorised damped Newton on the penalised log-likelihood, strictly concave, so it converges from
    zero; NaN answers are left out. Returns ``(theta, H)``: abilities (targets, dims) and the Hessians
    of the negative log-posterior at them (targets, dims, dims), whose inverses are their variances.
    The prior ``N(0, prior_sd^2)`` is wider than the population's ``N(0, 1)`` so that a model stronger
    than every population model is not pulled back into it; it keeps an all-correct sample finite.
    """
    Y = np.atleast_2d(np.asarray(Y, dtype=float))
    W = np.isfinite(Y).astype(float)
    Y0 = np.where(W > 0, Y, 0.0)
    T, D = Y.shape[0], A.shape[1]
    th = np.zeros((T, D))
    eye = np.eye(D) / prior_sd ** 2
    for _ in range(n_iter):
        P = _sigmoid(th @ A.T - b)
        g = (W * (P - Y0)) @ A + th / prior_sd ** 2
        H = _weighted_grams(W * P * (1 - P), A) + eye
        step = np.linalg.solve(H, g[..., None])[..., 0]
        norm = np.linalg.norm(step, axis=1, keepdims=True)
        th -= step * np.minimum(1.0, 1.5 / np.maximum(norm, 1e-12))
        if norm.max() < 1e-6:
            break
    P = _sigmoid(th @ A.T - b)
    H = _weighted_grams(W * P * (1 - P), A) + eye
    return th, H


def pirt_estimates(Y, obs, A, b, *, task=None, prior_sd: float = 2.0):
    """IRT and p-IRT estimates of each target's mean over ``task``'s items, with model-based standard deviations.

    Parameters
    ----------
    Y : ndarray (targets, len(obs))
        The targets' answers to the items ``obs`` (column indices into ``A``; NaN = not answered).
    obs : ndarray of int
        The answered items; those outside ``task`` (other tasks of a joint model) inform ``theta`` only.
    A, b : item parameters from :func:`fit_2pl` (all columns of a joint fit).
    task : ndarray of int, optional
        The task's columns (default: every column).

    Returns
    -------
    irt, pirt, sd_irt, sd_pirt, P : the estimates, their standard deviations, and ``p`` on the task's items.
        The p-IRT variance is that of the unanswered items' Bernoulli outcomes given ``p`` plus the
        delta-method variance of their mean through ``theta``; the IRT variance counts every item
        (Polo et al. 2024, §3).
    """
    Y = np.atleast_2d(np.asarray(Y, dtype=float))
    obs = np.asarray(obs)
    task = np.arange(A.shape[0]) if task is None else np.asarray(task)
    th, H = abilities(Y, A[obs], b[obs], prior_sd=prior_sd)
    P = _sigmoid(th @ A[task].T - b[task])
    N = len(task)
    unseen = ~np.isin(task, obs)
    seen_sum = np.nansum(Y[:, np.isin(obs, task)], axis=1)
    irt = P.mean(axis=1)
    pirt = (seen_sum + P[:, unseen].sum(axis=1)) / N
    Q = P * (1 - P)
    At = A[task]
    Hinv = np.linalg.inv(H)

    def var(mask):
        grad = (Q[:, mask] @ At[mask]) / N  # d mean(p) / d theta
        return np.einsum("td,tde,te->t", grad, Hinv, grad) + Q[:, mask].sum(axis=1) / N ** 2

    return irt, pirt, np.sqrt(var(np.ones(N, dtype=bool))), np.sqrt(var(unseen)), P


def model_folds(n_models: int, n_folds: int = 5) -> np.ndarray:
    """Interleaved fold of each population model: fold 0 is every fifth model, the adapted code's validation set."""
    return np.arange(n_models) % n_folds


def held_out_errors(S, errors_of, *, n_folds: int = 5, frontier: bool = True, min_train: int = 2) -> tuple:
    """``(cv, frontier)``: absolute held-out errors of a method that picks its own items, for its interval.

    ``errors_of(held)`` fits on the population models outside the mask ``held`` and returns its signed errors on
    the held ones. ``cv``: over the interleaved folds of :func:`model_folds` that leave at least ``min_train``
    models to fit on; ``frontier`` (with at least 6 models): the strongest third (at least 2) by mean score,
    held out from a fit on the rest, what a model beyond the population meets.
    """
    S = np.asarray(S, dtype=float)
    folds = model_folds(S.shape[0], n_folds)
    cv = [errors_of(folds == k) for k in np.unique(folds) if (folds != k).sum() >= min_train]
    front = np.zeros(0)
    if frontier and S.shape[0] >= 6:
        strong = np.zeros(S.shape[0], dtype=bool)
        strong[np.argsort(S.mean(axis=1), kind="stable")[-max(2, S.shape[0] // 3):]] = True
        front = errors_of(strong)
    return (np.abs(np.concatenate(cv)) if cv else np.zeros(0)), np.abs(np.asarray(front))


def cross_validate_irt(S, obs, *, task=None, dims_grid=(1, 2, 4, 8), n_folds: int = 5,
                       item_prior: float = 1.0, prior_sd: float = 2.0) -> dict:
    """Choose the number of dimensions by the p-IRT error of held-out population models.

    The population's models are split into ``n_folds`` interleaved folds; for each candidate the item
    parameters are fitted without a fold and that fold's models are estimated from their answers to
    ``obs`` alone, as a new model would be. Returns the chosen ``dims`` with, for it, each population
    model's held-out ``irt``, ``pirt``, ``sd_irt``, ``sd_pirt``, the sample mean of its answered task
    items ``mean`` and its true task mean ``truth``; ``errors`` maps every candidate to its mean |error|.
    """
    S = np.asarray(S, dtype=float)
    task = np.arange(S.shape[1]) if task is None else np.asarray(task)
    folds = model_folds(S.shape[0], n_folds)
    truth = np.nanmean(S[:, task], axis=1)
    runs, errors = {}, {}
    for d in dims_grid:
        out = {k: np.empty(S.shape[0]) for k in ("irt", "pirt", "sd_irt", "sd_pirt")}
        for k in range(n_folds):
            held = folds == k
            if not held.any():
                continue
            A, b, _ = fit_2pl(S[~held], dims=d, item_prior=item_prior)
            irt, pirt, sdi, sdp, _ = pirt_estimates(S[held][:, obs], obs, A, b, task=task, prior_sd=prior_sd)
            for name, v in zip(("irt", "pirt", "sd_irt", "sd_pirt"), (irt, pirt, sdi, sdp)):
                out[name][held] = v
        runs[d] = out
        errors[d] = float(np.mean(np.abs(out["pirt"] - truth)))
    best = min(errors, key=errors.get)
    in_task = np.asarray(obs)[np.isin(obs, task)]
    return dict(runs[best], dims=best, errors=errors, truth=truth, mean=np.nanmean(S[:, in_task], axis=1))


def frontier_split_estimates(S, obs, *, dims: int, task=None, share: float = 1 / 3, item_prior: float = 1.0,
                             prior_sd: float = 2.0) -> dict:
    """Held-out estimates for the strongest ``share`` of the population, fitted on the rest.

    The population's own frontier: the item parameters are fitted on its weaker models only and its
    strongest models are estimated from their answers to ``obs``, as a model beyond the population would
    be. Returns the same keys as :func:`cross_validate_irt` (for those models only).
    """
    S = np.asarray(S, dtype=float)
    task = np.arange(S.shape[1]) if task is None else np.asarray(task)
    truth = np.nanmean(S[:, task], axis=1)
    order = np.argsort(truth, kind="stable")
    held = np.zeros(S.shape[0], dtype=bool)
    held[order[len(order) - max(2, int(round(share * len(order)))):]] = True
    A, b, _ = fit_2pl(S[~held], dims=dims, item_prior=item_prior)
    irt, pirt, sdi, sdp, _ = pirt_estimates(S[held][:, obs], obs, A, b, task=task, prior_sd=prior_sd)
    in_task = np.asarray(obs)[np.isin(obs, task)]
    return dict(irt=irt, pirt=pirt, sd_irt=sdi, sd_pirt=sdp, truth=truth[held],
                mean=np.nanmean(S[held][:, in_task], axis=1), held=held)
