"""Tables with one row per dataset and one column per model, read when the user says so.

Many results tables are published the other way round from a leaderboard: TSB-AD's (Liu and Paparrizos 2024)
``uni_mergedTable_VUS-PR.csv`` has one row per time series (``file``), one column per detector, then columns
describing each series (``ts_len``, ``anomaly_ratio``, ...). Nothing in such a table says which way it runs, so it
is never turned round on a guess: the user declares it, with ``models: columns`` in the file's sidecar or
``harness-ext ingest --models-as-columns`` (every CSV of that ingest).

Read so, the first column names the datasets and every other column is a model, except the columns that describe
the datasets, which are stored as each dataset's metadata:

* declared: named in the sidecar's ``meta_columns`` (or ``--meta-columns``) or given ``kind: metadata``;
* named as a description of the data (:data:`DESCRIPTOR_NAME`: a length, size, count, number of, ratio,
  dimension: ``avg_anomaly_len``, ``anomaly_ratio``);
* holding only whole numbers (written without a decimal point) in a table whose other columns hold fractions
  (``ts_len``, ``num_anomaly``, the 0/1 flags ``point_anomaly``): a score column of whole numbers beside
  fractional ones is rare, a length or a flag common.

Each recognised column is named in the ingest note with the rule that took it; ``kind: model`` in the sidecar
reads a column as a model whatever the rules say. An entry of the sidecar's ``columns`` naming a row instead gives
that dataset what it gives a column of a table with a row per model (``chance``, ``scale``, ``min``/``max``,
``higher_is_better``...); a name that is both a row and a column is refused as ambiguous. The table is then read as
the leaderboard it is turned into (one row per model, one column per dataset) by the wide rules of
:mod:`harness_ext.adapters.csv_table`.
"""

from __future__ import annotations

import re

from harness_ext.errors import IngestError
from harness_ext.report import listed, plural
from harness_ext.adapters.csv_rules import (MODEL_HEADERS, NAME_HEADERS, _MISSING, clean_header, column_meta)

#: Column names that describe a dataset rather than name a model (snake_case words or words: TSB-AD's
#: ``avg_anomaly_len``, ``anomaly_ratio``; ``n_samples``, ``num_classes``, ``series length``, ``dims``).
DESCRIPTOR_NAME = re.compile(r"(?:^|[\W_])(?:len|length|lengths|size|count|counts|num|ratio|dim|dims|"
                             r"dimension|dimensions|channels)(?:$|[\W_])", re.I)
#: A cell holding a whole number as written (``16220``, ``0``), not a fraction (``0.25``, ``114.0``).
_WHOLE = re.compile(r"\s*[+-]?\d+\s*")


def models_as_columns(src) -> bool:
    """Whether ``src`` is declared to hold one column per model (``models: columns``, ``--models-as-columns``)."""
    return column_meta(src).get("models") == "columns"


def declared_models_as_columns(src) -> bool:
    """:func:`models_as_columns` for an adapter's ``can_handle``, which never raises (a sidecar that cannot be read
    is reported when the file is read)."""
    try:
        return models_as_columns(src)
    except Exception:
        return False


def _descriptor_columns(header, rows, cm) -> dict:
    """``{column index: why}`` of the columns (after the first) describing the datasets, not models."""
    declared = {m.strip().lower() for m in cm["meta_columns"]}
    specs = cm["columns"]
    cells = {j: [row[j].strip() for row in rows if row[j].strip().lower() not in _MISSING]
             for j in range(1, len(header))}
    fractional = {j for j, vals in cells.items() if any(not _WHOLE.fullmatch(v) for v in vals)}
    out = {}
    for j in range(1, len(header)):
        name, kind = header[j], specs.get(header[j], {}).get("kind")
        if kind == "model":
            continue
        if kind == "metadata" or name.lower() in declared:
            out[j] = "declared"
        elif DESCRIPTOR_NAME.search(name):
            out[j] = "the name describes the data"
        elif cells[j] and j not in fractional and fractional - {j}:
            out[j] = "whole numbers beside fractional scores"
    return out


