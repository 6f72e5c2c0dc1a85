"""Where ``predict`` puts its estimates: JSON, lm-eval's own results schema, Every Eval Ever records.

The point is that users see the predicted full-benchmark score and its interval
where they already look:

* :func:`write_lm_eval_results` writes ``harness_ext_prediction_<group>.json`` next
  to the lm-eval results file each model was read from, in lm-eval v0.4's results
  layout (``results``, ``groups``, ``group_subtasks``, ``n-shot``,
  ``higher_is_better``, ``config``, ``model_name``): one row per dataset with the
  metric under the filter name ``predicted`` (``acc,predicted``,
  ``acc_lower,predicted``, ``acc_upper,predicted``, ``acc_stderr,predicted``) and
  a group row named after the benchmark (``mmlu``, alias ``mmlu (estimated from 8
  of 57)``) with the full-benchmark score on the harness's metric (``acc,predicted``
  and its bounds) and the normalised aggregate beside it (``normalised,predicted``).
  Observed rows carry the measured value with a zero-width interval. A top-level
  ``harness_ext_prediction`` block names the manifest, method and interval level.
* :func:`write_eee_records` writes one Every Eval Ever record (schema 0.2.1) per
  model with the interval in ``score_details.uncertainty.confidence_interval``
  and the method named there.

Neither file is ever read back as a measured result: the lm-eval and Every Eval
Ever adapters refuse them with that reason.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np

from ... import __version__
from ...safe_output import replace_file
from ...types import is_record_variant
from .benchmark_score import z_of

#: Top-level key marking an lm-eval-schema file as a harness-ext prediction (adapters refuse such files).
PREDICTION_KEY = "harness_ext_prediction"
#: ``source_metadata.additional_details`` key marking an Every Eval Ever record as a prediction.
EEE_PREDICTION_DETAIL = "harness_ext_prediction"
EEE_SCHEMA_VERSION = "0.2.1"


def interval_method(manifest: dict, level: float = 0.9) -> str:
    """How the intervals were made, in words, for the records that carry them."""
    if manifest.get("kind") == "items":
        from .item_manifest import interval_text

        return interval_text(manifest, level)
    pred = manifest["prediction"]["predictor"]["name"]
    n = manifest["source"]["n_models"]
    pct = f"{level:.0%}".replace(".0%", "%")
    if pred in ("lowrank", "lowrank_bayes"):
        return (f"harness-ext predict: {pred} trained on {n} models of the manifest, {pct} conformal (CV+) intervals "
                "calibrated on held-out training models observed on the subset chosen without them, per dataset and "
                "for the full-benchmark score itself (Barber et al., 2021)")
    return (f"harness-ext predict: {pred} trained on {n} models of the manifest, {pct} interval = predicted value "
            f"+/- {z_of(level):.3f} x cross-validated RMSE on held-out models (per dataset; the full-benchmark score uses "
            "the RMSE of the aggregate), or the predictor's own predictive standard deviation where it has one")


def prediction_json(pred, manifest: dict, manifest_path) -> dict:
    """The predictions as one JSON document (what ``predict --json`` writes)."""
    return {"manifest": None if manifest_path is None else str(manifest_path),
            "method": interval_method(manifest, pred.level), "interval_level": pred.level, "score": pred.score,
            "warnings": list(pred.warnings),
            "aggregate": json.loads(pred.aggregate.to_json(orient="records")),
            "datasets": json.loads(pred.table.to_json(orient="records"))}


def _f(v):
    return None if v is None or not np.isfinite(v) else round(float(v), 10)


def _lm_eval_name(manifest: dict, dataset: str) -> str:
    from harness_ext.methods.reduction.harness_names import lm_eval_task

    entry = next(d for d in manifest["datasets"] if d["name"] == dataset)
    if manifest.get("kind") == "items":  # the task as lm-eval names it: a table task's declared lm-eval task
        from .item_harness_tasks import harness_names

        return harness_names(manifest).get(dataset, dataset)
    return lm_eval_task(entry) or entry.get("task") or dataset


def _lm_eval_metric_name(manifest: dict, entry: dict) -> str:
    """The metric a dataset's row is written under: lm-eval's for its task (``acc_norm`` for the Open LLM
    Leaderboard's BBH, whose Every Eval Ever records call it ``Accuracy``; ``acc`` for HELM's MMLU EM;
    ``mean_of_prompt_level_strict_acc_and_inst_level_strict_acc`` for the leaderboard's IFEval, the mean of those
    two), else the manifest's own, without its filter (the row's filter is ``predicted``)."""
    from .harness_names import lm_eval_metric, metric_key

    own = None if manifest.get("kind") == "items" else metric_key(lm_eval_metric(entry))
    return str(own or entry.get("metric") or "score").split(",")[0]


def estimate_row_name(pred, manifest: dict) -> tuple:
    """``(row name, alias)`` of the full-benchmark score: the benchmark's name, ``mmlu (estimated from 8 of 57)``."""
    name = (getattr(pred, "score", None) or {}).get("benchmark") or manifest.get("group_name") or "harness_ext_reduced"
    from .harness_names import run_share

    return name, f"{name} (estimated from {run_share(manifest)})"


