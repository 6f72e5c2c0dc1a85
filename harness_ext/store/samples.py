"""Prompt-level results: lm-eval per-sample logs in the store, and prompt x model matrices.

lm-evaluation-harness v0.4 run with ``--log_samples`` writes, next to ``results_<date>.json``, one
``samples_<task>_<date>.jsonl`` per task, one JSON object per (document, filter); Every Eval Ever writes
``<evaluation>_samples.jsonl`` instance files. Their readers are in :mod:`harness_ext.store.sample_logs`
(re-exported here); this module stores what they read and queries it.

:func:`ingest_samples` stores every numeric per-sample metric in a ``samples``
table of the same DuckDB file as the results (created here, ``CREATE TABLE IF
NOT EXISTS``, so the results schema in :mod:`harness_ext.store.db` is untouched):

``samples(model, task, doc_id, metric, value, source, source_id, doc_hash, prompt_hash)``
    one row per (sample, metric); ``metric`` is ``acc`` for the default filter and
    ``exact_match,strict-match`` for a named one, as in the results adapter;
    booleans become 0/1; non-scalar metric values (perplexity's
    ``[loglikelihood, n_words]`` pairs) are not per-sample scores and are skipped.
``sample_sources(source_id, path, sha256, model, task, n_rows, ingested_at, benchmark, reader, assumed_metric,
harness_task)``
    one row per ingested file (per model and task of an item-response table,
    :mod:`harness_ext.store.item_tables`; ``benchmark`` is added to stores made
    before it and is empty for per-sample logs; ``reader``, the item reader and its revision, see
    :mod:`harness_ext.store.item_readers`; ``assumed_metric``, the metric name an item table that names none was
    stored under, else empty; ``harness_task``, the lm-eval task an item table's sidecar declares its task to be,
    else empty). Ingestion is idempotent by content hash and each
    file is one transaction (all rows or none).

:func:`prompt_matrix` turns one task and metric into a prompts x models frame
(0/1 for accuracy-type metrics) for the weighting analyses of Ailem et al.
(Ailem et al. §3, prompt-level 0/1 matrices) and the binary similarity measures.

References
----------
Ailem et al. §3.1-3.3: prompt-level 0/1 performance
vectors, Jaccard/Hamming similarity, weighting of prompts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Iterable, Optional

import duckdb
import numpy as np
import pandas as pd

from ..errors import IngestError, StoreError
from ..report import plural
from .ingest_files import EDITED_KEPT_REASON, KEPT_REASON, _skip_reason, check_path, replaced_note, walk_files
from .item_dedupe import dedupe_items
from .tables import table_columns
# The readers of per-sample logs, importable from here as before they had a module of their own.
from .sample_logs import (EEE_SAMPLES_RE, NUMBERING_PREFIXES, SAMPLES_FILE_RE, doc_id, eee_record_names,
                          is_samples_file, model_for_samples, read_eee_samples, read_samples, sample_frame)

__all__ = ["EEE_REVISION", "EEE_SAMPLES_RE", "NUMBERING_PREFIXES", "REVISION", "SAMPLES_FILE_RE", "SamplesFileReport",
           "SamplesReport", "doc_id", "eee_record_names", "ensure_schema", "ingest_samples", "is_samples_file",
           "model_for_samples", "prompt_matrix", "read_eee_samples", "read_samples", "sample_frame", "sample_tasks",
           "source_benchmark_sql"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sample_sources (
    source_id INTEGER PRIMARY KEY, path VARCHAR NOT NULL, sha256 VARCHAR NOT NULL UNIQUE, model VARCHAR NOT NULL,
    task VARCHAR NOT NULL, n_rows BIGINT NOT NULL, ingested_at TIMESTAMP NOT NULL, benchmark VARCHAR);
ALTER TABLE sample_sources ADD COLUMN IF NOT EXISTS benchmark VARCHAR;
ALTER TABLE sample_sources ADD COLUMN IF NOT EXISTS reader VARCHAR;
ALTER TABLE sample_sources ADD COLUMN IF NOT EXISTS assumed_metric VARCHAR;
ALTER TABLE sample_sources ADD COLUMN IF NOT EXISTS harness_task VARCHAR;
CREATE TABLE IF NOT EXISTS samples (
    model VARCHAR NOT NULL, task VARCHAR NOT NULL, doc_id BIGINT NOT NULL, metric VARCHAR NOT NULL,
    value DOUBLE NOT NULL, source VARCHAR NOT NULL, source_id INTEGER NOT NULL, doc_hash VARCHAR, prompt_hash VARCHAR);
"""
#: The revisions of the readers of lm-eval per-sample logs and of Every Eval Ever instance files, stored with each
#: source they read (``sample_sources.reader``, :mod:`harness_ext.store.item_readers`): raise one when a change makes
#: it store other item scores from the same file (``ingest --reread`` then reads the files again).
REVISION = "1"
#: 2: the items are stored under the benchmark of the record beside the file (else every_eval_ever), not lm_eval.
#: 3: the items of a record of an Inspect run (source inspect_ai) are stored under benchmark inspect, as its results.
EEE_REVISION = "3"


