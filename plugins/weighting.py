"""Built-in weighting schemes (Ailem et al. §3.3).

Each scheme is a :class:`~harness_ext.base.BaseWeighting`: ``fit(X)`` takes a
``models x columns`` matrix (columns are datasets or prompts) and sets
``weights_``, a non-negative vector over the columns summing to 1. Every
``fit`` here also accepts an optional ``columns`` argument (the column names);
only ``user`` needs it, and :func:`harness_ext.methods.weighting.compute_weights` passes
it automatically.

Registered names: ``uniform``, ``medoids``, ``distance``, ``inverse_distance``,
``random_simplex``, ``user``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from harness_ext.base import BaseWeighting, check_matrix
from harness_ext.errors import MethodError, SideFileError


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
        Cluster of each column, medoid column of each cluster, cosine distance of
        each column to its medoid.
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

    The paper's variant 1 ("only include prompts that are cluster
    representatives"), i.e. the plain average over the medoids; cluster sizes
    are not used.

    References
    ----------
    Ailem et al. §3.3 "Cluster-based", item 1; §5.2.1.
    """

    def fit(self, X, columns: Optional[Sequence[str]] = None):
        cl = self._cluster(X)
        w = np.zeros(len(cl.labels))
        w[cl.medoids] = 1.0 / len(cl.medoids)
        self.weights_ = w
        return self


class DistanceWeights(_ClusterScheme):
    """Distance-based weights: farther from the cluster's medoid weighs more.

    ``w_i = d(i, r_j) / sum_{k in C_j} d(k, r_j) * |C_j| / n`` with cosine
    distance; see :func:`harness_ext.methods.weighting.cluster_weights` for the
    degenerate cases (the medoid itself gets 0).

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

    ``w_i = d(i, r_j)^-1 / sum_{k in C_j} d(k, r_j)^-1 * |C_j| / n``; the
    medoid's zero distance is raised to the smallest positive distance in its
    cluster (see :func:`harness_ext.methods.weighting.cluster_weights`).

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


def read_weight_file(path) -> tuple:
    """Read ``{column: weight}`` from JSON or CSV: ``(weights, source)``.

    JSON: an object ``{"col": w, ...}``, or ``{"weights": {...}}`` (what
    ``harness-ext weights --emit-weights`` writes). CSV: a header row, then
    one row per column with the name in the first field and the weight in the
    second. ``source`` is ``{"scheme", "params"}`` of a file written by
    ``--emit-weights`` (so a manifest can say which scheme made the weights),
    else None. Read through :mod:`harness_ext.safe_input`; every weight is a
    finite number >= 0.

    Raises
    ------
    SideFileError
        Naming the file and the reason.
    """
    from harness_ext.safe_input import finite_number, load_document, read_rows, suffix_format, wrong_shape

    path = Path(path)
    what = "weights file"
    source = None
    fmt = suffix_format(path, default="")
    if fmt == "json":
        doc = load_document(path, what, "json")
        if isinstance(doc, dict) and isinstance(doc.get("weights"), dict):
            if doc.get("scheme"):
                source = {"scheme": str(doc["scheme"]), "params": doc.get("params") or {}}
            doc = doc["weights"]
        if not isinstance(doc, dict):
            raise wrong_shape(path, what, "the top level", "a JSON object mapping column -> weight", doc)
        items = doc.items()
    elif fmt in ("csv", "tsv"):
        rows = [r for r in read_rows(path, what) if any(c.strip() for c in r)]
        if not rows or len(rows[0]) < 2:
            raise SideFileError(path, f"{what}: need a header row, then two columns (column name, weight)")
        short = next((i for i, r in enumerate(rows[1:], start=2) if len(r) < 2), None)
        if short is not None:
            raise SideFileError(path, f"{what}: row {short} needs a column name and a weight")
        items = [(r[0].strip(), r[1]) for r in rows[1:]]
    else:
        raise SideFileError(path, f"{what} must be .json or .csv")
    out = {}
    for k, v in items:
        if str(k) in out:
            raise SideFileError(path, f"{what}: column {k!r} listed twice")
        out[str(k)] = finite_number(v, path, what, f"the weight of {k!r}", low=0.0)
    return out, source
    return out, source


class UserWeights(BaseWeighting):
    """Weights given by the user in a file, renormalised to sum to 1.

    Parameters
    ----------
    path : str
        JSON ``{column: weight}`` (or the ``--emit-weights`` output) or a CSV
        with columns (name, weight); see :func:`read_weight_file`.
    columns : list of str, optional
        Column names of the matrix, in order. Can instead be given to ``fit``
        as ``fit(X, columns=...)`` (which wins), or taken from ``X.columns``
        when ``X`` is a DataFrame.

    Attributes
    ----------
    weights_ : ndarray
    ignored_ : list of str
        Names in the file that are not columns of the matrix (not used).
    source_ : dict or None
        ``{"scheme", "params"}`` when the file was written by ``harness-ext
        weights --emit-weights``, so a manifest can say which scheme made them.

    Notes
    -----
    Every column of the matrix must appear in the file (a forgotten column
    should not silently get weight 0; give it 0 explicitly). Entries for other
    columns are ignored and listed in ``ignored_``.
    """

    def __init__(self, path: Optional[str] = None, columns: Optional[Sequence[str]] = None):
        self.path = path
        self.columns = columns

    @staticmethod
    def _contract_params() -> dict:
        """Parameters for harness_ext.testing's plugin contract, which fits a 24 x 8 array with no column names."""
        import tempfile

        names = [f"c{j}" for j in range(8)]
        fd, path = tempfile.mkstemp(suffix=".json", prefix="harness-ext-user-weights-")
        with open(fd, "w") as fh:
            json.dump({n: float(j + 1) for j, n in enumerate(names)}, fh)
        return {"path": path, "columns": names}

    def fit(self, X, columns: Optional[Sequence[str]] = None):
        if columns is None:
            columns = self.columns
        if columns is None and hasattr(X, "columns"):
            columns = list(X.columns)
        X = check_matrix(X)
        if self.path is None:
            raise MethodError("the 'user' weighting needs path=<weights .json or .csv>")
        if columns is None:
            raise MethodError("the 'user' weighting needs the column names: fit(X, columns=...) or columns=[...]")
        columns = [str(c) for c in columns]
        if len(columns) != X.shape[1]:
            raise MethodError(f"{len(columns)} column names for a matrix with {X.shape[1]} columns")
        given, self.source_ = read_weight_file(self.path)
        missing = [c for c in columns if c not in given]
        if missing:
            raise MethodError(f"{self.path}: no weight for {len(missing)} column(s): {missing[:10]}")
        w = np.array([given[c] for c in columns])
        if w.sum() <= 0:
            raise MethodError(f"{self.path}: the weights of the matrix's columns sum to 0")
        self.weights_ = w / w.sum()
        self.ignored_ = sorted(set(given) - set(columns))
        return self
