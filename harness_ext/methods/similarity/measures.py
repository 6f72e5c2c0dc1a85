"""Similarity measures between the columns (datasets, or prompts) of a performance matrix.

Every measure is a function ``func(X) -> C``: ``X`` is ``(n_obs, n_items)``
(models x datasets for SimBA, models x prompts for 0/1 prompt-level data) and
may contain NaN; ``C`` is the ``(n_items, n_items)`` similarity between
columns. All measures are symmetric. This module assembles them (registered by
:mod:`harness_ext.plugins.similarity`); the
vectorised kernels are in :mod:`harness_ext.methods.similarity.kernels`
(correlations, cosine) and :mod:`harness_ext.methods.similarity.distances`
(Lp, Wasserstein, Jensen-Shannon).

Conventions (shared by every measure here)
------------------------------------------
* Missing cells: each pair of columns uses only the rows observed in both
  (pairwise-complete observations), as ``pandas.DataFrame.corr`` does; rank
  measures rank each pair on its shared rows.
* Undefined entries are NaN: a correlation involving a column that is constant
  on the shared rows (or fewer than two shared rows); cosine or Jensen-Shannon
  with an all-zero column (no direction / no distribution); any pair with no
  shared row. The coverage selectors (:mod:`harness_ext.methods.prowl.coverage_search`) read NaN as
  similarity 0, i.e. "covers nothing".
* Diagonal: 1 wherever the column's self-similarity is defined (a constant
  column has NaN on the diagonal under the correlations).
* Distance-based measures (Lp, Wasserstein, Jensen-Shannon) are defined for
  constant columns.

Vectorisation: correlations, cosine and Euclidean are (masked) matrix
products; Spearman and Wasserstein sort each column once and read each pair's
shared-row ranks or order statistics off running counts of the partner's mask
(blocks of partners, never a sort per pair); Kendall's tau is a masked product
of pairwise-difference sign matrices over chunks of row pairs (all pairs while
that is cheap, else a seeded uniform sample of row pairs: see
:func:`kendall_similarity`); the other Lp distances and Jensen-Shannon visit
each pair once in cache-sized tiles, with missing cells removed by masked
products. benchmarks/bench_similarity_libs.py times each against the library
routine a user would call (pandas, numpy, scipy, sklearn).

Threads: large kernels split their work into tasks that the calling thread and
one worker thread pull in turn (:func:`harness_ext.methods.similarity.threads._each_task`), with
BLAS on one thread under them. Mid-sized ones (the masked L1 kernel, Gram
products) use the worker only when the load average leaves a core idle: on the
shared 2-core machine a second thread's hand-offs otherwise cost more than it
saves. The split depends on the matrix's shape alone, so results never depend
on the load or the schedule.

Precision: everything is float64 except (i) the Kendall sign products, which
are exact in float32 (integer counts per chunk well below 2**24, accumulated
in float64), and (ii) Minkowski (p=3) and Jensen-Shannon when a matrix needs
more than ``_FLOAT32_TERMS`` elementwise terms (``n * q * (q - 1) / 2``; about
1,000 x 100 columns): their per-element terms are then computed in float32
(float32 ``log`` is ~6x faster) and summed with pairwise summation.
tests/test_similarity.py bounds the resulting difference from the float64
result on real data (below 1e-5 for the similarities).

References
----------
SimBA (Subramani, Gomez, Diab), §3.1 and Appendix A, eqs. 9-15. Jaccard and
Hamming for 0/1 prompt-level vectors: Ailem et al., §3.1.
"""

from __future__ import annotations

import numpy as np

from harness_ext.errors import MethodError
from harness_ext.methods.similarity.distances import (  # noqa: F401  (public names of this module)
    jensen_shannon_similarity,
    lp_distance,
    wasserstein_distance_matrix,
    wasserstein_similarity,
)
from harness_ext.methods.similarity.kendall import kendall_similarity  # noqa: F401
from harness_ext.methods.similarity.kernels import (  # noqa: F401
    _blas_libraries,
    _OneBlasThread,
    _prepare,
    _symmetrise,
    cosine_similarity,
    cross_pearson,
)
from harness_ext.methods.similarity.spearman import spearman_similarity  # noqa: F401

#: The nine measures of SimBA Table 3, in the paper's order.
PAPER_MEASURES = (
    "pearson",
    "spearman",
    "kendall_tau",
    "cosine",
    "manhattan",
    "euclidean",
    "minkowski",
    "wasserstein",
    "jensen_shannon",
)

#: Display labels (paper spelling) for tables and plots.
LABELS = {
    "pearson": "PEARSON",
    "spearman": "SPEARMAN",
    "kendall_tau": "KENDALL-TAU",
    "cosine": "COSINE",
    "manhattan": "MANHATTAN",
    "euclidean": "EUCLIDEAN",
    "minkowski": "MINKOWSKI (P=3)",
    "wasserstein": "WASSERSTEIN",
    "jensen_shannon": "JENSEN-SHANNON",
    "jaccard": "JACCARD",
    "hamming": "HAMMING",
}


