"""CSV result tables as people publish them: long, or wide leaderboards.

Long
----
Columns ``model, dataset, value`` (required) and optionally ``benchmark,
metric, stderr, n_samples, num_fewshot, higher_is_better, random_baseline,
min_score, max_score, scale, kind``. The first metric a file gives for a
dataset is its primary one (``--metric`` picks the others); ``kind`` is
``dataset`` or ``aggregate``.

Wide (leaderboards)
-------------------
First column the model (``model``, ``model name``, ``llm_model``, ...), then one
column per score. Benchmark is the file's stem unless a ``benchmark`` column is
present; metric is ``score``. Column by column:

* **Metadata, not scores.** A column whose cells are mostly not numbers
  ("Model Family": ``Llama-2``) is model metadata. So is a numeric column whose
  name says it describes the model rather than scores it (:data:`META_NAME`:
  size, parameters, FLOPs, date, release, context length, tokens, price,
  latency, real-time factor, memory usage, embedding dimensions, votes, rank, CI, ...), or one named with
  ``--meta-columns`` or in the
  sidecar's ``meta_columns``. Metadata is stored per model and source
  (:meth:`harness_ext.store.db.Store.model_metadata`). A mostly numeric column
  with a stray text cell is an error naming the cell, never silently dropped.
* **Aggregates.** Decided from the header and the sidecar, never from the rows' values (the same
  file restricted to some of its models stores the same datasets). When a file has at least three
  score columns: a column named overall / average / avg / mean / total / aggregate / "score of
  scores" (:data:`AGGREGATE_NAME`) with nothing before that word, or with words other score
  columns' names start with (``hydrox_overall_score`` beside ``hydrox_safety``); LiveBench's
  ``LB_Reasoning_Average``, averaging tasks the file does not hold, stays a dataset, as does a column named
  average ... of a benchmark no other column's name holds (Nejumi's ``AVG_mtbench``). Failing those,
  the one column named as the leaderboard's own score (LiveBench's ``livebench_240624``, AIR-Bench's
  ``HELM_AIRBENCH_AIR_Score``). Stored as an aggregate (``kind='aggregate'``): a prediction target,
  never a subset member. A column named as a category's accuracy (``<words> Acc``: BFCL's ``Live Acc``)
  beside at least two columns whose names start with those words is an aggregate too where it is their
  plain mean on every complete row (to the columns' rounding); where it is not (a weighted mean), it stays a
  dataset, noted. Any other column that equals the mean of the other columns on every complete row is
  reported as a hint and stays a dataset.
* **Reported.** Every column stored as an aggregate or as model metadata by these rules, every
  column without a value and every cell marked missing (``-``, ``n/a``) is listed in the ingest
  notes (:meth:`harness_ext.types.SourceFile.note`) with the way to override it.
* **Scale, per column.** Cells or a header with ``%`` are percentages; else all
  values in [0, 1] is a proportion, values in [0, 100] with one above 1 a
  percentage, a name with Elo/arena/rating and values above 100 an Elo rating
  (:func:`harness_ext.store.scales.infer_scale`). The detected kind and bounds are
  stored with the dataset and fix its normalisation. A column read as percentages although most of
  its values are at most 1 is noted with the counts; a value outside a sidecar's scale or bounds
  refuses the file.
* **Direction.** Higher is better unless the name says error/loss/perplexity/
  latency/rank (:data:`LOWER_NAME`) or the sidecar says otherwise. In a file named as costs
  (:data:`~harness_ext.adapters.csv_rules.COST_FILE`: LiveBench's ``cost_<date>.csv``) a column the sidecar
  gives no direction, scale or bounds is lower-is-better on an open scale, and noted.
* **Repeated models.** A model on more than one row is stored from its first row (its metadata; its scores
  where the rows disagree, each a conflict), with a note naming the models and the columns the rows differ in.
* **Rows keyed by more than the model** (:mod:`harness_ext.adapters.csv_keys`). A column named as the task keys
  the rows: each task a dataset, each score column one of its metrics. An entrant column (``team``) names the rows
  when the model column repeats and it does not. A column with one value on every row is model metadata.

OpenCompass summaries
---------------------
``summary/summary_<timestamp>.csv`` as OpenCompass's summarizer writes it, transposed: columns
``dataset, version, metric, mode``, then one column per model; ``-`` for a missing score. A row is
one dataset's metric (the first metric a dataset has is its primary one), scores are on 0-100; a
summary group's row (version ``-``, metric ``naive_average``/``weighted_average``...) is an aggregate.
Benchmark ``opencompass`` (or the sidecar's), so summaries of several runs meet in one benchmark.

Delimiter and decimal mark
--------------------------
``,`` (``.tsv``: a tab); a file whose header has no model column when split at commas is read with ``;`` or a tab
if that fits, and numbers written with a decimal comma (``0,734``, or ``1.250,5`` with points between the
thousands) in a table not separated by commas are read as their comma version would be
(:mod:`harness_ext.adapters.csv_dialect`), with a note; a column that mixes both marks is kept as text, noted.

Sidecar
-------
A YAML file beside the CSV named ``<file>.csv.meta.yaml`` (or
``<stem>.meta.yaml``), or one given with ``harness-ext ingest --column-meta FILE``
(applies to every CSV of that ingest; a file's own sidecar wins)::

    benchmark: my_leaderboard            # default: the file stem
    meta_columns: [Model Size (B), FLOPs (1E21)]
    columns:
      MMLU:     {chance: 25, scale: percent}      # chance in the column's own units
      GPQA:     {choices: 4}                      # chance = 1/4 of the scale
      Arena:    {scale: elo}
      MT-bench: {min: 1, max: 10, metric: judge_score}
      Errors:   {higher_is_better: false}
      Average:  {kind: aggregate}                 # or kind: dataset / metadata
      Old name: {dataset: new_name}

A table with one row per dataset and one column per model (TSB-AD's results tables) is read with
``models: columns`` at the sidecar's top level, or ``harness-ext ingest --models-as-columns``; the columns that
describe the datasets are stored as their metadata (:mod:`harness_ext.adapters.csv_transposed`), and
``kind: model`` reads one of them as a model. Its datasets are its rows: an entry of ``columns`` naming a row
gives that dataset ``chance``, ``choices``, ``scale``, ``min``/``max``, ``higher_is_better``, ``metric`` or a new
``dataset`` name, as an entry naming a column does in a table with a row per model.

The sidecar is part of the source's content hash, so editing it and ingesting
again re-reads the file.

A sidecar with an ``items:`` block (``layout``, ``task``, ``metric``, ``benchmark``) declares the file
an item-response table (one score per model and item, :mod:`harness_ext.store.item_tables`):
``harness-ext ingest`` stores it in the samples table instead of reading it here.
"""

