"""reduce says which options it did not use, never drops them silently: ``--similarity`` with a selector that takes
no similarity measure (the default ``prediction_greedy``), the dataset-subset options with ``--items N``, the item
options without it; ``--weights`` with another ``--weighting`` is refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness_ext.cli import main


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A store of 24 models x 8 datasets (results) and 2 tasks x 30 items of 0/1 scores (item-level results)."""
    root = tmp_path_factory.mktemp("unused")
    rng = np.random.default_rng(3)
    X = np.clip(rng.random((24, 2)) @ rng.random((2, 8)) / 2 + 0.05 * rng.standard_normal((24, 8)), 0.01, 0.99)
    rows = ["model,dataset,value"] + [f"m{i},d{j},{X[i, j]:.4f}" for i in range(24) for j in range(8)]
    (root / "scores.csv").write_text("\n".join(rows) + "\n")
    skill = rng.random(24)
    items = ["model,task,item,correct"] + [f"m{i},t{t},{k},{int(skill[i] > rng.random())}"
                                           for i in range(24) for t in range(2) for k in range(30)]
    (root / "items.csv").write_text("\n".join(items) + "\n")
    db = root / "s.duckdb"
    assert main(["ingest", "-q", "--db", str(db), str(root / "scores.csv")]) == 0
    items_db = root / "items.duckdb"
    assert main(["ingest", "-q", "--db", str(items_db), str(root / "items.csv")]) == 0
    return db, items_db


def _reduce(db, tmp_path, *extra):
    js = tmp_path / "r.json"
    rc = main(["reduce", "--db", str(db), "--budget", "2", "--n-random", "20", "--n-random-subsets", "10",
               "--no-plot", "--out", str(tmp_path / "r"), "--json", str(js), *extra])
    return rc, (json.loads(js.read_text()) if js.exists() else None)


@pytest.mark.slow
def test_similarity_with_the_default_selector_is_said_unused_and_not_named_as_a_plugin(store, tmp_path, capsys):
    rc, doc = _reduce(store[0], tmp_path, "--similarity", "jensen_shannon")
    err = capsys.readouterr().err
    assert rc == 0
    assert "similarity jensen_shannon (--similarity) not used: the selector prediction_greedy takes no" in err
    manifest = doc["manifest"]
    assert any("jensen_shannon (--similarity) not used" in w for w in doc["warnings"])
    assert manifest["selection"]["similarity"] is None
    assert "similarity_measures" not in {p["kind"] for p in manifest["tool"]["plugins"]}
    # A coverage selector uses it, with no warning, and the manifest names it.
    rc, doc = _reduce(store[0], tmp_path, "--selector", "greedy_coverage", "--similarity", "cosine")
    assert rc == 0 and "not used" not in capsys.readouterr().err
    assert doc["manifest"]["selection"]["similarity"] == "cosine"
    assert {"kind": "similarity_measures", "name": "cosine"}.items() <= next(
        p for p in doc["manifest"]["tool"]["plugins"] if p["kind"] == "similarity_measures").items()


@pytest.mark.slow
def test_python_reduce_warns_on_an_unused_similarity(store):
    import harness_ext as hx

    matrix = hx.load_matrix(store[0])
    result = hx.reduce(matrix, budget=2, similarity="cosine", n_random=20, n_random_subsets=10)
    assert any("similarity cosine (--similarity) not used" in w for w in result.warnings)
    assert not any("not used" in w for w in hx.reduce(matrix, budget=2, n_random=20, n_random_subsets=10).warnings)
    with pytest.raises(hx.HarnessExtError, match="cannot be given with weighting='distance'"):
        hx.reduce(matrix, weights="w.json", weighting="distance")


def test_item_options_without_items_are_said_unused(store, tmp_path, capsys):
    rc, _ = _reduce(store[0], tmp_path, "--item-strata", "3", "--item-estimator", "sample_mean")
    assert rc == 0
    assert "--item-estimator, --item-strata not used: the item options apply with --items N" in capsys.readouterr().err


def test_dataset_options_with_items_are_said_unused(store, tmp_path, capsys):
    js = tmp_path / "i.json"
    rc = main(["reduce", "--db", str(store[1]), "--items", "10", "--budget", "2", "--similarity", "cosine",
               "--normalise", "none", "--selector", "greedy_coverage", "--item-strata", "4", "--no-plot",
               "--out", str(tmp_path / "i"), "--json", str(js)])
    assert rc == 0
    line = ("--budget, --selector, --similarity, --normalise, --item-strata not used: --items N runs N items of "
            "every task")
    assert line in capsys.readouterr().err
    assert any(line in w for w in json.loads(js.read_text())["warnings"])


def test_weights_with_another_weighting_is_refused(store, tmp_path, capsys):
    rc, _ = _reduce(store[0], tmp_path, "--weighting", "distance", "--weights", str(tmp_path / "w.json"))
    assert rc == 1
    assert "gives the weights itself (--weighting user); it cannot be given with --weighting distance" in (
        capsys.readouterr().err)


def test_a_coverage_selector_without_similarity_uses_its_default_in_the_calibration_too(store):
    """With no similarity given, the calibration's reselection ran greedy_coverage with pounce's default (Minkowski)
    while the selection used the selector's own (Pearson): a different expected error for the same subset."""
    import harness_ext as hx

    matrix = hx.load_matrix(store[0])
    opts = dict(budget=2, selector="greedy_coverage", n_random=20, n_random_subsets=10)
    default, pearson = hx.reduce(matrix, **opts), hx.reduce(matrix, similarity="pearson", **opts)
    assert default.manifest["selection"]["similarity"] == "pearson"
    assert default.expected_error == pearson.expected_error
