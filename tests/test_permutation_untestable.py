"""``weights``' permutation test prints no p-value for a statistic no permutation can move: the average Hamming
similarity of 0/1 prompt vectors depends only on each model's number of correct prompts, which the permutation
keeps, so its p-value was 1 whatever the data. It is n/a (NaN in JSON/CSV) with the reason; the other cells keep
their p-values."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from harness_ext.methods.weighting import permutation_test


def _prompts(n_models: int = 12, n_prompts: int = 150, seed: int = 4) -> pd.DataFrame:
    """0/1 correctness with prompt difficulty shared across models: structure a test should find."""
    rng = np.random.default_rng(seed)
    skill, difficulty = rng.normal(size=(n_models, 1)), rng.normal(scale=2, size=(1, n_prompts))
    X = (rng.random((n_models, n_prompts)) < 1 / (1 + np.exp(difficulty - skill))).astype(float)
    return pd.DataFrame(X, index=[f"m{i}" for i in range(n_models)], columns=[f"p{j}" for j in range(n_prompts)])


def test_the_average_hamming_similarity_gets_no_pvalue():
    res = permutation_test(_prompts().to_numpy(), ("cosine", "jaccard", "hamming"), n_permutations=49,
                           show_progress=False)
    assert np.isnan(res.pvalues.loc["average", "hamming"])
    # the statistic is the observed one in every permutation: that is why
    assert np.isclose(res.observed.loc["average", "hamming"], res.permuted_mean.loc["average", "hamming"], rtol=1e-12)
    assert res.pvalues.loc[["average", "95th percentile", "KS test"], "cosine"].notna().all()
    assert res.pvalues.loc["KS test", "hamming"] < 0.05  # Hamming is still tested, by its distribution
    text = str(res)
    assert "n/a for the average Hamming similarity: it depends only on how many prompts each model got right" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("average"))
    assert line.split()[-1] == "n/a"
    assert json.loads(res.to_json())["summary"]["pvalues"]["hamming"]["average"] is None


def test_weights_prints_na_for_it(tmp_path, capsys):
    from harness_ext.cli import main

    _prompts().T.to_csv(tmp_path / "q.csv")  # prompts x models
    out = tmp_path / "out"
    assert main(["weights", "--prompts", str(tmp_path / "q.csv"), "--analyses", "permutation", "--permutations", "19",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "n/a for the average Hamming similarity" in text
    csv = pd.read_csv(out / "permutation_pvalues.csv", index_col=0)
    assert np.isnan(csv.loc["average", "hamming"]) and csv.loc["average", "cosine"] > 0
