"""A folder holding only lm-eval's printed table (``results.md``) read as an empty folder: ``ingest`` said "no result
files found" and nothing about the file it passed over by its suffix. fixtures/lm_eval_printed holds a real printed table
(PROVENANCE.md)."""

from __future__ import annotations

from pathlib import Path

from harness_ext.cli import main

FIX = Path(__file__).parent / "fixtures" / "lm_eval_printed"


def test_a_folder_of_printed_tables_says_what_was_passed_over(tmp_path, capsys):
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), str(FIX)]) != 0
    err = capsys.readouterr().err
    assert "no result files found" in err and "2 files passed over by their suffix (.md 2)" in err
    assert "lm-eval's printed tables are not read" in err and ".json" in err


def test_an_empty_folder_says_only_that(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), str(tmp_path / "empty")]) != 0
    err = capsys.readouterr().err
    assert "no result files found" in err and "passed over" not in err
