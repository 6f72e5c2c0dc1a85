"""Aggregates of new or held-out models at the frontier and their fold-in sd (shared by the frontier rules).

:mod:`~harness_ext.methods.engine.frontier` (the frontier folds, the flagged models' intervals) and
:mod:`~harness_ext.methods.engine.frontier_shift` (the hidden shift of models placed high) score and widen the same
aggregates, and :mod:`~harness_ext.methods.engine.frontier_unidentified` joins the same unshrunk reading the
``aggregate_shift`` candidate predicts; they are defined once here.

References
----------
Zhang, Dorner & Hardt, "How Benchmark Prediction from Fewer Data Misses the Mark", NeurIPS 2025, §4.
"""

from __future__ import annotations

import warnings

import numpy as np

from .direct_ridge import direct_predict
from .lowrank import fold_in

__all__ = ["aggregate_sd", "aggregate_shift", "engine_aggregate", "engine_prediction", "held_out_aggregate", "held_out_sd"]


def held_out_aggregate(est, X_true, have, seen, mz, w):
    """Held-out aggregates: ``(truth, prediction, weights renormalised over each row's datasets, ok rows)``."""
    wt = np.where(have, w[None, :], 0.0)
    tot = wt.sum(1, keepdims=True)
    wt = wt / np.where(tot != 0, tot, 1.0)
    x_pred = np.where(seen & have, X_true, est.transform_.inverse_transform(mz))
    ok = (tot[:, 0] != 0) & (have & ~seen).any(1) & (seen & have).any(1)
    return (np.where(have, X_true, 0.0) * wt).sum(1), (np.where(have, x_pred, 0.0) * wt).sum(1), wt, ok


def held_out_errors(est, rec, mz, w, w_points):
    """One frontier fold's aggregate errors (prediction - truth) for its prediction ``mz``, in points: the aggregate
    of weights ``w`` (d,) with each dataset's points per unit in ``w_points = w / sum(w) * factors``. A row's points
    aggregate is its ``w``-weighted mean of points over its datasets, so its error is the ``w_points``-weighted one
    times the row's mean points per unit (exact for a row missing datasets too)."""
    a_true, a_pred, _, ok = held_out_aggregate(est, rec["Tt"], rec["have"], rec["seen"], mz, w_points)
    have = rec["have"]
    per_unit = (have * w_points[None, :]).sum(1) / np.maximum((have * (w / w.sum())[None, :]).sum(1), 1e-300)
    return ((a_pred - a_true) * per_unit)[ok]


def aggregate_sd(est, fi, o, rows, Wr, m_eng):
    """The fold-in's predictive sd of the ``rows``' aggregates with weights ``Wr`` over their new cells."""
    J = np.zeros(fi.sd.shape)
    J[rows] = np.where(o, 0.0, Wr * est.transform_.derivative(m_eng))
    return fi.linear_sd(J)[rows]


def engine_aggregate(est, fi, X_new, O, mz, rows, Wr):
    """``(aggregate, its fold-in sd)`` of ``rows`` with weights ``Wr`` from the engine's own prediction ``mz``."""
    o = O[rows]
    agg = (np.where(o, X_new[rows], est.transform_.inverse_transform(mz[rows])) * Wr).sum(1)
    return agg, aggregate_sd(est, fi, o, rows, Wr, mz[rows])


def engine_prediction(ft, Z_fit, z_in, alpha):
    """``(fold-in, transformed prediction)`` of rows ``z_in`` from the fit ``ft`` on ``Z_fit``: the fold-in's mean
    blended with the direct regression at ``alpha``, as the engine predicts a new model."""
    fi = fold_in(ft, z_in)
    return fi, (fi.mean if alpha <= 0 else (1 - alpha) * fi.mean + alpha * direct_predict(ft, Z_fit, z_in))


def held_out_sd(est, fi, wt, target, mz):
    """The fold-in's predictive sd of held-out aggregates with weights ``wt`` over their ``target`` cells (floored
    at 1e-12 so it can divide a score)."""
    J = np.where(target, wt * est.transform_.derivative(mz), 0.0)
    return np.maximum(fi.linear_sd(J), 1e-12)


def aggregate_shift(X_fit, X_in, O, w):
    """Every cell moved from the fitted models' mean by the row's mean subset shift on the aggregate's scale.

    On the scale of the aggregate weights ``w`` (d,) (a benchmark's points: the weight of a dataset is its points
    per unit), a new model's subset cells lie ``w_j (x_j - mean_j)`` above the fitted models' means; each other
    dataset is predicted at its mean plus the row's average of those shifts, back in its own units (the subset mean
    on the benchmark's scale, read as a shift from the fitted population so datasets of different levels keep
    them). NaN for a dataset of weight 0 (not in the aggregate).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a dataset no fitted model has: NaN, no shift known
        mu = np.nanmean(X_fit, 0)
    on = O & (w[None, :] != 0) & np.isfinite(mu)[None, :]
    shift = np.where(on, w[None, :] * (np.nan_to_num(X_in) - np.nan_to_num(mu)[None, :]), 0.0).sum(1)
    shift = shift / np.maximum(on.sum(1), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(w[None, :] != 0, mu[None, :] + shift[:, None] / w[None, :], np.nan)
