"""Item ids of item-response tables: the number each item is stored under, the same in every file of a task.

The store's ``doc_id`` is an integer (the document number lm-eval's ``--samples`` gets); a table's item ids
are text or numbers. Reading one file (:func:`file_item_ids`), a task's ids keep their own numbers when that
keeps them apart: whole numbers, or one prefix and distinct numbers (``id1``, ``id2``); any other task's ids
are numbered 0, 1, ... in order of first appearance, with a note, so distinct ids are never merged.

Storing it (:func:`assign_numbers`), each id is looked up in the store's id map, ``item_ids(benchmark, task,
item, doc_id)``, one row per item of each (benchmark, task): an id already there gets its number, whatever
the file alone would give it, so one question is one item in every file of the task (one file per model,
each listing the items in its own order, is a common layout). The ids new to the map keep the numbers the
file gives them when the task's ids keep their own numbers and none of them is taken by another id; else
they are numbered after the largest number in the map, in the file's order. A whole number is kept as its
decimal text (``17``, ``17.0`` and ``017`` are the item 17 in every file), except where the reader keeps its ids
exactly (Inspect AI logs, whose ``--sample-id`` matches an id's own text): there each id is its text, and the map's
``logged`` column keeps it as the log gave it (JSON: ``17``, ``"17.0"``), refusing a file whose id is another value
with the same text, or one Inspect would not tell from it (:func:`inspect_match`). The map is written in the file's
transaction, so a file refused leaves it as it was. A store's numbers of text ids thus follow the order the files were
ingested in; ``reduce --items`` lists such a task's items by id and numbers them 0, 1, ... in that order
(:func:`harness_ext.methods.reduction.item_manifest.listed_by_id`), so its manifest does not.

HELM runs' per-instance scores and Every Eval Ever instance files number their ids from the text alone (the
same in every file, :func:`harness_ext.store.samples.doc_id`) and are not in the map. Item tables stored by
a version without the map have no ids there: a later file of such a task is numbered as if it were the
first, with a note (its items cannot be matched to the stored ones by id).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from ..errors import IngestError
from ..report import plural
from .tables import table_columns

SCHEMA = """
CREATE TABLE IF NOT EXISTS item_ids (
    benchmark VARCHAR NOT NULL, task VARCHAR NOT NULL, item VARCHAR NOT NULL, doc_id BIGINT NOT NULL,
    PRIMARY KEY (benchmark, task, item), UNIQUE (benchmark, task, doc_id));
