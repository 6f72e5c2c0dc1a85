"""Dataset-selection strategies of Gusev & Zaytsev (KDD 2026, §4) on a representation of the datasets.

k-means representatives, greedy farthest-first (cosine and Euclidean) and greedy A-/D-optimal design with
a swap pass. All of them work on a *representation* of the datasets (:func:`dataset_representation`):

* a-priori features when the caller supplies them (``fit(X, features=F)`` with
  ``F`` of shape ``(n_datasets, n_features)``, e.g. from ``--features CSV``);
* otherwise the performance columns of ``X``: dataset j is represented by the
  vector of the (training) models' scores on it, ``X[:, j]``. These are
  a-posteriori, "oracle-style" representations in the paper's terms (§6.1).

As in the paper, feature columns are standardised over the pool before
selection (``standardize=True``; constant columns become 0). Missing entries of
the representation are set to the column mean (0 after standardising).

The registered selectors (``kmeans``, ``farthest-first-*``, ``a-optimal``, ``d-optimal``, and the
``random-subset`` baseline) are the classes of :mod:`harness_ext.plugins.selectors_representation`.

References
----------
Gusev & Zaytsev, "Benchmarking on Tasks That Matter: Dataset Selection for
Preserving Model Rankings", KDD 2026, §4 (Algorithms 1-2, eq. 4) and §4.1.
"""

from __future__ import annotations

import warnings
from typing import Optional

import numpy as np

from harness_ext.base import check_matrix, limit_threads
from harness_ext.errors import MethodError


def dataset_representation(X, features=None, standardize: bool = True) -> np.ndarray:
    """The ``(n_datasets, p)`` matrix the selectors work on.

    Parameters
    ----------
    X : array-like, shape (n_models, n_datasets)
        Performance matrix of the training models (NaN allowed).
    features : array-like, shape (n_datasets, n_features), optional
        A-priori dataset features; when given they are used instead of ``X``.
    standardize : bool
        z-score every feature over the datasets (constant features become 0).

    Returns
    -------
    numpy.ndarray
        Finite float array; NaN entries replaced by their column mean.

    References
    ----------
    Gusev & Zaytsev (2026), §4 ("feature matrices are standardized before
    selection for all methods") and §5.2 (representations).
    """
    X = check_matrix(X, allow_nan=True)
    if features is None:
        F = X.T.copy()
    else:
        F = np.asarray(features, dtype=float)
        if F.ndim == 1:
            F = F[:, None]
        if F.ndim != 2 or F.shape[0] != X.shape[1]:
            raise MethodError(
                f"features must have one row per dataset: got shape {F.shape} for {X.shape[1]} datasets"
            )
        if np.isinf(F).any():
            raise MethodError("features contain infinite values")
    if F.shape[1] == 0:
        raise MethodError("the dataset representation has no features")
    nan = np.isnan(F)
    if nan.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            col_mean = np.nanmean(F, axis=0)
        col_mean = np.where(np.isnan(col_mean), 0.0, col_mean)
        F = np.where(nan, col_mean[None, :], F)
    if standardize:
        F = F - F.mean(axis=0, keepdims=True)
        sd = F.std(axis=0, keepdims=True)
        F = np.divide(F, sd, out=np.zeros_like(F), where=sd > 1e-12 * (1.0 + np.abs(F).max()))
    return F


def check_n_select(n_select, n: int) -> int:
    if n_select is None:
        return n
    if isinstance(n_select, bool) or not isinstance(n_select, (int, np.integer)) or n_select < 1:
        raise MethodError(f"n_select must be a positive integer or None, got {n_select!r}")
    if n_select > n:
        raise MethodError(f"n_select={n_select} exceeds the {n} datasets available")
    return int(n_select)


