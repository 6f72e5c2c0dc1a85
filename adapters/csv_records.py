"""Leaderboard tables written as JSON records, read as the CSV tables they are.

Gradio leaderboards and pandas export a table as one JSON object per row: JSON Lines (``df.to_json(orient="records",
lines=True)``: the MTEB leaderboard's ``boards_data/<lang>/data_tasks/<type>/default.jsonl``) or one JSON array of
such objects (``orient="records"``). Each object is a row and its keys the header, so the table is read by the CSV
adapter's own rules (:mod:`harness_ext.adapters.csv_table`: a wide leaderboard, or a long table with ``model,
dataset, value``), from the rows :func:`record_rows` builds.

Claimed only when the first record is *flat* (every value a string, number, boolean or null), names a model column
as a CSV header would (``model``, ``Model``, ``model_name``; :func:`~harness_ext.adapters.csv_rules.model_column`)
and holds a number, and no key names an item (``item``, ``doc_id``, ...: per-item logs and item tables are read
elsewhere). lm-eval's sample logs, Every Eval Ever records and HELM's files hold nested objects, so none of them is
claimed. A later record that is not a flat object, or a line that is not JSON, refuses the file with its line.
"""

from __future__ import annotations

import json
import math
from typing import Optional

from harness_ext.adapters.csv_rules import MODEL_HEADERS, NAME_HEADERS
from harness_ext.errors import IngestError
from harness_ext.types import SourceFile

__all__ = ["RECORD_SUFFIXES", "is_record_table", "record_rows"]

RECORD_SUFFIXES = (".jsonl", ".json")
#: Keys that make a record an item's score (item tables, per-sample logs), not a leaderboard row.
_ITEM_KEYS = frozenset({"item", "item_id", "doc_id", "question_id", "sample_id", "instance_id"})
#: The most of a file read to judge its first record (a JSON Lines line, or the first object of an array).
_FIRST_RECORD_BYTES = 1 << 20


def _flat(obj) -> bool:
    return isinstance(obj, dict) and bool(obj) and all(
        v is None or isinstance(v, (str, int, float, bool)) for v in obj.values())


def _first_record(src: SourceFile) -> Optional[dict]:
    """The file's first record, or None when it has none that can be read from its first megabyte."""
    try:
        with open(src.path, "rb") as fh:
            head = fh.read(_FIRST_RECORD_BYTES).decode("utf-8", "replace").lstrip("\ufeff").lstrip()
    except OSError:
        return None
    decoder = json.JSONDecoder()
    try:
        if src.suffix == ".jsonl":
            return decoder.raw_decode(head.split("\n", 1)[0])[0]
        if not head.startswith("["):
            return None
        return decoder.raw_decode(head[1:].lstrip())[0]
    except (ValueError, RecursionError):
        return None


def is_record_table(src: SourceFile) -> bool:
    """Whether ``src`` is a leaderboard table as JSON records (see the module's docstring)."""
    if src.suffix not in RECORD_SUFFIXES:
        return False
    rec = _first_record(src)
    if not _flat(rec):
        return False
    lower = {str(k).strip().lower() for k in rec}
    if lower & _ITEM_KEYS or not lower & set(MODEL_HEADERS + NAME_HEADERS):
        return False
    return any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in rec.values())


def _cell(v) -> str:
    """A record's value as a CSV cell: null is empty, a number as Python writes it, a boolean as text."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else str(v)
    return str(v)


def _records(src: SourceFile) -> list:
    """``(line, record)`` of every record of the file; a record that is not a flat object is an error naming it."""
    text = src.text.lstrip("\ufeff")
    n = 0
    try:
        if src.suffix == ".jsonl":
            out = []
            for n, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    out.append((n, json.loads(line)))
        else:
            data = json.loads(text)
            if not isinstance(data, list):
                raise IngestError(src.path, "a JSON table must be an array of records (objects), one per row")
            out = list(enumerate(data, start=1))
    except json.JSONDecodeError as exc:
        raise IngestError(src.path, f"line {n or exc.lineno} is not JSON: {exc.msg}") from None
    except RecursionError:
        raise IngestError(src.path, "nested too deeply to be a table of records") from None
    what = "line" if src.suffix == ".jsonl" else "record"
    for n, rec in out:
        if not _flat(rec):
            why = ("not an object" if not isinstance(rec, dict) else "an empty object" if not rec else
                   f"key {next(k for k, v in rec.items() if isinstance(v, (dict, list)))!r} holds a "
                   f"{'list' if isinstance(next(v for v in rec.values() if isinstance(v, (dict, list))), list) else 'object'}")
            raise IngestError(src.path, f"{what} {n} is not a flat record of a table ({why})")
    if not out:
        raise IngestError(src.path, "no data rows")
    return out


def record_rows(src: SourceFile) -> list:
    """The table's rows as the CSV reader takes them: the header (every key, in the order the records first give
    it), then one row of cells per record (a key a record lacks is an empty cell)."""
    records = [rec for _, rec in _records(src)]
    header: dict = {}
    for rec in records:
        for k in rec:
            header.setdefault(str(k), None)
    keys = list(header)
    return [keys] + [[_cell(rec.get(k)) for k in keys] for rec in records]
