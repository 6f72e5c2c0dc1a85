"""What the store holds at the item level, for ``harness-ext info``: counts, benchmarks and conflicting item scores.

Item-level results (lm-eval per-sample logs, item-response tables, HELM per-instance scores) live in the
``samples`` and ``sample_sources`` tables (:mod:`harness_ext.store.samples`), apart from the result cells
:meth:`harness_ext.store.db.Store.counts` counts; a store of item tables alone holds no result.
"""

from __future__ import annotations

import pandas as pd

from ..report import plural
from .item_ids import id_map_notes
from .samples import _has_samples, source_benchmark_sql
from .tables import CONFLICT_TOLERANCE, name_lists, table_columns

#: The item-level counts ``info`` gives, all 0 in a store without item-level results.
COUNT_KEYS = ("item_sources", "item_models", "item_tasks", "item_scores", "item_conflicts")
_CONFLICT_COLUMNS = ["model", "benchmark", "task", "item", "metric", "value", "source", "used"]
#: The ``used`` column's word on the score every reader of the samples takes (the first stored: ``ORDER BY source_id``).
USED_FIRST_STORED = "first stored"


def item_counts(store) -> dict:
    """Item-level counts: source files, models, tasks, item scores and conflicting items (:data:`COUNT_KEYS`).

    Parameters
    ----------
    store : harness_ext.store.db.Store

    Returns
    -------
    dict
        ``item_sources`` (files, each counted once however many models it holds), ``item_models``, ``item_tasks``,
        ``item_scores`` (stored rows) and ``item_conflicts`` (items scored differently by two files, as
        :func:`item_conflicts` lists them).
    """
    if not _has_samples(store):
        return dict.fromkeys(COUNT_KEYS, 0)
    files, models, tasks = store.con.execute(
        "SELECT count(DISTINCT path), count(DISTINCT model), count(DISTINCT task) FROM sample_sources").fetchall()[0]
    scores = store.con.execute("SELECT count(*) FROM samples").fetchall()[0][0]
    c = item_conflicts(store)
    n = 0 if c.empty else len(c.drop_duplicates(["model", "task", "item", "metric"]))
    return dict(zip(COUNT_KEYS, (int(files), int(models), int(tasks), int(scores), n)))


def item_benchmarks(store) -> pd.DataFrame:
    """One row per benchmark with item-level results: ``benchmark, tasks, models, items, item_scores, metrics``.

    ``items`` counts distinct (task, item) pairs; lm-eval's per-sample logs count as benchmark ``lm_eval``.
    """
    if not _has_samples(store):
        return pd.DataFrame(columns=["benchmark", "tasks", "models", "items", "item_scores", "metrics"])
    return name_lists(store.con.execute(
        f"""SELECT {source_benchmark_sql(store)} AS benchmark, count(DISTINCT s.task) AS tasks,
                   count(DISTINCT s.model) AS models, count(DISTINCT (s.task, s.doc_id)) AS items,
                   count(*) AS item_scores, list(DISTINCT s.metric ORDER BY s.metric) AS metrics
            FROM samples s JOIN sample_sources src USING (source_id) GROUP BY ALL ORDER BY benchmark""").df(), "metrics")


def item_conflicts(store) -> pd.DataFrame:
    """Items two source files score differently: every stored score of each, the first stored being the one used.

    Columns ``model, benchmark, task, item, metric, value, source, used``, in a total order (model, benchmark, task,
    item, metric, source). ``used`` is ``"first stored"`` on the score every reader of the samples takes (the item
    estimates, ``reduce --items``, ``predict``), empty on the others. Only (model, task) pairs stored from more than
    one file are looked at, so a store whose files do not overlap costs one pass over ``sample_sources``.
    """
    if not _has_samples(store):
        return pd.DataFrame(columns=_CONFLICT_COLUMNS)
    return store.con.execute(
        f"""WITH multi AS (SELECT model, task FROM sample_sources GROUP BY model, task HAVING count(*) > 1),
                 k AS (SELECT model, task, doc_id, metric FROM samples JOIN multi USING (model, task)
                       GROUP BY ALL HAVING count(DISTINCT source_id) > 1
                          AND max(value) - min(value) > {CONFLICT_TOLERANCE})
            SELECT s.model, {source_benchmark_sql(store)} AS benchmark, s.task, s.doc_id AS item, s.metric, s.value, s.source,
                   CASE WHEN s.source_id = min(s.source_id) OVER (PARTITION BY s.model, s.task, s.doc_id, s.metric)
                        THEN '{USED_FIRST_STORED}' ELSE '' END AS used
            FROM samples s JOIN k USING (model, task, doc_id, metric) JOIN sample_sources src USING (source_id)
            ORDER BY s.model, benchmark, s.task, item, s.metric, s.source_id, s.value""").df()


def item_id_notes(store) -> list:
    """What ``info`` says of item ids (:func:`harness_ext.store.item_ids.id_map_notes`); none without item results."""
    return id_map_notes(store) if _has_samples(store) else []


def assumed_metric_notes(store) -> list:
    """What ``info`` says of item tables stored under a metric name their files do not give (``acc`` for 0/1
    scores; :attr:`harness_ext.store.item_format.ItemTable.assumed_metric`): how many files and scores, naming a few
    files. None for a store without item results, or one whose tables were all stored before the name was recorded.
    """
    if not _has_samples(store):
        return []
    cols = table_columns(store.con, "sample_sources")
    if "assumed_metric" not in cols:
        return []
    rows = store.con.execute(
        """SELECT src.assumed_metric, count(DISTINCT src.path), count(*), list(DISTINCT src.path ORDER BY src.path)[:3]
           FROM samples s JOIN sample_sources src USING (source_id) WHERE src.assumed_metric IS NOT NULL
           GROUP BY ALL ORDER BY ALL""").fetchall()
    return [f"{plural(files, 'item table names', 'item tables name')} no metric ({', '.join(paths)}"
            f"{', ...' if files > len(paths) else ''}): {plural(n, '0/1 score')} stored as {metric}, the reader's "
            "name, not the file's (a metric column or the sidecar's items: block names it; ingest the file again)"
            for metric, files, n, paths in rows]