def pearson_similarity(X, min_periods: int = 1) -> np.ndarray:
    """Pearson correlation between columns (pairwise-complete), as ``pandas.DataFrame.corr()``.

    Parameters
    ----------
    X : array-like, shape (n, p)
    min_periods : int, default 1
        Pairs sharing fewer rows are NaN (as pandas; fewer than two is always NaN).

    Returns
    -------
    numpy.ndarray, shape (p, p)

    References
    ----------
    SimBA, Appendix A, eq. 9.
    """
    from harness_ext.methods.similarity.kernels import _complete_pearson, _min_periods_mask

    X = np.asarray(X, dtype=float)
    if X.ndim == 2 and X.size:
        # The column sums (needed for the means) are finite exactly when no cell is NaN or infinite (or the
        # sum overflows, which the checked path below handles): no separate pass to find missing cells.
        sums = np.ones(X.shape[0]) @ X
        if np.isfinite(sums).all():
            C = _complete_pearson(X, sums)
            if min_periods > X.shape[0]:
                C[:] = np.nan
            return C
    X, M = _prepare(X)
    C = cross_pearson(X)
    few = _min_periods_mask(M, min_periods)
    return C if few is None else np.where(few, np.nan, C)


def _lp_similarity(p: float):
    def func(X) -> np.ndarray:
        D = lp_distance(X, p)
        return np.exp(np.negative(D, out=D), out=D)

    func.__name__ = f"l{p:g}_similarity"
    func.__doc__ = f"exp(-L{p:g} distance) between columns; see :func:`lp_distance`.\n\nReferences\n----------\nSimBA, Appendix A, eq. 13."
    return func


manhattan_similarity = _lp_similarity(1.0)
euclidean_similarity = _lp_similarity(2.0)
minkowski_similarity = _lp_similarity(3.0)


# --------------------------------------------------------------------------- binary measures


def _binary(X) -> tuple:
    X, M = _prepare(X)
    vals = X[M]
    if not np.isin(vals, (0.0, 1.0)).all():
        raise MethodError("Jaccard and Hamming similarities need a 0/1 matrix (prompt-level correctness)")
    return np.where(M, X, 0.0), M.astype(float)


def jaccard_similarity(X) -> np.ndarray:
    """Jaccard similarity of 0/1 columns over pairwise-complete rows.

    ``|a AND b| / |a OR b|``; two columns with no 1 on their shared rows get 1
    (scipy's convention: Jaccard distance 0). NaN if no row is shared.

    References
    ----------
    Ailem et al., §3.1 (binary prompt-level vectors).
    """
    A, m = _binary(X)
    inter = A.T @ A
    ones_i = A.T @ m  # ones of column i on rows where j is observed
    union = ones_i + ones_i.T - inter
    shared = m.T @ m
    with np.errstate(invalid="ignore", divide="ignore"):
        J = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 1.0)
    return np.where(shared > 0, _symmetrise(J), np.nan)


def hamming_similarity(X) -> np.ndarray:
    """``1 - Hamming distance`` (fraction of shared rows where 0/1 columns agree).

    NaN if no row is shared.

    References
    ----------
    Ailem et al., §3.1 (binary prompt-level vectors).
    """
    A, m = _binary(X)
    inter = A.T @ A
    ones_i = A.T @ m
    mismatch = ones_i + ones_i.T - 2.0 * inter
    shared = m.T @ m
    with np.errstate(invalid="ignore", divide="ignore"):
        H = 1.0 - mismatch / shared
    return np.where(shared > 0, _symmetrise(H), np.nan)


# --------------------------------------------------------------------------- registry

#: Below this many cells a measure runs its products on one BLAS thread: on a shared 2-core machine the
#: threads of a small product spin against other processes (838 x 57 masked Pearson: 0.7 s on two
#: threads, 3 ms on one). A symmetric update gets BLAS's threads back when a core is idle
#: (:func:`harness_ext.methods.similarity.kernels._syrk`: the same sums in the same order on any thread count).
_ONE_THREAD_CELLS = 2_000_000


#: Measures whose complete-data kernel makes no BLAS call (scipy's pdist, numpy tiles): on a complete matrix
#: they skip the one-thread section, whose thread-count calls cost about 10 us (838 x 57 Manhattan takes about
#: 0.7 ms in all). Measures with BLAS products keep it even for one product on a complete matrix: at load 6 on
#: the 2-core machine one 838 x 57 ``X.T @ X`` averaged 0.34 ms on one BLAS thread and 4.7 ms on two, a
#: 1,000 x 200 one 3.3 ms and 23 ms (best-of-N timings hide this: the best two-thread run is the faster).
_NO_BLAS_WHEN_COMPLETE = ("manhattan", "minkowski", "wasserstein")