from __future__ import annotations

import csv
import math
import os
import re
from typing import Optional

from harness_ext.errors import IngestError
from harness_ext.safe_input import csv_rows
from harness_ext.safe_output import short_name
from harness_ext.hookspecs import hookimpl
from harness_ext.types import SUBSET_OPTION, VARIANT_OF, Adapter, ResultRecord, SourceFile, variant_name
from harness_ext.adapters.csv_dialect import check_delimiter, decimal_commas, has_digit_comma, shown, sniff_delimiter
from harness_ext.adapters.csv_keys import TASK_HEADERS, VARIANT_HEADERS
from harness_ext.adapters.csv_html import HTML_SUFFIXES, page_leaderboard, page_leaderboard_in_head, read_page
from harness_ext.adapters.csv_markdown import MARKDOWN_SUFFIXES
from harness_ext.adapters.csv_records import RECORD_SUFFIXES, is_record_table, record_rows
from harness_ext.adapters.csv_transposed import declared_models_as_columns, models_as_columns, transpose_table
from harness_ext.adapters.csv_rules import (  # noqa: F401 - AGGREGATE_NAME, META_NAME, read_sidecar: named above and by callers
    _BOOL, AGGREGATE_NAME, LOWER_NAME, META_NAME, _candidate_columns, _dataset_metrics, _parse, _wide_column_meta,
    check_model_column, clean_header, column_meta, file_measure, model_column, note_unnamed_columns, read_sidecar,
    score_column)

LONG_REQUIRED = ("model", "dataset", "value")
#: Columns of a long table that hold names, never numbers (their cells are not read for a decimal mark).
_LONG_TEXT = ("model", "dataset", "benchmark", "metric", "higher_is_better", "scale", "kind")


def _split_header(src: SourceFile, delim: str = ","):
    line = src.head.split(b"\n", 1)[0].decode("utf-8", "replace").strip().lstrip("\ufeff")
    if src.suffix == ".tsv":
        return [c.strip().lower() for c in line.split("\t")]
    try:
        return [c.strip().lower() for c in next(csv.reader([line], delimiter=delim), [])]
    except csv.Error:  # a bare carriage return or NUL inside the first line: not a CSV table (can_handle never raises)
        return []


def _accept(cells) -> bool:
    return model_column(cells) is not None or _is_summary(cells)


def _sniff(src: SourceFile):
    """``(delimiter or None, fitting delimiters)`` of a table (:func:`~harness_ext.adapters.csv_dialect.sniff_delimiter`)."""
    head = src.head
    return sniff_delimiter(head.decode("utf-8", "replace"), src.suffix, _accept,
                           truncated=len(head) >= SourceFile.HEAD_BYTES)


#: The first columns of an OpenCompass summary CSV; the models follow.
SUMMARY_HEADER = ("dataset", "version", "metric", "mode")


def _is_summary(lower) -> bool:
    return len(lower) > len(SUMMARY_HEADER) and tuple(lower[:len(SUMMARY_HEADER)]) == SUMMARY_HEADER


