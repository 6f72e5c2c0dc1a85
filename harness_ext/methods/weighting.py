"""Weighting schemes and ranking-robustness analyses (``harness-ext weights``).

Everything here follows Ailem et al., "Examining the robustness of LLM evaluation
to the distributional assumptions of benchmarks" (paper 003 in ``../shared/seeds``):

* cluster-based weights (medoids only, distance-based, inverse-distance; 003 §3.3)
  on a spherical k-means clustering of the column performance vectors whose
  number of clusters maximises the cosine silhouette (003 §5.1);
* weights drawn uniformly from the probability simplex (003 §3.3, §5.2.3): each
  model's score range, the pairwise "row beats column" matrix (003 Fig. 4), the
  top-two swap rate and the largest score shift;
* "increasing benchmark size" curves, most informative vs random (003 §3.3, §5.2.2);
* permutation tests that column performance vectors are more similar than chance
  (mean, 75th, 95th percentile, KS test; 003 §3.2, Table 2) and the silhouette of
  observed vs permuted data (003 Table 3).

Orientation. A matrix here is ``models x columns`` (the store's orientation), where
columns are datasets or prompts. The paper's ``Q`` is ``prompts x models``, i.e.
our ``X.T``: a "performance vector" of a column is ``X[:, j]``, the scores of all
models on that column.

The weighting plugins themselves live in :mod:`harness_ext.plugins.weighting` and
use the numerics defined here.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..base import check_matrix
from ..errors import HarnessExtError, MethodError

#: Columns whose performance vector has an L2 norm at or below this are "zero"
#: vectors (every model scored 0), for which the cosine is undefined.
ZERO_NORM = 1e-12
#: Cosine distances at or below this are treated as exactly 0 (duplicates after
#: rounding error), so a medoid's own distance is exactly 0.
ZERO_DISTANCE = 1e-12
#: Default bound on the floats a single chunk of random draws may hold
#: (draws x max(columns, models)); 4e6 doubles is 32 MB per array.
CHUNK_FLOATS = 4_000_000
SCHEME_NAMES_DEFAULT = ("uniform", "medoids", "distance", "inverse_distance")
SIMILARITY_MEASURES = ("cosine", "jaccard", "hamming")
BINARY_MEASURES = ("jaccard", "hamming")


# ---------------------------------------------------------------------------
# Small shared helpers
# ---------------------------------------------------------------------------


def is_binary(X) -> bool:
    """True if every non-missing value of ``X`` is exactly 0 or 1."""
    X = np.asarray(X, dtype=float)
    vals = X[~np.isnan(X)]
    return vals.size > 0 and bool(np.all((vals == 0) | (vals == 1)))


def _require_complete(X: np.ndarray, what: str) -> None:
    if np.isnan(X).any():
        raise MethodError(
            f"{what} needs a complete matrix but {int(np.isnan(X).sum())} cells are missing; "
            "select a dense matrix (--dense) or fewer models/datasets"
        )


def unit_columns(X) -> tuple[np.ndarray, np.ndarray]:
    """L2-normalised column performance vectors.

    Parameters
    ----------
    X : array-like, (n_models, n_columns)
        Complete performance matrix.

    Returns
    -------
    V : ndarray, (n_columns, n_models)
        Row ``j`` is ``X[:, j] / ||X[:, j]||``; zero vectors stay zero.
    zero : ndarray of bool, (n_columns,)
        Columns whose norm is at most :data:`ZERO_NORM` (cosine undefined).

    Notes
    -----
    With a zero row in ``V`` every cosine similarity against it is 0 (distance 1),
    which is the convention the "most informative" order uses. The clustering
    instead puts zero columns in a cluster of their own (see :func:`cluster_columns`).
    """
    X = check_matrix(X, allow_nan=False)
    V = X.T.copy()
    norms = np.linalg.norm(V, axis=1)
    zero = norms <= ZERO_NORM
    V[~zero] /= norms[~zero, None]
    V[zero] = 0.0
    return V, zero


# ---------------------------------------------------------------------------
# Sampling uniformly from the simplex
# ---------------------------------------------------------------------------


def sample_simplex(n: int, d: int, rng) -> np.ndarray:
    """Draw ``n`` weight vectors uniformly from the ``(d-1)``-simplex.

    Normalised i.i.d. standard exponentials are Dirichlet(1, ..., 1), the uniform
    distribution on the simplex; this is the same distribution as Smith and
    Tromble's sorted-uniform-spacings construction (see
    :func:`sample_simplex_spacings`) but needs no sort, so it vectorises.

    Parameters
    ----------
    n, d : int
        Number of draws and of columns.
    rng : numpy.random.Generator or int
        Random source; an int seeds a new generator.

    Returns
    -------
    ndarray, (n, d)
        Non-negative rows summing to 1. Drawing ``(a, d)`` then ``(b, d)`` from one
        generator gives the same rows as one ``(a + b, d)`` draw, so chunked use
        does not change results.

    References
    ----------
    003 §3.3 "Random distributions of weights" (Smith and Tromble 2004).
    """
    rng = np.random.default_rng(rng)
    if d < 1 or n < 0:
        raise MethodError(f"need d >= 1 and n >= 0 draws, got n={n}, d={d}")
    W = rng.standard_exponential((n, d))
    W /= W.sum(axis=1, keepdims=True)
    return W


def sample_simplex_spacings(d: int, rng) -> np.ndarray:
    """One uniform draw from the simplex by Smith and Tromble's method.

    Sort ``d - 1`` uniforms on (0, 1), add the end points 0 and 1 and take the
    ``d`` gaps. Used as the per-draw reference in tests and the benchmark.

    References
    ----------
    003 §3.3; Smith and Tromble (2004), "Sampling uniformly from the unit simplex".
    """
    rng = np.random.default_rng(rng)
    u = np.sort(rng.random(d - 1))
    return np.diff(np.concatenate(([0.0], u, [1.0])))


# ---------------------------------------------------------------------------
# Clustering: spherical k-means with k chosen by silhouette
# ---------------------------------------------------------------------------


@dataclass
class ColumnClustering:
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

    labels: np.ndarray
    medoids: np.ndarray
    distances: np.ndarray
    n_clusters: int
    silhouette: float
    silhouette_by_k: dict = field(default_factory=dict)
    zero_columns: np.ndarray = None


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
    003 §3.2 (clustering performance vectors) and §5.1 (spherical k-means,
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
    003 §5.1 (spherical k-means); Dhillon and Modha (2001), "Concept
    decompositions for large sparse text data using clustering", §3.
    """
    V = np.asarray(V, dtype=float)
    n = len(V)
    k = int(n_clusters)
    if not 1 <= k <= n:
        raise MethodError(f"spherical k-means needs 1 <= n_clusters <= {n}, got {k}")
    rng = np.random.default_rng(random_state)
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
            S = np.zeros_like(C)
            np.add.at(S, labels, V)
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

    best_k, best_s, best_labels = 1, float("nan"), np.zeros(len(nz), dtype=int)
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
            best_k, best_s, best_labels = k, s, labels
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
    003 §3.3, "Cluster-based", items 2(i) and 2(ii).
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


# ---------------------------------------------------------------------------
# Weights through the plugin registry
# ---------------------------------------------------------------------------


def _fit_accepts_columns(cls) -> bool:
    try:
        return "columns" in inspect.signature(cls.fit).parameters
    except (TypeError, ValueError):  # pragma: no cover - exotic callables
        return False


def make_scheme(scheme: str, random_state: int = 0, **params):
    """Instantiate a registered weighting scheme with ``random_state`` if it takes one."""
    from ..plugin_manager import get_registration

    reg = get_registration("weighting_schemes", scheme)
    cls = reg.cls
    try:
        accepted = set(inspect.signature(cls.__init__).parameters)
    except (TypeError, ValueError):  # pragma: no cover
        accepted = set()
    if "random_state" in accepted and "random_state" not in params:
        params["random_state"] = random_state
    unknown = set(params) - accepted
    if unknown and "kwargs" not in accepted:
        raise MethodError(
            f"weighting scheme {reg.name!r} has no parameter(s) {sorted(unknown)}; "
            f"it takes {sorted(accepted - {'self'})}"
        )
    return reg, cls(**params)


