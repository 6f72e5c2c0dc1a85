"""The DuckDB result store.

One file on disk (default ``./harness-ext.duckdb``, or ``$HARNESS_EXT_DB``, or
``--db PATH``) holds every ingested score with the file it came from and that
file's SHA-256. Ingestion is one transaction per source file and idempotent by
content hash: a file already ingested (under any path) changes nothing. A value
that disagrees with one already stored for the same (model, dataset, metric,
shots) from another file is stored beside it (every value keeps its source)
and reported as a conflict; model-level matrices use the value measured on the
most documents where the counts say so, else the value ingested first
(:mod:`harness_ext.store.cell_choice`), so nothing is silently overwritten.

Two small tables give names meaning across sources: ``model_aliases`` maps
model names as sources spell them to canonical ids (:mod:`harness_ext.store.identity`;
every matrix query applies it) and ``benchmark_groups`` names sets of
benchmarks queried as one (``ingest --group NAME``).
"""

from __future__ import annotations

import json
import logging
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import repeat
from pathlib import Path
from typing import Callable, Optional

import duckdb
import numpy as np
import pandas as pd

from ..errors import StoreError
from .batch import _KIND_NAMES, _Cells, _columns, _float_column, _Frame, _int_column, _metadata
# Re-exported: the command line sets the lock wait and listener here.
from .locking import (  # noqa: F401
    DEFAULT_LOCK_TIMEOUT, LOCK_TIMEOUT_ENV, NOT_A_STORE, _check_writable, _connect, lock_timeout_default,
    set_lock_listener, set_lock_timeout)
from .tables import (
    _DATASET_COLUMNS, _PAIR_COLUMNS, _SCHEMA_AND_VERSION, _UPGRADE, AGGREGATE, CONFLICT_TOLERANCE, DATASET,
    UNKNOWN_SHOTS, _check_schema_version)

log = logging.getLogger(__name__)

DEFAULT_DB_NAME = "harness-ext.duckdb"
DB_ENV = "HARNESS_EXT_DB"
#: DuckDB's checkpoint_threshold for a writing connection (its default: 16 MB); see Store._set_checkpoint_threshold.
CHECKPOINT_THRESHOLD = "1MB"

#: DuckDB's file magic, after an 8-byte checksum.
_DUCKDB_MAGIC = b"DUCK"


