"""Working models of the design-based item estimators, and their choice per target by nested cross-fitting.

A cross-fitted AIPW (difference) estimator (:class:`~.item_estimators.AIPW`) is design-unbiased whatever
its working model predicts; the working model only sets the variance, through the residuals of the
target's answers. Its candidates here:

* :func:`logistic_working`: a penalised logistic model of the target's answers on per-item features
  from the population (the logit of the item's mean over all and over the strongest source models,
  optionally the item's loadings on the population's leading answer patterns, :func:`item_loadings`),
  with one free intercept per task, fitted per target on the sampled items of this task and of every
  other task of the benchmark. The intercepts are the target's own, so a target stronger than every
  source model is not pulled back to their mean.
* :func:`choose_working`: the choice, for each target, among candidate predictions by their residual
  variance on the target's own sampled items, estimated by an inner cross-fit inside the training
  items only. Nested this way the choice never sees the fold the estimate corrects with, so the
  estimator stays design-unbiased (Chernozhukov et al. 2018: the working model of each fold may depend
  on the other folds in any way).

References
----------
Zhang, Dorner and Hardt (2025), "How Benchmark Prediction from Fewer Data Misses the Mark", NeurIPS, §4
(AIPW for benchmark prediction). Cochran (1977), Sampling Techniques, §7.7 (difference estimator: its
variance is that of the residuals). Chernozhukov et al. (2018), Econometrics Journal 21 (cross-fitting).
Reckase (2009), Multidimensional Item Response Theory, ch. 4 (item loadings on latent abilities).
"""

from __future__ import annotations

import numpy as np

from .item_irt import _newton_rows, _sigmoid, outer_rows
from .item_learn import _fill_missing

#: From this many groups (task intercepts: the task and the benchmark's other tasks) a working logit is fitted through
#: its design's structure (:func:`logistic_working_grouped`, equal to rounding); below it the dense design
#: (:func:`logistic_working`) is as fast, and keeps its results bit for bit.
GROUPED_FROM = 16


def item_loadings(blocks: list, dims: int) -> list:
    """Each item's loadings on the ``dims`` leading right singular vectors of the population's answers.

    ``blocks`` are the benchmark's tasks as (models x items) arrays with the same rows (NaN where a model
    lacks an answer, filled with the item's mean). The answers are centred per item and the loadings
    scaled to unit standard deviation over the benchmark's items, so that one prior suits every column.
    Returns one (items, dims) array per block.
    """
    filled = [_fill_missing(B, B)[0] for B in blocks]
    J = np.hstack([F - F.mean(axis=0) for F in filled])
    d = max(0, min(dims, min(J.shape) - 1))
    if d == 0:
        return [np.zeros((F.shape[1], 0)) for F in filled]
    _, _, Vt = np.linalg.svd(J, full_matrices=False)
    L = Vt[:d].T
    L = L / np.maximum(L.std(axis=0), 1e-12)
    ends = np.cumsum([0] + [F.shape[1] for F in filled])
    return [L[ends[k]:ends[k + 1]] for k in range(len(blocks))]


def logistic_working(X_train: np.ndarray, R: np.ndarray, X_all: np.ndarray, prec: np.ndarray,
                     n_newton: int = 25) -> np.ndarray:
    """Per-target penalised logistic regressions; the predicted probability of every item (items, targets).

    ``X_train`` (observations, q) is shared by every target, ``R`` (targets, observations) the targets'
    0/1 answers (NaN left out), ``prec`` the diagonal prior precision of the ``q`` coefficients (nearly
    flat on the task intercepts), ``X_all`` the design of the items to predict. Vectorised damped Newton
    (:func:`~.item_irt._newton_rows`), from zero.
    """
    W = np.isfinite(R).astype(float)
    R0 = np.where(W > 0, R, 0.0)
    V = np.zeros((R.shape[0], X_train.shape[1]))
    XX = outer_rows(X_train)  # the design is the same at every step: its outer products once, not per step
    for _ in range(n_newton):
        V = _newton_rows(X_train, W, R0, _sigmoid(V @ X_train.T), prec, V, XX=XX)
    return _sigmoid(X_all @ V.T)


