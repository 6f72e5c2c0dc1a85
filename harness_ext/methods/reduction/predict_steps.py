"""The steps of a prediction, in the order :func:`~harness_ext.methods.reduction.predict.predict_scores` runs them.

1. :func:`input_warnings` -- what the new models' scores are: which subset datasets each ran (a model with none
   is refused), whether it is a training model, read from the other harness, scored on all items instead of the
   manifest's anchors, run at another shot count, or outside the training models' range;
2. :func:`predict_cells` -- the manifest's predictor, fitted on its training matrix, predicts every cell: a
   completer with its own conformal intervals (calibrated on held-out training models observed like each new
   model, on the subset chosen without them), any other predictor with its predictive standard deviation;
3. :func:`anchor_item_variance` -- the extra variance from subset scores that are anchor-item estimates;
4. :func:`half_widths` -- the intervals' half-widths, for the cells, the normalised aggregate and the benchmark's
   own score;
5. :func:`prediction_table` -- one row per model and dataset, on the normalised and the harness's own scale.

References
----------
SimBA (Subramani, Gomez and Diab 2025) §4 (predicting a model from the subset); Zhao et al. §3 (predictive
uncertainty).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import pandas as pd

from ...errors import HarnessExtError
from ...report import listed

#: Fraction of the manifest's models at each edge of their subset-score range where predict warns.
EDGE_QUANTILE = 0.05


def subset_warnings(models, Z_sub: np.ndarray, subset_names: list, path_like: Optional[dict] = None) -> tuple:
    """``(have, warnings)``: the subset cells each model ran (``Z_sub``: normalised scores on the subset), and a
    warning for each model that ran only part of the subset.

    ``path_like`` maps a subset dataset to its lm-eval tasks named with a '/' or '\\' (see
    :func:`path_like_reasons`): ``reduce`` left them out of the lm-eval group, so a model that ran the group has no
    result for them, and the warning says why and what to do rather than only that they are missing.

    Raises
    ------
    HarnessExtError
        For the first model with no result on any subset dataset.
    """
    have = ~np.isnan(Z_sub)
    path_like = path_like or {}
    warnings = []
    for i, model in enumerate(models):
        missing = [subset_names[j] for j in np.flatnonzero(~have[i])]
        if len(missing) == len(subset_names):
            raise HarnessExtError(f"{model}: no result on any subset dataset ({', '.join(subset_names[:5])} ...)"
                                  + path_like_reasons(missing, path_like, "; "))
        if missing:
            warnings.append(f"{model}: no result for {', '.join(missing)}; predicted from the other "
                            f"{len(subset_names) - len(missing)} subset datasets, with intervals cross-validated "
                            "for that part of the subset (wider than the manifest's)"
                            + path_like_reasons(missing, path_like, ". "))
    return have, warnings


def path_like_reasons(missing: list, path_like: dict, sep: str) -> str:
    """Why the subset datasets of ``missing`` that are lm-eval tasks named as a path have no result (``sep`` and the
    reason, or ``""``): ``reduce`` left them out of the lm-eval group, so running the group never runs them."""
    left = [t for name in missing for t in path_like.get(name, ())]
    if not left:
        return ""
    from ...safe_output import quoted

    one = len(left) == 1
    it, its, name = ("it", "its", "its name has") if one else ("them", "their", "their names have")
    return (f"{sep}{', '.join(quoted(t) for t in left[:6])}{' ...' if len(left) > 6 else ''} "
            f"{'was' if one else 'were'} left out of the lm-eval group at reduce because {name} a '/' or '\\' "
            f"(lm-eval's --log_samples would lose {its} samples): run {it} by hand (lm_eval --tasks NAME) and pass "
            f"{its} results file to predict too, or {'it stays' if one else 'they stay'} predicted")


def provenance_warnings(manifest: dict, raw_new: pd.DataFrame, train: pd.DataFrame, Z_new: np.ndarray,
                        subset_names: list, other_shots: dict) -> list:
    """Where the new scores came from, when it is not what the manifest's models had: training models (in-sample),
    the other harness's results, a plain mean over the items instead of the anchors' estimate, another shot count."""
    columns = list(train.columns)
    by_name = {d["name"]: d for d in manifest["datasets"]}
    warnings = []
    # A model the manifest was built from is no new model: its predictions are in-sample and say so.
    known = set(map(str, train.index))
    seen = [str(m) for m in raw_new.index if str(m) in known]
    if seen:
        warnings.append(f"{', '.join(seen[:5])}{' ...' if len(seen) > 5 else ''}: among the manifest's training models "
                        "(their full results chose the subset and fitted the predictor): the predictions are in-sample, "
                        "and their errors and intervals are not those of a new model")
    crossed = raw_new.attrs.get("cross_harness") or []
    if crossed:
        warnings.append(f"{len(crossed)} dataset(s) were read from the other harness's results, mapped by the "
                        f"harness-name table ({', '.join(crossed[:5])}{' ...' if len(crossed) > 5 else ''}): the "
                        "prompts (and for some datasets the metric) differ between lm-eval and HELM, so these scores "
                        "are not the measurement the manifest's models had; the prediction takes them as if they were")
    # A score made of several lm-eval metrics or tasks is read only whole: what was missing is said, per model.
    warnings += list(raw_new.attrs.get("cross_harness_incomplete") or [])
    anchored = set(map(tuple, raw_new.attrs.get("anchored", [])))
    item_sets = {b["dataset"]: t for t, b in ((manifest.get("items") or {}).get("tasks") or {}).items()}
    for i, model in enumerate(raw_new.index):
        plain = [item_sets[c] for c in subset_names if c in item_sets and (model, c) not in anchored
                 and not np.isnan(Z_new[i, columns.index(c)])]
        if plain:
            warnings.append(f"{model}: no per-sample log for {', '.join(plain)}: the score used is the results file's, "
                            "a plain mean over the items run, not the manifest's weighted anchor estimate (run lm_eval "
                            "with --log_samples)")
    by_model = {}
    for (model, c), n in other_shots.items():
        if c in subset_names:
            by_model.setdefault(model, []).append(f"{c} ({n} shots, manifest {by_name[c].get('num_fewshot')})")
    for model, items in by_model.items():
        warnings.append(f"{model}: run with another shot count than the manifest's models: {listed(items, 5)}; "
                        "predictions assume the manifest's setting")
    return warnings


def range_warnings(train: pd.DataFrame, Z_new: np.ndarray, subset_idx, models) -> list:
    """A warning for each model whose mean normalised subset score is outside the training models' range, or in
    its outer :data:`EDGE_QUANTILE` on either side."""
    # The intervals come from held-out models like the training ones; a model outside their range is extrapolated.
    # The interval is one cross-validated RMSE averaged over all models; errors are larger at the edges
    # of the range (held-out largest Pythia models: 40-73% inside the 90% interval, benchmarks/quality_round_trip.py).
    # Only models with a subset cell have a subset mean (on sparse matrices many have none: nanmean warned).
    tr_sub = train.to_numpy(dtype=float)[:, subset_idx]
    tr_sub = tr_sub[~np.isnan(tr_sub).all(axis=1)]
    tr_mean = np.nanmean(tr_sub, axis=1)
    lo, p05, p95, hi = np.nanquantile(tr_mean, [0.0, EDGE_QUANTILE, 1 - EDGE_QUANTILE, 1.0])
    new_mean = np.nanmean(Z_new[:, subset_idx], axis=1)
    # the manifest keeps its training scores to 10 decimals: a training model's own files are not beyond them
    tol = 1e-9 * max(1.0, float(np.nanmax(np.abs([lo, hi]))))
    warnings = []
    for model, v in zip(models, new_mean):
        if v < lo - tol or v > hi + tol:
            warnings.append(f"{model}: mean normalised subset score {v:.3f} is outside the manifest's models' range "
                            f"[{lo:.3f}, {hi:.3f}]: the prediction extrapolates and its interval may be too narrow")
        elif v < p05 or v > p95:
            warnings.append(f"{model}: mean normalised subset score {v:.3f} is {'above' if v > p95 else 'below'} "
                            f"{1 - EDGE_QUANTILE:.0%} of the manifest's models: errors near the edge of their range "
                            "are larger than the cross-validated average, so the interval may be too narrow")
    return warnings


def beyond_scale_warnings(models, columns, observed: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                          h_lo, h_hi, level: float) -> list:
    """A warning for each model with predicted datasets whose whole interval lay beyond an end of the scale, naming
    them: the prediction and both ends are kept at that end, an interval of no width.

    ``lower``/``upper``: the intervals kept inside the scale; ``h_lo``/``h_hi``: their half-widths before (a cell
    with no width of its own is not counted). Such an interval says nothing of the error: HELM Classic's T0pp, whose
    answers to BoolQ and IMDB miss their format, was predicted at MMLU's floor, EM 0 with an interval of no width,
    where it scored 0.41.
    """
    width = np.broadcast_to(np.asarray(h_lo, dtype=float) + np.asarray(h_hi, dtype=float), lower.shape)
    point = ~observed & (lower == upper) & (width > 0)
    out = []
    for i in np.flatnonzero(point.any(axis=1)):
        names = [str(columns[j]) for j in np.flatnonzero(point[i])]
        out.append(f"{models[i]}: {len(names)} predicted datasets ({listed(names, 5)}) have their whole "
                   f"{level:.0%} interval beyond an end of the scale, so the prediction and the interval are kept at "
                   "that end, an interval of no width, which says nothing of the error of a model this far from the "
                   "manifest's models")
    return out


def ceiling_warnings(manifest: dict, train: pd.DataFrame, Z_new: np.ndarray, models) -> list:
    """A warning for each model near the ceiling of a subset dataset the manifest found saturated (its
    ``selection.subset_saturated``: the model's score within the saturation rule's headroom of the ceiling,
    ``near_from``): a stronger model scores near the ceiling there however strong it is, so its distance beyond the
    training models' edge (the frontier column) can read 0 while the datasets predicted from that cell are too low.
    On the frontier splits of the shared matrices it fired for most of the strongest models wherever the subset
    held a saturated dataset; their intervals covered 10 of 17 on HELM Classic and all of them elsewhere."""
    from ..prowl.saturation import near_ceiling

    near = (manifest.get("selection") or {}).get("subset_saturated") or {}
    columns = [str(c) for c in train.columns]
    masks = near_ceiling(near, Z_new, columns)
    out = []
    for rec in near.get("in_subset", []):
        if rec["name"] not in masks:
            continue
        values = Z_new[:, columns.index(rec["name"])]
        out += [f"{model}: {v:.3f} (normalised) on {rec['name']}, near the ceiling of a dataset whose manifest models "
                f"already crowd there (headroom {rec['headroom']:.2f}): if it is stronger than them it cannot show it "
                "there, so the datasets predicted from it may be too low, whatever the frontier column says"
                for model, v, hit in zip(models, values, masks[rec["name"]]) if hit]
    return out


def input_warnings(manifest: dict, raw_new: pd.DataFrame, train: pd.DataFrame, Z_new: np.ndarray, subset_idx,
                   other_shots: dict) -> tuple:
    """``(have, warnings)``: :func:`subset_warnings`, :func:`provenance_warnings`, :func:`range_warnings` and
    :func:`ceiling_warnings`, in that order."""
    from .harness_names import path_like_tasks

    subset_names = [s["name"] for s in manifest["subset"]]
    path_like = {s["name"]: path_like_tasks(s) for s in manifest["subset"] if path_like_tasks(s)}
    have, warnings = subset_warnings(raw_new.index, Z_new[:, subset_idx], subset_names, path_like)
    warnings += provenance_warnings(manifest, raw_new, train, Z_new, subset_names, other_shots)
    return have, (warnings + range_warnings(train, Z_new, subset_idx, raw_new.index)
                  + ceiling_warnings(manifest, train, Z_new, raw_new.index))


@dataclass
class CellPredictions:
    """Every cell predicted by the manifest's predictor for the new models."""

    est: Any  # the fitted predictor
    conformal: bool  # a completer with its own conformal intervals (``p``), else ``std`` or cross-validated RMSEs
    mean: np.ndarray
    lower: Optional[np.ndarray]
    upper: Optional[np.ndarray]
    std: Optional[np.ndarray]
    p: Any
    frontier: Optional[np.ndarray]  # signed distance beyond the training models' edge (completers only)
    warnings: list