def ensure_schema(store) -> None:
    """Create the samples tables in ``store`` if they do not exist."""
    if store.read_only:
        raise StoreError(f"store {store.path} was opened read-only; cannot ingest samples")
    store.con.execute(_SCHEMA)


@dataclass
class SamplesFileReport:
    path: str
    status: str  # ingested | unchanged | skipped
    model: Optional[str] = None
    task: Optional[str] = None
    n_rows: int = 0
    reason: str = ""
    #: What reading left out or merged (values that are no numbers, repeated samples), with counts.
    notes: list = field(default_factory=list)
    #: Unchanged, but stored by an older revision of its reader (``reread`` reads it again).
    older_reader: bool = False
    #: Read again (``reread``): what an older reader stored from it was replaced.
    reread: bool = False
    #: What an earlier reading of its path with other content (the file edited since) stored, which it replaced
    #: (:func:`harness_ext.store.item_readers.replaced_items`); None otherwise.
    replaced: Optional[dict] = None


@dataclass
class SamplesReport:
    files: list = field(default_factory=list)

    def by_status(self, status: str) -> list:
        return [f for f in self.files if f.status == status]

    @property
    def n_rows(self) -> int:
        return sum(f.n_rows for f in self.files)

    def summary(self) -> str:
        ing, unch, skip = (len(self.by_status(s)) for s in ("ingested", "unchanged", "skipped"))
        return (f"{plural(ing, 'sample file')} ingested ({plural(self.n_rows, 'per-sample score')}), {unch} unchanged, "
                f"{skip} skipped")


def _iter_sample_files(paths: Iterable) -> list:
    return walk_files(paths, is_samples_file)


