"""The analyses name the benchmark of a store that holds one, instead of "all benchmarks".

The data is ``tests/fixtures/open_asr/open_asr_en_shortform_slice.csv`` (12 rows of the Open ASR Leaderboard's
English short-form table, huggingface/open_asr_leaderboard at 0badcfff5480bcd8f32a08bc2b76debdf82a2958; PROVENANCE.md
beside it): ingested alone, it is the store's one benchmark, ``open_asr_en_shortform_slice``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_ext.cli import main

SLICE = Path(__file__).parent / "fixtures" / "open_asr" / "open_asr_en_shortform_slice.csv"


@pytest.fixture(scope="module")
def asr_store(tmp_path_factory):
    db = tmp_path_factory.mktemp("asr") / "asr.duckdb"
    assert main(["ingest", "-q", "--db", str(db), str(SLICE)]) == 0
    return str(db)


@pytest.mark.parametrize("command, extra, title", [
    ("stalk", ["--axis", "datasets"], "stalk: 12 models x 8 datasets (open_asr_en_shortform_slice); "),
    ("prowl", ["--similarity", "pearson", "--n-random", "20"],
     "prowl: 12 models x 8 datasets (open_asr_en_shortform_slice); "),
    ("weights", ["--analyses", "none"], "store matrix (open_asr_en_shortform_slice): 12 models x 8 columns"),
])
def test_an_analysis_of_a_one_board_store_names_the_board(asr_store, tmp_path, capsys, command, extra, title):
    assert main([command, "--db", asr_store, "--out", str(tmp_path), *extra]) == 0
    out = capsys.readouterr().out
    assert out.startswith(title), out[:300]
    assert "all benchmarks" not in out