def _small_on_one_thread(func, no_blas_when_complete: bool = False):
    import functools

    @functools.wraps(func)
    def wrapper(X, *args, **kwargs):
        if np.size(X) >= _ONE_THREAD_CELLS:
            return func(X, *args, **kwargs)
        if no_blas_when_complete and isinstance(X, np.ndarray) and X.dtype.kind == "f" and np.isfinite(X).all():
            return func(X, *args, **kwargs)
        with _OneBlasThread():
            return func(X, *args, **kwargs)

    return wrapper


_FUNCS = {
    "pearson": (pearson_similarity, "Pearson correlation (SimBA eq. 9)", False),
    "spearman": (spearman_similarity, "Spearman rank correlation, average ties (SimBA eq. 10)", False),
    "kendall_tau": (kendall_similarity, "Kendall tau-b (SimBA eq. 11)", False),
    "cosine": (cosine_similarity, "cosine similarity (SimBA eq. 12)", False),
    "manhattan": (manhattan_similarity, "exp(-L1 distance) (SimBA eq. 13)", False),
    "euclidean": (euclidean_similarity, "exp(-L2 distance) (SimBA eq. 13)", False),
    "minkowski": (minkowski_similarity, "exp(-L3 distance), Minkowski p=3 (SimBA eq. 13)", False),
    "wasserstein": (wasserstein_similarity, "exp(-W1 / max W1) (SimBA eq. 14)", False),
    "jensen_shannon": (jensen_shannon_similarity, "1 - Jensen-Shannon distance, base 2 (SimBA eq. 15)", False),
    "jaccard": (jaccard_similarity, "Jaccard similarity of 0/1 vectors (Ailem et al. §3.1)", True),
    "hamming": (hamming_similarity, "1 - Hamming distance of 0/1 vectors (Ailem et al. §3.1)", True),
}


def similarity_matrix(X, name: str) -> np.ndarray:
    """The similarity matrix of a registered measure (built-in or third-party) by name, checked as the contract
    checks it (:func:`check_similarity_output`): a faulty plugin fails here, named, not in the subset it chose."""
    from harness_ext.plugin_manager import get_registration

    reg = get_registration("similarity_measures", name)
    return check_similarity_output(reg.func(X), np.shape(X)[1], reg)


#: Tolerance of the symmetry, range and diagonal checks (rounding in a plugin's arithmetic is not an error).
SIMILARITY_TOL = 1e-6


def check_similarity_output(C, q: int, reg) -> np.ndarray:
    """``C`` as a float matrix, or a MethodError naming ``reg`` (its name and source) and what is wrong.

    A similarity of ``q`` columns is a ``q x q`` matrix, symmetric, with values in [-1, 1] and NaN where a
    pair is undefined (never for every pair, never infinite), and 1 on the diagonal where defined when the
    measure says it has a unit diagonal (``reg.unit_diagonal``).
    """
    who = f"similarity {reg.name!r} ({getattr(reg, 'source', '')})"
    try:
        C = np.asarray(C, dtype=float)
    except (TypeError, ValueError):
        raise MethodError(f"{who} returned a {type(C).__name__}, not a matrix of numbers") from None
    if C.shape != (q, q):
        raise MethodError(f"{who} returned shape {C.shape}, expected {(q, q)}")
    if np.isinf(C).any():
        raise MethodError(f"{who} returned infinite values for {int(np.isinf(C).sum())} of the {q * q} pairs: a "
                          "similarity is finite, or NaN where undefined")
    off = ~np.eye(q, dtype=bool)
    if q > 1 and np.isnan(C[off]).all():
        # NaN is "no evidence" for one pair; for every pair it leaves a coverage selector nothing to choose by
        # and its subset would be arbitrary.
        raise MethodError(f"{who} is undefined (NaN) for every pair of the {q} datasets: "
                          "a faulty plugin, or columns that are constant or share fewer than two models; "
                          "choose another --similarity or another matrix")
    if not np.allclose(C, C.T, rtol=0, atol=SIMILARITY_TOL, equal_nan=True):
        raise MethodError(f"{who} returned a matrix that is not symmetric (largest difference "
                          f"{np.nanmax(np.abs(C - C.T)):.3g})")
    finite = C[np.isfinite(C)]
    if finite.size and (finite.min() < -1 - SIMILARITY_TOL or finite.max() > 1 + SIMILARITY_TOL):
        raise MethodError(f"{who} returned values outside [-1, 1] (from {finite.min():.4g} to {finite.max():.4g})")
    diag = np.diag(C)
    if getattr(reg, "unit_diagonal", False) and not np.allclose(diag[np.isfinite(diag)], 1.0, rtol=0,
                                                                  atol=SIMILARITY_TOL):
        raise MethodError(f"{who} returned a diagonal that is not 1 (a dataset is fully similar to itself)")
    return C


_FUNCS = {name: (_small_on_one_thread(f, name in _NO_BLAS_WHEN_COMPLETE), d, b) for name, (f, d, b) in _FUNCS.items()}

