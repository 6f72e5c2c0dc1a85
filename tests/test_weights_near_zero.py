"""``weights`` names the uniform score behind its largest relative shift when that score is near 0.

The data is ``tests/fixtures/csv_wild/helmet_agg_results_128k_slice.csv`` (princeton-nlp/HELMET at
53791058a16d705b990fc52135671fe901179606, ``data/agg_results_128k.csv``, 10 of its 64 rows; PROVENANCE.md beside it):
Llama-3-8B and its instruct model, 8k-context models run at 128k, score 0 on six of the seven categories. Their
relative shift under random weights (on the whole board, 4.98 for Llama-2-7B-32k) was printed beside "Ailem et al.
report up to 10%" with nothing saying it is relative to a uniform score of about 0.01.
"""

from __future__ import annotations

from pathlib import Path

from harness_ext.cli import main

SLICE = Path(__file__).parent / "fixtures" / "csv_wild" / "helmet_agg_results_128k_slice.csv"


def test_the_largest_relative_shift_of_a_near_zero_model_says_its_uniform_score(tmp_path, capsys):
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "-q", "--db", db, str(SLICE)]) == 0
    assert main(["weights", "--db", db, "--analyses", "random", "--draws", "2000", "--out", str(tmp_path / "w")]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("largest_score_shift "))
    assert "Llama-3-8B" in line and "(uniform score 0.0" in line, line
    assert "relative to a score near 0, a shift is large whatever the weights" in line, line


def test_weights_says_which_scale_its_scores_are_on(tmp_path, capsys):
    """The tables print chance-normalised 0-1 scores by default (0.945 for 5.5 WER on Open ASR): the header says so,
    and says the datasets' own units under ``--normalise none``."""
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "-q", "--db", db, str(SLICE)]) == 0
    capsys.readouterr()
    assert main(["weights", "--db", db, "--analyses", "none", "--out", str(tmp_path / "w")]) == 0
    assert "scores: each dataset normalised to 0-1 on its own scale" in capsys.readouterr().out
    assert main(["weights", "--db", db, "--analyses", "none", "--normalise", "none", "--out", str(tmp_path / "w")]) == 0
    assert "scores: each dataset in its own units (--normalise none)" in capsys.readouterr().out
