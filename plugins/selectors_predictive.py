"""Selection for prediction: the datasets from which the rest of a new model's profile is best predicted.

The search (greedy forward selection on the cross-validated error of the profile and the aggregate,
shortlisted by an A-optimal design criterion on probabilistic-PCA loadings; cost-aware) is
:func:`harness_ext.methods.prowl.predictive.prediction_greedy_order`.

References
----------
Tipping & Bishop (1999), probabilistic PCA; Pukelsheim, *Optimal Design of Experiments* (1993), A- and
c-optimality; Krause & Golovin (2014) for the cost-benefit greedy rule.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from harness_ext.base import BaseSelector, check_matrix
from harness_ext.errors import MethodError
from harness_ext.methods.prowl.predictive import prediction_greedy_order
from harness_ext.methods.prowl.saturation import HEADROOM, saturation_plan


class PredictionGreedy(BaseSelector):
    """Greedy forward selection on the cross-validated prediction error of the profile and the aggregate.

    Parameters
    ----------
    predictor : str
        Registered predictor whose error is minimised (default ``ridge``; ``reduce``
        passes its own ``--predictor``).
    predictor_params : dict, optional
        Keyword parameters of the predictor.
    aggregate_weight : float
        Weight of the aggregate's MSE next to the profile's MSE in the objective.
    weights : array-like, optional
        Dataset weights of the aggregate; default uniform.
    method : {"auto", "exact", "design"}
        See :mod:`harness_ext.methods.prowl.predictive`.
    n_candidates : int
        Candidates evaluated exactly per step in ``auto`` (the best by the design criterion).
    max_exact : int
        Exact steps in ``auto``; later steps use the design criterion.
    n_splits : int
        Model folds of the cross-validation.
    costs : array-like, optional
        Positive cost per dataset; steps then maximise error reduction per unit of cost.
    cost_budget : float, optional
        Stop before the total cost would exceed this.
    n_select : int, optional
        Stop after this many datasets (default: order all, or until the cost budget).
    size : int, optional
        The subset size the order is for (``reduce`` passes its count budget; ``n_select``
        counts as one): its first ``size`` datasets are the exhaustive optimum when enumerable.
    exhaustive : bool
        Allow that exhaustive search (within :data:`EXHAUSTIVE_FLOPS_BUDGET`).
    coverage_aware : bool
        Multiply the design gains by each dataset's observed share of models (see :mod:`harness_ext.methods.prowl.predictive`).
    demote_saturated : bool
        Choose a dataset that the training models leave little headroom below its known ceiling only after
        every other (:mod:`harness_ext.methods.prowl.saturation`): better predictions for models stronger
        than the training models, at some cost for models like them. Off by default.
    headroom : float
        The saturation threshold on ``(ceiling - q90) / (q90 - q10)`` (default 0.25, fixed before it was measured).
    ceilings : sequence of float or None, optional
        Each dataset's ceiling on the matrix's scale (None: unknown, never demoted); default 1 for the datasets
        whose scores all lie in [0, 1]. ``reduce`` passes the ceilings of the datasets' scales.
    random_state : int
        Seeds the folds.

    Attributes
    ----------
    order_ : numpy.ndarray of int
    objective_ : numpy.ndarray
        Cross-validated objective after each exact step (NaN for design steps).
    method_ : list of str
        ``"exact"`` or ``"design"`` per step.
    coverage_ : None
        (No proxy coverage: the objective is prediction error.)
    saturation_ : dict or None
        With ``demote_saturated``: the saturated datasets, their headroom and whether they were demoted.

    References
    ----------
    See :mod:`harness_ext.methods.prowl.predictive`.
    """

    def __init__(self, predictor: str = "ridge", predictor_params: Optional[dict] = None, aggregate_weight: float = 1.0,
                 weights=None, method: str = "auto", n_candidates: int = 12, max_exact: int = 20, n_splits: int = 5,
                 costs=None, cost_budget: Optional[float] = None, n_select: Optional[int] = None,
                 size: Optional[int] = None, exhaustive: bool = True, coverage_aware: bool = False,
                 demote_saturated: bool = False, headroom: float = HEADROOM, ceilings=None, random_state: int = 0):
        self.predictor = predictor
        self.predictor_params = predictor_params
        self.aggregate_weight = aggregate_weight
        self.weights = weights
        self.method = method
        self.n_candidates = n_candidates
        self.max_exact = max_exact
        self.n_splits = n_splits
        self.costs = costs
        self.cost_budget = cost_budget
        self.n_select = n_select
        self.size = size
        self.exhaustive = exhaustive
        self.coverage_aware = coverage_aware
        self.demote_saturated = demote_saturated
        self.headroom = headroom
        self.ceilings = ceilings
        self.random_state = random_state

    def describe(self) -> dict:
        """What ``fit`` did and why, for the record: steps by kind, the budgets that cut them, scoring rows."""
        if not hasattr(self, "order_"):
            raise MethodError("PredictionGreedy is not fitted: call fit(X) first")
        return {"steps": {m: int(self.method_.count(m)) for m in ("exact", "design", "design (frozen)")},
                "n_candidates": self.budget_["n_candidates"], "max_exact": self.budget_["max_exact"],
                "greedy_steps": self.budget_["greedy_steps"], "budget_rules": self.budget_["rule"] or None,
                "scoring_rows": self.scoring_rule_,
                **({"saturation": self.saturation_} if self.saturation_ is not None else {})}

    def fit(self, X, features=None):
        from harness_ext.methods.engine.subset_cv import model_folds, normalised_weights
        from harness_ext.methods.pounce import make_predictor

        X = check_matrix(X, min_rows=3, min_cols=2)
        n, d = X.shape
        if self.method not in ("auto", "exact", "design"):
            raise MethodError(f"method must be auto, exact or design, got {self.method!r}")
        w = normalised_weights(self.weights, d)
        cost = np.ones(d) if self.costs is None else np.asarray(self.costs, dtype=float)
        if cost.shape != (d,) or not (cost > 0).all():
            raise MethodError(f"costs must be {d} positive numbers")
        est = make_predictor(self.predictor, **(self.predictor_params or {}))
        folds = model_folds(n, self.n_splits, self.random_state)
        allowed, self.saturation_ = None, None
        if self.demote_saturated:
            allowed, self.saturation_ = saturation_plan(X, self.ceilings, self.headroom,
                                                        self.size if self.size is not None else self.n_select)
        fitted = prediction_greedy_order(
            X, est, folds, w, cost, aggregate_weight=self.aggregate_weight, method=self.method,
            n_candidates=self.n_candidates, max_exact=self.max_exact, has_costs=self.costs is not None,
            cost_budget=self.cost_budget, n_select=self.n_select,
            size=self.size if self.size is not None else self.n_select, exhaustive=self.exhaustive,
            coverage_aware=self.coverage_aware, allowed=allowed)
        for name, value in fitted.items():
            setattr(self, name, value)
        return self