def _pairwise_to(F: np.ndarray, U: Optional[np.ndarray], idx: int, metric: str) -> np.ndarray:
    """Distances from dataset ``idx`` to every dataset (one row, O(n p))."""
    if metric == "cosine":
        return 1.0 - U @ U[idx]
    diff = F - F[idx]
    return np.sqrt(np.einsum("ij,ij->i", diff, diff))


def check_farthest_first(metric_in: str, start_in: str) -> tuple:
    """``(metric, start)`` of a farthest-first traversal, normalised, or a :class:`MethodError` naming the bad one."""
    metric = str(metric_in).lower()
    if metric not in ("euclidean", "cosine"):
        raise MethodError(f"metric must be 'euclidean' or 'cosine', got {metric_in!r}")
    start = str(start_in).lower().replace("_", "-")
    if start not in ("auto", "centroid", "mean-distance"):
        raise MethodError(f"start must be 'auto', 'centroid' or 'mean-distance', got {start_in!r}")
    return metric, start


def farthest_first_order(F: np.ndarray, k: int, metric: str, start: str) -> tuple:
    """Greedy farthest-first traversal (Gonzalez 1985) of the rows of ``F``: ``(order, radius)``.

    ``metric`` and ``start`` as :func:`check_farthest_first` returns them. ``radius[t]`` is the covering
    radius after step ``t``: the largest distance from an unselected dataset to the selected set. Ties go to
    the lowest index.

    References
    ----------
    Gusev & Zaytsev (2026), §4 Algorithm 2 and §4.1 eq. (5)-(6).
    """
    n = F.shape[0]
    U = None
    if metric == "cosine":
        norms = np.linalg.norm(F, axis=1, keepdims=True)
        U = np.divide(F, norms, out=np.zeros_like(F), where=norms > 0)
    if start == "auto":
        start = "centroid" if metric == "euclidean" else "mean-distance"
    centre = F.mean(axis=0)
    if start == "centroid" and metric == "cosine" and np.linalg.norm(centre) <= 1e-12 * (1 + np.abs(F).max()):
        start = "mean-distance"  # cosine to the origin is undefined
    if start == "centroid":
        if metric == "cosine":
            c = centre / np.linalg.norm(centre)
            score = 1.0 - U @ c
        else:
            score = np.linalg.norm(F - centre, axis=1)
    elif metric == "cosine":
        # mean_j (1 - u_i . u_j) = 1 - u_i . mean(u): O(n p), no n x n matrix.
        score = 1.0 - U @ U.mean(axis=0)
    else:
        score = _mean_euclidean(F)
    first = int(np.argmax(score))
    order = np.empty(k, dtype=int)
    radius = np.empty(k)
    order[0] = first
    mind = _pairwise_to(F, U, first, metric)
    selected = np.zeros(n, dtype=bool)
    selected[first] = True
    for t in range(1, k):
        cand = np.where(selected, -np.inf, mind)
        j = int(np.argmax(cand))
        radius[t - 1] = cand[j]
        order[t] = j
        selected[j] = True
        mind = np.minimum(mind, _pairwise_to(F, U, j, metric))
    rest = np.where(selected, -np.inf, mind)
    radius[k - 1] = rest.max() if (~selected).any() else 0.0
    return order, radius


def _mean_euclidean(F: np.ndarray, chunk: int = 512) -> np.ndarray:
    from scipy.spatial.distance import cdist

    out = np.empty(F.shape[0])
    for s in range(0, F.shape[0], chunk):
        out[s : s + chunk] = cdist(F[s : s + chunk], F).mean(axis=1)
    return out


