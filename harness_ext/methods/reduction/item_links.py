"""One dataset under two names, at item-level ``predict``: a new model's per-item files read under the manifest's task.

An Inspect AI log names its items' task by the Inspect task (``simpleqa_verified``); the Every Eval Ever instance file
converted from it names them by the log's dataset (``evaluation_name``: ``codelion/SimpleQA-Verified``), and the
record beside it says which dataset and scorer it is (``source_data``). ``reduce --items`` keeps, per task, what the
store's built-in links compare (``link_fields``, :mod:`harness_ext.store.dataset_links`); ``predict`` finds the same
fields for the new model's per-item tasks (an Inspect log's header, an instance file's record beside it) and matches
them by the one rule dataset-level ``predict`` uses (:func:`~.predict_links.match_new`), so the new model's items are
read under the manifest's task, with a line per link and counts; a file that fits several tasks is read under none.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

#: The per-sample score of an Every Eval Ever instance file (``evaluation.score``): the value of the Inspect scorer
#: whose mean is the log's metric, when the file was converted from an Inspect log.
EEE_SCORE = "score"
#: Its ``evaluation.is_correct`` (the score above 0), read as 0/1.
EEE_ACC = "acc"


def record_of(instance_path) -> Path:
    """The aggregate record beside an Every Eval Ever instance file (``<id>.json`` beside ``<id>_samples.jsonl``)."""
    p = Path(instance_path)
    return p.with_name(re.sub(r"_samples\.jsonl(?:\.gz)?$", ".json", p.name))


def _record_datasets(store, paths) -> set:
    """``(benchmark, name)`` of the results the store read from the records beside the instance files ``paths``."""
    wanted = sorted({s for p in paths for s in (str(record_of(p)), str(record_of(p).resolve()))})
    if not wanted:
        return set()
    rows = store.con.execute(
        "SELECT DISTINCT d.benchmark, d.name FROM results r JOIN datasets d USING (dataset_id) "
        f"JOIN sources s USING (source_id) WHERE s.path IN ({', '.join('?' * len(wanted))})", wanted).fetchall()
    return set(rows)


def task_link_fields(store, task: str, instance_files=(), benchmark=None):
    """``(benchmark, link_fields)`` of a per-item task, or None: an Inspect task's own dataset's fields (the item task
    is its name), or those of the one dataset of the records beside its Every Eval Ever ``instance_files``."""
    from ...store.dataset_links import stored_link_fields

    stored = stored_link_fields(store)
    if instance_files:
        keys = [k for k in _record_datasets(store, instance_files) if k in stored]
    else:
        keys = [(b, n) for b, n in stored if n == task and benchmark in (None, b)]
    fields = {repr(sorted(stored[k].items())) for k in keys}
    return (keys[0][0], stored[keys[0]]) if len(fields) == 1 else None


def attach_link_fields(store, tasks: dict) -> None:
    """Add to each of a manifest's ``tasks`` (``reduce --items``) the fields the built-in links compare, where the
    store has them: the task's own Inspect dataset, or the record beside its Every Eval Ever instance files."""
    from ...store.dataset_links import stored_link_fields
    from ...store.samples import EEE_SAMPLES_RE
    from ...store.tables import has_table

    if not stored_link_fields(store):  # no Inspect task nor evaluation-run record: nothing a link could use
        return
    logged = has_table(store.con, "sample_sources")  # a store of item tables only has none
    for task, block in tasks.items():
        rows = [] if not logged else store.con.execute(
            "SELECT DISTINCT path FROM sample_sources WHERE task = ? AND benchmark IS NOT DISTINCT FROM ?",
            [task, block.get("benchmark")]).fetchall()
        files = [p for (p,) in rows if EEE_SAMPLES_RE.match(Path(p).name)]
        if got := task_link_fields(store, task, files, block.get("benchmark")):
            block["link_fields"] = got[1]


def link_item_tasks(manifest: dict, long: pd.DataFrame, paths, warnings: list) -> pd.DataFrame:
    """``long`` (:func:`~.item_predict.read_item_logs`) with the new model's items of a task the manifest names
    otherwise read under the manifest's task; a line per link in ``warnings``, counting the items read, those also
    there under the manifest's task itself (the manifest's kept) and those on another metric."""
    from ...store.db import Store
    from ...store.ingest import ingest_paths
    from .predict_links import match_new

    tasks = manifest["tasks"]
    own = {(b.get("benchmark"), t): {"name": t, "benchmark": b.get("benchmark"), "link_fields": b["link_fields"]}
           for t, b in tasks.items() if b.get("link_fields")}
    others = sorted(set(map(str, long["task"])) - set(tasks))
    if not own or not others:
        return long
    eee = long.attrs.get("eee_files") or {}
    with Store.open(":memory:") as store:
        ingest_paths(store, paths)  # the aggregate files beside the per-item ones: what names their dataset
        found = {t: task_link_fields(store, t, eee.get(t, ())) for t in others}
    new = {(got[0], t): got[1] for t, got in found.items() if got}
    renames, notes = match_new(own, new, set(new))
    warnings += [f"reading the new per-item logs: {n}" for n in notes]
    for (_, old), (_, name, why) in renames.items():
        long, note = _relink_task(long, old, name, tasks[name], why)
        warnings.append(f"reading the new per-item logs: {note}")
    return long


def _relink_task(long: pd.DataFrame, old: str, name: str, block: dict, why: str) -> tuple:
    """``(long, note)``: the items of task ``old`` read as the manifest's task ``name`` (its ``block``), counted."""
    from ...report import plural

    rows = long["task"] == old
    want = block["metric"]
    metrics = set(map(str, long.loc[rows, "metric"]))
    # One scorer's per-sample value under each harness's name: Every Eval Ever's "score" is the Inspect scorer's
    # value whose mean is the log's metric (the record's converter reads it from the log's samples).
    # Its "acc" is whether that value is above 0: the same as the value only where every value is 0 or 1.
    binary = bool(long.loc[rows, "value"].isin((0.0, 1.0)).all())
    read_as = (want if want in metrics else EEE_SCORE if EEE_SCORE in metrics and want != EEE_ACC
               else next(iter(metrics)) if len(metrics) == 1 and (want == EEE_SCORE or (want == EEE_ACC and binary))
               else None)
    if read_as is None:
        return long, (f"task {old} of the new logs fits the manifest's {name} ({why}), but its items are scored "
                      f"by {', '.join(sorted(metrics))}, not {want}: not read as {name}")
    take = rows & (long["metric"] == read_as)
    moved = long.loc[take].assign(task=name, metric=want)
    key = ["model", "doc_id"]
    there = long.loc[(long["task"] == name) & (long["metric"] == want), key]
    dup = pd.MultiIndex.from_frame(moved[key]).isin(pd.MultiIndex.from_frame(there))
    out = pd.concat([long.loc[~rows], moved[~dup]], ignore_index=True)
    out.attrs = long.attrs
    note = (f"task {old} of the new logs read as the manifest's {name} ({why}): "
            f"{plural(int((~dup).sum()), 'item score')} read under {name}")
    if read_as != want:
        note += f" (its {read_as} read as {want})"
    if dup.any():
        note += f", {int(dup.sum())} also there under {name} itself (the manifest's task's kept)"
    if rest := int((rows & ~take).sum()):
        note += (f"; its {plural(rest, 'item score')} on {', '.join(sorted(metrics - {read_as}))} not read (the "
                 f"manifest's {name} is scored by {want})")
    return out, note
