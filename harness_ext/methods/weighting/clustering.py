"""Spherical k-means of column performance vectors, k chosen by cosine silhouette, and the cluster-based weights (Ailem et al. §3.2-3.3, §5.1)."""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ...base import check_matrix
from ...errors import MethodError
from ...report import Result
from .common import ZERO_DISTANCE, ZERO_NORM, _require_complete, unit_columns


@dataclass
class ColumnClustering(Result):
    """Result of :func:`cluster_columns`.

    Attributes
    ----------
    labels : ndarray of int, (n_columns,)
        Cluster of each column, 0..n_clusters-1.
    medoids : ndarray of int, (n_clusters,)
        Column index of each cluster's medoid (its representative).
    distances : ndarray, (n_columns,)
        Cosine distance of each column to its cluster's medoid.
    n_clusters : int
    silhouette : float
        Mean cosine silhouette of the chosen clustering over non-zero columns
        (NaN when fewer than 2 clusters could be formed).
    silhouette_by_k : dict
        Silhouette of every number of clusters tried.
    zero_columns : ndarray of bool
        Columns with an all-zero performance vector (their own cluster).
    """
    command = "weights"

    labels: np.ndarray
    medoids: np.ndarray
    distances: np.ndarray
    n_clusters: int
    silhouette: float
    silhouette_by_k: dict = field(default_factory=dict)
    zero_columns: np.ndarray = None

    title = "spherical k-means of the column performance vectors"

    def tables(self) -> dict:
        import pandas as pd

        medoid = np.zeros(len(self.labels), dtype=bool)
        medoid[self.medoids] = True
        return {"columns": pd.DataFrame({"cluster": self.labels, "distance_to_medoid": self.distances, "medoid": medoid},
                                        index=pd.RangeIndex(len(self.labels), name="column"))}

    def summary(self) -> dict:
        return {"n_clusters": int(self.n_clusters), "silhouette": float(self.silhouette)}


def _medoids_and_distances(V: np.ndarray, labels: np.ndarray, n_clusters: int):
    """Medoid (minimum summed cosine distance to its cluster) and distance to it, per cluster."""
    medoids = np.empty(n_clusters, dtype=int)
    dist = np.zeros(len(labels))
    for c in range(n_clusters):
        idx = np.flatnonzero(labels == c)
        Vc = V[idx]
        if not Vc.any():
            # All-zero cluster: every member is the same vector, distance 0.
            medoids[c] = idx[0]
            continue
        D = np.clip(1.0 - Vc @ Vc.T, 0.0, 2.0)
        D[D <= ZERO_DISTANCE] = 0.0
        best = int(np.argmin(D.sum(axis=1)))  # first index on ties
        medoids[c] = idx[best]
        dist[idx] = D[best]
    return medoids, dist


def cluster_columns(
    X,
    n_clusters: Optional[int] = None,
    max_clusters: int = 20,
    random_state: int = 0,
    n_init: int = 10,
) -> ColumnClustering:
    """Cluster the column performance vectors with spherical k-means.

    Spherical k-means (:func:`spherical_kmeans`) on the L2-normalised column
    vectors; the number of clusters maximises the mean silhouette computed with
    cosine distance.

    Parameters
    ----------
    X : array-like, (n_models, n_columns)
        Complete performance matrix (NaN raises :class:`MethodError`).
    n_clusters : int, optional
        Fix the number of clusters of non-zero columns instead of choosing it.
    max_clusters : int
        Largest number of clusters tried when choosing (from 2 up to
        ``min(max_clusters, n_distinct - 1)``; silhouette needs at most n-1).
    random_state : int
        Seed of k-means initialisation.
    n_init : int
        k-means restarts.

    Returns
    -------
    ColumnClustering

    Notes
    -----
    Choices where the paper is silent:

    * columns whose vector is all zeros (every model failed the prompt) have no
      direction; they form one extra cluster of their own and are left out of the
      silhouette;
    * when fewer than 3 distinct non-zero vectors exist, all non-zero columns form
      one cluster and the silhouette is NaN;
    * ties in silhouette go to the smaller number of clusters; ties for medoid to
      the lower column index.

    References
    ----------
    Ailem et al. §3.2 (clustering performance vectors) and §5.1 (spherical k-means,
    number of clusters maximising the cosine silhouette; Dhillon and Modha 2001).
    """
    X = check_matrix(X, allow_nan=True)
    _require_complete(X, "clustering columns")
    # The three cluster schemes and the silhouette test cluster the same matrix
    # with the same parameters; fitting once saves most of a CLI run's time.
    key = (hashlib.sha1(np.ascontiguousarray(X).tobytes()).hexdigest(), X.shape, n_clusters, int(max_clusters), random_state, n_init)
    if key in _CLUSTER_CACHE:
        return copy.deepcopy(_CLUSTER_CACHE[key])
    result = _cluster_columns(X, n_clusters, max_clusters, random_state, n_init)
    if len(_CLUSTER_CACHE) >= 8:
        _CLUSTER_CACHE.pop(next(iter(_CLUSTER_CACHE)))
    _CLUSTER_CACHE[key] = copy.deepcopy(result)
    return result


