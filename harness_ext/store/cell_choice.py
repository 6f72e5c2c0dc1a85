"""Which of a cell's values is used when source files disagree.

The one rule, everywhere a conflicting cell is decided (the matrix, ``info --conflicts``, ``predict``'s reading of a
new model's files): when every value of the cell says on how many documents it was measured (``n_samples``) and
those counts differ, the cell takes the value measured on the most documents (among several with that count, the
first ingested); otherwise it takes the first-ingested value. A quick ``lm_eval --limit 50`` run and the whole run
of one model and task then give the whole run's score in whichever order they were ingested. A value a file lists
twice counts as its first listing (the second is kept apart, in ``result_repeats``): a later listing is never used,
even on more documents, and the file's value does not depend on the order files are ingested in. Such cells are
listed (``listing`` ``later``) and counted (:func:`listed_twice`).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .rounding import EXACT_DECIMALS, agree_sql, agreed_rows, decimals_sql
from .tables import CONFLICT_TOLERANCE, UNKNOWN_SHOTS, has_table

#: The rule in the words messages use.
RULE_TEXT = ("each takes the value measured on the most documents where every value's document count is known and "
             "they differ, else the value ingested first; a file listing a cell twice counts by its first listing; "
             "values that agree to the decimals the less precise gives are not a conflict: the more precise is used")

# Per cell (grouped by model_id, dataset_id, num_fewshot): whether the document counts decide it, the first-ingested
# source and the source used. Sources are numbered in the order they were ingested.
_BY_DOCUMENTS = "(count(*) > 1 AND count(n_samples) = count(*) AND min(n_samples) < max(n_samples))"
# The most documents, then the earliest source, as one number (sources are numbered below 2**32): arg_max on it costs
# a third less than an ordered first().
_MOST = "n_samples::HUGEINT * 4294967296 - source_id"
_DECIDE = (f"{_BY_DOCUMENTS} AS by_documents, min(source_id) AS first_source, "
           f"CASE WHEN {_BY_DOCUMENTS} THEN arg_max(source_id, {_MOST}) ELSE min(source_id) END AS used_source")

#: ``Store.conflicts``'s columns, in order.
CONFLICT_COLUMNS = ["model", "benchmark", "dataset", "metric", "num_fewshot", "value", "n_samples", "source", "listing",
                    "used"]
#: The ``used`` column's words: the value used, and why (the cell's values all from one file: its first listing).
USED_BY_DOCUMENTS, USED_FIRST, USED_FIRST_LISTING = "most documents", "first ingested", "first in its file"
#: The ``listing`` column's words: the file's first listing of the cell (its value), or a later one (never used).
FIRST_LISTING, LATER_LISTING = "first", "later"


def conflicts(con):
    """Cells with more than one distinct value across source files, one row per value, with the value used.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        A store's connection.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`CONFLICT_COLUMNS`. ``used`` is ``"most documents"``, ``"first ingested"`` or, for a cell
        whose values all come from one file, ``"first in its file"`` on the row of the value the cell takes (and
        why), empty on the others. ``listing`` is ``"later"`` on a value its file lists again for the cell (never
        used), else ``"first"``. Rows are in a total order (model, benchmark, dataset, metric, shots, source, the
        file's listing order, value), so the same store always lists them the same way. Cells whose values
        agree to the decimals the less precise gives (:mod:`harness_ext.store.rounding`) are not listed.
    """
    # Values a file repeats with a different value (result_repeats) count like values from other files.
    has_repeats = has_table(con, "result_repeats")
    cols = "model_id, dataset_id, num_fewshot, value, n_samples, source_id"
    # rep: 0 for a file's first listing, then 1, 2, ... in the order the file lists the cell again (insertion order).
    every = (f"(SELECT {cols}, 0 AS rep FROM results UNION ALL SELECT {cols}, row_number() OVER (PARTITION BY "
             f"model_id, dataset_id, num_fewshot, source_id ORDER BY rowid) FROM result_repeats)" if has_repeats
             else f"(SELECT {cols}, 0 AS rep FROM results)")
    return con.execute(
        f"""WITH k AS (
               SELECT model_id, dataset_id, num_fewshot FROM {every} GROUP BY ALL
               HAVING max(value) - min(value) > {CONFLICT_TOLERANCE}),
           c0 AS MATERIALIZED (SELECT *, {decimals_sql()} AS dec
                               FROM {every} JOIN k USING (model_id, dataset_id, num_fewshot)),
           -- Values that agree to the decimals the less precise gives (rounding.py) are no conflict.
           a AS (SELECT model_id, dataset_id, num_fewshot FROM c0 GROUP BY ALL HAVING {agree_sql()}),
           c AS MATERIALIZED (SELECT * EXCLUDE (dec) FROM c0 ANTI JOIN a USING (model_id, dataset_id, num_fewshot)),
           u AS (SELECT model_id, dataset_id, num_fewshot, {_DECIDE}, count(*) = 1 AS one_file
                 FROM c WHERE rep = 0 GROUP BY ALL)
           SELECT m.name AS model, d.benchmark, d.name AS dataset, d.metric,
                  nullif(r.num_fewshot, {UNKNOWN_SHOTS}) AS num_fewshot, r.value, r.n_samples, s.path AS source,
                  CASE WHEN r.rep = 0 THEN '{FIRST_LISTING}' ELSE '{LATER_LISTING}' END AS listing,
                  CASE WHEN r.rep = 0 AND r.source_id = u.used_source
                       THEN (CASE WHEN u.by_documents THEN '{USED_BY_DOCUMENTS}' WHEN u.one_file
                                  THEN '{USED_FIRST_LISTING}' ELSE '{USED_FIRST}' END)
                       ELSE '' END AS used
           FROM c r JOIN u USING (model_id, dataset_id, num_fewshot)
           JOIN models m USING (model_id) JOIN datasets d USING (dataset_id) JOIN sources s USING (source_id)
           ORDER BY model, d.benchmark, dataset, d.metric, r.num_fewshot, r.source_id, r.rep, r.value"""
    ).df()


def conflict_counts(frame) -> tuple:
    """``(cells, by_documents)``: how many cells a :func:`conflicts` frame lists, and how many of them the document
    counts decided."""
    if frame is None or frame.empty:
        return 0, 0
    used = frame["used"]
    return int((used != "").sum()), int((used == USED_BY_DOCUMENTS).sum())


def listed_twice(frame) -> tuple:
    """``(cells, one_file, more_documents)`` of a :func:`conflicts` frame: the cells a file lists again with another
    value (its first listing is its value), how many of all the cells have their values from one file alone, and how
    many a later listing measured on more documents than the value the cell takes (the document counts never choose a
    later listing)."""
    if frame is None or frame.empty or "listing" not in frame:
        return 0, 0, 0
    one_file = int((frame["used"] == USED_FIRST_LISTING).sum())
    keys = ["model", "benchmark", "dataset", "metric", "num_fewshot"]
    f = frame.assign(num_fewshot=frame["num_fewshot"].astype("Float64").fillna(-1),
                     n_samples=frame["n_samples"].astype("Float64"))
    later = f[f["listing"] == LATER_LISTING].groupby(keys)["n_samples"].max()
    if later.empty:
        return 0, one_file, 0
    used = f[f["used"] != ""].set_index(keys)["n_samples"]
    more = (later > used.reindex(later.index)).fillna(False)
    return int(len(later)), one_file, int(more.sum())


def decided_cells(con, where: str, params: list) -> Optional[dict]:
    """The cells of the selected results (``results r WHERE where``) whose rule chooses another value than the
    first-ingested: those the document counts decide, and those whose values agree to the decimals the less precise
    gives (:mod:`harness_ext.store.rounding`) with the more precise ingested later. ``{"model_id", "dataset_id",
    "num_fewshot", "first_source", "value"}`` as arrays (``value`` the one used), or None when there is none.

    A matrix keeps each cell's first-ingested value while it reads the results; it then puts these values in place of
    those of the cells that kept them (:func:`harness_ext.store.pivot._ranked_scatter`), so the scan pays nothing
    and every other ranking (two datasets in one column, shot settings, merged model names) stays as it was.
    """
    # Only models with results from two sources can have a cell two sources give: grouping by model first keeps the
    # grouping by cell to them (a twentieth of a store where one model in twenty was run twice).
    multi = (f"model_id IN (SELECT model_id FROM results r WHERE {where} GROUP BY model_id "
             "HAVING min(source_id) < max(source_id))")
    parts = [p for p in (_decided_by_documents(con, where, params, multi),
                         _decided_by_decimals(con, where, params, multi)) if p is not None]
    if not parts:
        return None
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def _decided_by_documents(con, where: str, params: list, multi: str) -> Optional[dict]:
    """:func:`decided_cells`' cells the document counts decide."""
    # Only results with a document count can be decided by it: the grouping is skipped for stores without any.
    # fetchall, not fetchone: a result left unfinished refuses the connection's next statement.
    if not con.execute(f"SELECT EXISTS (SELECT 1 FROM results r WHERE {where} AND r.n_samples IS NOT NULL)",
                       params).fetchall()[0][0]:
        return None
    got = con.execute(
        f"""SELECT model_id, dataset_id, num_fewshot, first_source, value FROM (
                SELECT model_id, dataset_id, num_fewshot, {_DECIDE}, arg_max(value, {_MOST}) AS value
                FROM results r WHERE {where} AND {multi}
                GROUP BY ALL HAVING {_BY_DOCUMENTS})
            WHERE used_source <> first_source""", params * 2).fetchnumpy()
    if not len(got["value"]):
        return None
    return {k: np.asarray(v) for k, v in got.items()}


# The first-ingested exact value first: the source a cell of values agreeing to the rounding takes.
_PRECISE = f"(dec >= {EXACT_DECIMALS})::HUGEINT * 4294967296 - source_id"


def _decided_by_decimals(con, where: str, params: list, multi: str) -> Optional[dict]:
    """:func:`decided_cells`' cells whose values agree to the decimals the less precise gives, the more precise
    (exact) one ingested after a rounded one, and whose document counts do not decide them."""
    # The decimals are computed only on the cells whose values differ (a few in a large store).
    got = con.execute(
        f"""WITH s AS (SELECT model_id, dataset_id, num_fewshot, value, n_samples, source_id
                       FROM results r WHERE {where} AND {multi}),
                 k AS (SELECT model_id, dataset_id, num_fewshot FROM s GROUP BY ALL
                       HAVING max(value) - min(value) > {CONFLICT_TOLERANCE})
            SELECT model_id, dataset_id, num_fewshot, first_source, value FROM (
                SELECT model_id, dataset_id, num_fewshot, min(source_id) AS first_source,
                       arg_max(source_id, {_PRECISE}) AS used_source, arg_max(value, {_PRECISE}) AS value
                FROM (SELECT *, {decimals_sql()} AS dec FROM s JOIN k USING (model_id, dataset_id, num_fewshot))
                GROUP BY ALL HAVING {agree_sql()} AND NOT {_BY_DOCUMENTS})
            WHERE used_source <> first_source""", params * 2).fetchnumpy()
    if not len(got["value"]):
        return None
    return {k: np.asarray(v) for k, v in got.items()}


def used_first(frame, keys: list):
    """``frame`` (one row per stored value, in the order the values were ingested) with each cell's used value moved
    to the place of the cell's first row, and that row to the used one's: keeping each cell's first row then keeps
    the value the rule chooses.

    Parameters
    ----------
    frame : pandas.DataFrame
        Long results with the columns ``keys`` and ``n_samples`` (as :func:`harness_ext.store.matrix.query_results`
        gives them).
    keys : list of str
        The columns naming a cell.

    Returns
    -------
    pandas.DataFrame
        ``frame`` itself when no cell is decided by its document counts, else its rows reordered.
    """
    if len(frame) < 2 or "n_samples" not in frame:
        return frame
    n = frame["n_samples"].astype("Float64")
    g = n.groupby([frame[k].fillna(UNKNOWN_SHOTS) if k == "num_fewshot" else frame[k] for k in keys], sort=False)
    size, known = g.transform("size"), g.transform("count")
    decided = ((size > 1) & (known == size) & (g.transform("min") < g.transform("max"))).to_numpy(dtype=bool)
    # Cells whose values agree to the decimals the less precise gives: the first exact value (rounding.py), as
    # "most documents" ranks them below.
    docs = n.to_numpy(dtype=float, na_value=np.nan)
    if "value" in frame and (size > 1).any():
        exact = agreed_rows(frame["value"].to_numpy(dtype=float), g.ngroup().to_numpy(), ~decided)
        decided |= exact >= 0
        docs = np.where(exact >= 0, exact, docs)
    if not decided.any():
        return frame
    pos = np.flatnonzero(decided)
    group = g.ngroup().to_numpy()[pos]
    docs = docs[pos]
    # Each decided cell's first row (the lowest position) and its used row (most documents, then the earliest).
    first = pos[np.lexsort((pos, group))]
    used = pos[np.lexsort((pos, -docs, group))]
    starts = np.flatnonzero(np.r_[True, np.diff(np.sort(group)) != 0])
    first, used = first[starts], used[starts]
    perm = np.arange(len(frame))
    perm[first], perm[used] = used, first
    return frame.iloc[perm]
