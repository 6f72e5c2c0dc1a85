"""``benchmarks/quality_frontier_selection.py``: the screen of frontier-robust selection rules."""

from __future__ import annotations

import io

import numpy as np
import pytest


@pytest.fixture(scope="module")
def qfsel():
    from conftest import import_benchmark

    return import_benchmark("quality_frontier_selection")


def _matrix(n=40, seed=0):
    """Models x 6 datasets in [0, 1] on one ability; dataset 0 at the ceiling for most models (headroom ~0)."""
    rng = np.random.default_rng(seed)
    a = np.sort(rng.normal(0.0, 1.0, n))
    slope = np.array([4.0, 1.0, 1.2, 0.8, 1.5, 0.6])
    shift = np.array([4.0, 0.0, -0.3, 0.2, -0.5, 0.4])
    X = 1.0 / (1.0 + np.exp(-(slope * a[:, None] + shift))) + rng.normal(0.0, 0.02, (n, 6))
    return np.clip(X, 0.0, 1.0)


def test_saturation_rule_demotes_the_ceiling_dataset_only(qfsel):
    X = _matrix()
    sat, room = qfsel.saturated(X, np.full(6, 100.0), np.zeros(6), [{} for _ in range(6)])
    assert sat[0] and not sat[1:].any()
    assert room[0] < qfsel.HEADROOM <= room[1:].min()
    # a column outside [0, 1] without a declared range has no known ceiling: never demoted
    Y = X.copy()
    Y[:, 0] *= 100.0
    sat, room = qfsel.saturated(Y, np.full(6, 1.0), np.zeros(6), [{} for _ in range(6)])
    assert not sat[0] and np.isnan(room[0])


def test_pick_prefers_fewest_avoided_within_the_tolerance(qfsel):
    obj = np.array([1.0, 1.05, 1.2])
    assert qfsel._pick(obj, np.array([1, 0, 0]), 0.0) == 0
    assert qfsel._pick(obj, np.array([1, 0, 0]), 0.10) == 1
    assert qfsel._pick(obj, np.array([1, 1, 0]), 0.10) == 0


def test_split_and_verdict_run_on_a_small_matrix(qfsel):
    X = _matrix()
    n = len(X)
    tr, te = np.arange(0, n, 2), np.arange(1, n, 2)
    rec = qfsel.run_split(X, [{} for _ in range(6)], tr, te, 0, 2, np.full(6, 100.0), np.zeros(6))
    assert set(rec["mae"]) == set(qfsel.VARIANTS) and rec["same"]
    assert rec["n_demoted"] == 1 and 0 not in rec["subsets"]["V1"]  # V1 never takes the saturated dataset
    records = {("m", "frontier"): rec, ("m", "a0"): rec}
    text = io.StringIO()
    out = qfsel.verdict(records, file=text)
    assert set(out) == set(qfsel.VARIANTS[1:]) and "criterion" in text.getvalue()


@pytest.mark.slow
def test_random_subsets_place_the_default_among_subsets_of_its_size(qfsel):
    X = _matrix()
    n = len(X)
    tr, te = np.arange(0, n, 2), np.arange(1, n, 2)
    rec = qfsel.run_split(X, [{} for _ in range(6)], tr, te, 0, 2, np.full(6, 100.0), np.zeros(6), n_random_subsets=5)
    assert len(rec["random_mae"]) == 5 and all(v >= 0 for v in rec["random_mae"])
    text = io.StringIO()
    qfsel.random_subsets({("m", "frontier"): rec}, file=text)
    share = np.mean(np.asarray(rec["random_mae"]) > rec["mae"]["V0"])
    assert f"{share:7.2f}  (5 subsets)" in text.getvalue()