def can_handle(src: SourceFile) -> bool:
    if src.suffix in RECORD_SUFFIXES:
        return is_record_table(src)
    if src.suffix in MARKDOWN_SUFFIXES or src.suffix in HTML_SUFFIXES:
        return _is_page_board(src)
    if src.suffix not in (".csv", ".tsv"):
        return False
    header = _split_header(src)
    if len(header) >= 2 and _accept(header):
        return True
    if declared_models_as_columns(src):  # one row per dataset, declared (adapters/csv_transposed.py)
        return True
    # a table saved with ';' or a tab (spreadsheets in decimal-comma locales): read if its header fits one
    return src.suffix != ".tsv" and bool(_sniff(src)[1])


def _num(path, raw, what, row):
    try:
        v = float(raw)
    except ValueError:
        raise IngestError(path, f"row {row}: {what} {short_name(raw)!r} is not a number") from None
    if not math.isfinite(v):
        raise IngestError(path, f"row {row}: {what} is {short_name(raw)!r}, not finite")
    return v


# -- reading ------------------------------------------------------------------------------------
def _has_pyarrow() -> bool:
    try:
        import pyarrow.csv  # noqa: F401
    except ImportError:
        return False
    return True


#: Wide CSVs above this size are read column by column (pyarrow) into arrays, not one record per cell.
COLUMNAR_MIN_BYTES = int(os.environ.get("HARNESS_EXT_COLUMNAR_CSV_BYTES") or 1 << 20)


def _delimiter(src: SourceFile) -> str:
    """The table's delimiter: a tab for ``.tsv``; a comma when its header fits (every table read before is read
    the same); else the sniffed one, noted; an ambiguous one is an error naming the file."""
    if src.suffix == ".tsv":
        return "\t"
    header = _split_header(src)
    if len(header) >= 2 and _accept(header):
        delim, fitting = _sniff(src)
        if len(fitting) <= 1:
            return ","
        delim = check_delimiter(src.path, delim, fitting)  # another fits too: the one every line agrees with
        if delim != ",":
            src.note(f"read with {shown(delim)} as the delimiter (its header fits ',' too, but only with "
                      f"{shown(delim)} do the first lines have the header's width)")
        return delim
    delim = check_delimiter(src.path, *_sniff(src))
    src.note(f"read with {shown(delim)} as the delimiter (the header has no model column when split at ',')")
    return delim


def _is_page_board(src: SourceFile) -> bool:
    """A Markdown or HTML file holding a leaderboard table (pipe or HTML: :mod:`harness_ext.adapters.csv_markdown`,
    :mod:`harness_ext.adapters.csv_html`) that neither a table lm-eval printed nor a model card's results are; one too
    large to read is claimed when its head holds one, to be refused with its size."""
    from harness_ext.store.ingest_read import TABLE_FILE_BYTES, details_card, is_printed_table, model_index_card

    try:
        if src.is_dir or src.path.stat().st_size > TABLE_FILE_BYTES:
            return not src.is_dir and page_leaderboard_in_head(src.path, src.suffix)
    except OSError:
        return False
    data = src.bytes
    if src.suffix in HTML_SUFFIXES:
        return page_leaderboard(data, src.suffix)
    return (page_leaderboard(data, src.suffix) and not is_printed_table(data) and not model_index_card(data)
            and details_card(data) is None)


def _read_page(src: SourceFile):
    """Every leaderboard table of a Markdown or HTML file, read by the rows path below (one benchmark per table when
    there are several: :mod:`harness_ext.adapters.csv_markdown`, :mod:`harness_ext.adapters.csv_html`)."""
    from harness_ext.store.ingest_read import TABLE_FILE_BYTES, markdown_too_large

    size = src.path.stat().st_size
    if size > TABLE_FILE_BYTES:
        raise IngestError(src.path, markdown_too_large(size, src.suffix))
    return read_page(src, _read_rows)


