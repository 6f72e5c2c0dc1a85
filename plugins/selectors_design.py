"""Greedy A- and D-optimal design over datasets with a swap pass (Gusev & Zaytsev, KDD 2026, §4, eq. 4), on a
representation of the datasets (:func:`harness_ext.methods.prowl.representation.dataset_representation`).

The criterion and the search are :func:`harness_ext.methods.prowl.representation.optimal_design_order`.

References
----------
Gusev & Zaytsev, "Benchmarking on Tasks That Matter: Dataset Selection for Preserving Model Rankings",
KDD 2026, §4 "A-/D-optimality", eq. (4).
"""

from __future__ import annotations

from harness_ext.base import BaseSelector
from harness_ext.methods.prowl.representation import check_n_select, dataset_representation, optimal_design_order


class _OptimalDesign(BaseSelector):
    """Greedy A-/D-optimal design over datasets, with a best-improvement swap pass.

    The criterion and the search (greedy, then swaps) are
    :func:`harness_ext.methods.prowl.representation.optimal_design_order`.

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

    def fit(self, X, features=None):
        F = dataset_representation(X, features, self.standardize)
        k = check_n_select(self.n_select, F.shape[0])
        self.order_, self.criterion_, self.n_swaps_ = optimal_design_order(
            F, k, self.lam, self.criterion, self.swaps and self.n_select is not None, self.max_swap_passes)
        return self


class AOptimal(_OptimalDesign):
    """Greedy A-optimal design (minimise tr I(S)^{-1}) with swaps; see :class:`_OptimalDesign`."""

    criterion = "A"


class DOptimal(_OptimalDesign):
    """Greedy D-optimal design (maximise log det I(S)) with swaps; see :class:`_OptimalDesign`."""

    criterion = "D"
