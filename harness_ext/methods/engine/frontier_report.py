"""What the frontier folds tell a user: the manifest's record of them, and a warning per new model at the frontier.

:func:`frontier_expectation` is what ``reduce`` records (the folds' expected error and coverage for a model beyond
the training models' range); :func:`frontier_warnings` is what ``predict`` says of each flagged model and how its
prediction and intervals were made (:mod:`~harness_ext.methods.engine.frontier`).
"""

from __future__ import annotations

import inspect
from typing import Optional

import numpy as np

from . import frontier as _frontier  # its DESIGN_SCALE read at call time (an option set on that module)
from .frontier import FRONTIER_FOLDS, FRONTIER_QUANTILE, MIN_FRONTIER_MODELS, calibrate_frontier
from .frontier_design import min_calibration_models, min_symmetric_models

__all__ = ["frontier_expectation", "frontier_warnings"]


def frontier_expectation(est, X, subset, w, points=None, reselect=None) -> Optional[dict]:
    """What ``reduce`` records of the frontier: the folds' expected error and coverage for a model beyond the range.

    ``est``: an unfitted predictor with a ``frontier`` parameter (else None); ``X`` the training matrix, ``subset``
    the chosen column indices, ``w`` the aggregate weights (d,). The estimator and weight are chosen and the
    multipliers calibrated on the same folds that give the error; the coverage is leave one geometry out
    (each fold covered by the other folds' multipliers). ``points``: ``(weights, unit)`` of the benchmark's own
    scale (:func:`~harness_ext.methods.reduction.evidence.mixed_points_weights`) when its datasets have different points
    per unit: the folds' error is also given there (``points``); a third entry gives the points aggregate's own
    dataset weights when they are not ``w``. ``reselect``: the calibration folds' subsets (as ``predict`` reads them
    from the manifest); with it, the predictor is first calibrated for a new model observed on the subset, as
    ``predict`` calibrates it (its rank and blend for new models), so the folds' figures are the ones ``predict``'s
    frontier warning quotes.
    """
    params = est.get_params()
    if not params.get("frontier", False):
        return None
    fitted = type(est)(**params).fit(X)
    pattern = np.zeros(X.shape[1], bool)
    pattern[np.asarray(subset, dtype=int)] = True
    if reselect is not None and "reselect" in inspect.signature(fitted.predict_new_models).parameters:
        # One row inside the population, observed on the subset: only the calibration's choices are kept.
        with np.errstate(all="ignore"):
            fitted.predict_new_models(np.where(pattern, np.nanmean(X, axis=0), np.nan)[None, :],
                                      weights=None if w is None else np.asarray(w, dtype=float), reselect=reselect)
    cal = calibrate_frontier(fitted, pattern, None if w is None else np.asarray(w, dtype=float), 1,
                             w_points=None if points is None else np.asarray(points[0], dtype=float),
                             w_base=None if points is None or len(points) < 3 else np.asarray(points[2], dtype=float))
    if cal is None:
        return {"edge_quantile": FRONTIER_QUANTILE, "calibrated": False,
                "design_interval": True,
                "estimator": _frontier.SMALL_CANDIDATE or "engine",
                "reason": f"fewer than {MIN_FRONTIER_MODELS} training models (a small population): frontier models "
                          "are flagged and predicted by "
                          + (f"the engine blended with {_CANDIDATE_WORDS[_frontier.SMALL_CANDIDATE]}"
                             if _frontier.SMALL_CANDIDATE else "the engine")
                          + " (not chosen on folds), their aggregate joined with a design-style interval"}
    thin = _frontier.small_rule_replaces(cal, float(fitted.level))
    return {"edge_quantile": FRONTIER_QUANTILE, "calibrated": True, "n_models": cal.n_models,
            "folds": [list(f) for f in FRONTIER_FOLDS],
            # with thin folds the small-population rule predicts; the folds' figures below are their own blend's
            "estimator": (_frontier.SMALL_CANDIDATE or "engine") if thin else (cal.candidate or "engine"),
            "weight": _frontier.SMALL_WEIGHT if thin else cal.weight, "held_out_models": cal.n_distinct,
            **({"folds_estimator": cal.candidate or "engine", "folds_weight": cal.weight} if thin else {}),
            "design_interval": cal.n_distinct < min_calibration_models(float(fitted.level)),
            "aggregate_mae": cal.aggregate_mae,
            "aggregate_bias": cal.aggregate_bias, "engine_aggregate_mae": cal.engine_aggregate_mae,
            "aggregate_coverage_90": cal.aggregate_coverage, "cell_coverage_90": cal.cell_coverage,
            **({"points": {"unit": points[1], "aggregate_mae": cal.points_mae, "aggregate_bias": cal.points_bias}}
               if cal.points_mae is not None else {})}