def read(src: SourceFile):
    if src.suffix in RECORD_SUFFIXES or src.suffix in MARKDOWN_SUFFIXES or src.suffix in HTML_SUFFIXES:
        if models_as_columns(src):  # declared, but only a CSV/TSV is turned round: said, not ignored
            src.note("read with one row per model: 'models: columns' (--models-as-columns) applies to CSV and TSV "
                     "tables only, not to JSON records, Markdown or HTML; convert the table to CSV to read it turned")
    if src.suffix in RECORD_SUFFIXES:  # a table as JSON records: its rows, read by the record path below
        return _read_rows(src, record_rows(src))
    if src.suffix in MARKDOWN_SUFFIXES or src.suffix in HTML_SUFFIXES:  # pipe and HTML tables: their rows, read
        return _read_page(src)                                        # by the record path below
    if models_as_columns(src):  # one row per dataset, one column per model, declared: turned round, then read
        return _read_turned(src)
    delim = _delimiter(src)
    if _is_summary(_split_header(src, delim)):  # one row per dataset: small, read as records
        rows = csv_rows(src.text.lstrip("\ufeff"), delim, src.path)
        decimal_commas(src, rows, range(len(SUMMARY_HEADER)), delim, _parse)
        return _read_summary(src, rows)
    # The column-by-column reader reads numbers with a point only: a table with decimal commas takes the record path.
    if (src.path.stat().st_size >= COLUMNAR_MIN_BYTES and _has_pyarrow()
            and (delim == "," or not has_digit_comma(src.path))):
        from harness_ext.adapters.csv_columnar import _first_row, _read_long_columnar, _read_wide_columnar

        header = _first_row(src, delim)
        if header is not None:  # None: a header cell spans lines, which the record path below reads
            lower = [h.lower() for h in header]
            stem = re.sub(r"[^a-z0-9]+", "_", src.path.stem.lower()).strip("_") or "csv"
            if not all(c in lower for c in LONG_REQUIRED) and not any(h in TASK_HEADERS + VARIANT_HEADERS for h in lower):
                # (a task or variant column keys the rows: the record path below reads it)
                return _read_wide_columnar(src, header, lower, stem, delim)
            cells = _read_long_columnar(src, header, lower, stem, delim) if all(c in lower for c in LONG_REQUIRED) \
                else None
            if cells is not None:
                return cells
    rows = csv_rows(src.text.lstrip("\ufeff"), delim, src.path)
    return _read_rows(src, rows, delim)


def _read_turned(src: SourceFile):
    """A CSV with one row per dataset and one column per model (:mod:`harness_ext.adapters.csv_transposed`): turned
    round and read as a wide leaderboard, each dataset given the values of the columns describing it."""
    delim = "\t" if src.suffix == ".tsv" else check_delimiter(src.path, *sniff_delimiter(
        src.head.decode("utf-8", "replace"), src.suffix, lambda cells: len(cells) >= 2,
        truncated=len(src.head) >= SourceFile.HEAD_BYTES))
    rows = csv_rows(src.text.lstrip("\ufeff"), delim, src.path)
    turned, dmeta, cm = transpose_table(src, rows)
    out = _read_rows(src, turned, delim, cm=cm)
    for rec in out:
        described = dmeta.get(rec.dataset_metadata.get("column", rec.dataset))
        if described:
            rec.dataset_metadata = {**rec.dataset_metadata, **described}
    return out


def _read_rows(src: SourceFile, rows: list, delim: Optional[str] = None, cm: Optional[dict] = None):
    """A table's rows (header first) read as long or wide; ``delim``: a CSV's delimiter, whose decimal commas are
    read (None: rows from JSON records, whose numbers have none); ``cm``: column metadata instead of the file's (a
    table turned round)."""
    if len(rows) < 2:
        raise IngestError(src.path, "no data rows")
    header = [clean_header(h) for h in rows[0]]
    lower = [h.lower() for h in header]
    text = [j for j, h in enumerate(lower) if h in _LONG_TEXT] if all(c in lower for c in LONG_REQUIRED) else \
        [model_column(lower)]
    if delim is not None:
        decimal_commas(src, rows, set(text), delim, _parse)
    stem = re.sub(r"[^a-z0-9]+", "_", src.path.stem.lower()).strip("_") or "csv"
    if all(c in lower for c in LONG_REQUIRED):
        return _read_long(src, rows, header, lower, stem)
    return _read_wide(src, rows, header, lower, stem, cm)


def _body_rows(src, rows, header):
    """``(line number, row)`` of the data rows, blank ones passed over; a row of the wrong width is an error."""
    for n, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise IngestError(src.path, _width_error(src, n, row, header, last=n == len(rows)))
        yield n, row


def _width_error(src, n: int, row: list, header: list, last: bool) -> str:
    """Why row ``n`` is refused: its width, its first cell (which row it is), and, for a short last line with no
    newline after it, that the file looks cut short. A short row is not padded with missing cells: a cell lost
    in its middle would shift the scores after it into the wrong columns."""
    first = row[0].strip()[:60] if row else ""
    msg = (f"row {n}{f' ({first!r})' if first else ''} has {len(row)} field{'s' * (len(row) != 1)}, header has "
           f"{len(header)}")
    if last and len(row) < len(header) and not src.text.endswith(("\n", "\r")):
        msg += ("; it is the file's last line and no newline ends it, so the file looks cut short (a comma for "
                "each missing cell keeps the row with those scores missing; or delete the row)")
    return msg