def ingest_samples(store, paths: Iterable, model: Optional[str] = None, show_progress: bool = True,
                   reread: bool = False) -> SamplesReport:
    """Ingest lm-eval per-sample logs into ``store``'s ``samples`` table.

    Parameters
    ----------
    store : harness_ext.store.db.Store
        Opened for writing.
    paths : iterable of path-like
        ``samples_<task>_<date>.jsonl`` files (``.jsonl.gz`` too), or folders
        searched recursively for them (other files are ignored).
    model : str, optional
        The model every file belongs to. Default: read from the sibling
        ``results_*.json`` (same date stamp), named as the lm-eval adapter
        names it, so sample rows and result rows share model names.
    reread : bool
        Read again the files an older revision of their reader stored (:mod:`harness_ext.store.item_readers`),
        each replacing its stored rows in one transaction (kept as they were if it cannot be read or stored).
        Without it they are left as stored, and counted (``older_reader``).

    Returns
    -------
    SamplesReport
        One entry per file: ingested, unchanged (same content already stored)
        or skipped (with the reason). A skipped file writes nothing.

    Notes
    -----
    A (model, task, doc_id, metric) seen in two files keeps both rows; the
    first-ingested is the one :func:`prompt_matrix` uses, as for results.
    """
    from ..report import progress
    from .item_readers import earlier_item_sources, is_older, reader_id
    from .reread import kept_beside_items

    ensure_schema(store)
    con = store.con
    stored = dict(con.execute("SELECT sha256, reader FROM sample_sources").fetchall())
    readers = {False: reader_id("lm_eval_samples", REVISION), True: reader_id("eee_samples", EEE_REVISION)}
    next_id = con.execute("SELECT coalesce(max(source_id), 0) + 1 FROM sample_sources").fetchall()[0][0]
    report = SamplesReport()
    files = _iter_sample_files(paths)
    for path in progress(files, total=len(files), desc="samples", disable=None if show_progress else True):
        try:
            why = check_path(path, True)  # a FIFO, a device, a broken link, an oversized file: not read
            if why is not None:
                raise IngestError(path, why)
            eee = bool(EEE_SAMPLES_RE.match(path.name))
            mdl, task, frame, sha = read_eee_samples(path) if eee else read_samples(path, model=model)
        except Exception as exc:  # noqa: BLE001 - whatever reading one file raises fails that file only
            report.files.append(SamplesFileReport(str(path), "skipped", reason=_skip_reason(exc)))
            continue
        reader = readers[eee]
        older = sha in stored and is_older(stored[sha], reader)
        if sha in stored and not (older and reread):
            report.files.append(SamplesFileReport(str(path), "unchanged", mdl, task, older_reader=older))
            continue
        notes, bench = list(frame.attrs.get("notes", [])), frame.attrs.get("benchmark")
        earlier = [] if sha in stored else earlier_item_sources(con, str(path), reader)  # the file changed since
        earlier, note = kept_beside_items(earlier, [mdl])  # another model's log at a path used before: beside
        notes += [note] if note else []
        kept = KEPT_REASON if older else EDITED_KEPT_REASON if earlier else ""
        try:
            # A document logged twice under one filter would count twice in every item-level estimate from the
            # store: the same scores are kept once (noted), different ones refuse the file, as for item tables.
            frame = dedupe_items(frame.assign(model=mdl, task=task), path, notes)
        except IngestError as exc:
            report.files.append(SamplesFileReport(str(path), "skipped", reason=_skip_reason(exc) + kept))
            continue
        # A file read again (or edited) keeps its source id: its place in the ingest order (which of two scores is
        # used) stays.
        gone = [r[1] for r in earlier] or (_source_ids(con, sha) if older else [])
        sid = min(gone) if gone else next_id
        why = _write_samples(store, (str(path), sha, mdl, task, reader, bench),
                             frame.assign(source=str(path), source_id=sid), sid, gone)
        if why:
            report.files.append(SamplesFileReport(str(path), "skipped", reason=why + kept))
            continue
        stored[sha] = reader
        next_id += not gone
        report.files.append(_ingested(str(path), mdl, task, len(frame), notes, older, earlier))
    return report


def _source_ids(con, sha: str) -> list:
    return [r[0] for r in con.execute("SELECT source_id FROM sample_sources WHERE sha256 = ?", [sha]).fetchall()]


def _ingested(path: str, mdl: str, task: str, n: int, notes: list, older: bool, earlier: list) -> SamplesFileReport:
    """The report of a file stored: read again (``older``), or replacing the ``earlier`` reading of its path."""
    from .item_readers import replaced_items

    replaced = replaced_items(earlier, n) if earlier else None
    return SamplesFileReport(path, "ingested", mdl, task, n, notes=notes + ([replaced_note(replaced)] if replaced
                                                                            else []),
                             reread=older and not earlier, replaced=replaced)