#: What each point candidate of :mod:`~harness_ext.methods.engine.frontier` is, in a warning's words.
_CANDIDATE_WORDS = {
    "unshrunk_level": "the engine's fold-in with its level left free",
    "position_line": "each dataset's least-squares line on the model's position among the training models",
    "subset_mean": "the subset's mean score given to every dataset",
    "standard_mean": "every dataset placed as many of its standard deviations from its mean as the subset is on "
                     "average",
    "aggregate_shift": "every dataset moved from the training models' mean by the subset's mean shift in the "
                       "aggregate's points",
    "benchpress": "BenchPress's low-rank completion",
}


def frontier_warnings(models, distance, calibrations, level: float = 0.9) -> list:
    """One warning per new model beyond the training models' edge (``distance`` != 0), with its distance and how
    its prediction and intervals were made (:mod:`~harness_ext.methods.engine.frontier`); ``level`` the intervals'."""
    if distance is None:
        return []
    out = []
    for model, dist in zip(models, distance):
        if not dist:
            continue
        cal = calibrations.get(1 if dist > 0 else -1)
        side = "above" if dist > 0 else "below"
        blend = "the engine" if cal is None or cal.candidate is None else _blend_words(cal.weight, cal.candidate)
        small = cal is not None and _frontier.small_rule_replaces(cal, level)
        how = (_small_population_words() if cal is None else _thin_words(cal, level) if small else
               f"predicted by {blend} and "
               f"with intervals widened on frontier folds (the folds' own aggregate coverage "
               f"{cal.aggregate_coverage if cal.aggregate_coverage is not None else float('nan'):.2f}, over "
               f"{cal.n_distinct} different training models held out; a model beyond every training model can be "
               "covered less often)")
        if cal is not None and cal.max_distance > 0 and abs(dist) > cal.max_distance:
            how += (f"; it lies beyond the frontier folds' reach ({cal.max_distance:.2f} sd): the calibration did not see "
                    "an extrapolation this far")
        if cal is not None and cal.n_distinct < min_calibration_models(level) and not small:
            how += (f"; the folds held out only {cal.n_distinct} different models (a two-sided {level:.0%} interval "
                    f"needs {min_calibration_models(level)}), so beyond every training model the aggregate's "
                    "interval is also joined with a design-style one"
                    + (" (scaled on the folds' own errors where they held out at least "
                       f"{min_symmetric_models(level)} and saw extrapolations this far, else wide)"
                       if _frontier.DESIGN_SCALE == "folds" else " and is wide"))
        out.append(f"{model}: at the frontier, {abs(dist):.2f} sd {side} the manifest's models' "
                   f"{'upper' if dist > 0 else 'lower'} edge of subset scores: {how}")
    return (out + _shift_warnings(models, calibrations.get("shift")) + _prior_warnings(models, calibrations.get("prior"))
            + _unidentified_warnings(models, calibrations.get("unidentified")))


def _blend_words(weight: float, candidate: str) -> str:
    """The engine blended with ``candidate`` at most at ``weight``, said in words."""
    return (f"the engine blended with up to {weight:g} x {candidate} "
            f"({_CANDIDATE_WORDS.get(candidate, 'an estimator that does not shrink to the training models')}; "
            "the share growing from the edge to the training range)")


