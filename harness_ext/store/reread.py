"""Sources an older reader stored, and reading them again (``ingest --reread``).

Every source row records the revision of the adapter that read it (``sources.reader``, see
:class:`harness_ext.types.Adapter` ``revision``; NULL in stores made before it was recorded: an unknown, older
reader) and the reading options it was read with (``sources.options``). Ingest is idempotent by content hash, so a
file stored by an older reader is not read again by itself: ``ingest`` counts such files, and ``ingest --reread``
replaces what the older reading stored from each of them (:func:`replace_sources`: the files of a batch in one
transaction, in halves if one of them fails, so a file that fails keeps its rows and takes no other with it), so
the store ends as a fresh ingest of the same files in the same order would. A file changed since it was stored (the
same path, adapter and reading options: :func:`earlier_readings`) replaces its earlier reading the same way.
"""

from __future__ import annotations

import json
from typing import Callable, Optional

import numpy as np

from ..report import listed

#: Tables whose rows belong to one source (``source_id``): what a reading stored from it.
_SOURCE_TABLES = ("results", "result_repeats", "model_metadata")


def options_text(options: Optional[dict]) -> Optional[str]:
    """The reading options as ``sources.options`` keeps them (sorted JSON), None for none."""
    return json.dumps(options, sort_keys=True, default=str) if options else None


def stored_reads(store, load: bool = False) -> tuple:
    """``({sha256: reader}, {path: {(adapter, options)}}, {(path, adapter, options): [(sha256, n_results,
    ingested_at)]})`` of the store's sources as an ingest found them: read (``load``) at its start, while it holds
    the store (it reads files with the store released between batches)."""
    reads = store.__dict__.get("_reads")
    if load and not store._shas:  # an empty store: no query
        reads = store._reads = ({}, {}, {})
    elif load or reads is None and store.con is not None:
        reads = store._reads = ({}, {}, {})
        _add_reads(reads, store.con.execute(
            "SELECT sha256, reader, path, adapter, options, n_results, ingested_at FROM sources ORDER BY source_id"))
    return reads if reads is not None else ({}, {}, {})


def _add_reads(reads: tuple, rows) -> None:
    by_sha, by_path, by_reading = reads
    for sha, reader, path, adapter, options, n, at in rows.fetchall():
        by_sha[sha] = reader
        by_path.setdefault(path, set()).add((adapter, options))
        by_reading.setdefault((path, adapter, options), []).append((sha, n, at))


def earlier_readings(store, path: str, adapter: str, options: Optional[dict]) -> list:
    """The stored versions ``(sha256, n_results, ingested_at)`` of the same reading of ``path`` (the same adapter
    and reading options), oldest first: a file about to be stored with other content was edited since (or its
    sidecar was), and its new reading replaces them (:func:`replace_sources`). Several: stored by a harness-ext
    that kept an edited file's readings side by side."""
    if not store._shas:
        return []  # an empty store: nothing read before
    return list(stored_reads(store)[2].get((path, adapter, options_text(options)), ()))


def earlier_models(store, shas) -> set:
    """The names of the models the stored sources ``shas`` (an edited file's earlier readings) gave results or
    metadata for."""
    return {r[0] for r in store.con.execute(
        "SELECT DISTINCT m.name FROM models m JOIN (SELECT model_id, source_id FROM results UNION ALL "
        "SELECT model_id, source_id FROM model_metadata) r USING (model_id) JOIN sources s USING (source_id) "
        "WHERE list_contains(?, s.sha256)", [list(shas)]).fetchall()}


def other_models_note(models) -> str:
    """The note of a file changed since it was stored whose new content names none of the models its earlier
    reading stored (``models``): another model's results written to the same path (an output path used again), so
    the earlier reading is kept beside it rather than replaced."""
    shown = listed(sorted(models), 3)
    return (f"stored before from this path with other content for other models ({shown}): the file now names none of "
            "them, so this reading is stored beside the earlier one, which stays (a file updated in place replaces "
            "its earlier reading when it names a model of it)")


def shares_a_model(earlier_models, now_models) -> bool:
    """Whether a file's new reading names a model its earlier reading stored (case aside), or the earlier stored no
    model: then the new reading is an update of the earlier and replaces it."""
    before = {str(m).casefold() for m in earlier_models}
    return not before or not before.isdisjoint(str(m).casefold() for m in now_models)