def predict_cells(manifest: dict, train: pd.DataFrame, train_X: np.ndarray, Z_new: np.ndarray, observed: np.ndarray,
                  subset_idx, weights: np.ndarray, u: Optional[np.ndarray], level: float, models, bar,
                  truth: Optional[np.ndarray] = None) -> CellPredictions:
    """Fit the manifest's predictor on its training matrix and predict every cell of the new models (``observed``:
    the subset cells each ran; ``u``: the weights of the benchmark's own score, or None, calibrated against
    ``truth``, :func:`~harness_ext.methods.reduction.benchmark_score.score_truth`; ``bar``: the progress stages).

    Raises
    ------
    HarnessExtError
        When the predictor refuses the manifest's parameters.
    """
    from ...plugin_manager import get_registration
    from ..engine.from_subset import predict_new_models
    from .completion_reuse import stored_settings
    from .manifest_validation import check_predictor_params

    pred_cfg = manifest["prediction"]["predictor"]
    bar.set_postfix_str(f"fitting {pred_cfg['name']} on {train.shape[0]} models and calibrating its intervals")
    reg = get_registration("predictors", pred_cfg["name"])
    check_predictor_params(reg.name, pred_cfg.get("params", {}), reg.cls)
    est = reg.cls(**pred_cfg.get("params", {}))
    if hasattr(est, "level"):  # conformal predictors calibrate at predict time: their quantile is at the asked level
        est.level = level
    have = observed[:, subset_idx]
    # A completer (lowrank, lowrank_bayes, benchpress) gives its own conformal intervals, calibrated on held-out
    # training models observed like each new model (adaptive per cell, and for the aggregate).
    conformal = hasattr(est, "predict_new_models")
    warnings, lower, upper, std, p, frontier = [], None, None, None, None, None
    try:
        if conformal:
            reselect, why = stored_reselect(manifest, train, est)
            if why:
                warnings.append(why)
            # The settings reduce chose on this matrix (the manifest's record), not chosen again.
            settings, why = stored_settings(manifest, train_X, est)
            if why:
                warnings.append(why)
            fitted = est.fit(train_X) if settings is None else est.fit(train_X, settings=settings)
            p = _conformal(fitted, np.where(observed, Z_new, np.nan), weights, reselect, have, u, truth)
            mean, lower, upper = p.mean, p.lower, p.upper
            frontier = p.frontier
            from ..engine.frontier_report import frontier_warnings

            warnings += frontier_warnings(models, frontier, getattr(est, "frontier_", {}), float(getattr(est, "level", 0.9)))
        else:
            mean, std = predict_new_models(est, train_X, Z_new, subset=subset_idx)
    except (ValueError, TypeError) as exc:  # parameters of the right type but a value the predictor refuses
        bar.close()
        raise HarnessExtError(f"predictor {reg.name!r} with the manifest's parameters {pred_cfg.get('params', {})} "
                              f"failed: {type(exc).__name__}: {exc}") from None
    return CellPredictions(est, conformal, mean, lower, upper, std, p, frontier, warnings)


