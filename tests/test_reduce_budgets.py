"""Flops budgets of the predictor's settings search and of the evidence (issue 17 item 2: the 40M pipeline).

Past a budget (wide matrices) the rank/penalty search runs once on a seeded sample of models and the evidence
scores fewer random subsets, each recorded in the manifest; below it (every real matrix of the repository's data)
nothing changes.
"""

import numpy as np
import pandas as pd
import pytest

from harness_ext.methods.engine import completion, completion_settings, lowrank
from harness_ext.methods.reduction import evidence
from harness_ext.methods.engine.completion import LowRankCompleter, settings_search_flops
from harness_ext.methods.reduction.evidence import evidence_counts


def _matrix(m, d, missing=0.1, seed=0):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.random((m, 3)) @ rng.random((3, d)) / 3 + 0.05 * rng.standard_normal((m, d)), 0.01, 0.99)
    X[rng.random(X.shape) < missing] = np.nan
    return X


def test_budgets_separate_the_real_matrices_from_the_wide_pipeline():
    # The largest real matrices (Pythia MMLU 838 x 57; the 2,000 x 100 synthetic) stay under both budgets,
    # the 40M pipeline's 2,000-model selection sample of 2,000 datasets is far past them.
    for m, d in ((838, 57), (1000, 178), (2000, 100)):
        assert settings_search_flops(min(m, 1000), d, lowrank.DEFAULT_RANKS, 4, 3, 2) <= completion.SETTINGS_FLOPS_BUDGET
        assert evidence_counts(m, d, 200, 13, 5) == (200, 5, None)
    assert settings_search_flops(1000, 2000, lowrank.DEFAULT_RANKS, 4, 3, 2) > 5 * completion.SETTINGS_FLOPS_BUDGET
    draws, rand, rule = evidence_counts(2000, 2000, 200, 13, 5)
    assert evidence.MIN_RANDOM_DRAWS <= draws < 200 and 1 <= rand < 5 and rule["budget"] == evidence.EVIDENCE_FLOPS_BUDGET
    assert (rule["n_draws"], rule["n_random_per_size"], rule["of_draws"]) == (draws, rand, 200)


def test_evidence_counts_shrink_together_with_floors(monkeypatch):
    monkeypatch.setattr(evidence, "EVIDENCE_FLOPS_BUDGET", 1.0)
    assert evidence_counts(100, 50, 200, 10, 5)[:2] == (evidence.MIN_RANDOM_DRAWS, 1)
    assert evidence_counts(100, 50, 200, 10, 0)[:2] == (evidence.MIN_RANDOM_DRAWS, 0)
    per = evidence.score_flops(100, 50)
    # Pays for half the random subsets (the draws are scored twice: in sample and out of sample).
    monkeypatch.setattr(evidence, "EVIDENCE_FLOPS_BUDGET", per * (1 + 10 + 250.5))
    draws, rand, rule = evidence_counts(100, 50, 200, 10, 10)
    assert (draws, rand) == (100, 5) and rule["of_random_per_size"] == 10


def _searches(monkeypatch):
    calls = []
    real = completion_settings.select_rank_lam

    def spy(Z, **kw):
        calls.append(Z.shape)
        return real(Z, **kw)

    monkeypatch.setattr(completion_settings, "select_rank_lam", spy)
    return calls


def test_small_matrix_searches_every_transform_on_every_model(monkeypatch):
    calls = _searches(monkeypatch)
    X = _matrix(60, 12)
    est = LowRankCompleter(ranks=(1, 2), lams=(1.0, 3.0)).with_fixed_settings(X)
    assert est.settings_rule_ is None and calls == [(60, 12), (60, 12)]


def test_past_the_settings_budget_one_search_on_a_sample_recorded(monkeypatch):
    X = _matrix(120, 12)
    free = LowRankCompleter(ranks=(1, 2), lams=(1.0, 3.0)).with_fixed_settings(X)
    monkeypatch.setattr(completion_settings, "SETTINGS_FLOPS_BUDGET", 1e3)
    monkeypatch.setattr(completion_settings, "MIN_SETTINGS_ROWS", 50)
    calls = _searches(monkeypatch)
    est = LowRankCompleter(ranks=(1, 2), lams=(1.0, 3.0)).with_fixed_settings(X)
    rule = est.settings_rule_
    assert calls == [(50, 12)]  # the first transform's search only, on 50 of the 120 models
    assert (rule["rows"], rule["of"], rule["transforms_searched"], rule["budget"]) == (50, 120, 1, 1e3)
    assert rule["flops"] == float(f"{settings_search_flops(120, 12, (1, 2), 2, 3, 2):.3g}")
    assert est.get_params()["rank"] in (1, 2) and est.get_params()["lam"] in (1.0, 3.0)
    again = LowRankCompleter(ranks=(1, 2), lams=(1.0, 3.0)).with_fixed_settings(X)  # seeded: the same choice
    assert again.get_params() == est.get_params() and free.settings_rule_ is None


@pytest.mark.slow
def test_manifest_records_both_rules_only_past_the_budgets(monkeypatch):
    from harness_ext.methods.reduction.manifest import build_manifest, validate_manifest

    X = _matrix(40, 10, seed=1)
    df = pd.DataFrame(X, index=[f"m{i}" for i in range(40)], columns=[f"d{j}" for j in range(10)])
    plain = build_manifest(df, budget="3", n_random=20)
    assert "settings_rule" not in plain["prediction"] and "subset_counts" not in plain["evidence"]
    assert plain["evidence"]["random_subsets"]["n_draws"] == 200
    monkeypatch.setattr(completion_settings, "SETTINGS_FLOPS_BUDGET", 1e3)
    monkeypatch.setattr(completion_settings, "MIN_SETTINGS_ROWS", 20)
    monkeypatch.setattr(evidence, "EVIDENCE_FLOPS_BUDGET", 1.0)
    cut = build_manifest(df, budget="3", n_random=20, random_state=1)
    assert cut["prediction"]["settings_rule"]["rows"] == 20
    assert cut["evidence"]["subset_counts"]["n_draws"] == evidence.MIN_RANDOM_DRAWS
    assert cut["evidence"]["random_subsets"]["n_draws"] == evidence.MIN_RANDOM_DRAWS
    assert all(r["random_aggregate_rmse"] is not None for r in cut["evidence"]["budget_curve"])
    assert "budget_rule" not in plain["selection"]["random_baseline"]
    monkeypatch.setattr(evidence, "RANDOM_BASELINE_CELLS", 1.0)
    fewer = build_manifest(df, budget="3", n_random=50)
    assert fewer["selection"]["random_baseline"]["n_runs"] == evidence.MIN_RANDOM_DRAWS
    assert fewer["selection"]["random_baseline"]["budget_rule"]["of"] == 50
    for man in (plain, cut, fewer):
        validate_manifest(man)


def test_random_baseline_runs_within_the_cell_budget():
    from harness_ext.methods.reduction.evidence import random_baseline_runs

    for m, d in ((838, 57), (2000, 6), (257, 78), (2000, 100)):  # the real matrices and the 2,000 x 100 synthetic
        assert random_baseline_runs(m, d, 200) == (200, None)
    runs, rule = random_baseline_runs(2000, 2000, 200)
    assert runs == evidence.MIN_RANDOM_DRAWS + 5 and (rule["n_runs"], rule["of"]) == (runs, 200)
    assert random_baseline_runs(20000, 2000, 200)[0] == evidence.MIN_RANDOM_DRAWS