def check_store_file(p: Path) -> None:
    """Refuse, without modifying it, anything at ``p`` that is not a DuckDB database file.

    Raises
    ------
    StoreError
        If ``p`` is a directory, a special file, or a file without DuckDB's header.
    """
    import stat

    try:
        st = p.stat()
    except OSError as exc:
        raise StoreError(f"{NOT_A_STORE}: {p} ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise StoreError(f"{NOT_A_STORE}: {p} (a directory; --db names the store file)")
    if not stat.S_ISREG(st.st_mode):
        raise StoreError(f"{NOT_A_STORE}: {p} (not a regular file)")
    try:
        with open(p, "rb") as fh:
            head = fh.read(12)
    except OSError as exc:
        raise StoreError(f"{NOT_A_STORE}: {p} ({exc.strerror or exc})") from None
    if head[8:12] != _DUCKDB_MAGIC:
        what = "an empty file" if not head else "not a DuckDB file"
        raise StoreError(f"{NOT_A_STORE}: {p} ({what}; --db must name a harness-ext store or a path that does not "
                         "exist yet)")


#: The size of a DuckDB file that holds nothing yet (its header blocks); any table makes it larger or writes a WAL.
_EMPTY_DB_BYTES = 12288


def _empty_database(path: str) -> bool:
    """Whether the DuckDB file at ``path`` can hold no table: no larger than an empty one's header, and no WAL."""
    try:
        return os.stat(path).st_size <= _EMPTY_DB_BYTES and not os.path.lexists(path + ".wal")
    except OSError:
        return False


def default_db_path() -> str:
    return os.environ.get(DB_ENV) or DEFAULT_DB_NAME


@dataclass
class Conflict:
    model: str
    dataset: str
    metric: str
    num_fewshot: Optional[int]
    stored_value: float
    new_value: float
    stored_source: str

    def __str__(self):
        return self.text()

    def text(self, path: Optional[str] = None) -> str:
        """The conflict as said of the file at ``path``: a value that file gave already is one it lists twice."""
        shots = "" if self.num_fewshot is None else f", {self.num_fewshot}-shot"
        head = f"{self.model} on {self.dataset} ({self.metric}{shots})"
        if path is not None and self.stored_source == path:
            return (f"{head}: listed twice in this file, {self.stored_value:.6g} then {self.new_value:.6g} "
                    "(both kept; the first is used)")
        return (f"{head}: stored {self.stored_value:.6g} from {self.stored_source}, this file says "
                f"{self.new_value:.6g} (both kept; 'harness-ext info --conflicts' says which is used)")


@dataclass
class SourceOutcome:
    """What ingesting one source did."""

    status: str  # "ingested" | "unchanged" | "skipped" (the store refused it; see reason)
    n_new: int = 0
    n_duplicate: int = 0
    conflicts: list = field(default_factory=list)
    reason: str = ""


class Store:
    """A DuckDB-backed result store. Use :meth:`open` as a context manager."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: str, read_only: bool, fresh: bool = False,
                 older: bool = False):
        self.con = con
        self.path = path
        self.read_only = read_only
        self._in_transaction = False  # see transaction(): a block inside another's joins it
        #: ``adapter name -> revision`` stored with each source written (``sources.reader``; see store.reread), and the
        #: reading options as ``sources.options`` keeps them: set by ingest.
        self.readers: dict = {}
        self.read_options: Optional[str] = None
        self._reads = None  # store.reread.stored_reads, read at the start of each ingest
        if not read_only:
            self._set_checkpoint_threshold()
            # One transaction: a process killed while creating a store leaves all tables or none.
            with self.transaction() as con:
                # One statement list: each execute costs about a millisecond. A store of an older schema (``older``)
                # is upgraded in place in the same transaction.
                con.execute(_SCHEMA_AND_VERSION + (_UPGRADE if older else ""))
        self._load_caches(empty=fresh)

    # -- transactions and registered frames ------------------------------------------------
    @contextmanager
    def registered(self, **frames):
        """Register ``frames`` (pandas frames, dicts of arrays, Arrow tables) as views named by their
        keywords for the block, and unregister them after it whatever happens; yields the connection."""
        con = self.con
        done = []
        try:
            for name, frame in frames.items():
                con.register(name, frame)
                done.append(name)
            yield con
        except BaseException:
            # In a transaction the failed statement aborted, unregistering fails too ("Current transaction is
            # aborted"): that error would replace the one to report, and the rollback drops the views anyway.
            for name in done:
                try:
                    con.unregister(name)
                except duckdb.Error:
                    pass
            raise
        for name in done:
            con.unregister(name)

    @contextmanager
    def transaction(self, **frames):
        """One transaction (with ``frames`` registered as in :meth:`registered`); yields the connection.

        Commits when the block ends; on any exception rolls back, so nothing of the block stays,
        and re-raises. Every write of the store and its helpers goes through here. A block run inside
        another's transaction joins it (committed or rolled back with it): ingest refreshes the alias
        table inside its last batch's transaction (:meth:`ingest_batch` ``before_commit``).
        """
        with self.registered(**frames) as con:
            if self._in_transaction:
                yield con
                return
            con.execute("BEGIN TRANSACTION")
            self._in_transaction = True
            try:
                yield con
            except BaseException:
                self._in_transaction = False
                try:
                    con.execute("ROLLBACK")
                except duckdb.Error:
                    pass  # the original error is the one to report
                raise
            self._in_transaction = False
            con.execute("COMMIT")

    # -- opening -------------------------------------------------------------------------
    @classmethod
    def open(cls, path: Optional[str] = None, read_only: bool = False,
             lock_timeout: Optional[float] = None) -> "Store":
        """Open (creating if needed) the store at ``path``.

        ``path`` must be a harness-ext store or a path that does not exist yet:
        any other file (a JSON or CSV file named by mistake, a truncated or
        corrupt store) is refused without being touched, because DuckDB would
        otherwise open some of them as an empty in-memory database and an
        ingest would report rows it never kept.

        Another process writing to the store holds DuckDB's file lock; readers
        and writers then wait, with a message, up to ``lock_timeout`` seconds
        (default ``$HARNESS_EXT_LOCK_TIMEOUT`` or ``--lock-timeout``, else
        :data:`DEFAULT_LOCK_TIMEOUT`). ``ingest`` holds the lock only while it
        writes a batch, so readers get in between batches.

        Raises
        ------
        StoreError
            If the file is still locked after the timeout (StoreLockedError), is
            not a harness-ext store (or is corrupt), or a read-only open finds no store.
        """
        path = str(path) if path is not None else default_db_path()
        created = False
        if path == ":memory:" and read_only:  # a read opens a store made before; one in memory is new and empty
            raise StoreError("no store at :memory: (a store in memory starts empty and ends with the command): "
                             "pass the path of a store 'harness-ext ingest' wrote")
        if path != ":memory:":
            p = Path(path)
            if read_only and not os.path.lexists(p):
                raise StoreError(f"no store at {path}: run 'harness-ext ingest PATH' first (or pass --db)")
            if os.path.lexists(p):
                check_store_file(p)
            elif not read_only:
                try:
                    p.parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise StoreError(f"cannot write the store at {path}: cannot create its folder "
                                     f"({exc.strerror or exc})") from None
                created = True
            if not read_only:
                _check_writable(p)
        con = _connect(path, read_only and path != ":memory:", lock_timeout)
        try:
            # A file this call created holds no tables: the catalog query (a new connection's first costs about
            # 10 ms of CPU) is left out when the file is still only DuckDB's header, with no WAL.
            fresh = created and path != ":memory:" and _empty_database(path)
            older = False
            if path != ":memory:" and not fresh:
                tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
                if tables and not {"meta", "results", "sources"} <= tables:
                    # A DuckDB file of something else: never add our tables to it.
                    raise StoreError(f"{NOT_A_STORE}: {path} (a DuckDB database without harness-ext tables)")
                if read_only and "results" not in tables:
                    raise StoreError(f"{NOT_A_STORE}: {path} (no results table)")
                if "meta" in tables:
                    older = _check_schema_version(con, path)
            return cls(con, path, read_only, fresh=fresh, older=older)
        except StoreError:
            con.close()
            raise
        except duckdb.Error as exc:
            con.close()
            raise StoreError(f"{NOT_A_STORE}: {path} ({str(exc).splitlines()[0]})") from exc

    def close(self):
        if self.con is not None:
            self.con.close()
            self.con = None

    # -- sharing the file lock with other processes -----------------------------------------
    def release(self) -> None:
        """Close the connection so other processes can read or write; :meth:`acquire` reopens it."""
        if self.path != ":memory:" and self.con is not None:
            self.con.close()
            self.con = None

    def acquire(self, lock_timeout: Optional[float] = None) -> None:
        """Reopen after :meth:`release` (waiting for the lock) and reload what others wrote meanwhile."""
        if self.con is None:
            self.con = _connect(self.path, self.read_only, lock_timeout)
            if not self.read_only:
                self._set_checkpoint_threshold()
            self._load_caches()

    def _set_checkpoint_threshold(self) -> None:
        """A commit whose WAL would pass :data:`CHECKPOINT_THRESHOLD` goes into the database file at once
        (DuckDB checkpoints instead of writing the WAL), so an ingest batch is written once, not to the WAL
        and again by the checkpoint when the connection closes (a 4,574-file batch: a 4.4 MB WAL)."""
        if self.path != ":memory:":
            self.con.execute(f"SET checkpoint_threshold = '{CHECKPOINT_THRESHOLD}'")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- caches of ids, so a 10,000-file ingest does not query per record ------------------
    def _load_caches(self, empty: bool = False):
        """Read the id caches from the store; ``empty``: a store whose tables were made just now (a file
        :meth:`open` created), the caches made without its five queries."""
        if empty:
            self._model_ids, self._dataset_ids, self._primary, self._next_source, self._shas = {}, {}, set(), 1, set()
            return
        self._model_ids = dict(self.con.execute("SELECT name, model_id FROM models").fetchall())
        self._dataset_ids = {
            (b, n, m): i for b, n, m, i in self.con.execute("SELECT benchmark, name, metric, dataset_id FROM datasets").fetchall()
        }
        self._primary = set(self.con.execute("SELECT DISTINCT benchmark, name FROM datasets WHERE is_primary").fetchall())
        self._next_source = (self.con.execute("SELECT coalesce(max(source_id), 0) FROM sources").fetchall()[0][0]) + 1
        self._shas = {r[0] for r in self.con.execute("SELECT sha256 FROM sources").fetchall()}

    def committed_results(self, since: int) -> dict:
        """``sha256 -> n_results`` as committed in the store, for the sources numbered from ``since`` on (a write
        numbers its sources from :attr:`_next_source`: pass it as it was before the write).

        Ingest reports its counts from here, so it never reports a row that was not persisted. One range scan
        by source id (no table of hashes to register and join).
        """
        rows = self.con.execute("SELECT sha256, n_results FROM sources WHERE source_id >= ?", [since]).fetchnumpy()
        return dict(zip(rows["sha256"].tolist(), rows["n_results"].tolist()))

    def has_source(self, sha256: str) -> bool:
        """Whether content with this hash was ingested already (under any path)."""
        return sha256 in self._shas

    # -- ingestion ------------------------------------------------------------------------
    def ingest_source(self, path: str, sha256: str, adapter: str, records: list) -> SourceOutcome:
        """Store the records of one source in a single transaction (see :meth:`ingest_batch`)."""
        return self.ingest_batch([(path, sha256, adapter, records)])[0]

    def ingest_batch(self, items: list, before_commit: Optional[Callable[[], None]] = None) -> list:
        """Store several sources, each all-or-nothing, in one transaction.

        ``items`` are ``(path, sha256, adapter, records)`` with validated
        records. Batching matters: DuckDB's per-statement cost, not the data,
        dominates a file-at-a-time ingest of thousands of small files. If the
        batch transaction fails, it is rolled back and each source is retried
        in its own transaction, so one bad source never takes others with it
        and never leaves part of itself behind.

        ``before_commit``, if given, writes what goes with the batch (ingest's alias refresh) inside its
        transaction, just before the commit: one commit and one checkpoint instead of two. Without a batch
        transaction (nothing new, or the batch refused and its sources written one at a time) it runs
        after the writes, in a transaction of its own. Either way its writes are committed once.

        Returns
        -------
        list of SourceOutcome
            One per item, in order; a source whose own transaction fails is
            ``skipped`` with the database's reason and leaves nothing behind.
        """
        if self.read_only:
            raise StoreError(f"store {self.path} was opened read-only")
        fresh, seen = [], set()
        outcomes: list = [None] * len(items)
        for i, (path, sha, adapter, records) in enumerate(items):
            if sha in self._shas or sha in seen:
                outcomes[i] = SourceOutcome("unchanged")
            else:
                seen.add(sha)
                fresh.append(i)
        done = []
        if fresh:
            try:
                done = self._write_batch([items[i] for i in fresh], before_commit)
                before_commit = None  # committed with the batch
            except duckdb.Error:
                # Retry one source per transaction; a source that still fails is reported, not raised,
                # so it cannot take the sources after it down (each failed write was rolled back).
                done = []
                for i in fresh:
                    try:
                        done.append(self._write_batch([items[i]])[0])
                    except duckdb.Error as exc:
                        done.append(SourceOutcome("skipped", reason=f"the store refused it: {str(exc).splitlines()[0]}"))
        if before_commit is not None:
            with self.transaction():
                before_commit()
        for i, o in zip(fresh, done):
            outcomes[i] = o
        return outcomes

    def _write_batch(self, items: list, before_commit: Optional[Callable[[], None]] = None) -> list:
        new_models: dict = {}
        new_datasets: dict = {}
        new_primary: set = set()
        next_model = max(self._model_ids.values(), default=0) + 1
        next_dataset = max(self._dataset_ids.values(), default=0) + 1
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        first_source = self._next_source
        paths, shas, adapters, recs = zip(*items)
        lens = list(map(len, recs))
        source_id = np.repeat(np.arange(first_source, first_source + len(items)), lens)
        # The rows' fields as columns, models and descriptions as codes in order of first appearance: a
        # ResultRows source costs a few C-level passes, its model and its kinds (shared descriptions) named once.
        # ``descs[k]`` describes code k's rows: the record itself, or a ResultRows kind.
        c = _columns(items)
        n = len(c.values)
        # Model ids in order of first appearance, as ids are given: the known ones looked up in one C-level pass.
        found = list(map(self._model_ids.get, c.models))
        new_codes = [code for code, mid in enumerate(found) if mid is None]
        for code, mid in zip(new_codes, range(next_model, next_model + len(new_codes))):
            found[code] = mid
            new_models[c.models[code]] = [mid, "{}"]
        m_ids = np.array(found, dtype=np.int64)
        model_id = m_ids[c.model_codes]
        # Adapters share one metadata dict per model: each (model, source, dict) is serialised once, and a new
        # model's metadata (its first row's dict) from the same values.
        new_mds = {code: c.model_metas[code] for code in new_codes if c.model_metas[code]}
        meta_rows, model_json = _metadata(c.source_metas, m_ids, first_source, new_mds)
        for code, text in model_json.items():
            new_models[c.models[code]][1] = text
        # Datasets by (benchmark, name, metric) of each distinct description, numbered in order of first appearance.
        d_of: dict = {}
        d_first = []
        desc_d = np.empty(len(c.descs), dtype=np.int64)
        for j, key in enumerate(map(_KIND_NAMES, c.descs)):
            code = d_of.get(key)
            if code is None:
                code = d_of[key] = len(d_first)
                d_first.append(j)
            desc_d[j] = code
        d_ids = np.empty(len(d_first), dtype=np.int64)
        for code, j in enumerate(d_first):
            rec = c.descs[j]
            dkey = (rec.benchmark, rec.dataset, rec.metric)
            did = self._dataset_ids.get(dkey)
            if did is None:
                did = next_dataset
                next_dataset += 1
                # One primary metric per dataset: a second metric a later file calls primary is not.
                pkey = (rec.benchmark, rec.dataset)
                primary = bool(rec.primary) and pkey not in self._primary and pkey not in new_primary
                if primary:
                    new_primary.add(pkey)
                new_datasets[dkey] = (
                    did, rec.benchmark, rec.dataset, rec.metric, rec.higher_is_better, _f(rec.random_baseline),
                    rec.baseline_source, _f(rec.min_score), _f(rec.max_score), primary, rec.task,
                    json.dumps(c.dmetas[c.desc_first[j]] or {}, default=str),
                    AGGREGATE if rec.aggregate else DATASET, rec.scale,
                )
            d_ids[code] = did
        stderr = _float_column(c.stderrs)  # None -> NaN
        n_samples, no_samples = _int_column(c.n_samples)
        value = np.fromiter(c.values, float, n)  # validated floats: no None to look for
        frame = _Frame({"model_id": model_id, "dataset_id": d_ids[desc_d][c.desc_codes],
                        "num_fewshot": _int_column(c.shots, UNKNOWN_SHOTS)[0], "value": value,
                        "stderr": stderr, "n_samples": n_samples, "source_id": source_id},
                       {"stderr": np.isnan(stderr), "n_samples": no_samples})
        cells = _Cells(frame, first_source, len(items))
        # The source rows, built by C-level passes (a tuple per source made in Python cost a microsecond each).
        sources = list(zip(range(first_source, first_source + len(items)), map(str, paths), shas, adapters,
                           repeat(now), cells.n_kept.tolist()))
        with self.transaction():
            self._append_new(sources, new_models, new_datasets, meta_rows)
            outcomes = self._insert_results(frame, items, cells)
            if before_commit is not None:
                before_commit()
        self._remember(new_models, new_datasets, new_primary, list(shas))
        return outcomes

    def _remember(self, new_models: dict, new_datasets: dict, new_primary: set, shas: list) -> None:
        """Add what a committed write created to the id caches."""
        self._model_ids.update({n: i for n, (i, _) in new_models.items()})
        self._dataset_ids.update({k: v[0] for k, v in new_datasets.items()})
        self._primary |= new_primary
        self._next_source += len(shas)
        self._shas.update(shas)

    def _append_new(self, sources: list, new_models: dict, new_datasets: dict, meta_rows: dict) -> None:
        """Insert a batch's source rows, new models and datasets and model metadata (columns: ``model_id, source_id,
        key, value``; see :func:`_first_per_key`), inside its transaction."""
        cols = dict(zip(["source_id", "path", "sha256", "adapter", "ingested_at", "n_results"], zip(*sources)))
        times = cols["ingested_at"]
        if times.count(times[0]) == len(times) and times[0].tzinfo is None:
            # A batch's one time as a numpy column: Arrow converts datetime objects one by one (50 ms a 5,000).
            cols["ingested_at"] = np.full(len(times), np.datetime64(times[0], "us"))
        cols["reader"] = [self.readers.get(a) for a in cols["adapter"]]
        cols["options"] = [self.read_options] * len(times)
        tables = {"sources": cols}
        if new_models:
            ids, mds = zip(*new_models.values())
            tables["models"] = {"model_id": ids, "name": list(new_models), "metadata": mds}
        if new_datasets:
            tables["datasets"] = dict(zip(_DATASET_COLUMNS, map(list, zip(*new_datasets.values()))))
        if meta_rows["key"]:
            tables["model_metadata"] = meta_rows
        self._append_columns(tables)

    def _append_columns(self, tables: dict) -> None:
        """Insert columns of plain values (ints, strings, datetimes) into each table of ``{table: {column:
        values}}`` through Arrow, in one ``execute``: converted a column at a time in C, where a pandas frame of row
        tuples cost more than the insert on a 4,574-file batch."""
        import pyarrow as pa

        frames = {}
        for table, columns in tables.items():
            try:
                frames["_" + table] = pa.table({name: pa.array(col) for name, col in columns.items()})
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                # Values of mixed or unstorable types (an adapter's own higher_is_better, say): the store refuses
                # them as DuckDB would, so ingest_batch retries the batch a source at a time and reports the one at
                # fault.
                raise duckdb.ConversionException(f"{table}: {exc}") from exc
        with self.registered(**frames) as con:
            con.execute(";".join(f"INSERT INTO {table} BY NAME SELECT * FROM _{table}" for table in tables))

    def _append(self, table: str, frame) -> None:
        with self.registered(_frame=frame) as con:
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _frame")

    def _insert_results(self, frame: "_Frame", items: list, cells: "_Cells") -> list:
        n_items = len(items)
        key = ("model_id", "dataset_id", "num_fewshot")
        first_id = self._next_source  # _write_batch numbered the batch's sources from here
        # A file repeating a key: keep its first value; disagreement is a conflict like any other.
        dup = cells.repeat
        rows = frame.arrow(np.flatnonzero(~dup) if dup.any() else None)
        with self.registered(_incoming=rows):
            # Against what was stored before this batch ... (columns as numpy arrays: no frame for a few rows)
            clash = self.con.execute(
                """SELECT i.model_id, i.dataset_id, i.num_fewshot, i.source_id, i.value, r.value AS value_stored,
                          r.source_id AS source_id_stored
                   FROM _incoming i JOIN results r USING (model_id, dataset_id, num_fewshot)
                   QUALIFY row_number() OVER (PARTITION BY i.model_id, i.dataset_id, i.num_fewshot, i.source_id
                                              ORDER BY r.source_id) = 1"""
            ).fetchnumpy()
            self.con.execute("INSERT INTO results BY NAME SELECT * FROM _incoming")
        # ... and against earlier files of this batch (the earliest source is the stored value): rows of a cell
        # after its first, in row order (sources are numbered in row order).
        value, source = frame.cols["value"], frame.cols["source_id"]
        later = np.flatnonzero(~dup & ~cells.first)
        n_clash = len(clash["value"])
        if n_clash and len(later):
            stored = pd.MultiIndex.from_arrays([np.asarray(clash[k]) for k in key])
            later = later[~pd.MultiIndex.from_arrays([frame.cols[k][later] for k in key]).isin(stored)]
        within = np.flatnonzero(dup)
        parts = [{k: np.asarray(clash[k]) for k in _PAIR_COLUMNS}] if n_clash else []
        for idx, first in ((later, cells.first_of_cell), (within, cells.first_of_key)):
            if len(idx):
                ref = first[idx]
                part = {k: frame.cols[k][idx] for k in _PAIR_COLUMNS[:5]}
                parts.append({**part, "value_stored": value[ref], "source_id_stored": source[ref]})
        if len(within):
            differ = np.abs(value[within] - value[cells.first_of_key[within]]) > CONFLICT_TOLERANCE
            if differ.any():
                self._append("result_repeats", frame.arrow(within[differ]))
        # Every (incoming row, stored value) pair, as columns: the same value is a duplicate, another a conflict.
        pairs = {k: np.concatenate([p[k] for p in parts]) if parts else np.empty(0) for k in _PAIR_COLUMNS}
        same = np.abs(pairs["value"] - pairs["value_stored"]) <= CONFLICT_TOLERANCE
        other = pairs["source_id"] != pairs["source_id_stored"]
        n_dup = np.bincount(pairs["source_id"].astype(np.int64)[same & other] - first_id, minlength=n_items)
        differs = {k: v[~same].tolist() for k, v in pairs.items()}
        described = self._describe_conflicts(differs) if differs["value"] else []
        by_source: dict = {}
        for sid, c in zip(differs["source_id"], described):
            by_source.setdefault(int(sid), []).append(c)
        kept, dups = cells.n_kept.tolist(), n_dup.tolist()  # Python ints, no numpy scalar per source
        return [SourceOutcome("ingested", n_new=kept[k], n_duplicate=dups[k],
                              conflicts=by_source.get(first_id + k, []))
                for k in range(n_items)]

    def _describe_conflicts(self, differs: dict) -> list:
        """Conflict objects of pairs given as lists (columns :data:`_PAIR_COLUMNS`), the names of only the models,
        datasets and sources they involve read from the store (inside the write's transaction)."""
        # One query for the three look-ups (a statement costs about half a millisecond whatever it reads).
        rows = self.con.execute(
            """SELECT 0, model_id, name, NULL FROM models WHERE list_contains(?, model_id) UNION ALL
               SELECT 1, dataset_id, name, metric FROM datasets WHERE list_contains(?, dataset_id) UNION ALL
               SELECT 2, source_id, path, NULL FROM sources WHERE list_contains(?, source_id)""",
            [sorted(set(differs[k])) for k in ("model_id", "dataset_id", "source_id_stored")]).fetchall()
        names, dsets, paths = {}, {}, {}
        for kind, i, name, metric in rows:
            if kind == 0:
                names[i] = (name,)
            elif kind == 1:
                dsets[i] = (name, metric)
            else:
                paths[i] = (name,)
        out = []
        for mid, did, shots, value, stored, sid_stored in zip(
                differs["model_id"], differs["dataset_id"], differs["num_fewshot"], differs["value"],
                differs["value_stored"], differs["source_id_stored"]):
            dname, metric = dsets[int(did)]
            out.append(Conflict(names[int(mid)][0], dname, metric, None if shots == UNKNOWN_SHOTS else int(shots),
                                float(stored), float(value), paths.get(int(sid_stored), ("?",))[0]))
        return out

    # -- reading --------------------------------------------------------------------------
    def counts(self) -> dict:
        # Datasets as benchmarks() counts them, so its rows sum to the header: distinct (benchmark, name) with
        # results, aggregates apart (the table's rows are (benchmark, name, metric) triples).
        q = ("SELECT (SELECT count(*) FROM sources), (SELECT count(*) FROM models), (SELECT count(DISTINCT "
             "(benchmark, name)) FROM datasets WHERE coalesce(kind, 'dataset') <> 'aggregate' AND dataset_id IN "
             "(SELECT dataset_id FROM results)), (SELECT count(*) FROM results)")
        s, m, d, r = self.con.execute(q).fetchone()
        return {"sources": s, "models": m, "datasets": d, "results": r, "conflicts": self.n_conflicting_cells()}

    def benchmarks(self) -> pd.DataFrame:
        """One row per benchmark: models, datasets, results, metrics, aggregates (datasets excludes them)."""
        return self.con.execute(
            """SELECT d.benchmark, count(DISTINCT r.model_id) AS models,
                      count(DISTINCT d.name) FILTER (WHERE coalesce(d.kind, 'dataset') <> 'aggregate') AS datasets,
                      count(*) AS results, string_agg(DISTINCT d.metric, ', ' ORDER BY d.metric) AS metrics,
                      count(DISTINCT d.name) FILTER (WHERE d.kind = 'aggregate') AS aggregates
               FROM results r JOIN datasets d USING (dataset_id) GROUP BY d.benchmark ORDER BY d.benchmark"""
        ).df()

    def model_metadata(self, models=None) -> pd.DataFrame:
        """Model metadata as the sources state it: one row per (model, key, source), ``value`` decoded from JSON.

        Leaderboard columns such as "Model Family" or "Model Size (B)" land here, not among the datasets.
        """
        where, params = "", []
        if models:
            where = f"WHERE m.name IN ({', '.join('?' * len(models))})"
            params = list(models)
        df = self.con.execute(
            f"""SELECT m.name AS model, mm.key, mm.value, s.path AS source FROM model_metadata mm
                JOIN models m USING (model_id) JOIN sources s USING (source_id) {where}
                ORDER BY m.name, mm.key, mm.source_id""", params).df()
        df["value"] = [json.loads(v) if isinstance(v, str) else v for v in df["value"]]
        return df
    def add_benchmark_group(self, name: str, shas) -> list:
        """Make ``name`` a benchmark group of every benchmark the sources with these hashes hold.

        A group is queried like a benchmark (``--benchmark NAME``): its matrix is the
        union of its members' datasets, a dataset name two members share being
        qualified as ``benchmark/dataset``. Idempotent; returns the members added.
        """
        if self.read_only:
            raise StoreError(f"store {self.path} was opened read-only")
        shas = sorted(set(shas))
        if not shas:
            return []
        with self.transaction(_shas=pd.DataFrame({"sha256": shas})) as con:
            added = con.execute(
                """INSERT OR IGNORE INTO benchmark_groups
                   SELECT DISTINCT ?, d.benchmark FROM results r JOIN sources s USING (source_id)
                   JOIN datasets d USING (dataset_id) WHERE s.sha256 IN (SELECT sha256 FROM _shas)
                   RETURNING benchmark""", [name]).fetchall()
        return sorted(r[0] for r in added)

    def benchmark_groups(self) -> pd.DataFrame:
        """One row per benchmark group: ``group, benchmarks`` (count) and ``members``."""
        if not self._has_table("benchmark_groups"):
            return pd.DataFrame(columns=["group", "benchmarks", "members"])
        return self.con.execute(
            """SELECT name AS "group", count(*) AS benchmarks, string_agg(benchmark, ',' ORDER BY benchmark) AS members
               FROM benchmark_groups GROUP BY name ORDER BY name""").df()

    def _has_table(self, table: str) -> bool:
        # duckdb_tables(), not information_schema.tables (a view over it and more): half the time, about 0.4 ms
        # of every matrix read.
        return bool(self.con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?",
                                     [table]).fetchone()[0])

    def n_conflicting_cells(self) -> int:
        """Number of cells with more than one distinct value (as ``ingest`` reports them)."""
        return self.conflict_counts()[0]

    def conflict_counts(self) -> tuple:
        """``(cells, by_documents)``: cells with more than one distinct value, and how many of them the values'
        document counts decide (:mod:`harness_ext.store.cell_choice`)."""
        from .cell_choice import conflict_counts

        return conflict_counts(self.conflicts())

    def conflicts(self) -> pd.DataFrame:
        """Cells with more than one distinct value across source files, one row per value; ``used`` marks the value
        each takes and why (:func:`harness_ext.store.cell_choice.conflicts`)."""
        from .cell_choice import conflicts

        return conflicts(self.con)


def _f(v) -> Optional[float]:
    return None if v is None else float(v)