def group_metric_name(score_metric: str, task_metrics: list) -> str:
    """The metric the full-benchmark row of the lm-eval-layout file is written under, as lm-eval names a group's
    (its ``aggregate_metric_list`` metric over the tasks that have it): the tasks' rows' one lm-eval metric
    (``acc`` for MMLU, ``acc_norm`` for the Open LLM Leaderboard's BBH, GPQA and MuSR, whose Every Eval Ever
    records call it ``Accuracy``); ``score`` for the normalised score (``score_metric`` ``normalised``) and for a
    mean of tasks whose lm-eval metrics differ, which no lm-eval group writes."""
    names = set(task_metrics)
    if score_metric == "normalised" or len(names) != 1:
        return "score"
    return names.pop()


def lm_eval_results_doc(pred, manifest: dict, model: str, manifest_path) -> dict:
    """One model's predictions in lm-eval v0.4's results layout."""
    by_name = {d["name"]: d for d in manifest["datasets"]}
    rows = pred.table[pred.table["model"] == model]
    agg = pred.aggregate[pred.aggregate["model"] == model].iloc[0]
    level = getattr(pred, "level", 0.9)
    z = z_of(level)
    group, alias = estimate_row_name(pred, manifest)
    results, n_shot, hib, tasks, observed, n_shot_manifest = {}, {}, {}, [], [], {}
    shots_run = getattr(pred, "shots_run", None) or {}
    for r in rows.itertuples(index=False):
        d = by_name[r.dataset]
        task = _lm_eval_name(manifest, r.dataset)
        metric = _lm_eval_metric_name(manifest, d)
        lo, hi = _f(r.raw_lower), _f(r.raw_upper)
        # An observed cell that is an anchor-item estimate has an interval of its own: its stderr says so.
        # The alias is the task's name alone, as lm-eval writes it: its table indents a group's tasks itself.
        # No estimate (the task's items were not logged) has no standard error either, not a certain 0.
        stderr = None if _f(r.raw) is None else 0.0 if lo is None or hi is None else _f((hi - lo) / (2 * z))
        results[task] = {"alias": task + ("" if r.observed else " (predicted)"),
                         f"{metric},predicted": _f(r.raw), f"{metric}_stderr,predicted": stderr,
                         f"{metric}_lower,predicted": lo, f"{metric}_upper,predicted": hi}
        if r.observed:  # kept beside the results, not in them: lm-eval's table prints every key of a row as a metric
            observed.append(task)
        # lm-eval's n-shot is the shots each task ran at: an observed score run at other shots than the manifest's
        # says its own (and the manifest's is kept beside it); a source that names no shots gets no number.
        k = d.get("num_fewshot")
        if r.observed and (model, r.dataset) in shots_run:
            k, n_shot_manifest[task] = shots_run[(model, r.dataset)], k
        if isinstance(k, int):
            n_shot[task] = k
        hib[task] = {metric: not bool((d.get("normalisation") or {}).get("flip", False))}
        tasks.append(task)
    normalised = agg.get("metric", "normalised") == "normalised"
    metric = group_metric_name(agg.get("metric", "normalised"), [next(iter(h)) for h in hib.values()])
    full = {"alias": alias + (", normalised (0 = chance, 1 = best)" if normalised else "" if metric != "score" else
                              ", the mean of the tasks' scores on their own metrics"),
            f"{metric},predicted": _f(agg["aggregate"]), f"{metric}_stderr,predicted": _f((agg["upper"] - agg["lower"]) / (2 * z)),
            f"{metric}_lower,predicted": _f(agg["lower"]), f"{metric}_upper,predicted": _f(agg["upper"])}
    # An item manifest's "normalised" columns repeat its score (item scores are not normalised): not written twice.
    both = not normalised and manifest.get("kind") != "items"
    if both:
        full.update({"normalised,predicted": _f(agg["normalised"]),
                     "normalised_lower,predicted": _f(agg["normalised_lower"]),
                     "normalised_upper,predicted": _f(agg["normalised_upper"])})
    return {
        "results": {group: full, **results},
        "groups": {group: full},
        "group_subtasks": {group: tasks, **{t: [] for t in tasks}},
        "n-shot": n_shot,
        "higher_is_better": {group: {metric: True, **({"normalised": True} if both else {})}, **hib},
        "versions": {group: 1.0},
        "config": {"model": "harness-ext-prediction", "model_args": {"pretrained": model}},
        "model_name": model,
        PREDICTION_KEY: {"manifest": None if manifest_path is None else str(manifest_path), "tool_version": __version__,
                         "method": interval_method(manifest, level), "interval_level": level,
                         "score": getattr(pred, "score", None),
                         "observed": observed, "n_observed": int(agg["n_observed"]),
                         **({"n-shot_manifest": n_shot_manifest} if n_shot_manifest else {}),
                         "warnings": [w for w in pred.warnings if w.startswith(f"{model}:") or ":" not in w[:200]]},
    }