def anchor_item_variance(manifest: dict, cells: CellPredictions, train_X: np.ndarray, Z_new: np.ndarray,
                         observed: np.ndarray, subset_idx, weights: np.ndarray, u: Optional[np.ndarray],
                         columns: list) -> tuple:
    """``(cell_var, agg_var, raw_var)``: extra variance from subset scores that are anchor-item estimates, per cell,
    of the normalised aggregate and of the benchmark's own score (each None where it does not apply;
    :func:`~harness_ext.methods.reduction.items.item_noise`)."""
    from ..engine.from_subset import predict_new_models
    from .items import item_noise

    est, have = cells.est, observed[:, subset_idx]

    def _predict_means(Z):
        if cells.conformal:
            return est.predict_new_models(np.where(observed, Z, np.nan), calibrate=False).mean
        return predict_new_models(est, train_X, Z, subset=subset_idx)[0]

    cell_var, agg_var = item_noise(manifest, columns, subset_idx, have, Z_new, _predict_means,
                                   weights if u is None else np.column_stack([weights, u]))
    raw_var = None
    if agg_var is not None and u is not None:
        agg_var, raw_var = agg_var[:, 0], agg_var[:, 1]
    return cell_var, agg_var, raw_var


def half_widths(manifest: dict, cells: CellPredictions, mean: np.ndarray, train_X: np.ndarray, observed: np.ndarray,
                subset_idx, weights: np.ndarray, u: Optional[np.ndarray], Z: float, item_vars: tuple,
                truth: Optional[np.ndarray] = None) -> tuple:
    """``(h_lo, h_hi, a_lo, a_hi, r_lo, r_hi)``: the intervals' lower and upper half-widths for the cells (around
    ``mean``, clipped), the normalised aggregate and the benchmark's own score (None without one; its error
    against ``truth``), widened by the anchor items' variance ``item_vars``; ``Z``: the normal quantile of the
    level (non-conformal predictors)."""
    from .benchmark_score import raw_aggregate_rmse

    have = observed[:, subset_idx]
    r_lo = r_hi = None
    if cells.conformal:
        p = cells.p
        h_lo, h_hi = np.maximum(mean - cells.lower, 0.0), np.maximum(cells.upper - mean, 0.0)
        a_lo, a_hi = p.aggregate - p.aggregate_lower, p.aggregate_upper - p.aggregate
        if u is not None:
            r_lo = np.maximum(p.extra_aggregate[:, 0] - p.extra_lower[:, 0], 0.0)
            r_hi = np.maximum(p.extra_upper[:, 0] - p.extra_aggregate[:, 0], 0.0)
    else:
        est, std = cells.est, cells.std
        cv_rmse, agg_rmse = partial_subset_errors(manifest, train_X, est, subset_idx, have, weights)
        h_lo = h_hi = np.where(observed, 0.0, Z * (std if std is not None else cv_rmse))
        a_lo = a_hi = Z * agg_rmse
        if u is not None:
            r_lo = r_hi = Z * raw_aggregate_rmse(manifest, train_X, est, subset_idx, have, weights, agg_rmse, u, truth)
    item_cell_var, item_agg_var, item_raw_var = item_vars
    if item_cell_var is not None:
        h_lo, h_hi = (np.sqrt(h ** 2 + Z ** 2 * item_cell_var) for h in (h_lo, h_hi))
    if item_agg_var is not None:
        a_lo, a_hi = (np.sqrt(h ** 2 + Z ** 2 * item_agg_var) for h in (a_lo, a_hi))
    if item_raw_var is not None:
        r_lo, r_hi = (np.sqrt(h ** 2 + Z ** 2 * item_raw_var) for h in (r_lo, r_hi))
    return h_lo, h_hi, a_lo, a_hi, r_lo, r_hi


