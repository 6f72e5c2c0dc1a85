"""More selector parameters for ``quality_holdout.py`` (``--selector-params``): parsed, and completed with each
dataset's ceiling when ``demote_saturated`` asks for it (:mod:`harness_ext.methods.prowl.saturation`).

The ceiling is known where ``quality_frontier_selection.py``'s saturation screen (benchmarks/HISTORY.md,
2026-11-30) knew it: a declared maximum, or every score inside [0, 1] (which ``quality_holdout.aggregate_scale``
maps to 100 points).
"""

from __future__ import annotations


def parse_selector_params(text):
    """``--selector-params``: ``"demote_saturated=true,headroom=0.25"`` -> ``{"demote_saturated": True,
    "headroom": 0.25}`` (true/false, numbers, else the text)."""
    out = {}
    for item in filter(None, (t.strip() for t in (text or "").split(","))):
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--selector-params: {item!r} is not KEY=VALUE")
        low = value.strip().lower()
        if low in ("true", "false"):
            out[key.strip()] = low == "true"
        else:
            try:
                out[key.strip()] = int(low) if low.lstrip("-").isdigit() else float(low)
            except ValueError:
                out[key.strip()] = value.strip()
    return out


def known_ceilings(X, meta):
    """Each dataset's ceiling on the selector's scale (``(a x + c) / 100``): 1 where it is known (a declared
    maximum, or every score of ``X`` inside [0, 1]: ``quality_holdout.aggregate_scale`` maps it to 100 points), None
    elsewhere."""
    from harness_ext.methods.prowl.saturation import unit_ceilings

    declared = [m.get("max_score") is not None for m in meta]
    return [1.0 if known or unit is not None else None for known, unit in zip(declared, unit_ceilings(X))]


def selection_params(selector_params, X_train, meta):
    """The selector parameters of a selection on ``X_train``: ``--selector-params``, with the datasets' ceilings
    (:func:`known_ceilings` on the training models) when ``demote_saturated`` asks for them."""
    params = dict(selector_params or {})
    if params.get("demote_saturated") and params.get("ceilings") is None:
        params["ceilings"] = known_ceilings(X_train, meta)
    return params


def product_plan(N, k, seed, selector, predictor, params=None):
    """``(selector parameters, demoted datasets)`` of ``reduce``'s selection of ``k`` datasets on ``N`` (the
    chance-normalised training scores): its own steps ``read_matrix`` and ``plan_models`` (the predictor, uniform
    weights, the budget's ``size``, the availability rule), with ``params`` (``--selector-params``) as its
    ``--selector-param``. :func:`quality_holdout.choose_subset` and ``product_reselect`` give them to ``reduce``'s
    ``fold_selector``, which, given no similarity, runs the selector's own (Pearson for greedy_coverage), as
    ``reduce`` does."""
    import numpy as np
    import pandas as pd

    from harness_ext.methods.reduction.manifest_steps import plan_models, read_matrix

    df = pd.DataFrame(np.asarray(N, dtype=float), columns=[str(j) for j in range(np.shape(N)[1])])
    facts = read_matrix(df, str(int(k)))
    plan = plan_models(df, facts, selector=selector, predictor=predictor, weighting="uniform", weighting_params=None,
                       random_state=seed, selector_params=params or None)
    return dict(plan.sel_params), [int(j) for j in facts.demoted]
