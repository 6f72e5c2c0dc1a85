"""The frontier folds: where a new model lies, the estimators that do not shrink, and what the folds choose.

The detection (:func:`positions`, :func:`frontier_distance`), the non-shrinking candidates (:data:`CANDIDATES`),
the frontier folds (:func:`frontier_folds`: refits on the lower part of the training models ordered by position)
and their calibration (:func:`calibrate_frontier`: the candidate, its weight on the :func:`blend_ramp` and the
split-conformal multipliers). :mod:`harness_ext.methods.engine.frontier` applies them to new models and says
why (its docstring describes the whole method, with references).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple, Optional

import numpy as np

from .conformal import conformal_quantile
from .frontier_aggregate import aggregate_shift as _aggregate_shift
from .frontier_aggregate import engine_prediction as _engine_prediction
from .frontier_aggregate import held_out_aggregate as _aggregate
from .frontier_aggregate import held_out_errors
from .frontier_aggregate import held_out_sd as _held_out_sd
from .frontier_design import distinct_held_out
from .frontier_benchpress import benchpress_fill
from .lowrank import fold_in

#: ``(fit fraction, held-out fraction)`` of the training models ordered by position: the 50/30 geometry of the
#: frontier protocol and two nearer ones, so the scores span distances from just outside the range to far.
FRONTIER_FOLDS = ((0.4, 0.3), (0.5, 0.3), (0.6, 0.25), (0.7, 0.2))
#: Weights of a non-shrinking candidate blended with the engine's prediction.
FRONTIER_WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
#: Non-shrinking estimators: the fold-in with its offset's prior widened (:data:`LEVEL_SCALE`), a per-dataset line on
#: the position, the subset mean on the input scale, the subset mean on the standardised scale mapped back to each
#: dataset (:func:`_standard_mean`: the subset mean of a matrix whose datasets have different scales), and the subset
#: mean on the aggregate's scale as a shift from the fitted models' means (:func:`_aggregate_shift`).
CANDIDATES = ("unshrunk_level", "position_line", "subset_mean", "standard_mean", "aggregate_shift")
#: Candidates :func:`_candidate` computes beyond :data:`CANDIDATES`, off by default (add them to :data:`CANDIDATES`
#: to let the folds choose them): BenchPress's completion of the new rows added to the fitted models
#: (:func:`~harness_ext.methods.engine.frontier_benchpress.benchpress_fill`). On the shared matrices' frontier splits
#: the folds never chose it, and it costs one BenchPress completion of the training matrix per fold
#: (``docs/frontier.md``).
OPTIONAL_CANDIDATES = ("benchpress",)
#: Candidates that need aggregate weights (left out of a calibration without them).
WEIGHTED_CANDIDATES = ("aggregate_shift",)
#: Prior sd multiplier of a new model's offset in the ``unshrunk_level`` fold-in (``lowrank.fold_in``'s ``level_scale``).
LEVEL_SCALE = 10.0
#: Quantile of the training models' positions past which a new model is at the frontier (and its mirror below).
FRONTIER_QUANTILE = 0.75
#: Fewest training models for frontier folds (each fold's fit keeps at least half of them).
MIN_FRONTIER_MODELS = 20


class FrontierCalibration(NamedTuple):
    """What the frontier folds chose for one direction (``+1``: above the range, ``-1``: below)."""

    direction: int
    candidate: Optional[str]
    weight: float
    q_cell: tuple
    q_aggregate: Optional[tuple]
    n_models: int
    aggregate_mae: Optional[float]
    aggregate_bias: Optional[float]
    engine_aggregate_mae: Optional[float]
    aggregate_coverage: Optional[float]
    cell_coverage: float
    #: The engine's own multipliers (its scores at the frontier are shifted: too low a prediction); a flagged model's
    #: multipliers go from these at the edge to ``q_cell``/``q_aggregate`` (the full blend's) with its ramp.
    q_cell_engine: Optional[tuple] = None
    q_aggregate_engine: Optional[tuple] = None
    #: Different training models the folds held out (the geometries overlap); fewer than
    #: :func:`~harness_ext.methods.engine.frontier_design.min_calibration_models` and the calibration is thin.
    n_distinct: int = 0
    #: The farthest any held-out model of the folds lay beyond its fit's edge (sd units, the folds' reach): a new
    #: model farther out is an extrapolation the folds did not see, and its warning says so.
    max_distance: float = 0.0
    #: The same folds' aggregate errors (mean absolute, mean signed) in points, with ``w_points`` (each dataset's
    #: normalised weight times its points per unit), when given.
    points_mae: Optional[float] = None
    points_bias: Optional[float] = None


def positions(Z, pattern) -> np.ndarray:
    """Each row's mean transformed score over the columns ``pattern`` (bool, d) it has (NaN without any)."""
    V = np.where(pattern[None, :], Z, np.nan)
    n = (~np.isnan(V)).sum(1)
    return np.where(n > 0, np.nansum(V, 1) / np.maximum(n, 1), np.nan)


