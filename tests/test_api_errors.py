"""The Python API's refusals say what is wrong (were raw ValueError, TypeError and IndexError, or silence)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import harness_ext as hx
from harness_ext.errors import HarnessExtError


@pytest.fixture(scope="module")
def reduced():
    rng = np.random.default_rng(0)
    ability = rng.normal(size=(12, 1))
    scores = 1 / (1 + np.exp(-(ability @ rng.normal(size=(1, 8)) + rng.normal(scale=0.3, size=(12, 8)))))
    frame = pd.DataFrame(scores, index=[f"m{i}" for i in range(12)], columns=[f"d{j}" for j in range(8)])
    return hx.reduce(frame, budget=3, seed=0, n_random=20, n_random_subsets=10), frame


def test_a_seed_that_is_no_integer_is_named(reduced):
    _, frame = reduced
    with pytest.raises(HarnessExtError, match="seed must be an integer.*'x'"):
        hx.reduce(frame, seed="x")


def test_predict_without_results_says_what_it_takes(reduced):
    res, _ = reduced
    for bad in (None, [], 3, [None]):
        with pytest.raises(HarnessExtError, match="predict\\(\\) takes the new model's results"):
            hx.predict(res, bad)


def test_plot_of_an_unknown_model_names_the_known_ones(reduced):
    res, frame = reduced
    prediction = hx.predict(res, frame.loc["m0", res.subset].to_dict())
    with pytest.raises(HarnessExtError, match="model='nope'.*new_model"):
        prediction.plot(model="nope")


def test_predict_level_hint_only_for_a_percentage(reduced):
    res, frame = reduced
    scores = frame.loc["m0", res.subset].to_dict()
    with pytest.raises(HarnessExtError) as err:
        hx.predict(res, scores, level=1.5)
    assert "percentage" not in str(err.value)
    with pytest.raises(HarnessExtError, match="use 0.9"):
        hx.predict(res, scores, level=90)


def test_ingest_of_nothing_that_exists_is_an_error_and_creates_no_store(tmp_path):
    store = tmp_path / "s.duckdb"
    with pytest.raises(HarnessExtError, match="no such file or folder: /nonexistent/path"):
        hx.ingest("/nonexistent/path", store=store)
    assert not store.exists()


def test_to_json_is_the_commands_json_shape(reduced):
    """docs/guide/analyses.md: to_json() gives the --json shape {"command", "title", "summary", "tables", "warnings"}."""
    import json

    res, frame = reduced
    shape = ["command", "title", "summary", "tables", "warnings"]
    doc = json.loads(res.to_json())
    assert list(doc)[:5] == shape and doc["command"] == "reduce" and doc["warnings"] == res.warnings
    assert {"manifest", "out", "written"} <= set(doc)
    pred = hx.predict(res, frame.loc["m0", res.subset].to_dict())
    doc = json.loads(pred.to_json())
    assert list(doc)[:5] == shape and doc["command"] == "predict" and {"aggregate", "datasets"} <= set(doc)


def test_a_local_data_folder_that_is_none_is_named_by_the_api_and_the_command(tmp_path, capsys):
    """One check of the --local-data folders, named as each caller spells the option, before any work."""
    from harness_ext.cli import main

    missing = tmp_path / "no_such_folder"
    with pytest.raises(HarnessExtError, match=f"local_data {missing}: not a folder"):
        hx.reduce_items(tmp_path / "s.duckdb", 5, local_data=[missing])
    assert main(["reduce", "--db", str(tmp_path / "s.duckdb"), "--items", "5", "--local-data", str(missing)]) != 0
    assert f"--local-data {missing}: not a folder" in capsys.readouterr().err
