"""A stronger model's intervals when the training models' spread is not predicted: the unshrunk reading joined.

When the subset predicts little of the training models' spread on the aggregate out of sample, they differ by little
more than noise, and the fit's relation between the subset and the other datasets is flat. A model stronger than all
of them is then predicted near their mean, and nothing among them, the frontier folds included, can say how far the
other datasets move with it. The bundled Pythia checkpoints' weakest half is one such population: 96% of their spread
on the chosen subset is binomial sampling noise, the fit under-predicted the strongest 30% by 0.018 MMLU accuracy, and
carrying the subset's shift over with slope 1 over-predicted them by 0.016 (``benchmarks/screens/noise``). For a model
above the training models' edge, when the model folds' explained share (the cross-validated R squared of the
aggregate, :func:`~harness_ext.methods.engine.newmodel_intervals.held_out_share`) is below :data:`LOW_SHARE`, every
interval (cells, the aggregate, each further aggregate) is widened to hold the unshrunk reading too: each predicted
dataset at its training mean plus the model's mean subset shift from theirs. The interval then spans what the data
cannot tell apart.

References
----------
Spearman (1904), "The proof and measurement of association between two things" (attenuation of a slope fitted on
noisy measures); Hastie, Tibshirani and Friedman (2009) §7.10 (the cross-validated error the share is made of).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .frontier_aggregate import aggregate_shift

#: Below this explained share the training models' spread is said to be unpredicted (``reduce`` and ``predict`` say it
#: in the same words; fixed at one half before it was measured on any frontier).
LOW_SHARE = 0.5


@dataclass
class Unidentified:
    """What :func:`join_unshrunk` did: the explained share and the new models (rows) whose intervals it widened."""

    share: float
    raised: list = field(default_factory=list)


def unshrunk_reading(X_fit, X_new, O) -> np.ndarray:
    """Each dataset of the new models at the fitted models' mean plus the model's mean subset shift from their means
    (on the fit's input scale: :func:`~.frontier_aggregate.aggregate_shift` with unit weights); observed cells as
    observed. NaN where no fitted model has the dataset."""
    return np.where(O, X_new, aggregate_shift(X_fit, X_new, O, np.ones(X_new.shape[1])))


def join_unshrunk(est, X_new, O, W, W_extra, out, dist, cals=None):
    """Widen (never narrow) the flagged-above rows' intervals in ``out`` to hold :func:`unshrunk_reading`, when the
    calibration's explained share (``est.calibration_share_``) is below :data:`LOW_SHARE`; returns an
    :class:`Unidentified` record (also ``cals["unidentified"]``), or None when the rule does not apply."""
    share = getattr(est, "calibration_share_", None)
    rows = np.flatnonzero(np.asarray(dist) > 0)
    if share is None or share >= LOW_SHARE or rows.size == 0:
        return None
    x = unshrunk_reading(est.X_, X_new[rows], O[rows])
    ok = np.isfinite(x) & ~O[rows]
    out["lower"][rows] = np.where(ok, np.fmin(out["lower"][rows], x), out["lower"][rows])
    out["upper"][rows] = np.where(ok, np.fmax(out["upper"][rows], x), out["upper"][rows])
    filled = np.where(np.isfinite(x), x, out["mean"][rows])  # no reading of its own: the prediction stands in
    if W is not None and out.get("agg") is not None:
        p = (filled * W[rows]).sum(1)
        out["agg_lo"][rows] = np.fmin(out["agg_lo"][rows], p)
        out["agg_hi"][rows] = np.fmax(out["agg_hi"][rows], p)
    if W_extra is not None and out.get("ex") is not None:
        p = filled @ np.atleast_2d(W_extra).T
        out["ex_lo"][rows] = np.fmin(out["ex_lo"][rows], p)
        out["ex_hi"][rows] = np.fmax(out["ex_hi"][rows], p)
    rec = Unidentified(share=float(share), raised=rows.tolist())
    if cals is not None:
        cals["unidentified"] = rec
    return rec