ALTER TABLE item_ids ADD COLUMN IF NOT EXISTS logged VARCHAR;
"""
#: A text id the store may keep as its number: a prefix of letters, ``_`` or ``-``, then up to 18 digits.
_NUMBERED = r"^([A-Za-z_-]*)(\d{1,18})$"
#: Above this many (task, id) pairs the distinct pairs of a table are found by sorting, not by a bitmap.
_BITMAP_PAIRS = 50_000_000


def file_item_ids(values, task: pd.Series, path: Path, notes: list, exact: bool = False) -> tuple:
    """``(doc ids, ids)``: each row's item number as read from this file alone, and its distinct ids.

    An id's number is the id itself for a whole number and the digits of ``<prefix><digits>`` (``id147``) else.
    A task keeps them when its ids all have one and the same prefix and no two share a number: ``dev-0`` and
    ``test-0``, or ``id01`` and ``id1``, would be one item, and the file's scores of one would overwrite the
    other's. Any other task's ids are numbered 0, 1, ... in order of first appearance (a note counts them):
    the numbers lm-eval's ``--samples`` gets, so they never carry a hash or a path's digits.

    Parameters
    ----------
    values : array-like
        The item column, one per row.
    task : pandas.Series
        Each row's task, categorical (ids are kept apart within a task).
    path : pathlib.Path
        The file, for the error.
    notes : list
        Extended with one note when a task's ids are numbered by position.
    exact : bool
        Keep each id as its text in the map (``17.0`` stays ``17.0``), not a whole number as its decimal text: for
        ids a harness matches by their text (Inspect's ``--sample-id``). Their numbers are as without it.

    Returns
    -------
    tuple
        ``doc ids`` (int64, one per row) and ``ids``, one row per distinct (task, id): ``task``, ``item`` (the id as
        the map keeps it), ``doc_id`` (its number here) and ``own`` (whether the task's ids kept their own numbers).

    Raises
    ------
    IngestError
        For a row without an item id.
    """
    s = pd.Series(values)
    if s.dtype.kind in "iu":  # whole numbers (the shared tables' int32): kept, as distinct as they are
        return _whole_numbers(s.to_numpy(dtype=np.int64), task)
    else:
        if isinstance(s.dtype, pd.CategoricalDtype):  # each distinct id once, then by code
            codes, uniques = s.cat.codes.to_numpy(), s.cat.categories.to_numpy()
        else:
            codes, uniques = pd.factorize(s, use_na_sentinel=True)
        texts = pd.Index(uniques).astype(str)
        blank = np.append(np.asarray(texts.str.strip() == "", dtype=bool), True)  # code -1 (missing) reads the last
        empty = blank[codes]
        if empty.any():
            raise IngestError(path, f"{int(empty.sum())} rows with a score have no item id")
        ok, prefix, number, key = _id_numbers(uniques, texts, exact)
    used = np.bincount(codes, minlength=len(number)) > 0
    if _lossless(ok[used], prefix[used], number[used]):  # for the whole table, so for each of its tasks
        pair_task, pair_id = _distinct_pairs(codes, task, len(number))
        ids = pd.DataFrame({"task": task.cat.categories[pair_task].astype(str), "item": key[pair_id],
                            "doc_id": number[pair_id], "own": True})
        return number[codes], ids
    return _positions(codes, task, (ok, prefix, number, key, np.asarray(texts, dtype=object)), notes)


def _whole_numbers(number: np.ndarray, task: pd.Series) -> tuple:
    """:func:`file_item_ids` of an integer column: the numbers themselves, and the distinct (task, number) pairs,
    found by offset from the smallest number where the range is small (no hash of every row), else by code."""
    lo = int(number.min()) if len(number) else 0
    span = int(number.max()) - lo + 1 if len(number) else 1
    if span * max(len(task.cat.categories), 1) <= _BITMAP_PAIRS:
        pair_task, pair_id = _distinct_pairs(number - lo, task, span)
        distinct = pair_id + lo
    else:
        codes, uniques = pd.factorize(number)
        pair_task, pair_id = _distinct_pairs(codes, task, len(uniques))
        distinct = np.asarray(uniques, dtype=np.int64)[pair_id]
    ids = pd.DataFrame({"task": task.cat.categories[pair_task].astype(str), "item": distinct.astype(str).astype(object),
                        "doc_id": distinct, "own": True})
    return number, ids


def _distinct_pairs(codes: np.ndarray, task: pd.Series, n_ids: int) -> tuple:
    """``(task codes, id codes)`` of the distinct (task, id) pairs of a table, sorted by task then id."""
    n_ids = max(n_ids, 1)
    n_pairs = max(len(task.cat.categories), 1) * n_ids
    key = codes
    if len(task.cat.categories) > 1:  # one task (the usual table): the ids' codes are the pairs' already
        key = task.cat.codes.to_numpy().astype(np.int64) * n_ids + codes
    if n_pairs <= _BITMAP_PAIRS:  # one pass, no sort of the table's rows
        seen = np.zeros(n_pairs, dtype=bool)
        seen[key] = True
        pairs = np.flatnonzero(seen)
    else:
        pairs = np.unique(key)
    return pairs // n_ids, pairs % n_ids


def _id_numbers(uniques, texts: pd.Index, exact: bool = False) -> tuple:
    """``(parsed, prefix, number, key)`` per distinct id: whole numbers with prefix ``""``, else ``<prefix><digits>``;
    ``key`` is the id as the map keeps it (a whole number as its decimal text unless ``exact``, any other id as it is)."""
    num = pd.to_numeric(pd.Series(uniques, dtype=object), errors="coerce").to_numpy(dtype=float)
    whole = np.isfinite(num) & (num == np.floor(num)) & (np.abs(num) < 2.0 ** 63)
    parts = pd.Series(texts).str.extract(_NUMBERED)
    named = parts[1].notna().to_numpy() & ~whole
    prefix = np.where(named, parts[0].fillna("").to_numpy(dtype=object), "")
    number = np.zeros(len(texts), dtype=np.int64)
    number[whole] = num[whole].astype(np.int64)
    number[named] = parts[1][named].astype(np.int64).to_numpy()
    key = np.asarray(texts, dtype=object).copy()
    if not exact:
        key[whole] = number[whole].astype(str)
    return whole | named, prefix, number, key


def _lossless(ok: np.ndarray, prefix: np.ndarray, number: np.ndarray) -> bool:
    """Whether these distinct ids keep apart as numbers: each has one, all one prefix, no number twice."""
    return bool(ok.all()) and len(set(prefix.tolist())) <= 1 and len(np.unique(number)) == len(number)


def _positions(codes: np.ndarray, task: pd.Series, parsed: tuple, notes: list) -> tuple:
    """Per task, the ids' numbers where they keep apart (:func:`_lossless`), else positions by first appearance;
    returned as :func:`file_item_ids` returns them. ``parsed``: ``(parsed, prefix, number, key, text)`` per id."""
    ok, prefix, number, key, texts = parsed
    n_ids = max(len(number), 1)
    row_key = task.cat.codes.to_numpy().astype(np.int64) * n_ids + codes
    pairs, first, inverse = np.unique(row_key, return_index=True, return_inverse=True)
    pair_task, pair_id = pairs // n_ids, pairs % n_ids
    out = np.empty(len(pairs), dtype=np.int64)
    own = np.ones(len(pairs), dtype=bool)
    renumbered, why = [], ""
    starts = np.flatnonzero(np.diff(pair_task, prepend=-1))  # the pairs are sorted by task: one slice each
    for lo, hi in zip(starts, np.append(starts[1:], len(pairs))):
        t, at = pair_task[lo], np.arange(lo, hi)
        ids = pair_id[at]
        if _lossless(ok[ids], prefix[ids], number[ids]):
            out[at] = number[ids]
            continue
        out[at[np.argsort(first[at], kind="stable")]] = np.arange(len(at))
        own[at] = False
        renumbered.append((str(task.cat.categories[t]), len(at)))
        why = why or _why_renumbered(ok[ids], prefix[ids], number[ids], texts[ids])
    # A renumbered task's ids are kept as written: "+5", "05" or "5.0" beside "5" are other ids, and their whole
    # number's text ("5") would put two of them under one key of the map.
    item = np.where(own, key[pair_id], texts[pair_id])
    ids = pd.DataFrame({"task": task.cat.categories[pair_task].astype(str), "item": item, "doc_id": out, "own": own})
    if renumbered:  # else apart within each task, though not across the table (task A's 01, task B's 1)
        n = sum(k for _, k in renumbered)
        notes.append(f"{n} item ids of {_which(renumbered)} numbered from 0 in order of first appearance (the document numbers "
                     f"lm-eval's --samples gets): {why}")
    return out[inverse.reshape(-1)], ids


def _why_renumbered(ok, prefix, number, texts) -> str:
    """Why a task's ids cannot keep their numbers, with an example."""
    from ..safe_output import short_name  # an id is any text: one of 200,000 characters made a note of that size

    if not ok.all():
        return f"{short_name(texts[int(np.flatnonzero(~ok)[0])])!r} is not a number or a prefix and a number"
    if len(set(prefix.tolist())) > 1:
        a, b = sorted(set(prefix.tolist()))[:2]
        return f"their prefixes differ ({short_name(a)!r}, {short_name(b)!r}), so their numbers alone would not tell them apart"
    _, inv = np.unique(number, return_inverse=True)
    j = int(np.flatnonzero(np.bincount(inv.reshape(-1)) > 1)[0])
    twins = texts[inv.reshape(-1) == j][:2]
    return f"{short_name(twins[0])!r} and {short_name(twins[1])!r} have the same number"


def ensure_map(con) -> None:
    """Create the id map in a store opened for writing (a store made before it gains it here)."""
    con.execute(SCHEMA)


def has_map(con) -> bool:
    """Whether the store has the id map (a store made before it, and not written since, has none)."""
    from .tables import has_table

    return has_table(con, "item_ids")


def assign_numbers(con, path, benchmark: str, frame: pd.DataFrame, ids: Optional[pd.DataFrame]) -> tuple:
    """``(frame, new ids, notes)``: a read table's rows with the numbers the store's id map gives its ids.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        The store's connection, with the id map (:func:`ensure_map`).
    path : path-like
        The file, for the error.
    benchmark : str
        The table's benchmark: ids are mapped per (benchmark, task).
    frame : pandas.DataFrame
        The rows as read (``task`` categorical, ``doc_id`` the file's own numbers); returned as it is when no
        number changes, else as a copy.
    ids : pandas.DataFrame or None
        The file's distinct ids, as :func:`file_item_ids` gives them; None for a reader without ids.

    Returns
    -------
    tuple
        The frame, the map rows to add in the file's transaction (``benchmark, task, item, doc_id``; None when
        there are none), and notes saying what was numbered otherwise than the file alone would number it.

    Raises
    ------
    IngestError
        When a task's new ids would be numbered beyond the store's 64-bit numbers.
    """
    if ids is None or ids.empty:
        return frame, None, []
    tasks = sorted(set(ids["task"]))
    known = con.execute("SELECT task, item, doc_id, logged FROM item_ids WHERE benchmark = ? AND list_contains(?, task)",
                        [benchmark, tasks]).df()
    exact = "logged" in ids.columns  # the reader keeps its ids as logged: one value per text, as Inspect matches them
    positional = set(ids.loc[~ids["own"].to_numpy(dtype=bool), "task"])
    legacy = [(t, n) for t, n, like in _unmapped_tasks(con, benchmark, sorted(set(tasks) - set(known["task"])))
              if like or t in positional]  # stored by position, or read so here: the numbers may not agree
    final, new, said = [], [], {"kept": [], "after": [], "taken": []}
    for task, mine in ids.groupby("task", sort=True):
        have = known[known["task"] == task]
        if exact:
            _check_logged(path, task, mine, have)
        at = pd.Index(have["item"]).get_indexer(mine["item"])
        fresh = at < 0
        number = np.zeros(len(at), dtype=np.int64)  # integers, not floats: ids up to 2**63 stay exact
        number[~fresh] = have["doc_id"].to_numpy(dtype=np.int64)[at[~fresh]]
        moved = int((number[~fresh] != mine["doc_id"].to_numpy()[~fresh]).sum())
        if moved:
            said["kept"].append((task, moved, int((~fresh).sum())))
        if fresh.any():
            own = mine["doc_id"].to_numpy()[fresh]
            kept = bool(mine["own"].iloc[0])
            taken = kept and bool(np.isin(own, have["doc_id"].to_numpy()).any())
            if not kept or taken:
                start = int(have["doc_id"].max()) + 1 if len(have) else 0
                if start + len(own) > 2 ** 63:
                    raise IngestError(path, f"task {task!r}: no numbers left after item {start - 1} for its "
                                            f"{len(own)} new item ids")
                order = np.argsort(own, kind="stable")  # the file's order: first appearance, or the ids' numbers
                own = np.empty(len(order), dtype=np.int64)
                own[order] = start + np.arange(len(order))
                if len(have):
                    key = "taken" if taken else "after"
                    said[key].append((task, int(fresh.sum()), start, len(have)))
            number[fresh] = own
            new.append(pd.DataFrame({"benchmark": benchmark, "task": task, "item": mine["item"].to_numpy()[fresh],
                                     "doc_id": own.astype(np.int64),
                                     **({"logged": mine["logged"].to_numpy()[fresh]} if exact else {})}))
        final.append(number)
    ids = ids.sort_values("task", kind="stable")
    notes = _map_notes(benchmark, said) + ([_legacy_note(benchmark, legacy)] if legacy else [])
    frame = _renumber(frame, ids, np.concatenate(final))
    return frame, (pd.concat(new, ignore_index=True) if new else None), notes


def inspect_match(value) -> str:
    """An Inspect sample id as ``inspect eval --sample-id`` compares it (Inspect's ``slice_dataset``, in
    ``inspect_ai/_eval/task/util.py``: text of digits is read as a whole number, a whole number is its decimal text
    padded to 20 characters, other text is itself, each id then matched as a glob pattern). Two ids with one match
    text (``"007"``, ``"7"`` and ``7``) are one id to Inspect: each listed id runs both samples."""
    if isinstance(value, str) and value.isdigit():
        try:
            value = int(value)
        except ValueError:  # a digit int() does not read (a superscript): Inspect keeps it as text too
            pass
    return value if isinstance(value, str) else str(value).zfill(20)


def _check_logged(path, task: str, mine: pd.DataFrame, have: pd.DataFrame) -> None:
    """Refuse a file's ids (``mine``: item, logged) that earlier logs of the task gave as another value with the same
    text (``17`` and ``"17"``), or with another text Inspect reads as the same id (``"007"`` and ``7``): listed in
    ``inspect_sample_ids.json`` as one item they would be one sample for one model and another for the next."""
    stored = have[have["logged"].notna()]  # rows from before the map kept logged ids have no value to compare
    _check_legacy(path, task, mine, have)
    if stored.empty:
        return
    by_text = dict(zip(stored["item"], stored["logged"]))
    by_match = {inspect_match(json.loads(v)): v for v in stored["logged"]}
    for item, logged in zip(mine["item"], mine["logged"]):
        other = by_text.get(item) or by_match.get(inspect_match(json.loads(logged)))
        if other is not None and other != logged:
            raise IngestError(path, f"task {task!r}: sample id {logged[:40]} and {other[:40]}, an id earlier logs of "
                                    "the task gave, are two values that inspect eval --sample-id cannot tell apart "
                                    "(it matches an id by its text, and reads text of digits as a whole number): "
                                    "not merged; ingest logs whose ids agree, or each set into its own store")


def _check_legacy(path, task: str, mine: pd.DataFrame, have: pd.DataFrame) -> None:
    """Refuse a file's id that the task's rows stored before the map kept ids as logged may hold under its whole
    number's text (``"007"``, stored then as ``7``): matched by text it would be another item, by number a guess."""
    legacy = set(have.loc[have["logged"].isna(), "item"])
    if not legacy:
        return
    values = [json.loads(v) for v in mine["logged"]]
    was = _id_numbers(np.array(values, dtype=object), pd.Index([str(v) for v in values]))[3]
    known = set(have["item"])
    for item, old in zip(mine["item"], was):
        if item not in known and old != item and old in legacy:
            raise IngestError(path, f"task {task!r}: sample id {item[:40]!r} may be the item {old!r} a version that "
                                    "kept a whole number's text as the number stored: not guessed; ingest the task's "
                                    "logs into a new store")


def logged_ids(store, benchmark: str, task: str) -> dict:
    """``{doc_id: id as logged}`` of a task whose reader keeps its ids exactly (the JSON value, ``17`` or
    ``"17.0"``; None for an id stored before the map kept it); ``{}`` for a store without the map."""
    if not has_map(store.con):
        return {}
    cols = table_columns(store.con, "item_ids")
    logged = "logged" if "logged" in cols else "NULL"  # a map made before the column (not written since)
    rows = store.con.execute(f"SELECT doc_id, {logged} FROM item_ids WHERE benchmark = ? AND task = ?",
                             [benchmark, task]).fetchall()
    return {int(d): None if v is None else json.loads(v) for d, v in rows}


def _renumber(frame: pd.DataFrame, ids: pd.DataFrame, final: np.ndarray) -> pd.DataFrame:
    """``frame`` with each (task, file number) of ``ids`` numbered ``final`` (``frame`` itself if none changes)."""
    if (final == ids["doc_id"].to_numpy()).all():
        return frame
    cats = frame["task"].cat.categories
    index = pd.MultiIndex.from_arrays([pd.Categorical(ids["task"], categories=cats).codes, ids["doc_id"].to_numpy()])
    at = index.get_indexer(pd.MultiIndex.from_arrays([frame["task"].cat.codes.to_numpy(), frame["doc_id"].to_numpy()]))
    out = frame.copy(deep=False)
    out["doc_id"] = final[at]
    return out


def _unmapped_tasks(con, benchmark: str, tasks: list) -> list:
    """``(task, items, numbered like positions)`` of these tasks with item-table rows stored before the map kept
    their ids; ``numbered like positions``: their numbers are 0 to items - 1, as ids numbered by position are."""
    if not tasks:
        return []
    rows = con.execute(
        """SELECT src.task, count(DISTINCT s.doc_id), min(s.doc_id) = 0 AND max(s.doc_id) = count(DISTINCT s.doc_id) - 1
           FROM sample_sources src JOIN samples s USING (source_id)
           WHERE src.benchmark = ? AND list_contains(?, src.task)
             AND regexp_matches(lower(src.path), '\\.(csv|tsv|parquet)$') GROUP BY src.task ORDER BY src.task""",
        [benchmark, tasks]).fetchall()
    return [(str(t), int(n), bool(like)) for t, n, like in rows]


def _which(tasks: list) -> str:
    """``task 'a'``, or ``3 tasks (a, b, c)``: the tasks of ``(task, ...)`` tuples, for a note."""
    names = [t for t, *_ in tasks]
    return f"task {names[0]!r}" if len(names) == 1 else (
        f"{len(names)} tasks (" + ", ".join(names[:3]) + (", ..." if len(names) > 3 else "") + ")")


def _map_notes(benchmark: str, said: dict) -> list:
    """The notes of :func:`assign_numbers`, one per kind, with counts."""
    out = []
    if said["kept"]:
        n, m = sum(k[1] for k in said["kept"]), sum(k[2] for k in said["kept"])
        out.append(f"{n} of {m} item ids of {_which(said['kept'])} that earlier files of {benchmark!r} already "
                   "numbered keep those numbers, not the ones this file alone would give them (its order differs)")
    if said["after"]:
        n = sum(k[1] for k in said["after"])
        t, k, start, had = said["after"][0]
        out.append(f"{n} item ids of {_which(said['after'])} new to {benchmark!r} numbered after the ids earlier files "
                   f"numbered" + (f" ({start} to {start + k - 1}, after {had})" if len(said["after"]) == 1 else ""))
    if said["taken"]:
        n = sum(k[1] for k in said["taken"])
        out.append(f"{n} item ids of {_which(said['taken'])} new to {benchmark!r} numbered after the ids earlier "
                   "files numbered, not by their own numbers: other ids of the task already have some of them")
    return out


def _legacy_note(benchmark: str, tasks: list) -> str:
    n = sum(k for _, k in tasks)
    return (f"{_which(tasks)} of {benchmark!r} already hold{'s' if len(tasks) == 1 else ''} {n} items stored by a "
            "version that did not keep item ids: this file's items are numbered as if it were the task's first file "
            "and cannot be matched to those by id (to match them, ingest all of the task's files into a new store)")


def item_id_map(store, benchmark: Optional[str] = None, task: Optional[str] = None) -> pd.DataFrame:
    """The stored item ids and their numbers: ``benchmark, task, item, doc_id``, by benchmark, task and number.

    ``doc_id`` is the number the item's scores are stored under (the document number ``reduce --items`` writes
    to lm-eval's ``--samples``); empty for a store without the map (made before it, and not ingested into since).
    """
    if not has_map(store.con):
        return pd.DataFrame(columns=["benchmark", "task", "item", "doc_id"])
    where = " AND ".join(c for c, v in (("benchmark = $b", benchmark), ("task = $t", task)) if v is not None)
    args = {k: v for k, v in (("b", benchmark), ("t", task)) if v is not None}
    return store.con.execute("SELECT benchmark, task, item, doc_id FROM item_ids" + (f" WHERE {where}" if where else "")
                             + " ORDER BY benchmark, task, doc_id", args).df()


def id_map_notes(store) -> list:
    """What ``info`` says of item ids: tasks whose ids the store numbered, and tasks stored before the map."""
    con = store.con
    out = []
    if has_map(con):
        tasks, n = con.execute(f"SELECT count(DISTINCT (benchmark, task)), count(*) FROM item_ids "
                               f"WHERE {_NUMBERED_BY_STORE}").fetchall()[0]
        if n:
            out.append(f"{n} item ids of {plural(tasks, 'task')} are not numbers that keep them apart: the store numbered them "
                       "in order of first listing, the same in every file of the task (item_id_map lists each id's "
                       "number)")
    cols = table_columns(con, "sample_sources")
    if "benchmark" not in cols:  # no item table stored, or none since the column came (its notes say so there)
        return out
    unmapped = " AND NOT EXISTS (SELECT 1 FROM item_ids m WHERE m.benchmark = src.benchmark AND m.task = src.task)"
    # Files of one task numbered apart can disagree only where there are two files, and numbered by position.
    legacy = con.execute(
        f"""WITH two AS (SELECT src.benchmark, src.task FROM sample_sources src
                         WHERE regexp_matches(lower(src.path), '\\.(csv|tsv|parquet)$')
                         {unmapped if has_map(con) else ""} GROUP BY ALL HAVING count(DISTINCT src.path) > 1)
            SELECT src.benchmark, src.task FROM sample_sources src JOIN two USING (benchmark, task)
            JOIN samples s USING (source_id) GROUP BY ALL
            HAVING min(s.doc_id) = 0 AND max(s.doc_id) = count(DISTINCT s.doc_id) - 1 ORDER BY ALL""").fetchall()
    if legacy:
        names = ", ".join(f"{b}/{t}" for b, t in legacy[:3]) + (", ..." if len(legacy) > 3 else "")
        out.append(f"{plural(len(legacy), 'task')} of item tables ({names}) were stored from several files by a version that "
                   "did not keep item ids: if their ids were text numbered by position, each file was numbered in its "
                   "own order and one number may be different items; ingest their files into a new store to number "
                   "them alike")
    return out


#: SQL: whether a map row's number is not its id's own (the store numbered the id: text, or numbers not kept apart).
_NUMBERED_BY_STORE = (r"TRY_CAST(regexp_extract(item, '^[A-Za-z_-]*(\d{1,18})$', 1) AS BIGINT) IS DISTINCT FROM doc_id")


def _read_otherwise() -> str:
    """SQL: whether a log naming the item by its id gives it another number than the map's
    (:func:`~harness_ext.store.sample_logs.doc_id` reads only a numbering prefix's digits as the number: ``id5`` is
    5, but ``w-05``, whose digits the map keeps as 5 when every id of the task has that prefix, is a hash of its
    text)."""
    from .sample_logs import NUMBERING_PREFIXES

    prefixes = ", ".join(f"'{p}'" for p in sorted(NUMBERING_PREFIXES))
    return (rf"(lower(regexp_extract(item, '^([A-Za-z_-]*)\d{{1,18}}$', 1)) NOT IN ({prefixes}) "
            rf"OR NOT regexp_matches(item, '^[A-Za-z_-]*\d{{1,18}}$') OR {_NUMBERED_BY_STORE})")


def numbered_ids(store, benchmark: str, task: str) -> Optional[dict]:
    """``{doc_id: item id}`` of a task whose ids the store numbered (some id's number is not its own) or that a log
    naming its items by id numbers otherwise (``w-05``: see :func:`_read_otherwise`), else None.

    ``reduce --items`` writes these ids to the manifest, so ``predict`` can read a new model's logs that name the
    items by id (Every Eval Ever instance files, HELM runs, Inspect logs) as the manifest's numbers.
    """
    if not has_map(store.con):
        return None
    rows = store.con.execute(
        f"""SELECT doc_id, item FROM item_ids WHERE benchmark = ? AND task = ? AND EXISTS (
                SELECT 1 FROM item_ids WHERE benchmark = ? AND task = ? AND {_read_otherwise()})""",
        [benchmark, task, benchmark, task]).fetchall()
    return {int(d): str(i) for d, i in rows} or None
