"""Dataset-selection strategies of Gusev & Zaytsev (KDD 2026, §4).

The Random baseline (a fresh uniform k-subset per k), k-means
representatives, greedy farthest-first (cosine and Euclidean) and greedy
A-/D-optimal design with a swap pass. All of them work on a
*representation* of the datasets:

* a-priori features when the caller supplies them (``fit(X, features=F)`` with
  ``F`` of shape ``(n_datasets, n_features)``, e.g. from ``--features CSV``);
* otherwise the performance columns of ``X``: dataset j is represented by the
  vector of the (training) models' scores on it, ``X[:, j]``. These are
  a-posteriori, "oracle-style" representations in the paper's terms (§6.1).

As in the paper, feature columns are standardised over the pool before
selection (``standardize=True``; constant columns become 0). Missing entries of
the representation are set to the column mean (0 after standardising).

Nested vs fixed-size selectors
------------------------------
Farthest-first is nested: its size-k subset is the first k of one ordering, so
the protocol fits it once. k-means and the swap pass of A-/D-optimality solve a
fixed size ``n_select``: their ``order_`` is the size-``n_select`` subset and
``subset(j)`` for ``j < n_select`` is *not* their size-j solution. The class
attribute ``nested`` tells :mod:`harness_ext.methods.compare` which kind it has.

References
----------
Gusev & Zaytsev, "Benchmarking on Tasks That Matter: Dataset Selection for
Preserving Model Rankings", KDD 2026, §4 (Algorithms 1-2, eq. 4) and §4.1.
"""

from __future__ import annotations

import warnings
from typing import Optional

import numpy as np

from harness_ext.base import BaseSelector, check_matrix, limit_threads
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


def _check_n_select(n_select, n: int) -> int:
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


class FarthestFirst(BaseSelector):
    """Greedy farthest-first traversal (Gonzalez 1985) in representation space.

    Parameters
    ----------
    metric : {"euclidean", "cosine"}
        Distance between dataset representations; cosine distance is
        ``1 - cos`` (monotone in the paper's ``d_k = 2 (1 - k)``, eq. 5, so the
        greedy choices are identical). A zero vector is at cosine distance 1
        from everything.
    start : {"auto", "centroid", "mean-distance"}
        First dataset. "centroid": the one farthest from the mean vector
        (Algorithm 2, line 2). "mean-distance": the one with the largest mean
        distance to all datasets (§4.1). "auto" uses "centroid" for Euclidean
        and "mean-distance" for cosine, because after standardising the
        centroid is the origin, where cosine distance is undefined.
    standardize : bool
        z-score features over the pool first (§4).
    n_select : int or None
        Number of datasets to order; None orders all.

    Attributes
    ----------
    order_ : numpy.ndarray of int
        Selection order; ``order_[:k]`` is the size-k farthest-first subset.
    min_dist_ : numpy.ndarray
        Covering radius after each step: the largest distance from an
        unselected dataset to the selected set (``r_t``, App. A.1).

    References
    ----------
    Gusev & Zaytsev (2026), §4 Algorithm 2 and §4.1 eq. (5)-(6). Ties go to the
    lowest column index.
    """

    nested = True

    def __init__(self, metric: str = "euclidean", start: str = "auto", standardize: bool = True, n_select=None):
        self.metric = metric
        self.start = start
        self.standardize = standardize
        self.n_select = n_select

    def fit(self, X, features=None):
        metric = str(self.metric).lower()
        if metric not in ("euclidean", "cosine"):
            raise MethodError(f"metric must be 'euclidean' or 'cosine', got {self.metric!r}")
        start = str(self.start).lower().replace("_", "-")
        if start not in ("auto", "centroid", "mean-distance"):
            raise MethodError(f"start must be 'auto', 'centroid' or 'mean-distance', got {self.start!r}")
        F = dataset_representation(X, features, self.standardize)
        n = F.shape[0]
        k = _check_n_select(self.n_select, n)
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
            score = self._mean_euclidean(F)
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
        self.order_ = order
        self.min_dist_ = radius
        return self

    @staticmethod
    def _mean_euclidean(F: np.ndarray, chunk: int = 512) -> np.ndarray:
        from scipy.spatial.distance import cdist

        out = np.empty(F.shape[0])
        for s in range(0, F.shape[0], chunk):
            out[s : s + chunk] = cdist(F[s : s + chunk], F).mean(axis=1)
        return out


