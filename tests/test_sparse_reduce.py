"""Sparse first (issue 14 item 1): reduce, predict and pounce use every observed cell; --dense is asked for and named."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from harness_ext.cli import main
from harness_ext.methods.reduction.manifest import build_manifest, load_manifest
from harness_ext.store.matrix import MatrixQuery, load_matrix
from harness_ext.methods.engine.subset_cv import subset_errors
from harness_ext.plugins.predictors import RidgePredictor
from harness_ext.store.db import Store


def sparse_low_rank(m=60, d=12, missing=0.3, seed=0):
    rng = np.random.default_rng(seed)
    X = 1 / (1 + np.exp(-(rng.normal(size=(m, 2)) @ rng.normal(size=(2, d)) + 0.1 * rng.normal(size=(m, d)))))
    Xo = np.where(rng.random((m, d)) < missing, np.nan, X)
    if missing:
        Xo[np.arange(m), np.arange(m) % d] = np.nan  # no complete row
    df = pd.DataFrame(Xo, index=[f"m{i:02d}" for i in range(m)], columns=[f"d{j:02d}" for j in range(d)])
    return X, df


@pytest.mark.slow
def test_reduce_keeps_every_model_and_dataset_of_a_sparse_matrix():
    """No row of this matrix is complete: reduce used to refuse it (and the CLI cut it to a dense block)."""
    X, df = sparse_low_rank(missing=0.3)
    assert not df.notna().all(axis=1).any()
    m = build_manifest(df, budget="4", n_random=20)
    assert m["source"]["n_models"] == 60 and m["source"]["n_datasets"] == 12
    assert m["source"]["missing_share"] == pytest.approx(df.isna().to_numpy().mean())
    assert not any("dense" in w for w in m["warnings"])
    cv = m["prediction"]["cross_validation"]
    assert np.isfinite(cv["rmse"]) and np.isfinite(cv["aggregate_rmse"])
    values = np.array([[np.nan if v is None else v for v in row] for row in m["training_matrix"]["values"]])
    np.testing.assert_array_equal(np.isnan(values), df.isna().to_numpy())  # missing cells stay missing


def test_subset_cv_uses_incomplete_held_out_models_and_matches_complete_case():
    X, df = sparse_low_rank(missing=0.0, seed=1)
    full = subset_errors(X, [[0, 1, 2]], RidgePredictor(), n_splits=5)[0]
    from harness_ext.methods.pounce import cross_validated_error

    ref = cross_validated_error(X, [0, 1, 2], RidgePredictor(), n_splits=5)
    assert full.aggregate == pytest.approx(ref.aggregate) and full.overall == pytest.approx(ref.overall)
    _, sparse = sparse_low_rank(missing=0.4, seed=1)
    e = subset_errors(sparse.to_numpy(), [[0, 1, 2]], RidgePredictor(), n_splits=5)[0]
    assert e.n_aggregate > 30 and np.isfinite(e.aggregate) and np.isfinite(e.per_dataset[3:]).all()


@pytest.mark.slow  # a real matrix end to end: the slow real-data tier
def test_reduce_cli_on_sparse_helm_classic_uses_every_model_and_dense_names_what_it_drops(real_store, tmp_path):
    """HELM Classic (Every Eval Ever) has -1 'not run' cells: 67 models, 17% of cells missing. The default keeps all
    67 models; --dense is a cut the user asks for, and the manifest names every model it dropped."""
    db = str(real_store)
    out = tmp_path / "sparse"
    assert main(["reduce", "--db", db, "--benchmark", "helm_classic", "--budget", "4", "--n-random", "20",
                 "--out", str(out), "--format", "json"]) == 0
    m = load_manifest(out)
    with Store.open(real_store, read_only=True) as s:
        df = load_matrix(s, MatrixQuery(benchmarks=("helm_classic",)))
    assert df.isna().to_numpy().any()
    assert m["source"]["n_models"] == df.shape[0] and m["source"]["n_datasets"] == df.shape[1]
    dense = tmp_path / "dense"
    assert main(["reduce", "--db", db, "--benchmark", "helm_classic", "--budget", "4", "--n-random", "20",
                 "--dense", "models", "--out", str(dense), "--format", "json"]) == 0
    md = json.loads((dense / "manifest.json").read_text())
    [w] = [w for w in md["warnings"] if w.startswith("--dense dropped")]
    n_dropped = df.shape[0] - md["source"]["n_models"]
    assert n_dropped > 0 and f"{n_dropped} models" in w


@pytest.mark.slow
def test_pairwise_error_moments_from_different_models_never_give_a_zero_aggregate(tmp_path):
    """benchbench's four HELM leaderboards as one group: every pair of the 19 datasets is observed together, by 1
    to 21 models, and those pairwise moments were used unprojected; w'Mw fell below zero and the subset of one
    AIR-Bench category was reported (and chosen) with a cross-validated aggregate RMSE of 0.0000. (AIR-Bench's
    AIR_Score, its overall score, is an aggregate: not one of the 19.)"""
    import harness_ext as hx
    from conftest import SHARED_DATA, require

    boards = require(SHARED_DATA / "benchbench" / "leaderboards")
    db = tmp_path / "s.duckdb"
    hx.ingest(sorted(boards.glob("helm_*.csv")), store=db, group="helm")
    m = hx.load_matrix(db, "helm")
    assert m.shape == (142, 19) and m.notna().sum().min() == 21
    subset = [list(m.columns).index("HELM_AIRBENCH_Political_Usage")]
    e = subset_errors(m.to_numpy(), [subset], RidgePredictor(), n_splits=5)[0]
    assert e.aggregate > 0.01
    reduced = hx.reduce(m, budget=1, seed=0, n_random_subsets=20, n_random=20)
    assert reduced.manifest["prediction"]["cross_validation"]["aggregate_rmse"] > 0.01


def test_reduce_says_which_cells_the_shot_rule_left_out(tmp_path):
    """lm-eval v0.3 master: the 8 OPT models ran MMLU 0-shot, LLaMA-7B 5-shot; the matrix keeps each subject at
    0 shots, so LLaMA-7B's 57 cells (and the model) are left out. 'matrix' said so; 'reduce' did not."""
    import harness_ext as hx
    from conftest import LM_EVAL_V03, require

    db = tmp_path / "s.duckdb"
    hx.ingest([require(LM_EVAL_V03 / "opt"), require(LM_EVAL_V03 / "llama" / "llama-7B" / "llama-7B_mmlu_5-shot.json")],
              store=db)
    m = hx.load_matrix(db, "mmlu")
    assert m.shape == (8, 57) and "llama-7B" not in m.index
    warnings = hx.reduce(m, budget=3, seed=0, n_random_subsets=20, n_random=20).manifest["warnings"]
    assert "57 cells measured only at another shot setting than their dataset's are left out" in " ".join(warnings)
