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
from pathlib import Path
from typing import Optional

import duckdb
import pandas as pd

from ..errors import StoreError
# The write path (Store's base class) and what it reports, importable from here as before they had a module.
from .db_write import Conflict, SourceOutcome, _BatchWrites
# Re-exported: the command line sets the lock wait and listener here.
from .locking import (  # noqa: F401
    DEFAULT_LOCK_TIMEOUT, LOCK_TIMEOUT_ENV, NOT_A_STORE, _check_writable, _connect, lock_timeout_default,
    set_lock_listener, set_lock_timeout)
from .tables import _SCHEMA_AND_VERSION, _UPGRADE, _check_schema_version, has_table, name_lists

__all__ = ["CHECKPOINT_THRESHOLD", "DB_ENV", "DEFAULT_DB_NAME", "Conflict", "SourceOutcome", "Store",
           "check_store_file", "default_db_path"]


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
    head = _store_header(p)
    if head[8:12] != _DUCKDB_MAGIC:
        what = "an empty file" if not head else "not a DuckDB file"
        raise StoreError(f"{NOT_A_STORE}: {p} ({what}; --db must name a harness-ext store or a path that does not "
                         "exist yet)")


#: How long a file shorter than DuckDB's header is watched before it is refused: another process that has just
#: created the store has the file before DuckDB has written its header (two ingests started at once).
_HEADER_WAIT_S = 2.0


def _store_header(p: Path) -> bytes:
    """The first 12 bytes of ``p``; a shorter file is read again for up to :data:`_HEADER_WAIT_S` seconds, in case
    another process is creating the store."""
    import time

    deadline = time.monotonic() + _HEADER_WAIT_S
    while True:
        try:
            with open(p, "rb") as fh:
                head = fh.read(12)
        except OSError as exc:
            raise StoreError(f"{NOT_A_STORE}: {p} ({exc.strerror or exc})") from None
        if len(head) >= 12 or time.monotonic() >= deadline:
            return head
        time.sleep(0.05)


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


class Store(_BatchWrites):
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

    # -- ingestion (ingest_batch and the steps under it: harness_ext.store.db_write) ----------
    def ingest_source(self, path: str, sha256: str, adapter: str, records: list) -> SourceOutcome:
        """Store the records of one source in a single transaction (see :meth:`ingest_batch`)."""
        return self.ingest_batch([(path, sha256, adapter, records)])[0]

    # -- reading --------------------------------------------------------------------------
    def counts(self) -> dict:
        # Datasets as benchmarks() counts them, so its rows sum to the header: distinct (benchmark, name) with
        # results, aggregates apart (the table's rows are (benchmark, name, metric) triples).
        q = ("SELECT (SELECT count(*) FROM sources), (SELECT count(*) FROM models), (SELECT count(DISTINCT "
             "(benchmark, name)) FROM datasets WHERE coalesce(kind, 'dataset') <> 'aggregate' AND dataset_id IN "
             "(SELECT dataset_id FROM results)), (SELECT count(*) FROM results)")
        s, m, d, r = self.con.execute(q).fetchall()[0]
        return {"sources": s, "models": m, "datasets": d, "results": r, "conflicts": self.n_conflicting_cells()}

    def benchmarks(self) -> pd.DataFrame:
        """One row per benchmark: models, datasets, results, metrics, aggregates (datasets excludes them)."""
        return name_lists(self.con.execute(
            """SELECT d.benchmark, count(DISTINCT r.model_id) AS models,
                      count(DISTINCT d.name) FILTER (WHERE coalesce(d.kind, 'dataset') <> 'aggregate') AS datasets,
                      count(*) AS results, list(DISTINCT d.metric ORDER BY d.metric) AS metrics,
                      count(DISTINCT d.name) FILTER (WHERE d.kind = 'aggregate') AS aggregates
               FROM results r JOIN datasets d USING (dataset_id) GROUP BY d.benchmark ORDER BY d.benchmark"""
        ).df(), "metrics")

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
        return name_lists(self.con.execute(
            """SELECT name AS "group", count(*) AS benchmarks, list(benchmark ORDER BY benchmark) AS members
               FROM benchmark_groups GROUP BY name ORDER BY name""").df(), "members")

    def _has_table(self, table: str) -> bool:
        return has_table(self.con, table)

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