def _write_samples(store, source: tuple, frame: pd.DataFrame, sid: int, replace: list) -> str:
    """Store one file's sample rows as source ``sid`` (``source``: its path, hash, model, task and reader) in one
    transaction (``replace``: with the deletion of the sources an older reading, or the earlier reading of the file
    edited since, stored); the reason the store refused it, or ''."""
    path, sha, mdl, task, reader, bench = source
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    try:
        with store.transaction(_samples_frame=frame) as con:  # rolled back whole on any error
            if replace:
                con.execute("DELETE FROM samples WHERE list_contains(?, source_id)", [list(replace)])
                con.execute("DELETE FROM sample_sources WHERE list_contains(?, source_id)", [list(replace)])
            con.execute("INSERT INTO sample_sources (source_id, path, sha256, model, task, n_rows, ingested_at, "
                        "reader, benchmark) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [sid, path, sha, mdl, task, len(frame), now, reader, bench])
            con.execute("INSERT INTO samples BY NAME SELECT * FROM _samples_frame")
    except (duckdb.ConversionException, duckdb.InvalidInputException, duckdb.ConstraintException) as exc:
        # What the checks above did not foresee in one file's values: that file is not stored, the rest are.
        return f"the store refused it: {str(exc).splitlines()[0]}"
    return ""


def sample_tasks(store) -> pd.DataFrame:
    """One row per (task, metric) in the samples table: models, prompts, rows."""
    if not _has_samples(store):
        return pd.DataFrame(columns=["task", "metric", "models", "prompts", "rows"])
    return store.con.execute(
        """SELECT task, metric, count(DISTINCT model) AS models, count(DISTINCT doc_id) AS prompts, count(*) AS rows
           FROM samples GROUP BY task, metric ORDER BY task, metric"""
    ).df()


def _has_samples(store) -> bool:
    tables = {r[0] for r in store.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    return "samples" in tables


def source_benchmark_sql(store) -> str:
    """The SQL of a sample source's benchmark (``src`` is ``sample_sources``): ``lm_eval`` for lm-eval's per-sample
    logs, which carry none, and for stores made before the column."""
    cols = table_columns(store.con, "sample_sources")
    return "coalesce(nullif(src.benchmark, ''), 'lm_eval')" if "benchmark" in cols else "'lm_eval'"


def _default_metric(store, task: str) -> str:
    """``acc`` where ``task`` logs it, else its only per-sample metric; refused, naming them, for several."""
    avail = sample_tasks(store)
    have = sorted(avail[avail["task"] == task]["metric"].unique().tolist())
    if "acc" in have or not have:  # none: the caller's error lists the store's tasks
        return "acc"
    if len(have) == 1:
        return have[0]
    raise StoreError(f"task {task!r} logs {len(have)} per-sample metrics and none is 'acc': choose one with "
                     f"--samples-metric ({', '.join(have)})")


def prompt_matrix(store, task: str, metric: Optional[str] = "acc", models: Optional[Iterable[str]] = None) -> pd.DataFrame:
    """The prompts x models matrix of one task's per-sample scores.

    Parameters
    ----------
    store : harness_ext.store.db.Store
    task : str
        lm-eval task name (as in ``samples_<task>_<date>.jsonl``).
    metric : str or None
        Per-sample metric (``acc``, ``acc_norm``, ``exact_match,strict-match``, ...); None: ``acc`` where the task
        logs it, else the task's only metric (a task of several without ``acc`` is refused, naming them).
    models : iterable of str, optional
        Keep only these models (in this order).

    Returns
    -------
    pandas.DataFrame
        Index ``doc_id`` (sorted), one column per model (sorted unless
        ``models`` is given), NaN where a model has no score for a prompt.
        Values are as logged: 0/1 for accuracy-type metrics, continuous
        otherwise. When two files hold the same (model, prompt), the
        first-ingested value is used. ``attrs`` holds ``task``, ``metric`` and
        ``binary`` (every value is 0 or 1).

    Raises
    ------
    StoreError
        If the store has no samples for ``task`` / ``metric``; the message lists
        what is available.
    """
    if not _has_samples(store):
        raise StoreError("the store has no per-sample data: ingest lm-eval samples_*.jsonl files first")
    if metric is None:
        metric = _default_metric(store, task)
    long = store.con.execute(
        """SELECT model, doc_id, value FROM samples WHERE task = ? AND metric = ?
           QUALIFY row_number() OVER (PARTITION BY model, doc_id ORDER BY source_id) = 1""",
        [task, metric],
    ).df()
    if models is not None:
        models = list(models)
        long = long[long["model"].isin(models)]
    if long.empty:
        avail = sample_tasks(store)
        have = avail[avail["task"] == task]["metric"].tolist()
        if have:
            raise StoreError(f"no per-sample {metric!r} for task {task!r}; metrics logged for it: {', '.join(have)}")
        raise StoreError(f"no per-sample data for task {task!r}; tasks in the store: "
                         f"{', '.join(sorted(set(avail['task']))) or 'none'}")
    df = long.pivot(index="doc_id", columns="model", values="value").sort_index()
    df = df[[m for m in models if m in df.columns] if models is not None else sorted(df.columns)]
    df.index.name, df.columns.name = "doc_id", "model"
    vals = df.to_numpy(dtype=float)
    finite = vals[~np.isnan(vals)]
    df.attrs = {"task": task, "metric": metric, "binary": bool(np.isin(finite, (0.0, 1.0)).all())}
    return df
