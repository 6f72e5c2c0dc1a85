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
  latency, votes, rank, CI, ...), or one named with ``--meta-columns`` or in the
  sidecar's ``meta_columns``. Metadata is stored per model and source
  (:meth:`harness_ext.store.db.Store.model_metadata`). A mostly numeric column
  with a stray text cell is an error naming the cell, never silently dropped.
* **Aggregates.** Decided from the header and the sidecar, never from the rows' values (the same
  file restricted to some of its models stores the same datasets). When a file has at least three
  score columns: a column named overall / average / avg / mean / total / aggregate / "score of
  scores" (:data:`AGGREGATE_NAME`) with nothing before that word, or with words other score
  columns' names start with (``hydrox_overall_score`` beside ``hydrox_safety``); LiveBench's
  ``LB_Reasoning_Average``, averaging tasks the file does not hold, stays a dataset. Failing those,
  the one column named as the leaderboard's own score (LiveBench's ``livebench_240624``, AIR-Bench's
  ``HELM_AIRBENCH_AIR_Score``). Stored as an aggregate (``kind='aggregate'``): a prediction target,
  never a subset member. A column that equals the mean of the other columns on every complete row
  is reported as a hint and stays a dataset.
* **Reported.** Every column stored as an aggregate or as model metadata by these rules, every
  column without a value and every cell marked missing (``-``, ``n/a``) is listed in the ingest
  notes (:meth:`harness_ext.types.SourceFile.note`) with the way to override it.
* **Scale, per column.** Cells or a header with ``%`` are percentages; else all
  values in [0, 1] is a proportion, values in [0, 100] with one above 1 a
  percentage, a name with Elo/arena/rating and values above 100 an Elo rating
  (:func:`harness_ext.store.scales.infer_scale`). The detected kind and bounds are
  stored with the dataset and fix its normalisation.
* **Direction.** Higher is better unless the name says error/loss/perplexity/
  latency/rank (:data:`LOWER_NAME`) or the sidecar says otherwise.

