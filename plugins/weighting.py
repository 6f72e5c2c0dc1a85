"""Built-in weighting schemes (Ailem et al. §3.3).

Each scheme is a :class:`~harness_ext.base.BaseWeighting`: ``fit(X)`` takes a ``models x columns`` matrix (columns
are datasets or prompts) and sets ``weights_``, a non-negative vector over the columns summing to 1. Every ``fit``
here also accepts an optional ``columns`` argument (the column names); only ``user`` needs it, and
:func:`harness_ext.methods.weighting.compute_weights` passes it automatically.

Registered names: ``uniform``, ``medoids``, ``distance``, ``inverse_distance``, ``random_simplex``; ``user`` is
:mod:`harness_ext.plugins.weighting_user`. The clustering and the weights are computed by
:mod:`harness_ext.methods.weighting`.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from harness_ext.base import BaseWeighting, check_matrix


class Uniform(BaseWeighting):
    """Every column weighs ``1 / n_columns`` (the usual average).

    References
    ----------
    Ailem et al. §3.3 (the i.i.d. assumption being relaxed).
    """

    def fit(self, X, columns: Optional[Sequence[str]] = None):
        X = check_matrix(X)
        self.weights_ = np.full(X.shape[1], 1.0 / X.shape[1])
        return self


class _ClusterScheme(BaseWeighting):
    """Shared fitting of the cluster-based schemes (spherical k-means, k by silhouette).

    Parameters
    ----------
    n_clusters : int or None
        Fix the number of clusters; None chooses it by cosine silhouette.
    max_clusters : int
        Largest number of clusters tried when choosing.
    random_state : int
        Seed of k-means.
    n_init : int
        k-means restarts.

    Attributes
    ----------
    weights_ : ndarray
    labels_, medoids_, distances_ : ndarray
        Cluster of each column, medoid column of each cluster, cosine distance of each column to its medoid.
    n_clusters_ : int
    silhouette_ : float
    """

    def __init__(self, n_clusters: Optional[int] = None, max_clusters: int = 20, random_state: int = 0, n_init: int = 10):
        self.n_clusters = n_clusters
        self.max_clusters = max_clusters
        self.random_state = random_state
        self.n_init = n_init

    def _cluster(self, X):
        from harness_ext.methods.weighting import cluster_columns  # pandas and scipy.stats: only when a scheme is fitted

        X = check_matrix(X, min_cols=1)
        cl = cluster_columns(
            X, n_clusters=self.n_clusters, max_clusters=self.max_clusters, random_state=self.random_state, n_init=self.n_init
        )
        self.labels_ = cl.labels
        self.medoids_ = cl.medoids
        self.distances_ = cl.distances
        self.n_clusters_ = cl.n_clusters
        self.silhouette_ = cl.silhouette
        return cl


class Medoids(_ClusterScheme):
    """Only the cluster representatives (medoids) count, equally: ``1 / n_clusters`` each.

    The paper's variant 1 ("only include prompts that are cluster representatives"), i.e. the plain average over the
    medoids; cluster sizes are not used.

    References
    ----------
    Ailem et al. §3.3 "Cluster-based", item 1; §5.2.1.
    """

    def fit(self, X, columns: Optional[Sequence[str]] = None):
        from harness_ext.methods.weighting.clustering import medoid_weights

        cl = self._cluster(X)
        self.weights_ = medoid_weights(len(cl.labels), cl.medoids)
        return self


class DistanceWeights(_ClusterScheme):
    """Distance-based weights: farther from the cluster's medoid weighs more.

    ``w_i = d(i, r_j) / sum_{k in C_j} d(k, r_j) * |C_j| / n`` with cosine distance; see
    :func:`harness_ext.methods.weighting.cluster_weights` for the degenerate cases (the medoid itself gets 0).

    References
    ----------
    Ailem et al. §3.3 "Cluster-based", item 2(i).
    """

    def fit(self, X, columns: Optional[Sequence[str]] = None):
        from harness_ext.methods.weighting import cluster_weights

        cl = self._cluster(X)
        self.weights_ = cluster_weights(cl.labels, cl.distances, "distance")
        return self


class InverseDistanceWeights(_ClusterScheme):
    """Inverse-distance weights: closer to the cluster's medoid weighs more.

    ``w_i = d(i, r_j)^-1 / sum_{k in C_j} d(k, r_j)^-1 * |C_j| / n``; the medoid's zero distance is raised to the
    smallest positive distance in its cluster (see :func:`harness_ext.methods.weighting.cluster_weights`).

    References
    ----------
    Ailem et al. §3.3 "Cluster-based", item 2(ii).
    """

    def fit(self, X, columns: Optional[Sequence[str]] = None):
        from harness_ext.methods.weighting import cluster_weights

        cl = self._cluster(X)
        self.weights_ = cluster_weights(cl.labels, cl.distances, "inverse")
        return self


class RandomSimplex(BaseWeighting):
    """One weight vector drawn uniformly from the simplex (Dirichlet(1, ..., 1)).

    Parameters
    ----------
    random_state : int
        The draw is a function of this seed and the number of columns only.

    References
    ----------
    Ailem et al. §3.3 "Random distributions of weights" (Smith and Tromble 2004).
    """

    def __init__(self, random_state: int = 0):
        self.random_state = random_state

    def fit(self, X, columns: Optional[Sequence[str]] = None):
        from harness_ext.methods.weighting import sample_simplex

        X = check_matrix(X)
        self.weights_ = sample_simplex(1, X.shape[1], np.random.default_rng(self.random_state))[0]
        return self
