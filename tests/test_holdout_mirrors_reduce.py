"""benchmarks/quality_holdout.py chooses the subset ``reduce`` chooses, through ``reduce``'s own steps: with
greedy_coverage it ran pounce's ``selector_order``, whose default similarity for that selector is Minkowski,
where ``reduce`` runs the selector's own (Pearson), in its selection and in its calibration's reselection."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import import_benchmark


def _matrix(m: int = 40, d: int = 20, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = np.clip(rng.random((m, 3)) @ rng.random((3, d)) / 3 + 0.08 * rng.standard_normal((m, d)), 0.01, 0.99)
    return pd.DataFrame(X, index=[f"m{i}" for i in range(m)], columns=[f"d{j}" for j in range(d)])


@pytest.mark.parametrize("selector", ["greedy_coverage", "prediction_greedy"])
@pytest.mark.slow
def test_choose_subset_is_reduces_subset(selector):
    import harness_ext as hx

    qh = import_benchmark("quality_holdout")
    df, k = _matrix(), 3
    result = hx.reduce(df, budget=k, selector=selector, seed=0, n_random=5, n_random_subsets=3)
    ours, used = qh.choose_subset(df.to_numpy(), k, 0, selector, "lowrank", np.full(df.shape[1], 100.0),
                                  np.zeros(df.shape[1]))
    assert used == selector
    assert [df.columns[j] for j in ours] == list(result.subset)
    if selector == "greedy_coverage":
        assert result.manifest["selection"]["similarity"] == "pearson"


def test_fold_selector_without_a_similarity_runs_the_selectors_own():
    from harness_ext.methods.pounce import selector_order
    from harness_ext.methods.reduction.fold_selection import fold_selector

    X, k = _matrix().to_numpy(), 3
    rows = np.arange(len(X))
    got = fold_selector(X, "greedy_coverage", k=k, mode="same")(rows)
    pearson = selector_order(X, "greedy_coverage", similarity="pearson")[:k]
    minkowski = selector_order(X, "greedy_coverage")[:k]  # pounce's default for this selector
    assert list(got) == list(pearson)
    assert list(pearson) != list(minkowski)  # the matrix tells the two apart
