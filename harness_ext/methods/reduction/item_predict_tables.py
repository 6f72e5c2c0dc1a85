"""``predict`` from new models' item-response tables: the tables ``ingest`` reads, of one model or of several.

An evaluation stack that exports per-item correctness (a long table ``model, item, score``, or a wide one declared by
its ``<file>.meta.yaml``) is read by the store's own reader (:func:`harness_ext.store.item_table_read.read_item_table`),
so a table gives ``predict`` the task, item, metric and score that ``ingest`` would store of it. Its items are then
matched to the manifest's as a log's are: by task name, item id and metric, never by position in the file
(:func:`table_numbers`). A table of several models (checkpoints run on the drawn items) gives each model its own
prediction, as several models' results files do; a population model among them is predicted in-sample, and said.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import HarnessExtError

log = logging.getLogger("harness_ext.predict")


def read_item_tables(tables: list) -> tuple:
    """``(frames, sources, notes)`` of item-response tables, each holding one model's item scores or several's.

    Parameters
    ----------
    tables : list of (path, dict or None)
        Each table and its sidecar's ``items:`` block (:func:`~.item_predict.item_log_files`).

    Returns
    -------
    tuple
        ``frames``: model (each row's own), task, doc_id (the file's own number of the item), metric, value, helm
        (False), by_id (False), ``item_id`` (the item's id as the store's id map keeps it), ``item_own`` (whether the
        table's ids of the task kept their own numbers) and ``table`` (the file), which :func:`table_numbers` turns
        into the manifest's numbers; ``sources``: model -> files (a table of several models listed under each);
        ``notes``: what reading left out, per file.

    Raises
    ------
    HarnessExtError
        For a table that cannot be read, naming it and the reason.
    """
    from ...errors import IngestError
    from ...store.item_table_read import read_item_table

    frames, sources, notes = [], {}, []
    for path, spec in tables:
        try:
            table = read_item_table(path, spec)
        except IngestError as exc:
            raise HarnessExtError(f"cannot read the item table {path}: {exc.reason}") from None
        f = table.frame
        # Each row keeps its own model: a table of several new models (checkpoints run on the drawn items) gives
        # each its own prediction, as several models' results files do.
        models = f["model"].astype(str).to_numpy()
        # Each row's id as the file gives it: the file's numbers may be positions, which are never matched.
        ids = table.ids.assign(task=table.ids["task"].astype(str))[["task", "doc_id", "item", "own"]]
        rows = pd.DataFrame({"task": f["task"].astype(str).to_numpy(), "doc_id": f["doc_id"].to_numpy()})
        named = rows.merge(ids, on=["task", "doc_id"], how="left", validate="many_to_one")
        frames.append(pd.DataFrame({
            "model": models, "task": rows["task"], "doc_id": rows["doc_id"].astype("int64"),
            "metric": f["metric"].astype(str).to_numpy(), "value": f["value"].to_numpy(dtype=float), "helm": False,
            "by_id": False, "item_id": named["item"].to_numpy(dtype=object),
            "item_own": named["own"].to_numpy(dtype=bool), "table": str(path)}))
        for model in pd.unique(models):
            sources.setdefault(str(model), []).append(str(path))
        notes += [f"{path}: {n}" for n in table.notes]
    return frames, sources, notes


def table_numbers(long: pd.DataFrame, listed=frozenset()) -> pd.DataFrame:
    """``long`` with the items of item-response tables (rows with an ``item_id``) numbered as a log's are.

    The rule is the one ``ingest`` numbers a task's items by and ``predict`` matches a log's ids by. For a task the
    manifest lists by id (``listed``: tasks with ``item_ids``, ids the store numbered), each id is matched by its
    text, as an Inspect log's or a HELM run's (``by_id``, numbered by :func:`~.item_manifest.log_numbers`). For any
    other task the manifest's numbers are the ids' own (whole numbers, or one prefix and distinct numbers), so the
    table's own numbers are used when its ids of the task kept theirs, and otherwise each id is read as a log's id is
    (:func:`harness_ext.store.samples.doc_id`). A table's position numbers are never used. The helper columns
    ``item_id`` and ``item_own`` are dropped; ``table`` is kept for :func:`table_counts`.
    """
    if "item_id" not in long.columns:
        return long
    from ...store.samples import doc_id

    ids = long["item_id"]
    table = ids.notna().to_numpy()
    own = long["item_own"].where(table, True).astype(bool).to_numpy()
    by_text = table & (long["task"].isin(set(listed)).to_numpy() | ~own)
    numbers = long["doc_id"].to_numpy(dtype=np.int64).copy()
    numbers[by_text] = np.fromiter((doc_id(str(v)) for v in ids[by_text]), dtype=np.int64, count=int(by_text.sum()))
    return long.drop(columns=["item_id", "item_own"]).assign(doc_id=numbers, by_id=long["by_id"].to_numpy(dtype=bool)
                                                             | by_text)


def table_counts(manifest: dict, long: pd.DataFrame, read: pd.Series, warnings: list) -> pd.DataFrame:
    """``long`` without its ``table`` column; ``warnings`` extended with each item-response table whose item scores
    did not all match the manifest's items, with how many did not and of which tasks.

    ``read``: each table's item scores as read, by ``(table, task)`` (before :func:`~.item_manifest.log_numbers` left
    out ids that are no item of their task). An item score is matched when its task is a manifest task, its metric
    the task's and its number one of the task's items (the matching :func:`~.item_predict.predict_logged_items`
    does). A table matched whole is no warning: it is logged at the INFO level (``-v``).
    """
    if "table" not in long.columns:
        return long
    from ...report import plural
    from .item_manifest import decode_ids

    tasks = manifest["tasks"]
    t = long[long["table"].notna()]
    metric = t["task"].map({k: b["metric"] for k, b in tasks.items()})
    ok = (t["metric"] == metric).to_numpy().copy()
    for task in set(t.loc[ok, "task"]):
        rows = ok & (t["task"] == task).to_numpy()
        ok[rows] = np.isin(t.loc[rows, "doc_id"].to_numpy(), decode_ids(tasks[task]["items"]))
    matched = pd.Series(ok, index=t.index).groupby([t["table"], t["task"]]).sum()
    for path, by_task in read.groupby(level=0, sort=False):
        n = int(by_task.sum())
        missed = {task: int(k) - int(matched.get((path, task), 0)) for (_, task), k in by_task.items()}
        missed = {task: k for task, k in missed.items() if k}
        m = n - sum(missed.values())
        said = (f"{path}: {m:,} of its {plural(n, 'item score')} matched the manifest's items (task, item id and "
                "metric)")
        if not missed:  # every score used: nothing to warn of
            log.info(said)
            continue
        where = ", ".join(f"{task} {k:,}" for task, k in sorted(missed.items()))
        warnings.append(f"{said}; {sum(missed.values()):,} not (other tasks or metrics, or ids that are no item of "
                        f"their task), by task: {where}{_stem_task_hint(path, missed, tasks)}")
    return long.drop(columns="table")


def unread_table_hint(paths) -> str:
    """``" (...)"`` for ``predict``'s error when a table among ``paths`` was no item-response table only for want of
    its sidecar: its first column names items and the others may be models (a wide table, which only its sidecar
    declares); else ``""``. Read on the error path only: the first line of a CSV or TSV, a Parquet file's schema."""
    from ...store.ingest_files import walk_files
    from ...store.ingest_read import wide_item_table_hint
    from ...store.item_table_read import SUFFIXES, header_of

    for path in walk_files([Path(p) for p in paths], lambda _: True):
        if path.suffix not in SUFFIXES:
            continue
        try:
            header = header_of(path)
        except (OSError, ValueError):  # an unreadable file says nothing about sidecars
            continue
        if hint := wide_item_table_hint(header):
            return f" ({path}: {hint})"
    return ""