def kept_beside_items(earlier: list, models) -> tuple:
    """``(earlier, note)`` for an item file changed since it was stored (``earlier``:
    :func:`~harness_ext.store.item_readers.earlier_item_sources`) whose new reading gives item scores of ``models``:
    ``([], note)`` when they share none with the earlier reading's (it is kept beside), else ``(earlier, '')``."""
    before = {r[4] for r in earlier}
    if earlier and not shares_a_model(before, models):
        return [], other_models_note(before)
    return earlier, ""


def kept_beside(store, earlier: list, records) -> str:
    """The note of a result file changed since it was stored (``earlier``: :func:`earlier_readings`) whose new
    ``records`` name none of the models its earlier reading stored, so that reading is kept beside it; '' when the
    new reading replaces it."""
    before = earlier_models(store, [v[0] for v in earlier])
    return "" if shares_a_model(before, record_names(records)[0]) else other_models_note(before)


def is_older(store, sha: str, revision) -> bool:
    """Whether the stored source with this hash was read by another revision of its adapter than ``revision``
    (no recorded revision: a store made before they were recorded, read by an older reader)."""
    by_sha = stored_reads(store)[0]
    return sha in by_sha and by_sha[sha] != str(revision)


def other_reading_note(store, path: str, adapter: str, options: Optional[dict]) -> str:
    """The note for a file about to be stored that the store holds already from the same path read with other
    reading options or by another adapter (each makes another source: both readings are kept), or ''. The same
    reading of other content (the file edited) replaces the earlier one instead (:func:`earlier_readings`)."""
    if not store._shas:
        return ""  # an empty store: nothing read before
    now = options_text(options)
    stored = stored_reads(store)[1].get(path, ())
    before = {o for a, o in stored if a == adapter and o != now}
    if before:
        shown = ", ".join(sorted(o or "none" for o in before))
        return (f"stored before from this path with other reading options ({shown}; now {now or 'none'}): this "
                "reading is stored as another source beside it, and a cell both give is stored twice (the first is "
                "used)")
    others = sorted({a for a, _o in stored if a != adapter})
    if others:
        return (f"stored before from this path as {', '.join(others)} (now {adapter}): this reading is stored as "
                "another source beside it (--reread does not replace it; the earlier reading stays)")
    return ""


#: A key of the store's id caches that no name or (benchmark, dataset, metric) is.
_RESERVED = object()


class _Refused(Exception):
    def __init__(self, outcome):
        super().__init__(outcome.reason)
        self.outcome = outcome


def record_names(records) -> tuple:
    """``(model names, (benchmark, dataset, metric) keys)`` a source's records name (a list of ResultRecord,
    ResultRows, or a table given as arrays)."""
    from .rows import ResultRows

    if records.__class__ is ResultRows:
        return [records.model], [(k.benchmark, k.dataset, k.metric) for k in records.kinds]
    if hasattr(records, "columns") and hasattr(records, "models"):  # ColumnarResults, ColumnarCells
        return list(records.models), [(c["benchmark"], c["dataset"], c["metric"]) for c in records.columns]
    return [r.model for r in records], [(r.benchmark, r.dataset, r.metric) for r in records]


def replace_sources(store, items: list, write: Callable[[list], list]) -> list:
    """Replace everything each source stored by a new reading of it; the outcomes, in order.

    ``items``: ``(sha256, source, names)`` of stored sources read again: the new reading as ``write`` takes it, and
    the model names and dataset keys it gives (:func:`record_names`). ``sha256`` may be a tuple of the hashes of
    several stored sources (the versions of an edited file, :func:`earlier_readings`): the new reading replaces
    all of them, and takes the place (source id) of the first. ``write(sources)`` writes new readings as
    sources numbered from the store's next source id, in order
    (:meth:`~harness_ext.store.db.Store.ingest_batch`, :func:`~harness_ext.store.columnar.write_columnar`), and
    returns the ``SourceOutcome`` of each.

    Each new reading keeps its source's id, so its place in the ingest order (which of two conflicting values is
    used) stays. Its results, repeated values and model metadata go; so do the models and datasets no source before
    it stored, which the new reading makes again as a fresh ingest would (the same ids where it names them again,
    its descriptions: direction, chance, scale, kind), and which are kept as they were when it does not name them
    but a later source does. A model name or dataset key the new reading gives that only later sources stored is
    described by the new reading too, as it would have been had the new reading been stored first.

    The sources are replaced in one transaction (one deletion over the tables instead of one per source: most of
    a file-at-a-time re-read's time). If one of them is not stored (refused by its reader's write or by the store),
    that transaction is rolled back and each half of them is replaced the same way, down to a source alone: a
    source that fails keeps its rows and takes no other with it (its outcome says why), and a few failures among
    thousands of sources cost a few dozen transactions, not thousands.
    """
    if len(items) > 1:
        outcomes = _replace(store, items, write)
        if outcomes is not None:
            return outcomes
        half = len(items) // 2
        return replace_sources(store, items[:half], write) + replace_sources(store, items[half:], write)
    return [_replace(store, items, write, alone=True)[0]] if items else []


