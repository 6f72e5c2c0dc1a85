"""Named steps of :mod:`harness_ext.store.pivot`'s store-to-matrix read that touch no scan: the shot rule, the
row and column labels, the layout of the one-scan path and the per-column metadata.

The scans themselves (and what tests replace in them) stay in :mod:`harness_ext.store.pivot`; this module does
not import it.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from .tables import UNKNOWN_SHOTS

_DATASET_COLUMNS = ["benchmark", "dataset", "metric", "task", "higher_is_better", "random_baseline", "baseline_source",
                    "min_score", "max_score", "kind", "scale"]
_SHOTS_RULE = "per dataset, the shot setting most models were run at (ties: fewest shots)"


def _shot_choice(con, where: str, rwhere: list, rparams: list, extra: dict) -> tuple:
    """The shot rule of one row per model: each dataset at the shot setting most models ran (ties: fewest shots,
    unknown last). A plain count first: only datasets run at several shot settings need the models counted
    exactly. Appends the condition keeping the chosen settings to ``rwhere``/``rparams`` (in place), sets
    ``extra["shots"]`` and returns ``(sel, pair_samples)``: the selected ``(dataset_id, shots)`` pairs and
    the median sample count per pair (a column's cost when it is one pair)."""
    per = con.execute(f"""SELECT dataset_id, num_fewshot, count(*) AS n, median(n_samples) AS s FROM results r
                          WHERE {where} GROUP BY ALL""", rparams).fetchall()
    pair_samples = {(d, k): s for d, k, _, s in per}
    per = [(d, k, n) for d, k, n, _ in per]
    n_settings: dict = {}
    for d, _, _ in per:
        n_settings[d] = n_settings.get(d, 0) + 1
    mixed = sorted(d for d, n in n_settings.items() if n > 1)
    dropped, best = 0, {}
    if mixed:
        mwhere = f"{where} AND r.dataset_id IN (SELECT unnest(?::INTEGER[]))"
        mparams = rparams + [mixed]
        per = [p for p in per if n_settings[p[0]] == 1] + con.execute(
            f"""SELECT dataset_id, num_fewshot, count(DISTINCT model_id) AS n FROM results r
                WHERE {mwhere} GROUP BY ALL""", mparams).fetchall()
        for d, k, n in per:
            if n_settings[d] > 1:
                key = (-n, np.iinfo(np.int64).max if k == UNKNOWN_SHOTS else k)
                if d not in best or key < best[d][0]:
                    best[d] = (key, k)
        total = con.execute(f"SELECT count(*) FROM (SELECT DISTINCT model_id, dataset_id FROM results r "
                            f"WHERE {mwhere})", mparams).fetchall()[0][0]
        # Results of a mixed dataset at another shot setting are left out (every setting of the others is its only one).
        keep = ("(r.dataset_id::BIGINT * 4294967296 + (r.num_fewshot + 1)) IN (SELECT unnest(?::BIGINT[])) "
                "OR r.dataset_id NOT IN (SELECT unnest(?::INTEGER[]))")
        rwhere.append(f"({keep})")
        rparams.extend([[int(d) * 4294967296 + int(v[1]) + 1 for d, v in best.items()], mixed])
        kept = con.execute(f"SELECT count(*) FROM (SELECT DISTINCT model_id, dataset_id FROM results r "
                           f"WHERE {' AND '.join(rwhere)} AND r.dataset_id IN (SELECT unnest(?::INTEGER[])))",
                           rparams + [mixed]).fetchall()[0][0]
        dropped = int(total - kept)
    extra["shots"] = {"rule": _SHOTS_RULE, "dropped_cells": dropped, "mixed_dataset_ids": len(mixed)}
    return [(d, k) for d, k, _ in per if n_settings[d] == 1 or best[d][1] == k], pair_samples


def _row_keys(con, query, where: str, rparams: list, second: str, sel) -> tuple:
    """``(ds_ids, row_model, row_k, model_shots)``: the distinct datasets and row keys of the selection, in one
    scan (small: thousands, not millions). One row per model (``sel``: :func:`_shot_choice`'s pairs, which
    name the datasets and shot settings already; ``model_shots`` their shot settings) or per (model,
    ``second``) key (``model_shots`` None)."""
    if query.rows == "model":
        ds_ids = np.unique(np.array([d for d, _ in sel], dtype=np.int64))
        row_model = np.asarray(con.execute(f"SELECT DISTINCT r.model_id FROM results r WHERE {where} ORDER BY 1",
                                           rparams).fetchnumpy()["model_id"], dtype=np.int64)
        row_k = np.zeros(len(row_model), dtype=np.int64)  # one row per model whatever its shot settings
        return ds_ids, row_model, row_k, np.unique(np.array([k for _, k in sel], dtype=np.int64))
    ds_ids = con.execute(f"SELECT DISTINCT r.dataset_id FROM results r WHERE {where} ORDER BY 1", rparams).fetchnumpy()
    ds_ids = np.asarray(ds_ids["dataset_id"], dtype=np.int64)
    keys = con.execute(f"SELECT DISTINCT r.model_id, {second} AS k FROM results r WHERE {where} ORDER BY 1, 2",
                       rparams).fetchnumpy()
    return ds_ids, np.asarray(keys["model_id"], dtype=np.int64), np.asarray(keys["k"], dtype=np.int64), None


def _column_layout(con, ds_ids, ds_select: str) -> SimpleNamespace:
    """The columns of ``ds_ids``: dataset names, qualified by benchmark where a name is shared by two selected
    benchmarks (``label``: id -> column, ``columns`` sorted, ``code``: column -> position), each dataset's
    ``prio`` among values of one cell from one source (the old ORDER BY benchmark, name decides; metric
    breaks ties) and ``info``: its ``datasets`` row without the id."""
    ds = con.execute(f"SELECT {ds_select} FROM datasets WHERE dataset_id IN (SELECT unnest(?::INTEGER[]))",
                     [ds_ids.tolist()]).fetchall()
    label = _column_labels(ds)
    columns = sorted(set(label.values()))
    return SimpleNamespace(label=label, columns=columns, code={c: i for i, c in enumerate(columns)},
                           prio={row[0]: i for i, row in enumerate(sorted(ds, key=lambda r: (r[1], r[2], r[3], r[0])))},
                           info={row[0]: row[1:] for row in ds})


def _row_labels(con, query, row_model, row_k, aliased: bool, extra: dict) -> list:
    """Each row key's label: a model, a model at one shot count (when it has several), or a model's run (one
    source file). With ``aliased``, names of one model share its row (``extra["merged"]`` says which)."""
    model_ids = np.unique(row_model)
    # Every model's name in one Arrow fetch: a list of tens of thousands of ids as a query parameter is slower.
    tab = con.execute("SELECT model_id, name FROM models").fetchnumpy()
    lut = np.full(int(max(model_ids.max(), tab["model_id"].max())) + 1, -1, dtype=np.int64)
    lut[np.asarray(tab["model_id"], dtype=np.int64)] = np.arange(len(tab["model_id"]))
    all_names = np.asarray(tab["name"], dtype=object)
    names = dict(zip(model_ids.tolist(), all_names[lut[model_ids]].tolist()))
    if aliased:  # names of one model share its row (harness_ext.store.identity)
        canon = dict(con.execute("SELECT alias, canonical FROM model_aliases").fetchall())
        extra["merged"] = _merged(names.values(), canon)
        if canon:
            names = {mid: canon.get(n, n) for mid, n in names.items()}
    if query.rows == "run":
        paths = dict(con.execute("SELECT source_id, path FROM sources WHERE source_id IN (SELECT unnest(?::INTEGER[]))",
                                 [np.unique(row_k).tolist()]).fetchall())
        return [f"{names[m]} [{paths[k].rsplit('/', 1)[-1]}]" for m, k in zip(row_model.tolist(), row_k.tolist())]
    if query.rows == "model":
        return [names[m] for m in row_model.tolist()]
    ks: dict = {}  # shot settings per row name (names of one model count together)
    for m, k in zip(row_model.tolist(), row_k.tolist()):
        ks.setdefault(names[m], set()).add(k)
    return [names[m] + ("" if len(ks[names[m]]) == 1 else "" if k == UNKNOWN_SHOTS else f" [{k}-shot]")
            for m, k in zip(row_model.tolist(), row_k.tolist())]


def _column_samples(con, query, where: str, rparams: list, second: str, cols: SimpleNamespace, ds_tab: dict,
                    shots) -> np.ndarray:
    """What running each column's dataset costs, for cost budgets: its sample count (median over the results
    reporting one). Reads the registered ``_hx_cols``/``_hx_rows`` tables of the ranked scatter."""
    n_samples = np.full(len(cols.columns), np.nan)
    if query.rows == "model" and len(np.unique(ds_tab["c"])) == len(ds_tab["c"]):  # a column is one (dataset, shot) pair
        sel, pair_samples = shots
        for d, k in sel:
            if pair_samples[(d, k)] is not None:
                n_samples[cols.code[cols.label[d]]] = float(pair_samples[(d, k)])
        return n_samples
    rows_join = "" if query.rows == "model" else f"JOIN _hx_rows w ON r.model_id = w.model_id AND {second} = w.k"
    for c, v in con.execute(f"""SELECT c.c, median(r.n_samples) FROM results r JOIN _hx_cols c USING (dataset_id)
                                 {rows_join} WHERE {where} AND r.n_samples IS NOT NULL GROUP BY c.c""",
                            rparams).fetchall():
        n_samples[int(c)] = float(v)
    return n_samples


def _ranked_meta(X, P, first_p, shot_values, nd: int, cols: SimpleNamespace, n_samples) -> pd.DataFrame:
    """Per column of the ranked scatter: metadata of its first cell's dataset, and the most common shot count
    (ties: the smallest). ``P``: the rank of the value kept in each cell; ``first_p``: each column's first
    dataset's priority where the scatter needed no ranking (else None)."""
    ns = len(shot_values)
    observed = ~np.isnan(X)
    if first_p is None:
        first_p = (P.min(axis=0) // ns) % nd
    by_prio = {p: i for i, p in cols.prio.items()}
    meta = _meta_frame([cols.info[by_prio[int(p)]] for p in first_p], cols.columns)
    if ns == 1:
        counts = observed.sum(axis=0)[:, None]
    else:
        shot_of = np.where(observed, P % ns, -1)
        counts = np.stack([(shot_of == j).sum(axis=0) for j in range(ns)], axis=1)  # columns x shot values
    counts[:, shot_values == UNKNOWN_SHOTS] = 0
    shots = pd.Series(pd.NA, index=meta.index, dtype="Int64")
    has = counts.sum(axis=1) > 0
    shots[has] = shot_values[counts[has].argmax(axis=1)]
    meta["num_fewshot"] = shots
    meta["n_samples"] = pd.array(n_samples, dtype="Float64")
    return meta


def _one_setting_layout(tab, ds: list, aliased: bool) -> SimpleNamespace:
    """The one-scan path's layout: rows for every model label of ``tab`` (the models table as Arrow: ``uniq``
    labels, each model's row ``code``), columns for every dataset row of ``ds``, and the integer lookup
    tables a cell's flat position comes from (``lut_r[model_id] + lut_c[dataset_id]``)."""
    uniq, code = _sorted_labels(tab.column("label"))
    model_id = tab.column("model_id").to_numpy().astype(np.int64, copy=False)
    # Columns in label order from the start (datasets are numbered as they are first ingested, not by name),
    # so a matrix whose every column has a result needs no reordering copy, and its fingerprint can start
    # before the scan ends.
    label_of = _column_labels(ds)  # dataset id -> column label, for the layout's every dataset
    whole_order = len(set(label_of.values())) == len(ds)
    if whole_order:
        ds = sorted(ds, key=lambda row: label_of[row[0]])
    ds_ids = np.array([row[0] for row in ds], dtype=np.int64)
    n_rows, n_cols = len(uniq), len(ds)
    # A cell's flat position is lut_r[model_id] + lut_c[dataset_id]; when the dataset ids are one ascending
    # run of integers, lut_c is an offset folded into lut_r.
    lut_r = np.zeros(int(model_id.max()) + 1, dtype=np.int64)
    lut_r[model_id] = code * n_cols
    lut_c = None
    if (np.diff(ds_ids) == 1).all():
        lut_r -= ds_ids[0]
    else:
        lut_c = np.zeros(int(ds_ids.max()) + 1, dtype=np.int64)
        lut_c[ds_ids] = np.arange(n_cols)
    # Which models had results, for the merged-names report: only when aliases can merge names.
    seen = np.zeros(len(lut_r), dtype=bool) if aliased and np.asarray(tab["aliased"]).any() else None
    # Results stored model by model with every cell (a dense leaderboard ingested a model at a time) come as
    # runs of consecutive cells: a run is checked against the layout (the model id each row's cells carry,
    # the dataset id each column's carry) and copied, with no flat index computed or scattered.
    row_id = np.full(n_rows, -1, dtype=np.int64)
    one = np.bincount(code, minlength=n_rows)[code] == 1  # a row of one model id (no merged names)
    row_id[code[one]] = model_id[one]
    return SimpleNamespace(uniq=uniq, code=code, model_id=model_id, label_of=label_of, whole_order=whole_order,
                           ds=ds, ds_ids=ds_ids, n_rows=n_rows, n_cols=n_cols, lut_r=lut_r, lut_c=lut_c, seen=seen,
                           row_id=row_id)


def _cell_keys(lay: SimpleNamespace, key_max: int) -> tuple:
    """``(shift, K, keyed, ids, row_key)``: how the one-scan path's cells carry their ids. As one integer,
    model_id * K + dataset_id, where that fits in ``key_max``: half the id bytes to read and one comparison
    per result in a run (DuckDB computes it for less than it costs to hand over a second column). Otherwise
    the two id columns. K is a power of two, so a scattered batch splits its keys with a shift and a mask
    (an integer division cost more than the column saved). ``row_key``: each row's expected id part (-1 for
    a row of several ids: below every key)."""
    shift = int(lay.ds_ids.max()).bit_length()
    K = 1 << shift
    keyed = (min(int(lay.model_id.min()), int(lay.ds_ids.min())) >= 0
             and int(lay.model_id.max()) * K + K - 1 <= key_max)
    ids = f"r.model_id * {K} + r.dataset_id AS key" if keyed else "r.model_id, r.dataset_id"
    return shift, K, keyed, ids, (lay.row_id * K if keyed else lay.row_id)


def _missing_counts(X, full: bool, block_cells: int) -> tuple:
    """``(row_seen, col_count)``: rows with a result and results per column, a cache-sized block of
    ``block_cells`` at a time: a block without a missing cell (most of a dense matrix) costs one isnan and one
    any. ``full`` (runs wrote every cell once, no value NaN): none missing, no pass."""
    n_rows, n_cols = X.shape
    row_seen, col_missing = np.ones(n_rows, dtype=bool), np.zeros(n_cols, dtype=np.int64)
    step = max(1, block_cells // n_cols)
    missing = np.empty((min(step, n_rows), n_cols), dtype=bool)
    for s in range(0, 0 if full else n_rows, step):
        block = np.isnan(X[s:s + step], out=missing[:min(step, n_rows - s)])
        if block.any():
            row_seen[s:s + step] = ~block.all(axis=1)
            col_missing += np.count_nonzero(block, axis=0)
    return row_seen, n_rows - col_missing


def _one_setting_result(con, query, where: str, rparams: list, X, lay: SimpleNamespace, tab, extra: dict,
                        n_fetched: int, full: bool, aliased: bool, n_counted: bool, k_lo: int,
                        block_cells: int):
    """The one-scan path's ``(X, index, columns, meta)`` once the scan filled ``X``, rows and columns without a
    result dropped; or None when a cell came twice (or a stored value is NaN) or two datasets share a
    column: the general path ranks them."""
    row_seen, col_count = _missing_counts(X, full, block_cells)
    if int(col_count.sum()) != n_fetched:  # a cell came twice (or a stored value is NaN): ranked
        return None
    present = np.flatnonzero(col_count)
    col_label = _column_labels([lay.ds[j] for j in present])
    labels = [col_label[int(d)] for d in lay.ds_ids[present]]
    if len(set(labels)) < len(labels):  # two datasets share a column: ranked
        return None
    order = sorted(range(len(labels)), key=labels.__getitem__)
    cols, rows = present[order], np.flatnonzero(row_seen)
    n_rows, n_cols = X.shape
    if len(rows) < n_rows or len(cols) < n_cols or (cols != np.arange(n_cols)).any():
        X = X[np.ix_(rows, cols)]
        if extra.get("fingerprint") is not None:  # not the layout hashed
            extra.pop("fingerprint").cancel()
    index = _label_index(lay.uniq if len(rows) == n_rows else lay.uniq.take(rows))
    columns = [labels[i] for i in order]
    if aliased:  # the names results were stored under, where several meet in one row
        seen = lay.seen
        canon = dict(con.execute("SELECT alias, canonical FROM model_aliases").fetchall()) if seen is not None else {}
        names = tab.column("name").to_numpy()[seen[lay.model_id]] if seen is not None else []
        extra["merged"] = _merged(list(names), canon)
    if query.rows == "model":
        extra["shots"] = {"rule": _SHOTS_RULE, "dropped_cells": 0, "mixed_dataset_ids": 0}
    n_samples = np.full(len(columns), np.nan)
    if n_counted:  # what running a dataset costs: its median sample count
        median = dict(con.execute(f"""SELECT r.dataset_id, median(r.n_samples) FROM results r
                                      WHERE {where} AND r.n_samples IS NOT NULL GROUP BY 1""", rparams).fetchall())
        n_samples[:] = [float(median[d]) if median.get(d) is not None else np.nan for d in lay.ds_ids[cols].tolist()]
    meta = _meta_frame([lay.ds[j][1:] for j in cols], columns)
    meta["num_fewshot"] = pd.array([pd.NA if k_lo == UNKNOWN_SHOTS else int(k_lo)] * len(columns), dtype="Int64")
    meta["n_samples"] = pd.array(n_samples, dtype="Float64")
    return X, index, columns, meta


def _sorted_labels(label) -> tuple:
    """``(uniq, code)`` for a pyarrow string array: its distinct values in Python's order (a pyarrow array) and
    each value's position among them, as ``np.unique(..., return_inverse=True)`` gives, computed in Arrow.
    Values already in order (models stored in name order) are only checked; otherwise Arrow sorts them
    (stable; 6.5 ms for 50,000 shuffled names, where DuckDB's ORDER BY cost 6.5 ms more than the plain fetch and
    np.unique 22 ms)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    label = label.combine_chunks() if isinstance(label, pa.ChunkedArray) else label
    order = None
    # UTF-8's byte order, Arrow's for strings, is Python's code-point order.
    if len(label) > 1 and not pc.all(pc.less_equal(label[:-1], label[1:])).as_py():
        order = pc.sort_indices(label)
        label = label.take(order)
    first = np.ones(len(label), dtype=bool)
    if len(label) > 1:
        first[1:] = pc.not_equal(label[1:], label[:-1]).to_numpy(zero_copy_only=False)
    code = np.cumsum(first) - 1
    if order is not None:  # back to the values' own order
        code[order.to_numpy()] = code.copy()
    return label.filter(pa.array(first)), code


def _label_index(labels) -> pd.Index:
    """The ``model`` index over a pyarrow string array, in the dtype ``pd.Index`` of the same Python strings has
    (pandas 3's default ``str``: then wrapped, not converted a string at a time)."""
    want = pd.Index(["model"]).dtype
    try:
        index = pd.Index(pd.array(labels, dtype=want), name="model", copy=False)
    except (TypeError, ValueError):
        index = None
    if index is None or index.dtype != want:
        index = pd.Index(labels.to_pylist(), name="model")
    return index


def _column_labels(ds) -> dict:
    """``{dataset_id: column label}`` for rows ``(dataset_id, benchmark, name, ...)``: the dataset's name, qualified
    by its benchmark where two of these rows' benchmarks share the name."""
    n_bench: dict = {}
    for row in ds:
        n_bench.setdefault(row[2], set()).add(row[1])
    return {row[0]: (f"{row[1]}/{row[2]}" if len(n_bench[row[2]]) > 1 else row[2]) for row in ds}


def _merged(names, canon: dict) -> dict:
    """``{canonical: sorted names}`` for the canonical ids several of ``names`` (the names results were stored
    under) meet in, per the alias table ``canon`` (alias -> canonical)."""
    groups: dict = {}
    if canon:  # only aliases and their canonical names can share a row
        targets = set(canon.values())
        for n in set(names):
            if n in canon or n in targets:
                groups.setdefault(canon.get(n, n), set()).add(n)
    # In canonical order: the groups come from a set, whose order changes with the process's string hashing.
    return {c: sorted(ns) for c, ns in sorted(groups.items()) if len(ns) > 1}


def _meta_frame(infos: list, columns: list) -> pd.DataFrame:
    """Per-column metadata from each column's ``datasets`` row (``_DATASET_COLUMNS`` order)."""
    meta = pd.DataFrame(infos, columns=_DATASET_COLUMNS, index=pd.Index(columns, name="dataset"))
    meta["higher_is_better"] = meta["higher_is_better"].astype("boolean")  # NULL: unknown, as DuckDB's .df() gives
    return meta.rename(columns={"scale": "scale_kind"})  # the stored kind; engine's transforms read "scale" as theirs