class CosineFarthestFirst(FarthestFirst):
    """Farthest-first with cosine distance (C-FAFI in the paper); see :class:`FarthestFirst`."""

    def __init__(self, metric: str = "cosine", start: str = "auto", standardize: bool = True, n_select=None):
        super().__init__(metric=metric, start=start, standardize=standardize, n_select=n_select)


class KMeansRepresentatives(BaseSelector):
    """One dataset per k-means cluster: the member closest to the centroid.

    Parameters
    ----------
    n_select : int or None
        Number of clusters k. With None the selector orders all datasets by
        *first appearance* among the representatives of the k-means solutions for
        k = 1, 2, ..., n (so prefixes are a nested approximation for coverage
        curves; n k-means fits). :mod:`harness_ext.methods.compare` always fits with
        ``n_select=k``.
    standardize : bool
        z-score features first (Algorithm 1, line 1).
    n_init : int
        k-means restarts (scikit-learn ``KMeans``, k-means++ initialisation).
    random_state : int
        Seed for k-means.

    Attributes
    ----------
    order_ : numpy.ndarray of int
        The representatives, largest cluster first (ties: lower index).
    labels_ : numpy.ndarray of int
        Cluster of every dataset (for ``n_select`` set).

    Notes
    -----
    If the data have fewer distinct points than k, k-means leaves clusters
    empty; the missing picks are then filled farthest-first from the chosen
    representatives, so exactly k distinct datasets are returned.

    References
    ----------
    Gusev & Zaytsev (2026), §4 Algorithm 1.
    """

    nested = False

    def __init__(self, n_select=None, standardize: bool = True, n_init: int = 10, random_state: int = 0):
        self.n_select = n_select
        self.standardize = standardize
        self.n_init = n_init
        self.random_state = random_state

    def _solve(self, F: np.ndarray, k: int):
        from sklearn.cluster import KMeans
        from sklearn.exceptions import ConvergenceWarning

        n = F.shape[0]
        if k == n:
            return np.arange(n), np.arange(n)
        # A few hundred datasets: OpenMP start-up costs ~10x the work (1.3 s vs 0.1 s for
        # k = 2..20 on 89 x 40), and the protocol parallelises over trials instead.
        with warnings.catch_warnings(), limit_threads(user_api="openmp"):
            warnings.simplefilter("ignore", ConvergenceWarning)
            km = KMeans(n_clusters=k, n_init=self.n_init, random_state=self.random_state).fit(F)
        labels = km.labels_
        d2 = ((F - km.cluster_centers_[labels]) ** 2).sum(axis=1)
        sizes = np.bincount(labels, minlength=k)
        # lexsort: last key is primary -> by cluster, then distance, then index.
        idx = np.lexsort((np.arange(n), d2, labels))
        first_of_cluster = idx[np.r_[True, labels[idx][1:] != labels[idx][:-1]]]
        reps_labels = labels[first_of_cluster]
        reps = first_of_cluster[np.lexsort((first_of_cluster, -sizes[reps_labels]))]
        if len(reps) < k:
            reps = self._fill(F, reps, k)
        return reps, labels

    @staticmethod
    def _fill(F, reps, k):
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

    def fit(self, X, features=None):
        F = dataset_representation(X, features, self.standardize)
        n = F.shape[0]
        if self.n_select is not None:
            k = _check_n_select(self.n_select, n)
            self.order_, self.labels_ = self._solve(F, k)
            return self
        seen = np.zeros(n, dtype=bool)
        order = []
        for k in range(1, n + 1):
            reps, _ = self._solve(F, k)
            new = reps[~seen[reps]]
            order.extend(new.tolist())
            seen[new] = True
            if seen.all():
                break
        self.order_ = np.asarray(order, dtype=int)
        self.labels_ = None
        return self