def kmeans_representatives(F: np.ndarray, k: int, n_init: int, random_state) -> tuple:
    """One dataset per k-means cluster (the member closest to the centroid), largest cluster first: ``(reps, labels)``.

    If the data have fewer distinct points than k, k-means leaves clusters empty; the missing picks are then
    filled farthest-first from the chosen representatives, so exactly k distinct datasets are returned.

    References
    ----------
    Gusev & Zaytsev (2026), §4 Algorithm 1.
    """
    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning

    n = F.shape[0]
    if k == n:
        return np.arange(n), np.arange(n)
    # A few hundred datasets: OpenMP start-up costs ~10x the work (1.3 s vs 0.1 s for
    # k = 2..20 on 89 x 40), and the protocol parallelises over trials instead.
    with warnings.catch_warnings(), limit_threads(user_api="openmp"):
        warnings.simplefilter("ignore", ConvergenceWarning)
        km = KMeans(n_clusters=k, n_init=n_init, random_state=random_state).fit(F)
    labels = km.labels_
    d2 = ((F - km.cluster_centers_[labels]) ** 2).sum(axis=1)
    sizes = np.bincount(labels, minlength=k)
    # lexsort: last key is primary -> by cluster, then distance, then index.
    idx = np.lexsort((np.arange(n), d2, labels))
    first_of_cluster = idx[np.r_[True, labels[idx][1:] != labels[idx][:-1]]]
    reps_labels = labels[first_of_cluster]
    reps = first_of_cluster[np.lexsort((first_of_cluster, -sizes[reps_labels]))]
    if len(reps) < k:
        reps = _fill_farthest_first(F, reps, k)
    return reps, labels


def _fill_farthest_first(F, reps, k):
    chosen = list(reps)
    mind = np.full(F.shape[0], np.inf)
    for r in chosen:
        mind = np.minimum(mind, np.linalg.norm(F - F[r], axis=1))
    while len(chosen) < k:
        cand = mind.copy()
        cand[chosen] = -np.inf
        j = int(np.argmax(cand))
        chosen.append(j)
        mind = np.minimum(mind, np.linalg.norm(F - F[j], axis=1))
    return np.asarray(chosen, dtype=int)


def kmeans_order(F: np.ndarray, n_init: int, random_state) -> np.ndarray:
    """Every dataset, by first appearance among the representatives of the k-means solutions for k = 1, 2, ....

    A nested approximation for coverage curves (n k-means fits); see :func:`kmeans_representatives`.

    References
    ----------
    Gusev & Zaytsev (2026), §4 Algorithm 1.
    """
    n = F.shape[0]
    seen = np.zeros(n, dtype=bool)
    order = []
    for k in range(1, n + 1):
        reps, _ = kmeans_representatives(F, k, n_init, random_state)
        new = reps[~seen[reps]]
        order.extend(new.tolist())
        seen[new] = True
        if seen.all():
            break
    return np.asarray(order, dtype=int)


def _design_value(K, S, lam, criterion):
    G = K[np.ix_(S, S)] + lam * np.eye(len(S))
    if criterion == "D":
        sign, logdet = np.linalg.slogdet(G)
        return logdet if sign > 0 else -np.inf
    return float(np.trace(np.linalg.inv(G)))


def _design_better(new, old, criterion):
    tol = 1e-10 * max(1.0, abs(old))
    return new > old + tol if criterion == "D" else new < old - tol


def _design_add_scores(K, S, C, lam, criterion):
    """Criterion change for adding each dataset to S (vectorised over candidates).

    D: log s_j (to maximise); A: (1 + ||C b_j||^2) / s_j - 1/lam (to minimise),
    with b_j = K[S, j] and s_j the Schur complement lam + K_jj - b_j^T C b_j.
    """
    diag = np.diag(K)
    if len(S) == 0:
        s = lam + diag
        q = np.zeros_like(s)
    else:
        B = K[S, :]
        CB = C @ B
        s = lam + diag - np.einsum("ij,ij->j", B, CB)
        q = np.einsum("ij,ij->j", CB, CB)
    s = np.maximum(s, lam * 1e-12)
    if criterion == "D":
        return np.log(s)
    return (1.0 + q) / s - 1.0 / lam


