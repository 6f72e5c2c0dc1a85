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
ITEMS_KEYS = ("layout", "task", "metric", "benchmark")


def items_block(block, path) -> dict:
    """A sidecar's ``items:`` block, checked: a mapping of ``layout``, ``task``, ``metric``, ``benchmark``."""
    if not isinstance(block, dict):
        raise IngestError(path, "'items' must be a mapping (layout, task, metric, benchmark)")
    bad = set(block) - set(ITEMS_KEYS)
    if bad:
        raise IngestError(path, f"items: unknown keys {sorted(map(str, bad))}; expected {', '.join(ITEMS_KEYS)}")
    if block.get("layout", "long") not in LAYOUTS:
        raise IngestError(path, f"items layout {block.get('layout')!r} is not one of {', '.join(LAYOUTS)}")
    return {k: str(v) for k, v in block.items() if v is not None}


@dataclass
class ItemTable:
    """What one file holds: ``frame`` has columns model, task, doc_id, metric, value; notes count what was left.

    ``ids``: the file's distinct item ids (task, item, doc_id, own), for the store's id map
    (:func:`harness_ext.store.item_ids.assign_numbers`); None for a reader whose numbers come from the ids alone.
    ``assumed_metric``: the metric name the reader gave scores whose file names none (``acc`` for a table of 0/1
    scores without a ``metric`` column or sidecar ``metric:``), stored with its sources and said by ``ingest`` and
    ``info``; None when the file names its metric. ``benchmark_from_path``: the file names no benchmark (no column, no
    sidecar ``benchmark:``), so ``benchmark`` is its folder's (else its own) name, which ``ingest`` says.
    """

    path: Path
    benchmark: str
    frame: pd.DataFrame
    sha256: str
    notes: list = field(default_factory=list)
    ids: Optional[pd.DataFrame] = None
    assumed_metric: Optional[str] = None
    benchmark_from_path: bool = False