def _small_rule_words(cells: str) -> str:
    """The small-population rule's prediction and intervals in words (:data:`~harness_ext.methods.engine.frontier.SMALL_CANDIDATE`,
    :data:`~harness_ext.methods.engine.frontier.SMALL_INTERVAL`), ``cells`` saying how the cell intervals are made."""
    cand, every = _frontier.SMALL_CANDIDATE, _frontier.SMALL_INTERVAL == "flagged"
    point = ("predicted by the engine alone (it shrinks toward the training models, so likely too low)" if cand is None
             else f"predicted by {_blend_words(_frontier.SMALL_WEIGHT, cand)}, not chosen on folds")
    where = "its" if every else "beyond every training model its"
    return (f"{point}; {cells}, and {where} aggregate's is joined with a design-style interval (the level read from "
            "the subset, every other dataset one draw of the training models' residual spread)")


def _small_population_words() -> str:
    """How a flagged model of a population too small for frontier folds is predicted."""
    return (f"small population: fewer than {_frontier.MIN_FRONTIER_MODELS} training models, too few for frontier folds; "
            + _small_rule_words("the cell intervals are the model folds' joined with the fold-in's normal interval"))


def _thin_words(cal, level: float) -> str:
    """How a flagged model is predicted when the frontier folds are thin
    (:func:`~harness_ext.methods.engine.frontier.small_rule_replaces`)."""
    return (f"the frontier folds held out only {cal.n_distinct} different models (a two-sided {level:.0%} "
            f"interval needs {min_calibration_models(level)}), too few to choose a blend on, so as for a small "
            "population it is "
            + _small_rule_words("the cell intervals are the model folds' joined with the fold-in's normal interval "
                                "and widened on the frontier folds"))


def _raised_warnings(models, cal, why) -> list:
    """One warning ``"<model>: <why(cal)>"`` per new model in ``cal.raised`` (none without ``cal``)."""
    if cal is None or not getattr(cal, "raised", ()):
        return []
    models, text = list(models), why(cal)
    return [f"{models[r]}: {text}" for r in cal.raised]


def _prior_warnings(models, cal) -> list:
    """One warning per new model whose aggregate upper bound the cross-benchmark allowance raised
    (:mod:`~harness_ext.methods.engine.frontier_prior`)."""
    from .frontier_prior import PRIOR_EDGE

    return _raised_warnings(models, cal, lambda c: (
        f"its predicted strength is in the manifest's models' top {1 - PRIOR_EDGE:.0%}: the aggregate's upper bound is "
        f"lifted toward the prediction plus {c.multiplier:.2f} design-style sd (in full above the strongest model), "
        "the allowance learnt on other benchmarks' frontier models (their predictions there were too low by more than "
        "folds inside the training models show)"))


def _shift_warnings(models, cal) -> list:
    """One warning per new model whose aggregate upper bound the hidden-shift rule raised
    (:mod:`~harness_ext.methods.engine.frontier_shift`)."""
    return _raised_warnings(models, cal, lambda c: (
        "its subset lies inside the manifest's models' range but its predicted strength is in their "
        f"top {1 - c.edge:.0%}, where a frontier model's subset can hide part of its strength: the aggregate's "
        f"upper bound is raised by {c.q_upper:.2f} sd (folds that held out the strongest training models; "
        f"{c.n_scores} scores)"))


def _unidentified_warnings(models, cal) -> list:
    """One warning per new model whose intervals were joined with the unshrunk reading
    (:mod:`~harness_ext.methods.engine.frontier_unidentified`)."""
    return _raised_warnings(models, cal, lambda c: (
        f"the subset predicts only {max(c.share, 0.0):.0%} of the manifest's models' spread on the aggregate "
        "(cross-validated): they differ little beyond what their subset cells show by chance, so how far the other "
        "datasets move for a model stronger than all of them is not known from them; its intervals are widened to "
        "hold the reading that does not shrink toward them as well (every other dataset moved by the model's mean "
        "subset shift)"))