def compute_weights(df: pd.DataFrame, scheme: str = "uniform", random_state: int = 0, **params) -> pd.Series:
    """Fit a registered weighting scheme on a matrix and return its weights.

    Parameters
    ----------
    df : pandas.DataFrame
        ``models x columns`` (datasets or prompts).
    scheme : str
        Registered scheme name (``harness-ext plugins`` lists them): ``uniform``,
        ``medoids``, ``distance``, ``inverse_distance``, ``random_simplex``, ``user``.
    random_state : int
        Passed to schemes that take a ``random_state`` (unless in ``params``).
    **params
        Scheme parameters, e.g. ``path=`` for ``user``, ``n_clusters=`` for the
        cluster schemes.

    Returns
    -------
    pandas.Series
        Weight per column (index = ``df.columns``), non-negative, summing to 1.
        ``series.attrs`` holds ``scheme`` (canonical name) and ``params`` (the
        estimator's ``get_params()``), which the manifest records as "the
        weighting used for the aggregate", and ``source`` when the scheme
        reports where its weights came from (``user`` weights written by
        ``--emit-weights``: that scheme and its parameters).

    References
    ----------
    003 §3.3.
    """
    if not isinstance(df, pd.DataFrame):
        raise MethodError("compute_weights needs a pandas DataFrame (models x columns)")
    reg, est = make_scheme(scheme, random_state=random_state, **params)
    if _fit_accepts_columns(type(est)):
        est.fit(df.to_numpy(dtype=float), columns=list(map(str, df.columns)))
    else:
        est.fit(df.to_numpy(dtype=float))
    w = np.asarray(est.weights_, dtype=float)
    if w.shape != (df.shape[1],) or (w < 0).any() or not np.isclose(w.sum(), 1.0):
        raise MethodError(f"weighting scheme {reg.name!r} produced invalid weights (shape {w.shape}, sum {w.sum():.6g})")
    s = pd.Series(w, index=df.columns, name="weight")
    s.attrs["scheme"] = reg.name
    s.attrs["params"] = _jsonable(est.get_params())
    if getattr(est, "source_", None):
        s.attrs["source"] = _jsonable(est.source_)
    return s


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, Path):
        return str(obj)
    return obj


