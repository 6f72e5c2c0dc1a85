"""A score column that is the plain mean of a group of the others (not all of them) is reported as a hint, with
its members, and still stored as a dataset (as a whole-row mean is): ScandEval's per-language scores.

Real data: ``tests/fixtures/csv_wild4/scandeval_mainland_scandinavian_nlu_head45.csv`` (MIT; PROVENANCE there).
Composed values only for the negative case (unrelated columns) and the arithmetic of the rounding.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness_ext.adapters.csv_columns import group_mean_hints

BOARD = Path(__file__).parent / "fixtures" / "csv_wild4" / "scandeval_mainland_scandinavian_nlu_head45.csv"


def test_scandevals_language_scores_are_named_as_means_of_their_tasks(tmp_path, capsys):
    from harness_ext.cli import main

    db = tmp_path / "s.duckdb"
    assert main(["ingest", "-v", "--db", str(db), str(BOARD)]) == 0
    said = capsys.readouterr()
    text = said.out + said.err
    assert ("da_score equals the mean of 4 other score columns (dansk, angry_tweets, scala_da, scandiqa_da) on every "
            "complete row: stored as a dataset") in text
    assert "sv_score equals the mean of 4 other score columns (suc3, swerec, scala_sv, scandiqa_sv)" in text
    assert main(["matrix", "--db", str(db), "-o", str(tmp_path / "m.csv")]) == 0
    assert "da_score" in (tmp_path / "m.csv").read_text().splitlines()[0]  # a hint: still a dataset


def test_unrelated_columns_and_a_rounded_group_mean():
    rng = np.random.default_rng(0)
    X = np.round(rng.uniform(20, 90, size=(40, 6)), 2)
    assert group_mean_hints([f"c{j}" for j in range(6)], X) == []
    group = np.round(X[:, [0, 2, 3]].mean(axis=1), 2)  # printed to two decimals, as leaderboards print it
    names = [f"c{j}" for j in range(6)] + ["g"]
    assert group_mean_hints(names, np.c_[X, group]) == [("g", ["c0", "c2", "c3"])]
    # too few rows for an exact fit to mean anything
    assert group_mean_hints(names, np.c_[X, group][:10]) == []