def _read_long(src, rows, header, lower, stem):
    from harness_ext.adapters.csv_reference import long_reference_models

    idx = {c: lower.index(c) for c in lower}
    body = list(_body_rows(src, rows, header))
    # rows named as a reference (a chance baseline, a human) are not models: their cells kept apart, by dataset
    kinds = long_reference_models(src, dict.fromkeys(row[idx["model"]].strip() for _, row in body))
    first_metric: dict = {}
    out, ref_cells = [], []
    for n, row in body:
        get = lambda c: row[idx[c]].strip() if c in idx and row[idx[c]].strip() != "" else None  # noqa: E731
        hib = get("higher_is_better")
        bench, dataset, metric = get("benchmark") or stem, get("dataset") or "", get("metric") or "score"
        kind = (get("kind") or "dataset").lower()
        if kind not in ("dataset", "aggregate"):
            raise IngestError(src.path, f"row {n}: kind {get('kind')!r} is not dataset or aggregate")
        rec = ResultRecord(
            model=get("model") or "", benchmark=bench, dataset=dataset, metric=metric,
            value=_num(src.path, get("value") or "", "value", n),
            stderr=_num(src.path, get("stderr"), "stderr", n) if get("stderr") else None,
            n_samples=int(_num(src.path, get("n_samples"), "n_samples", n)) if get("n_samples") else None,
            num_fewshot=int(_num(src.path, get("num_fewshot"), "num_fewshot", n)) if get("num_fewshot") else None,
            higher_is_better=_BOOL.get(hib.lower()) if hib else None,
            random_baseline=_num(src.path, get("random_baseline"), "random_baseline", n) if get("random_baseline") else None,
            baseline_source="csv column" if get("random_baseline") else None,
            min_score=_num(src.path, get("min_score"), "min_score", n) if get("min_score") else None,
            max_score=_num(src.path, get("max_score"), "max_score", n) if get("max_score") else None,
            scale=get("scale"), aggregate=kind == "aggregate",
        )
        if rec.model in kinds:
            rec.validate(src.path)  # a reference row's names are checked as a model row's are
            ref_cells.append(((bench, dataset, metric), rec.model, rec.value))
            continue
        rec.primary = first_metric.setdefault((bench, dataset), metric) == metric
        out.append(rec)
    if kinds:
        _long_reference(src, out, kinds, ref_cells)
    return out


def _long_reference(src, out, kinds, ref_cells) -> None:
    """Give the records ``out`` of a long table what its reference rows say of each dataset (changed in place): the
    chance level where the dataset's first row declares none, and the reference scores as dataset metadata."""
    from harness_ext.adapters.csv_reference import long_reference

    declared: dict = {}
    for rec in out:
        declared.setdefault((rec.benchmark, rec.dataset, rec.metric), rec.random_baseline)
    given = long_reference(src, kinds, ref_cells, declared)
    for rec in out:
        chance, source, meta = given.get((rec.benchmark, rec.dataset, rec.metric), (None, None, None))
        if chance is not None and rec.random_baseline is None:
            rec.random_baseline, rec.baseline_source = chance, source
        if meta:
            rec.dataset_metadata = {**rec.dataset_metadata, **meta}


#: Summary columns after ``mode`` that count items rather than name a model (AISBench's ``total_count``).
_COUNT_COLUMN = re.compile(r"(^|[\W_])count($|[\W_])|^(num|n)_", re.I)
#: OpenCompass metrics on 0-100 (its evaluators report accuracy x 100); others (a judge's 1-10 ``score``,
#: ``bpb``) are inferred from the values.
_SUMMARY_PERCENT = re.compile(r"^(accuracy|acc|acc_norm|exact_match|em|f1|rouge\w*|bleu|pass@\d+|\w+_pass@\d+|"
                              r"\w*_?average)$", re.I)


