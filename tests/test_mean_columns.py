"""``reduce`` says when a subset dataset is all but exactly the mean of the others
(:mod:`harness_ext.methods.reduction.mean_columns`).

Real file: the shared benchbench ``livebench_240829_holistic.csv`` (LiveBench's overall score and six categories).
Saved under another name, its overall column is stored as a dataset (with an ingest hint), and ``reduce --budget 3``
chose it; the manifest now warns. No column of the 40 shared benchbench leaderboards is said to be a mean.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import SHARED_DATA, require
from harness_ext.methods.reduction.mean_columns import MEAN_LIKE_UNEXPLAINED, mean_like_columns, mean_like_note
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix

BOARDS = SHARED_DATA / "benchbench" / "leaderboards"


def _matrices(paths):
    with Store.open(":memory:") as s:
        ingest_paths(s, [str(p) for p in paths], show_progress=False)
        for b in sorted(s.benchmarks()["benchmark"]):
            yield b, load_matrix(s, MatrixQuery(benchmarks=(b,)))


def test_livebench_overall_score_under_another_name_is_said_in_the_reduction(tmp_path):
    board = require(BOARDS / "livebench_240829_holistic.csv")
    p = tmp_path / "scores.csv"
    p.write_bytes(board.read_bytes())
    [(_, df)] = list(_matrices([p]))
    assert "livebench_240725" in df.columns
    note = mean_like_note(df, ["livebench_240725", "LB_IF"])
    assert note.startswith("subset dataset livebench_240725 is all but exactly the mean of the other 6 datasets on "
                           "the 70 models")
    assert mean_like_note(df, ["LB_IF", "LB_Language"]) is None


def test_no_shared_leaderboard_column_is_said_to_be_a_mean():
    require(BOARDS)
    for name, df in _matrices(sorted(BOARDS.glob("*.csv"))):
        assert mean_like_columns(df.to_numpy(dtype=float), range(df.shape[1])) == [], name


def test_the_rule_needs_complete_rows_and_other_columns():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (30, 5))
    mean = X.mean(axis=1, keepdims=True)
    [(j, unexplained, rows)] = mean_like_columns(np.hstack([X, mean]), range(6))
    assert (j, rows) == (5, 30) and unexplained <= MEAN_LIKE_UNEXPLAINED
    assert mean_like_columns(np.hstack([X[:9], mean[:9]]), range(6)) == []  # 9 complete rows: too few
    assert mean_like_columns(np.hstack([X[:, :2], X[:, :2].mean(axis=1, keepdims=True)]), range(3)) == []
    noisy = mean + rng.normal(0, 0.05, mean.shape)  # a real dataset correlated with the rest: not a mean
    assert mean_like_columns(np.hstack([X, noisy]), range(6)) == []