def prediction_table(raw_new: pd.DataFrame, params: pd.DataFrame, observed: np.ndarray, Z_new: np.ndarray,
                     mean: np.ndarray, lower: np.ndarray, upper: np.ndarray, exact: np.ndarray) -> pd.DataFrame:
    """One row per model and dataset: observed or predicted score and interval, normalised and on the harness's
    own scale (``raw*``), and the actual score of a cell that was given but not used, normalised (``actual``) and
    on the harness's scale (``raw_actual``).
    ``exact``: observed cells whose interval is the point (their raw bounds are the raw score)."""
    from ...store.matrix import invert_normalisation

    columns = list(raw_new.columns)
    n_new, d = mean.shape
    raw_obs = raw_new.to_numpy(dtype=float)
    table = pd.DataFrame({
        "model": np.repeat(raw_new.index.to_numpy(), d),
        "dataset": np.tile(columns, n_new),
        "observed": observed.ravel(),
        "score": mean.ravel(), "lower": lower.ravel(), "upper": upper.ravel(),
        "actual": np.where(observed, np.nan, Z_new).ravel(),
        # Observed cells keep the harness's own value (a floored manifest's normalisation clips them at chance).
        "raw": np.where(observed, raw_obs, invert_normalisation(mean, params)).ravel(),
        "raw_lower": np.where(exact, raw_obs, invert_normalisation(lower, params)).ravel(),
        "raw_upper": np.where(exact, raw_obs, invert_normalisation(upper, params)).ravel(),
        "raw_actual": np.where(observed, np.nan, raw_obs).ravel(),
    })
    # A flipped (lower-is-better) column inverts the order of its bounds.
    lo_hi = np.sort(table[["raw_lower", "raw_upper"]].to_numpy(), axis=1)
    table["raw_lower"], table["raw_upper"] = lo_hi[:, 0], lo_hi[:, 1]
    return table


