"""``weights``' pairwise matrix and plot say when two models tie, and its plots' missing-glyph note is said once.

Real data: ``tests/fixtures/csv_wild/metabench_open_llm_leaderboard_slice.csv`` (its PROVENANCE.md), where
``0-hero/Matter-0.1-Slim-7B`` and ``0-hero/Matter-0.1-Slim-7B-A`` have the same score on every column, so neither
beats the other in any draw (0 both ways, unexplained before); and the Chinese board slice of ``test_plot_glyphs``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from harness_ext import report  # noqa: E402
from harness_ext.cli import main  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "csv_wild"
TIED = FIX / "metabench_open_llm_leaderboard_slice.csv"
CHINESE = FIX / "chinese_llm_benchmark_alldata_slice.csv"


def _weights(tmp_path, path, *extra):
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "-q", "--db", db, str(path)]) == 0
    assert main(["weights", "--db", db, "--out", str(tmp_path / "w"), "--draws", "2000", *extra]) == 0


def test_models_tied_on_every_column_are_named_under_the_pairwise_matrix(tmp_path, capsys):
    _weights(tmp_path, TIED, "--analyses", "random")
    out = capsys.readouterr().out
    assert ("1 pair tied in every draw (the same score on every column), so 0 both ways: 0-hero/Matter-0.1-Slim-7B "
            "= 0-hero/Matter-0.1-Slim-7B-A") in out
    assert "tied in some draws" not in out
    assert (tmp_path / "w" / "pairwise.png").stat().st_size > 0


def test_tied_pairs_of_a_result():
    import pandas as pd

    from harness_ext.methods.weighting import random_weight_analysis

    df = pd.read_csv(TIED).set_index("name")[["arc", "hellaswag", "mmlu", "truthfulqa", "winogrande", "gsm8k"]]
    res = random_weight_analysis(df, n_draws=500, random_state=0)
    every, some = res.tied_pairs()
    assert every == [("0-hero/Matter-0.1-Slim-7B", "0-hero/Matter-0.1-Slim-7B-A")]


@pytest.mark.skipif(bool(report.installed_fallback_fonts()), reason="a CJK font is installed: nothing to say")
def test_the_missing_glyph_note_is_said_once_for_all_the_plots(tmp_path, capsys):
    _weights(tmp_path, CHINESE)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "no installed font has" in line]
    assert len(lines) == 1, err  # was one per plot (4)
    assert lines[0].startswith("warning: 4 plots (rank_changes.png, pairwise.png, score_distribution.png, "
                               "size_curves.png): 1 label with 2 characters"), lines[0]


def test_the_tie_matrix_is_computed_once_for_the_text_and_the_plot(tmp_path, capsys, monkeypatch):
    """The pairwise plot drew its '=' cells and its title's tie note from the tie matrix the text had computed
    already, computing it again; now both read one computation, and they agree."""
    from harness_ext.methods.weighting import random_weights

    calls = []
    real = random_weights.pairwise_ties

    def counted(pairwise):
        calls.append(pairwise.shape)
        return real(pairwise)

    monkeypatch.setattr(random_weights, "pairwise_ties", counted)
    plotted = []
    real_plot = random_weights.plot_pairwise

    def plot_spy(res, path):
        plotted.append(res.tied_pairs())
        return real_plot(res, path)

    monkeypatch.setattr(random_weights, "plot_pairwise", plot_spy)
    _weights(tmp_path, TIED, "--analyses", "random", "--json", str(tmp_path / "w.json"))
    out = capsys.readouterr().out
    assert len(calls) == 1, calls  # was 2: the plot's, then the text's (the '=' cells a third, on percentages)
    assert plotted == [([("0-hero/Matter-0.1-Slim-7B", "0-hero/Matter-0.1-Slim-7B-A")], [])]
    assert "0-hero/Matter-0.1-Slim-7B = 0-hero/Matter-0.1-Slim-7B-A" in out
    assert (tmp_path / "w" / "pairwise.png").stat().st_size > 0
