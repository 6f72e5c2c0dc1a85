"""The screened neighbour-distance Mondrian rule for aggregate intervals (``benchmarks/screens/splitcov2``).

Not the product's rule (benchmarks/HISTORY.md, "screened, not shipped"): the screen installs it by monkeypatching
``newmodel_intervals``; kept tested so the screen can be re-run.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from harness_ext.methods.engine import newmodel_intervals as ni
from harness_ext.methods.engine.completion import LowRankCompleter

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "screens" / "splitcov2" / "neighbour_rule.py"


@pytest.fixture()
def nr():
    spec = importlib.util.spec_from_file_location("splitcov2_neighbour_rule", _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_neighbour_distance_is_the_nearest_rows_rms_gap_in_sd_units_on_the_seen_cells(nr):
    Z_fit = np.array([[0.0, 0.0, 5.0], [2.0, 2.0, -5.0]])  # column sds 1, 1, 5
    z = np.array([[0.0, 1.0, 100.0], [np.nan, 2.0, 0.0]])
    seen = np.array([[True, True, False], [True, True, True]])
    d = nr.neighbour_distances(z, seen, Z_fit)
    assert d[0] == pytest.approx(np.sqrt((0 + 1) / 2))  # nearest row 0, third cell unseen
    assert d[1] == pytest.approx(np.sqrt((0 + 1) / 2))  # NaN cell skipped; row 1: gaps 0 and 1 sd
    assert nr.neighbour_distances(np.full((1, 3), np.nan), np.zeros((1, 3), bool), Z_fit)[0] == 0.0
    # measured to another run: each model's own run's row is skipped
    d_runs = nr.neighbour_distances(z, seen, Z_fit, runs_new=np.array(["a", "b"]), runs_fit=np.array(["a", "b"]))
    assert d_runs[0] == pytest.approx(np.sqrt((4 + 1) / 2))
    assert d_runs[1] == pytest.approx(np.sqrt((4 + 1) / 2))  # row 0: gaps 2 and 1 sd (the NaN cell skipped)


@pytest.mark.parametrize("runs", [False, True])
def test_the_installed_rule_gives_finite_ordered_aggregate_bounds(nr, monkeypatch, runs):
    monkeypatch.setattr(ni._ScoreBook, "add", nr._add)
    monkeypatch.setattr(ni, "_calibration_result", nr._result)
    monkeypatch.setattr(ni, "cv_plus_new_models", nr._cv)
    rng = np.random.default_rng(0)
    X = np.clip(rng.random((60, 3)) @ rng.random((3, 12)) / 3 + rng.normal(0, 0.02, (60, 12)), 0.01, 0.99)
    new = np.where(np.arange(12) < 4, X[:5], np.nan)
    if runs:  # the new models share runs with training rows 0-4 (rows 5-9 of X)
        nr.RUNS = (np.array([f"r{i % 5}" for i in range(55)]), np.array([f"r{i}" for i in range(5)]))
    p = LowRankCompleter(random_state=0).fit(X[5:]).predict_new_models(new, weights=np.full(12, 1 / 12))
    assert nr.RUNS is None and nr.STATS["models"] == (5 if runs else 0)  # consumed by the one prediction
    assert np.isfinite(p.aggregate_lower).all() and (p.aggregate_lower <= p.aggregate_upper).all()
    assert (p.aggregate_lower <= p.aggregate).all() and (p.aggregate <= p.aggregate_upper).all()