def _replace(store, items: list, write: Callable[[list], list], alone: bool = False) -> Optional[list]:
    """Replace ``items`` (:func:`replace_sources`) in one transaction: their outcomes, or None if one was not stored
    (rolled back; ``alone``: the one item's outcome, saying why)."""
    import duckdb

    con = store.con
    olds = [item[0] if isinstance(item[0], tuple) else (item[0],) for item in items]
    shas = [sha for old in olds for sha in old]
    sids = dict(con.execute("SELECT sha256, source_id FROM sources WHERE list_contains(?, sha256)",
                            [shas]).fetchall())
    first = [min(sids[sha] for sha in old) for old in olds]  # where each new reading is stored
    order = sorted(range(len(items)), key=first.__getitem__)
    next_source = store._next_source
    outcomes: list = [None] * len(items)
    ok = False
    try:
        with store.transaction():
            # A later version of an edited file names nothing of its own: its new reading takes the first's place.
            top = _forget(con, [(sids[sha], names if sids[sha] == at else ([], []))
                                for old, at, (_, _, names) in zip(olds, first, items) for sha in old])
            forgotten = _forgotten(con)
            _uncache(store, shas, forgotten)
            # New ids are numbered after the forgotten ones (a reserved key no name matches holds the highest), so
            # _restore can give a model or dataset made again its old id back without meeting a new one's.
            store._model_ids[_RESERVED] = top[0]
            store._dataset_ids[_RESERVED] = top[1]
            for run in _runs(order, first):
                store._next_source = first[run[0]]  # the new readings are numbered as the old ones were
                for i, outcome in zip(run, write([items[i][1] for i in run])):
                    if outcome.status != "ingested":
                        raise _Refused(outcome)
                    outcomes[i] = outcome
            restored = ({}, {})
            if forgotten[0] or forgotten[1]:
                _restore(con, forgotten)
                restored = _forgotten(con, now=True)
            con.execute("DROP TABLE _reread_d; DROP TABLE _reread_m")
        ok = True
    except _Refused as exc:
        outcomes = [exc.outcome]
    except duckdb.Error as exc:
        from .db import SourceOutcome

        outcomes = [SourceOutcome("skipped", reason=f"the store refused it: {str(exc).splitlines()[0]}")]
    finally:
        store._next_source = next_source
        if not ok:
            store._load_caches()  # rolled back: the caches as the store is
    if not ok:
        return outcomes if alone else None
    _recache(store, restored)
    if len(shas) > len(items):  # later versions of an edited file are gone: the next id as the store now has it
        store._next_source = con.execute("SELECT coalesce(max(source_id), 0) + 1 FROM sources").fetchall()[0][0]
    reads = store.__dict__.get("_reads")
    if reads is not None:
        _forget_reads(reads, set(shas))
        _add_reads(reads, con.execute("SELECT sha256, reader, path, adapter, options, n_results, ingested_at "
                                      "FROM sources WHERE list_contains(?, source_id) ORDER BY source_id", [first]))
    return outcomes


def _forget_reads(reads: tuple, shas: set) -> None:
    """:func:`stored_reads` without the sources ``shas`` replaced (an edited file's earlier versions)."""
    for sha in shas:
        reads[0].pop(sha, None)
    for key, versions in list(reads[2].items()):
        if any(v[0] in shas for v in versions):
            reads[2][key] = [v for v in versions if v[0] not in shas]


