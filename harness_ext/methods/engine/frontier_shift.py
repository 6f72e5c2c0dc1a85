"""The hidden shift of a frontier model whose subset does not show its strength: an upper bound from protocol folds.

A new model at the frontier is stronger than the training models on its full benchmark; its subset cells show only
part of that. The models whose subset shows least of it carry the largest hidden shift, and their subset position
can sit inside the training models' range, so the frontier flag of :mod:`~harness_ext.methods.engine.frontier`
(subset position beyond the upper quartile) never reaches them and their intervals stay the model folds' (which
only ever held out models drawn like the training ones).

The rule here mimics the frontier split inside the training models: for each geometry of the frontier folds the
predictor is refitted on the weakest training models by their full strength (mean transformed score over every
cell they have) and *every* held-out strongest model is predicted from its subset cells, whether or not its subset
position is beyond the fit's edge. Each held-out model is placed by its *predicted* strength (the mean of its
completed transformed row) as a quantile ``u`` of the fitted models' predicted strengths (each predicted from its
own subset cells, like with like). A new model the frontier flag does not mark, placed at ``u >=``
:data:`SHIFT_EDGE` of the training models' predicted strengths, is a candidate for a hidden shift: the upper end of
its aggregate interval is raised (never lowered) to the engine's aggregate plus the split-conformal ``level``
quantile of the held-out models' signed aggregate scores ``(truth - engine) / sd`` among those placed at ``u >=``
:data:`SHIFT_EDGE`. The lower end is left to the usual calibration: frontier errors are under-predictions, so the
whole miss budget goes to the upper side (:data:`ONE_SIDED`; an asymmetric interval as in Romano, Patterson &
Candes 2019, each side its own quantile). Flagged models keep the frontier folds' intervals.

References
----------
Zhang, Dorner & Hardt, "How Benchmark Prediction from Fewer Data Misses the Mark", NeurIPS 2025, §4 (the
frontier split: fit on the weakest, predict the strongest by full aggregate); Romano, Patterson & Candes (NeurIPS
2019) §3 (two one-sided conformal quantiles); Lei et al. (JASA 2018) §2 (split-conformal rank).
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from .conformal import conformal_quantile
from .frontier_aggregate import engine_aggregate, engine_prediction, held_out_aggregate, held_out_sd

__all__ = ["ONE_SIDED", "SHIFT_EDGE", "ShiftCalibration", "calibrate_shift", "predicted_quantile", "predicted_strength",
           "reference_strength", "widen_shift"]

#: The predicted-strength quantile of the training models from which a new model's upper bound is raised (the
#: frontier flag's own quantile, :data:`~harness_ext.methods.engine.frontier.FRONTIER_QUANTILE`); None: off.
SHIFT_EDGE = 0.75
#: The whole miss budget in the upper tail (the upper bound at the ``level`` quantile of the scores): frontier
#: errors are under-predictions, so a frontier model falls below its lower bound about never.
ONE_SIDED = True


class ShiftCalibration(NamedTuple):
    """The protocol folds' upper multiplier for new models placed high among the training models."""

    edge: float
    q_upper: Optional[float]
    n_scores: int
    #: The engine's mean signed aggregate error (prediction minus truth) of the held-out models scored.
    bias: Optional[float]
    #: The new models (row indices) whose aggregate upper bound the rule raised.
    raised: tuple = ()


def predicted_strength(z_in, mean):
    """Predicted strength: the mean of each row's transformed cells, the observed ones kept."""
    return np.where(np.isnan(z_in), mean, z_in).mean(1)


def predicted_quantile(strength_new, strength_ref) -> np.ndarray:
    """The share of the reference models whose predicted strength lies below each new one's (mid-rank ties)."""
    ref = np.sort(np.asarray(strength_ref, dtype=float))
    s = np.asarray(strength_new, dtype=float)
    if ref.size == 0:
        return np.zeros_like(s)
    lo, hi = np.searchsorted(ref, s, "left"), np.searchsorted(ref, s, "right")
    return (lo + hi) / 2.0 / ref.size


def reference_strength(est, fit, pattern, alpha, rows=None) -> np.ndarray:
    """Predicted strengths of the fitted models (``rows`` of ``est.Z_``), each from its own cells on ``pattern``."""
    Z = est.Z_ if rows is None else est.Z_[rows]
    z_in = np.where(pattern[None, :], Z, np.nan)
    return predicted_strength(z_in, engine_prediction(fit, Z, z_in, alpha)[1])


def calibrate_shift(est, pattern, w, records, alpha, edge, level) -> Optional[ShiftCalibration]:
    """Scores of every held-out model of the frontier folds ``records`` placed at or above ``edge``."""
    if w is None or not records:
        return None
    scores, errs = [], []
    for rec in records:
        ft, rows, held = rec["fit"], rec["rows"], rec["held_all"]
        Z_fit = est.Z_[rows]
        Zt, Xt = est.Z_[held], est.X_[held]
        have = ~np.isnan(Zt)
        seen = pattern[None, :] & have
        z_in = np.where(seen, Zt, np.nan)
        fi, mz = engine_prediction(ft, Z_fit, z_in, alpha)
        u = predicted_quantile(predicted_strength(z_in, mz), reference_strength(est, ft, pattern, alpha, rows))
        a_true, a_pred, wt, ok = held_out_aggregate(est, Xt, have, seen, mz, w)
        target = have & ~seen
        sd = held_out_sd(est, fi, wt, target, mz)
        pick = ok & (u >= edge)
        scores.append(((a_true - a_pred) / sd)[pick])
        errs.append((a_pred - a_true)[pick])
    s = np.concatenate(scores)
    if s.size == 0:
        return ShiftCalibration(float(edge), None, 0, None)
    tail = float(level) if ONE_SIDED else 1.0 - (1.0 - float(level)) / 2.0
    q = max(conformal_quantile(s, tail), 0.0)
    return ShiftCalibration(float(edge), float(q), int(s.size), float(np.concatenate(errs).mean()))


def widen_shift(est, fi, mz, X_new, O, W, out, cal, rows) -> ShiftCalibration:
    """Raise (never lower) the aggregate upper bound of the new models ``rows`` (placed at or above ``cal.edge`` by
    :func:`predicted_quantile`); returns ``cal`` with the rows whose bound it raised in ``raised``, so ``predict``
    can say so."""
    rows = np.asarray(rows, dtype=int)
    if cal is None or cal.q_upper is None or W is None or out.get("agg") is None or rows.size == 0:
        return cal
    agg, sd = engine_aggregate(est, fi, X_new, O, mz, rows, W[rows])
    hi = agg + cal.q_upper * sd
    raised = hi > out["agg_hi"][rows]
    out["agg_hi"][rows] = np.maximum(out["agg_hi"][rows], hi)
    return cal._replace(raised=tuple(int(r) for r in rows[raised]))