def frontier_distance(pos_new, pos_train, edge: Optional[float] = None) -> np.ndarray:
    """Signed distance beyond the training models' edge, in units of the training positions' sd (0 inside).

    The edges are the ``edge`` and ``1 - edge`` quantiles of the training positions
    (:data:`FRONTIER_QUANTILE`): positive above the upper edge, negative below the lower one.
    """
    edge = FRONTIER_QUANTILE if edge is None else float(edge)
    ok = pos_train[np.isfinite(pos_train)]
    if ok.size < 2:
        return np.zeros_like(pos_new)
    sd = max(float(ok.std()), 1e-9)
    hi, lo = (float(v) for v in np.quantile(ok, [edge, 1.0 - edge]))
    pos = np.nan_to_num(pos_new, nan=float(np.median(ok)))
    return np.where(pos > hi, (pos - hi) / sd, np.where(pos < lo, (pos - lo) / sd, 0.0))


def _line(Z_fit, pos_fit, pos_new):
    """Per-dataset least-squares line of the transformed score on the position, evaluated at ``pos_new``."""
    ok = ~np.isnan(Z_fit) & np.isfinite(pos_fit)[:, None]
    n = np.maximum(ok.sum(0), 1)
    p = np.where(ok, pos_fit[:, None], 0.0)
    y = np.where(ok, Z_fit, 0.0)
    pm, ym = p.sum(0) / n, y.sum(0) / n
    var = (np.where(ok, p - pm, 0.0) ** 2).sum(0)
    slope = np.where(var > 1e-12, (np.where(ok, (p - pm) * (y - ym), 0.0)).sum(0) / np.maximum(var, 1e-12), 0.0)
    return ym + slope * (np.nan_to_num(pos_new)[:, None] - pm)


def _standard_mean(Z_fit, z_in, O):
    """Every cell at the mean of the row's subset cells standardised over the fitted models (``Z_fit``): the subset
    mean on a scale the datasets share, mapped back through each dataset's mean and sd (no shrinkage)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a dataset no fitted model has: mean 0, sd 1 (Z's own scale)
        mu, sd = np.nanmean(Z_fit, 0), np.nanstd(Z_fit, 0)
    mu = np.nan_to_num(mu, nan=0.0)
    sd = np.where(np.isfinite(sd) & (sd > 1e-9), sd, 1.0)
    u = np.where(O, (np.nan_to_num(z_in) - mu) / sd, 0.0)
    ubar = u.sum(1) / np.maximum(O.sum(1), 1)
    return mu[None, :] + sd[None, :] * ubar[:, None]


def _candidate(est, name, fit, Z_fit, pos_fit, z_in, X_in, O, X_fit=None, w=None):
    """A non-shrinking candidate's transformed prediction for rows observed as ``O`` (transformed ``z_in``, raw
    ``X_in``); ``X_fit``, ``w``: the fitted models' raw cells and the aggregate weights (``aggregate_shift``)."""
    if name == "standard_mean":
        return _standard_mean(Z_fit, z_in, O)
    if name == "unshrunk_level":
        return fold_in(fit, z_in, level_scale=LEVEL_SCALE).mean
    if name == "position_line":
        return _line(Z_fit, pos_fit, positions(z_in, O.any(0)))
    if name in ("aggregate_shift", "benchpress"):
        x = _aggregate_shift(X_fit, X_in, O, w) if name == "aggregate_shift" else benchpress_fill(X_fit, X_in)
        # outside the aggregate (weight 0) or beyond a dataset's range: the standardised subset mean
        z = est.transform_.transform(x)
        return np.where(np.isfinite(z), z, _standard_mean(Z_fit, z_in, O))
    n = np.maximum(O.sum(1), 1)
    xbar = np.where(O, X_in, 0.0).sum(1) / n  # the subset mean on the input scale
    return est.transform_.transform(np.repeat(xbar[:, None], X_in.shape[1], axis=1))


