"""A folder holding only lm-eval's printed table (``results.md``) once read as an empty folder; now the table is read
(adapters/lm_eval_table.py), and a folder of markdown files that are not lm-eval tables still says what it passed
over. fixtures/lm_eval_printed holds a real printed table (PROVENANCE.md)."""

from __future__ import annotations

from pathlib import Path

from harness_ext.cli import main

FIX = Path(__file__).parent / "fixtures" / "lm_eval_printed"


def test_a_folder_of_printed_tables_ingests(tmp_path, capsys):
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), str(FIX)]) == 0
    out = capsys.readouterr().out
    assert "1 file ingested (2 results)" in out  # results.md; PROVENANCE.md is no table and passed over


def test_markdown_that_is_no_table_is_passed_over_and_said(tmp_path, capsys):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "PROVENANCE.md").write_bytes((FIX / "PROVENANCE.md").read_bytes())
    (notes / "README.md").write_text("# results\n\n|Task|Score|\n|---|---|\n|boolq|0.7|\n", encoding="utf-8")
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), str(notes)]) != 0
    err = capsys.readouterr().err
    assert "no result files found" in err and "2 files passed over by their suffix (.md 2)" in err
    assert ".md files holding a results table lm-eval printed" in err


def test_an_empty_folder_says_only_that(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), str(tmp_path / "empty")]) != 0
    err = capsys.readouterr().err
    assert "no result files found" in err and "passed over" not in err