def results_file_hint(paths) -> str:
    """``"; ..."`` for ``predict``'s error when lm-eval results files are among ``paths`` (and no per-item log): they
    hold each task's score, not its documents' (``""`` when there are none). Read on the error path only: names."""
    from ...store.ingest_files import walk_files

    found = [p for p in walk_files([Path(p) for p in paths], lambda _: True)
             if p.suffix == ".json" and (p.name == "results.json" or p.name.startswith("results_"))]
    if not found:
        return ""
    return (f"; {found[0]}{f' and {len(found) - 1} more' if len(found) > 1 else ''} "
            f"{'is an lm-eval results file' if len(found) == 1 else 'are lm-eval results files'}: a task's score, not "
            "each document's, which predict needs for the drawn ones (the Run line atop the reduced folder's group YAML runs just those)")


def _stem_task_hint(path, missed: dict, tasks: dict) -> str:
    """Why a table's scores went unmatched when its task is its file's name and no manifest task: a table without a
    ``task`` column or a sidecar's ``task:`` is named by its file (``mmlu_items.csv`` is task ``mmlu_items``)."""
    stem = Path(str(path)).stem
    if stem not in missed or stem in tasks:
        return ""
    shown = ", ".join(sorted(tasks)[:8]) + (" ..." if len(tasks) > 8 else "")
    return (f"; {stem} is the file's name, which names the task of a table without a task column or a sidecar's "
            f"task:, and no task of the manifest ({shown}): add a task column, or name the file or its sidecar's "
            "task: as the manifest's task")
