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

The reading is itself an estimate: it reads the model's shift on its ``n`` observed datasets as a sample of its shifts
on all of them, so what is joined is the reading's own interval, not its point. With ``sigma^2`` the sample variance of
the ``n`` observed shifts, a predicted dataset is one more draw (``sigma^2 (1 + 1/n)``) and an aggregate with weights
``W_h`` over the predicted datasets has variance ``sigma^2 (sum_h W_h^2 + (sum_h W_h)^2 / n)`` (the design sd of
:mod:`.frontier_design` with the model's own shift variance in place of the training residuals', which at the
frontier miss the part that grows with the model's distance), taken at Student's t quantile with ``n - 1`` degrees of
freedom. A model with one observed dataset has no spread to read: its reading is joined as a point.

References
----------
Spearman (1904), "The proof and measurement of association between two things" (attenuation of a slope fitted on
noisy measures); Hastie, Tibshirani and Friedman (2009) §7.10 (the cross-validated error the share is made of);
Cochran (1977), *Sampling Techniques*, §2.4-2.6 (a mean from a simple random sample, and the prediction of further
draws); Zhang, Dorner and Hardt (2025) §4 (design-based readings stay honest at the frontier).
"""

from __future__ import annotations

import warnings
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


def reading_spread(X_fit, X_new, O, level: float):
    """Half-width factors of the unshrunk reading (module docstring): ``(t * sigma, n)`` per new row, with ``sigma``
    the sample sd of its observed shifts from the fitted models' means and ``t`` Student's two-sided ``level``
    quantile with ``n - 1`` degrees of freedom; 0 for a row with fewer than two observed datasets."""
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a dataset no fitted model has: no shift from it
        mu = np.nanmean(X_fit, 0)
        on = O & np.isfinite(mu)[None, :] & np.isfinite(X_new)
        s = np.where(on, X_new - mu[None, :], np.nan)
        n = on.sum(1)
        sd = np.where(n >= 2, np.nanstd(s, 1, ddof=1), 0.0)
    t = stats.t.ppf(0.5 + float(level) / 2, np.maximum(n - 1, 1))
    return np.where(n >= 2, t * sd, 0.0), n


def _join(out, lo, hi, rows, centre, half):
    out[lo][rows] = np.fmin(out[lo][rows], centre - half)
    out[hi][rows] = np.fmax(out[hi][rows], centre + half)


def join_unshrunk(est, X_new, O, W, W_extra, out, dist, cals=None):
    """Widen (never narrow) the flagged-above rows' intervals in ``out`` to hold :func:`unshrunk_reading`'s interval
    (module docstring), when the calibration's explained share (``est.calibration_share_``) is below
    :data:`LOW_SHARE`; returns an :class:`Unidentified` record (also ``cals["unidentified"]``), or None when the rule
    does not apply."""
    share = getattr(est, "calibration_share_", None)
    rows = np.flatnonzero(np.asarray(dist) > 0)
    if share is None or share >= LOW_SHARE or rows.size == 0:
        return None
    o = O[rows]
    x = unshrunk_reading(est.X_, X_new[rows], o)
    ts, n = reading_spread(est.X_, X_new[rows], o, float(est.level))
    ok = np.isfinite(x) & ~o
    cell = ts[:, None] * np.sqrt(1.0 + 1.0 / np.maximum(n, 1))[:, None]
    out["lower"][rows] = np.where(ok, np.fmin(out["lower"][rows], x - cell), out["lower"][rows])
    out["upper"][rows] = np.where(ok, np.fmax(out["upper"][rows], x + cell), out["upper"][rows])
    filled = np.where(np.isfinite(x), x, out["mean"][rows])  # no reading of its own: the prediction stands in
    if W is not None and out.get("agg") is not None:
        _join(out, "agg_lo", "agg_hi", rows, (filled * W[rows]).sum(1), ts * _weight_root(W[rows], ok, n))
    if W_extra is not None and out.get("ex") is not None:
        We = np.atleast_2d(W_extra)
        half = np.stack([_weight_root(np.broadcast_to(w, o.shape), ok, n) for w in We], 1)
        _join(out, "ex_lo", "ex_hi", rows, filled @ We.T, ts[:, None] * half)
    rec = Unidentified(share=float(share), raised=rows.tolist())
    if cals is not None:
        cals["unidentified"] = rec
    return rec


def _weight_root(W, ok, n):
    """``sqrt(sum_h W_h^2 + (sum_h W_h)^2 / n)`` over each row's predicted datasets ``h`` (``ok``)."""
    Wh = np.where(ok, W, 0.0)
    return np.sqrt((Wh ** 2).sum(1) + Wh.sum(1) ** 2 / np.maximum(n, 1))
