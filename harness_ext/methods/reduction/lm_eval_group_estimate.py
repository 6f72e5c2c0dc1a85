"""The full-benchmark estimate as the reduced group's row in lm-eval's own results table.

``reduce`` copies this file, as ``harness_ext_estimate.py``, into the folder of a reduced
benchmark, and the group YAML names :func:`estimate` as its aggregation::

    aggregate_metric_list:
    - metric: acc
      aggregation: !function harness_ext_estimate.estimate
      weight_by_size: false

lm-eval (0.4.13) accepts a callable there but still prints the group's plain mean of the
subset; lm-eval 0.4.4 to 0.4.10 call it as ``fn(values, sizes, weight_by_size)`` and print the one number it
returns. Loading this file (lm-eval imports it when it reads the group YAML) therefore wraps
``lm_eval.api.group.Group.aggregate`` once (on 0.4.4 to 0.4.10, which have no ``Group``,
``evaluator_utils.consolidate_group_results``): for a group whose aggregation is this function,
the row becomes the estimate ``harness-ext predict`` gives from the subset tasks' scores,
on the harness's metric (``acc,estimate``, its standard error ``(upper - lower) / (2 z)``,
and the 90% bounds ``acc_lower,estimate`` / ``acc_upper,estimate``); every other group is
aggregated as before. The prediction needs harness-ext installed where lm-eval runs
(``pip install harness-ext``); the only file read is ``manifest.json`` beside this one (its
embedded training matrix), nothing is downloaded. Without harness-ext, or when the
prediction fails, the group keeps lm-eval's plain mean and its alias says that it is not
the estimate.

An item-level reduction (``reduce --items``) estimates each task from the new model's answers
to the drawn items, so the row needs lm-eval's per-item results: run with ``--log_samples``
(the folder's run line has it). For that, lm-eval's ``evaluator_utils.aggregate_groups`` is
wrapped too, only to hand the run's logged samples to the group's aggregation; without them
the row stays the plain mean, labelled. A dataset subset run on its anchor items (``reduce
--items N --item-design anchors``) scores each such task as the anchors' weighted mean from
the same samples, as ``harness-ext predict`` does.
"""

from __future__ import annotations

import logging
import os

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "manifest.json")
FILTER = "estimate"
LEVEL = 0.9

log = logging.getLogger("harness_ext_estimate")


def _value(metric: str, block: dict):
    """A task's value of ``metric`` under the filter ``none`` (else the first filter lm-eval wrote), or None."""
    keys = [k for k in block if k.startswith(metric + ",") and "_stderr" not in k]
    key = f"{metric},none" if f"{metric},none" in keys else (sorted(keys) or [None])[0]
    return float(block[key]) if key is not None and isinstance(block[key], (int, float)) else None


def _scores(metric: str, task_metrics: dict, tasks: list, manifest=None) -> dict:
    """``{task: value}`` of each task's metric: the manifest's for its subset tasks (the Open LLM Leaderboard v2's
    IFEval is the mean of two of lm-eval's metrics, which the group YAML cannot name), else the group's ``metric``.
    A task missing part of its metrics is left out, and the log says what it lacks."""
    from harness_ext.methods.reduction.harness_names import lm_eval_metric, lm_eval_score, lm_eval_task_list, metric_parts

    own = {t: lm_eval_metric(e) for e in (manifest or {}).get("subset") or [] for t in lm_eval_task_list(e)}
    out = {}
    for task in tasks:
        block, want = task_metrics.get(task) or {}, own.get(task) or metric
        value, missing = lm_eval_score(want, {m: _value(m, block) for m in metric_parts(want)})
        if value is not None:
            out[task] = value
        elif len(metric_parts(want)) > 1 and len(missing) < len(metric_parts(want)):
            log.warning("harness-ext: %s is the mean of %s; lm-eval gave no %s, so it is not used", task,
                        ", ".join(metric_parts(want)), ", ".join(missing))
    return out