class RandomSubset(BaseSelector):
    """The paper's Random baseline: a uniform k-subset, drawn afresh for every k.

    Parameters
    ----------
    n_select : int or None
        Subset size k; None draws a uniformly random order of all datasets.
    random_state : int
        Seed of the draw.

    Attributes
    ----------
    order_ : numpy.ndarray of int
        The ``n_select`` datasets drawn without replacement.

    Notes
    -----
    ``nested = False``, so :mod:`harness_ext.methods.compare` fits it once per k with its
    own seed and the sizes of one trial are independent draws, as in the paper
    ("from a dataset pool ... we select the subset S_k of size k uniformly at
    random"). Prefixes of one random order (the SimBA ``random`` selector) have
    the same per-k mean but correlate the sizes within a trial: on the TSC
    bake-off (T = 100) that triples the spread of the per-trial AUC (std of
    AUC(MAE) 6.3 vs 2.1, AUC(rho) 0.59 vs 0.20; the paper's Random has 1.73
    and 0.19) and weakens the paired tests against it.

    References
    ----------
    Gusev & Zaytsev (2026), §4 "Random sampling"; Table 1 (Random rows).
    """

    nested = False

    def __init__(self, n_select=None, random_state: int = 0):
        self.n_select = n_select
        self.random_state = random_state

    def fit(self, X, features=None):
        n = check_matrix(X, allow_nan=True).shape[1]
        k = _check_n_select(self.n_select, n)
        self.order_ = np.random.default_rng(self.random_state).choice(n, size=k, replace=False)
        return self