def partial_subset_errors(manifest: dict, train: np.ndarray, est, subset_idx, have, weights) -> tuple:
    """Per-cell and aggregate cross-validated RMSE for each new model, given the part of the subset it ran.

    A model that ran the whole subset gets the manifest's figures. A model that
    ran only part of it is a fold-in on fewer cells, so its error is larger:
    the manifest's predictor is cross-validated again on the training matrix
    with held-out models revealing exactly that part (one run per distinct
    part, on the manifest's folds), so the interval widens with what was not run.

    Returns
    -------
    (per_cell, aggregate)
        ``(n_new, d)`` and ``(n_new,)`` RMSE arrays.
    """
    from ..engine.subset_cv import subset_errors

    cols = manifest["datasets"]
    full_cell = np.array([c.get("cv_rmse") or 0.0 for c in cols], dtype=float)
    full_agg = manifest["prediction"]["expected_error"]["aggregate_rmse"]
    per_cell = np.tile(full_cell, (len(have), 1))
    agg = np.full(len(have), np.nan if full_agg is None else float(full_agg))
    cv = manifest["prediction"]["cross_validation"]
    partial = ~have.all(axis=1) & have.any(axis=1)
    if partial.any():
        patterns, inverse = np.unique(have[partial], axis=0, return_inverse=True)
        parts = [np.asarray(subset_idx)[p] for p in patterns]
        errs = subset_errors(train, parts, est, n_splits=cv["n_splits"], random_state=cv.get("random_state", 0),
                             weights=weights)
        rows = np.flatnonzero(partial)
        for g, e in enumerate(errs):
            sel = rows[np.asarray(inverse).reshape(-1) == g]
            per_cell[sel] = np.nan_to_num(e.per_dataset, nan=0.0)
            agg[sel] = e.aggregate
    return per_cell, agg