def _fold_records(est, pattern, direction, rank, alpha):
    """Frontier folds of one direction: per fold, the held-out models' cells, the refit's fold-in and engine
    prediction, the candidates that need no aggregate weights, each model's :func:`blend_ramp`, and the fit's rows."""
    Z, X = est.Z_, est.X_
    m = Z.shape[0]
    pos = positions(Z, pattern)
    # The strongest models by every cell they have (the mean transformed score), not by the subset alone: a model
    # at the frontier is stronger on the datasets it did not run as well, which a subset position cannot show.
    strength = np.nan_to_num(positions(Z, np.ones(Z.shape[1], bool)), nan=0.0)
    order = np.argsort(direction * strength, kind="stable")
    records = []
    for f, (a, b) in enumerate(FRONTIER_FOLDS):
        rows, held = np.sort(order[:int(round(a * m))]), order[m - max(1, int(round(b * m))):]
        pos_held = positions(np.where(pattern, Z[held], np.nan), pattern)
        d_held = direction * frontier_distance(pos_held, pos[rows])
        keep = d_held > 0  # the held-out models a new model here is like
        held, pos_held, d_held = held[keep], pos_held[keep], d_held[keep]
        if held.size == 0:
            continue
        srt = np.argsort(held)
        held, pos_held, d_held = held[srt], pos_held[srt], d_held[srt]
        ramp = blend_ramp(pos_held, pos[rows], direction)
        Z_fit, X_fit = Z[rows], X[rows]
        ft = est._fit_z(Z_fit, seed_offset=211 + f, rank=rank)
        Zt, Xt = Z[held], X[held]
        have = ~np.isnan(Zt)
        seen = pattern[None, :] & have
        z_in = np.where(seen, Zt, np.nan)
        fi, eng = _engine_prediction(ft, Z_fit, z_in, alpha)
        x_in = np.where(seen, Xt, np.nan)
        cands = {c: _candidate(est, c, ft, Z_fit, pos[rows], z_in, x_in, seen, X_fit=X_fit) for c in CANDIDATES
                 if c not in WEIGHTED_CANDIDATES}
        records.append(dict(Zt=Zt, Xt=Xt, have=have, seen=seen, fi=fi, eng=eng, cands=cands, held=held, ramp=ramp, dist=d_held,
                            X_fit=X_fit, Z_fit=Z_fit, x_in=x_in, z_in=z_in, fit=ft, rows=rows,
                            held_all=np.sort(order[m - max(1, int(round(b * m))):])))
    return records


def blend_ramp(pos_new, pos_train, direction: int = 1) -> np.ndarray:
    """The share of the blend's weight each new model gets: 0 at the training models' edge (the
    :data:`FRONTIER_QUANTILE` of their positions), rising linearly to 1 at their extreme and 1 beyond it.

    Near the edge a model is like the training models the engine predicts well (on random splits, the blend at
    full weight for every flagged model raised the cell error); beyond the range the engine's prediction is an
    extrapolation shrunk toward the population. The frontier folds apply the same ramp to their held-out models,
    so the estimator, the weight and the multipliers are chosen for the prediction a new model gets.
    """
    ok = pos_train[np.isfinite(pos_train)]
    if ok.size < 2:
        return np.zeros_like(pos_new, dtype=float)
    span = direction * frontier_distance(np.array([ok.max() if direction > 0 else ok.min()]), ok)[0]
    d = direction * frontier_distance(pos_new, ok)
    return np.clip(d / span, 0.0, 1.0) if span > 0 else (d > 0).astype(float)