def emit_weights(weights: pd.Series, path) -> Path:
    """Write ``{"scheme", "params", "weights": {column: weight}}`` as JSON."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "scheme": weights.attrs.get("scheme"),
        "params": weights.attrs.get("params", {}),
        "weights": {str(k): float(v) for k, v in weights.items()},
    }
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


# ---------------------------------------------------------------------------
# Weighted scores and rank changes per scheme (003 Fig. 2)
# ---------------------------------------------------------------------------


def weighted_scores(X, W) -> np.ndarray:
    """Weighted mean score of every model under one or many weight vectors.

    Parameters
    ----------
    X : array, (n_models, n_columns)
        May contain NaN: a model's weights are then renormalised over the
        columns it has (a model with no weight on observed columns gets NaN).
    W : array, (n_columns,) or (n_draws, n_columns)

    Returns
    -------
    ndarray, (n_models,) or (n_draws, n_models)
    """
    X = np.asarray(X, dtype=float)
    W = np.asarray(W, dtype=float)
    mask = np.isnan(X)
    if not mask.any():
        return W @ X.T
    X0 = np.where(mask, 0.0, X)
    num = W @ X0.T
    den = W @ (~mask).T.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def ranks_desc(scores) -> np.ndarray:
    """Rank 1 = best; ties share the best rank ("min"); NaN ranks last."""
    s = np.asarray(scores, dtype=float)
    filled = np.where(np.isnan(s), -np.inf, s)
    return stats.rankdata(-filled, method="min").astype(int)


@dataclass
class SchemeComparison:
    """Weighted scores and rank changes of every model under several schemes.

    ``scores`` and ``ranks`` are ``models x schemes``; ``rank_change`` is the
    uniform rank minus the scheme's rank (positive: the model moved up), as in
    003 Figure 2. ``weights`` is ``columns x schemes``.
    """

    scores: pd.DataFrame
    ranks: pd.DataFrame
    rank_change: pd.DataFrame
    weights: pd.DataFrame
    params: dict


def compare_schemes(
    df: pd.DataFrame, schemes: Sequence[str] = SCHEME_NAMES_DEFAULT, random_state: int = 0, scheme_params: Optional[dict] = None
) -> SchemeComparison:
    """Weighted score and rank change per model for each weighting scheme.

    Parameters
    ----------
    df : DataFrame, models x columns
    schemes : sequence of str
        Registered scheme names; ``uniform`` is always included (the baseline).
    random_state : int
    scheme_params : dict, optional
        ``{scheme: {param: value}}``.

    Returns
    -------
    SchemeComparison

    References
    ----------
    003 §3.3 and §5.2.1, Figure 2.
    """
    scheme_params = scheme_params or {}
    names = ["uniform"] + [s for s in schemes if s != "uniform"]
    weights, params = {}, {}
    for name in names:
        w = compute_weights(df, name, random_state=random_state, **scheme_params.get(name, {}))
        weights[w.attrs["scheme"]] = w
        params[w.attrs["scheme"]] = w.attrs["params"]
    Wdf = pd.DataFrame(weights)
    X = df.to_numpy(dtype=float)
    S = weighted_scores(X, Wdf.to_numpy().T).T
    scores = pd.DataFrame(S, index=df.index, columns=Wdf.columns)
    ranks = scores.apply(lambda c: pd.Series(ranks_desc(c.to_numpy()), index=c.index))
    change = ranks.rsub(ranks["uniform"], axis=0)
    return SchemeComparison(scores=scores, ranks=ranks, rank_change=change, weights=Wdf, params=params)


# ---------------------------------------------------------------------------
# Random simplex weights (003 §5.2.3, Fig. 4 and 12)
# ---------------------------------------------------------------------------


@dataclass
class RandomWeightsResult:
    """What :func:`random_weight_analysis` measures over ``n_draws`` simplex draws.

    Attributes
    ----------
    models : list
    uniform : ndarray (n_models,)
        Score under uniform weights.
    score_min, score_max, score_mean, score_std : ndarray (n_models,)
        Range, mean and standard deviation of each model's weighted score over
        the draws. For uniform simplex weights the expected standard deviation
        is ``sqrt(var(x) / (d + 1))`` with ``var`` the population variance of
        the model's ``d`` column scores (see :func:`expected_score_std`).
    best_rank, worst_rank : ndarray (n_models,) or None
        Best and worst rank a model reached (1 = best), when ranks were tracked.
    pairwise : DataFrame
        Fraction of draws in which the row model scores strictly higher than the
        column model, over the ``pairwise_top`` best models under uniform weights
        (003 Figure 4).
    top_two : tuple
        (first, second) model under uniform weights.
    top_two_swap_rate : float
        Fraction of draws in which the second scores strictly higher than the first.
    largest_score_shift : float
        max over models and draws of ``|weighted - uniform| / uniform``
        (models with uniform score 0 are left out of this maximum).
    largest_score_shift_model : str
    largest_abs_score_shift : float
        max over models and draws of ``|weighted - uniform|`` (score units).
    largest_abs_score_shift_model : str
    largest_range : float
        max over models of ``max - min`` weighted score over the draws (score
        units): the spread of 003 Figure 12, which §5.2.3 reports as "the
        performance of a model can change up to 10%" (accuracy points).
    largest_range_model : str
    sample : ndarray (n_keep, n_models)
        The first draws' scores, kept for distribution plots.
    pairwise_exact : DataFrame or None
        For a complete 0/1 matrix, the exact probabilities that ``pairwise``
        estimates (:func:`binary_beat_probability`); None otherwise.
    """

    models: list
    n_draws: int
    uniform: np.ndarray
    score_min: np.ndarray
    score_max: np.ndarray
    score_mean: np.ndarray
    score_std: np.ndarray
    best_rank: Optional[np.ndarray]
    worst_rank: Optional[np.ndarray]
    pairwise: pd.DataFrame
    top_two: tuple
    top_two_swap_rate: float
    largest_score_shift: float
    largest_score_shift_model: str
    largest_abs_score_shift: float
    largest_abs_score_shift_model: str
    largest_range: float
    largest_range_model: str
    sample: np.ndarray
    pairwise_exact: Optional[pd.DataFrame] = None

    def table(self) -> pd.DataFrame:
        """Per-model summary, best uniform score first."""
        t = pd.DataFrame(
            {
                "uniform": self.uniform,
                "min": self.score_min,
                "max": self.score_max,
                "range": self.score_max - self.score_min,
                "std": self.score_std,
                "max_abs_shift": np.maximum(self.score_max - self.uniform, self.uniform - self.score_min),
                "max_rel_shift": self.max_rel_shift(),
            },
            index=pd.Index(self.models, name="model"),
        )
        if self.best_rank is not None:
            t["uniform_rank"] = ranks_desc(self.uniform)
            t["best_rank"] = self.best_rank
            t["worst_rank"] = self.worst_rank
        return t.sort_values("uniform", ascending=False, kind="stable")

    def max_rel_shift(self) -> np.ndarray:
        abs_shift = np.maximum(self.score_max - self.uniform, self.uniform - self.score_min)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.uniform > 0, abs_shift / np.where(self.uniform > 0, self.uniform, 1.0), np.nan)

    def summary(self) -> dict:
        """The named outputs, JSON-ready."""
        return {
            "n_draws": int(self.n_draws),
            "n_models": len(self.models),
            "top_two": list(self.top_two),
            "top_two_swap_rate": float(self.top_two_swap_rate),
            "largest_score_shift": float(self.largest_score_shift),
            "largest_score_shift_model": self.largest_score_shift_model,
            "largest_abs_score_shift": float(self.largest_abs_score_shift),
            "largest_abs_score_shift_model": self.largest_abs_score_shift_model,
            "largest_range": float(self.largest_range),
            "largest_range_model": self.largest_range_model,
            **({"top_two_swap_rate_exact": float(self.pairwise_exact.iloc[1, 0])} if self.pairwise_exact is not None else {}),
        }


def default_chunk_size(n_columns: int, n_models: int, pairwise_k: int = 0) -> int:
    """Draws per chunk so that one chunk holds about :data:`CHUNK_FLOATS` floats."""
    width = max(n_columns, n_models, pairwise_k * pairwise_k, 1)
    return int(max(1, min(100_000, CHUNK_FLOATS // width)))


def random_weight_analysis(
    df: pd.DataFrame,
    n_draws: int = 100_000,
    random_state: int = 0,
    chunk_size: Optional[int] = None,
    pairwise_top: int = 20,
    track_ranks: bool = True,
    keep: int = 2000,
    show_progress: bool = True,
) -> RandomWeightsResult:
    """Score ranges, pairwise win rates and top-two swaps under random simplex weights.

    Draws ``n_draws`` weight vectors uniformly from the simplex over the columns
    (:func:`sample_simplex`) in chunks of ``chunk_size`` draws, so memory stays
    bounded whatever ``n_draws`` is; results do not depend on ``chunk_size``.

    Parameters
    ----------
    df : DataFrame, models x columns
        NaN cells are allowed: each model's weights are renormalised over its
        observed columns (see :func:`weighted_scores`).
    n_draws : int
        100,000 as in the paper.
    random_state : int
    chunk_size : int, optional
        Default :func:`default_chunk_size`.
    pairwise_top : int
        The pairwise "row beats column" matrix is computed for this many best
        models under uniform weights (all models if there are fewer): it costs
        ``k^2`` per draw. The paper's matrices have 8-14 models.
    track_ranks : bool
        Also record every model's best and worst rank (a sort per draw).
    keep : int
        Number of first draws whose scores are kept for plots.

    Returns
    -------
    RandomWeightsResult

    Notes
    -----
    "Beats" is strictly greater. The largest relative score shift divides by the
    uniform score; on chance-normalised matrices models near chance have uniform
    scores near 0 and dominate it, so the absolute shift is reported too.

    References
    ----------
    003 §3.3 "Random distributions of weights", §5.2.3, Figures 4 and 12.
    """
    from ..report import progress

    if not isinstance(df, pd.DataFrame):
        df = pd.DataFrame(df)
    X = check_matrix(df.to_numpy(dtype=float), min_rows=2)
    m, d = X.shape
    if n_draws < 1:
        raise MethodError(f"n_draws must be >= 1, got {n_draws}")
    models = [str(x) for x in df.index]
    uniform = weighted_scores(X, np.full(d, 1.0 / d))
    if np.isnan(uniform).any():
        bad = [models[i] for i in np.flatnonzero(np.isnan(uniform))][:5]
        raise MethodError(f"models with no observed column: {bad}")
    order = np.argsort(-uniform, kind="stable")
    top = order[: min(int(pairwise_top), m)] if pairwise_top else order[:2]
    a, b = order[0], order[1]
    k = len(top)
    chunk = int(chunk_size) if chunk_size else default_chunk_size(d, m, k)

    rng = np.random.default_rng(random_state)
    smin = np.full(m, np.inf)
    smax = np.full(m, -np.inf)
    ssum = np.zeros(m)
    ssq = np.zeros(m)
    best = np.full(m, m + 1, dtype=np.int64) if track_ranks else None
    worst = np.zeros(m, dtype=np.int64) if track_ranks else None
    wins = np.zeros((k, k), dtype=np.int64)
    swaps = 0
    kept = []
    n_kept = 0
    starts = range(0, n_draws, chunk)
    for start in progress(starts, total=len(starts), desc="random weights", disable=None if show_progress else True):
        c = min(chunk, n_draws - start)
        W = sample_simplex(c, d, rng)
        S = weighted_scores(X, W)  # (c, m)
        np.minimum(smin, S.min(axis=0), out=smin)
        np.maximum(smax, S.max(axis=0), out=smax)
        ssum += S.sum(axis=0)
        ssq += np.square(S - uniform).sum(axis=0)  # centred on the uniform score: no cancellation
        if track_ranks:
            # rank r of the model at position j of argsort(-S): ties broken arbitrarily,
            # which only matters for duplicated model rows.
            pos = np.argsort(-S, axis=1)
            R = np.empty_like(pos)
            np.put_along_axis(R, pos, np.arange(1, m + 1)[None, :], axis=1)
            np.minimum(best, R.min(axis=0), out=best)
            np.maximum(worst, R.max(axis=0), out=worst)
        St = S[:, top]
        wins += (St[:, :, None] > St[:, None, :]).sum(axis=0)
        swaps += int((S[:, b] > S[:, a]).sum())
        if n_kept < keep:
            take = S[: keep - n_kept]
            kept.append(take.copy())
            n_kept += len(take)

    top_names = [models[i] for i in top]
    pairwise = pd.DataFrame(wins / n_draws, index=top_names, columns=top_names)
    abs_shift = np.maximum(smax - uniform, uniform - smin)
    i_abs = int(np.argmax(abs_shift))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(uniform > 0, abs_shift / np.where(uniform > 0, uniform, 1.0), -np.inf)
    i_rel = int(np.argmax(rel))
    mean = ssum / n_draws
    # variance about the mean from squares about the uniform score
    var = np.maximum(ssq / n_draws - np.square(mean - uniform), 0.0)
    rng_width = smax - smin
    i_range = int(np.argmax(rng_width))
    return RandomWeightsResult(
        models=models,
        n_draws=int(n_draws),
        uniform=uniform,
        score_min=smin,
        score_max=smax,
        score_mean=mean,
        score_std=np.sqrt(var),
        best_rank=best,
        worst_rank=worst,
        pairwise=pairwise,
        top_two=(models[a], models[b]),
        top_two_swap_rate=swaps / n_draws,
        largest_score_shift=float(rel[i_rel]) if np.isfinite(rel[i_rel]) else float("nan"),
        largest_score_shift_model=models[i_rel],
        largest_abs_score_shift=float(abs_shift[i_abs]),
        largest_abs_score_shift_model=models[i_abs],
        largest_range=float(rng_width[i_range]),
        largest_range_model=models[i_range],
        sample=np.concatenate(kept, axis=0) if kept else np.empty((0, m)),
        pairwise_exact=(pd.DataFrame(binary_beat_probability(X[top]), index=top_names, columns=top_names)
                        if not np.isnan(X).any() and is_binary(X) else None),
    )


def binary_beat_probability(X) -> np.ndarray:
    """Exact probability that row model ``i`` beats model ``j`` under uniform simplex weights, 0/1 data.

    Only the prompts where the two models differ matter: ``n_ij`` that ``i``
    got right and ``j`` wrong, ``n_ji`` the reverse. Their summed weights ``U``
    and ``V`` satisfy ``U / (U + V) ~ Beta(n_ij, n_ji)`` (aggregation property
    of Dirichlet(1, ..., 1)), so ``P(U > V) = I_{1/2}(n_ji, n_ij)``, the
    regularised incomplete beta function. For large counts this is about
    ``Phi((n_ij - n_ji) / sqrt(n_ij + n_ji))``: the swap rate of two models is
    a one-sided sign (McNemar) test of their difference, and it is near 1/2
    whenever the two are statistically tied, whatever the benchmark size.

    Parameters
    ----------
    X : array (n_models, n_prompts) of 0/1, complete

    Returns
    -------
    ndarray (n_models, n_models)
        ``P[i, j]``; 0 when ``n_ij = 0`` ("beats" is strict), 1 when only
        ``n_ji = 0``; zero diagonal.

    References
    ----------
    003 §3.3 "Random distributions of weights", §5.2.3, Figure 4 (the matrix
    it estimates by sampling).
    """
    from scipy.special import betainc

    X = check_matrix(X, allow_nan=False)
    if not is_binary(X):
        raise MethodError("exact beat probabilities need a 0/1 matrix")
    both = X @ X.T
    right = X.sum(axis=1)
    n_ij = np.rint(right[:, None] - both)  # i right, j wrong
    n_ji = n_ij.T
    P = np.zeros_like(n_ij)
    ok = (n_ij > 0) & (n_ji > 0)
    P[ok] = betainc(n_ji[ok], n_ij[ok], 0.5)
    P[(n_ij > 0) & (n_ji == 0)] = 1.0
    return P


def expected_score_std(X) -> np.ndarray:
    """Standard deviation of each model's weighted score under uniform simplex weights.

    For ``w ~ Dirichlet(1, ..., 1)`` over ``d`` columns, ``Cov(w) = (I/d -
    11^T/d^2) / (d + 1)``, so ``Var(w @ x) = var(x) / (d + 1)`` where ``var`` is
    the population variance of the model's column scores (``p(1-p)`` for 0/1
    prompts with accuracy ``p``). It shows why shifts shrink as ``1/sqrt(d)``:
    a 14-dataset benchmark moves about ``sqrt(1201/15) ~ 9`` times as much as
    a 1,200-prompt one with the same spread of scores.

    Parameters
    ----------
    X : array (n_models, n_columns), complete

    Returns
    -------
    ndarray (n_models,)

    References
    ----------
    003 §3.3, §5.2.3 (the score ranges this predicts).
    """
    X = check_matrix(X, allow_nan=False)
    return np.sqrt(X.var(axis=1) / (X.shape[1] + 1))


def random_weight_analysis_loop(df: pd.DataFrame, n_draws: int, random_state: int = 0, pairwise_top: int = 20) -> dict:
    """Per-draw Python reference of :func:`random_weight_analysis` (benchmarks and tests).

    One Smith-Tromble draw, one dot product and one set of comparisons per
    iteration; returns the same named outputs (min, max, pairwise, swap rate).
    Uses a different random stream, so it agrees only in distribution. Needs a
    complete matrix: it has no per-model renormalisation over observed columns.
    """
    X = np.asarray(df.to_numpy(dtype=float))
    _require_complete(X, "the per-draw reference")
    m, d = X.shape
    rng = np.random.default_rng(random_state)
    uniform = X.mean(axis=1)
    order = np.argsort(-uniform, kind="stable")
    top = order[: min(pairwise_top, m)]
    a, b = order[0], order[1]
    smin = np.full(m, np.inf)
    smax = np.full(m, -np.inf)
    wins = np.zeros((len(top), len(top)))
    swaps = 0
    for _ in range(n_draws):
        w = sample_simplex_spacings(d, rng)
        s = X @ w
        smin = np.minimum(smin, s)
        smax = np.maximum(smax, s)
        st = s[top]
        wins += st[:, None] > st[None, :]
        swaps += s[b] > s[a]
    return {"score_min": smin, "score_max": smax, "pairwise": wins / n_draws, "top_two_swap_rate": swaps / n_draws}


# ---------------------------------------------------------------------------
# Increasing benchmark size (003 §5.2.2, Fig. 3, 10, 11)
# ---------------------------------------------------------------------------


def most_informative_order(X, start: int) -> np.ndarray:
    """Greedy column order: next is the column with the largest mean cosine distance to those chosen.

    Parameters
    ----------
    X : array (n_models, n_columns), complete
    start : int
        First column (the paper starts from a random prompt).

    Returns
    -------
    ndarray of int, a permutation of the columns.

    Notes
    -----
    Distances are between column performance vectors (the paper's wording also
    fits prompt embeddings, which a result store does not have). All-zero
    vectors have cosine similarity 0 with everything (distance 1). Ties go to
    the lowest column index. Memory is O(n_columns x n_models): a running sum of
    distances is updated per step instead of building the distance matrix.

    References
    ----------
    003 §3.3 "Increasing benchmark size", §5.2.2.
    """
    V, _ = unit_columns(X)
    d = V.shape[0]
    if not 0 <= start < d:
        raise MethodError(f"start column {start} out of range 0..{d - 1}")
    chosen = np.zeros(d, dtype=bool)
    acc = np.zeros(d)
    order = np.empty(d, dtype=int)
    j = int(start)
    for step in range(d):
        order[step] = j
        chosen[j] = True
        if step == d - 1:
            break
        acc += 1.0 - V @ V[j]
        j = int(np.argmax(np.where(chosen, -np.inf, acc)))
    return order


def cumulative_scores(X, order) -> np.ndarray:
    """Mean score of each model on the first ``k`` columns of ``order``, for k = 1..d.

    Returns ``(n_models, n_columns)``; NaN cells are skipped (mean of observed).
    """
    X = np.asarray(X, dtype=float)[:, order]
    obs = ~np.isnan(X)
    num = np.cumsum(np.where(obs, X, 0.0), axis=1)
    den = np.cumsum(obs, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


@dataclass
class SizeCurves:
    """Curves of :func:`size_curves`: ``informative`` and ``random`` are models x sizes."""

    informative: pd.DataFrame
    random: pd.DataFrame
    informative_order: list
    random_order: list
    full: pd.Series
    summary: pd.DataFrame


def size_curves(df: pd.DataFrame, random_state: int = 0, n_random_orders: int = 20) -> SizeCurves:
    """Average performance as the benchmark grows, most informative vs random order.

    Both start from the same random column. The curves plotted are for one
    random order (as in 003 Fig. 11); the ``summary`` table (per size: mean
    absolute deviation of models' scores from the full-benchmark score and the
    Spearman correlation of the induced ranking with the full ranking) averages
    the random method over ``n_random_orders`` orders, each with its own start.

    References
    ----------
    003 §3.3 "Increasing benchmark size", §5.2.2, Figures 3, 10, 11.
    """
    X = check_matrix(df.to_numpy(dtype=float), min_rows=2)
    _require_complete(X, "the most-informative order")
    m, d = X.shape
    rng = np.random.default_rng(random_state)
    start = int(rng.integers(d))
    inf_order = most_informative_order(X, start)
    rand_orders = [np.concatenate(([start], rng.permutation(np.delete(np.arange(d), start))))]
    for _ in range(max(0, n_random_orders - 1)):
        rand_orders.append(rng.permutation(d))
    full = X.mean(axis=1)
    sizes = np.arange(1, d + 1)

    def deviation(C):
        mad = np.abs(C - full[:, None]).mean(axis=0)
        rho = np.array([_spearman(C[:, i], full) for i in range(d)])
        return mad, rho

    C_inf = cumulative_scores(X, inf_order)
    mad_i, rho_i = deviation(C_inf)
    curves_r = [cumulative_scores(X, o) for o in rand_orders]
    devs = [deviation(C) for C in curves_r]
    mad_r = np.mean([x[0] for x in devs], axis=0)
    rho_r = np.nanmean(np.array([x[1] for x in devs]), axis=0)
    cols = [str(c) for c in df.columns]
    summary = pd.DataFrame(
        {"informative_mad": mad_i, "random_mad": mad_r, "informative_spearman": rho_i, "random_spearman": rho_r},
        index=pd.Index(sizes, name="size"),
    )
    return SizeCurves(
        informative=pd.DataFrame(C_inf, index=df.index, columns=sizes),
        random=pd.DataFrame(curves_r[0], index=df.index, columns=sizes),
        informative_order=[cols[i] for i in inf_order],
        random_order=[cols[i] for i in rand_orders[0]],
        full=pd.Series(full, index=df.index),
        summary=summary,
    )


def _spearman(a, b) -> float:
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(stats.spearmanr(a, b)[0])


# ---------------------------------------------------------------------------
# Permutation tests (003 §3.2, §5.1, Tables 2 and 3)
# ---------------------------------------------------------------------------


def column_similarities(Q, measures: Sequence[str]) -> dict:
    """Similarity matrices between the rows of ``Q`` for several measures at once.

    Parameters
    ----------
    Q : array (n_items, n_models), complete
        The paper's orientation (prompts x models), i.e. ``X.T``.
    measures : sequence of {"cosine", "jaccard", "hamming"}
        ``jaccard`` and ``hamming`` need 0/1 data.

    Returns
    -------
    dict
        ``measure -> (n_items, n_items)`` array.

    Notes
    -----
    Closed forms through matrix products (Jaccard and Hamming share one), so a
    permutation test can compute a thousand of these. Conventions: cosine with
    an all-zero vector is 0; Jaccard of two all-zero vectors is 1 (they are
    identical); Hamming similarity is the fraction of models on which two items
    agree, ``(m - c_i - c_j + 2 <q_i, q_j>) / m`` for counts ``c``.

    References
    ----------
    003 §3.1 (cosine, Jaccard and Hamming similarity of performance vectors).
    """
    Q = np.asarray(Q, dtype=float)
    out = {}
    unknown = [mm for mm in measures if mm not in SIMILARITY_MEASURES]
    if unknown:
        raise MethodError(f"unknown similarity {unknown[0]!r}; choose from {SIMILARITY_MEASURES}")
    if "cosine" in measures:
        norms = np.linalg.norm(Q, axis=1)
        U = Q / np.where(norms > ZERO_NORM, norms, np.inf)[:, None]
        out["cosine"] = U @ U.T
    if any(mm in BINARY_MEASURES for mm in measures):
        inter = Q @ Q.T
        cnt = Q.sum(axis=1)
        csum = cnt[:, None] + cnt[None, :]
        if "hamming" in measures:
            out["hamming"] = (Q.shape[1] - csum + 2.0 * inter) / Q.shape[1]
        if "jaccard" in measures:
            union = csum - inter
            with np.errstate(invalid="ignore", divide="ignore"):
                out["jaccard"] = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 1.0)
    return out


def column_similarity(Q, measure: str) -> np.ndarray:
    """One similarity matrix between the rows of ``Q``; see :func:`column_similarities`."""
    return column_similarities(Q, [measure])[measure]


def _pair_similarities(Q: np.ndarray, measures: Sequence[str], flat: np.ndarray, i0: np.ndarray, i1: np.ndarray) -> dict:
    """Upper-triangle values of :func:`column_similarities`, computed on the pairs only.

    Same formulas; the Gram matrix is formed once and gathered at the flat
    pair indices, and the element-wise work is done on n(n-1)/2 values instead
    of n^2 (this is the permutation test's inner loop).
    """
    out = {}
    m = Q.shape[1]
    if "cosine" in measures:
        norms = np.linalg.norm(Q, axis=1)
        U = Q / np.where(norms > ZERO_NORM, norms, np.inf)[:, None]
        out["cosine"] = np.take(U @ U.T, flat)
    if any(mm in BINARY_MEASURES for mm in measures):
        inter = np.take(Q @ Q.T, flat)
        cnt = Q.sum(axis=1)
        csum = cnt[i0] + cnt[i1]
        if "hamming" in measures:
            out["hamming"] = (m - csum + 2.0 * inter) / m
        if "jaccard" in measures:
            union = csum - inter
            with np.errstate(invalid="ignore", divide="ignore"):
                out["jaccard"] = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 1.0)
    return out


#: The exact counting path of the permutation test for 0/1 matrices is used
#: while its cosine lookup table, (m + 1) * (m^2 + 1) entries, stays below this.
MAX_CODE_TABLE = 2_000_000


def _binary_pair_codes(Q: np.ndarray, measures: Sequence[str], flat, i0, i1) -> dict:
    """For a 0/1 ``Q``: per measure, an integer code per pair and a code -> similarity table.

    With 0/1 data every measure is a function of three small integers, the
    intersection ``<q_i, q_j>`` and the counts ``c_i``, ``c_j``, so statistics
    can be computed exactly by counting codes (``np.bincount``) instead of
    partitioning n(n-1)/2 floats. Same conventions as :func:`column_similarities`.
    """
    m = Q.shape[1]
    inter = np.rint(np.take(Q @ Q.T, flat)).astype(np.int64)
    cnt = np.rint(Q.sum(axis=1)).astype(np.int64)
    ci, cj = cnt[i0], cnt[i1]
    out = {}
    if "hamming" in measures:
        out["hamming"] = (m - ci - cj + 2 * inter, np.arange(m + 1) / m)
    if "jaccard" in measures:
        inter_t, union_t = np.divmod(np.arange((m + 1) ** 2), m + 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            table = np.where(union_t > 0, inter_t / np.where(union_t > 0, union_t, 1), 1.0)
        out["jaccard"] = (inter * (m + 1) + (ci + cj - inter), table)
    if "cosine" in measures:
        inter_t, prod_t = np.divmod(np.arange((m + 1) * (m * m + 1)), m * m + 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            table = np.where(prod_t > 0, inter_t / np.sqrt(np.where(prod_t > 0, prod_t, 1)), 0.0)
        out["cosine"] = (inter * (m * m + 1) + ci * cj, table)
    return out


def _quantiles_sorted_counts(vals: np.ndarray, cnt: np.ndarray, probs) -> np.ndarray:
    """Quantiles (numpy's linear method) of a sample given as sorted distinct values and counts."""
    cum = np.cumsum(cnt)
    n = cum[-1]
    pos = np.asarray(probs) * (n - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    v_lo = vals[np.searchsorted(cum, lo, side="right")]
    v_hi = vals[np.searchsorted(cum, hi, side="right")]
    return v_lo + (pos - lo) * (v_hi - v_lo)


def _stats_from_codes(codes: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Mean, 75th and 95th percentile of ``table[codes]`` by counting codes."""
    counts = np.bincount(codes, minlength=len(table))
    used = np.flatnonzero(counts)
    vals, cnt = table[used], counts[used]
    order = np.argsort(vals, kind="stable")
    vals, cnt = vals[order], cnt[order]
    mean = float((vals * cnt).sum() / cnt.sum())
    return np.concatenate(([mean], _quantiles_sorted_counts(vals, cnt, [0.75, 0.95])))


def _stats(values: np.ndarray) -> np.ndarray:
    """Mean, 75th and 95th percentile (linear interpolation, numpy's default) with one partition."""
    n = len(values)
    pos = np.array([0.75, 0.95]) * (n - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, n - 1)
    kth = np.unique(np.concatenate([lo, hi]))
    part = np.partition(values, kth)
    q = part[lo] + (pos - lo) * (part[hi] - part[lo])
    return np.array([values.mean(), q[0], q[1]])


STAT_NAMES = ("average", "75th percentile", "95th percentile")


def permute_within_models(X: np.ndarray, rng) -> np.ndarray:
    """Shuffle each model's scores across the columns independently (keeps every model's mean).

    References
    ----------
    003 §3.2: "randomly shuffling the cells of each column" of Q (prompts x models).
    """
    keys = rng.random(X.shape)
    return np.take_along_axis(X, np.argsort(keys, axis=1), axis=1)


@dataclass
class PermutationTestResult:
    """p-values (Table 2 layout: rows statistic, columns measure) and the statistics behind them."""

    pvalues: pd.DataFrame
    observed: pd.DataFrame
    permuted_mean: pd.DataFrame
    ks_statistic: pd.Series
    n_permutations: int


def permutation_test(
    X,
    measures: Sequence[str] = ("cosine",),
    n_permutations: int = 1000,
    random_state: int = 0,
    ks_max_values: int = 200_000,
    show_progress: bool = True,
) -> PermutationTestResult:
    """Test whether column performance vectors are more similar than chance.

    Each permutation shuffles every model's scores across columns independently
    (:func:`permute_within_models`); for the observed and each permuted matrix
    the similarity matrix between columns is computed and summarised over its
    off-diagonal upper triangle by the mean, 75th and 95th percentile.

    Parameters
    ----------
    X : array-like (n_models, n_columns), complete
    measures : sequence of str
        From :data:`SIMILARITY_MEASURES`; binary ones are skipped unless ``X`` is 0/1.
    n_permutations : int
        The paper's p-values (0.0009 ~ 1/1001) suggest 1000.
    random_state : int
    ks_max_values : int
        The KS test compares the observed similarity values with similarity
        values pooled from the permutations, subsampled to at most this many.

    Returns
    -------
    PermutationTestResult
        p-value of a statistic = ``(1 + #{permuted >= observed}) / (1 + n_permutations)``.

    Notes
    -----
    The paper counts permuted statistics "greater than" the observed one; we
    count "greater or equal" and add one to numerator and denominator, which
    keeps the test valid (p-values uniform or conservative under the null)
    when statistics tie, as percentiles of Hamming similarities on 0/1 data
    often do. The KS p-value treats the pairwise similarities as independent,
    which they are not (each column appears in many pairs), so like the paper's
    it overstates significance; read it as a distribution-shape statistic.

    The average Hamming similarity cannot be tested this way: summed over all
    pairs, a model's agreements depend only on how many columns it got right,
    which the permutation keeps, so the statistic is the same for every
    permutation and its p-value is 1 (the paper's 0.52-0.60 for this cell are
    what rounding noise gives with a strict "greater than").

    References
    ----------
    003 §3.2, §5.1, Table 2.
    """
    X = check_matrix(X, min_rows=2, min_cols=3)
    _require_complete(X, "the permutation test")
    binary = is_binary(X)
    measures = [mm for mm in measures if binary or mm not in BINARY_MEASURES]
    if not measures:
        raise MethodError("no similarity measure applies (Jaccard and Hamming need a 0/1 matrix)")
    for mm in measures:
        if mm not in SIMILARITY_MEASURES:
            raise MethodError(f"unknown similarity {mm!r}; choose from {SIMILARITY_MEASURES}")
    from ..report import progress

    rng = np.random.default_rng(random_state)
    d = X.shape[1]
    i0, i1 = np.triu_indices(d, k=1)
    flat = i0 * d + i1
    m = X.shape[0]
    counting = binary and (m + 1) * (m * m + 1) <= MAX_CODE_TABLE
    per_perm = max(1, ks_max_values // max(1, n_permutations))

    def summarise(Q, sample_size=None):
        """measure -> (statistics, similarity values: all, or a random sample of them)."""
        res = {}
        if counting:
            for mm, (codes, table) in _binary_pair_codes(Q, measures, flat, i0, i1).items():
                vals = table[codes] if sample_size is None else table[codes[rng.integers(0, len(codes), sample_size)]]
                res[mm] = (_stats_from_codes(codes, table), vals)
        else:
            for mm, v in _pair_similarities(Q, measures, flat, i0, i1).items():
                vals = v if sample_size is None or len(v) <= sample_size else v[rng.integers(0, len(v), sample_size)]
                res[mm] = (_stats(v), vals)
        return res

    observed = summarise(X.T)
    obs_stats = {mm: st for mm, (st, _) in observed.items()}
    obs_vals = {mm: v for mm, (_, v) in observed.items()}
    ge = {mm: np.zeros(3, dtype=np.int64) for mm in measures}
    perm_sum = {mm: np.zeros(3) for mm in measures}
    pooled = {mm: [] for mm in measures}
    for _ in progress(range(n_permutations), total=n_permutations, desc="permutations", disable=None if show_progress else True):
        Xp = permute_within_models(X, rng)
        for mm, (st, v) in summarise(Xp.T, per_perm).items():
            # relative tolerance: a statistic equal to the observed one up to rounding is a tie
            ge[mm] += st >= obs_stats[mm] - 1e-12 * np.abs(obs_stats[mm])
            perm_sum[mm] += st
            pooled[mm].append(v)
    pv, ob, pm, ks = {}, {}, {}, {}
    for mm in measures:
        pv[mm] = (1 + ge[mm]) / (1 + n_permutations)
        ob[mm] = obs_stats[mm]
        pm[mm] = perm_sum[mm] / max(1, n_permutations)
        res = stats.ks_2samp(obs_vals[mm], np.concatenate(pooled[mm])) if n_permutations else None
        pv[mm] = np.append(pv[mm], res.pvalue if res is not None else np.nan)
        ks[mm] = res.statistic if res is not None else np.nan
    idx = list(STAT_NAMES)
    return PermutationTestResult(
        pvalues=pd.DataFrame(pv, index=idx + ["KS test"]),
        observed=pd.DataFrame(ob, index=idx),
        permuted_mean=pd.DataFrame(pm, index=idx),
        ks_statistic=pd.Series(ks, name="KS statistic"),
        n_permutations=int(n_permutations),
    )


@dataclass
class SilhouetteTestResult:
    """Observed vs permuted silhouette (003 Table 3)."""

    observed: float
    observed_k: int
    permuted: np.ndarray
    permuted_k: np.ndarray
    pvalue: float

    def table(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "observed": [self.observed],
                "permuted": [float(np.nanmean(self.permuted)) if len(self.permuted) else np.nan],
                "observed_k": [self.observed_k],
                "n_permutations": [len(self.permuted)],
                "p_value": [self.pvalue],
            }
        )


def silhouette_test(
    X, n_permutations: int = 10, random_state: int = 0, max_clusters: int = 20, show_progress: bool = True
) -> SilhouetteTestResult:
    """Silhouette of the spherical k-means clustering of observed vs permuted columns.

    The paper reports one permutation; we average ``n_permutations`` and give the
    permutation p-value ``(1 + #{permuted >= observed}) / (1 + n)`` as well.

    References
    ----------
    003 §3.2 (last paragraph), §5.1, Table 3.
    """
    from ..report import progress

    X = check_matrix(X, min_rows=2, min_cols=4)
    _require_complete(X, "the silhouette test")
    obs = cluster_columns(X, max_clusters=max_clusters, random_state=random_state)
    rng = np.random.default_rng(random_state)
    sil, ks = [], []
    for _ in progress(range(n_permutations), total=n_permutations, desc="silhouette", disable=None if show_progress else True):
        c = cluster_columns(permute_within_models(X, rng), max_clusters=max_clusters, random_state=random_state)
        sil.append(c.silhouette)
        ks.append(c.n_clusters)
    sil = np.asarray(sil, dtype=float)
    valid = sil[~np.isnan(sil)]
    p = (1 + int((valid >= obs.silhouette).sum())) / (1 + len(valid)) if np.isfinite(obs.silhouette) else float("nan")
    return SilhouetteTestResult(
        observed=obs.silhouette, observed_k=obs.n_clusters, permuted=sil, permuted_k=np.asarray(ks), pvalue=p
    )


# ---------------------------------------------------------------------------
# Prompt-level input
# ---------------------------------------------------------------------------


def read_prompt_matrix(path, layout: str = "prompt-rows") -> pd.DataFrame:
    """Read a prompt-level score CSV and return it as ``models x prompts``.

    Parameters
    ----------
    path : str or Path
        CSV whose first column is the row label and whose header holds the
        column labels. Values are 0/1 (correct/incorrect) or scores in [0, 1]
        (e.g. ROUGE); empty cells are missing.
    layout : {"prompt-rows", "model-rows"}
        ``prompt-rows`` (default, the paper's Q): one row per prompt, one
        column per model. ``model-rows``: one row per model, one column per prompt.

    Notes
    -----
    For matrices made by other tools; lm-eval per-sample logs are read
    directly (:func:`samples_matrix`, ``harness-ext weights --samples-task``).
    """
    path = Path(path)
    if not path.is_file():
        raise HarnessExtError(f"{path}: no such prompt-level CSV")
    if layout not in ("prompt-rows", "model-rows"):
        raise HarnessExtError(f"--prompts-layout must be prompt-rows or model-rows, got {layout!r}")
    try:
        raw = pd.read_csv(path, index_col=0)
    except Exception as exc:  # noqa: BLE001 - any parse failure is the user's file
        raise HarnessExtError(f"{path}: cannot read CSV: {exc}") from exc
    try:
        df = raw.apply(pd.to_numeric, errors="raise").astype(float)
    except (ValueError, TypeError) as exc:
        raise HarnessExtError(f"{path}: non-numeric score: {exc}") from exc
    if layout == "prompt-rows":
        df = df.T
    df.index = df.index.map(str)
    df.columns = df.columns.map(str)
    vals = df.to_numpy()
    vals = vals[~np.isnan(vals)]
    if vals.size == 0:
        raise HarnessExtError(f"{path}: no scores")
    if vals.min() < 0 or vals.max() > 1:
        raise HarnessExtError(f"{path}: prompt-level scores must lie in [0, 1] (got {vals.min():g}..{vals.max():g})")
    df.index.name, df.columns.name = "model", "prompt"
    return df


# ---------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------


def _short(name: str, n: int = 28) -> str:
    name = str(name)
    return name if len(name) <= n else "…" + name[-(n - 1):]


def plot_rank_changes(comp: SchemeComparison, path, top: int = 20):
    """Heatmap like 003 Figure 2: rows schemes, columns models by increasing uniform score."""
    from ..report import get_pyplot, save_figure

    plt = get_pyplot()
    order = comp.scores["uniform"].sort_values(kind="stable").index
    models = list(order[-top:]) if top else list(order)
    schemes = [s for s in comp.rank_change.columns if s != "uniform"]
    M = comp.rank_change.loc[models, schemes].to_numpy().T.astype(float)
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(models) + 2), 0.6 * len(schemes) + 2.5))
    lim = max(1.0, np.abs(M).max())
    im = ax.imshow(M, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
    ax.set_xticks(range(len(models)), [_short(m) for m in models], rotation=70, ha="right", fontsize=7)
    ax.set_yticks(range(len(schemes)), schemes)
    if len(models) <= 40:
        for (i, j), v in np.ndenumerate(M):
            ax.text(j, i, f"{int(v)}", ha="center", va="center", fontsize=7, color="w" if abs(v) > 0.6 * lim else "k")
    title = "Rank change vs uniform weights (original rank - new rank)"
    if top and len(order) > top:
        title += f"; top {top} of {len(order)} models"
    ax.set_title(title, fontsize=9)
    fig.colorbar(im, ax=ax, shrink=0.8)
    return save_figure(fig, path)


def plot_pairwise(res: RandomWeightsResult, path):
    """Heatmap like 003 Figure 4: percentage of draws where the row model beats the column model."""
    from ..report import get_pyplot, save_figure

    plt = get_pyplot()
    P = res.pairwise.to_numpy() * 100
    k = len(P)
    fig, ax = plt.subplots(figsize=(0.5 * k + 3, 0.5 * k + 2.5))
    im = ax.imshow(P, cmap="viridis", vmin=0, vmax=100)
    names = [_short(x) for x in res.pairwise.index]
    ax.set_xticks(range(k), names, rotation=70, ha="right", fontsize=7)
    ax.set_yticks(range(k), names, fontsize=7)
    if k <= 25:
        for (i, j), v in np.ndenumerate(P):
            if i != j:
                ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=6, color="w" if v < 60 else "k")
    ax.set_title(f"% of {res.n_draws:,} random weightings where row beats column", fontsize=9)
    fig.colorbar(im, ax=ax, shrink=0.8, label="proportion where row > column (%)")
    return save_figure(fig, path)


def plot_score_distribution(res: RandomWeightsResult, path, top: int = 20):
    """Like 003 Figure 12 (left): weighted-score distributions; black dot = uniform weights."""
    from ..report import get_pyplot, save_figure

    plt = get_pyplot()
    order = np.argsort(-res.uniform, kind="stable")[:top]
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(order) + 1.5))
    y = np.arange(len(order))[::-1]
    if len(res.sample):
        parts = ax.violinplot([res.sample[:, i] for i in order], positions=y, orientation="horizontal", showextrema=False, widths=0.8)
        for body in parts["bodies"]:
            body.set_alpha(0.5)
    ax.hlines(y, res.score_min[order], res.score_max[order], color="0.5", lw=1, label=f"range over {res.n_draws:,} draws")
    ax.plot(res.uniform[order], y, "ko", ms=4, label="uniform weights")
    ax.set_yticks(y, [_short(res.models[i], 36) for i in order], fontsize=7)
    ax.set_xlabel("weighted score")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("Weighted score under random simplex weights", fontsize=9)
    return save_figure(fig, path)