def stored_reselect(manifest: dict, train: pd.DataFrame, est) -> tuple:
    """``(reselect, warning)``: the manifest's fold subsets as a ``reselect`` for ``est.predict_new_models``.

    ``reduce`` re-runs the selection without each calibration fold and stores each
    fold's subset (``prediction.calibration``). Used only when they belong to this
    training matrix (same models, in the same order, one fold label each);
    otherwise ``(None, a warning)``: the calibration then scores models that chose
    the subset, which predict it better than a new model does (intervals too narrow).
    ``(None, None)`` for a predictor without ``reselect``.
    """
    import inspect

    from ..engine.newmodel_intervals import FoldSubsets

    if "reselect" not in inspect.signature(est.predict_new_models).parameters:
        return None, None
    cal = manifest["prediction"].get("calibration")
    plain = ("intervals are calibrated on training models that chose the subset, which predict it better than a new "
             "model does, so they may be too narrow")
    if cal is None:
        return None, f"the manifest stores no per-fold subsets (written by an older reduce): {plain}; run reduce again"
    if list(map(str, train.index)) != list(manifest["source"]["models"]) or len(cal["fold"]) != len(train):
        return None, (f"the training matrix ({len(train)} models) is not the one the manifest's fold subsets were "
                      f"chosen on ({len(cal['fold'])} models): {plain}")
    index = {c: j for j, c in enumerate(train.columns)}
    return FoldSubsets(cal["fold"], [[index[n] for n in sub] for sub in cal["subsets"]]), None


def _conformal(est, Z_in, weights, reselect, have, extra=None, extra_truth=None):
    """``est.predict_new_models`` with the stored fold subsets (``have``: (n, k) subset cells each new model ran).

    The models that ran the whole subset are calibrated on each fold's models observed on
    the fold's subset; a model that ran part of it, in its own call, on the same positions
    of each fold's subset (:meth:`~harness_ext.methods.engine.newmodel_intervals.FoldSubsets.restrict`).
    ``extra``: the weights ``u`` of the benchmark's own score (``extra_*`` of the result, one column), calibrated
    against ``extra_truth`` (the training scores below chance as they are,
    :func:`~harness_ext.methods.reduction.benchmark_score.score_truth`) where the predictor takes it.
    """
    import inspect

    params = inspect.signature(est.predict_new_models).parameters

    def call(Z, sel):
        args = dict(weights=weights) if "reselect" not in params else dict(weights=weights, reselect=sel)
        if extra is None:
            return est.predict_new_models(Z, **args)
        if "extra_weights" in params:
            if extra_truth is not None and "extra_truth" in params:
                args["extra_truth"] = extra_truth
            return est.predict_new_models(Z, extra_weights=extra[None, :], **args)
        # A predictor without extra aggregates: a second call, its aggregate computed with the score's weights.
        p, q = est.predict_new_models(Z, **args), est.predict_new_models(Z, **{**args, "weights": extra})
        return p._replace(extra_aggregate=q.aggregate[:, None], extra_lower=q.aggregate_lower[:, None],
                          extra_upper=q.aggregate_upper[:, None])

    full = have.all(axis=1)
    if reselect is None or full.all():
        return call(Z_in, reselect)
    part = reselect.restrict(np.unique(have[~full], axis=0))
    if not full.any():
        return call(Z_in, part)
    a = call(Z_in[full], reselect)
    b = call(Z_in[~full], part)
    out = {}
    for name in ("mean", "lower", "upper", "sd", "observed", "aggregate", "aggregate_lower", "aggregate_upper",
                 "extra_aggregate", "extra_lower", "extra_upper", "frontier"):
        va, vb = getattr(a, name), getattr(b, name)
        if va is None:
            continue
        v = np.empty((len(full),) + va.shape[1:], dtype=va.dtype)
        v[full], v[~full] = va, vb
        out[name] = v
    return a._replace(**out)