def transpose_table(src, rows: list) -> tuple:
    """``(rows of the table turned round, {dataset: its descriptor values}, column metadata for the turned table)``.

    ``rows``: the table as read (header first), one row per dataset. The turned table's header is ``model`` then
    the datasets (the first column's names), one row per model column; every step is noted on ``src``.
    """
    from harness_ext.adapters.csv_rules import _parse

    if len(rows) < 2:
        raise IngestError(src.path, "no data rows")
    header = [clean_header(h) for h in rows[0]]
    named = next((h for h in header if h.lower() in MODEL_HEADERS), None)
    if named is not None or header[0].lower() in NAME_HEADERS:
        raise IngestError(src.path, f"read with the models as the columns (models: columns), but its column "
                                    f"{named or header[0]!r} names models: a table with one row per model is read "
                                    "without it")
    body = []
    for n, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise IngestError(src.path, f"row {n} has {len(row)} fields, header has {len(header)}")
        if not row[0].strip():
            raise IngestError(src.path, f"row {n} has no dataset name in its first column {header[0]!r}")
        body.append(row)
    if not body:
        raise IngestError(src.path, "no data rows")
    names = [row[0].strip() for row in body]
    from collections import Counter

    repeated = sorted(d for d, n in Counter(names).items() if n > 1)  # one pass: a hostile file may have 10^6 rows
    if repeated:
        raise IngestError(src.path, f"read with the models as the columns, its rows name datasets, but "
                                    f"{listed(repeated, 6)} name{'s' * (len(repeated) == 1)} more than one row")
    cm = column_meta(src)
    dspecs = _dataset_specs(src, cm, header, names)
    cm = {**cm, "columns": {c: spec for c, spec in cm["columns"].items() if c not in dspecs}}
    desc = _descriptor_columns(header, body, cm)
    models = [j for j in range(1, len(header)) if j not in desc and header[j]]
    if not models:
        raise IngestError(src.path, "read with the models as the columns, but every column after the first "
                                    "describes the datasets: no model column")
    dmeta = {}
    for row in body:
        md = {}
        for j in desc:
            try:
                v, _ = _parse(row[j])
            except ValueError:
                v = row[j].strip() or None
            if v is not None:
                md[header[j]] = v
        dmeta[row[0].strip()] = md
    turned = [["model", *names]] + [[header[j], *(row[j] for row in body)] for j in models]
    by_why: dict = {}
    for j, why in desc.items():
        by_why.setdefault(why, []).append(header[j])
    how = "; ".join(f"{listed(cols, 8)} ({why})" for why, cols in by_why.items())
    src.note(f"read with the models as the columns, as declared: {plural(len(models), 'model')}, "
             f"{plural(len(names), 'dataset')} (the rows, named by {header[0]!r})"
             + (f"; {plural(len(desc), 'column')} describing the datasets stored as their metadata, not models: "
                f"{how}; give one kind: model in the sidecar to read it as a model" if desc else ""))
    cols = {name: spec for name, spec in cm["columns"].items() if spec.get("kind") not in ("model", "metadata")}
    if cols:
        raise IngestError(cm["path"] or src.path, f"column metadata for {listed(cols, 6)}: a table read with the "
                                                  "models as the columns takes only kind: model or kind: metadata "
                                                  "per column (its columns are models); a dataset's chance, scale "
                                                  "or direction goes under its row's name")
    if dspecs:
        src.note(f"column metadata for {plural(len(dspecs), 'dataset')} (rows of the table read with the models as "
                 f"the columns): {listed(dspecs, 8)}")
    return turned, dmeta, {**cm, "meta_columns": [], "columns": dspecs}


def _dataset_specs(src, cm, header, names) -> dict:
    """``{dataset: its sidecar properties}``: the entries of the sidecar's ``columns`` naming a row of a table read
    with the models as the columns (``chance``, ``scale``, ``higher_is_better``... as for a column of a table with
    a row per model). An entry naming neither a column nor a row, or both, is an error (a typo would not apply)."""
    rows = {clean_header(n) for n in names}
    where = cm["path"] or src.path
    unknown = [c for c in cm["columns"] if c not in header and c not in rows]
    if unknown:
        raise IngestError(where, f"column metadata names neither a column nor a row (dataset) of {src.path.name}: "
                                 f"{unknown}")
    both = [c for c in cm["columns"] if c in header and c in rows]
    if both:
        raise IngestError(where, f"column metadata names {listed(both, 6)}, both a column and a row (dataset) of "
                                 f"{src.path.name}: the entry is ambiguous; rename the row or the column")
    out = {c: spec for c, spec in cm["columns"].items() if c in rows}
    as_column = [c for c, spec in out.items() if spec.get("kind") in ("model", "metadata")]
    if as_column:
        raise IngestError(where, f"column metadata for {listed(as_column, 6)}: kind: model and kind: metadata are for "
                                 "columns; these name rows (datasets) of a table read with the models as the columns")
    return out
