"""SimBA dataset selectors: greedy coverage (Algorithm 1), its beam variant, and the baselines.

All selectors order the columns (datasets) of a performance matrix; the first ``k`` entries of ``order_`` are the
size-``k`` subset, so one fit gives the whole coverage curve of :mod:`harness_ext.methods.prowl`. Proxy coverage,
the searches and the choices where the paper is silent are documented in
:mod:`harness_ext.methods.prowl.coverage_search`.

References
----------
SimBA (Subramani, Gomez, Diab), §3.2, eqs. 3-5, Algorithm 1, "Baselines".
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from harness_ext.base import BaseSelector, check_matrix
from harness_ext.methods.prowl.coverage_search import (
    beam_coverage_order,
    check_n_select,
    coverage_matrix,
    greedy_coverage_order,
    mean_order,
)


class GreedyCoverage(BaseSelector):
    """SimBA Algorithm 1: greedy proxy-coverage maximisation on a similarity matrix.

    Parameters
    ----------
    similarity : str
        Registered similarity measure used for ``C_SIM`` (default Pearson).
    gamma : float, optional
        Proxy-coverage threshold: stop once ``delta(S) >= gamma`` (Algorithm 1). ``None`` (default) orders every
        dataset, which is what coverage curves need.
    n_select : int, optional
        Stop after this many datasets.
    random_state : int
        Seeds the tie-break priority over columns.

    Attributes
    ----------
    order_ : numpy.ndarray of int
        Column indices in selection order.
    coverage_ : numpy.ndarray
        Proxy coverage ``delta`` after each step.
    similarity_matrix_ : numpy.ndarray
        ``C_SIM`` as used (NaN read as 0, unit diagonal).

    Notes
    -----
    ``features`` is ignored: SimBA compares datasets by performance columns only.

    References
    ----------
    SimBA §3.2, eqs. 3-5, Algorithm 1.
    """

    def __init__(self, similarity: str = "pearson", gamma: Optional[float] = None, n_select: Optional[int] = None, random_state: int = 0):
        self.similarity = similarity
        self.gamma = gamma
        self.n_select = n_select
        self.random_state = random_state

    def _search(self, C, n_select, priority):
        return greedy_coverage_order(C, n_select=n_select, gamma=self.gamma, priority=priority)

    def fit(self, X, features=None):
        X = check_matrix(X, min_rows=2, min_cols=1)
        d = X.shape[1]
        n_select = check_n_select(self.n_select, d)
        C = coverage_matrix(X, self.similarity)
        priority = np.random.default_rng(self.random_state).permutation(d)
        self.order_, self.coverage_ = self._search(C, n_select, priority)
        self.similarity_matrix_ = C
        return self


class BeamCoverage(GreedyCoverage):
    """Beam-search variant of SimBA Algorithm 1 (see :func:`~harness_ext.methods.prowl.coverage_search.beam_coverage_order`).

    Parameters
    ----------
    similarity, gamma, n_select, random_state
        As :class:`GreedyCoverage`.
    beam_width : int
        Subsets kept per step (SimBA tried 5, 10, 20); 1 equals greedy.

    References
    ----------
    SimBA §3.2 and §10 (beam search gave no meaningful gain over greedy).
    """

    def __init__(
        self,
        similarity: str = "pearson",
        beam_width: int = 5,
        gamma: Optional[float] = None,
        n_select: Optional[int] = None,
        random_state: int = 0,
    ):
        super().__init__(similarity=similarity, gamma=gamma, n_select=n_select, random_state=random_state)
        self.beam_width = beam_width

    def _search(self, C, n_select, priority):
        return beam_coverage_order(C, beam_width=self.beam_width, n_select=n_select, gamma=self.gamma, priority=priority)


class RandomOrder(BaseSelector):
    """SimBA's RANDOM baseline: datasets added in a uniformly random order.

    ``harness_ext.methods.prowl`` averages 1000 such orders in a vectorised pass; this class is one draw, for use as
    an ordinary selector.

    References
    ----------
    SimBA §3.2, "Baselines".
    """

    def __init__(self, n_select: Optional[int] = None, random_state: int = 0):
        self.n_select = n_select
        self.random_state = random_state

    def fit(self, X, features=None):
        X = check_matrix(X, min_cols=1)
        d = X.shape[1]
        n_select = check_n_select(self.n_select, d) or d
        self.order_ = np.random.default_rng(self.random_state).permutation(d)[:n_select]
        self.coverage_ = None
        return self


class _ByMean(BaseSelector):
    _descending = False

    def __init__(self, n_select: Optional[int] = None, random_state: int = 0):
        self.n_select = n_select
        self.random_state = random_state

    def fit(self, X, features=None):
        X = check_matrix(X, min_cols=1)
        d = X.shape[1]
        n_select = check_n_select(self.n_select, d) or d
        order, self.means_ = mean_order(X, self._descending)
        self.order_ = order[:n_select]
        self.coverage_ = None
        return self


class GreedyMinimum(_ByMean):
    """SimBA's GREEDY MINIMUM baseline: datasets in increasing order of mean score over models.

    ``random_state`` is accepted for a uniform interface and unused (ties keep column order).

    References
    ----------
    SimBA §3.2, "Baselines".
    """


class GreedyMaximum(_ByMean):
    """SimBA's GREEDY MAXIMUM baseline: datasets in decreasing order of mean score over models.

    ``random_state`` is accepted for a uniform interface and unused (ties keep column order).

    References
    ----------
    SimBA §3.2, "Baselines".
    """

    _descending = True