def optimal_design_order(F: np.ndarray, k: int, lam: float, criterion: str, swaps: bool,
                         max_swap_passes: int) -> tuple:
    """Greedy A- or D-optimal design over the rows of ``F`` with a best-improvement swap pass.

    With ``F`` the standardised representation (rows = datasets) the Fisher
    information of a subset S is ``I(S) = F_S^T F_S + lam I`` (eq. 4).
    D-optimality (``criterion="D"``) maximises ``log det I(S)``; A-optimality
    (``"A"``) minimises ``tr I(S)^{-1}``. Both are evaluated through the k x k
    Gram matrix ``G = lam I + F_S F_S^T`` (Sylvester's determinant identity and
    the shared non-zero spectrum): ``log det I(S) = log det G + (p - k) log lam``
    and ``tr I(S)^{-1} = tr G^{-1} + (p - k) / lam``; the constants do not depend
    on which k datasets are chosen, so any number of features p is cheap.

    Greedy step: add the dataset with the largest gain (rank-one Schur
    complement update, all candidates at once). Swap pass (``swaps``, for
    ``0 < k < n``): try every (in, out) exchange, take the best one if it
    improves the criterion by more than a relative 1e-10, repeat until none
    does or ``max_swap_passes``.

    Returns
    -------
    (order, value, n_swaps)
        The greedy order with swapped-in datasets in the place of the ones they replaced, the final
        ``log det G`` (D) or ``tr G^{-1}`` (A), and the number of swaps accepted.

    References
    ----------
    Gusev & Zaytsev (2026), §4 "A-/D-optimality", eq. (4).
    """
    lam_given, lam = lam, float(lam)
    if not np.isfinite(lam) or lam <= 0:
        raise MethodError(f"lam must be a positive number, got {lam_given!r}")
    n = F.shape[0]
    K = F @ F.T
    sign = 1.0 if criterion == "D" else -1.0  # larger sign*gain is better
    S: list = []
    C = np.zeros((0, 0))
    available = np.ones(n, dtype=bool)
    for _ in range(k):
        gain = sign * _design_add_scores(K, S, C, lam, criterion)
        gain[~available] = -np.inf
        j = int(np.argmax(gain))
        if S:
            b = K[S, j]
            Cb = C @ b
            s = max(lam + K[j, j] - b @ Cb, lam * 1e-12)
            C = np.block([[C + np.outer(Cb, Cb) / s, -Cb[:, None] / s], [-Cb[None, :] / s, np.array([[1.0 / s]])]])
        else:
            C = np.array([[1.0 / (lam + K[j, j])]])
        S.append(j)
        available[j] = False
    value = _design_value(K, S, lam, criterion)
    n_swaps = 0
    if swaps and 0 < k < n:
        while n_swaps < int(max_swap_passes):
            best = (value, None, None)
            C = np.linalg.inv(K[np.ix_(S, S)] + lam * np.eye(k))
            for pos in range(k):
                keep = [i for i in range(k) if i != pos]
                # Inverse without S[pos]: downdate of the block inverse.
                Ck = C[np.ix_(keep, keep)] - np.outer(C[keep, pos], C[pos, keep]) / C[pos, pos]
                S_minus = [S[i] for i in keep]
                base = _design_value(K, S_minus, lam, criterion) if S_minus else 0.0
                delta = _design_add_scores(K, S_minus, Ck, lam, criterion)
                # D: log det G grows by log s_j; A: tr G^{-1} grows by (1 + q_j) / s_j.
                cand = base + delta if criterion == "D" else base + delta + 1.0 / lam
                cand[~available] = np.nan
                j = int(np.nanargmax(cand) if criterion == "D" else np.nanargmin(cand))
                if _design_better(cand[j], best[0], criterion):
                    best = (float(cand[j]), pos, j)
            if best[1] is None:
                break
            _, pos, j = best
            available[S[pos]] = True
            available[j] = False
            S[pos] = j
            value = _design_value(K, S, lam, criterion)  # from scratch: no drift across swaps
            n_swaps += 1
    return np.asarray(S, dtype=int), float(value), n_swaps