OpenCompass summaries
---------------------
``summary/summary_<timestamp>.csv`` as OpenCompass's summarizer writes it, transposed: columns
``dataset, version, metric, mode``, then one column per model; ``-`` for a missing score. A row is
one dataset's metric (the first metric a dataset has is its primary one), scores are on 0-100; a
summary group's row (version ``-``, metric ``naive_average``/``weighted_average``...) is an aggregate.
Benchmark ``opencompass`` (or the sidecar's), so summaries of several runs meet in one benchmark.

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

The sidecar is part of the source's content hash, so editing it and ingesting
again re-reads the file.

A sidecar with an ``items:`` block (``layout``, ``task``, ``metric``, ``benchmark``) declares the file
an item-response table (one score per model and item, :mod:`harness_ext.store.item_tables`):
``harness-ext ingest`` stores it in the samples table instead of reading it here.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from pathlib import Path

from harness_ext.errors import IngestError
from harness_ext.hookspecs import hookimpl
from harness_ext.types import SUBSET_OPTION, Adapter, ResultRecord, SourceFile

LONG_REQUIRED = ("model", "dataset", "value")
MODEL_HEADERS = ("model", "models", "model name", "model_name", "llm_model", "llm", "model id", "model_id")
#: Headers of a model column read only when no :data:`MODEL_HEADERS` column is present (AlpacaEval's ``name``).
NAME_HEADERS = ("name", "model_display_name", "display name")
_BOOL = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
_MISSING = frozenset({"", "nan", "na", "n/a", "-", "--", "\u2014", "\u2013", "none", "null", "?", "x"})
#: Numeric columns that describe a model instead of scoring it.
META_NAME = re.compile(
    r"(\bsize\b|param|#\s*p|\bflops?\b|\bdate\b|release|\byear\b|\bmonth\b|context|\btokens?\b|price|cost|\$|"
    r"latency|throughput|speed|\bvotes?\b|\brank|\bci\b|confidence|\bstderr\b|\bstd\b|license|licence|"
    # a score's spread (AlpacaEval's "standard_error", "lc_standard_error"): LOWER_NAME's "error" would store it as a score
    r"standard[ _-]?(?:error|deviation)|std[ _-]?(?:err|dev)|"
    # bounds of a score's interval (Arena-Hard-Auto's "rating_q025"/"rating_q975", "ci_low", "upper"), and token
    # counts in snake_case ("avg_tokens": the \b above does not split on "_")
    r"(?:^|[\W_])(?:q\d{2,3}|lower|upper|ci[ _-]?(?:low|high|lo|hi)|(?:avg|mean|num|n)?[ _-]?tokens?)(?:$|[\W_])|"
    r"\bversion\b|\bhub\b|likes|downloads|\blink\b|\burl\b|\bid\b|\bseed\b|\bnum_|\bn_|"
    # a model's answer length (AlpacaEval's "Output Length", "avg_length"), not a length-controlled score
    r"(?<![a-z])(?:(?:avg|average|mean|output|response|answer)[ _-]?)?length(?![ _-]*controlled)(?![a-z]))", re.I)
#: Column names of aggregates of the other columns.
AGGREGATE_NAME = re.compile(r"(^|[^a-z])(overall|average|avg|mean|total|aggregate|score[ _-]of[ _-]scores|all)($|[^a-z])", re.I)
#: Column names of lower-is-better scores.
LOWER_NAME = re.compile(r"(error|\bloss\b|perplexity|\bppl\b|latency|\bwer\b|\bcer\b|bits[ _]per)", re.I)
#: Metric suffixes of wide column names: ``<task>_<metric>`` columns sharing a task are one dataset.
METRIC_SUFFIXES = ("exact_match", "acc_norm", "acc", "accuracy", "bleu", "f1", "em", "rouge_l", "rougel", "rouge1",
                   "rouge2", "mcc", "pass@1", "pass_at_1", "chrf", "brier_score")
#: Share of numeric cells above which a column is a score column with a typo, not a text column.
MOSTLY_NUMERIC = 0.8


#: A line break, tab or other control character inside a header cell, with the spaces around it.
_HEADER_BREAK = re.compile(r"\s*[\x00-\x1f\x7f]+\s*")


def clean_header(name: str) -> str:
    """A column name as stored: surrounding spaces dropped, and a line break or tab inside it one space.

    Spreadsheet exports wrap long headers (``"Arena Elo\\n[Feb 2, 2024]"``, AlpacaEval's benchmark
    table); a stored name may hold no line break (configs are written from them), so the header cell
    is read as the text it shows. Names without such characters are kept exactly.
    """
    return _HEADER_BREAK.sub(" ", name).strip()


def _split_header(src: SourceFile):
    line = src.head.split(b"\n", 1)[0].decode("utf-8", "replace").strip().lstrip("\ufeff")
    if src.suffix == ".tsv":
        return [c.strip().lower() for c in line.split("\t")]
    try:
        return [c.strip().lower() for c in next(csv.reader([line]), [])]
    except csv.Error:  # a bare carriage return or NUL inside the first line: not a CSV table (can_handle never raises)
        return []


def model_column(lower) -> int | None:
    """Index of the model column of a header (lower-cased cells), or None when it has none.

    Leaderboards do not all lead with the model: Chatbot Arena's tables start with the model
    ``key`` before ``Model``, others with ``Rank`` or ``#``. The first column named as a model
    (:data:`MODEL_HEADERS`) wins wherever it stands; failing that a ``name`` column
    (:data:`NAME_HEADERS`, AlpacaEval's leaderboards); failing that an unnamed first column,
    which is how pandas writes a table indexed by model (``df.to_csv()``: AlpacaEval's
    ``src/alpaca_eval/leaderboards`` files); :func:`_read_wide` refuses it when it holds only row numbers.
    """
    for names in (MODEL_HEADERS, NAME_HEADERS):
        j = next((j for j, h in enumerate(lower) if h in names), None)
        if j is not None:
            return j
    return 0 if lower and lower[0] == "" and any(lower[1:]) else None


#: The first columns of an OpenCompass summary CSV; the models follow.
SUMMARY_HEADER = ("dataset", "version", "metric", "mode")


def _is_summary(lower) -> bool:
    return len(lower) > len(SUMMARY_HEADER) and tuple(lower[:len(SUMMARY_HEADER)]) == SUMMARY_HEADER


def can_handle(src: SourceFile) -> bool:
    if src.suffix not in (".csv", ".tsv"):
        return False
    header = _split_header(src)
    return len(header) >= 2 and (model_column(header) is not None or _is_summary(header))


#: A score's spread written after it: ``85.2 ± 1.1``, ``85.2 (±1.1)``, ``85.2 +/- 1.1``, ``52.1 (-1.5, +1.7)``,
#: ``45.3 (0.8)``; the value before it is the score.
_SPREAD = re.compile(r"(?<=[\d.%])\s*(?:(?:\u00b1|\+/-|\+-)\s*\d[\d.]*\s*%?|\(\s*[\u00b1+\-]?\s*\d[\d.\s%,/+\-\u00b1]*\))$")


def _parse(cell: str):
    """``(value, percent)`` of a cell: ``None`` value when missing; raises ValueError when not a number.

    A spread after the value (:data:`_SPREAD`) is dropped: papers and leaderboards print scores as
    ``85.2 ± 1.1``, and a column of them read as text would be stored as model metadata, its scores
    lost. The spread is not kept as a standard error: a table rarely says whether it is one, a standard
    deviation or a confidence interval.
    """
    c = cell.strip().replace("\u2212", "-")
    if c.lower() in _MISSING:
        return None, False
    c = _SPREAD.sub("", c)
    pct = c.endswith("%")
    if pct:
        c = c[:-1].strip()
    if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?", c):
        c = c.replace(",", "")
    v = float(c)
    return v, pct


def _num(path, raw, what, row):
    try:
        v = float(raw)
    except ValueError:
        raise IngestError(path, f"row {row}: {what} {raw!r} is not a number") from None
    if not math.isfinite(v):
        raise IngestError(path, f"row {row}: {what} is {raw!r}, not finite")
    return v


# -- sidecar ------------------------------------------------------------------------------------
def read_sidecar(path) -> dict:
    """Parse a column-metadata sidecar (format in the module docstring); errors name the file."""
    from harness_ext.errors import SideFileError
    from harness_ext.safe_input import load_document

    p = Path(path)
    try:
        doc = load_document(p, "column metadata", "yaml")
    except SideFileError as exc:  # an IngestError fails the CSV it describes, with the sidecar named
        raise IngestError(p, exc.reason) from None
    doc = doc or {}
    if not isinstance(doc, dict):
        raise IngestError(p, "column metadata must be a mapping (benchmark, meta_columns, columns)")
    unknown = set(doc) - {"benchmark", "meta_columns", "columns", "items"}
    if unknown:
        raise IngestError(p, f"unknown keys {sorted(map(str, unknown))}; expected benchmark, meta_columns, columns, items")
    cols = doc.get("columns") or {}
    if not isinstance(cols, dict) or not all(isinstance(v, dict) for v in cols.values()):
        raise IngestError(p, "'columns' must map each column name to a mapping of its properties")
    allowed = {"chance", "choices", "source", "higher_is_better", "scale", "min", "max", "metric", "dataset", "kind"}
    for name, spec in cols.items():
        bad = set(spec) - allowed
        if bad:
            raise IngestError(p, f"column {name!r}: unknown properties {sorted(map(str, bad))}; allowed: {sorted(allowed)}")
        if spec.get("kind") not in (None, "dataset", "aggregate", "metadata"):
            raise IngestError(p, f"column {name!r}: kind must be dataset, aggregate or metadata")
        if spec.get("scale") not in (None, "proportion", "percent", "bounded", "elo", "perplexity", "log_likelihood", "unbounded"):
            raise IngestError(p, f"column {name!r}: unknown scale {spec.get('scale')!r}")
    if doc.get("benchmark") is not None and not isinstance(doc["benchmark"], str):
        raise IngestError(p, f"'benchmark' must be a name, got {type(doc['benchmark']).__name__}")
    meta = doc.get("meta_columns") or []
    if isinstance(meta, str):
        meta = [m.strip() for m in meta.split(",") if m.strip()]
    if not isinstance(meta, list) or not all(isinstance(m, (str, int, float)) for m in meta):
        raise IngestError(p, "'meta_columns' must be a list of column names (or one comma-separated string)")
    items = None
    if doc.get("items") is not None:  # the file is an item-response table (harness_ext.store.item_tables)
        from harness_ext.store.item_format import items_block

        items = items_block(doc["items"], p)
        if doc.get("benchmark"):
            items.setdefault("benchmark", str(doc["benchmark"]))
    return {"benchmark": doc.get("benchmark"), "meta_columns": [clean_header(str(m)) for m in meta],
            "columns": {clean_header(str(k)): v for k, v in cols.items()}, "path": str(p), "items": items}


def column_meta(src: SourceFile) -> dict:
    """The sidecar for ``src`` merged over ``--column-meta`` and ``--meta-columns`` (the file's own wins)."""
    opts = getattr(src, "options", None) or {}
    merged = {"benchmark": None, "meta_columns": list(opts.get("meta_columns") or ()), "columns": {}, "path": None}
    layers = []
    if opts.get("column_meta"):
        layers.append(read_sidecar(opts["column_meta"]))
    own = src.sidecars()
    if own:
        layers.append(read_sidecar(own[0]))
    for layer in layers:
        merged["benchmark"] = layer["benchmark"] or merged["benchmark"]
        merged["meta_columns"] += layer["meta_columns"]
        for c, spec in layer["columns"].items():
            merged["columns"].setdefault(c, {}).update(spec)
        merged["path"] = layer["path"]
    return merged


# -- reading ------------------------------------------------------------------------------------
def _has_pyarrow() -> bool:
    try:
        import pyarrow.csv  # noqa: F401
    except ImportError:
        return False
    return True



#: Wide CSVs above this size are read column by column (pyarrow) into arrays, not one record per cell.
COLUMNAR_MIN_BYTES = int(os.environ.get("HARNESS_EXT_COLUMNAR_CSV_BYTES") or 1 << 20)


def read(src: SourceFile):
    delim = "\t" if src.suffix == ".tsv" else ","
    if _is_summary(_split_header(src)):  # one row per dataset: small, read as records
        return _read_summary(src, list(csv.reader(io.StringIO(src.text.lstrip("\ufeff")), delimiter=delim)))
    if src.path.stat().st_size >= COLUMNAR_MIN_BYTES and _has_pyarrow():
        from harness_ext.adapters.csv_columnar import _first_row, _read_long_columnar, _read_wide_columnar

        header = _first_row(src, delim)
        if header is not None:  # None: a header cell spans lines, which the record path below reads
            lower = [h.lower() for h in header]
            stem = re.sub(r"[^a-z0-9]+", "_", src.path.stem.lower()).strip("_") or "csv"
            if not all(c in lower for c in LONG_REQUIRED):
                return _read_wide_columnar(src, header, lower, stem, delim)
            cells = _read_long_columnar(src, header, lower, stem, delim)
            if cells is not None:
                return cells
    rows = list(csv.reader(io.StringIO(src.text.lstrip("\ufeff")), delimiter=delim))
    if len(rows) < 2:
        raise IngestError(src.path, "no data rows")
    header = [clean_header(h) for h in rows[0]]
    lower = [h.lower() for h in header]
    stem = re.sub(r"[^a-z0-9]+", "_", src.path.stem.lower()).strip("_") or "csv"
    if all(c in lower for c in LONG_REQUIRED):
        return _read_long(src, rows, header, lower, stem)
    return _read_wide(src, rows, header, lower, stem)


def _body_rows(src, rows, header):
    """``(line number, row)`` of the data rows, blank ones passed over; a row of the wrong width is an error."""
    for n, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise IngestError(src.path, f"row {n} has {len(row)} fields, header has {len(header)}")
        yield n, row


def _read_long(src, rows, header, lower, stem):
    idx = {c: lower.index(c) for c in lower}
    first_metric: dict = {}
    out = []
    for n, row in _body_rows(src, rows, header):
        get = lambda c: row[idx[c]].strip() if c in idx and row[idx[c]].strip() != "" else None  # noqa: E731
        hib = get("higher_is_better")
        bench, dataset, metric = get("benchmark") or stem, get("dataset") or "", get("metric") or "score"
        primary = first_metric.setdefault((bench, dataset), metric) == metric
        kind = (get("kind") or "dataset").lower()
        if kind not in ("dataset", "aggregate"):
            raise IngestError(src.path, f"row {n}: kind {get('kind')!r} is not dataset or aggregate")
        out.append(ResultRecord(
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
            scale=get("scale"), aggregate=kind == "aggregate", primary=primary,
        ))
    return out


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
                raise IngestError(src.path, f"row {n}: {model!r} score {row[j]!r} for {dataset} is not a number") from None
            if v is not None and not math.isfinite(v):
                raise IngestError(src.path, f"row {n}: {model!r} score for {dataset} is {row[j]!r}, not finite")
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


def _column_role(src, name: str, spec: dict, n_num: int, bad: list):
    """What a parsed column is: None (scores), ``"empty"`` (no value at all), or model metadata because its cells
    are ``"text"`` or its ``"name"`` describes the model (:data:`META_NAME`). A stray text cell in a numeric
    column is an error."""
    if bad and (spec.get("kind") in ("dataset", "aggregate") or n_num / (n_num + len(bad)) >= MOSTLY_NUMERIC):
        row, cell = bad[0]
        raise IngestError(src.path, f"row {row}: {name!r} score {cell!r} is not a number (the column is otherwise "
                                    "numeric; fix the cell, or declare the column with --meta-columns)")
    if bad:  # a text column ("Model Family")
        return "text"
    if n_num == 0:  # no value in any row: no dataset, and no metadata either
        return "empty"
    return "name" if spec.get("kind") is None and META_NAME.search(name) else None


def _wide_column_meta(src, header, lower) -> tuple:
    """``(column meta, per-column specs, declared metadata columns)``.

    Column metadata naming a column the file lacks is an error (a typo would silently not apply), unless the
    file is read as a subset of the columns its sidecar describes (:data:`SUBSET_OPTION`): then the names it
    lacks are noted, not refused.
    """
    cm = column_meta(src)
    specs = cm["columns"]
    subset = bool((getattr(src, "options", None) or {}).get(SUBSET_OPTION))
    unknown = [c for c in specs if c not in header]
    missing_meta = [m for m in cm["meta_columns"] if m.strip().lower() not in set(lower)]
    if unknown and not subset:
        raise IngestError(cm["path"] or src.path, f"column metadata names columns not in {src.path.name}: {unknown}")
    if missing_meta and not subset:
        raise IngestError(src.path, f"--meta-columns names columns not in the file: {missing_meta}")
    absent = unknown + [m for m in missing_meta if m not in unknown]
    if absent:
        shown = ", ".join(absent[:12]) + (f" and {len(absent) - 12} more" if len(absent) > 12 else "")
        src.note(f"column metadata describes {len(absent)} column{'s' * (len(absent) != 1)} this file does not have "
                 f"(read as a subset of its columns): {shown}")
    declared_meta = {m.strip().lower() for m in cm["meta_columns"]}
    return cm, specs, declared_meta


def _candidate_columns(header, model_col, bench_col, specs, declared_meta, meta_cols):
    """``(index, name, sidecar spec)`` of the columns that may hold scores; declared metadata go to ``meta_cols``.

    A column without a name (a row index beside the model column, the empty column a trailing delimiter
    makes) is passed over: a score needs a dataset name, metadata a key.
    """
    for j, name in enumerate(header):
        if j == model_col or j == bench_col or not name:
            continue
        spec = specs.get(name, {})
        if spec.get("kind") == "metadata" or name.lower() in declared_meta:
            meta_cols.append(j)
            continue
        yield j, name, spec


def _read_wide(src, rows, header, lower, stem):
    from harness_ext.store.scales import infer_scale  # numpy: not imported to register the adapter

    cm, specs, declared_meta = _wide_column_meta(src, header, lower)
    mc = model_column(lower)
    bench_col = lower.index("benchmark") if "benchmark" in lower else None
    body = []
    for n, row in _body_rows(src, rows, header):
        if not row[mc].strip():
            raise IngestError(src.path, f"row {n} has no model name")
        body.append((n, row))
    if not body:
        raise IngestError(src.path, "no data rows")
    check_model_column(src, header, mc, [row[mc] for _, row in body])

    # Classify every column from its cells' types and its name: metadata, score (scale, percent), aggregate.
    from harness_ext.adapters.csv_columns import WideColumns, classify_wide

    cols, parsed = WideColumns(), {}
    for j, name, spec in _candidate_columns(header, mc, bench_col, specs, declared_meta, cols.meta):
        vals, pct, bad, marked = _parse_cells(src, name, [(n, row[j]) for n, row in body])
        if cols.add(src, j, name, spec, sum(v is not None for v in vals), bad, marked):
            parsed[j] = (vals, pct)
    meta_cols, score_cols, empty = cols.meta, cols.scores, cols.empty
    if not score_cols:
        raise IngestError(src.path, "wide CSV has no score columns (every column is model metadata)")
    import numpy as np

    values = np.array([[math.nan if v is None else v for v in parsed[j][0]] for j in score_cols]).T
    aggregates = classify_wide(src, header, cols, specs, stem, cm, values)
    names = _dataset_metrics(header, score_cols, specs, empty)

    out = []
    metas = []
    for i, (n, row) in enumerate(body):
        md = {}
        for j in meta_cols:
            try:
                v, _ = _parse(row[j])
            except ValueError:
                v = row[j].strip()
            if v is not None:
                md[header[j]] = v
        metas.append(md)
    for j in score_cols:
        name = header[j]
        spec = specs.get(name, {})
        vals, pct = parsed[j]
        hint = spec.get("scale") or ("percent" if pct or "%" in name else None)
        scale, lo, hi = infer_scale([v for v in vals if v is not None], name=name, metric=spec.get("metric") or "",
                                    declared_lo=spec.get("min"), declared_hi=spec.get("max"), hint=hint)
        hib = spec.get("higher_is_better")
        if hib is None and LOWER_NAME.search(name):
            hib = False
        rb, rb_src = _chance(src, cm, name, spec, lo, hi)
        for i, (n, row) in enumerate(body):
            if vals[i] is None:
                continue
            out.append(ResultRecord(
                model=row[mc].strip(), benchmark=row[bench_col].strip() if bench_col is not None else (cm["benchmark"] or stem),
                dataset=names[j][0], metric=names[j][1], primary=names[j][2], value=vals[i],
                higher_is_better=None if hib is None else bool(hib), random_baseline=rb, baseline_source=rb_src,
                min_score=lo, max_score=hi, scale=scale, aggregate=j in aggregates, model_metadata=metas[i],
                dataset_metadata={"column": name, "scale_detected": scale},
            ))
    return out


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
            raise IngestError(src.path, f"row {n}: {name!r} score is {cell!r}, not finite")
        vals.append(v)
        pct = pct or p
    return vals, pct, bad, marked


def check_model_column(src, header, mc, models) -> None:
    """Refuse an unnamed first column that holds only row numbers (``df.to_csv()`` of a table not indexed by
    model): its numbers are no model names, and the file names no model column."""
    if header[mc] or not all(re.fullmatch(r"\s*\d+\s*", m) for m in models):
        return
    raise IngestError(src.path, "no model column: the unnamed first column holds row numbers; name the model column "
                                f"one of {', '.join(MODEL_HEADERS + NAME_HEADERS)}")


def _dataset_metrics(header, score_cols, specs, empty=()) -> dict:
    """column -> (dataset, metric, primary).

    ``ipa_transliterate_2_exact_match`` and ``ipa_transliterate_2_bleu`` are two
    metrics of one task, not two datasets (a task reported with four metrics would
    otherwise weigh four times): columns ``<task>_<metric>`` (:data:`METRIC_SUFFIXES`)
    sharing a ``<task>`` with another column are that dataset's metrics, and the
    first in file order with a value is its primary one. A sidecar's ``dataset``/``metric`` win.
    The ``empty`` columns (no value in any row) count for the pairing, so a file's dataset names do not
    depend on which rows it has.
    """
    empty = set(empty)
    score_cols = sorted(set(score_cols) | empty)
    split = {}
    for j in score_cols:
        low = header[j].lower()
        suf = next((m for m in METRIC_SUFFIXES if low.endswith("_" + m) and len(low) > len(m) + 1), None)
        if suf:
            split[j] = (header[j][: -len(suf) - 1], header[j][-len(suf):])
    tasks: dict = {}
    for j, (task, _) in split.items():
        tasks.setdefault(task, []).append(j)
    out, seen = {}, set()
    for j in score_cols:
        spec = specs.get(header[j], {})
        if j in split and len(tasks[split[j][0]]) > 1:
            dataset, metric = split[j]
        else:
            dataset, metric = header[j], "score"
        dataset, metric = str(spec.get("dataset") or dataset), str(spec.get("metric") or metric)
        if j in empty:
            continue
        out[j] = (dataset, metric, dataset not in seen)
        seen.add(dataset)
    return out


def _chance(src, cm, name, spec, lo, hi):
    """Chance in the column's own units from the sidecar (``chance``) or a number of ``choices``."""
    if "chance" not in spec and "choices" not in spec:
        return None, None
    from harness_ext.store.scales import parse_chance

    where = f"column metadata for {name!r} ({cm['path'] or src.path})"
    if "choices" in spec:
        c, source = parse_chance({"choices": spec["choices"], "source": spec.get("source")}, where, "sidecar")
        if lo is None or hi is None:
            raise IngestError(cm["path"] or src.path, f"column {name!r}: 'choices' needs a bounded scale (give min/max or scale)")
        return lo + c * (hi - lo), source
    try:
        v = float(spec["chance"])
    except (TypeError, ValueError):
        raise IngestError(cm["path"] or src.path, f"column {name!r}: chance {spec['chance']!r} is not a number") from None
    return v, str(spec.get("source") or "csv sidecar")


@hookimpl
def harness_ext_adapters():
    yield Adapter(
        name="csv",
        description="CSV table: long (model,dataset,value[,metric,...]) or a wide leaderboard (model, one column per "
                    "score; text and size/date columns become model metadata, averages aggregates)",
        can_handle=can_handle,
        read=read,
    )
