"""``benchmarks/quality_frontier_shift.py``: the screen of a cross-benchmark shift of the frontier point prediction."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def qfs():
    from conftest import import_benchmark

    return import_benchmark("quality_frontier_shift")


def _rec(errors, share=1.0, sd=1.0):
    e = np.asarray(errors, dtype=float)
    return dict(truth=e, pred=np.zeros_like(e), lo=np.full(e.size, -1.0), hi=np.full(e.size, 0.5),
                sd=np.full(e.size, sd), share=np.full(e.size, share), usable=np.ones(e.size, bool))


def test_shift_keeps_the_upper_bound_and_the_lower_bound_below_the_point(qfs):
    """Learnt together, the shifted point's recomputed allowance gives the same upper bound (quantile minus ``c``)."""
    rng = np.random.default_rng(0)
    records = {(f"b{i}", "frontier"): _rec(rng.normal(0.5, 1.0, 40), sd=2.0) for i in range(5)}
    rows, _ = qfs.evaluate(records, "median")
    for key, c, before, after in rows:
        assert c > 0
        assert after["cov"] == before["cov"] and after["wid"] == pytest.approx(before["wid"])
        assert after["lower_ok"]
        assert abs(after["bias"]) < abs(before["bias"])  # a stronger population: the shift takes bias off


def test_no_shift_without_a_share_or_with_a_negative_centre(qfs):
    """A model inside the population (share 0) is never moved; a centre below 0 gives no (downward) shift."""
    records = {("a", "frontier"): _rec([-1.0] * 10), ("b", "frontier"): _rec([-2.0] * 10),
               ("a", "a0"): _rec([3.0] * 5, share=0.0)}
    assert qfs.centre({k: r for k, r in records.items() if k[1] == "frontier"}, (), "median") == 0.0
    inside = _rec([0.3] * 4, share=0.0)
    assert np.array_equal(qfs.shifted(inside, 0.7)["pred"], inside["pred"])
    assert qfs.shifted(_rec([0.3] * 4, share=0.5), 0.4)["pred"] == pytest.approx(np.full(4, 0.2))
    _, rnd = qfs.evaluate(records, "median")
    c, before, after = rnd["a"]
    assert after[0]["mae"] == before[0]["mae"]
