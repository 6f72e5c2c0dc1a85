"""Item-response tables: per-item scores of many models, as users and papers keep them.

An item-response table holds one score per (model, item): 0/1 correctness, or a graded score. It is
stored in the same ``samples`` table as lm-eval's per-sample logs (:mod:`harness_ext.store.samples`),
one row per (model, task, item, metric), so the item-level estimators and the prompt-level analyses
read every source the same way.

Layouts (Parquet, CSV or TSV): **long**, one row per score, recognised from the header alone; **wide**, items x
models or models x items, declared in the file's sidecar (``<file>.meta.yaml``). How each is recognised and
read: :mod:`harness_ext.store.item_table_read`.

``harness-ext ingest`` routes a long table by its header and a wide one by its sidecar here
(:func:`ingest_item_tables`): each file is one transaction and is stored once (by content hash, the
sidecar's ``items:`` block included). ``sample_sources`` gets one row per (file, model, task), so a table
of 429 models is 429 source rows sharing the file's path; the benchmark is kept there, in the column
``benchmark`` (added to existing stores when they are next written), not repeated on every item row.
:func:`item_rows` gives the item table with it: model, benchmark, task, item, metric, score, source file.

A task's item ids keep their numbers when that keeps them apart: whole numbers, or one prefix and distinct
numbers (``id1``, ``id2``); any other task's ids are numbered 0, 1, ... in order of first appearance, with a
note, so distinct ids are never merged; the store keeps each (benchmark, task)'s ids and their numbers, and a
later file of the task gives an id it already holds the same number (:mod:`harness_ext.store.item_ids`).
A missing score (empty, NaN) is no row and is counted; the same (model, task, item) twice with the same score
is kept once and counted; with two different scores the file is refused, naming the first such item.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from ..errors import IngestError
from ..report import plural
from ..types import check_name
from .ingest_files import EDITED_KEPT_REASON, ITEMS_ADAPTER, KEPT_REASON, FileReport, replaced_note
from .item_format import ItemTable
from .item_ids import assign_numbers, ensure_map
from .item_table_read import (ITEM_COLUMNS, MAX_BYTES, MODEL_COLUMNS, OPTIONAL_COLUMNS, REVISION,  # noqa: F401
                              SCORE_COLUMNS, SUFFIXES, delimiter_of, header_of, is_item_table, item_spec,
                              item_table_spec, long_layout, read_item_table)
from .tables import table_columns

def ingest_walked(store, files: list, tables: list, runs: list, details: Optional[list] = None,
                  reread=frozenset(), reread_older: bool = False, keep_reference_rows: bool = False) -> None:
    """Store what an ingest walk found besides results, filling its report ``files``.

    ``tables``: ``(report index, path, items block or None)`` of item-response tables (their entries are
    placeholders). ``runs``: ``(report index, path)`` of HELM run directories and Inspect AI logs; one whose results
    were not skipped adds an entry when it has item scores: a run with per-instance scores
    (:data:`harness_ext.adapters.helm_instances.PER_INSTANCE_FILES`), a log with samples. ``details``: ``(report
    index, path)`` of lighteval details files (placeholders, as tables'; :mod:`harness_ext.adapters.lighteval_details`).
    ``reread``: paths of runs whose results were read again (``ingest --reread``): their item scores replace those
    stored from the same path. ``reread_older`` (``ingest --reread``): so do those of every file an older item reader
    stored (:mod:`harness_ext.store.item_readers`). ``keep_reference_rows`` (``ingest --keep-reference-rows``): an
    item table's rows of a model named as a reference are stored as a model's (:func:`read_item_table`).
    """
    from .item_readers import reader_id

    again = {"reread_older": reread_older}
    if tables:
        read = (lambda p, spec: read_item_table(p, spec, keep_reference_rows=True)) if keep_reference_rows else \
            read_item_table
        for (idx, _, _), f in zip(tables, ingest_item_tables(store, [(p, spec) for _, p, spec in tables], read=read,
                                                             **again)):
            files[idx] = f
    if details:
        from harness_ext.adapters.lighteval_details import COPY_REASON, REVISION as DETAILS, details_kind, read_details

        copies = [(idx, p) for idx, p in details if details_kind(p) == "results_copy"]
        for idx, p in copies:  # a details dataset's Parquet copy of its results file: the JSON one is read
            files[idx] = FileReport(str(p), "skipped", reason=COPY_REASON, quiet=True)
        details = [d for d in details if d not in copies]
        done = ingest_item_tables(store, [(p, None) for _, p in details], read=lambda p, _: read_details(p),
                                  reader=reader_id("lighteval_details", DETAILS), **again)
        for (idx, _), f in zip(details, done):
            files[idx] = f
    runs = [d for idx, d in runs if files[idx].status != "skipped"]  # a skipped one's reason says it all
    logs = [p for p in runs if not Path(p).is_dir()]
    if logs:
        from harness_ext.adapters.inspect_items import REVISION as INSPECT, read_items

        files += ingest_item_tables(store, [(p, None) for p in logs], read=lambda p, _: read_items(p), reread=reread,
                                    reader=reader_id("inspect_items", INSPECT), **again)
    if len(logs) < len(runs):
        from harness_ext.adapters.helm_instances import PER_INSTANCE_FILES, REVISION as HELM, read_run_instances

        runs = [d for d in runs if Path(d).is_dir() and any((Path(d) / n).is_file() for n in PER_INSTANCE_FILES)]
        files += ingest_item_tables(store, [(d, None) for d in runs], read=lambda d, _: read_run_instances(d),
                                    reread=reread, reader=reader_id("helm_instances", HELM), **again)


def ingest_item_tables(store, tables: list, read=read_item_table, reread=frozenset(), reader: Optional[str] = None,
                       reread_older: bool = False) -> list:
    """Store item-response tables in ``store``'s samples table, one transaction per file.

    Parameters
    ----------
    store : harness_ext.store.db.Store
        Opened for writing.
    tables : list of (path, spec)
        ``spec`` is the sidecar's ``items:`` block or None (a long table).
    read : callable
        ``read(path, spec) -> ItemTable``; default :func:`read_item_table` (other item files, such as a
        HELM run's per-instance stats, bring their own reader, which returns None for a file without item scores:
        an Inspect log written without its samples is no item file, and gets no entry).
    reread : set of str
        Paths read again: the item scores stored from such a path are replaced by this reading's in its transaction
        (kept as they were if it cannot be read or stored).
    reader : str, optional
        The item reader ``read`` is, as :func:`harness_ext.store.item_readers.reader_id` names it, recorded with each
        source stored; default the item-table reader at :data:`REVISION`.
    reread_older : bool
        Read again the files from whose path an older revision of ``reader`` (or another reader) stored item scores,
        as for ``reread``. Without it such a file is left as stored, and counted (``older_reader``), if the store
        holds its content.

    Returns
    -------
    list of harness_ext.store.ingest.FileReport
        One per file: ingested (``n_samples`` item scores, notes), unchanged (already stored, by content
        hash) or skipped (with the reason; nothing of it written).
    """
    from .item_readers import is_older, reader_id
    from .samples import ensure_schema

    shas, out, reader = None, [], reader or reader_id(ITEMS_ADAPTER, REVISION)
    for path, spec in tables:
        try:
            table = read(path, spec)
        except (IngestError, MemoryError, RecursionError) as exc:  # a reader plugin's deeply nested file as well
            reason = (exc.reason if isinstance(exc, IngestError) else "too large to read in memory"
                      if isinstance(exc, MemoryError) else "nested too deeply to read")
            out.append(FileReport(str(path), "skipped", ITEMS_ADAPTER, reason=reason))
            continue
        if table is None:
            continue
        try:
            check_names(table)
        except IngestError as exc:
            out.append(FileReport(str(path), "skipped", ITEMS_ADAPTER, reason=exc.reason))
            continue
        if shas is None:  # the tables are made once a file has item scores: a log without samples leaves the store be
            ensure_schema(store)
            ensure_map(store.con)
            shas, by_path = set(), {}
            for sha, where, read_by in store.con.execute("SELECT sha256, path, reader FROM sample_sources").fetchall():
                shas.add(sha)
                by_path.setdefault(where, set()).add(read_by)
        older = any(is_older(r, reader) for r in by_path.get(str(table.path), ()))
        replace = str(path) in reread or older and reread_older
        out.append(_store_table(store, table, shas, replace, reader, older))
        if out[-1].status == "ingested":
            by_path[str(table.path)] = ({reader} if replace else by_path.get(str(table.path), set()) | {reader})
    return out


def check_names(table: ItemTable) -> None:
    """Refuse a table whose model, task, metric or benchmark name ``reduce`` could not write, as results are refused.

    The names go into task lists, YAMLs and configs one per line (:func:`harness_ext.safe_output.list_line`): a line
    break stored at ingest (a task ``"a\\ninclude: /etc/passwd"``) failed the whole benchmark's ``reduce`` later,
    naming no file. Each distinct name is checked once (:func:`harness_ext.types.check_name`).

    Raises
    ------
    IngestError
        Naming the file, the field and the name.
    """
    frame = table.frame
    for what in ("model", "task", "metric"):
        col = frame[what]
        names = col.cat.categories if isinstance(col.dtype, pd.CategoricalDtype) else pd.unique(col)
        for name in names:
            check_name(table.path, what, name)
    check_name(table.path, "benchmark", table.benchmark)


def _group_sha(file_sha: str, model: str, task: str) -> str:
    return hashlib.sha256(f"{file_sha}\0model={model}\0task={task}".encode()).hexdigest()


def _source_ids(con, stored: np.ndarray, ids_before: list) -> tuple:
    """Source ids of a table's (model, task) groups (-1 for those already stored) and the positions of the new ones."""
    next_id = con.execute("SELECT coalesce(max(source_id), 0) + 1 FROM sample_sources").fetchall()[0][0]
    new = np.flatnonzero(~stored)
    ids = np.full(len(stored), -1, dtype=np.int64)
    ids[new] = next_id + np.arange(len(new))
    if ids_before:  # read again: the file keeps its source ids (its place in the ingest order), as a result file does
        ids[new] = _kept_ids(ids_before, len(new), next_id)
    return ids, new


def _store_table(store, table: ItemTable, shas: set, replace: bool = False, reader: Optional[str] = None,
                 older: bool = False):
    """Write one read table: a ``sample_sources`` row per (model, task) and its item rows, in one transaction
    (``replace``: with the deletion of what was stored from the same path before). ``reader``: the item reader
    recorded with its sources; ``older``: an older reader stored item scores from its path."""
    from datetime import datetime, timezone

    from .item_readers import replaced_items
    from .reread import kept_beside_items

    frame = table.frame
    by = frame.groupby(["model", "task"], sort=True, observed=True)
    gid = by.ngroup().to_numpy()
    groups = by.size().index.to_frame(index=False).astype(str)
    groups["sha256"] = [_group_sha(table.sha256, m, t) for m, t in zip(groups["model"], groups["task"])]
    earlier = _edited(store.con, str(table.path), groups["sha256"], reader)
    notes = list(table.notes)
    earlier, note = kept_beside_items(earlier, groups["model"].unique())  # another table at a path used before
    notes += [note] if note else []
    replace = replace or bool(earlier)
    known, before, ids_before = shas, set(), []
    if replace:  # what the path stored before is deleted in the write's transaction: its hashes are not "stored"
        rows = store.con.execute("SELECT sha256, source_id FROM sample_sources WHERE path = ?",
                                 [str(table.path)]).fetchall()
        before, ids_before = {r[0] for r in rows}, [r[1] for r in rows]
        known = shas - before
    stored = groups["sha256"].isin(known).to_numpy()
    if stored.all():
        return FileReport(str(table.path), "unchanged", ITEMS_ADAPTER, older_reader=older)
    con = store.con
    kept = (EDITED_KEPT_REASON if earlier else KEPT_REASON) if replace else ""
    try:
        # The numbers earlier files of the task gave its ids, and those of its new ids.
        frame, new_ids, id_notes = assign_numbers(con, table.path, table.benchmark, frame, table.ids)
    except IngestError as exc:
        return FileReport(str(table.path), "skipped", ITEMS_ADAPTER, reason=exc.reason + kept)
    notes += id_notes
    if stored.any():  # another file with the same bytes and description: only its new groups are added
        notes.append(f"{int(stored.sum())} of {len(groups)} (model, task) groups already stored from an identical file")
        frame = frame[~stored[gid]]
        gid = gid[~stored[gid]]
    counts = np.bincount(gid, minlength=len(groups))
    ids, new = _source_ids(con, stored, ids_before)
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    sources = pd.DataFrame({"source_id": ids[new], "path": str(table.path), "sha256": groups["sha256"].to_numpy()[new],
                            "model": groups["model"].to_numpy()[new], "task": groups["task"].to_numpy()[new],
                            "n_rows": counts[new], "ingested_at": now, "benchmark": table.benchmark,
                            "reader": reader, "assumed_metric": table.assumed_metric,
                            "harness_task": groups["task"].map(table.harness_tasks).to_numpy()[new]})
    rows = frame if frame is not table.frame else frame.copy(deep=False)  # the table's own frame stays as read
    rows["source_id"] = ids[gid]
    overlap, n_differ = _overlap_notes(con, rows, str(table.path) if replace else None)
    notes += overlap
    import duckdb

    more = {} if new_ids is None else {"_item_new_ids": new_ids}
    try:
        with store.transaction(_item_sources=sources, _item_rows=rows, **more) as tx:  # rolled back whole on any error
            if replace:
                tx.execute("DELETE FROM samples WHERE source_id IN (SELECT source_id FROM sample_sources WHERE path = ?)",
                           [str(table.path)])
                tx.execute("DELETE FROM sample_sources WHERE path = ?", [str(table.path)])
            tx.execute("INSERT INTO sample_sources BY NAME SELECT * FROM _item_sources")
            if new_ids is not None:  # the id map grows with the rows that use it, or not at all
                tx.execute("INSERT INTO item_ids BY NAME SELECT * FROM _item_new_ids")
            tx.execute("INSERT INTO samples (model, task, doc_id, metric, value, source, source_id) "
                       "SELECT model, task, doc_id, metric, value, ?, source_id FROM _item_rows", [str(table.path)])
    except (duckdb.ConversionException, duckdb.InvalidInputException, duckdb.ConstraintException) as exc:
        return FileReport(str(table.path), "skipped", ITEMS_ADAPTER,
                          reason=f"the store refused it: {str(exc).splitlines()[0]}" + kept)
    shas.difference_update(before)
    shas.update(sources["sha256"])
    n = con.execute("SELECT count(*) FROM samples WHERE list_contains(?, source_id)",
                    [ids[new].tolist()]).fetchall()[0][0]  # counted from the committed store
    replaced = replaced_items(earlier, n) if earlier else None
    notes += _naming_notes(table, int(n))
    return FileReport(str(table.path), "ingested", ITEMS_ADAPTER, n_samples=int(n),
                      notes=notes + ([replaced_note(replaced)] if replaced else []), item_conflicts=int(n_differ),
                      reread=older and replace and not earlier, replaced=replaced)


def _naming_notes(table: ItemTable, n: int) -> list:
    """The notes of a stored table that named no metric or no benchmark, with what was assumed."""
    notes = [assumed_metric_note(n, table.assumed_metric)] if table.assumed_metric else []
    if table.benchmark_from_path:  # said, as the name is then wherever the file happens to lie
        where = "folder" if table.path.parent.name == table.benchmark else "file"
        notes.append(f"no benchmark named (no benchmark column or sidecar benchmark:): stored under benchmark "
                     f"{table.benchmark!r}, the {where}'s name (--benchmark {table.benchmark} selects it)")
    return notes


def assumed_metric_note(n: int, metric: str) -> str:
    """The ingest note of a table whose ``n`` stored scores got the metric name ``metric`` from the reader."""
    return (f"no metric named (no metric column or sidecar metric:): its {plural(n, '0/1 score')} stored as "
            f"{metric}; a metric column or the sidecar's items: block names the file's own")


def _edited(con, path: str, group_shas: pd.Series, reader: Optional[str]) -> list:
    """The same item reader's earlier reading of ``path`` if it was of other content (the file changed since, and
    its new reading, of these group hashes, replaces it; :func:`~harness_ext.store.item_readers.earlier_item_sources`),
    else []."""
    from .item_readers import earlier_item_sources, reader_id

    earlier = earlier_item_sources(con, path, reader or reader_id(ITEMS_ADAPTER, REVISION))
    return [] if earlier and group_shas.isin([r[0] for r in earlier]).all() else earlier


def _kept_ids(before: list, n: int, next_id: int) -> np.ndarray:
    """The source ids of a table's ``n`` new (model, task) groups read again, in their order: the ids its path's
    sources had (``before``), lowest first, so the file keeps its place in the ingest order and its groups are
    numbered as a fresh ingest numbers them; a group more than before is numbered from ``next_id``."""
    kept = np.sort(np.asarray(before, dtype=np.int64))[:n]
    return np.concatenate([kept, next_id + np.arange(n - len(kept), dtype=np.int64)])


def _overlap_notes(con, rows: pd.DataFrame, replaced: Optional[str] = None) -> tuple:
    """``(notes, n_differ)``: notes on items this file scores that another stored file already scores (how many, and
    how many differ, by more than :data:`~harness_ext.store.tables.CONFLICT_TOLERANCE` as result cells), and how many
    differ (the ingest summary's conflicting item scores).

    Both rows are kept (as for per-sample logs); the first stored is the one the prompt-level analyses use.
    ``replaced``: a path whose stored rows this file replaces (not another file's).
    """
    from .tables import CONFLICT_TOLERANCE

    samples = "samples" if replaced is None else "(SELECT * FROM samples WHERE source <> ?)"
    params = [] if replaced is None else [replaced]

    pairs = rows[["model", "task"]].drop_duplicates().astype(str)
    con.register("_item_pairs", pairs)
    try:
        seen = con.execute(f"SELECT count(*) FROM (SELECT DISTINCT model, task FROM {samples}) s "
                           "JOIN _item_pairs USING (model, task)", params).fetchall()[0][0]
        if not seen:
            return [], 0
        con.register("_item_new", rows)
        try:
            same, differ = con.execute(
                f"""SELECT count(*) FILTER (WHERE abs(s.value - n.value) <= {CONFLICT_TOLERANCE}),
                          count(*) FILTER (WHERE abs(s.value - n.value) > {CONFLICT_TOLERANCE})
                   FROM _item_new n JOIN {samples} s USING (model, task, doc_id, metric)""", params).fetchall()[0]
        finally:
            con.unregister("_item_new")
    finally:
        con.unregister("_item_pairs")
    out = []
    if same:
        out.append(f"{plural(same, 'item score')} already stored from another file with the same value (both kept)")
    if differ:
        out.append(f"{plural(differ, 'item score')} already stored from another file with a different value "
                   "(both kept; the first stored is used; 'harness-ext info --conflicts' lists them)")
    return out, differ


def item_rows(store, task: Optional[str] = None, benchmark: Optional[str] = None) -> pd.DataFrame:
    """The stored item scores with their benchmark: model, benchmark, task, doc_id, metric, value, source.

    Per-sample logs carry no benchmark (None); item-response tables carry their sidecar's or folder's.
    """
    cols = table_columns(store.con, "sample_sources")
    if not cols:
        return pd.DataFrame(columns=["model", "benchmark", "task", "doc_id", "metric", "value", "source"])
    bench = "src.benchmark" if "benchmark" in cols else "NULL::VARCHAR"
    where, args = [], []
    if task is not None:
        where.append("s.task = ?")
        args.append(task)
    if benchmark is not None:
        where.append(f"{bench} = ?")
        args.append(benchmark)
    sql = (f"SELECT s.model, {bench} AS benchmark, s.task, s.doc_id, s.metric, s.value, s.source "
           "FROM samples s JOIN sample_sources src USING (source_id)"
           + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY s.source_id, s.doc_id, s.metric")
    return store.con.execute(sql, args).df()
