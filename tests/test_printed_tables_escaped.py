"""Printed tables stay aligned when a name holds a format character.

The one table formatter (:func:`harness_ext.report.format_table`) writes a name's control and format characters as
escapes (a right-to-left override U+202E as the six characters ``\\u202e``) before it measures the columns, so the
row holding such a name is as wide as the others; printing the table through the command line's escaping again
leaves it as it is, and the ``--json`` document keeps the name as it is.

Real data: ``tests/fixtures/csv_wild/metabench_open_llm_leaderboard_slice.csv`` (its PROVENANCE.md), with one
model and one dataset renamed here to hold a right-to-left override, as a hostile results file could.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_ext.cli import main
from harness_ext.report import MAX_CELL, format_table
from harness_ext.safe_output import shown_text

SLICE = Path(__file__).parent / "fixtures" / "csv_wild" / "metabench_open_llm_leaderboard_slice.csv"
MODEL, DATASET = "0-hero/Matter-0.1-7B", "hellaswag"
BAD_MODEL, BAD_DATASET = "0-hero/Matter\u202e-0.1-7B", "hella\u202eswag"
SHOWN_MODEL = "0-hero/Matter\\u202e-0.1-7B"


def _frame(rename: bool = True):
    import pandas as pd

    frame = pd.read_csv(SLICE)[["name", "arc", DATASET, "mmlu"]]
    if rename:
        frame = frame.replace({"name": {MODEL: BAD_MODEL}}).rename(columns={DATASET: BAD_DATASET})
    return frame


def _same_width(lines) -> None:
    assert len(lines) > 2 and len({len(line) for line in lines}) == 1, "\n".join(lines)


def test_format_table_escapes_names_before_measuring_columns():
    frame = _frame()
    for text in (format_table(frame, index=False), format_table(frame.set_index("name"))):
        assert "\u202e" not in text and SHOWN_MODEL in text and "hella\\u202eswag" in text
        _same_width(text.splitlines())
        assert shown_text(text) == text  # printing it through the command line's escaping changes nothing
    assert "\u202e" in frame["name"].iloc[0] and BAD_DATASET in frame  # the caller's frame is left as it was


def test_row_tables_without_pandas_are_escaped_alike():
    rows = [{"kind": "model", "name": n, "status": "ok"} for n in _frame()["name"]]
    text = format_table(rows, index=False)
    lines = text.splitlines()
    assert "\u202e" not in text and shown_text(text) == text
    assert len({line.index(" ok") for line in lines[1:]}) == 1  # the right-aligned name column ends in one place
    assert any(SHOWN_MODEL in line for line in lines)


def test_a_shortened_name_never_splits_an_escape():
    name = "org/" + "x" * 30 + "\u202e" + "y" * MAX_CELL  # the override in the middle, which the cut takes out
    text = format_table([{"name": name, "score": "1"}, {"name": "short", "score": "2"}], index=False)
    assert "\u202e" not in text and "\\u20" not in text and "…" in text and "1 cell over" in text
    kept = "z" * (MAX_CELL - 5) + "\u202e"  # kept whole: its escape makes it longer than the widest cell
    text = format_table([{"name": kept, "score": "1"}, {"name": "short", "score": "2"}], index=False)
    assert "z\\u202e 1" in text and "shortened" not in text


def test_ordinary_names_print_as_before():
    frame = _frame(rename=False).dropna().set_index("name")  # format_table leaves a missing score blank
    as_text = frame.assign(**{c: frame[c].map("{:.3f}".format) for c in frame})
    assert len(frame) > 5 and format_table(frame) == as_text.to_string()  # pandas' own layout, nothing added


def _hostile_store(tmp_path) -> str:
    """The slice with a model and a dataset renamed to hold an RTL override, ingested (``test_weights_output`` too)."""
    text = SLICE.read_text(encoding="utf-8")
    assert text.count(MODEL + ",") == 2 and text.count(DATASET) == 1  # the name and its link; the header
    board = tmp_path / "board.csv"
    board.write_text(text.replace(MODEL + ",", BAD_MODEL + ",", 1).replace(DATASET, BAD_DATASET), encoding="utf-8")
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "-q", "--db", db, str(board)]) == 0
    return db


def test_models_prints_an_aligned_escaped_table_and_json_keeps_the_name(tmp_path, capsys):
    db = _hostile_store(tmp_path)
    capsys.readouterr()
    assert main(["models", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "\u202e" not in out and SHOWN_MODEL in out
    _same_width(out.splitlines()[1:])  # the line above the table counts the names
    assert main(["models", "--db", db, "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert BAD_MODEL in {row["name"] for row in doc["tables"]["models"]}


def test_weights_table_rows_keep_one_width(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    db = _hostile_store(tmp_path)
    capsys.readouterr()
    assert main(["weights", "--db", db, "--analyses", "schemes", "--out", str(tmp_path / "w")]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("== weighted score and rank change")) + 1
    table = lines[start:start + 12]  # the header, the index name's line and the 10 models
    assert any(SHOWN_MODEL in line for line in table) and not table[-1].startswith("(")
    _same_width(table)