def _item_prediction(manifest: dict, tasks: list, samples):
    """The item-level prediction from lm-eval's logged samples of ``tasks`` (``{task: [sample, ...]}``)."""
    if not samples or not any(samples.get(t) for t in tasks):
        raise ValueError("lm-eval kept no per-item results: run with --log_samples")
    import pandas as pd
    from harness_ext.methods.reduction.item_predict import predict_logged_items
    from harness_ext.store.samples import sample_frame

    frames = [sample_frame(f"lm-eval's logged samples of {t}", enumerate(samples.get(t) or [], start=1))
              .assign(model="this run", task=t, helm=False) for t in tasks]
    long = pd.concat(frames, ignore_index=True)[["model", "task", "doc_id", "metric", "value", "helm"]]
    return predict_logged_items(manifest, long, {}, [], manifest_path=MANIFEST, level=LEVEL)


def _subset_prediction(manifest: dict, scores: dict, samples):
    """The prediction from the subset tasks' ``scores``; a task run on its anchor items (``reduce --items`` on a
    dataset subset) scores as their weighted mean, from the logged samples, as ``harness-ext predict`` scores it."""
    import pandas as pd

    import harness_ext as hx

    frame = pd.DataFrame([scores], index=["this run"])
    items = manifest.get("items") or {}
    if items.get("tasks") and samples:
        from harness_ext.methods.reduction.items import logged_anchor_scores

        anchored = logged_anchor_scores(items, samples)
        frame = frame.drop(columns=[t for t, b in items["tasks"].items() if b["dataset"] in anchored and t in frame])
        for dataset, v in anchored.items():
            frame[dataset] = v
        frame.attrs["anchored"] = [("this run", d) for d in anchored]
    return hx.predict(manifest, frame, level=LEVEL)


def _mixed(manifest) -> bool:
    """Whether an item-level manifest's tasks are scored by different metrics (``acc`` and ``exact_match``)."""
    tasks = (manifest or {}).get("tasks") or {}
    return (manifest or {}).get("kind") == "items" and len({b.get("metric") for b in tasks.values()}) > 1


def _drop(row: dict, metric: str) -> None:
    """Remove lm-eval's plain mean of ``metric`` (every filter) and its standard error from ``row``."""
    for key in [k for k in row if k.startswith(f"{metric},") or k.startswith(f"{metric}_stderr,")]:
        del row[key]


def _not_estimated(manifest) -> str:
    """What the row holds when there is no estimate: the subset's plain mean, or nothing when the tasks'
    metrics differ (a plain mean of one metric's tasks is no score of the benchmark)."""
    return "no estimate; use 'harness-ext predict'" if _mixed(manifest) else "subset mean, not the estimate"


def _install_hint(manifest, exc: ImportError) -> str:
    """What to do when harness-ext is missing where lm-eval runs, or older than the one that wrote this folder
    (else the import error itself: a dependency missing)."""
    try:
        import harness_ext
    except ImportError:
        return "pip install harness-ext"
    have = getattr(harness_ext, "__version__", "?")
    wrote = ((manifest or {}).get("tool") or {}).get("version")
    if wrote is not None and wrote == have:
        return f"ImportError: {exc}"
    return f"upgrade harness-ext {have}: this folder was written by {wrote or 'a newer version'}"


def _plain_mean(values: list, sizes: list, weight_by_size) -> float:
    """lm-eval's own group mean of the subtasks' ``values`` (weighted by ``sizes`` when asked), as lm-eval 0.4.5
    to 0.4.10 compute it: what those releases get back from :func:`estimate` before :func:`_install` replaces the row."""
    weights = [float(s) for s in sizes] if weight_by_size else [1.0] * len(values)
    return sum(float(v) * w for v, w in zip(values, weights)) / sum(weights) if values and sum(weights) else float("nan")