def _read_summary(src, rows):
    """An OpenCompass summary CSV (module docstring): one record per (dataset row, model column).

    References
    ----------
    OpenCompass ``docs/en/user_guides/summarizer.md`` (the table's columns, ``-`` for a missing score, summary
    groups); ``opencompass/summarizers/default.py`` writes it.
    """
    from harness_ext.store.scales import infer_scale  # numpy: not imported to register the adapter

    header = [clean_header(h) for h in rows[0]]
    cm = column_meta(src)
    bench = cm["benchmark"] or "opencompass"
    models = [(j, h) for j, h in enumerate(header) if j >= len(SUMMARY_HEADER) and h and not _COUNT_COLUMN.search(h)]
    if not models:
        raise IngestError(src.path, "OpenCompass summary without a model column after dataset, version, metric, mode")
    out, first_metric, no_score, groups = [], {}, [], []
    for n, row in _body_rows(src, rows, header):
        dataset, version, metric, mode = (c.strip() for c in row[:len(SUMMARY_HEADER)])
        if not dataset or not metric or metric == "-":  # a section divider ("--------- Exam ---------,-,-,-")
            continue
        vals = []
        for j, model in models:
            try:
                v, _ = _parse(row[j])
            except ValueError:
                raise IngestError(src.path, f"row {n}: {model!r} score {short_name(row[j])!r} for {dataset} is not a number") from None
            if v is not None and not math.isfinite(v):
                raise IngestError(src.path, f"row {n}: {model!r} score for {dataset} is {short_name(row[j])!r}, not finite")
            vals.append(v)
        present = [v for v in vals if v is not None]
        if not present:
            no_score.append(f"{dataset} {metric}")
            continue
        aggregate = version == "-" and "average" in metric.lower()
        if aggregate:
            groups.append(dataset)
        hint = "percent" if _SUMMARY_PERCENT.match(metric) and 0 <= min(present) and max(present) <= 100 else None
        scale, lo, hi = infer_scale(present, name=dataset, metric=metric, hint=hint)
        primary = first_metric.setdefault(dataset, metric) == metric
        for (j, model), v in zip(models, vals):
            if v is None:
                continue
            out.append(ResultRecord(
                model=model, benchmark=bench, dataset=dataset, metric=metric, primary=primary, value=v,
                min_score=lo, max_score=hi, scale=scale, aggregate=aggregate,
                higher_is_better=False if LOWER_NAME.search(metric) else None,
                dataset_metadata={"version": version, "mode": mode, "scale_detected": scale}))
    if not out:
        raise IngestError(src.path, "OpenCompass summary without a score (every cell is '-')")
    counts = [h for j, h in enumerate(header) if j >= len(SUMMARY_HEADER) and h and _COUNT_COLUMN.search(h)]
    for what, names in (("summary group row{s} stored as aggregate{s} (version '-', an average metric)", groups),
                        ("row{s} without a score in any model column left out", no_score),
                        ("column{s} that count{v} items, not a model, left out", counts)):
        if names:
            shown = ", ".join(list(dict.fromkeys(names))[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")
            many = len(names) != 1
            src.note(f"{len(names)} {what.format(s='s' if many else '', v='' if many else 's')}: {shown}")
    return out


def _read_wide(src, rows, header, lower, stem, cm=None):
    cm, specs, declared_meta = _wide_column_meta(src, header, lower, cm)
    from harness_ext.adapters.csv_columns import (
        WideColumns, classify_wide, report_file_measure, report_repeated_models, report_scoreless_rows,
        strip_footnote_marks)
    from harness_ext.adapters.csv_keys import (bound_columns, constant_columns, entrant_column, task_column,
                                              variant_column)
    from harness_ext.adapters.csv_reference import apply_reference, note_reference, split_reference_rows

    rows = list(_body_rows(src, rows, header))
    mc = entrant_column(src, header, lower, model_column(lower), lambda j: [row[j] for _, row in rows])
    bench_col = lower.index("benchmark") if "benchmark" in lower else None
    task_col = task_column(lower, {mc, bench_col}, specs, declared_meta, header)
    body = []
    for n, row in rows:
        if not row[mc].strip():
            raise IngestError(src.path, f"row {n} has no model name")
        body.append((n, row))
    if not body:
        raise IngestError(src.path, "no data rows")
    check_model_column(src, header, mc, [row[mc] for _, row in body])
    note_unnamed_columns(src, header, mc, lambda j: [row[j] for _, row in body])

    # Classify every column from its cells' types and its name: metadata, score (scale, percent), aggregate.
    cols, parsed = WideColumns(), {}
    for j, name, spec in _candidate_columns(header, mc, {bench_col, task_col}, specs, declared_meta, cols.meta):
        vals, pct, bad, marked = _parse_cells(src, name, [(n, row[j]) for n, row in body])
        if cols.add(src, j, name, spec, sum(v is not None for v in vals), bad, marked):
            parsed[j] = (vals, pct)
    cols.demote(bound_columns(header, cols.scores, specs), header, "bound")
    cols.demote(constant_columns(header, cols.scores, specs, lambda j: parsed[j][0]), header, "constant")
    meta_cols, score_cols, empty = cols.meta, cols.scores, cols.empty
    if not score_cols:
        raise IngestError(src.path, cols.no_scores(header, src.options.get(SUBSET_OPTION)))
    import numpy as np

    values = np.array([[math.nan if v is None else v for v in parsed[j][0]] for j in score_cols]).T
    metas = [_row_metadata(row, meta_cols, header) for _, row in body]
    models = strip_footnote_marks(src, [row[mc].strip() for _, row in body])
    # rows that are not models (a chance baseline, a human reference): kept apart, by column
    keep, refs, ref_rows = split_reference_rows(src, models, score_cols, lambda j, i: parsed[j][0][i],
                                                keyed=task_col is not None)
    if keep is not None:
        body, models, metas, values = [body[i] for i in keep], [models[i] for i in keep], [metas[i] for i in keep], \
            values[keep]
        parsed = {j: ([v[i] for i in keep], pct) for j, (v, pct) in parsed.items()}
    report_scoreless_rows(src, models, values)
    variant = variant_column(src, header, lower, mc, lambda j: [row[j] for _, row in body], {task_col, bench_col})
    if variant is not None:  # one model run several ways: each way its own variant of the model
        for i, (_, row) in enumerate(body):
            if row[variant].strip():
                metas[i][VARIANT_OF] = models[i]
                models[i] = variant_name(models[i], row[variant].strip())
    keys = _row_datasets(src, body, header, task_col, models, metas, cols, specs, parsed)
    aggregates = classify_wide(src, header, cols, specs, stem, cm, values)
    names = _dataset_metrics(header, score_cols, specs, empty)
    benches = [row[bench_col].strip() if bench_col is not None else (cm["benchmark"] or stem) for _, row in body]
    report_repeated_models(src, models, metas, list(zip(benches, keys[0])) if keys else
                           (benches if bench_col is not None else None))
    measure, by_file_name, out, tally = file_measure(src), [], [], {}
    for j in score_cols:
        name = header[j]
        vals, pct = parsed[j]
        col = score_column(src, cm, name, specs.get(name, {}), vals, pct, models, measure)
        if col.pop("by_file_name"):
            by_file_name.append(name)
        ref_meta = apply_reference(col, refs.get(j, []), tally, name)
        for i in range(len(body)):
            if vals[i] is None:
                continue
            dataset, metric, primary, dmeta = (
                (keys[0][i], specs.get(name, {}).get("metric") or name, keys[1][(keys[0][i], j)], keys[2][keys[0][i]])
                if keys else (*names[j], {"column": name}))
            out.append(ResultRecord(
                model=models[i], benchmark=benches[i], dataset=dataset, metric=metric, primary=primary, value=vals[i],
                **col, aggregate=j in aggregates, model_metadata=metas[i],
                dataset_metadata={**dmeta, "scale_detected": col["scale"], **ref_meta}))
    report_file_measure(src, measure, by_file_name)
    note_reference(src, ref_rows, tally)
    return out


def _row_metadata(row, meta_cols, header) -> dict:
    """A row's model metadata: its cells in the metadata columns, numbers parsed, empty cells left out."""
    md = {}
    for j in meta_cols:
        try:
            v, _ = _parse(row[j])
        except ValueError:
            v = row[j].strip()
        if v is not None:
            md[header[j]] = v
    return md


def _row_datasets(src, body, header, task_col, models, metas, cols, specs, parsed):
    """For a table keyed by a task column (:mod:`harness_ext.adapters.csv_keys`): ``(each row's task, (task,
    column) -> primary, task -> its dataset metadata)``, with the columns describing the task moved out of
    ``metas`` (and out of the model metadata ``cols`` notes); None without a task column."""
    if task_col is None:
        return None
    from harness_ext.adapters.csv_keys import note_task_column, row_tasks, task_metadata, task_metrics

    tasks = row_tasks(src, body, task_col, header)
    meta_cols = list(dict.fromkeys(k for md in metas for k in md))
    by_name = {header[j]: j for j in range(len(header))}
    described = task_metadata(header, [by_name[k] for k in meta_cols], models, tasks,
                              lambda i, j: metas[i].get(header[j]))
    dmeta = {t: {"task_column": header[task_col]} for t in tasks}
    for i, t in enumerate(tasks):
        for j in described:
            v = metas[i].pop(header[j], None)
            if v is not None:
                dmeta[t][header[j]] = v
    cols.guessed = [(name, why) for name, why in cols.guessed if name not in {header[j] for j in described}]
    note_task_column(src, header, task_col, tasks, cols.scores, described)
    return tasks, task_metrics(header, cols.scores, specs, tasks, lambda j: parsed[j][0]), dmeta


def _parse_cells(src, name, cells) -> tuple:
    """``(values with None for missing, any percent, bad (row, cell), cells marked missing)`` of one column's
    ``(row number, cell)`` pairs; a non-finite number is an error naming the row."""
    vals, pct, bad, marked = [], False, [], []
    for n, cell in cells:
        try:
            v, p = _parse(cell)
        except ValueError:
            bad.append((n, cell))
            vals.append(None)
            continue
        if v is None and cell.strip():
            marked.append(cell.strip())
        elif v is not None and not math.isfinite(v):
            raise IngestError(src.path, f"row {n}: {name!r} score is {short_name(cell)!r}, not finite")
        vals.append(v)
        pct = pct or p
    return vals, pct, bad, marked


@hookimpl
def harness_ext_adapters():
    yield Adapter(
        name="csv",
        description="CSV table: long (model,dataset,value[,metric,...]) or a wide leaderboard (model, one column per "
                    "score; text and size/date columns become model metadata, averages aggregates); also such a "
                    "table as JSON records (.jsonl, or a .json array of flat objects), as Markdown pipe tables "
                    "(.md: every leaderboard table of the file) or as HTML tables (.html, .htm, and in .md files)",
        can_handle=can_handle,
        read=read,
        # 2: with ';' or a tab as the delimiter, '1.250,5' (points between thousands, a decimal comma) is a number,
        # not text that made its column model metadata; a column mixing decimal marks is kept as text and noted
        # 3: a column named for a task about parameters or long contexts ("Multi Turn Miss Param", "Multi Turn Long
        # Context") is a score, not model metadata as a parameter count or a context window is
        # 5: a rank in snake_case ("bt_rank"), a count ("Count", "Flag Success Count", "# Solved") and a number of
        # samples ("bootstrap_samples") are model metadata, not scores; footnote marks after a model name are left out
        # 6: a task column keys the rows (each task a dataset, each score column its metric), an entrant column names
        # the rows when the model column repeats, and a column with one value on every row is model metadata
        # 7: reference rows ("random-baseline", "Random Choice", "Human Expert (High)", "Oracle") are not models: a
        # chance row's values are the datasets' chance levels, a human row's their reference scores (noted)
        # 8: the same for a long table's reference rows ("random-baseline,mmlu,0.25", "Human,gsm8k,0.92"), on the
        # record and the columnar path
        # 9: how fast and how big a model runs is model metadata, not a score: a speech board's "RTFx" (an inverse
        # real-time factor, -1 where unknown), an embedding board's "Memory Usage (GB, fp32)" and "Embedding
        # Dimensions", and a snake_case "model_size"; an "AVG_<benchmark>" of a benchmark no other column holds is a
        # dataset (Nejumi's "AVG_mtbench"); rows with no value in any score column are noted (were silent)
        # 10: a model cell that is one HTML or Markdown link gives its text (the MTEB leaderboard's
        # '<a target="_blank" href="...">voyage-lite-02-instruct</a>'), noted; a table written as JSON records
        # (JSON Lines or one array of flat objects) is read by the same rules (adapters/csv_records.py)
        # 11: a model listed once per precision ("precision", "dtype", "weight type", "quantization" telling its
        # rows apart: the first Open LLM Leaderboard's float16 and bfloat16 rows) is one variant per precision
        # 12: a re-ranking task ("Re-rank", "re_rank": HELMET's category) is a score; only a rank is model metadata
        # (and the same revision) a model column named in Chinese, Japanese or Korean ("大模型", "モデル", "모델")
        # and an "Overall (GPT-4-Turbo)", an average named with a bracketed qualifier, is an aggregate
        # 13: a model cell linking to its Hugging Face page by the page's name gives the page's repository id
        # (org/name): two organisations' models of one name were one model with conflicts (MTEB-French)
        # (and the same revision) an overall named in Chinese, Japanese or Korean ("综合能力") is an aggregate
        # 14: a leaderboard published as a Markdown pipe table (VLMEvalKit's results/*.md, a README's leaderboard; one
        # benchmark per table under its heading when a file has several) is read by the same rules
        # (adapters/csv_markdown.py)
        # 15: a column named for what describes the model with a text cell among its numbers (ScandEval's
        # num_model_parameters, 'unknown' for closed models) is model metadata, not a refusal of the file; a
        # reference row's name escaped for Markdown ("Human Performance\\*", MathVista) is a reference row
        # 16: a leaderboard published as an HTML table (a README's <table>, a saved leaderboard page or GitHub Pages
        # site: .html, .htm, and in .md files beside pipe tables) is read by the same rules; a two-row header names
        # its columns "group / name", rowspan repeats a value, <sup>/<sub> markers after a number are left out and
        # noted (adapters/csv_html.py); a score column that is the plain mean of a group of the others is named in a
        # note with its members (still a dataset)
        # 17: a table with one row per dataset and one column per model is read when declared (models: columns,
        # --models-as-columns; adapters/csv_transposed.py); a subscript after text in a page's cell is joined with
        # '_' (GPT<sub>4</sub> as GPT_4, was GPT4); Markdown backslash escapes are read as the page shows them
        # ('Human Performance\*' as 'Human Performance*'); a page's table whose only numbers describe the models
        # (a context length) is no leaderboard: not claimed, and a CSV one is refused saying so
        # 18: an average named after its metric ("Average_Spearman", ProteinGym) is an aggregate; a JSON object
        # holding one array of records, each grouping its values one level deep ({"info": {"name": ...},
        # "validation": {"overall": "59.4", ...}}: the MMMU leaderboard's data file), is read as a table of
        # "group.key" columns; a column naming the systems ranked ("Provider", "system", "tool", ...) is the model
        # column when no column is named as the model, noted
        # 19: a column named "index" (a row index: the MTEB leaderboard's JSON Lines records) is model metadata
        # 20: a <br> in a Markdown or HTML page's cell that breaks a word at a hyphen reads as no space
        # (ZeroEval's 'MMLU<br/>-Redux' is 'MMLU-Redux', was 'MMLU -Redux'); no fixture holds one
        revision="20",
    )
