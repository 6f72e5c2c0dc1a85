"""The screened neighbour-distance rule for aggregate intervals (``AGGREGATE_NEIGHBOUR_SCALE``, off by default).

Kept so the screen in benchmarks/screens/splitcov can be re-run; the rule is not the product's.
"""
from __future__ import annotations

import numpy as np
import pytest

from harness_ext.methods.engine import newmodel_intervals as ni
from harness_ext.methods.engine.completion import LowRankCompleter


def test_neighbour_distance_is_the_nearest_rows_rms_gap_in_sd_units_on_the_seen_cells():
    Z_fit = np.array([[0.0, 0.0, 5.0], [2.0, 2.0, -5.0]])  # column sds 1, 1, 5
    z = np.array([[0.0, 1.0, 100.0], [np.nan, 2.0, 0.0]])
    seen = np.array([[True, True, False], [True, True, True]])
    d = ni._neighbour_distances(z, seen, Z_fit)
    assert d[0] == pytest.approx(np.sqrt((0 + 1) / 2))  # nearest row 0, third cell unseen
    assert d[1] == pytest.approx(np.sqrt((0 + 1) / 2))  # NaN cell skipped; row 1: gaps 0 and 1 sd
    assert ni._neighbour_distances(np.full((1, 3), np.nan), np.zeros((1, 3), bool), Z_fit)[0] == 0.0


@pytest.mark.parametrize("mode", [False, True, "mondrian"])
def test_every_mode_gives_finite_ordered_aggregate_bounds(monkeypatch, mode):
    monkeypatch.setattr(ni, "AGGREGATE_NEIGHBOUR_SCALE", mode)
    rng = np.random.default_rng(0)
    X = np.clip(rng.random((60, 3)) @ rng.random((3, 12)) / 3 + rng.normal(0, 0.02, (60, 12)), 0.01, 0.99)
    new = np.where(np.arange(12) < 4, X[:5], np.nan)
    p = LowRankCompleter(random_state=0).fit(X[5:]).predict_new_models(new, weights=np.full(12, 1 / 12))
    assert np.isfinite(p.aggregate_lower).all() and (p.aggregate_lower <= p.aggregate_upper).all()
    assert (p.aggregate_lower <= p.aggregate).all() and (p.aggregate <= p.aggregate_upper).all()