_CLUSTER_CACHE: dict = {}


def spherical_kmeans(V, n_clusters: int, random_state: int = 0, n_init: int = 10, max_iter: int = 300):
    """Spherical k-means of unit vectors (Dhillon and Modha 2001).

    Maximises the summed cosine similarity of every vector to its cluster's
    concept vector (the normalised sum of the cluster's members): assignments
    use the cosine to unit-length centroids, which plain k-means on normalised
    data does not (its centroids shrink inside the sphere and their norms bias
    the assignment).

    Parameters
    ----------
    V : ndarray, (n, m)
        Rows of unit L2 norm (no zero rows).
    n_clusters : int
    random_state : int
        Seed of the k-means++ style initialisation (cosine distance).
    n_init : int
        Restarts; the one with the largest objective is kept (first on ties).
    max_iter : int
        Iterations per restart; each stops earlier when no assignment changes.

    Returns
    -------
    labels : ndarray of int, (n,)
    centroids : ndarray, (n_clusters, m)
        Unit concept vectors.
    objective : float
        Sum over vectors of the cosine to their concept vector.

    References
    ----------
    Ailem et al. §5.1 (spherical k-means); Dhillon and Modha (2001), "Concept
    decompositions for large sparse text data using clustering", §3.
    """
    V = np.asarray(V, dtype=float)
    n = len(V)
    k = int(n_clusters)
    if not 1 <= k <= n:
        raise MethodError(f"spherical k-means needs 1 <= n_clusters <= {n}, got {k}")
    rng = np.random.default_rng(random_state)
    m = V.shape[1]
    cols = np.arange(m)
    best = (None, None, -np.inf)
    for _ in range(max(1, int(n_init))):
        # k-means++ seeding with cosine distance: spreads the initial concepts
        C = np.empty((k, V.shape[1]))
        C[0] = V[rng.integers(n)]
        dmin = np.clip(1.0 - V @ C[0], 0.0, None)
        for j in range(1, k):
            p = dmin ** 2
            idx = rng.choice(n, p=p / p.sum()) if p.sum() > 0 else rng.integers(n)
            C[j] = V[idx]
            np.minimum(dmin, np.clip(1.0 - V @ C[j], 0.0, None), out=dmin)
        labels = np.full(n, -1)
        for _ in range(int(max_iter)):
            sim = V @ C.T
            new = np.argmax(sim, axis=1)
            # an empty cluster takes the vector farthest from its own concept
            counts = np.bincount(new, minlength=k)
            for j in np.flatnonzero(counts == 0):
                own = sim[np.arange(n), new]
                far = int(np.argmin(np.where(counts[new] > 1, own, np.inf)))
                new[far] = j
                counts = np.bincount(new, minlength=k)
            if np.array_equal(new, labels):
                break
            labels = new
            # Each cluster's sum in one bincount over (cluster, column) cells: the same sums, in the same order,
            # as np.add.at, four times faster.
            S = np.bincount((labels[:, None] * m + cols).ravel(), weights=V.ravel(), minlength=k * m).reshape(k, m)
            C = S / np.maximum(np.linalg.norm(S, axis=1, keepdims=True), ZERO_NORM)
        obj = float((V * C[labels]).sum())
        if obj > best[2] + 1e-12 * n:
            best = (labels.copy(), C.copy(), obj)
    return best


