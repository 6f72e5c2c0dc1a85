"""Word error rates read raw (``--normalise none``) rank the best recogniser first in ``weights``, ``prowl`` and
``compare``, as in the default normalised matrix, and a note says which columns were negated.

The data is ``tests/fixtures/open_asr/open_asr_en_shortform_slice.csv``: 12 of the 85 rows of the Open ASR
Leaderboard's English short-form table (huggingface/open_asr_leaderboard at 0badcfff5480bcd8f32a08bc2b76debdf82a2958,
``scripts/data/25032026_en_shortform.csv``; PROVENANCE.md beside it), eight WER columns, lower is better. Before,
``weights --normalise none`` put facebook/mms-1b-fl102 (average WER 39.8, the worst) at the top of its tables, and
``prowl`` swapped its GREEDY MINIMUM and GREEDY MAXIMUM baselines. The same slice checks ``weights --schemes uniform``,
which crashed on its empty rank-change plot.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from harness_ext.cli import main

SLICE = Path(__file__).parent / "fixtures" / "open_asr" / "open_asr_en_shortform_slice.csv"
NOTE = "note: 8 lower-is-better columns read raw (--normalise none) negated so that higher is better"


@pytest.fixture(scope="module")
def asr_store(tmp_path_factory):
    db = tmp_path_factory.mktemp("asr") / "asr.duckdb"
    assert main(["ingest", "-q", "--db", str(db), str(SLICE)]) == 0
    return str(db)


def _weights_top(db, out, *extra):
    assert main(["weights", "--db", db, "--analyses", "schemes", "--schemes", "uniform,distance", "--out", str(out),
                 *extra]) == 0
    scores = pd.read_csv(out / "scheme_scores.csv", index_col="model")["uniform"]
    return scores.sort_values(ascending=False).index.tolist()


def test_weights_ranks_the_lowest_error_rate_first_on_raw_scores(asr_store, tmp_path, capsys):
    raw = _weights_top(asr_store, tmp_path / "raw", "--normalise", "none")
    err = capsys.readouterr().err
    assert err.count(NOTE) == 1 and "as weights ranks models: AMI WER, " in err, err
    assert raw[0] == "zoom/scribe_v1" and raw[-1] == "facebook/mms-1b-fl102"  # average WER 5.47 and 39.8
    assert raw == _weights_top(asr_store, tmp_path / "chance")  # the default, chance-normalised: the same order
    assert NOTE not in capsys.readouterr().err  # nothing negated there: the normalised matrix is already turned


def test_prowl_keeps_its_greedy_baselines_on_raw_scores(asr_store, tmp_path, capsys):
    tables = {}
    for normalise in ("none", "chance"):
        out = tmp_path / normalise
        assert main(["prowl", "--db", asr_store, "--normalise", normalise, "--similarity", "pearson",
                     "--n-random", "20", "--out", str(out)]) == 0
        tables[normalise] = pd.read_csv(out / "prowl_table.csv", index_col="method")
    assert capsys.readouterr().err.count(NOTE) == 1
    for baseline in ("GREEDY MINIMUM", "GREEDY MAXIMUM"):  # the hardest datasets first, then the easiest first
        assert tables["none"].loc[baseline, "S*"] == tables["chance"].loc[baseline, "S*"]


def test_weights_with_uniform_the_only_scheme_says_it_has_no_rank_changes(asr_store, tmp_path, capsys):
    # it crashed drawing an empty heatmap ("zero-size array to reduction operation maximum")
    assert main(["weights", "--db", asr_store, "--analyses", "schemes", "--schemes", "uniform",
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "no rank changes and no rank_changes.png: the schemes are uniform alone" in out, out
    assert "plot:" not in out and not (tmp_path / "rank_changes.png").exists()
    assert (tmp_path / "scheme_scores.csv").exists()