class _OptimalDesign(BaseSelector):
    """Greedy A-/D-optimal design over datasets, with a best-improvement swap pass.

    With ``F`` the standardised representation (rows = datasets) the Fisher
    information of a subset S is ``I(S) = F_S^T F_S + lam I`` (eq. 4).
    D-optimality maximises ``log det I(S)``; A-optimality minimises
    ``tr I(S)^{-1}``. Both are evaluated through the k x k Gram matrix
    ``G = lam I + F_S F_S^T`` (Sylvester's determinant identity and the shared
    non-zero spectrum): ``log det I(S) = log det G + (p - k) log lam`` and
    ``tr I(S)^{-1} = tr G^{-1} + (p - k) / lam``; the constants do not depend on
    which k datasets are chosen, so any number of features p is cheap.

    Greedy step: add the dataset with the largest gain (rank-one Schur
    complement update, all candidates at once). Swap pass (n_select set): try
    every (in, out) exchange, take the best one if it improves the criterion by
    more than a relative 1e-10, repeat until none does or ``max_swap_passes``.

    Parameters
    ----------
    n_select : int or None
        Subset size. None orders all datasets by the plain greedy order (no
        swaps: a swap is defined for a fixed size).
    lam : float
        Ridge ``lambda`` of eq. 4. The paper only says "small"; on standardised
        features each dataset contributes about p to ``tr I(S)``, and
        ``lam = 1`` keeps A-optimality out of the regime where every new
        direction is worth ~1/lam and candidates become numerically
        indistinguishable.
    swaps : bool
        Run the swap pass (the paper reports the swap variant).
    max_swap_passes : int
        Cap on accepted swaps.
    standardize : bool
        z-score features first (§4).

    Attributes
    ----------
    order_ : numpy.ndarray of int
        Greedy order, with swapped-in datasets taking the place of the ones they
        replaced.
    criterion_ : float
        Final ``log det G`` (D) or ``tr G^{-1}`` (A).
    n_swaps_ : int
        Swaps accepted.

    References
    ----------
    Gusev & Zaytsev (2026), §4 "A-/D-optimality", eq. (4).
    """

    nested = False
    criterion = "D"

    def __init__(self, n_select=None, lam: float = 1.0, swaps: bool = True, max_swap_passes: int = 100, standardize: bool = True):
        self.n_select = n_select
        self.lam = lam
        self.swaps = swaps
        self.max_swap_passes = max_swap_passes
        self.standardize = standardize

    # -- criterion on a set, from scratch -------------------------------------------------
    def _value(self, K, S, lam):
        G = K[np.ix_(S, S)] + lam * np.eye(len(S))
        if self.criterion == "D":
            sign, logdet = np.linalg.slogdet(G)
            return logdet if sign > 0 else -np.inf
        return float(np.trace(np.linalg.inv(G)))

    def _better(self, new, old):
        tol = 1e-10 * max(1.0, abs(old))
        return new > old + tol if self.criterion == "D" else new < old - tol

    # -- candidate scores for adding any j to a set with inverse C -------------------------
    def _add_scores(self, K, S, C, lam):
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
        if self.criterion == "D":
            return np.log(s)
        return (1.0 + q) / s - 1.0 / lam

    def fit(self, X, features=None):
        lam = float(self.lam)
        if not np.isfinite(lam) or lam <= 0:
            raise MethodError(f"lam must be a positive number, got {self.lam!r}")
        F = dataset_representation(X, features, self.standardize)
        n = F.shape[0]
        k = _check_n_select(self.n_select, n)
        K = F @ F.T
        sign = 1.0 if self.criterion == "D" else -1.0  # larger sign*gain is better
        S: list = []
        C = np.zeros((0, 0))
        available = np.ones(n, dtype=bool)
        for _ in range(k):
            gain = sign * self._add_scores(K, S, C, lam)
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
        value = self._value(K, S, lam)
        n_swaps = 0
        if self.swaps and self.n_select is not None and 0 < k < n:
            while n_swaps < int(self.max_swap_passes):
                best = (value, None, None)
                C = np.linalg.inv(K[np.ix_(S, S)] + lam * np.eye(k))
                for pos in range(k):
                    keep = [i for i in range(k) if i != pos]
                    # Inverse without S[pos]: downdate of the block inverse.
                    Ck = C[np.ix_(keep, keep)] - np.outer(C[keep, pos], C[pos, keep]) / C[pos, pos]
                    S_minus = [S[i] for i in keep]
                    base = self._value(K, S_minus, lam) if S_minus else 0.0
                    delta = self._add_scores(K, S_minus, Ck, lam)
                    # D: log det G grows by log s_j; A: tr G^{-1} grows by (1 + q_j) / s_j.
                    cand = base + delta if self.criterion == "D" else base + delta + 1.0 / lam
                    cand[~available] = np.nan
                    j = int(np.nanargmax(cand) if self.criterion == "D" else np.nanargmin(cand))
                    if self._better(cand[j], best[0]):
                        best = (float(cand[j]), pos, j)
                if best[1] is None:
                    break
                _, pos, j = best
                available[S[pos]] = True
                available[j] = False
                S[pos] = j
                value = self._value(K, S, lam)  # from scratch: no drift across swaps
                n_swaps += 1
        self.order_ = np.asarray(S, dtype=int)
        self.criterion_ = float(value)
        self.n_swaps_ = n_swaps
        return self


class AOptimal(_OptimalDesign):
    """Greedy A-optimal design (minimise tr I(S)^{-1}) with swaps; see :class:`_OptimalDesign`."""

    criterion = "A"


class DOptimal(_OptimalDesign):
    """Greedy D-optimal design (maximise log det I(S)) with swaps; see :class:`_OptimalDesign`."""

    criterion = "D"