def choose_working(candidates, train_items: np.ndarray, Y_train: np.ndarray, n_inner: int = 4):
    """Each target's working model: the candidate with the smallest inner cross-fitted residual variance.

    ``candidates(items, Y)`` returns a list of predictions (items, targets), one per candidate, fitted on
    the targets' answers ``Y`` to ``items``. The training items are split into ``n_inner`` interleaved
    folds; every candidate is fitted without each inner fold and scored on it, and each target takes the
    candidate whose pooled out-of-fold residuals vary least (ties: the first). Returns ``(F, choice)``:
    the chosen candidates fitted on every training item (items, targets) and the index chosen per target.
    Only the training items are read, so the outer fold the estimate corrects with plays no part.
    """
    n = len(train_items)
    inner = np.arange(n) % max(2, min(n_inner, n))
    resid = None
    for j in np.unique(inner):
        fits = candidates(train_items[inner != j], Y_train[:, inner != j])
        held = train_items[inner == j]
        r = np.stack([Y_train[:, inner == j] - f[held].T for f in fits])  # (candidates, targets, held)
        resid = r if resid is None else np.concatenate([resid, r], axis=2)
    spread = resid.var(axis=2)
    choice = np.argmin(spread, axis=0)
    fits = np.stack(candidates(train_items, Y_train))  # (candidates, items, targets)
    return fits[choice, :, np.arange(len(choice))].T, choice


def logistic_working_grouped(F_train: np.ndarray, group: np.ndarray, R: np.ndarray, F_all: np.ndarray,
                             prec: np.ndarray, k: int, n_newton: int = 25) -> np.ndarray:
    """:func:`logistic_working` for the design ``[F, one-hot(group)]`` (dense features, one intercept per group),
    exploiting its structure; the predicted probability of every item of group 0 (``F_all``'s rows).

    The same penalised likelihood and the same damped Newton steps, from zero, as :func:`logistic_working` on the
    dense design: only the arithmetic differs. Its Hessian is an arrow matrix (the features' block, their sums per
    group, and a diagonal over the groups): a step takes the features' block from one product with their outer
    products, the per-group sums as sums over the rows sorted by group (``obs x (d + 1)`` per target however many
    groups), and solves through the features' ``d x d`` Schur complement, where the dense design costs ``obs * (d +
    k)**2`` per target and a ``(d + k)``-sized solve; with one group per task of a benchmark (obs
    growing with the tasks too) the dense form grows with the cube of the tasks. The results agree with the dense
    form's to rounding (about 1e-16 in the probabilities), not bit for bit.

    ``group`` (obs,): each row's group, ``0 .. k - 1`` (any order; a group may have no rows); ``prec`` the diagonal
    prior precision of the ``d + k`` coefficients, the groups' last.
    """
    d = F_train.shape[1]
    # The rows sorted by group, so that every per-group sum is a sum over contiguous rows (np.add.reduceat): a
    # step costs targets x obs x (d + 1) for them, where a product with the one-hot block costs targets x obs x k.
    order = np.argsort(np.asarray(group), kind="stable")
    group = np.asarray(group)[order]
    F = F_train[order]
    W = np.isfinite(R[:, order]).astype(float)
    R0 = np.where(W > 0, R[:, order], 0.0)
    counts = np.bincount(group, minlength=k)
    has, starts = counts > 0, (np.cumsum(counts) - counts)[counts > 0]
    F1 = np.vstack([F.T, np.ones(len(group))])  # (d + 1, obs): the features and a constant, summed per group
    FF = outer_rows(F)
    p_f, p_g = prec[:d], prec[d:]
    b = np.zeros((R.shape[0], d))
    c = np.zeros((R.shape[0], k))
    for _ in range(n_newton):
        P = _sigmoid(b @ F.T + c[:, group])
        r = W * (P - R0)
        g_b, g_c = r @ F + b * p_f, c * p_g
        g_c[:, has] += np.add.reduceat(r, starts, axis=1)
        V = W * P * (1 - P)
        A = (V @ FF).reshape(-1, d, d) + np.diag(p_f)
        per = np.zeros((R.shape[0], d + 1, k))  # (targets, features then the count, groups)
        per[:, :, has] = np.add.reduceat(V[:, None, :] * F1[None], starts, axis=2)
        B = per[:, :d]
        Dg = per[:, d] + p_g  # the groups' diagonal
        BD = B / Dg[:, None, :]
        S = A - BD @ B.transpose(0, 2, 1)
        s_b = np.linalg.solve(S, (g_b - (BD @ g_c[..., None])[..., 0])[..., None])[..., 0]
        s_c = (g_c - (B.transpose(0, 2, 1) @ s_b[..., None])[..., 0]) / Dg
        norm = np.sqrt(np.sum(s_b ** 2, axis=1) + np.sum(s_c ** 2, axis=1))[:, None]
        scale = np.minimum(1.0, 1.5 / np.maximum(norm, 1e-12))
        b, c = b - s_b * scale, c - s_c * scale
    return _sigmoid(F_all @ b.T + c[:, 0])
