"""reduce chooses a subset a new model can run: datasets most models never ran are chosen last, and said so."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness_ext.errors import MethodError
from harness_ext.methods.reduction.budget import availability_rule, demote
from harness_ext.methods.reduction.manifest import build_manifest
from harness_ext.methods.reduction.reduce import ReduceResult


def two_sparse_datasets(seed=0, m=37, d=12):
    """37 models x 12 datasets, rank 2; d00 and d01 run by 8 and 12 models (the shape of the sparse slice where
    reduce put the two sparsest datasets into every subset) and carrying the factors most clearly, so a selector
    wants them; 5% of the other cells missing."""
    rng = np.random.default_rng(seed)
    U, V = rng.normal(size=(m, 2)), rng.normal(size=(2, d))
    V[:, :2] *= 3.0
    X = 1 / (1 + np.exp(-(U @ V + 0.3 * rng.normal(size=(m, d))) / 2))
    X[rng.permutation(m)[8:], 0] = np.nan
    X[rng.permutation(m)[12:], 1] = np.nan
    X[rng.random((m, d)) < 0.05] = np.nan
    return pd.DataFrame(X, index=[f"m{i:02d}" for i in range(m)], columns=[f"d{j:02d}" for j in range(d)])


@pytest.mark.slow
def test_sparse_datasets_leave_the_subset_and_the_manifest_names_them_with_counts():
    df = two_sparse_datasets()
    assert df.notna().sum().iloc[:2].tolist() == [8, 12]
    off = build_manifest(df, budget="3", n_random=20, n_random_subsets=20, min_availability=0.0)
    assert {"d00", "d01"} & {s["name"] for s in off["subset"]}  # without the rule the selector takes one
    assert "availability" not in off["selection"]
    man = build_manifest(df, budget="3", n_random=20, n_random_subsets=20)
    names = {s["name"] for s in man["subset"]}
    assert not names & {"d00", "d01"}
    av = man["selection"]["availability"]
    assert av["min_share"] == 0.5 and av["n_models"] == 37 and av["n_in_subset"] == 0
    assert av["demoted"] == [{"name": "d00", "n_models": 8}, {"name": "d01", "n_models": 12}]
    [w] = [w for w in man["warnings"] if "fewer than 50%" in w]
    assert "d00 (8), d01 (12)" in w and "--min-availability" in w
    assert "availability: datasets run by fewer than 50% of the 37 models" in ReduceResult(man).render()
    # the calibration's in-fold selections follow the same rule (predict calibrates on them)
    for sub in man["prediction"]["calibration"]["subsets"]:
        assert not set(sub) & {"d00", "d01"}


def test_rule_counts_threshold_and_stable_order():
    demoted, rec = availability_rule(["a", "b", "c"], [3, 10, 5], 10, 0.5)
    assert demoted.tolist() == [0] and rec["demoted"] == [{"name": "a", "n_models": 3}]
    assert availability_rule(["a", "b"], [10, 10], 10)[1] is None  # complete: nothing recorded
    assert availability_rule(["a"], [0], 10, 0.0)[1] is None
    assert demote([4, 0, 3, 1, 2], [0, 1]).tolist() == [4, 3, 2, 0, 1]
    with pytest.raises(MethodError, match="min-availability"):
        availability_rule(["a"], [1], 10, 1.5)


@pytest.mark.slow
def test_too_few_available_datasets_keep_the_demoted_ones_and_say_so():
    df = two_sparse_datasets(m=37, d=4)
    df.iloc[:30, 2] = np.nan  # d02: 7 models
    man = build_manifest(df, budget="2", n_random=10, n_random_subsets=5)
    av = man["selection"]["availability"]
    assert [x["name"] for x in av["demoted"]] == ["d00", "d01", "d02"]
    assert av["n_in_subset"] == 1 and man["subset"][0]["name"] == "d03"
    [w] = [w for w in man["warnings"] if "fewer than 50%" in w]
    assert "still has 1 of them" in w