def _blend(rec, cand, weight, full=False):
    """The fold's held-out prediction: the engine's blended with ``cand`` at ``weight`` times each model's ramp
    (``full``: the whole weight, as beyond the training range)."""
    if cand is None or weight <= 0:
        return rec["eng"]
    a = weight * (1.0 if full else rec["ramp"][:, None])
    return (1 - a) * rec["eng"] + a * rec["cands"][cand]


def _ramped(q_full, q_engine, ramp):
    """Per-entry ``(lower, upper)`` multipliers from the engine's at ramp 0 to the full blend's at ramp 1."""
    q_engine = q_full if q_engine is None else q_engine
    return tuple((1 - ramp) * e + ramp * f for f, e in zip(q_full, q_engine))


def _scores(est, rec, mz, w):
    """Signed normalised cell and aggregate scores, aggregate errors, and the ramps of the cells' and aggregates'
    models, of one fold's held-out models."""
    target = rec["have"] & ~rec["seen"]
    cells = ((rec["Zt"] - mz) / rec["fi"].sd)[target]
    r_cells = np.broadcast_to(rec["ramp"][:, None], target.shape)[target]
    if w is None:
        return cells, np.array([]), np.array([]), r_cells, np.array([])
    a_true, a_pred, wt, ok = _aggregate(est, rec["Tt"], rec["have"], rec["seen"], mz, w)
    sd = _held_out_sd(est, rec["fi"], wt, target, mz)
    err = (a_pred - a_true)[ok]
    return cells, ((a_true - a_pred) / sd)[ok], err, r_cells, rec["ramp"][ok]


def _two_sided(scores, level):
    """``(lower, upper)`` multipliers: one-sided conformal quantiles at ``(1 - level) / 2`` each (0 inside)."""
    if scores.size == 0:
        return None
    tail = 1.0 - (1.0 - level) / 2.0
    return (min(-conformal_quantile(-scores, tail), 0.0), max(conformal_quantile(scores, tail), 0.0))


def _fold_loss(est, rec, w, cand, weight) -> float:
    """One fold's held-out aggregate absolute error of a blend (squared transformed cell error without weights)."""
    mz = _blend(rec, cand, weight)
    if w is not None:
        a_true, a_pred, _, ok = _aggregate(est, rec["Tt"], rec["have"], rec["seen"], mz, w)
        return float(np.abs(a_pred - a_true)[ok].sum())
    return float(((mz - rec["Zt"])[rec["have"] & ~rec["seen"]] ** 2).sum())


def frontier_folds(est, pattern, direction: int = 1) -> list:
    """The frontier folds of one direction for new models observed on ``pattern`` (bool, d): the refits and every
    candidate that needs no aggregate weights (:func:`calibrate_frontier` adds the rest). [] with fewer than
    :data:`MIN_FRONTIER_MODELS` training models."""
    if est.Z_.shape[0] < MIN_FRONTIER_MODELS or not pattern.any():
        return []
    rank = int(getattr(est, "rank_new_", est.rank_))
    alpha = float(getattr(est, "blend_new_", est._uncalibrated_blend()))
    return _fold_records(est, pattern, direction, rank, alpha)


def _weighted(est, records, w, truth):
    """The folds with the candidates of weights ``w`` added and the aggregate's truth (``truth`` (m, d) or the
    fitted matrix); the shared folds are not changed."""
    out = []
    for rec in records:
        extra = {} if w is None else {c: _candidate(est, c, None, rec["Z_fit"], None, rec["z_in"], rec["x_in"],
                                                    rec["seen"], X_fit=rec["X_fit"], w=w) for c in WEIGHTED_CANDIDATES}
        out.append(dict(rec, cands={**rec["cands"], **extra}, Tt=rec["Xt"] if truth is None else truth[rec["held"]]))
    return out


