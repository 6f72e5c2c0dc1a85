"""SimBA's coverage search: greedy proxy-coverage maximisation (Algorithm 1), its beam variant, and the
mean-score order of the GREEDY MINIMUM / MAXIMUM baselines.

The searches order the columns (datasets) of a performance matrix; the first ``k`` entries of an order
are the size-``k`` subset, so one search gives the whole coverage curve of :mod:`harness_ext.methods.prowl`.
The registered selectors are the classes of :mod:`harness_ext.plugins.selectors`.

Proxy coverage (SimBA eqs. 3-5) of a set ``S`` under a similarity matrix ``C``:
``delta(S) = mean_i lambda_i`` with ``lambda_i = 1`` for ``i`` in ``S`` and
``max_{j in S} C[i, j]`` otherwise; ``delta({}) = 0``. The coverage gain of
adding ``D`` is ``delta(S + D) - delta(S)``, so maximising the gain is
maximising ``delta(S + D)``.

Choices where the paper is silent (tested in tests/test_prowl.py):

* NaN similarities (undefined, e.g. a constant column under a correlation)
  count as 0: "no evidence of similarity" covers nothing.
* Negative similarities are used as they are (eq. 4 takes a plain max), so an
  anti-correlated dataset adds negative coverage until something similar is
  chosen.
* Ties in the gain are broken by a fixed random priority over columns drawn
  from ``random_state`` (the same rule in greedy and beam search, so
  ``beam_width=1`` reproduces greedy exactly).

References
----------
SimBA (Subramani, Gomez, Diab), §3.2, eqs. 3-5, Algorithm 1, "Baselines".
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from harness_ext.errors import MethodError

# Gains are compared after rounding to this many decimals, so float noise from
# different summation orders of equal sets counts as a tie.
_TIE_DECIMALS = 12


def coverage_matrix(X, similarity: str) -> np.ndarray:
    """The similarity matrix used by coverage: NaN read as 0, diagonal 1.

    Parameters
    ----------
    X : array-like, shape (n_models, n_datasets)
    similarity : str
        A registered similarity-measure name (see ``harness-ext plugins``).

    References
    ----------
    SimBA §3.1 (C_SIM) and eq. 4 (lambda_i = 1 for chosen datasets).
    """
    from harness_ext.methods.similarity.measures import similarity_matrix

    C = np.nan_to_num(similarity_matrix(X, similarity), nan=0.0)
    np.fill_diagonal(C, 1.0)
    return C


def proxy_coverage(C: np.ndarray, subset) -> float:
    """``delta(S)`` of eq. 3 for one subset (0 for the empty set).

    References
    ----------
    SimBA §3.2, eqs. 3-4.
    """
    subset = np.asarray(subset, dtype=int)
    if subset.size == 0:
        return 0.0
    lam = C[:, subset].max(axis=1)
    lam[subset] = 1.0
    return float(lam.mean())


def _candidate_deltas(C: np.ndarray, cover: Optional[np.ndarray]) -> np.ndarray:
    """delta(S + c) for every column c, given lambda of S (None for the empty set)."""
    G = C if cover is None else np.maximum(cover[:, None], C)
    # lambda_c = 1 once c is chosen; C has a unit diagonal, so G[c, c] is already 1.
    return G.mean(axis=0)


#: Below this many columns every candidate is evaluated at every step (cheap); above, lazily.
_LAZY_MIN_D = 64
#: Candidates evaluated together by the lazy greedy step.
_LAZY_BATCH = 16
#: Slack on the stale bounds, far above the rounding of _TIE_DECIMALS and of the sums.
_LAZY_SLACK = 1e-9


def _lazy_pick(C, cover, chosen, gain, prio):
    """One greedy step evaluating only the candidates whose stale gain could still win (lazy greedy).

    ``delta(S + c) = delta(S) + g_S(c)`` with ``g_S(c) = mean_i max(0, C[i, c] - lambda_i)``,
    and ``g_S(c)`` only shrinks as ``S`` grows (proxy coverage is a facility-location
    function, hence submodular), so a gain computed at an earlier step bounds the current
    one. Candidates are evaluated in batches by decreasing bound until the next bound
    (plus a slack) falls below the best exact value; ties are then broken among the
    evaluated candidates exactly as in the full evaluation (the same rounded values,
    computed by the same expression). Returns the chosen column and the updated bounds.

    References
    ----------
    SimBA Algorithm 1; Minoux (1978), "Accelerated greedy algorithms for maximizing
    submodular set functions" (lazy evaluation).
    """
    base = cover.mean()
    bound = np.where(chosen, -np.inf, gain)
    queue = np.argsort(-bound, kind="stable")
    n_open = int((~chosen).sum())
    best = -np.inf
    seen, vals = [], []
    for start in range(0, n_open, _LAZY_BATCH):
        batch = queue[start : min(n_open, start + _LAZY_BATCH)]
        if base + bound[batch[0]] < best - _LAZY_SLACK:
            break
        v = np.round(np.maximum(cover[:, None], C[:, batch]).mean(axis=0), _TIE_DECIMALS)
        gain[batch] = v - base
        seen.append(batch)
        vals.append(v)
        best = max(best, float(v.max()))
    seen, vals = np.concatenate(seen), np.concatenate(vals)
    ties = seen[vals == vals.max()]
    return int(ties[np.argmin(prio[ties])]), gain


def greedy_coverage_order(C, n_select: Optional[int] = None, gamma: Optional[float] = None, priority=None):
    """Algorithm 1: repeatedly add the dataset with the largest coverage gain.

    Parameters
    ----------
    C : numpy.ndarray, shape (d, d)
        Similarity matrix from :func:`coverage_matrix` (no NaN, unit diagonal).
    n_select : int, optional
        Stop after this many datasets.
    gamma : float, optional
        Stop as soon as ``delta(S) >= gamma`` (Algorithm 1's threshold). With
        neither limit every column is ordered.
    priority : array-like of int, optional
        Tie-break rank per column (lower wins); default column index.

    Returns
    -------
    order : numpy.ndarray of int
    deltas : numpy.ndarray
        ``delta`` after each addition.

    References
    ----------
    SimBA §3.2, Algorithm 1 and eq. 5.
    """
    C = np.asarray(C, dtype=float)
    d = C.shape[0]
    k_max = d if n_select is None else min(int(n_select), d)
    prio = np.arange(d) if priority is None else np.asarray(priority)
    chosen = np.zeros(d, dtype=bool)
    cover = None
    order, deltas = [], []
    # Lazy evaluation needs the facility-location form (similarities <= 1 = the unit diagonal).
    lazy = d > _LAZY_MIN_D and bool(np.nanmax(C) <= 1.0)
    gain = None
    for _ in range(k_max):
        if lazy and gain is not None:
            c, gain = _lazy_pick(C, cover, chosen, gain, prio)
        else:
            cand = np.round(_candidate_deltas(C, cover), _TIE_DECIMALS)
            cand[chosen] = -np.inf
            if cover is not None:
                gain = cand - cover.mean()
            ties = np.flatnonzero(cand == cand.max())
            c = int(ties[np.argmin(prio[ties])])
        chosen[c] = True
        cover = C[:, c].copy() if cover is None else np.maximum(cover, C[:, c])
        cover[chosen] = 1.0
        order.append(c)
        deltas.append(float(cover.mean()))
        if gamma is not None and deltas[-1] >= gamma:
            break
    return np.asarray(order, dtype=int), np.asarray(deltas)


def beam_coverage_order(C, beam_width: int = 5, n_select: Optional[int] = None, gamma: Optional[float] = None, priority=None):
    """Beam search over subsets for proxy coverage (the variant SimBA mentions in §3.2).

    Each step extends every kept subset by every unchosen dataset and keeps the
    ``beam_width`` distinct subsets with the largest ``delta``; ties are broken
    by the larger sum of ``delta`` along the path (the area under the proxy
    coverage curve), then by the column priority. A subset reached along two
    paths is kept once, with its better path. The result is the best beam at
    the stopping size, so ``order_[:k]`` is that beam's path.

    Parameters
    ----------
    C, n_select, gamma, priority
        As in :func:`greedy_coverage_order`.
    beam_width : int
        Number of subsets kept per step; 1 is greedy.

    Returns
    -------
    order, deltas : numpy.ndarray
        The chosen path and ``delta`` along it.

    References
    ----------
    SimBA §3.2 ("our implementation supports beam search") and Limitations.
    """
    C = np.asarray(C, dtype=float)
    d = C.shape[0]
    if int(beam_width) < 1:
        raise MethodError(f"beam_width must be >= 1, got {beam_width}")
    k_max = d if n_select is None else min(int(n_select), d)
    prio = np.arange(d) if priority is None else np.asarray(priority)
    # Each beam: (path list, chosen mask, cover vector or None, deltas list, cumulative delta).
    beams = [([], np.zeros(d, dtype=bool), None, [], 0.0)]
    for _ in range(k_max):
        cand = np.round(np.stack([_candidate_deltas(C, b[2]) for b in beams]), _TIE_DECIMALS)  # (B, d)
        for bi, b in enumerate(beams):
            cand[bi, b[1]] = -np.inf
        cum = np.array([b[4] for b in beams])[:, None] + cand
        bi_idx, c_idx = np.meshgrid(np.arange(len(beams)), np.arange(d), indexing="ij")
        # Sort keys (last is primary): delta desc, path area desc, priority.
        keys = (prio[c_idx].ravel(), -cum.ravel(), -cand.ravel())
        ranked = np.lexsort(keys)
        new, seen = [], set()
        for flat in ranked:
            if not np.isfinite(cand.flat[flat]):
                break
            bi, c = int(bi_idx.flat[flat]), int(c_idx.flat[flat])
            path, chosen, cover, deltas, total = beams[bi]
            key = frozenset(path) | {c}
            if key in seen:
                continue
            seen.add(key)
            mask = chosen.copy()
            mask[c] = True
            cov = C[:, c].copy() if cover is None else np.maximum(cover, C[:, c])
            cov[mask] = 1.0
            dl = float(cov.mean())
            new.append((path + [c], mask, cov, deltas + [dl], total + float(cand[bi, c])))
            if len(new) >= int(beam_width):
                break
        beams = new
        if gamma is not None and beams[0][3][-1] >= gamma:
            break
    best = beams[0]
    return np.asarray(best[0], dtype=int), np.asarray(best[3])


def check_n_select(n_select, d):
    if n_select is None:
        return None
    n = int(n_select)
    if n < 1:
        raise MethodError(f"n_select must be >= 1, got {n_select}")
    return min(n, d)


def mean_order(X: np.ndarray, descending: bool = False) -> tuple:
    """``(order, means)``: columns by mean observed score (increasing, or decreasing with ``descending``).

    Columns with no observation go last; equal means keep column order.

    References
    ----------
    SimBA §3.2, "Baselines" (GREEDY MINIMUM and GREEDY MAXIMUM).
    """
    observed = ~np.isnan(X)
    means = np.where(observed, X, 0.0).sum(0) / np.maximum(observed.sum(0), 1)
    key = -means if descending else means
    key = np.where(observed.any(0), key, np.inf)
    return np.argsort(key, kind="stable"), means