def _runs(order: list, sids: list) -> list:
    """The items in ``order`` (ascending source ids ``sids``) as runs of consecutive ids, each written at once."""
    runs: list = []
    for i in order:
        if runs and sids[i] == sids[runs[-1][-1]] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def _forgotten(con, now: bool = False) -> tuple:
    """``(model names, datasets as (key, is_primary))`` set aside by :func:`_forget`: as they were, or (``now``) as
    they are after :func:`_restore`, with their ids (those the new reading and the later sources left out: gone)."""
    if now:
        rows = con.execute("""SELECT 0, m.name, NULL, NULL, m.model_id, NULL FROM _reread_m o JOIN models m USING (name)
                              UNION ALL SELECT 1, d.benchmark, d.name, d.metric, d.dataset_id, d.is_primary
                              FROM _reread_d o JOIN datasets d USING (benchmark, name, metric)""").fetchall()
    else:
        rows = con.execute("""SELECT 0, name, NULL, NULL, model_id, NULL FROM _reread_m UNION ALL
                              SELECT 1, benchmark, name, metric, dataset_id, is_primary FROM _reread_d""").fetchall()
    models = {r[1]: r[4] for r in rows if r[0] == 0}
    datasets = {(r[1], r[2], r[3]): (r[4], bool(r[5])) for r in rows if r[0] == 1}
    return models, datasets


def _uncache(store, shas: list, forgotten: tuple) -> None:
    """The store's id caches without what :func:`_forget` deleted (one primary per dataset name: a forgotten
    primary leaves its name without one)."""
    models, datasets = forgotten
    for name in models:
        store._model_ids.pop(name, None)
    for key, (_, primary) in datasets.items():
        store._dataset_ids.pop(key, None)
        if primary:
            store._primary.discard(key[:2])
    store._shas.difference_update(shas)


def _recache(store, restored: tuple) -> None:
    """The id caches after :func:`_restore`: a model or dataset made again or brought back under its old id."""
    models, datasets = restored
    store._model_ids.pop(_RESERVED, None)
    store._dataset_ids.pop(_RESERVED, None)
    store._model_ids.update(models)
    for key, (did, primary) in datasets.items():
        store._dataset_ids[key] = did
        if primary:
            store._primary.add(key[:2])


