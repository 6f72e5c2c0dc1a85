"""``predict`` for an item-level manifest: task and benchmark estimates from a new model's per-item logs.

The new model ran the manifest's items (lm-eval ``--samples ... --log_samples``); its
``samples_<task>_<date>.jsonl`` logs (or Every Eval Ever instance files, HELM runs, Inspect AI logs, lighteval
details) give its
score on each.
Per task, the item estimator (default: the manifest's; ``reduce``'s default borrows across the
benchmark's tasks, :mod:`harness_ext.methods.engine.item_crosstask`) estimates the score over all the
task's items with an interval, on the harness's own metric (a task's harness score is the mean of its
per-item scores). A task whose log holds every item is measured, not estimated: its score is the mean
over the items in document order, exactly the number the harness reports. The benchmark's score is
the manifest's weighted mean of the task scores, its interval the tasks' combined with the correlation of
their errors that ``reduce`` estimated on the population (:mod:`.item_benchmark`; independence for a
design-based estimator, whose tasks' items are drawn independently).

References
----------
Zhang, Dorner and Hardt (2025), "How Benchmark Prediction from Fewer Data Misses the Mark", NeurIPS, §4
(AIPW). Cochran (1977), Sampling Techniques, §5.3 (variance of a sum over independently sampled strata).
Schäfer and Strimmer (2005) (the shrunk correlation).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from ...errors import HarnessExtError
from ...report import plural
from .harness_names import reduced_name
from .item_harness_tasks import logs_as_manifest_tasks
from .item_design_plan import is_design_only
from .item_manifest import item_positions, log_numbers, task_population, task_scores
from .predict import PredictionResult


class ItemPrediction(PredictionResult):
    """Predictions of an item-level manifest (same tables as :class:`PredictionResult`).

    ``table`` adds ``n_items`` (the task's) and ``n_used`` (the items the estimate used); ``observed``
    marks a task measured whole; ``beyond_other_tasks`` is how far the model's mean over the other tasks' sampled
    items lies above every population model's (NaN for an estimator that does not look), and ``widened`` marks the
    tasks whose interval was widened to cover the design-based one for it (``crosstask``). ``aggregate``'s
    ``metric`` is the tasks' metric (or ``mean score`` when they differ) and its ``normalised`` columns repeat the
    score: item scores are not normalised. Its ``frontier`` is the model's distance beyond the population's range of
    benchmark scores, read from the mean of its items run (0 inside, negative below it; :func:`frontier_of`), and
    ``n_widened`` the number of its tasks widened.
    """

    def score_heading(self) -> str:
        s = self.score or {}
        pct = f"{self.level:.0%}".replace(".0%", "%")
        return (f"full-benchmark estimate: {s.get('benchmark')} {s.get('metric')} ({s.get('weighting')}; "
                f"{s.get('estimator')}), {pct} interval")

    def dataset_axis_label(self) -> str:
        """Item scores are not normalised: the tasks' axis is the harness's metric."""
        return f"task score ({(self.score or {}).get('metric') or 'score'}, the harness's metric)"

    def render(self, all: bool = False) -> str:
        from ...report import format_table

        pct = f"{self.level:.0%}".replace(".0%", "%")
        parts = []
        # ``raw`` is on each task's metric, named beside it (a table made before the column has none).
        cols = [c for c in ("dataset", "metric", "observed", "raw", "raw_lower", "raw_upper", "n_used", "n_items")
                if c in self.table]
        for model, rows in self.table.groupby("model", sort=False):
            whole = int(rows["observed"].sum())
            if whole == len(rows):  # every task logged on all its items: their scores are the harness's own
                parts.append(f"\n{model}: every task measured on all its items (the harness's metric; nothing estimated)")
                parts.append(format_table(rows[cols].set_index("dataset")))
                continue
            shown = rows if all else rows[~rows["observed"]]
            parts.append(f"\n{model}: task scores estimated from their items (the harness's metric), {pct} intervals"
                         + (f"; {whole} measured on all their items not shown (--all shows them)" if whole and not all
                            else ""))
            parts.append(format_table(shown[cols].set_index("dataset")))
        parts.append(f"\n{self.score_heading()}:")
        cols = ["metric", "aggregate", "lower", "upper", "n_observed"] + ["frontier"] * ("frontier" in self.aggregate)
        agg = self.aggregate.set_index("model")[cols]
        parts.append(format_table(agg))
        return "\n".join(parts)


#: What a per-item log path is, said when a file given is none of them.
LOG_KINDS = ("lm-eval's samples_<task>_<date>.jsonl, written with --log_samples (0.4.0-0.4.2: "
             "<model_args>_<task>.jsonl beside results.json), an Every Eval Ever <evaluation>_samples.jsonl, a HELM "
             "run's per_instance_stats.json, an Inspect AI log, .eval or .json "
             "with its samples, a lighteval details_<task>_<date>.parquet, written with --save-details, or an "
             "item-response table (one model's or several's), .parquet, .csv or .tsv, long by its header or declared "
             "by its <file>.meta.yaml")


def item_log_files(paths) -> tuple:
    """``(helm_runs, logs, sample_files, n_files, tables)`` among ``paths``, from one walk of the folders.

    Each file is sorted by kind once: lm-eval and Every Eval Ever samples by name
    (:func:`~harness_ext.store.samples.is_samples_file`), Inspect logs by name and first bytes
    (:func:`harness_ext.adapters.inspect_items.is_log_file`) and lighteval details by name
    (:func:`harness_ext.adapters.lighteval_details.is_details_file`) into ``logs``, HELM runs as the folders of their per-instance files
    that hold ``run_spec.json``, item-response tables as ``ingest`` finds them
    (:func:`harness_ext.store.item_table_read.item_table_spec`: long by the header, or declared by a sidecar) into
    ``tables``, ``(path, the sidecar's items block or None)``. Runs are sorted, the others in walk order; ``n_files``:
    the files looked at. A path that does not exist, a file given that is no per-item log, or a table's broken
    sidecar raises one clear error naming it.
    """
    from harness_ext.adapters.helm_instances import PER_INSTANCE_FILES
    from harness_ext.adapters.inspect_items import is_log_file
    from harness_ext.adapters.lighteval_details import is_details_file

    from ...store.ingest_files import walk_files
    from ...store.samples import is_samples_file

    def is_run(d: Path) -> bool:
        return (d / "run_spec.json").is_file() and any((d / n).is_file() for n in PER_INSTANCE_FILES)

    runs, logs, samples, tables, n_files = set(), [], [], [], 0
    for raw in paths:
        given = Path(raw)
        if not given.exists():
            raise HarnessExtError(f"{raw}: no such file or folder")
        for path in walk_files([given], lambda _: True):
            n_files += 1
            if is_samples_file(path):
                samples.append(path)
            elif path.name in PER_INSTANCE_FILES and is_run(path.parent):
                runs.add(path.parent)
            elif is_details_file(path) or (path.name not in PER_INSTANCE_FILES and is_log_file(path)):
                logs.append(path)
            elif (spec := _table_spec(path)) is not None:
                tables.append((path, spec or None))
            elif path == given:
                what = ("a HELM per-instance file without the run's run_spec.json beside it (give the run's folder "
                        "as HELM wrote it)" if path.name in PER_INSTANCE_FILES else f"not a per-item log ({LOG_KINDS})")
                raise HarnessExtError(f"{raw}: {what}")
    return sorted(runs), logs, samples, n_files, tables


def _table_spec(path: Path) -> Optional[dict]:
    """An item-response table's sidecar ``items:`` block ({} for a long table without one), or None for any other
    file: the test ``ingest`` makes (:func:`harness_ext.store.item_table_read.item_table_spec`)."""
    from ...errors import IngestError
    from ...store.item_table_read import SUFFIXES, item_table_spec
    from ...types import SourceFile

    if path.suffix not in SUFFIXES:
        return None
    try:
        return item_table_spec(SourceFile(path))
    except IngestError as exc:  # its sidecar's fault: the sidecar named
        raise HarnessExtError(f"cannot read the item table {path}: "
                              f"{exc.reason if exc.path == str(path) else exc}") from None


def read_helm_runs(runs: list) -> tuple:
    """``(frames, sources, notes)`` of HELM run directories' per-instance scores (the run's main metric,
    :func:`harness_ext.adapters.helm_instances.read_run_instances`); a broken run raises one clear error."""
    from harness_ext.adapters.helm_instances import read_run_instances

    from ...errors import IngestError

    frames, sources, notes = [], {}, []
    for d in runs:
        try:
            table = read_run_instances(d)
        except IngestError as exc:
            raise HarnessExtError(f"cannot read the HELM run {d}: {exc.reason}") from None
        except OSError as exc:  # a file the run needs is missing or unreadable (the adapter opens them itself)
            raise HarnessExtError(f"cannot read the HELM run {d}: {exc.strerror or exc}: {exc.filename}") from None
        except (KeyError, TypeError, ValueError, StopIteration) as exc:
            raise HarnessExtError(f"cannot read the HELM run {d}: run_spec.json or stats.json is not HELM's "
                                  f"({type(exc).__name__}: {exc})") from None
        f = table.frame
        frames.append(f[["model", "task", "doc_id", "metric", "value"]].assign(helm=True, by_id=True))
        sources.setdefault(str(f["model"].iloc[0]), []).append(str(table.path))
        notes += [f"{d}: {n}" for n in table.notes]
    return frames, sources, notes


def read_inspect_logs(logs: list) -> tuple:
    """``(frames, sources, notes)`` of Inspect AI logs' per-sample scores
    (:func:`harness_ext.adapters.inspect_items.read_items`) and lighteval details' per-document scores
    (:func:`harness_ext.adapters.lighteval_details.read_details`), both naming their items by id; a broken log, or
    one without samples, raises one clear error."""
    from harness_ext.adapters.inspect_items import read_items
    from harness_ext.adapters.lighteval_details import is_details_file, read_details

    from ...errors import IngestError

    frames, sources, notes = [], {}, []
    for path in logs:
        details = is_details_file(path)
        try:  # items named by id: numbered as log_numbers matches them
            table = read_details(path, store_ids=False) if details else read_items(path, store_ids=False)
        except IngestError as exc:
            what = "lighteval details file" if details else "Inspect log"
            raise HarnessExtError(f"cannot read the {what} {path}: {exc.reason}") from None
        if table is None:
            raise HarnessExtError(f"the Inspect log {path} has no samples: run inspect eval with its samples logged "
                                  "(the default; not --no-log-samples)")
        f = table.frame
        frames.append(f[["model", "task", "doc_id", "metric", "value"]].assign(helm=False, by_id=True))
        sources.setdefault(str(f["model"].iloc[0]), []).append(str(path))
        notes += [f"{path}: {n}" for n in table.notes]
    return frames, sources, notes


def read_item_logs(paths, listed=frozenset()) -> tuple:
    """``(frame, sources, notes)`` of the per-item logs found in ``paths`` (files or folders).

    lm-eval ``samples_*.jsonl``, Every Eval Ever instance files, HELM run directories (their
    ``per_instance_stats.json``, or ``display_predictions.json``, with ``instances.json``) and Inspect AI logs
    (``.eval``, or ``.json`` with their samples), lighteval details (``details_<task>_<date>.parquet``) and
    item-response tables, of one model or several (:mod:`.item_predict_tables`); each model found is its own.
    ``frame``: model, task, doc_id, metric, value, helm (from a HELM run), by_id (its items named by id, numbered by
    :func:`harness_ext.store.samples.doc_id`: Every Eval Ever, HELM, Inspect and lighteval, and a table's items of
    the tasks in ``listed``, those a manifest lists by id, or whose ids did not keep their own numbers), and, with a
    table among them, ``table`` (the table a row came from, else null); the first file read wins where two hold the
    same item (counted in ``notes``); ``sources``: model
    -> the files read. ``frame.attrs["variants"]``: ``{model: (hub id, precision)}`` of the models named at their
    Every Eval Ever record's precision (:func:`harness_ext.store.samples.eee_record_names`).
    """
    from ...errors import IngestError
    from ...types import variant_of_name
    from ...store.samples import EEE_SAMPLES_RE, eee_record_names, read_eee_samples, read_samples
    from .item_predict_tables import read_item_tables, table_numbers

    runs, logs, sample_files, n_files, tables = item_log_files(paths)
    frames, sources, notes = read_helm_runs(runs)
    for read in (read_inspect_logs(logs), read_item_tables(tables)):
        frames += read[0]
        notes += read[2]
        for model, files in read[1].items():
            sources.setdefault(model, []).extend(files)
    variants, eee_files = {}, {}
    for path in sample_files:
        try:
            if EEE_SAMPLES_RE.match(path.name):
                model, task, frame, _ = read_eee_samples(path)
                # Named at its record's precision ("org/m (bfloat16)"): --eee gives the hub id and the precision.
                names = eee_record_names(path)
                variant = None if names is None or names[1] != model else variant_of_name(model, names[0])
                if variant is not None:
                    variants[model] = (names[0], variant)
                eee_files.setdefault(task, []).append(path)  # its record beside says which dataset (item_links)
            else:
                model, task, frame, _ = read_samples(path)
            notes += [f"{path}: {n}" for n in frame.attrs.get("notes", [])]  # values left out, said with the file
        except IngestError as exc:
            raise HarnessExtError(f"cannot read the per-item log {path}: {exc.reason}") from None
        except (ValueError, TypeError, AttributeError, KeyError, OverflowError, RecursionError) as exc:
            # A third-party file the readers did not foresee: named, as ingest names it, not a traceback.
            raise HarnessExtError(f"cannot read the per-item log {path}: {type(exc).__name__}: {exc}") from exc
        frames.append(frame[["doc_id", "metric", "value"]].assign(model=model, task=task, helm=False,
                                                                  by_id=bool(EEE_SAMPLES_RE.match(path.name))))
        sources.setdefault(model, []).append(str(path))
    if not frames:
        from .item_predict_tables import results_file_hint, unread_table_hint

        raise HarnessExtError(f"no per-item logs ({LOG_KINDS}) among the {n_files:,} file{'s' * (n_files != 1)} in "
                              f"{', '.join(map(str, paths))} (hidden folders are not looked in): run lm_eval with "
                              f"--log_samples{unread_table_hint(paths)}{results_file_hint(paths)}")
    # A table's items numbered before two files' scores of one item are told apart: its own numbers may be positions.
    long = table_numbers(pd.concat(frames, ignore_index=True), listed)
    key = ["model", "task", "doc_id", "metric"]
    dup = long.duplicated(key)
    if dup.any():
        differ = int((long.groupby(key, sort=False)["value"].transform("nunique") > 1)[dup].sum())
        notes.append(f"{int(dup.sum())} item scores logged twice" + (f", {differ} of them with a different score"
                                                                     if differ else "")
                     + "; the first read (file, then line) is used")
        long = long[~dup]
    long.attrs["variants"] = variants
    long.attrs["eee_files"] = eee_files
    return long, sources, notes


def task_estimate(reg, manifest: dict, task: str, logged: pd.Series, level: float, other_logs=None,
                  cache=None, own_draw: bool = False) -> tuple:
    """:func:`_task_estimate`, its note naming how many logged scores lie outside the population's range."""
    out = _task_estimate(reg, manifest, task, logged, level, other_logs, cache, own_draw)
    beyond = range_note(manifest, task, logged)
    return (*out[:4], "; ".join(filter(None, [out[4], beyond])) or None, *out[5:]) if beyond else out


def range_note(manifest: dict, task: str, logged: pd.Series):
    """How many of a new model's logged scores of ``task`` lie outside the range of the population's scores of it
    (an accuracy of 2 or 1e308 in a hand-edited or broken log: kept, as logged, and said), or None."""
    pop = task_population(manifest, task)[2]
    pop = np.asarray(pop, dtype=float)
    pop = pop[np.isfinite(pop)]
    vals = logged.to_numpy(dtype=float)
    if not pop.size or not vals.size:
        return None
    lo, hi = float(pop.min()), float(pop.max())
    n = int(((vals < lo) | (vals > hi)).sum())
    return (f"{n} of the {len(vals):,} logged scores outside the population's range ({lo:g} to {hi:g}), used as "
            "logged: check the log's metric and scale") if n else None


def _task_estimate(reg, manifest: dict, task: str, logged: pd.Series, level: float, other_logs=None,
                   cache=None, own_draw: bool = False) -> tuple:
    """``(estimate, lower, upper, n_used, note, se, plain, beyond)`` of one task from one model's logged item scores.

    ``plain``: the mean of the items used under the random design (unbiased whatever the model, so it says where the
    model lies when a regression cannot follow it; :func:`frontier_of`), else the estimate. ``beyond``: how far the
    model's mean over the other tasks' sampled items lies above every population model's, for an estimator that
    widens its interval there (positive: widened; ``crosstask``, its result's ``beyond_sources``), else NaN.

    ``logged``: doc_id -> score. Every item logged: the mean in document order (the harness's score).
    Otherwise the estimator on the logged items of the manifest's sample (a random part of a random
    sample is a random sample); items outside the sample are not used (said in ``note``). An estimator
    that borrows across tasks also gets ``other_logs`` (task -> the model's logged scores of the other
    tasks, :func:`~harness_ext.methods.reduction.item_others.manifest_others`). ``cache``: fitted
    estimators by task and items used, shared by the models of one call. ``own_draw`` (a HELM run, whose
    entry's ``max_eval_instances`` is HELM's own draw, with a fixed seed and without the model's answers): under
    the random design every logged item of the task is the sample, said so (:func:`helm_draw_note`).
    """
    from .item_benchmark import task_standard_error
    from .item_design_plan import design_info, fit_for_design, manifest_design
    from .item_others import cached_fit, fit_predict, manifest_others, uses_other_tasks

    ids, sample, M, _ = task_population(manifest, task)
    have = logged.index.to_numpy()
    # An id the task does not have is a log of another task or a broken one: said apart from the task's other items.
    unknown = int(np.isin(have, ids, invert=True).sum())
    if np.isin(ids, have).all():
        vals = [float(logged[d]) for d in np.sort(ids)]
        est = sum(vals) / len(vals)  # summed as lm-eval's mean aggregation sums: the same float
        return est, est, est, len(ids), (f"{unknown} logged ids not items of the task (it has {len(ids):,}) not "
                                         "used" if unknown else None), 0.0, est, np.nan
    design = manifest_design(manifest)
    info = design_info(manifest["tasks"][task], len(ids), len(sample), f"task {task!r}")
    drawn = own_draw and design == "random" and not np.isin(sample, have).all()
    in_run = int(np.isin(sample, have).sum())  # the manifest's drawn items the log holds
    if drawn:
        sample = np.sort(have[np.isin(have, ids)]).astype(np.int64)
    used = sample[np.isin(sample, have)]
    extra = int(np.isin(have, sample, invert=True).sum())
    note = (f"{extra} logged items outside the manifest's sample not used"
            + (f" ({unknown} of them not items of the task, which has {len(ids):,})" if unknown else "")) if extra else None
    if len(used) < 2:
        # The logged items that are not the manifest's (another task's ids, a broken file) said with the count.
        return (np.nan, np.nan, np.nan, len(used), "; ".join(filter(None, [
            f"{len(used)} of the manifest's {len(sample)} items logged", note])), np.nan, np.nan, np.nan)
    if drawn:
        note = helm_draw_note(manifest["tasks"][task], len(used), in_run, unknown)
    elif len(used) < len(sample):
        note = "; ".join(filter(None, [note, f"{len(used)} of the manifest's {len(sample)} items logged"]))
    pos = item_positions(ids, used)
    Y = np.array([[float(logged[d]) for d in used]])
    if design == "random":
        others = manifest_others(manifest, task, other_logs or {}) if uses_other_tasks(reg) else ([], [])
        res = fit_predict(reg, level, M, pos, Y, *others, cache=cache, key=(task, pos.tobytes()))
    else:
        try:
            res = cached_fit(cache, (design, task, pos.tobytes()), lambda: fit_for_design(
                design, reg.cls, level, info, M, pos, np.isin(sample, have))).predict(Y)
        except HarnessExtError as exc:
            if len(used) == len(sample):
                raise
            # A partial log can leave a stratum without an item: that task has no unbiased estimate, the others do.
            return np.nan, np.nan, np.nan, len(used), "; ".join(filter(None, [note, str(exc)])), np.nan, np.nan, np.nan
        note = "; ".join(filter(None, [note, _beyond_note(design, M, float(res.estimate[0]))]))
    lo, hi = float(res.lower[0]), float(res.upper[0])
    # The standard error before clipping: the rule reduce's expected figures use (item_benchmark).
    se = float(task_standard_error(lo, hi, None if res.se is None else res.se[0], level))
    if np.isin(M if M.size else Y, (0.0, 1.0)).all():  # a proportion stays in [0, 1]
        lo, hi = max(lo, 0.0), min(hi, 1.0)
    plain = float(Y.mean()) if design == "random" else float(res.estimate[0])
    beyond = np.nan if res.beyond_sources is None else float(res.beyond_sources[0])
    return float(res.estimate[0]), lo, hi, len(used), note, se, plain, beyond


def helm_draw_note(info: dict, n_used: int, n_manifest: int, unknown: int) -> str:
    """What ``predict`` says when a task's sample is the instances a HELM run ran (HELM's own draw), counted."""
    note = (f"HELM's own draw of {n_used} of the task's items used as its random sample (helm-run draws an entry's "
            "max_eval_instances with a fixed seed, without the model's answers); the run holds "
            f"{n_manifest} of the manifest's {int(info['n_run'])} drawn items")
    if unknown:
        note += f"; {unknown} logged ids not items of the task not used"
    if not info.get("helm_instances"):  # an item table's numbers matched to HELM's instance numbers
        note += ("; the population's items of this task came from an item table: matched by number (idN is item N), "
                 "right only if the table numbers its items as HELM does")
    return note


def _beyond_note(design: str, M: np.ndarray, estimate: float):
    """A model-based design's estimate outside the population's range of task scores: said, since its interval was
    calibrated on models like the population (``None`` inside it, and for the design-based designs)."""
    from .item_design_plan import CHOSEN_DESIGNS

    if design not in CHOSEN_DESIGNS:
        return None
    full = np.asarray(M, dtype=float).mean(axis=1)
    if full.min() <= estimate <= full.max():
        return None
    return (f"estimate {estimate:.3f} outside the population's range of task scores ({full.min():.3f}-{full.max():.3f}): "
            f"the {design} design's interval is model-based and not calibrated there; random items (the default "
            "design) keep a design-based interval for a model beyond the population")


def predict_items(manifest: dict, paths, manifest_path=None, level: float = 0.9,
                  estimator: Optional[str] = None) -> ItemPrediction:
    """Task and benchmark estimates, with intervals at ``level``, for each model whose per-item logs are in ``paths``.

    Parameters
    ----------
    manifest : dict
        An item-level manifest (``reduce --items N``).
    paths : list of path-like
        The new models' lm-eval output folders or ``samples_*.jsonl`` files (Every Eval Ever instance
        files, HELM run directories, Inspect AI logs, lighteval details and item-response tables too). Each model
        found is predicted on its own items: one row per task and one benchmark row per model, as ``predict`` does
        for several models' results files; a table or a folder may hold several models.
    estimator : str, optional
        An item estimator plugin (``harness-ext plugins --kind item_estimators``); default: the manifest's.

    References
    ----------
    Zhang, Dorner and Hardt (2025), §4.
    """
    from .item_links import link_item_tasks
    from .item_predict_tables import table_counts
    from .lm_eval_release import old_estimate_note, older_release_logs

    long, sources, warnings = read_item_logs(paths, {t for t, b in manifest["tasks"].items() if b.get("item_ids")})
    warnings[:0] = [n for n in [old_estimate_note(manifest_path)] if n]  # said once, first
    long = older_release_logs(manifest, long, sources, warnings)  # logs of an older lm-eval than the folder needs
    variants = long.attrs.get("variants", {})
    # A task the manifest names otherwise (an Inspect task's Every Eval Ever instance file, or the reverse): read
    # under the manifest's name by the store's link rules, and said with counts.
    long = link_item_tasks(manifest, long, paths, warnings)
    read = (long.groupby(["table", "task"], sort=False).size() if "table" in long.columns
            else pd.Series(dtype="int64"))
    long = logs_as_manifest_tasks(manifest, long)  # a declared lm-eval task's logs are its table task's
    long = log_numbers(manifest, long, warnings)  # logs naming items by id: the numbers the population has
    long = table_counts(manifest, long, read, warnings)
    pred = predict_logged_items(manifest, long, sources, warnings, manifest_path, level, estimator)
    pred.variants = {m: v for m, v in variants.items() if m in set(pred.aggregate["model"])}
    return pred


def predict_logged_items(manifest: dict, long: pd.DataFrame, sources: dict, warnings: list, manifest_path=None,
                         level: float = 0.9, estimator: Optional[str] = None) -> ItemPrediction:
    """:func:`predict_items` on per-item scores already read: ``long`` as :func:`read_item_logs` gives it
    (model, task, doc_id, metric, value, helm); ``warnings`` are extended. lm-eval's group row
    (``harness_ext_estimate.py``) calls it with the run's own logged samples."""
    from ...report import listed
    from .item_benchmark import UNIFORM, benchmark_interval, manifest_correlation
    from .item_design_only import logged_part_warning
    from .item_design_plan import check_binary_answers, design_estimator_for

    long = logs_as_manifest_tasks(manifest, long)  # lm-eval's group row hands the logs under lm-eval's names
    _check_some_log_matches(manifest, long)
    name = estimator or manifest["design"]["estimator"]
    reg = design_estimator_for(manifest, name)
    if getattr(reg.cls, "requires_binary", False):
        check_binary_answers(reg, name, {t: task_population(manifest, t)[2] for t in manifest["tasks"]})
    # The exports describe the estimator used, which --item-estimator may have changed.
    manifest = dict(manifest, design=dict(manifest["design"], estimator=name))
    tasks = manifest["tasks"]
    corr, corr_note = manifest_correlation(manifest, reg, name, list(tasks))
    warnings += ([corr_note] if corr_note else []) + logged_part_warning(tasks)  # logs of --limit runs: said again
    wsum = sum(manifest["weights"].values())
    weights = np.array([manifest["weights"][t] / wsum for t in tasks])
    rows, aggs, cache = [], [], {}
    reach = population_reach(manifest, weights)  # once per call: every model is placed against the same range
    seen = sorted(set(map(str, long["model"])) & set(manifest["models"]))
    # One warning, as for results files: a population's own table names every model of it (nothing is fitted on a
    # population known by its task scores alone, so nothing is in-sample there).
    if seen and not is_design_only(manifest):
        warnings.append(f"{listed(seen, 5)}: among the manifest's population models: "
                        f"{'its' if len(seen) == 1 else 'their'} estimates are in-sample")
    for model, g in long.groupby("model", sort=True):
        rows_of = {task: g[(g["task"] == task) & (g["metric"] == b["metric"])] for task, b in tasks.items()}
        logs = {task: r.set_index("doc_id")["value"] for task, r in rows_of.items()}
        helm = {task: bool(len(r)) and bool(r["helm"].all()) for task, r in rows_of.items()}  # HELM's own draw
        mine = []
        for task, b in tasks.items():
            sel = logs[task]
            if sel.empty:
                other = sorted(set(g.loc[g["task"] == task, "metric"]))
                warnings.append(f"{model}: no per-item {b['metric']} log for task {task}" + (
                    f" (it logged {', '.join(other)}; the population was scored by {b['metric']})" if other
                    else _left_out_hint(manifest, task)))
                e = lo = hi = se = plain = beyond = np.nan
                n_used, note = 0, None
            else:
                e, lo, hi, n_used, note, se, plain, beyond = task_estimate(reg, manifest, task, sel, level, logs,
                                                                           cache, helm[task])
            if note:
                warnings.append(f"{model}, {task}: {note}")
            observed = bool(n_used == b["n_items"] and lo == hi)
            mine.append((e, 0.0 if observed else se, observed, plain, beyond, lo, hi))
            rows.append({"model": model, "dataset": task, "metric": b["metric"], "observed": observed, "score": e,
                         "lower": lo, "upper": hi, "actual": np.nan, "raw": e, "raw_lower": lo, "raw_upper": hi, "raw_actual": np.nan,
                         "n_used": n_used, "n_items": b["n_items"], "beyond_other_tasks": beyond, "widened": beyond > 0})
        est, lower, upper, _ = benchmark_interval([v[0] for v in mine], [v[1] for v in mine], weights, level, corr,
                                                  bounds=([v[5] for v in mine], [v[6] for v in mine]))
        missing = [t for t, v in zip(tasks, mine) if np.isnan(v[0])]
        if 0 < len(missing) < len(tasks):  # with none, each task's warning says it all
            warnings.append(f"{model}: no full-benchmark estimate: {len(missing)} of {len(tasks)} tasks "
                            f"{'has' if len(missing) == 1 else 'have'} no items for it ({listed(missing, 5)}); the estimate "
                            "needs every task's items")
        widened = {t: v[4] for t, v in zip(tasks, mine) if v[4] > 0}
        beyond, note = frontier_of(model, est, np.array([v[3] for v in mine]), weights, reach, name, reg,
                                   all(v[2] for v in mine), widened)
        warnings += [note] if note else []
        aggs.append({"model": model, "metric": _metric_label(tasks), "aggregate": est, "lower": lower,
                     "upper": upper, "actual": np.nan, "normalised": est, "normalised_lower": lower,
                     "normalised_upper": upper, "n_observed": sum(v[2] for v in mine), "normalised_actual": np.nan,
                     "frontier": beyond, "n_widened": len(widened)})
    unknown = sorted(set(long["task"]) - set(tasks))
    if unknown:
        warnings.append(f"logs of tasks not in the manifest ignored: {', '.join(unknown[:10])}")
    score = {"benchmark": reduced_name(manifest), "metric": _metric_label(tasks),
             "weighting": manifest.get("weighting", UNIFORM), "estimator": name}
    return ItemPrediction(table=pd.DataFrame(rows), aggregate=pd.DataFrame(aggs), warnings=warnings, sources=sources,
                          manifest=manifest, manifest_path=None if manifest_path is None else str(manifest_path),
                          level=level, score=score)


def _left_out_hint(manifest: dict, task: str) -> str:
    """What to do about a task with no log when the manifest's lm-eval group left it out (lm-eval's own task of
    that name is another evaluation), else nothing."""
    info = (manifest.get("lm_eval_tasks") or {}).get(task) or {}
    if not info.get("builtin"):
        return ""
    return (f" (the lm-eval group leaves it out: lm-eval's own {task} is another evaluation; run its drawn items in "
            "the harness they came from and give them to predict as an item-response table beside the logs, the "
            "model named as in the logs; if they are that task's documents, declare it in the table's sidecar, "
            "items: harness_tasks, and reduce again)")


def population_reach(manifest: dict, weights: np.ndarray) -> tuple:
    """``(benchmark scores, task scores)`` of the manifest's population: each model's weighted mean of its full task
    scores (the models with every task), and per task the models' full scores, in the manifest's task order."""
    full = pd.DataFrame({task: task_scores(manifest, task) for task in manifest["tasks"]})
    return full.dropna().to_numpy() @ weights, [full[t].dropna().to_numpy() for t in full.columns]


def frontier_of(model: str, est: float, plain: np.ndarray, weights: np.ndarray, reach: tuple, name: str,
                reg, measured: bool = False, widened=None) -> tuple:
    """``(distance, warning or None)``: how far a model lies beyond the population's range of benchmark scores
    (``reach``, :func:`population_reach`; 0 inside, negative below it), in the score's units, and what that means for
    the estimator ``name``'s interval.

    Where the model lies is read from ``plain``, each task's mean over the items used (:func:`task_estimate`), not
    from the estimate ``est``: a regression across models cannot follow a model beyond the population, and its
    estimate stays inside the range when the model is not (``random_learn`` on a model stronger than every population
    model). The drawn items' mean is unbiased whatever the model; its noise (a few points per task at 50 items) can
    put a model near the edge just beyond it, so the warning says which number lies where. A design-based interval
    holds there; a model-based one was calibrated on models like the population. ``measured``: every task was
    measured on all its items, so nothing was estimated. ``widened``: task -> how far the model's mean over the other
    tasks' sampled items lies above every population model's, for the tasks whose interval the estimator widened
    for it (:func:`widened_text`); said even when the model's benchmark score lies inside the population's range.
    """
    from .item_benchmark import is_design_based

    bench, per_task = reach
    also = widened_text(name, widened or {}, len(plain))
    if not np.isfinite(plain).all() or not len(bench):
        return np.nan, (f"{model}: {also}" if also else None)
    where = float(plain @ weights)
    lo, hi = float(bench.min()), float(bench.max())
    dist = where - hi if where > hi else (where - lo if where < lo else 0.0)
    if dist == 0.0:
        return 0.0, (f"{model}: {also}" if also else None)
    side = "above the strongest" if dist > 0 else "below the weakest"
    n_out = sum(bool(len(p) and not p.min() <= e <= p.max()) for e, p in zip(plain, per_task))
    if measured:
        how = "every task measured on all its items: nothing estimated"
    elif is_design_based(reg):
        how = f"{name}'s interval is design-based and holds there"
    elif name == "crosstask":
        how = ("crosstask's estimate and interval there are mostly its design-based part (AIPW), whose interval holds "
               "whatever the model is")
    else:
        how = (f"{name}'s interval is model-based, calibrated on models like the population, and may not hold there: "
               "--item-estimator aipw gives a design-based one")
    if name == "crosstask" and not measured and not is_design_based(reg):  # said once: the design part holds there
        also = widened_text(name, widened or {}, len(plain), holds=False)
    return dist, (f"{model}: beyond the population: the mean score of the items it ran, {where:.3f} over the "
                  f"benchmark, lies {abs(dist):.3f} {side} of the manifest's {plural(len(bench), 'population model')} "
                  f"({hi if dist > 0 else lo:.3f}), outside their range on {n_out} of {plural(len(per_task), 'task')} (the {name} "
                  f"estimate: {est:.3f}); {how}" + (f"; {also}" if also else ""))


def widened_text(name: str, widened: dict, n_tasks: int, holds: bool = True) -> str:
    """What an estimator's widening for a model beyond the population on the other tasks means (``""`` for none).

    ``widened``: task -> how far the model's mean over the benchmark's other tasks' sampled items lies above every
    population model's on the same items (:class:`~harness_ext.methods.engine.item_crosstask.CrossTask`'s flag).
    ``holds``: say that the design-based part's interval holds whatever the model is (False where the warning it
    joins has said so).
    """
    if not widened:
        return ""
    from ...report import listed
    from .item_others import KEPT_WORDS

    shown = listed([f"{t} by {d:.3f}" for t, d in sorted(widened.items(), key=lambda kv: -kv[1])], 5)
    what = ("those tasks' intervals to also cover their" if len(widened) != 1 else "that task's interval to also cover its")
    return (f"beyond the population on the other tasks' sampled items for {len(widened)} of "
            f"{plural(n_tasks, 'task')}: its mean score over the other tasks' sampled items lies above every "
            f"population model's ({shown}), so {name} widened {what} design-based part's (AIPW)"
            + (", whose interval holds whatever the model is" if holds else "") + f" ({KEPT_WORDS})")


def _check_some_log_matches(manifest: dict, long: pd.DataFrame) -> None:
    """Raise one clear error when no logged item is of a manifest task under its metric.

    Items are matched by task name and metric; with none matched every estimate would be empty, and a prediction
    of nothing (exit 0, a results file of nulls) reads as a run that worked. The usual cause: the run was of other
    tasks than the manifest's, as lm-eval's own ``leaderboard_musr_*`` subtasks against a population stored as one
    concatenated ``musr`` task of an item table, scored as ``acc``.
    """
    tasks = manifest["tasks"]
    wanted = pd.MultiIndex.from_tuples([(t, b["metric"]) for t, b in tasks.items()], names=["task", "metric"])
    logged = pd.MultiIndex.from_frame(long[["task", "metric"]].astype(str))
    if logged.isin(wanted).any():
        return
    have = long.groupby("task", sort=True)["metric"].agg(lambda m: ", ".join(sorted(set(map(str, m)))))
    shown = [f"{t} ({m})" for t, m in have.items()]
    want = ", ".join(f"{t} ({b['metric']})" for t, b in tasks.items())
    more = f" and {len(shown) - 10} more" if len(shown) > 10 else ""
    # The manifest's tasks logged under another metric: most often an item table that names none (0/1 read as acc).
    other = sorted(t for t in tasks if t in have.index)
    metric_hint = (f" The logs hold {plural(len(other), 'task')} of the manifest under another metric ("
                   + "; ".join(f"{t}: {have[t]}, not {tasks[t]['metric']}" for t in other[:5])
                   + (f"; {len(other) - 5} more" if len(other) > 5 else "") + ")" if other else "")
    if other and all(have[t] == "acc" for t in other):
        metric_hint += (": a new model's item table that names no metric has its 0/1 scores read as acc; name it "
                        "(`metric:` in the table's sidecar `<file>.meta.yaml`, or a metric column) as the "
                        "population's table does.")
    elif other and (filtered := _filtered_metrics(tasks, long, other)):
        # lm-eval names a metric logged under a filter other than "none" "<metric>,<filter>" (HumanEval's
        # create_test, GSM8K's strict-match), where an item table names the metric alone.
        metric_hint += (f": lm-eval logs a metric under a filter as <metric>,<filter> ({filtered}); name the "
                        "population's metric so (`metric:` in its tables' sidecars, <file>.meta.yaml), ingest them "
                        "again and reduce again.")
    elif other:
        metric_hint += "."
    raise HarnessExtError(
        "no logged item is of a task of the manifest under its metric, so nothing can be estimated: the manifest's "
        f"tasks are {want}; the logs hold "
        f"{', '.join(shown[:10])}{more}.{metric_hint} Items are matched by task name and metric: run the group reduce wrote "
        "beside the manifest (its tasks, with its --samples file), or reduce from a population stored under the "
        "task names and metric of the harness the new model runs (an item table's sidecar can declare which lm-eval "
        "task each of its tasks is: items: harness_tasks)")


def _filtered_metrics(tasks: dict, long: pd.DataFrame, names: list) -> str:
    """The logged ``<metric>,<filter>`` names of the manifest's metric of these tasks (``"pass1,create_test"``), or
    ``""`` when some task logs none such."""
    found = []
    for t in names:
        logged = sorted({str(m) for m in long.loc[long["task"].astype(str) == t, "metric"]
                         if str(m).partition(",")[0] == tasks[t]["metric"] and "," in str(m)})
        if not logged:
            return ""
        found += [m for m in logged if m not in found]
    return ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")


def _metric_label(tasks: dict) -> str:
    metrics = {b["metric"] for b in tasks.values()}
    return metrics.pop() if len(metrics) == 1 else "mean score"
