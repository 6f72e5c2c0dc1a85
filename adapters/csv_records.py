"""Leaderboard tables written as JSON records, read as the CSV tables they are.

Gradio leaderboards and pandas export a table as one JSON object per row: JSON Lines (``df.to_json(orient="records",
lines=True)``: the MTEB leaderboard's ``boards_data/<lang>/data_tasks/<type>/default.jsonl``) or one JSON array of
such objects (``orient="records"``). Each object is a row and its keys the header, so the table is read by the CSV
adapter's own rules (:mod:`harness_ext.adapters.csv_table`: a wide leaderboard, or a long table with ``model,
dataset, value``), from the rows :func:`record_rows` builds.

A leaderboard site's data file often wraps the array in an object and groups each row's values by what they are
(the MMMU leaderboard's ``leaderboard_data.json``: ``{"leaderboardData": [{"info": {"name": ..., "size": ...},
"validation": {"overall": "59.4", "artDesign": ...}, "test": {...}}, ...]}``). Such a file is read as the table it
is: an object whose one list holds the records (its other values scalars) is that list, and a record's group of
scalars becomes columns named ``group.key`` (``validation.overall``), but for the group's model name (``info.name``
read as ``name``) when no other key of the record is named so. One level only: a group holding an object or a list
is not a table's row.

Claimed only when the first record is *flat* (every value a string, number, boolean or null) once so read, names a
model column as a CSV header would (``model``, ``Model``, ``model_name``;
:func:`~harness_ext.adapters.csv_rules.model_column`) and holds a number (or a number written as a string: the MMMU
file's ``"59.4"``), and no key names an item (``item``, ``doc_id``, ...: per-item logs and item tables are read
elsewhere). lm-eval's sample logs, Every Eval Ever records and HELM's files hold objects nested deeper, so none of
them is claimed. A later record that is not a flat object so read, or a line that is not JSON, refuses the file
with its line.
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


def _scalar(v) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def _flat(obj) -> bool:
    return isinstance(obj, dict) and bool(obj) and all(_scalar(v) for v in obj.values())


def _flatten(rec):
    """A record with its groups of scalars spread into ``group.key`` columns (see the module's docstring), or the
    record itself when it is no such record (not an object, or a group holding an object or a list)."""
    if not isinstance(rec, dict) or not any(isinstance(v, dict) for v in rec.values()):
        return rec
    if not all(_scalar(v) or _flat(v) for v in rec.values()):
        return rec
    names = set(MODEL_HEADERS + NAME_HEADERS)
    bare = [k2 for v in rec.values() if isinstance(v, dict) for k2 in v if str(k2).strip().lower() in names]
    out = {}
    for k, v in rec.items():
        if not isinstance(v, dict):
            out[k] = v
            continue
        for k2, v2 in v.items():
            # the model's name kept bare, as a CSV header names it, when nothing else in the record is named so
            plain = str(k2).strip().lower() in names and bare.count(k2) == 1 and k2 not in rec
            out[k2 if plain else f"{k}.{k2}"] = v2
    return out


def _unwrap(doc):
    """The records of a JSON document: an array as it is, or the one array of objects an object holds beside
    scalars only (``{"leaderboardData": [...]}``); else None."""
    if isinstance(doc, list):
        return doc
    if not isinstance(doc, dict):
        return None
    lists = [v for v in doc.values() if isinstance(v, list)]
    if len(lists) != 1 or not lists[0] or not all(isinstance(r, dict) for r in lists[0]):
        return None
    if not all(_scalar(v) or isinstance(v, list) for v in doc.values()):
        return None
    return lists[0]


def _number(v) -> bool:
    """A number, or a string that is one (a site's data file writes ``"59.4"``)."""
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    if isinstance(v, str):
        try:
            return math.isfinite(float(v.strip().rstrip("%")))
        except ValueError:
            return False
    return False


def _first_record(src: SourceFile) -> Optional[dict]:
    """The file's first record, or None when it has none that can be read from its first megabyte."""
    try:
        with open(src.path, "rb") as fh:
            raw = fh.read(_FIRST_RECORD_BYTES)
        head = raw.decode("utf-8", "replace").lstrip("\ufeff").lstrip()
    except OSError:
        return None
    decoder = json.JSONDecoder()
    try:
        if src.suffix == ".jsonl":
            return _flatten(decoder.raw_decode(head.split("\n", 1)[0])[0])
        if head.startswith("{"):
            # a wrapping object is read whole: only when the file is within the first megabyte
            records = _unwrap(json.loads(head)) if len(raw) < _FIRST_RECORD_BYTES else None
            return _flatten(records[0]) if records else None
        if not head.startswith("["):
            return None
        return _flatten(decoder.raw_decode(head[1:].lstrip())[0])
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
    models = {k for k in rec if str(k).strip().lower() in set(MODEL_HEADERS + NAME_HEADERS)}
    return any(_number(v) for k, v in rec.items() if k not in models)


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
            data = _unwrap(json.loads(text))
            if data is None:
                raise IngestError(src.path, "a JSON table must be an array of records (objects), one per row, or an "
                                            "object holding one such array")
            out = list(enumerate(data, start=1))
    except json.JSONDecodeError as exc:
        raise IngestError(src.path, f"line {n or exc.lineno} is not JSON: {exc.msg}") from None
    except RecursionError:
        raise IngestError(src.path, "nested too deeply to be a table of records") from None
    what = "line" if src.suffix == ".jsonl" else "record"
    out = [(n, _flatten(rec)) for n, rec in out]
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