def _forget(con, sources: list) -> tuple:
    """Delete what the sources ``(source id, names)`` stored, and the models and datasets one of them or its new
    reading (``names``) names that no source before it (not one of them) stored, kept aside in temporary tables for
    :func:`_restore`; returns the highest model and dataset ids there were.

    A model or dataset is set aside when the first of these sources to store or name it comes before every other
    source storing it: as replacing them one at a time, in order, would set it aside."""
    import pandas as pd

    top = con.execute("SELECT (SELECT coalesce(max(model_id), 0) FROM models), "
                      "(SELECT coalesce(max(dataset_id), 0) FROM datasets)").fetchall()[0]
    sids = pd.DataFrame({"source_id": np.array([sid for sid, _ in sources], dtype=np.int64)})
    named = pd.DataFrame([(sid, n) for sid, names in sources for n in set(names[0])] or None,
                         columns=["source_id", "name"], dtype=object)
    keys = pd.DataFrame([(sid, *k) for sid, names in sources for k in set(names[1])] or None,
                        columns=["source_id", "benchmark", "name", "metric"], dtype=object)
    for frame in (named, keys):
        frame["source_id"] = frame["source_id"].astype("int64")
    con.register("_reread_s", sids)
    con.register("_reread_names", named)
    con.register("_reread_keys", keys)
    mine = "source_id IN (SELECT source_id FROM _reread_s)"
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _reread_d AS SELECT * FROM datasets WHERE dataset_id IN (
            SELECT dataset_id FROM (
                SELECT dataset_id, min(source_id) AS first FROM (
                    SELECT dataset_id, source_id FROM results WHERE {mine} UNION ALL
                    SELECT d.dataset_id, k.source_id FROM datasets d
                    JOIN _reread_keys k USING (benchmark, name, metric))
                GROUP BY dataset_id) i
            LEFT JOIN (SELECT dataset_id, min(source_id) AS first FROM (
                    SELECT dataset_id, source_id FROM results UNION ALL
                    SELECT dataset_id, source_id FROM result_repeats)
                WHERE NOT {mine} GROUP BY dataset_id) o USING (dataset_id)
            WHERE o.first IS NULL OR o.first > i.first);
        CREATE OR REPLACE TEMP TABLE _reread_m AS SELECT * FROM models WHERE model_id IN (
            SELECT model_id FROM (
                SELECT model_id, min(source_id) AS first FROM (
                    SELECT model_id, source_id FROM results WHERE {mine} UNION ALL
                    SELECT model_id, source_id FROM model_metadata WHERE {mine} UNION ALL
                    SELECT m.model_id, n.source_id FROM models m JOIN _reread_names n USING (name))
                GROUP BY model_id) i
            LEFT JOIN (SELECT model_id, min(source_id) AS first FROM (
                    SELECT model_id, source_id FROM results UNION ALL SELECT model_id, source_id FROM result_repeats
                    UNION ALL SELECT model_id, source_id FROM model_metadata)
                WHERE NOT {mine} GROUP BY model_id) o USING (model_id)
            WHERE o.first IS NULL OR o.first > i.first);
        {"".join(f"DELETE FROM {t} WHERE {mine};" for t in _SOURCE_TABLES)}
        DELETE FROM sources WHERE {mine};
        DELETE FROM datasets WHERE dataset_id IN (SELECT dataset_id FROM _reread_d);
        DELETE FROM models WHERE model_id IN (SELECT model_id FROM _reread_m);""")
    for name in ("_reread_s", "_reread_names", "_reread_keys"):
        con.unregister(name)
    return top


def _restore(con, forgotten: tuple) -> None:
    """After the new reading: a dataset or model it made again takes back its old id; one it does not name but a
    later source stored results of comes back as it was (a dataset not primary if another of its name now is).
    Only the halves with something ``forgotten`` (:func:`_forgotten`) run: each statement costs a few milliseconds."""
    con.execute((_RESTORE_DATASETS if forgotten[1] else "") + (_RESTORE_MODELS if forgotten[0] else ""))


_RESTORE_DATASETS = """
        CREATE OR REPLACE TEMP TABLE _reread_moves AS SELECT d.dataset_id AS new_id, o.dataset_id AS old_id
            FROM datasets d JOIN _reread_d o USING (benchmark, name, metric);
        UPDATE results SET dataset_id = m.old_id FROM _reread_moves m WHERE results.dataset_id = m.new_id;
        UPDATE result_repeats SET dataset_id = m.old_id FROM _reread_moves m WHERE result_repeats.dataset_id = m.new_id;
        UPDATE datasets SET dataset_id = m.old_id FROM _reread_moves m WHERE datasets.dataset_id = m.new_id;
        INSERT INTO datasets BY NAME SELECT * REPLACE (o.is_primary AND NOT EXISTS (
                SELECT 1 FROM datasets d WHERE d.is_primary AND d.benchmark = o.benchmark AND d.name = o.name)
                AS is_primary)
            FROM _reread_d o WHERE o.dataset_id NOT IN (SELECT old_id FROM _reread_moves)
            AND o.dataset_id IN (SELECT dataset_id FROM results UNION SELECT dataset_id FROM result_repeats);
        DROP TABLE _reread_moves;"""
_RESTORE_MODELS = """
        CREATE OR REPLACE TEMP TABLE _reread_moves AS SELECT m.model_id AS new_id, o.model_id AS old_id
            FROM models m JOIN _reread_m o USING (name);
        UPDATE results SET model_id = m.old_id FROM _reread_moves m WHERE results.model_id = m.new_id;
        UPDATE result_repeats SET model_id = m.old_id FROM _reread_moves m WHERE result_repeats.model_id = m.new_id;
        UPDATE model_metadata SET model_id = m.old_id FROM _reread_moves m WHERE model_metadata.model_id = m.new_id;
        UPDATE models SET model_id = m.old_id FROM _reread_moves m WHERE models.model_id = m.new_id;
        INSERT INTO models BY NAME SELECT * FROM _reread_m o WHERE o.model_id NOT IN (SELECT old_id FROM _reread_moves)
            AND o.model_id IN (SELECT model_id FROM results UNION SELECT model_id FROM model_metadata);
        DROP TABLE _reread_moves;"""
