"""The one rule for an item scored twice in one file, shared by item-response tables
(:mod:`harness_ext.store.item_tables`) and lm-eval per-sample logs (:mod:`harness_ext.store.samples`): the same
score is kept once and counted in the file's notes, another score refuses the file.

A module of its own, below both: the samples module cannot import the item tables' (which read HELM runs, whose
reader imports the samples module).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import IngestError


def _has_repeats(frame: pd.DataFrame) -> bool:
    """Whether any (model, task, item, metric) occurs twice, sorting one int64 key in place.

    The labels are categoricals; with the item ids their codes make one integer per row when the
    product of the ranges fits 63 bits (else pandas' ``duplicated`` decides). A 429-model x
    30,000-item table costs one 100 MB array here, where ``duplicated`` on four columns built a
    hash table of several times that.
    """
    labels = [frame[c] for c in ("model", "task", "metric")]
    if not all(isinstance(c.dtype, pd.CategoricalDtype) for c in labels) or frame.empty:
        return bool(frame.duplicated(["model", "task", "doc_id", "metric"]).any())
    doc = frame["doc_id"].to_numpy()
    lo, hi = int(doc.min()), int(doc.max())
    sizes = [max(len(c.cat.categories), 1) for c in labels] + [hi - lo + 1]
    if np.prod([float(n) for n in sizes]) >= 2.0 ** 62:
        return bool(frame.duplicated(["model", "task", "doc_id", "metric"]).any())
    key = labels[0].cat.codes.to_numpy().astype(np.int64)
    for c, n in zip(labels[1:], sizes[1:3]):
        key *= n
        key += c.cat.codes.to_numpy()
    key *= sizes[3]
    key += doc
    key -= lo
    key.sort()
    return bool((key[1:] == key[:-1]).any())


def dedupe_items(frame: pd.DataFrame, path: Path, notes: list) -> pd.DataFrame:
    """``frame`` with each (model, task, item, metric) once: a repeat with the same score is kept once (counted in
    ``notes``), one with another score refuses the file (item-response tables and per-sample logs alike)."""
    key = ["model", "task", "doc_id", "metric"]
    if not _has_repeats(frame):
        return frame
    dup = frame.duplicated(key, keep=False)
    spread = frame[dup].groupby(key, observed=True)["value"].agg(lambda v: v.max() - v.min())
    clash = spread[spread > 0]
    if len(clash):
        m, t, d, mt = clash.index[0]
        raise IngestError(path, f"model {m!r}, task {t!r}, item {d}: {len(clash)} items have two different scores")
    n = int(frame.duplicated(key).sum())
    notes.append(f"{n} repeated (model, item) rows with the same score kept once")
    return frame.drop_duplicates(key)
