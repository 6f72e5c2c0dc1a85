"""The store's tables: its schema, its version and the constants its rows use.

:mod:`harness_ext.store.db` creates and writes them; the modules that read or fill rows
(:mod:`~harness_ext.store.columnar`, :mod:`~harness_ext.store.pivot`) take the constants from here.
"""

from __future__ import annotations

from ..errors import StoreError
from .locking import NOT_A_STORE

#: Version 2 added ``sources.reader`` (the revision of the adapter that read each source, NULL in stores made before:
#: read by an unknown, older reader) and ``sources.options`` (the reading options it was read with, as JSON).
#: Version 3 added ``sample_sources.reader`` (the item reader and its revision that stored each item source, see
#: :mod:`harness_ext.store.item_readers`; NULL in stores made before: an unknown, older item reader).
SCHEMA_VERSION = "3"
#: Stored instead of NULL in the results key when the shot count is unknown.
UNKNOWN_SHOTS = -1
#: Values closer than this are the same result (re-exports round differently).
CONFLICT_TOLERANCE = 1e-9

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS sources (
    source_id INTEGER PRIMARY KEY, path VARCHAR NOT NULL, sha256 VARCHAR NOT NULL,
    adapter VARCHAR NOT NULL, ingested_at TIMESTAMP NOT NULL, n_results INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS models (
    model_id INTEGER NOT NULL, name VARCHAR NOT NULL, metadata JSON);
CREATE TABLE IF NOT EXISTS datasets (
    dataset_id INTEGER PRIMARY KEY, benchmark VARCHAR NOT NULL, name VARCHAR NOT NULL, metric VARCHAR NOT NULL,
    higher_is_better BOOLEAN, random_baseline DOUBLE, baseline_source VARCHAR, min_score DOUBLE, max_score DOUBLE,
    is_primary BOOLEAN NOT NULL, task VARCHAR, metadata JSON, UNIQUE (benchmark, name, metric));
CREATE TABLE IF NOT EXISTS results (
    model_id INTEGER NOT NULL, dataset_id INTEGER NOT NULL, num_fewshot INTEGER NOT NULL,
    value DOUBLE NOT NULL, stderr DOUBLE, n_samples BIGINT, source_id INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS model_metadata (
    model_id INTEGER NOT NULL, source_id INTEGER NOT NULL, key VARCHAR NOT NULL, value JSON);
ALTER TABLE datasets ADD COLUMN IF NOT EXISTS kind VARCHAR DEFAULT 'dataset';
ALTER TABLE datasets ADD COLUMN IF NOT EXISTS scale VARCHAR;
CREATE TABLE IF NOT EXISTS result_repeats (
    model_id INTEGER NOT NULL, dataset_id INTEGER NOT NULL, num_fewshot INTEGER NOT NULL,
    value DOUBLE NOT NULL, stderr DOUBLE, n_samples BIGINT, source_id INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS model_aliases (
    alias VARCHAR PRIMARY KEY, canonical VARCHAR NOT NULL, origin VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS benchmark_groups (
    name VARCHAR NOT NULL, benchmark VARCHAR NOT NULL, PRIMARY KEY (name, benchmark));
ALTER TABLE sources ADD COLUMN IF NOT EXISTS reader VARCHAR;
ALTER TABLE sources ADD COLUMN IF NOT EXISTS options VARCHAR;
"""
#: The schema, then the version row (a constant: no parameter), run as one ``execute``. The row is inserted unless
#: present, as ``INSERT OR IGNORE`` would, without its conflict check on the key: 0.8 ms of CPU instead of 1.9 (of a
#: store open's 15 ms).
_SCHEMA_AND_VERSION = _SCHEMA + (
    f"INSERT INTO meta SELECT 'schema_version', '{SCHEMA_VERSION}' "
    "WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'schema_version');\n")
#: An older store is upgraded in place by the schema's statements (each adds only what is missing); this one, run
#: after them in their transaction when the store's version is older (see _check_schema_version), says so.
#: The item tables are made by the first ingest that stores item scores (store.samples.ensure_schema, which adds the
#: column too): a store that has them gets the column here.
_UPGRADE = ("ALTER TABLE IF EXISTS sample_sources ADD COLUMN IF NOT EXISTS reader VARCHAR;\n"
            f"UPDATE meta SET value = '{SCHEMA_VERSION}' WHERE key = 'schema_version';\n")
# ``results`` has no PRIMARY KEY index: (model_id, dataset_id, num_fewshot, source_id) is unique by
# construction (a source is written once, by content hash, with each key it repeats kept once, the later
# values in result_repeats), and DuckDB's index costs more than the rows: 10M results insert in 2 s of CPU
# without it, 28 s with it. Stores created before keep theirs. ``model_metadata`` likewise: (model_id, source_id,
# key) is unique by construction (a source's rows are written once, each key's first value kept: _first_per_key,
# store.columnar), and its index was most of the table's insert (about 10 ms of a 4,574-file ingest's write).
# ``sources.sha256`` and ``models`` (model_id, name) have no index either: a write checks hashes and names against
# the store's caches, and numbers its new sources from the cache's next source id. ``sources.source_id`` keeps its
# PRIMARY KEY, and it is what refuses a write whose caches are stale (another Store object wrote since, or writes
# at the same time): models and sources are only ever added together, so such a batch repeats a source id and
# is refused whole, as the unique hash and name refused it. The three indexes cost about 15 ms of a 4,574-file
# ingest's write (4,574 hashes, 4,496 names). Stores created before keep theirs.
#: ``datasets.kind``: a score of the benchmark's own (``dataset``) or one computed from others
#: (``aggregate``: HELM's mean win rate, lm-eval groups, a CSV's "average" column). Matrices leave
#: aggregates out unless asked (:class:`harness_ext.store.matrix.MatrixQuery` ``aggregates``).
DATASET = "dataset"
AGGREGATE = "aggregate"
# ``result_repeats`` holds the later values of a key one file gives more than once with different
# values (the first is in ``results``): kept and reported like a conflict between files.


#: The columns of a new ``datasets`` row, in the order _write_batch makes them.
_DATASET_COLUMNS = ("dataset_id", "benchmark", "name", "metric", "higher_is_better", "random_baseline",
                    "baseline_source", "min_score", "max_score", "is_primary", "task", "metadata", "kind", "scale")


#: The columns of an (incoming row, stored value) pair that _insert_results compares.
_PAIR_COLUMNS = ("model_id", "dataset_id", "num_fewshot", "source_id", "value", "value_stored", "source_id_stored")


def _check_schema_version(con, path: str) -> bool:
    """Refuse a store written by a newer harness-ext (a higher schema version), without changing it; whether the
    store's version is older than this one's (opened for writing, it is upgraded in place).

    Raises
    ------
    StoreError
        If the store's ``schema_version`` is not this version's or an older one.
    """
    row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
    if not row:
        return False  # a store being created (its version is written with its tables)
    stored = row[0][0]
    try:
        newer = int(stored) > int(SCHEMA_VERSION)
    except (TypeError, ValueError):
        raise StoreError(f"{NOT_A_STORE}: {path} (schema version {stored!r} is not a number)") from None
    if newer:
        raise StoreError(f"the store at {path} has schema version {stored}, newer than this harness-ext reads "
                         f"({SCHEMA_VERSION}): it was written by a newer harness-ext; upgrade harness-ext "
                         "(the store was not changed)")
    return int(stored) < int(SCHEMA_VERSION)


def name_lists(frame, *columns: str):
    """``frame`` with each of ``columns`` (DuckDB ``list(...)`` aggregates, read as numpy arrays) as plain lists of
    names, so that JSON output writes a list and no reader has to split a joined string (metric names hold commas:
    lm-eval's ``exact_match,strict-match``)."""
    return frame.assign(**{c: [[str(v) for v in names] for names in frame[c]] for c in columns}) if len(frame) \
        else frame


def has_table(con, table: str) -> bool:
    """Whether the store on ``con`` has ``table`` (the tables made on first use: aliases, repeats, the item id map).

    ``duckdb_tables()``, not ``information_schema.tables`` (a view over it and more): half the time, about 0.4 ms of
    every matrix read.
    """
    return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [table]).fetchall()[0][0])


def table_columns(con, table: str) -> set:
    """The names of ``table``'s columns in the store on ``con`` (empty if it has no such table): what a store made
    before a column was added lacks."""
    return {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ?",
                                      [table]).fetchall()}