def plot_size_curves(curves: SizeCurves, path, top: int = 10):
    """Like 003 Figures 3/10/11: average score vs benchmark size, two panels."""
    from ..report import get_pyplot, save_figure

    plt = get_pyplot()
    models = curves.full.sort_values(ascending=False, kind="stable").index[:top]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    sizes = curves.informative.columns.to_numpy()
    for ax, C, title in ((axes[0], curves.informative, "most informative"), (axes[1], curves.random, "random order")):
        for mname in models:
            (line,) = ax.plot(sizes, C.loc[mname].to_numpy(), lw=1.2, label=_short(mname, 32))
            ax.axhline(curves.full[mname], color=line.get_color(), ls=":", lw=0.8)
        ax.set_title(f"Average score as benchmark size increases: {title}", fontsize=9)
        ax.set_xlabel("benchmark size (columns)")
    axes[0].set_ylabel("average score (dotted: full benchmark)")
    axes[1].legend(fontsize=6, loc="best")
    return save_figure(fig, path)


# ---------------------------------------------------------------------------
# CLI: harness-ext weights
# ---------------------------------------------------------------------------

ANALYSES = ("schemes", "random", "size", "permutation", "silhouette")


def _parse_params(items) -> dict:
    import yaml

    out = {}
    for item in items or ():
        if "=" not in item:
            raise HarnessExtError(f"--param needs KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = yaml.safe_load(v)
    return out


def samples_matrix(store, task: str, metric: str = "acc", models: Optional[str] = None) -> pd.DataFrame:
    """Models x prompts matrix of one lm-eval task from the store's per-sample scores.

    Parameters
    ----------
    store : harness_ext.store.db.Store
    task, metric : str
        As in :func:`harness_ext.store.samples.prompt_matrix`.
    models : str, optional
        Glob on model names.

    Returns
    -------
    pandas.DataFrame
        ``models x prompts`` (columns are the lm-eval ``doc_id``, as strings),
        restricted to the prompts every selected model answered, so the
        analyses that need a complete matrix run; ``attrs`` carries ``task``,
        ``metric``, ``binary`` and ``n_dropped_prompts``.

    Raises
    ------
    MethodError
        If fewer than 2 models or 2 common prompts remain.

    References
    ----------
    003 §3.1: the prompt x model performance matrix Q (here ``Q.T``).
    """
    import fnmatch

    from ..store.samples import prompt_matrix

    Q = prompt_matrix(store, task, metric)
    if models:
        Q = Q[[c for c in Q.columns if fnmatch.fnmatchcase(str(c), models)]]
    if Q.shape[1] < 2:
        raise MethodError(f"task {task!r} ({metric}): {Q.shape[1]} model(s) match; the analyses need at least 2")
    complete = Q.dropna(axis=0, how="any")
    if len(complete) < 2:
        raise MethodError(f"task {task!r} ({metric}): fewer than 2 prompts were answered by all {Q.shape[1]} models")
    df = complete.T.astype(float)
    df.columns = [str(c) for c in df.columns]
    df.index.name, df.columns.name = "model", "prompt"
    df.attrs = {**Q.attrs, "n_dropped_prompts": int(len(Q) - len(complete))}
    return df


def _load(args) -> tuple[pd.DataFrame, str]:
    if args.samples and not args.samples_task:
        raise HarnessExtError("--samples needs --samples-task TASK (which lm-eval task to analyse)")
    if args.samples_task:
        from ..store.db import Store

        if args.samples:
            from ..store.samples import ingest_samples

            with Store.open(":memory:") as store:
                report = ingest_samples(store, args.samples)
                for f in report.by_status("skipped"):
                    print(f"skipped {f.path}: {f.reason}")
                df = samples_matrix(store, args.samples_task, args.samples_metric, args.models)
            where = f"lm-eval per-sample logs under {', '.join(args.samples)}"
        else:
            with Store.open(args.db, read_only=True) as store:
                df = samples_matrix(store, args.samples_task, args.samples_metric, args.models)
            where = "the store's samples table"
        dropped = df.attrs["n_dropped_prompts"]
        return df, (f"prompt-level {args.samples_task} ({args.samples_metric}) from {where}"
                    + (f"; {dropped} prompts not answered by every model dropped" if dropped else ""))
    if args.prompts:
        return read_prompt_matrix(args.prompts, args.prompts_layout), f"prompt-level CSV {args.prompts}"
    from ..cli.options import matrix_from_args

    df = matrix_from_args(args)
    return df, f"store matrix ({', '.join(args.benchmark or ['all benchmarks'])})"


def _print(title: str, body: str) -> None:
    print(f"\n== {title}\n{body}")


def run(args) -> int:
    """Run ``harness-ext weights``: print tables, write plots to ``--out``."""
    df, label = _load(args)
    df = df.dropna(axis=1, how="all").dropna(axis=0, how="all")
    if df.shape[0] < 2 or df.shape[1] < 2:
        raise MethodError(f"need at least 2 models and 2 columns, got {df.shape}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    analyses = [] if args.analyses.strip() == "none" else [a.strip() for a in args.analyses.split(",") if a.strip()]
    for a in analyses:
        if a not in ANALYSES:
            raise HarnessExtError(f"unknown analysis {a!r}; choose from {', '.join(ANALYSES)}")
    n_missing = int(df.isna().sum().sum())
    print(f"{label}: {df.shape[0]} models x {df.shape[1]} columns, {n_missing} missing cells"
          f"{', 0/1 values' if is_binary(df.to_numpy()) else ''}")
    top = args.top
    summary: dict = {"input": label, "shape": list(df.shape), "random_state": args.random_state}
    scheme_params = {args.scheme: _parse_params(args.param)}
    from ..types import normalise_name

    scheme_key = normalise_name(args.scheme)

    if "schemes" in analyses:
        names = [s.strip() for s in args.schemes.split(",") if s.strip()]
        if scheme_key not in [normalise_name(n) for n in names]:
            names.append(args.scheme)
        params = {normalise_name(k): v for k, v in scheme_params.items()}
        params.setdefault("medoids", {}).setdefault("max_clusters", args.max_clusters)
        params.setdefault("distance", {}).setdefault("max_clusters", args.max_clusters)
        params.setdefault("inverse_distance", {}).setdefault("max_clusters", args.max_clusters)
        try:
            comp = compare_schemes(df, [normalise_name(n) for n in names], args.random_state, params)
        except MethodError as exc:
            print(f"\n== weighting schemes: skipped ({exc})")
        else:
            order = comp.scores["uniform"].sort_values(ascending=False, kind="stable").index
            shown = order[:top] if top else order
            table = comp.scores.loc[shown].join(comp.rank_change.loc[shown].drop(columns="uniform").add_prefix("Δrank "))
            _print(f"weighted score and rank change per scheme (top {len(shown)} of {len(order)} by uniform score)",
                   _fmt(table))
            comp.scores.to_csv(out / "scheme_scores.csv")
            comp.rank_change.to_csv(out / "scheme_rank_change.csv")
            comp.weights.to_csv(out / "scheme_weights.csv")
            png = plot_rank_changes(comp, out / "rank_changes.png", top=top)
            summary["schemes"] = {
                "max_abs_rank_change": {s: int(comp.rank_change[s].abs().max()) for s in comp.rank_change.columns},
                "params": comp.params,
            }
            print(f"plot: {png}")

    if "random" in analyses:
        res = random_weight_analysis(
            df, n_draws=args.draws, random_state=args.random_state, chunk_size=args.chunk_size,
            pairwise_top=args.pairwise_top,
        )
        t = res.table()
        _print(f"weighted score over {res.n_draws:,} random simplex weightings (top {min(top, len(t))} of {len(t)})",
               _fmt(t.head(top)))
        k_show = min(top, 10, len(res.pairwise))
        shown = res.pairwise.iloc[:k_show, :k_show].copy()
        shown.index = [f"{i + 1} {_short(n, 40)}" for i, n in enumerate(shown.index)]
        shown.columns = [str(i + 1) for i in range(k_show)]
        _print(f"pairwise: fraction of draws where row beats column (top {k_show}; full matrix in pairwise.csv)", _fmt(shown, "{:.2f}"))
        s = res.summary()
        _print(
            "named outputs",
            f"top_two_swap_rate        {s['top_two_swap_rate']:.4f}  fraction of draws where uniform #2 beats #1 "
            f"({s['top_two'][1]} beats {s['top_two'][0]})\n"
            f"largest_range            {s['largest_range']:.4f}  max - min weighted score, score units "
            f"(Ailem et al. report up to 10%), {s['largest_range_model']}\n"
            f"largest_abs_score_shift  {s['largest_abs_score_shift']:.4f}  max |weighted - uniform|, score units, "
            f"{s['largest_abs_score_shift_model']}\n"
            f"largest_score_shift      {s['largest_score_shift']:.4f}  max |weighted - uniform| / uniform (relative), "
            f"{s['largest_score_shift_model']}"
            + (f"\ntop_two_swap_rate_exact  {s['top_two_swap_rate_exact']:.4f}  0/1 data: I_1/2(n_21, n_12) over the prompts "
               "where the two differ (binary_beat_probability)" if "top_two_swap_rate_exact" in s else ""),
        )
        t.to_csv(out / "random_weights.csv")
        res.pairwise.to_csv(out / "pairwise.csv")
        if res.pairwise_exact is not None:
            res.pairwise_exact.to_csv(out / "pairwise_exact.csv")
        summary["random_weights"] = s
        print(f"plot: {plot_pairwise(res, out / 'pairwise.png')}")
        print(f"plot: {plot_score_distribution(res, out / 'score_distribution.png', top=top)}")

    if "size" in analyses:
        try:
            curves = size_curves(df, random_state=args.random_state)
        except MethodError as exc:
            print(f"\n== increasing benchmark size: skipped ({exc})")
        else:
            d = df.shape[1]
            sizes = sorted({1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, d // 4, d // 2, d} & set(range(1, d + 1)))
            _print("increasing benchmark size: mean |score - full score| and Spearman with full ranking",
                   _fmt(curves.summary.loc[sizes]))
            curves.summary.to_csv(out / "size_summary.csv")
            summary["size_curves"] = {"informative_order_first10": curves.informative_order[:10]}
            print(f"plot: {plot_size_curves(curves, out / 'size_curves.png', top=min(top, 10))}")

    if "permutation" in analyses:
        measures = [m.strip() for m in args.similarity.split(",") if m.strip()]
        try:
            pt = permutation_test(df.to_numpy(dtype=float), measures, args.permutations, args.random_state)
        except MethodError as exc:
            print(f"\n== permutation test: skipped ({exc})")
        else:
            _print(f"permutation test p-values ({pt.n_permutations} permutations; 003 Table 2)", _fmt(pt.pvalues, "{:.4g}"))
            _print("observed statistic (permuted mean)",
                   _fmt(pt.observed.round(4).astype(str) + " (" + pt.permuted_mean.round(4).astype(str) + ")"))
            pt.pvalues.to_csv(out / "permutation_pvalues.csv")
            summary["permutation_test"] = {
                "pvalues": {c: pt.pvalues[c].to_dict() for c in pt.pvalues.columns},
                "n_permutations": pt.n_permutations,
            }

    if "silhouette" in analyses:
        try:
            st = silhouette_test(df.to_numpy(dtype=float), args.silhouette_permutations, args.random_state, args.max_clusters)
        except MethodError as exc:
            print(f"\n== silhouette: skipped ({exc})")
        else:
            _print("silhouette of spherical k-means, observed vs permuted (003 Table 3)", _fmt(st.table(), index=False))
            summary["silhouette"] = st.table().iloc[0].to_dict()

    if args.emit_weights:
        w = compute_weights(df, args.scheme, random_state=args.random_state, **scheme_params[args.scheme])
        path = emit_weights(w, args.emit_weights)
        print(f"\nweights ({w.attrs['scheme']}, {int((w > 0).sum())} non-zero of {len(w)}) written to {path}")

    (out / "summary.json").write_text(json.dumps(_jsonable(summary), indent=2, default=str) + "\n")
    print(f"summary: {out / 'summary.json'}")
    return 0


def _fmt(df: pd.DataFrame, floatfmt: str = "{:.3f}", index: bool = True) -> str:
    from ..report import format_table

    return format_table(df, floatfmt=floatfmt, index=index)