#: Longest file stem made from a model or group name (file systems allow 255 bytes per name).
MAX_STEM = 120
#: Names Windows reserves for devices, whatever their extension (``con.json`` is the console).
WINDOWS_DEVICES = frozenset({"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)),
                             *(f"LPT{i}" for i in range(1, 10))})


def _safe(name: str) -> str:
    """A file stem from ``name``: safe characters only, and a long name cut with a hash of the whole
    so that two long names stay apart."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "__", name).strip("._") or "model"
    if stem.split(".")[0].upper() in WINDOWS_DEVICES:  # con.json opens the console on Windows, not a file
        stem = f"{stem}_"
    if len(stem) > MAX_STEM:
        import hashlib

        stem = f"{stem[:MAX_STEM - 17]}_{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"
    return stem


def check_eee_folder(out_dir) -> Path:
    """``out_dir`` as a folder ``predict --eee`` can write records into, checked before any work.

    Raises
    ------
    HarnessExtError
        If it is an existing file, or the nearest existing folder above it cannot be written.
    """
    import os

    from ...errors import HarnessExtError

    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise HarnessExtError(f"--eee {out_dir}: exists and is not a folder")
    parent = out_dir
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise HarnessExtError(f"--eee {out_dir}: {parent} is not a folder this user can write")
    return out_dir


def write_lm_eval_results(pred, manifest: dict, manifest_path) -> list:
    """``harness_ext_prediction_<group>.json`` beside each model's lm-eval results file; returns the paths.

    Models not read from an lm-eval results file (a HELM run, an Every Eval Ever record, a CSV) get no file. A results file
    inside harness-ext's own package (the bundled examples) gets its prediction in the working directory:
    an installed package is not a place to write.
    Where a folder holds more than one model's results (several runs side by side) or a model's
    results span folders, each of those models gets
    ``harness_ext_prediction_<model>.json`` instead, so no model's file overwrites another's.
    A folder that cannot be written is skipped with a warning.
    """
    import logging
    from collections import Counter

    written = []
    stem = f"harness_ext_prediction_{_safe(manifest.get('group_name') or 'harness_ext_reduced')}.json"
    folders = {}
    for model in pred.aggregate["model"]:
        files = [Path(p) for p in (pred.sources or {}).get(model, []) if Path(p).is_file()]
        if files:
            folders[model] = (_writable_home(files[0]), len({f.parent for f in files}) > 1)
    shared = Counter(folder for folder, _ in folders.values())
    names = Counter()
    for model, (folder, spans) in folders.items():
        path = folder / stem
        if spans or shared[folder] > 1:
            name = _safe(model)
            names[(folder, name)] += 1
            # Two model names can map to one safe file name: later ones are numbered, never overwritten.
            suffix = f"_{names[(folder, name)]}" if names[(folder, name)] > 1 else ""
            path = folder / f"harness_ext_prediction_{name}{suffix}.json"
        try:
            # Replaced, not written through: a results folder from elsewhere may hold a link of this name.
            replace_file(path, json.dumps(lm_eval_results_doc(pred, manifest, model, manifest_path), indent=2) + "\n")
        except OSError as exc:
            logging.getLogger("harness_ext.methods.reduction.predict").warning(f"could not write {path}: {exc.strerror or exc}")
            continue
        written.append(path)
    return written


def _writable_home(results_file: Path) -> Path:
    """The folder of ``results_file``, or the working directory when the file is one of harness-ext's bundled runs.

    A bundled run is a file inside the installed package, or a byte-identical copy at the same place under another
    ``harness_ext/data`` folder (a source checkout beside a non-editable install): neither is the user's to write in.
    """
    package = Path(__file__).resolve().parents[2]
    resolved = results_file.resolve()
    try:
        resolved.relative_to(package)
    except ValueError:
        pass
    else:
        return Path.cwd()
    parts = resolved.parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i - 1:i + 1] == ("harness_ext", "data"):
            bundled = package.joinpath("data", *parts[i + 1:])
            if bundled.is_file() and bundled.stat().st_size == resolved.stat().st_size \
                    and bundled.read_bytes() == resolved.read_bytes():
                return Path.cwd()
            break
    return results_file.parent


def has_interval(row) -> bool:
    """True when a prediction-table row has an interval of positive width (predicted, or an anchor-item estimate)."""
    lo, hi = _f(row.raw_lower), _f(row.raw_upper)
    return lo is not None and hi is not None and hi > lo


def eee_model_info(pred, model: str) -> dict:
    """The record's ``model_info``: the model's id, and for a model whose results named its precision (the Open LLM
    Leaderboard's ``bfloat16`` run, shown as ``org/model (bfloat16)`` beside the ``float16`` one) the plain hub id
    with ``additional_details.precision``, as the leaderboard's own records give it."""
    plain, precision = (getattr(pred, "variants", None) or {}).get(model, (model, None))
    if precision is not None and is_record_variant(precision):
        # One record of a truncated id (types.record_variant): no hub id and precision to split it into.
        plain, precision = model, None
    info = {"name": plain, "id": plain}
    if precision is not None:
        info["additional_details"] = {"precision": precision}
    return info


def _scale_bounds(manifest: dict, entry: dict, row) -> tuple:
    """``(min_score, max_score)`` of a dataset's scale, which Every Eval Ever requires of a continuous score: the
    normalisation's bounds; for an item manifest's task, the range of its population's item scores (a task's score is
    their mean: 0 to 1 for right/wrong items); else the row's own estimate and interval. Each is widened to hold the
    row's estimate and interval."""
    norm = entry.get("normalisation") or {}
    if norm.get("lo") is not None and norm.get("span") is not None:
        lo, hi = float(norm["lo"]), float(norm["lo"] + norm["span"])
    elif manifest.get("kind") == "items" and entry["name"] in manifest.get("tasks", {}):
        from .item_manifest import task_population

        M = task_population(manifest, entry["name"])[2]
        if M.size:
            lo, hi = float(np.nanmin(M)), float(np.nanmax(M))
        else:  # a task known by its models' scores alone: scores in [0, 1] are means of item scores in [0, 1]
            known = np.asarray(manifest["tasks"][entry["name"]]["task_scores"]["values"], dtype=float)
            lo, hi = (0.0, 1.0) if known.size and known.min() >= 0 and known.max() <= 1 else (float(row.raw),) * 2
    else:
        lo = hi = float(row.raw)
    values = [v for v in (row.raw, row.raw_lower, row.raw_upper) if _f(v) is not None]
    return min([lo, *values]), max([hi, *values])


def _eee_dataset_result(manifest: dict, entry: dict, r, bounds: tuple, level: float, method: str) -> dict:
    """One dataset's entry of a record's ``evaluation_results`` (a row of the prediction table with a score);
    ``bounds``: its scale's :func:`_scale_bounds`."""
    items = manifest.get("kind") == "items"
    norm = entry.get("normalisation") or {}
    metric = entry.get("metric") or "score"
    low, high = bounds
    cfg = {"evaluation_description": f"{metric} on {r.dataset}" + ("" if r.observed else " (predicted by harness-ext)"),
           "lower_is_better": bool(norm.get("flip", False)), "score_type": "continuous",
           "min_score": low, "max_score": high}
    details = {"observed": str(bool(r.observed)).lower(), "benchmark": str(entry.get("benchmark")),
               "task": str(entry.get("task"))}
    if not items:  # an item manifest's task scores are not normalised
        details["normalised_score"] = f"{r.score:.10g}"
    score = {"score": float(r.raw), "details": details}
    estimated = bool(r.observed) and has_interval(r)
    if estimated:
        details["estimated"] = "true"  # an anchor-item estimate: observed, with an interval of its own
    # An estimator without an interval of its own (anchor points) leaves the bounds NaN: no interval is written.
    if (not r.observed or estimated) and _f(r.raw_lower) is not None and _f(r.raw_upper) is not None:
        score["uncertainty"] = {"confidence_interval": {"lower": float(r.raw_lower), "upper": float(r.raw_upper),
                                                        "confidence_level": level, "method": method}}
    return {"evaluation_name": str(r.dataset), "source_data": {"dataset_name": str(r.dataset), "source_type": "other"},
            "metric_config": cfg, "score_details": score}


def normalised_score_bounds(manifest: dict) -> dict:
    """``min_score`` and ``max_score`` of the normalised full-benchmark score: the ends of its datasets' normalised
    scales, weighted as the aggregate weights them; ``{}`` when a dataset has no known scale (the estimate's own
    range is used then).

    A manifest fitted before the floor at chance predicts below chance, so its lower end is below 0
    (:func:`harness_ext.store.floor.normalised_bounds`): a record declaring ``[0, 1]`` would hold a score outside
    its own range, which readers of Every Eval Ever records (harness-ext's among them) take for a placeholder.
    """
    from ...store.floor import normalised_bounds
    from ...store.matrix import params_frame
    from .benchmark_score import floor_at_chance

    datasets = manifest["datasets"]
    if manifest.get("kind") == "items" or not all(d.get("normalisation") for d in datasets):
        return {"min_score": 0.0, "max_score": 1.0}  # item scores on their own [0, 1] metric
    names = [d["name"] for d in datasets]
    params = params_frame({d["name"]: d["normalisation"] for d in datasets}, names)
    weights = np.array([d.get("weight", 1.0) for d in datasets], dtype=float)  # a hand-built manifest may give none
    # The manifest's weights are rounded (1/14 each sums to 0.9999999996): the ends of their renormalised sum.
    lo, hi = normalised_bounds(params, floor_at_chance(manifest), weights / weights.sum())
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return {}
    return {"min_score": round(float(lo), 10) + 0.0, "max_score": round(float(hi), 10)}


def eee_record(pred, manifest: dict, model: str, timestamp: str = None) -> dict:
    """One model's predictions as an Every Eval Ever record (schema 0.2.1).

    A dataset without a score (an item manifest's task the model logged no item of) has no entry: the schema's score
    is a number; the full-benchmark entry's ``n_missing`` counts them."""
    by_name = {d["name"]: d for d in manifest["datasets"]}
    rows = pred.table[pred.table["model"] == model]
    agg = pred.aggregate[pred.aggregate["model"] == model].iloc[0]
    level = getattr(pred, "level", 0.9)
    method = interval_method(manifest, level)
    timestamp = timestamp or str(int(time.time()))
    scored = [r for r in rows.itertuples(index=False) if _f(r.raw) is not None]
    # Each scale once: an item task's is read from the manifest's population answers.
    scales = [_scale_bounds(manifest, by_name[r.dataset], r) for r in scored]
    results = [_eee_dataset_result(manifest, by_name[r.dataset], r, b, level, method) for r, b in zip(scored, scales)]
    missing = len(rows) - len(results)
    group, alias = estimate_row_name(pred, manifest)
    items = manifest.get("kind") == "items"
    if agg.get("metric", "normalised") == "normalised":
        how = "weighted mean of normalised scores (0 = chance, 1 = best)"
        bounds = normalised_score_bounds(manifest)
    else:
        how = f"{agg['metric']}: {(getattr(pred, 'score', None) or {}).get('weighting', '')}"
        # A weighted mean of the datasets' scores lies within their scales' joint range.
        bounds = {"min_score": min(b[0] for b in scales), "max_score": max(b[1] for b in scales)} if scales else {}
    details = {"n_observed": str(int(agg["n_observed"])), "metric": str(agg.get("metric", "normalised"))}
    if missing:
        details["n_missing"] = str(missing)
    if "normalised" in agg and not items:
        details.update(normalised_score=f"{agg['normalised']:.10g}",
                       normalised_interval=f"[{agg['normalised_lower']:.10g}, {agg['normalised_upper']:.10g}]")
    if _f(agg["aggregate"]) is not None:
        if not bounds:  # no dataset score to bound it: the estimate's own range
            ends = [v for v in (agg["aggregate"], agg["lower"], agg["upper"]) if _f(v) is not None]
            bounds = {"min_score": float(min(ends)), "max_score": float(max(ends))}
        results.append({
            "evaluation_name": f"{alias} (predicted)",
            "source_data": {"dataset_name": f"{group} full benchmark", "source_type": "other",
                            "additional_details": {"datasets": str(len(by_name))}},
            "metric_config": {"evaluation_description": f"{how}, predicted by harness-ext from a reduced subset",
                              "lower_is_better": False, "score_type": "continuous", **bounds},
            "score_details": {"score": float(agg["aggregate"]), "details": details,
                              **({} if _f(agg["lower"]) is None or _f(agg["upper"]) is None else {
                                  "uncertainty": {"confidence_interval": {
                                      "lower": float(agg["lower"]), "upper": float(agg["upper"]),
                                      "confidence_level": level, "method": method}}})},
        })
    return {
        "schema_version": EEE_SCHEMA_VERSION,
        "evaluation_id": f"harness-ext-prediction/{model}/{timestamp}",
        "retrieved_timestamp": timestamp,
        "source_metadata": {"source_name": "harness-ext prediction", "source_type": "evaluation_run",
                            "source_organization_name": "harness-ext", "evaluator_relationship": "other",
                            "additional_details": {EEE_PREDICTION_DETAIL: "true",
                                                   "predictor": manifest["prediction"]["predictor"]["name"],
                                                   "manifest_fingerprint": str(manifest["source"].get("fingerprint"))}},
        "eval_library": {"name": "harness-ext", "version": __version__},
        "model_info": eee_model_info(pred, model),
        "evaluation_results": results,
    }


def write_eee_records(pred, manifest: dict, out_dir) -> list:
    """One ``<model>.json`` Every Eval Ever record per model in ``out_dir``; returns the paths.

    Two models whose names make one file name get numbered files, never one overwriting the other.
    """
    out_dir = check_eee_folder(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = str(int(time.time()))
    written, taken = [], set()
    for model in pred.aggregate["model"]:
        stem = name = _safe(model)
        n = 1
        while stem in taken:
            n += 1
            stem = f"{name}_{n}"
        taken.add(stem)
        path = out_dir / f"{stem}.json"
        replace_file(path, json.dumps(eee_record(pred, manifest, model, stamp), indent=2) + "\n")
        written.append(path)
    return written
