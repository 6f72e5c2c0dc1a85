"""The manifest's selection re-run without each calibration fold, for the nested calibration of intervals.

The engine's calibration (:mod:`harness_ext.methods.engine.newmodel_intervals`) asks for a
``rows -> subset`` function; this one runs the manifest's own selector, parameters, seed and
budget (with the availability rule of :mod:`.budget`) on the rows it is given, so each fold's
held-out errors include the selection's own variance (Hastie, Tibshirani & Friedman 2009, §7.10.2).
"""

from __future__ import annotations

from ...errors import MethodError
from ...plugin_manager import get_registration
from ..engine.newmodel_intervals import CHEAP_SELECTION, FOLD_RESELECTION
from ..pounce import selector_order
from .budget import demote, subset_size

__all__ = ["fold_selector"]


def fold_selector(X, selector: str, *, k: int, sel_params=None, similarity=None, random_state: int = 0,
                  kind: str = "count", value=None, cost_vec=None, fixed=None, mode: str = FOLD_RESELECTION,
                  demoted=()):
    """``rows -> subset``: the manifest's selection (selector, parameters, seed, budget) run on rows ``rows`` of ``X``.

    Only the subset is needed, not a coverage curve: selectors that can stop do so at
    ``k`` datasets (or at the cost budget). ``mode`` as :data:`FOLD_RESELECTION`;
    ``fixed``: the predictor with its settings chosen on every model (``"same"``);
    ``demoted``: the manifest's availability rule (datasets chosen last, :func:`~harness_ext.methods.reduction.budget.demote`);
    ``similarity``: None is the selector's own default, as in ``reduce``'s selection.
    A selector that demotes saturated datasets (``demote_saturated``) leaves, per call, the columns it demoted in
    ``select.saturated`` (one list per call, in call order).
    """
    if mode not in ("design", "same"):
        raise MethodError(f"fold reselection must be 'design' or 'same', got {mode!r}")
    d = X.shape[1]
    reg = get_registration("selectors", selector)
    defaults = reg.cls().get_params()
    params = dict(sel_params or {})
    if "similarity" in defaults:  # none given: the selector's own default, as reduce's selection runs it (pounce's
        # selector_order would put Minkowski for greedy_coverage)
        params["similarity"] = similarity if similarity is not None else params.get("similarity", defaults["similarity"])
    if "gamma" in defaults:
        params["gamma"] = None
    if kind == "cost" and "cost_budget" in defaults:
        params["cost_budget"] = float(value)
    elif "n_select" in defaults and kind != "cost":
        # with demoted datasets, enough steps that k others are in the order before they are moved to its end
        params["n_select"] = int(min(d, k + len(demoted)))
    if mode == "design":
        params.update(CHEAP_SELECTION.get(reg.name, {}))
    elif fixed is not None and "predictor_params" in defaults:
        params["predictor_params"] = {p: fixed.get_params()[p] for p in ("rank", "lam", "scales", "cell_blend", "blend")
                                      if p in fixed.get_params()}

    def select(rows):
        order, est = selector_order(X[rows], selector, random_state=random_state, return_estimator=True, **params)
        sat = (est.describe() if callable(getattr(est, "describe", None)) else {}).get("saturation")
        if sat:  # what this fold's selection demoted, for the manifest
            select.saturated.append([int(j) for j in sat["saturated"]] if sat["applied"] else [])
        order = demote(order, demoted)
        n = subset_size("cost", value, d, None, cost_vec[order]) if kind == "cost" else int(k)
        return order[:n]

    select.saturated = []
    return select