def estimate(group_metrics, task_metrics, tasks=None, metric=None, samples=None):
    """The group's row with the full-benchmark estimate of ``metric`` from the subset tasks' scores.

    lm-eval 0.4.4 to 0.4.10 call a group's aggregation as ``fn(values, sizes, weight_by_size)`` and take one number
    back: that call gets lm-eval's plain mean (:func:`_plain_mean`), and the row is replaced once the group's
    metrics are all in (:func:`_install`).

    Parameters
    ----------
    group_metrics : dict
        The row lm-eval computed (its plain mean of the subset); from lm-eval 0.4.4-0.4.10, the subtasks' values.
    task_metrics : dict
        Every task's metrics, ``{task: {"acc,none": ..., ...}}``; from lm-eval 0.4.4-0.4.10, the subtasks' sizes.
    tasks : list of str
        The group's leaf tasks.
    metric : str
        The metric the group aggregates (``acc``).
    samples : dict, optional
        lm-eval's logged samples, ``{task: [sample, ...]}``: the per-item answers an item-level
        reduction estimates from.

    Returns
    -------
    dict or float
        The row: the estimate and its interval, or lm-eval's plain mean with an alias saying why not; to lm-eval
        0.4.4-0.4.10's call, its plain mean.
    """
    import json

    if isinstance(group_metrics, (list, tuple)):  # lm-eval 0.4.4-0.4.10: (values, sizes, weight_by_size)
        return _plain_mean(group_metrics, task_metrics, tasks)
    row = dict(group_metrics)
    alias = row.get("alias") or row.get("name") or "reduced"
    manifest = None
    try:
        with open(MANIFEST, encoding="utf-8") as fh:
            manifest = json.load(fh)
        if _mixed(manifest):  # lm-eval's plain row is the mean of the tasks scored by ``metric`` only
            _drop(row, metric)
        if manifest.get("kind") == "items":
            pred = _item_prediction(manifest, tasks, samples)
        elif "training_matrix" not in manifest:
            raise ValueError("the manifest embeds no training matrix (reduce --no-embed?): use 'harness-ext predict'")
        else:
            pred = _subset_prediction(manifest, _scores(metric, task_metrics, tasks, manifest), samples)
        if not pred.aggregate["aggregate"].notna().all():  # e.g. a task with no logged item
            raise ValueError("no full-benchmark estimate: " + "; ".join(pred.warnings[-3:]))
    except ImportError as exc:
        row["alias"] = f"{alias}: {_not_estimated(manifest)} ({_install_hint(manifest, exc)})"
        return row
    except Exception as exc:  # lm-eval's run must finish: the plain mean stays, labelled
        log.warning("harness-ext could not estimate the full benchmark: %s: %s", type(exc).__name__, exc)
        row["alias"] = f"{alias}: {_not_estimated(manifest)} ({type(exc).__name__})"
        return row
    for w in pred.warnings:
        log.warning("harness-ext: %s", w)
    agg = pred.aggregate.iloc[0]
    # The row is named after what it estimates: the harness's metric, or the tasks' mean score when they differ.
    name = {"normalised": "normalised", "mean score": "mean_score"}.get(agg["metric"], metric)
    _drop(row, metric)  # the plain mean of the subset is not the benchmark's score
    z = 1.6448536269514722 if LEVEL == 0.9 else __import__("statistics").NormalDist().inv_cdf(0.5 + LEVEL / 2)
    row.update({f"{name},{FILTER}": float(agg["aggregate"]),
                f"{name}_stderr,{FILTER}": float((agg["upper"] - agg["lower"]) / (2 * z)),
                f"{name}_lower,{FILTER}": float(agg["lower"]), f"{name}_upper,{FILTER}": float(agg["upper"])})
    return row


estimate.harness_ext_group_estimate = True
estimate.harness_ext_takes_samples = True


