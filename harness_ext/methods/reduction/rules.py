"""reduce's rules that other commands follow too: the default predictor, the fewest models a prediction needs,
and what is said about columns with a result from fewer than two models.

``harness-ext weights`` completes a sparse matrix under the same rules (:mod:`harness_ext.methods.weighting.complete`),
so they live here, below both the manifest and the weighting analyses.
"""

from __future__ import annotations

from ...report import plural

__all__ = ["DEFAULT_PREDICTOR", "DEFAULT_PREDICTOR_REASON", "MIN_MODELS", "thin_columns"]

#: reduce's default predictor, and why (recorded with the selector's reason when both are the defaults).
DEFAULT_PREDICTOR = "lowrank"
DEFAULT_PREDICTOR_REASON = (
    "lowrank is the default predictor because it uses every observed cell of a sparse matrix (a new model is folded "
    "in from whatever subset cells it has), gives conformal 90% intervals calibrated on held-out training models "
    "observed like the new one (cells and aggregate), and predicted held-out models best in "
    "benchmarks/quality_holdout.py protocol (a) (10 seeded 80/20 model splits, 10% budget, prediction_greedy under "
    "lowrank): aggregate MAE 2.08 points on HELM Classic, 1.56 times lower than k random datasets + Ridge and 1.13 "
    "times lower than BenchPress as published (Zeng & Papailiopoulos, 2026), and 0.62 points, 3.75 and 1.14 times "
    "lower, on the TSC bake-off (benchmarks/HISTORY.md records the run); its mean blends the low-rank fold-in with a "
    "direct ridge regression, the weight chosen on held-out training models. lowrank_bayes (Gibbs) fits 30-40 times "
    "slower")
#: Below this many models selection and prediction rest on too few rankings to run at all.
MIN_MODELS = 4


def thin_columns(columns, counts, noun: str = "datasets") -> tuple:
    """``(names, note)``: the ``columns`` with a result from fewer than two models (``counts``: observed cells per
    column), and the note that says they are kept and predicted from column-level information only (None when
    there are none; ``noun`` names the columns in it): ``reduce``'s rule, which ``harness-ext weights``'
    completion follows."""
    thin = [str(c) for c, n in zip(columns, counts) if n < 2]
    note = None
    if thin:
        are = "is" if len(thin) == 1 else "are"
        note = (f"{plural(len(thin), noun[:-1] + ' has', noun + ' have')} a result from fewer than two models and "
                f"{are} predicted from column-level information only: {', '.join(thin[:5])}" + (" ..." if len(thin) > 5 else ""))
    return thin, note