def calibrate_frontier(est, pattern, w, direction: int = 1, truth=None, records=None,
                       w_points=None, w_base=None) -> Optional[FrontierCalibration]:
    """Frontier folds for new models observed on ``pattern`` (bool, d), aggregate weights ``w`` (d,) or None.

    Chooses the candidate and weight with the lowest held-out aggregate absolute error (squared cell
    error in the transformed space without weights), then the two-sided multipliers from every fold's
    scores. ``aggregate_coverage``/``cell_coverage``: each fold's held-out models covered by the multipliers
    of the other folds (leave one geometry out), the expected coverage at the frontier. None with fewer than
    :data:`MIN_FRONTIER_MODELS` training models. ``truth`` (m, d): the values the aggregate is scored against
    (default the fitted matrix). ``records``: the folds of :func:`frontier_folds` for ``pattern`` and
    ``direction`` (computed when None; pass them to calibrate several aggregates on the same refits). ``w_points``
    (d,): ``w / sum(w)`` times each dataset's points per unit: the chosen predictions' errors are also given in points
    (``w_base``: the points aggregate's own weights, when they are not ``w``).
    """
    records = frontier_folds(est, pattern, direction) if records is None else records
    if not records:
        return None
    records = _weighted(est, records, w, truth)
    names = [c for c in CANDIDATES if w is not None or c not in WEIGHTED_CANDIDATES]
    options = [(None, 0.0)] + [(c, a) for c in names for a in FRONTIER_WEIGHTS if a > 0]
    losses = np.array([[_fold_loss(est, rec, w, *opt) for rec in records] for opt in options])  # (options, folds)

    def choose(folds):  # the lowest held-out error over ``folds``; ties go to the smaller weight
        tot = np.round(losses[:, folds].sum(1), 10)
        return options[min(range(len(options)), key=lambda o: (tot[o], options[o][1]))]

    cand, weight = choose(np.arange(len(records)))
    # Each fold's scores come from the estimator chosen on the other folds: scores of the estimator chosen on
    # the same folds were optimistic (the blend that fitted them best; HELM Classic's frontier multipliers fell to
    # a third of the engine's), and a frontier model meets the choice as an out-of-sample fold does.
    chosen = [choose(np.array([g for g in range(len(records)) if g != f])) if len(records) > 1 else (cand, weight)
              for f in range(len(records))]
    level = float(est.level)
    per_fold = [_scores(est, rec, _blend(rec, *c), w) for rec, c in zip(records, chosen)]
    full_fold = [_scores(est, rec, _blend(rec, *c, full=True), w) for rec, c in zip(records, chosen)]
    eng_fold = [_scores(est, rec, rec["eng"], w) for rec in records]
    eng_err = np.concatenate([p[2] for p in eng_fold])
    errs = np.concatenate([p[2] for p in per_fold])
    pts = np.array([])
    if w is not None and w_points is not None:
        base = w if w_base is None else w_base
        pts = np.concatenate([held_out_errors(est, rec, _blend(rec, *c), base, w_points) for rec, c in zip(records, chosen)])

    def quantiles(i, skip=None):  # (full blend's, engine's) multipliers from the folds other than ``skip``
        return tuple(_two_sided(np.concatenate([p[i] for g, p in enumerate(fs) if g != skip] or [np.array([])]), level)
                     for fs in (full_fold, eng_fold))

    def held_out_coverage(i):  # the other folds' multipliers, ramped as a new model's, cover fold f's scores?
        out = []
        for f, p in enumerate(per_fold):
            q_full, q_eng = quantiles(i, skip=f)
            if q_full is not None and p[i].size:
                lo, hi = _ramped(q_full, q_eng, p[3 + i])
                out.append((p[i] >= lo) & (p[i] <= hi))
        return float(np.concatenate(out).mean()) if out else None

    (q_cell, q_cell_eng), (q_agg, q_agg_eng) = quantiles(0), quantiles(1)
    return FrontierCalibration(
        direction=int(direction), candidate=cand, weight=float(weight), q_cell=q_cell, q_aggregate=q_agg,
        q_cell_engine=q_cell_eng, q_aggregate_engine=q_agg_eng, n_models=int(sum(r["Zt"].shape[0] for r in records)),
        n_distinct=distinct_held_out(records), max_distance=float(max(r["dist"].max() for r in records)),
        aggregate_mae=float(np.abs(errs).mean()) if errs.size else None,
        aggregate_bias=float(errs.mean()) if errs.size else None,
        engine_aggregate_mae=float(np.abs(eng_err).mean()) if eng_err.size else None,
        aggregate_coverage=held_out_coverage(1) if w is not None else None, cell_coverage=held_out_coverage(0),
        points_mae=float(np.abs(pts).mean()) if pts.size else None, points_bias=float(pts.mean()) if pts.size else None)