def _cluster_columns(X, n_clusters, max_clusters, random_state, n_init) -> ColumnClustering:
    from sklearn.metrics import silhouette_score

    V, zero = unit_columns(X)
    nz = np.flatnonzero(~zero)
    Vnz = V[nz]
    n_distinct = len(np.unique(np.round(Vnz, 12), axis=0)) if len(nz) else 0

    if n_clusters is not None:
        n_clusters = int(n_clusters)
        if n_clusters < 1:
            raise MethodError(f"n_clusters must be >= 1, got {n_clusters}")
        if n_clusters > max(n_distinct, 1):
            raise MethodError(f"n_clusters={n_clusters} but only {n_distinct} distinct non-zero column vectors")
        candidates = [n_clusters]
    else:
        candidates = list(range(2, min(int(max_clusters), n_distinct - 1) + 1))

    best_s, best_labels = float("nan"), np.zeros(len(nz), dtype=int)
    by_k: dict = {}
    for k in candidates:
        if k == 1:
            continue
        labels = spherical_kmeans(Vnz, k, random_state=random_state, n_init=n_init)[0]
        n_used = len(np.unique(labels))
        if n_used < 2 or n_used >= len(nz):
            continue
        s = float(silhouette_score(Vnz, labels, metric="cosine"))
        by_k[k] = s
        if not (s <= best_s):  # first finite value, or strictly better
            best_s, best_labels = s, labels
    if n_clusters is not None and n_clusters > 1 and not by_k:
        raise MethodError(f"could not form {n_clusters} clusters of {len(nz)} columns")

    # Relabel compactly (k-means may leave a cluster empty), zero columns last.
    labels = np.empty(X.shape[1], dtype=int)
    if len(nz):
        _, compact = np.unique(best_labels, return_inverse=True)
        labels[nz] = compact
        k_nz = int(compact.max()) + 1
    else:
        k_nz = 0
    if zero.any():
        labels[zero] = k_nz
    n_total = k_nz + int(zero.any())
    medoids, dist = _medoids_and_distances(V, labels, n_total)
    return ColumnClustering(
        labels=labels,
        medoids=medoids,
        distances=dist,
        n_clusters=n_total,
        silhouette=best_s,
        silhouette_by_k=by_k,
        zero_columns=zero,
    )


def medoid_weights(n: int, medoids) -> np.ndarray:
    """``1 / n_clusters`` on each cluster's medoid, 0 elsewhere (the plain average over the medoids).

    References
    ----------
    Ailem et al. §3.3 "Cluster-based", item 1.
    """
    w = np.zeros(n)
    w[medoids] = 1.0 / len(medoids)
    return w


def cluster_weights(labels, distances, kind: str) -> np.ndarray:
    """Distance-based or inverse-distance weights within clusters.

    For column ``i`` in cluster ``C_j`` with representative ``r_j`` and cosine
    distance ``d``:

    * ``distance``: ``w_i = d(i, r_j) / sum_{k in C_j} d(k, r_j) * |C_j| / n``
    * ``inverse``:  ``w_i = d(i, r_j)^-1 / sum_{k in C_j} d(k, r_j)^-1 * |C_j| / n``

    Parameters
    ----------
    labels : array of int, (n,)
    distances : array, (n,)
        Distance of each column to its cluster's medoid (0 for the medoid).
    kind : {"distance", "inverse"}

    Returns
    -------
    ndarray, (n,)
        Non-negative weights summing to 1; each cluster carries ``|C_j| / n``.

    Notes
    -----
    The formulas are undefined in two cases, resolved as follows:

    * ``inverse``: the medoid (and any exact duplicate of it) has distance 0, so
      ``d^-1`` is infinite and the formula would put the whole cluster's mass on
      it, contradicting the paper's intent that "all data points contribute".
      Zero distances are raised to the smallest positive distance in the
      cluster, so the medoid weighs as much as its nearest distinct member.
    * a cluster whose members are all at distance 0 (a singleton, or identical
      vectors): its mass ``|C_j| / n`` is shared equally, for both kinds.

    With ``distance`` the medoid gets weight 0, exactly as the formula says.

    References
    ----------
    Ailem et al. §3.3, "Cluster-based", items 2(i) and 2(ii).
    """
    labels = np.asarray(labels, dtype=int)
    d = np.asarray(distances, dtype=float).copy()
    if labels.shape != d.shape or labels.ndim != 1:
        raise MethodError("labels and distances must be 1-D arrays of the same length")
    if kind not in ("distance", "inverse"):
        raise MethodError(f"kind must be 'distance' or 'inverse', got {kind!r}")
    if (d < 0).any() or not np.isfinite(d).all():
        raise MethodError("distances must be finite and non-negative")
    d[d <= ZERO_DISTANCE] = 0.0
    n = len(labels)
    w = np.zeros(n)
    for c in np.unique(labels):  # loop over clusters, not cells
        idx = np.flatnonzero(labels == c)
        dc = d[idx]
        pos = dc > 0
        if not pos.any():
            num = np.ones(len(idx))
        elif kind == "distance":
            num = dc
        else:
            num = 1.0 / np.maximum(dc, dc[pos].min())
        w[idx] = num / num.sum() * (len(idx) / n)
    return w / w.sum()