def _install() -> None:
    """Wrap ``Group.aggregate`` (once per process) so a group whose aggregation is :func:`estimate` shows it.

    lm-eval loads this file afresh for every YAML that names it, so the logged samples pass through
    the wrappers' shared ``state``, not a module global.
    """
    try:
        from lm_eval.api.group import Group
    except ImportError:  # an lm-eval without Group (0.4.4 to 0.4.10): the group results are consolidated in one call
        _install_consolidate()
        return
    if getattr(Group.aggregate, "harness_ext_wrapped", False):
        return
    plain = Group.aggregate
    state = {"samples": None}

    def aggregate(self, task_metrics):
        row = plain(self, task_metrics)
        for cfg in self.aggregate_metric_list or []:
            fn = getattr(cfg, "aggregation", None)
            if callable(fn) and getattr(fn, "harness_ext_group_estimate", False):
                extra = {"samples": state["samples"]} if getattr(fn, "harness_ext_takes_samples", False) else {}
                row = fn(row, task_metrics, [t.task_name for t in self.get_all_tasks()], cfg.metric, **extra)
        return row

    aggregate.harness_ext_wrapped = True
    Group.aggregate = aggregate
    try:
        from lm_eval import evaluator_utils
    except ImportError:
        return
    plain_groups = getattr(evaluator_utils, "aggregate_groups", None)
    if plain_groups is None:  # another lm-eval layout: an item-level row stays the plain mean, labelled
        return

    def aggregate_groups(results, *args, **kwargs):
        state["samples"] = getattr(results, "samples", None)
        try:
            return plain_groups(results, *args, **kwargs)
        finally:
            state["samples"] = None

    evaluator_utils.aggregate_groups = aggregate_groups


def _our_groups(task_dict: dict):
    """``(group, aggregation config, function)`` of every group in lm-eval's ``task_dict`` (nested too) whose aggregation
    is :func:`estimate` (lm-eval 0.4.4-0.4.10's ``ConfigurableGroup`` keys)."""
    for key, value in (task_dict or {}).items():
        config = getattr(key, "config", None)
        if isinstance(config, dict):
            for cfg in config.get("aggregate_metric_list") or []:
                fn = cfg.get("aggregation") if isinstance(cfg, dict) else getattr(cfg, "aggregation", None)
                if callable(fn) and getattr(fn, "harness_ext_group_estimate", False):
                    yield key, cfg, fn
        if isinstance(value, dict):
            yield from _our_groups(value)


def _install_consolidate() -> None:
    """lm-eval 0.4.4-0.4.10: wrap ``consolidate_group_results`` (its outermost call) so that, once every group's
    plain mean is in, a group whose aggregation is :func:`estimate` gets the estimate's row; and
    ``consolidate_results`` only to keep the run's logged samples for an item-level row."""
    try:
        from lm_eval import evaluator, evaluator_utils
    except ImportError:
        return
    plain = getattr(evaluator_utils, "consolidate_group_results", None)
    plain_results = getattr(evaluator_utils, "consolidate_results", None)
    if plain is None or plain_results is None or getattr(plain, "harness_ext_wrapped", False):
        return
    state = {"samples": None}

    def consolidate_results(*args, **kwargs):
        out = plain_results(*args, **kwargs)
        state["samples"] = out[1] if isinstance(out, tuple) and len(out) > 1 else None
        return out

    def consolidate_group_results(results, versions, task_dict, task_root=None, *args, **kwargs):
        out = plain(results, versions, task_dict, task_root, *args, **kwargs)
        if task_root is not None:  # lm-eval's own recursion into a group
            return out
        groups = out[3] if len(out) > 3 and isinstance(out[3], dict) else {}
        for group, cfg, fn in _our_groups(task_dict):
            name = group.group_name
            metric = cfg.get("metric") if isinstance(cfg, dict) else getattr(cfg, "metric", None)
            if name in out[0] and metric:
                row = {"alias": getattr(group, "group_alias", None) or name, **out[0][name]}
                row = out[0][name] = fn(row, out[0], list(groups.get(name) or []), metric, samples=state["samples"])
                # These releases print the group's configured alias, not the row's: a row that is not the
                # estimate says so there too.
                if row.get("alias") and getattr(group, "_config", None) is not None:
                    group._config.group_alias = row["alias"]
        return out

    consolidate_group_results.harness_ext_wrapped = True
    for module in (evaluator_utils, evaluator):  # lm-eval's evaluator imported both by name
        if getattr(module, "consolidate_group_results", None) is plain:
            module.consolidate_group_results = consolidate_group_results
        if getattr(module, "consolidate_results", None) is plain_results:
            module.consolidate_results = consolidate_results


_install()
