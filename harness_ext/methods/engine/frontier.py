"""New models outside the population a predictor was fitted on: detection, point prediction, intervals.

A routine new model (a new checkpoint, the next release) is usually stronger than every model a reduction
saw. The low-rank fold-in places it with an empirical prior (the fitted models' factors), so its predictions
shrink toward the population, and the model-fold calibration only ever holds out models drawn like the
training ones: at the frontier the predictions are too low and the intervals too narrow (Zhang, Dorner &
Hardt 2025 find every benchmark-prediction method degrades there).

* **Detection.** A new model's *position* is the mean of its transformed (per-dataset z-scored) subset
  cells; its *distance* is how far that position lies beyond the training models' range of the same
  quantity, in units of its spread over the training models (0 inside the range). The position is what a
  new model reveals and what orders the models at the frontier: on the shared matrices' frontier splits
  (``benchmarks/quality_holdout.py --protocols f``) it ranks the held-out models' aggregate errors as well
  as a leverage in the loading space, and needs no fit.
* **Frontier folds.** The training models are ordered by their position on the new models' pattern of
  cells; for each geometry of :data:`FRONTIER_FOLDS` the predictor is refitted on the lowest fraction and
  the highest held out (and the mirror image for models below the range), so the held-out models are
  outside their fit's population as a frontier model is outside the manifest's.
* **Point prediction.** On those folds, the engine's prediction is blended with estimators that do not
  shrink to the population (:data:`CANDIDATES`): the fold-in with a free level, a per-dataset least-squares line
  on the position (the subset mapped through a monotone per-dataset relation), the subset mean on the input scale,
  on the standardised scale, and on the aggregate's own scale (each dataset moved from the fitted models' mean by
  the subset's mean shift in the aggregate's points). A flagged model gets the blend's weight times its
  :func:`blend_ramp` (0 at the edge, 1 at the training models' extreme and beyond), the folds' held-out models the
  same ramp, and the candidate and weight with the lowest held-out aggregate error (cells without weights) are
  used.
* **Intervals.** Signed scores ``(truth - prediction) / sd`` from the folds (``sd`` the fold-in's predictive sd
  of the cell or aggregate) give a lower and an upper split-conformal quantile at ``(1 - level) / 2`` each. Each
  fold's scores are those of the estimator chosen on the other folds (the choice's own error included). Joined
  with the model-fold (CV+) interval: a flagged model's interval is never narrower than it would be unflagged.
  Models inside the edges keep the model-fold intervals. When the folds held out fewer different models than a
  two-sided interval at the predictor's level needs (19 at 90%; the geometries overlap, so a matrix of 60 models
  has 18), the tail quantiles are not identified: the aggregate of a flagged model at or beyond the training
  models' extreme position is then also joined with a design-style interval
  (:mod:`~harness_ext.methods.engine.frontier_design`; its multiplier is the folds' symmetric quantile of
  ``|error| / design sd`` when they held out at least 9 different models and the model lies within their reach, else
  the normal quantile), and the warning says so. A model *not* flagged but placed in the training models' top
  quarter by its predicted strength gets its aggregate's upper bound raised by the hidden-shift rule
  (:mod:`~harness_ext.methods.engine.frontier_shift`). Last, a model placed in their top tenth gets its share of a
  cross-benchmark allowance on its aggregate's upper bound (:mod:`~harness_ext.methods.engine.frontier_prior`: learnt
  on other leaderboards' frontiers, since folds inside the training models see almost none of the shift). The
  scores are not scaled by a distance: the folds'
  held-out models fit worse and lie farther beyond their fit than models at the real frontier, so a scale learnt
  on them narrowed the frontier's intervals (``docs/frontier.md``).
* **A small population.** With fewer than :data:`MIN_FRONTIER_MODELS` training models there are no folds: a flagged
  model gets the engine blended with :data:`SMALL_CANDIDATE` (the fold-in with a free level) on its ramp, and its
  aggregate the design-style interval (:data:`SMALL_INTERVAL`), the rule chosen on subsampled shared matrices.

References
----------
Zhang, Dorner & Hardt, "How Benchmark Prediction from Fewer Data Misses the Mark", NeurIPS 2025, §4
(extrapolation to stronger models); Lei et al. (JASA 2018) §5.2 (locally weighted split conformal: the
score divided by a scale); Romano, Patterson & Candes (NeurIPS 2019) §3 (two one-sided quantiles).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .conformal import _normal_quantile, conformal_quantile
from .frontier_aggregate import aggregate_sd as _aggregate_sd
from .frontier_aggregate import engine_aggregate as _engine_aggregate
from .frontier_aggregate import held_out_aggregate as _aggregate
from .frontier_calibration import (MIN_FRONTIER_MODELS, WEIGHTED_CANDIDATES, _blend, _candidate, _ramped, _weighted,
                                   blend_ramp, calibrate_frontier, frontier_distance, frontier_folds, positions)
from .frontier_calibration import (  # noqa: F401 - importable from here as before the calibration moved
    CANDIDATES, FRONTIER_FOLDS, FRONTIER_QUANTILE, FRONTIER_WEIGHTS, LEVEL_SCALE, OPTIONAL_CANDIDATES,
    FrontierCalibration, _aggregate_shift, _engine_prediction, _fold_loss, _fold_records, _held_out_sd, _line,
    _scores, _standard_mean, _two_sided, benchpress_fill, fold_in, held_out_errors)
from .frontier_design import (design_aggregate_sd, design_cell_sd, distinct_held_out, min_calibration_models,
                              min_symmetric_models)
from .frontier_unidentified import join_unshrunk

__all__ = ["CANDIDATES", "OPTIONAL_CANDIDATES", "WEIGHTED_CANDIDATES", "FRONTIER_FOLDS", "FRONTIER_WEIGHTS",
           "FRONTIER_QUANTILE", "MIN_FRONTIER_MODELS", "FrontierCalibration", "apply_frontier", "blend_ramp",
           "calibrate_frontier", "frontier_distance", "frontier_folds", "positions"]


def apply_frontier(est, fit, fi, mz, z, X_new, O, W, w_cal, out, W_extra=None, extra_truth=None):
    """Flag new models beyond the training range and replace their prediction and intervals.

    ``out``: dict with ``mean``, ``lower``, ``upper``, ``agg``, ``agg_lo``, ``agg_hi`` (own scale), updated
    in place for flagged rows; with ``W_extra`` (k, d), also ``ex``, ``ex_lo``, ``ex_hi`` (n, k): each further
    aggregate (the benchmark's own score) is re-centred on the new cells and widened on frontier folds
    calibrated with its own weights (scored against ``extra_truth``, default the fitted matrix), as if it were the
    only aggregate. Returns
    ``(distance (n,), {direction: FrontierCalibration})``.
    """
    pattern = O.any(0)
    pos_train = positions(est.Z_, pattern)
    pos_new = positions(z, pattern)
    dist = frontier_distance(pos_new, pos_train)
    cals, upper_records = {}, None
    for direction in (1, -1):
        rows = np.flatnonzero(direction * dist > 0)
        if rows.size == 0:
            continue
        records = frontier_folds(est, pattern, direction)  # the refits, shared by every aggregate's calibration
        if direction > 0:
            upper_records = records
        cal = calibrate_frontier(est, pattern, w_cal, direction, records=records)
        cals[direction] = cal
        small = cal is None or small_rule_replaces(cal, float(est.level))
        if small or cal.q_cell is None:
            ramp = blend_ramp(pos_new[rows], pos_train, direction)
            if small:  # too few training models for frontier folds: nothing to choose a blend on
                m_small = _small_population(est, fit, fi, mz, z, X_new, O, W, w_cal, out, rows, pos_new, pos_train,
                                            direction, W_extra)
                if cal is not None and m_small is not None:
                    if cal.q_cell is not None:  # thin folds: their cell multipliers still apply around the new centre
                        q_lo, q_hi = _ramped(cal.q_cell, cal.q_cell_engine, ramp)
                        _widen_cells(est, out, rows, X_new, O, m_small, fi.sd[rows], q_lo[:, None], q_hi[:, None])
                    _widen_thin_cells(est, fi, out, rows, X_new, O, m_small)
            _widen_thin(est, out, rows if small and SMALL_INTERVAL == "flagged" else rows[ramp >= 1], O, W, W_extra)
            continue
        o = O[rows]
        m_eng = mz[rows]
        ramp = blend_ramp(pos_new[rows], pos_train, direction)
        if cal.candidate is not None and cal.weight > 0:
            c = _candidate(est, cal.candidate, fit, est.Z_, pos_train, z[rows], np.where(o, X_new[rows], np.nan), o,
                           X_fit=est.X_, w=w_cal)
            a = cal.weight * ramp[:, None]
            m_eng = (1 - a) * m_eng + a * c
        out["mean"][rows] = np.where(o, X_new[rows], est.transform_.inverse_transform(m_eng))
        # Widen, never narrow: the frontier interval joined with the model folds' (frontier folds inside the training
        # models see smaller extrapolations than a model far beyond them: their quantiles alone under-covered), and
        # inside the range with the engine's own prediction and frontier multipliers (the ramped blend's alone
        # lowered Pythia MMLU's strongest checkpoints' aggregate coverage from 0.65 to 0.52).
        q_lo, q_hi = _ramped(cal.q_cell, cal.q_cell_engine, ramp)
        _widen_cells(est, out, rows, X_new, O, m_eng, fi.sd[rows], q_lo[:, None], q_hi[:, None])
        inside = rows[ramp < 1] if cal.candidate is not None and cal.weight > 0 else rows[:0]
        if inside.size and cal.q_cell_engine is not None:  # inside the range: never narrower than the engine's own
            _widen_cells(est, out, inside, X_new, O, mz[inside], fi.sd[inside], *cal.q_cell_engine)
        if W is not None and cal.q_aggregate is not None:
            agg = (out["mean"][rows] * W[rows]).sum(1)
            out["agg"][rows] = agg
            _widen(out, "agg_lo", "agg_hi", rows, agg, _aggregate_sd(est, fi, o, rows, W[rows], m_eng),
                   _ramped(cal.q_aggregate, cal.q_aggregate_engine, ramp))
            if inside.size and cal.q_aggregate_engine is not None:
                _widen(out, "agg_lo", "agg_hi", inside, *_engine_aggregate(est, fi, X_new, O, mz, inside, W[inside]),
                       cal.q_aggregate_engine)
        if W_extra is not None:
            eng = (X_new, O, mz, inside)
            _widen_extra(est, fi, pattern, direction, rows, o, m_eng, out, W_extra, ramp, records, eng, extra_truth)
        if is_thin(est, cal):
            sel = np.ones(rows.size, bool) if THIN_RULE == "design_all" else ramp >= 1
            far = rows[sel]
            c = _design_multiplier(est, records, w_cal, cal)
            # within the folds' reach the folds calibrate the design-style sd; beyond it, the normal quantile
            z_far = None if c is None else np.where(direction * dist[far] > cal.max_distance, np.nan, c)
            _widen_thin(est, out, far, O, W, W_extra, z_far)
            _widen_thin_cells(est, fi, out, far, X_new, O, m_eng[sel])
    u = _placement(est, fit, mz, z, O, pattern) if W is not None and out.get("agg") is not None else None
    _hidden_shift(est, fi, mz, X_new, O, W, w_cal, out, pattern, upper_records, cals, dist == 0, u)
    _prior_allowance(est, O, W, out, dist, u, cals, W_extra)
    join_unshrunk(est, X_new, O, W, W_extra, out, dist, cals)  # an unpredicted population: the unshrunk reading too
    return dist, cals


#: Below :data:`MIN_FRONTIER_MODELS` training models there are no frontier folds to choose a blend on. A flagged model's
#: prediction is then the engine's blended with this estimator that does not shrink (None: the engine's alone), at
#: :data:`SMALL_WEIGHT` times its :func:`blend_ramp`, and :data:`SMALL_INTERVAL` says which flagged models get the
#: design-style aggregate interval: "flagged" (every one) or "far" (at or beyond the training models' extreme
#: position). Chosen on the shared matrices with >= 60 models subsampled to 32 and 36 (16 and 18 training models on
#: the frontier split; ``docs/frontier.md``): the fold-in with a free level and the design interval for every flagged
#: model lowered the frontier aggregate error on four of five and brought the coverage from 0.81 to 0.91.
SMALL_CANDIDATE: Optional[str] = "unshrunk_level"
SMALL_WEIGHT = 1.0
SMALL_INTERVAL = "flagged"


def _small_population(est, fit, fi, mz, z, X_new, O, W, w_cal, out, rows, pos_new, pos_train, direction,
                      W_extra=None):
    """The flagged ``rows`` of a population too small for frontier folds re-centred on the engine blended with
    :data:`SMALL_CANDIDATE` (``aggregate_shift`` without aggregate weights: ``standard_mean``); their cell and aggregate
    intervals joined (never narrowed) with the model folds' own moved to the new centre, cells also with the normal
    quantile of the fold-in's sd around it."""
    cand = SMALL_CANDIDATE
    if cand is None or SMALL_WEIGHT <= 0 or rows.size == 0:
        return None
    if cand in WEIGHTED_CANDIDATES and w_cal is None:
        cand = "standard_mean"
    o = O[rows]
    c = _candidate(est, cand, fit, est.Z_, pos_train, z[rows], np.where(o, X_new[rows], np.nan), o, X_fit=est.X_,
                   w=w_cal)
    a = SMALL_WEIGHT * blend_ramp(pos_new[rows], pos_train, direction)[:, None]
    m_new = (1 - a) * mz[rows] + a * c
    out["mean"][rows] = np.where(o, X_new[rows], est.transform_.inverse_transform(m_new))
    q = _normal_quantile(float(est.level))
    _widen_cells(est, out, rows, X_new, O, m_new, fi.sd[rows], -q, q)
    keys = [("agg", "agg_lo", "agg_hi", None if W is None else W[rows], None)]
    if W_extra is not None:
        keys += [("ex", "ex_lo", "ex_hi", u, k) for k, u in enumerate(np.atleast_2d(W_extra))]
    for centre, lo, hi, u, k in keys:
        if u is None or out.get(centre) is None:
            continue
        idx = rows if k is None else (rows, k)
        shift = (out["mean"][rows] * u).sum(1) - out[centre][idx]  # the model folds' interval moved with its centre
        out[centre][idx] += shift
        out[lo][idx] = np.minimum(out[lo][idx], out[lo][idx] + shift)
        out[hi][idx] = np.maximum(out[hi][idx], out[hi][idx] + shift)
    return m_new


def _placement(est, fit, mz, z, O, pattern):
    """Each new model's predicted strength as a quantile of the training models' (each from its own cells on
    ``pattern``): :func:`~harness_ext.methods.engine.frontier_shift.predicted_quantile`."""
    from . import frontier_shift as fs

    alpha = float(getattr(est, "blend_new_", est._uncalibrated_blend()))
    strength = fs.predicted_strength(np.where(O, z, np.nan), mz)
    return fs.predicted_quantile(strength, fs.reference_strength(est, fit, pattern, alpha))


def _prior_allowance(est, O, W, out, dist, u, cals, W_extra):
    """The aggregate upper bound of the new models placed above the training models' ``PRIOR_EDGE`` quantile of
    predicted strength ``u`` raised by their share of the cross-benchmark allowance
    (:mod:`~harness_ext.methods.engine.frontier_prior`): the folds inside the training models see almost none of the
    real frontier's under-prediction. Recorded in ``cals["prior"]``."""
    from . import frontier_prior as fp

    if u is None:
        return
    g = fp.share(dist, u, fp.PRIOR_EDGE)
    rows = np.flatnonzero(g > 0)
    cal = fp.widen_prior(est.X_, O, W, out, rows, float(est.level), W_extra, g[rows])
    if cal is not None:
        cals["prior"] = cal


def _hidden_shift(est, fi, mz, X_new, O, W, w_cal, out, pattern, records, cals, unflagged, u):
    """The aggregate upper bound of the ``unflagged`` new models placed high by their predicted strength ``u``
    (:func:`_placement`), raised by the protocol folds' hidden-shift quantile
    (:mod:`~harness_ext.methods.engine.frontier_shift`); recorded in ``cals["shift"]``. Flagged models already have the
    frontier folds' interval (raised for them too, it took the Open LLM Leaderboard v2's frontier coverage from 0.93 to
    0.96 and CrossPred's from 0.97 to 1.00)."""
    from . import frontier_shift as fs

    edge = fs.SHIFT_EDGE
    if edge is None or u is None or est.Z_.shape[0] < MIN_FRONTIER_MODELS:
        return
    alpha = float(getattr(est, "blend_new_", est._uncalibrated_blend()))
    rows = np.flatnonzero((u >= edge) & unflagged)
    if rows.size == 0:
        return
    records = frontier_folds(est, pattern, 1) if records is None else records
    cal = fs.calibrate_shift(est, pattern, w_cal, records, alpha, edge, float(est.level))
    cals["shift"] = fs.widen_shift(est, fi, mz, X_new, O, W, out, cal, rows)


def small_rule_replaces(cal, level: float) -> bool:
    """Whether the small-population rule predicts in place of the folds' blend (:data:`THIN_RULE` "small", and too
    few models held out for a two-sided interval at ``level``); :mod:`.frontier_report` says so where it does."""
    return THIN_RULE == "small" and cal.n_distinct < min_calibration_models(level)


def is_thin(est, cal) -> bool:
    """Whether the frontier folds held out too few different models to calibrate a two-sided interval at the
    predictor's level (none at all included): :func:`~harness_ext.methods.engine.frontier_design.min_calibration_models`."""
    return cal is None or cal.n_distinct < min_calibration_models(float(est.level))


#: How the thin folds' design-style interval is scaled: "normal" (the normal quantile) or "folds" (the symmetric
#: split-conformal quantile of the folds' |error| / design sd, when they held out enough models for it).
DESIGN_SCALE = "normal"


def _design_multiplier(est, records, w, cal):
    """The design-style interval's multiplier calibrated on the frontier folds ``records``: the split-conformal
    ``level`` quantile of the held-out aggregates' absolute error (the full blend chosen, as a model beyond the
    training range gets) over their design-style sd. A symmetric score needs fewer held-out models than the two
    one-sided quantiles (:func:`~harness_ext.methods.engine.frontier_design.min_symmetric_models`: 9 at 90%);
    None (the normal quantile) with fewer, or without aggregate weights."""
    level = float(est.level)
    if (DESIGN_SCALE != "folds" or w is None or cal is None or not records
            or distinct_held_out(records) < min_symmetric_models(level)):
        return None
    scores = []
    for rec in _weighted(est, records, w, None):
        mz = _blend(rec, cal.candidate, cal.weight, full=True)
        a_true, a_pred, wt, ok = _aggregate(est, rec["Tt"], rec["have"], rec["seen"], mz, w)
        sd = design_aggregate_sd(rec["X_fit"], rec["seen"], wt)
        scores.append((np.abs(a_pred - a_true) / np.maximum(sd, 1e-12))[ok])
    s = np.concatenate(scores)
    return float(conformal_quantile(s, level)) if s.size else None


def _widen_thin(est, out, rows, O, W, W_extra, z_agg=None):
    """The aggregates of ``rows`` (the flagged models at or beyond the training models' extreme position) joined
    with the design-style interval (:mod:`~harness_ext.methods.engine.frontier_design`) around their prediction:
    the frontier folds are too thin to calibrate them, and the model folds only hold out models inside the
    training range. (For every flagged model, or scaled by its :func:`blend_ramp`, the join widened the random
    splits' median aggregate interval by 6% on HELM Classic and 54% on the TSC bake-off, ``docs/frontier.md``.)"""
    if rows.size == 0:
        return
    z = _normal_quantile(float(est.level))
    if W is not None and out.get("agg") is not None:
        sd = design_aggregate_sd(est.X_, O[rows], W[rows])
        za = z if z_agg is None else np.where(np.isnan(z_agg), z, z_agg)
        _widen(out, "agg_lo", "agg_hi", rows, out["agg"][rows], sd, (-za, za))
    if W_extra is not None and out.get("ex") is not None:
        for k, u in enumerate(np.atleast_2d(W_extra)):
            sd = design_aggregate_sd(est.X_, O[rows], np.broadcast_to(u, O[rows].shape))
            _widen(out, "ex_lo", "ex_hi", rows, out["ex"][rows, k], sd, (-z, z), col=k)


#: Thin frontier folds (:func:`is_thin`), rules screened and off (``benchmarks/HISTORY.md``, "Thin frontier folds").
#: THIN_CELLS, the cells of a flagged model beyond the extreme: None (the folds' multipliers), "design" (joined with
#: :func:`~harness_ext.methods.engine.frontier_design.design_cell_sd`'s interval; Open LLM v2's cell coverage 0.89 ->
#: 0.95) or "foldin" (the fold-in's normal interval; barely moved). THIN_RULE: None (the folds' blend), "small" (the
#: small-population rule instead, the folds' cell multipliers kept; HELM Classic's random-split error +5.3%) or
#: "design_all" (the design-style aggregate interval for every flagged model).
THIN_CELLS: Optional[str] = None
THIN_RULE: Optional[str] = None


def _widen_thin_cells(est, fi, out, far, X_new, O, m_far):
    """The cells of the ``far`` rows (centre ``m_far`` on the transformed scale) joined per :data:`THIN_CELLS`."""
    if THIN_CELLS is None or far.size == 0:
        return
    q = _normal_quantile(float(est.level))
    if THIN_CELLS == "foldin":
        _widen_cells(est, out, far, X_new, O, m_far, fi.sd[far], -q, q)
        return
    sd = design_cell_sd(est.X_, O[far])
    centre = out["mean"][far]
    unseen = ~O[far]
    out["lower"][far] = np.where(unseen, np.minimum(centre - q * sd, out["lower"][far]), out["lower"][far])
    out["upper"][far] = np.where(unseen, np.maximum(centre + q * sd, out["upper"][far]), out["upper"][far])


def _widen_cells(est, out, rows, X_new, O, centre, sd, q_lo, q_hi):
    """The cell intervals of ``rows`` widened, never narrowed, to ``centre + q sd`` (transformed scale, mapped back);
    the cells a row has keep their value."""
    lo_x, hi_x = est.transform_.inverse_interval(centre + q_lo * sd, centre + q_hi * sd)
    o, x = O[rows], X_new[rows]
    out["lower"][rows] = np.where(o, x, np.minimum(lo_x, out["lower"][rows]))
    out["upper"][rows] = np.where(o, x, np.maximum(hi_x, out["upper"][rows]))


def _widen(out, lo_key, hi_key, rows, centre, sd, q, col=None):
    """``out[lo_key]``, ``out[hi_key]`` of ``rows`` (column ``col``) widened, never narrowed, to ``centre + q sd``."""
    idx = rows if col is None else (rows, col)
    out[lo_key][idx] = np.minimum(centre + q[0] * sd, out[lo_key][idx])
    out[hi_key][idx] = np.maximum(centre + q[1] * sd, out[hi_key][idx])


def _widen_extra(est, fi, pattern, direction, rows, o, m_eng, out, W_extra, ramp, records, eng, truth=None):
    """The further aggregates of the flagged ``rows``: re-centred on their new cells, widened (never narrowed) by
    multipliers from the frontier folds ``records`` calibrated with each aggregate's own weights, and for the rows
    ``eng[3]`` inside the range by the engine's own interval (``eng``: ``(X_new, O, engine prediction, rows)``)."""
    X_new, O, mz, inside = eng
    for k, u in enumerate(np.atleast_2d(W_extra)):
        new = (out["mean"][rows] * u).sum(1)
        shift = new - out["ex"][rows, k]
        out["ex"][rows, k] = new
        out["ex_lo"][rows, k] += shift
        out["ex_hi"][rows, k] += shift
        cal = calibrate_frontier(est, pattern, u, direction, truth=truth, records=records)
        if cal is None or cal.q_aggregate is None:
            continue
        _widen(out, "ex_lo", "ex_hi", rows, new, _aggregate_sd(est, fi, o, rows, u, m_eng),
               _ramped(cal.q_aggregate, cal.q_aggregate_engine, ramp), col=k)
        if inside.size and cal.q_aggregate_engine is not None:
            _widen(out, "ex_lo", "ex_hi", inside, *_engine_aggregate(est, fi, X_new, O, mz, inside, u),
                   cal.q_aggregate_engine, col=k)
