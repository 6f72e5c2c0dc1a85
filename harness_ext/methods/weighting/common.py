"""Constants and small helpers shared by the weighting analyses: unit column vectors, weighted scores, ranks."""

from __future__ import annotations

import math

import numpy as np

from ...base import CHANCE_WARNING_RATE, check_matrix
from ...errors import MethodError

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
#: The analyses of ``harness-ext weights`` (the command's ``--analyses``).
ANALYSES = ("schemes", "random", "size", "permutation", "silhouette")


def short_name(name, n: int = 28) -> str:
    """``name`` cut to its last ``n`` characters (model names end in what tells them apart)."""
    name = str(name)
    return name if len(name) <= n else "…" + name[-(n - 1):]


def section(title: str, body: str) -> str:
    """One titled block of a rendered result (the ``weights`` command prints them one after another)."""
    return f"== {title}\n{body}"


def is_binary(X) -> bool:
    """True if every non-missing value of ``X`` is exactly 0 or 1."""
    X = np.asarray(X, dtype=float)
    vals = X[~np.isnan(X)]
    return vals.size > 0 and bool(np.all((vals == 0) | (vals == 1)))


def _require_complete(X: np.ndarray, what: str) -> None:
    if np.isnan(X).any():
        raise MethodError(
            f"{what} needs a complete matrix but {int(np.isnan(X).sum())} cells are missing; "
            "predict them first (complete_matrix; harness-ext weights does unless --no-complete) or select a dense "
            "matrix (--dense)"
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
    from scipy.stats import rankdata

    return rankdata(-filled, method="min").astype(int)


def chance_ranking_rate(n_models: int) -> float:
    """The chance that an ordering of ``n_models`` drawn without regard to their scores is a given ranking: 1/n!.

    Each ranking statement of the analyses (a scheme's rank changes, a model's best and worst rank over random
    weightings, the Spearman correlation of a size curve with the full ranking) compares one ranking of the models
    with another, and ``n`` models have only ``n!`` rankings (untied).
    """
    # int / int, not 1.0 / int: past 170 models n! is too large for a float, and only the quotient must fit
    return 1 / math.factorial(max(int(n_models), 1))


def few_models_warning(n_models: int):
    """The warning that ``n_models`` are too few for the ranking statements to say much, or None.

    Given when an unrelated ordering matches the uniform weights' ranking more than 5% of the time (stalk's rule for
    chance fits): 2 models (1 in 2) and 3 (1 in 6); 4 models have 24 rankings (4%). The pairwise "row beats column"
    fractions and the score ranges are about each model's own scores and are not concerned.
    """
    n = int(n_models)
    rate = chance_ranking_rate(n)
    if rate <= CHANCE_WARNING_RATE:
        return None
    return (f"only {n} models: they have {math.factorial(n)} rankings, so an ordering unrelated to the scores "
            f"matches the uniform weights' ranking {rate:.0%} of the time and leaves a given model's rank unchanged "
            f"{1 / n:.0%} of the time; rank changes can only be -{n - 1} to {n - 1}, and unchanged ranks or a "
            "Spearman of 1 in the size curves say little; add models")
