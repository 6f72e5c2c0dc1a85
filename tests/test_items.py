"""Anchor items (issue 16): the weighted anchor estimate of a task score, its cross-validated error, determinism."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from harness_ext.errors import HarnessExtError
from harness_ext.methods.reduction.items import anchor_error, anchor_items
from harness_ext.methods.reduction.manifest import validate_manifest


def _responses(n_items=200, n_models=30, seed=0):
    rng = np.random.default_rng(seed)
    ability, difficulty = rng.normal(size=n_models), rng.normal(size=n_items)
    p = 1 / (1 + np.exp(-(ability[None, :] - difficulty[:, None])))
    return (rng.random((n_items, n_models)) < p).astype(float)


def test_anchors_estimate_task_scores_better_than_random_items():
    P = _responses()
    idx, w = anchor_items(P, 20, random_state=0)
    assert len(idx) == len(w) <= 20 and np.isclose(w.sum(), 1) and (np.diff(idx) > 0).all()
    again = anchor_items(P, 20, random_state=0)
    assert (again[0] == idx).all() and np.allclose(again[1], w)
    err = anchor_error(P, 20, random_state=0)
    rng = np.random.default_rng(1)
    truth = P.mean(axis=0)
    rand = [np.sqrt(np.mean((P[rng.choice(len(P), 20, replace=False)].mean(axis=0) - truth) ** 2)) for _ in range(50)]
    assert 0 < err < np.mean(rand)


def test_missing_answers_are_filled_not_fatal():
    P = _responses()
    P[::7, 3] = np.nan
    idx, w = anchor_items(P, 10)
    assert len(idx) == 10 and np.isfinite(anchor_error(P, 10))


@pytest.fixture(scope="module")
def small_manifest(tmp_path_factory):
    """A real reduction of a small lm-eval population (the helper of tests/test_reduced_folder.py)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_reduced_folder import _write_population

    from harness_ext.cli import main

    root = tmp_path_factory.mktemp("items")
    _write_population(root / "pop", n_models=12)
    assert main(["ingest", "--db", str(root / "s.duckdb"), str(root / "pop"), "-q"]) == 0
    assert main(["reduce", "--db", str(root / "s.duckdb"), "--budget", "2", "--n-random", "20",
                 "--n-random-subsets", "10", "--format", "json", "--no-plot", "--out", str(root / "red")]) == 0
    return json.loads((root / "red" / "manifest.json").read_text())


def _with_items(m, err=0.05, n=3):
    m = copy.deepcopy(m)
    first = m["subset"][0]["name"]
    m["items"] = {"method": "test", "n_per_task": n, "random_state": 0,
                  "tasks": {first: {"dataset": first, "metric": "acc", "doc_ids": list(range(n)),
                                    "weights": [1 / n] * n, "cv_rmse": err, "cv_rmse_normalised": err}}}
    return m


def test_tampered_item_blocks_are_refused(small_manifest):
    validate_manifest(_with_items(small_manifest))
    bad = _with_items(small_manifest)
    bad["items"]["tasks"][small_manifest["subset"][0]["name"]]["weights"].pop()
    with pytest.raises(HarnessExtError, match="equally long"):
        validate_manifest(bad)
    bad = _with_items(small_manifest)
    bad["items"]["tasks"][small_manifest["subset"][0]["name"]]["dataset"] = "elsewhere"
    with pytest.raises(HarnessExtError, match="not in the subset"):
        validate_manifest(bad)


@pytest.mark.slow
def test_anchor_estimates_widen_the_intervals_they_reach(small_manifest):
    """The anchors' error widens the observed cell (also on the raw scale), the predicted cells and the aggregate."""
    import harness_ext as hx

    tm = small_manifest["training_matrix"]
    subset = [s["name"] for s in small_manifest["subset"]]
    scores = {n: 0.6 for n in subset}
    plain = hx.predict(small_manifest, scores)
    wide = hx.predict(_with_items(small_manifest, err=0.05), scores)
    assert np.allclose(plain.table["score"], wide.table["score"]) and tm["datasets"]
    w_plain = plain.table["upper"] - plain.table["lower"]
    w_wide = wide.table["upper"] - wide.table["lower"]
    assert (w_wide >= w_plain - 1e-12).all() and (w_wide > w_plain + 1e-6).sum() >= 2
    first = wide.table[wide.table["dataset"] == subset[0]].iloc[0]
    assert first["observed"] and first["lower"] < first["score"] < first["upper"] and first["raw_lower"] < first["raw_upper"]
    a_plain, a_wide = plain.aggregate.iloc[0], wide.aggregate.iloc[0]
    assert a_wide["upper"] - a_wide["lower"] > a_plain["upper"] - a_plain["lower"]


@pytest.mark.slow
def test_anchor_scores_from_logged_samples_in_memory(small_manifest):
    """lm-eval's group row scores an anchored task as predict does: the anchors' weighted mean from the run's logged
    samples (in memory, as lm-eval keeps them), the cell marked as an anchor estimate, not a plain mean."""
    import pandas as pd

    import harness_ext as hx
    from harness_ext.methods.reduction.items import logged_anchor_scores

    m = _with_items(small_manifest, n=3)
    first = m["subset"][0]["name"]
    m["items"]["tasks"][first]["weights"] = [0.5, 0.3, 0.2]
    # doc 7 is not an anchor; a second filter's value is another metric
    logged = [{"doc_id": d, "acc": v, "filter": "none", "metrics": ["acc"]} for d, v in ((0, 1.0), (1, 0.0), (2, 1.0), (7, 0.0))]
    logged.append({"doc_id": 0, "acc": 0.0, "filter": "other", "metrics": ["acc"]})
    scores = logged_anchor_scores(m["items"], {first: logged})
    assert scores == {first: pytest.approx(0.7)}
    rest = {s["name"]: 0.6 for s in m["subset"][1:]}
    frame = pd.DataFrame([{**rest, **scores}], index=["this run"])
    frame.attrs["anchored"] = [("this run", first)]
    pred = hx.predict(m, frame)
    assert not any("plain mean" in w for w in pred.warnings)
    assert any("plain mean" in w for w in hx.predict(m, {**rest, **scores}).warnings)
    assert pred.table.set_index("dataset").loc[first, "raw"] == pytest.approx(0.7)
