"""The item-response table format the store and the readers share: a sidecar's ``items:`` block (checked by
:func:`items_block`) and :class:`ItemTable`, what one file holds once read.

The CSV reader checks a sidecar's ``items:`` block, the HELM reader returns a run's per-instance scores as an
:class:`ItemTable`, and :mod:`harness_ext.store.item_tables` stores them; the format sits here, below all three.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pandas as pd

from ..errors import IngestError

#: Layouts of an item-response table (:mod:`harness_ext.store.item_tables` describes each).
LAYOUTS = ("long", "items_x_models", "models_x_items")
ITEMS_KEYS = ("layout", "task", "metric", "benchmark", "harness_tasks")
#: The header names a long table's columns are read by (the first present of each), and the optional ones.
MODEL_COLUMNS = ("model", "model_name", "model_id")
ITEM_COLUMNS = ("item", "item_id", "doc_id", "question_id", "sample_id", "instance_id")
SCORE_COLUMNS = ("score", "correct", "is_correct", "value")
OPTIONAL_COLUMNS = ("task", "metric", "benchmark")


def items_block(block, path) -> dict:
    """A sidecar's ``items:`` block, checked: a mapping of ``layout``, ``task``, ``metric``, ``benchmark`` (strings)
    and ``harness_tasks`` (:func:`harness_task_block`)."""
    if not isinstance(block, dict):
        raise IngestError(path, "'items' must be a mapping (layout, task, metric, benchmark, harness_tasks)")
    bad = set(block) - set(ITEMS_KEYS)
    if bad:
        raise IngestError(path, f"items: unknown keys {sorted(map(str, bad))}; expected {', '.join(ITEMS_KEYS)}")
    if block.get("layout", "long") not in LAYOUTS:
        raise IngestError(path, f"items layout {block.get('layout')!r} is not one of {', '.join(LAYOUTS)}")
    out = {k: str(v) for k, v in block.items() if v is not None and k != "harness_tasks"}
    if block.get("harness_tasks") is not None:
        out["harness_tasks"] = harness_task_block(block["harness_tasks"], path)
    return out


def harness_task_block(value, path):
    """A sidecar's ``items: harness_tasks:``, checked: which lm-eval task each of the table's tasks is, a mapping
    ``{table task: lm-eval task}``, or one lm-eval task name for a table of one task. Every name must be a plain
    lm-eval task name (:func:`harness_ext.safe_output.harness_task_problem`); two table tasks may not be one lm-eval
    task (their drawn items would share one ``--samples`` entry)."""
    from ..safe_output import harness_task_problem

    if isinstance(value, str):
        why = harness_task_problem(value) or _group_problem(value)
        if why:
            raise IngestError(path, f"items: harness_tasks: {why}")
        return value
    if not isinstance(value, dict) or not value:
        raise IngestError(path, "items: harness_tasks must map the table's task names to lm-eval task names "
                                "(ifeval: leaderboard_ifeval), or be one lm-eval task name for a table of one task")
    out = {}
    for task, harness in value.items():
        if not isinstance(task, str) or not task:
            raise IngestError(path, f"items: harness_tasks: {task!r} is not a task name of the table")
        why = harness_task_problem(harness) or _group_problem(harness)
        if why:
            raise IngestError(path, f"items: harness_tasks: {task}: {why}")
        out[task] = harness
    twice = sorted({h for h in out.values() if list(out.values()).count(h) > 1})
    if twice:
        raise IngestError(path, f"items: harness_tasks: several of the table's tasks are lm-eval's {twice[0]}; "
                                "each lm-eval task can be one table task only")
    return out


def _group_problem(name: str) -> str:
    """Why ``name``, one of lm-eval's group or tag names (the release harness-ext ships the list of), cannot be a
    table task's lm-eval task: ``--samples`` lists documents per task, and a group's tasks number theirs apart."""
    from .lm_eval_tasks import shipped_group_names

    if name not in shipped_group_names():
        return ""
    return (f"{name} is a group (or tag) of lm-eval tasks, not one task: --samples lists each task's documents, so a "
            "table task can be one lm-eval task only; split the table by task (a table that concatenated a group's "
            "tasks, as the Open LLM Leaderboard v2's musr, in ranges of items) and declare each")


def harness_tasks_of(spec, tasks, path) -> dict:
    """``{table task: lm-eval task}`` of a checked ``harness_tasks`` value for a table holding ``tasks``: a single
    name needs a table of one task, and a mapping may name no task the table lacks (a misspelt key would leave
    the task undeclared without a word)."""
    if spec is None:
        return {}
    spec = harness_task_block(spec, path)  # checked again: a caller may hand read_item_table its own block
    tasks = sorted(map(str, tasks))
    if isinstance(spec, str):
        if len(tasks) != 1:
            raise IngestError(path, f"items: harness_tasks names one lm-eval task ({spec}) for a table of "
                                    f"{len(tasks)} tasks; map each task (task: lm-eval task)")
        return {tasks[0]: spec}
    missing = sorted(set(spec) - set(tasks))
    if missing:
        raise IngestError(path, f"items: harness_tasks names {', '.join(missing[:5])}, not a task of the table "
                                f"(its tasks: {', '.join(tasks[:10])})")
    return dict(spec)


@dataclass
class ItemTable:
    """What one file holds: ``frame`` has columns model, task, doc_id, metric, value; notes count what was left.

    ``ids``: the file's distinct item ids (task, item, doc_id, own), for the store's id map
    (:func:`harness_ext.store.item_ids.assign_numbers`); None for a reader whose numbers come from the ids alone.
    ``assumed_metric``: the metric name the reader gave scores whose file names none (``acc`` for a table of 0/1
    scores without a ``metric`` column or sidecar ``metric:``), stored with its sources and said by ``ingest`` and
    ``info``; None when the file names its metric. ``benchmark_from_path``: the file names no benchmark (no column, no
    sidecar ``benchmark:``), so ``benchmark`` is its folder's (else its own) name, which ``ingest`` says.
    ``harness_tasks``: ``{task: lm-eval task}`` its sidecar declares (``items: harness_tasks:``), stored with its
    sources for ``reduce --items``.
    """

    path: Path
    benchmark: str
    frame: pd.DataFrame
    sha256: str
    notes: list = field(default_factory=list)
    ids: Optional[pd.DataFrame] = None
    assumed_metric: Optional[str] = None
    benchmark_from_path: bool = False
    harness_tasks: dict = field(default_factory=dict)


def table_sha(digest, spec: dict, harness, references_kept: bool) -> str:
    """An item table's content hash (:func:`harness_ext.store.item_table_read.read_item_table`): its bytes' ``digest``
    (hashlib), its ``items:`` block, its ``harness_tasks`` and the reading option that changes what it stores."""
    digest.update(f"\0items={sorted(spec.items())}".encode())  # the same digest as of the bytes and the block
    if references_kept:  # reference rows kept as models (--keep-reference-rows): another reading of the same bytes
        digest.update(b"\0keep_reference_rows")
    if harness:  # a declaration is part of what the file means (a table without one keeps its earlier digest)
        digest.update(f"\0harness_tasks={sorted(harness.items())}".encode())
    return digest.hexdigest()
