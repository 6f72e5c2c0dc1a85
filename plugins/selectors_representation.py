"""Dataset-selection strategies of Gusev & Zaytsev (KDD 2026, §4): the Random baseline (a fresh uniform
k-subset per k), k-means representatives and greedy farthest-first (cosine and Euclidean), on a representation of
the datasets (:func:`harness_ext.methods.prowl.representation.dataset_representation`: a-priori features, or the
models' scores on each dataset), where the algorithms live.

Farthest-first is nested: its size-k subset is the first k of one ordering, so the protocol fits it once. k-means
(and the A-/D-optimal designs of :mod:`harness_ext.plugins.selectors_design`) solve a fixed size ``n_select``: their
``order_`` is the size-``n_select`` subset and ``subset(j)`` for ``j < n_select`` is *not* their size-j solution.
The class attribute ``nested`` tells :mod:`harness_ext.methods.compare` which kind it has.

References
----------
Gusev & Zaytsev, "Benchmarking on Tasks That Matter: Dataset Selection for Preserving Model Rankings", KDD 2026, §4
(Algorithms 1-2, eq. 4) and §4.1.
"""

from __future__ import annotations

import numpy as np

from harness_ext.base import BaseSelector, check_matrix
from harness_ext.methods.prowl.representation import (
    check_farthest_first,
    check_n_select,
    dataset_representation,
    farthest_first_order,
    kmeans_order,
    kmeans_representatives,
)


class FarthestFirst(BaseSelector):
    """Greedy farthest-first traversal (Gonzalez 1985) in representation space.

    Parameters
    ----------
    metric : {"euclidean", "cosine"}
        Distance between dataset representations; cosine distance is ``1 - cos`` (monotone in the paper's
        ``d_k = 2 (1 - k)``, eq. 5, so the greedy choices are identical). A zero vector is at cosine distance 1 from
        everything.
    start : {"auto", "centroid", "mean-distance"}
        First dataset. "centroid": the one farthest from the mean vector (Algorithm 2, line 2). "mean-distance": the
        one with the largest mean distance to all datasets (§4.1). "auto" uses "centroid" for Euclidean and
        "mean-distance" for cosine, because after standardising the centroid is the origin, where cosine distance is
        undefined.
    standardize : bool
        z-score features over the pool first (§4).
    n_select : int or None
        Number of datasets to order; None orders all.

    Attributes
    ----------
    order_ : numpy.ndarray of int
        Selection order; ``order_[:k]`` is the size-k farthest-first subset.
    min_dist_ : numpy.ndarray
        Covering radius after each step: the largest distance from an unselected dataset to the selected set
        (``r_t``, App. A.1).

    References
    ----------
    Gusev & Zaytsev (2026), §4 Algorithm 2 and §4.1 eq. (5)-(6). Ties go to the lowest column index.
    """

    nested = True

    def __init__(self, metric: str = "euclidean", start: str = "auto", standardize: bool = True, n_select=None):
        self.metric = metric
        self.start = start
        self.standardize = standardize
        self.n_select = n_select

    def fit(self, X, features=None):
        metric, start = check_farthest_first(self.metric, self.start)
        F = dataset_representation(X, features, self.standardize)
        k = check_n_select(self.n_select, F.shape[0])
        self.order_, self.min_dist_ = farthest_first_order(F, k, metric, start)
        return self


class CosineFarthestFirst(FarthestFirst):
    """Farthest-first with cosine distance (C-FAFI in the paper); see :class:`FarthestFirst`."""

    def __init__(self, metric: str = "cosine", start: str = "auto", standardize: bool = True, n_select=None):
        super().__init__(metric=metric, start=start, standardize=standardize, n_select=n_select)


class KMeansRepresentatives(BaseSelector):
    """One dataset per k-means cluster: the member closest to the centroid.

    Parameters
    ----------
    n_select : int or None
        Number of clusters k. With None the selector orders all datasets by *first appearance* among the
        representatives of the k-means solutions for k = 1, 2, ..., n (so prefixes are a nested approximation for
        coverage curves; n k-means fits). :mod:`harness_ext.methods.compare` always fits with ``n_select=k``.
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
    If the data have fewer distinct points than k, k-means leaves clusters empty; the missing picks are then filled
    farthest-first from the chosen representatives, so exactly k distinct datasets are returned.

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

    def fit(self, X, features=None):
        F = dataset_representation(X, features, self.standardize)
        if self.n_select is not None:
            k = check_n_select(self.n_select, F.shape[0])
            self.order_, self.labels_ = kmeans_representatives(F, k, self.n_init, self.random_state)
            return self
        self.order_ = kmeans_order(F, self.n_init, self.random_state)
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
    ``nested = False``, so :mod:`harness_ext.methods.compare` fits it once per k with its own seed and the sizes of
    one trial are independent draws, as in the paper ("from a dataset pool ... we select the subset S_k of size k
    uniformly at random"). Prefixes of one random order (the SimBA ``random`` selector) have the same per-k mean but
    correlate the sizes within a trial: on the TSC bake-off (T = 100) that triples the spread of the per-trial AUC
    (std of AUC(MAE) 6.3 vs 2.1, AUC(rho) 0.59 vs 0.20; the paper's Random has 1.73 and 0.19) and weakens the paired
    tests against it.

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
        k = check_n_select(self.n_select, n)
        self.order_ = np.random.default_rng(self.random_state).choice(n, size=k, replace=False)
        return self
