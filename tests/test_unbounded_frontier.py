"""A dataset without a known scale (min-max over the observed models) at the frontier: a new model above every
training model keeps that distance, in its normalised input and in its prediction.

Real data: ScandEval's Icelandic NLG leaderboard (``tests/fixtures/csv_wild4/scandeval_icelandic_nlg.csv``, MIT; see
the PROVENANCE there). Its ``scala_is``, ``arc_is`` and ``winogrande_is`` have small negatives, so they are min-max;
with the five strongest models held out, the training models' ``scala_is`` reaches 8.45 and GPT-4o's is 51.1. Before,
the normalisation clipped a new model's cells at the training maximum and the predictor read the [0, 1] columns as
proportions: GPT-4o's subset cell ``arc_is`` 91.27 was read as the training maximum, and every prediction of
``scala_is`` stayed at or below 8.45.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness_ext.store.matrix import apply_normalisation, normalisation_params

BOARD = Path(__file__).parent / "fixtures" / "csv_wild4" / "scandeval_icelandic_nlg.csv"
STRONGEST = ["gpt-4o-2024-05-13 (few-shot, val)", "gpt-4-1106-preview (few-shot, val)", "gpt-4-0613 (few-shot, val)",
             "gpt-4o-mini-2024-07-18 (few-shot)", "google/gemma-2-9b-it (few-shot)"]


def _reduce_without_the_strongest(tmp_path):
    """The CLI loop a user runs: ingest the board, reduce without the five strongest, write their rows as a CSV."""
    from harness_ext.cli import main

    db, out = tmp_path / "s.duckdb", tmp_path / "red"
    assert main(["ingest", "-q", "--db", str(db), str(BOARD)]) == 0
    assert main(["reduce", "--db", str(db), "--benchmark", "scandeval_icelandic_nlg", "--exclude-models", *STRONGEST,
                 "--out", str(out), "--no-plot"]) == 0
    board = pd.read_csv(BOARD)
    new = tmp_path / "scandeval_icelandic_nlg.csv"
    board[board["model_id"].isin(STRONGEST)].to_csv(new, index=False)
    return main, out, new, board


@pytest.mark.slow
def test_the_strongest_models_are_not_capped_at_the_training_maximum(tmp_path):
    main, out, new, board = _reduce_without_the_strongest(tmp_path)
    manifest = json.loads((out / "manifest.json").read_text())
    clip = {d["name"]: d["normalisation"]["clip"] for d in manifest["datasets"]}
    assert clip == {"arc_is": False, "mim_gold_ner": True, "nqii": True, "rrn": True, "scala_is": False,
                    "winogrande_is": False}
    scales = manifest["prediction"]["predictor"]["params"]["scale_meta"]
    names = [d["name"] for d in manifest["datasets"]]
    assert {n for n, s in zip(names, scales) if s.get("scale") == "standardise"} == {"scala_is", "arc_is",
                                                                                      "winogrande_is"}
    assert main(["predict", "-m", str(out), str(new), "--no-lm-eval-results", "--json", str(tmp_path / "p.json")]) == 0
    cells = pd.DataFrame(json.loads((tmp_path / "p.json").read_text())["datasets"])
    train_max = board[~board["model_id"].isin(STRONGEST)][["scala_is", "arc_is"]].max()
    scala = cells[(cells["dataset"] == "scala_is") & ~cells["observed"]]
    assert scala["raw"].max() > train_max["scala_is"]  # 8.45; was at most that
    arc = cells[(cells["dataset"] == "arc_is") & cells["observed"]]
    if len(arc):  # a subset cell above every training model is read beyond 1, not as the training maximum
        assert arc["score"].max() > 1.0


def test_an_unbounded_column_is_not_clipped_a_bounded_one_is():
    params = pd.DataFrame({"lo": [-2.0, 0.0], "span": [10.0, 100.0], "flip": [False, False], "chance": [0.0, 0.0],
                           "how": ["min-max", "[0,100]"], "clip": [False, True], "transform": ["linear", "linear"],
                           "ref": [0.0, 0.0], "scale": ["unbounded", "percent"], "chance_source": [None, None]})
    Z = apply_normalisation(np.array([[18.0, 120.0], [-12.0, -5.0]]), params)
    assert Z[0, 0] == pytest.approx(2.0) and Z[1, 0] == pytest.approx(-1.0)  # (x + 2) / 10, beyond [0, 1]
    assert Z[0, 1] == 1.0 and Z[1, 1] == 0.0  # a percentage stays in its range
    raw = params.assign(lo=0.0, span=1.0, clip=False, how="raw", scale="raw")
    assert apply_normalisation(np.array([[18.0, 120.0]]), raw).tolist() == [[18.0, 120.0]]


def test_columns_without_a_known_scale_map_back_to_their_own_units():
    """Min-max columns are not clipped, and that is no sign of raw scores: they map back to their own units."""
    from harness_ext.methods.reduction.benchmark_score import affine_inverse
    from harness_ext.store.matrix import invert_normalisation

    params = pd.DataFrame({"lo": [-2.0, -1.0], "span": [10.0, 50.0], "flip": [False, True], "chance": [0.0, 0.0],
                           "how": ["min-max", "min-max, flipped"], "clip": [False, False],
                           "transform": ["linear", "linear"], "ref": [0.0, 0.0], "scale": ["unbounded", "unbounded"],
                           "chance_source": [None, None]})
    X = np.array([[18.0, 4.0], [-12.0, 60.0]])
    assert invert_normalisation(apply_normalisation(X, params), params) == pytest.approx(X)  # was the normalised Z
    offset, slope = affine_inverse({"lo": -2.0, "span": 10.0, "chance": 0.0, "clip": False, "transform": "linear"})
    assert (offset, slope) == (-2.0, 10.0)  # was (0, 1): the normalised score read as the raw one
    raw = params.assign(lo=0.0, span=1.0, flip=False, how="raw", scale="raw")
    assert invert_normalisation(X, raw).tolist() == X.tolist()


def test_a_board_of_columns_without_a_known_scale_is_predicted_in_its_own_units(tmp_path):
    """Every column of the board min-max: ``predict``'s raw cells and its full-benchmark score are on the board's
    scale (before, both read the normalised scores as raw ones: an aggregate of 29.5 against a truth of 64.7)."""
    from harness_ext.cli import main

    board = pd.read_csv(BOARD)[["model_id", "arc_is", "scala_is", "winogrande_is"]]
    path = tmp_path / "unbounded.csv"
    board.to_csv(path, index=False)
    strongest = STRONGEST[:3]
    db, out = tmp_path / "s.duckdb", tmp_path / "red"
    assert main(["ingest", "-q", "--db", str(db), str(path)]) == 0
    assert main(["reduce", "-q", "--db", str(db), "--budget", "1", "--exclude-models", *strongest, "--out", str(out),
                 "--no-plot"]) == 0
    new = tmp_path / "new.csv"
    board[board["model_id"].isin(strongest)].to_csv(new, index=False)
    assert main(["predict", "-q", "-m", str(out), str(new), "--no-lm-eval-results", "--json",
                 str(tmp_path / "p.json")]) == 0
    pred = json.loads((tmp_path / "p.json").read_text())
    norm = {d["name"]: d["normalisation"] for d in json.loads((out / "manifest.json").read_text())["datasets"]}
    cells = pd.DataFrame(pred["datasets"])
    hidden = cells[~cells["observed"]]
    assert len(hidden)
    for _, c in hidden.iterrows():
        n = norm[c["dataset"]]
        assert c["raw"] == pytest.approx(n["lo"] + n["span"] * c["score"], rel=1e-6)
    assert len(pred["aggregate"]) == 3
    for row in pred["aggregate"]:
        assert row["aggregate"] > 40  # the three strongest: truth 64.7-71.1; the bug gave about 30
