"""``predict`` given a new model's CSV whose subset columns hold no value (empty or NaN in every row): the columns are
the subset's datasets without scores, and the error names them and says what to do. It said the table had no score
column and to declare one of them ``kind: dataset`` with ``--column-meta``, which predict does not take and which
could not give an empty column a score.

Real data: ScandEval's Icelandic NLG leaderboard (``tests/fixtures/csv_wild4/scandeval_icelandic_nlg.csv``, MIT; see
the PROVENANCE there), one model held out of the reduction and its row's subset columns written as its own CSV, emptied.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

BOARD = Path(__file__).parent / "fixtures" / "csv_wild4" / "scandeval_icelandic_nlg.csv"
NEW = "gpt-4o-2024-05-13 (few-shot, val)"


@pytest.fixture(scope="module")
def reduced(tmp_path_factory):
    from harness_ext.cli import main

    tmp = tmp_path_factory.mktemp("empty_subset")
    db, out = tmp / "s.duckdb", tmp / "red"
    assert main(["ingest", "-q", "--db", str(db), str(BOARD)]) == 0
    assert main(["reduce", "-q", "--db", str(db), "--budget", "2", "--n-random", "20", "--selector", "greedy_coverage",
                 "--exclude-models", NEW, "--out", str(out), "--no-plot"]) == 0
    subset = [d["name"].split("/", 1)[-1] for d in json.loads((out / "manifest.json").read_text())["subset"]]
    return tmp, out, subset


@pytest.mark.parametrize("blank", ["", "NaN"])
def test_predict_names_the_subset_datasets_without_a_score(reduced, capsys, blank):
    from harness_ext.cli import main

    tmp, out, subset = reduced
    board = pd.read_csv(BOARD, dtype=str, keep_default_na=False)
    row = board.loc[board["model_id"] == NEW, ["model_id", *subset]].copy()  # the subset's columns, as a user writes
    row[subset] = blank
    new = tmp / f"new_model_{blank or 'empty'}.csv"
    row.to_csv(new, index=False)
    capsys.readouterr()
    assert main(["predict", "-m", str(out), str(new), "--no-lm-eval-results"]) == 1
    err = capsys.readouterr().err
    assert f"no score on the subset's datasets {', '.join(subset)}: their columns hold no value in any row" in err, err
    assert "give the new model's scores on them" in err
    assert "kind: dataset" not in err and "--column-meta" not in err
