"""What a new user gets from the defaults on real leaderboards (a sweep of ../shared/data through the CLI).

- ``reduce`` without ``--budget`` keeps 10% of the datasets, at least 2 (the budget
  benchmarks/quality_holdout.py validates), and says so; SimBA's ``coverage=0.95`` kept one
  MMLU subject of 57 on the lm-eval v0.3 results.
- ``predict`` warns about unknown chance levels only where the aggregate mixes chance-corrected
  and uncorrected datasets (it warned on 38 of the 40 benchbench leaderboards).
"""

from __future__ import annotations

import json

import pytest

from conftest import HELM_CLASSIC, LM_EVAL_V03, SHARED_DATA, require
from harness_ext.cli import main

LIVEBENCH = SHARED_DATA / "benchbench" / "leaderboards" / "livebench_240829_holistic.csv"


@pytest.fixture(scope="module")
def lm_eval_mmlu(tmp_path_factory):
    import harness_ext as hx

    db = tmp_path_factory.mktemp("lmeval") / "s.duckdb"
    hx.ingest(require(LM_EVAL_V03), store=db)
    return db, hx.load_matrix(db, benchmark="mmlu")


@pytest.mark.slow
def test_default_budget_is_ten_percent_not_one_dataset(lm_eval_mmlu, tmp_path):
    import harness_ext as hx

    db, matrix = lm_eval_mmlu
    assert matrix.shape[1] == 57
    coverage = hx.reduce(matrix, budget="coverage=0.95", seed=0)  # still there when asked for
    # 8 subjects reach SimBA's coverage of 0.95 on the scores before the floor at chance (1 did on the floored ones,
    # whose near-chance subjects tie at 0)
    assert coverage.manifest["selection"]["subset_size"] == 8
    assert "default" not in coverage.manifest["selection"]["budget"]
    result = hx.reduce(matrix, seed=0)
    sel = result.manifest["selection"]
    assert sel["subset_size"] == 6 and sel["budget"]["kind"] == "count" and sel["budget"]["given"] is None
    assert "10% of the datasets, at least 2" in sel["budget"]["default"]
    assert "default budget: 10% of the datasets" in str(result).splitlines()[0]
    # The CLI, same inputs and seed: a byte-identical manifest, and the printed summary names the default.
    for out in ("a", "b"):
        assert main(["reduce", "--db", str(db), "--benchmark", "mmlu", "--out", str(tmp_path / out), "--no-plot",
                     "-q"]) == 0
    first = (tmp_path / "a" / "manifest.json").read_bytes()
    assert first == (tmp_path / "b" / "manifest.json").read_bytes()
    assert json.loads(first)["selection"]["subset_size"] == 6


@pytest.mark.slow
def test_no_chance_warning_on_a_leaderboard_without_corrected_datasets(tmp_path):
    """LiveBench: six percentage categories, none with a known chance level: every score is the same fraction of
    its scale, so the aggregate is consistent and predict says nothing (it warned on every prediction)."""
    import harness_ext as hx

    db = tmp_path / "lb.duckdb"
    hx.ingest(require(LIVEBENCH), store=db)
    matrix = hx.load_matrix(db)
    new = matrix.index[0]
    reduced = hx.reduce(matrix.drop(index=new), seed=0)
    assert reduced.manifest["selection"]["subset_size"] == 2  # 10% of 6, at least 2 (coverage=0.95 kept 1)
    raw = hx.load_matrix(db, normalise="none")
    prediction = hx.predict(reduced, raw.loc[[new], reduced.subset])
    assert not [w for w in prediction.warnings if "chance level" in w]


def test_chance_warning_where_the_aggregate_mixes_corrected_and_uncorrected(real_store):
    """HELM Classic: BoolQ, MMLU, HellaSwag ... are chance-corrected; MS MARCO, RAFT and TruthfulQA have no known
    chance level, so the aggregate adds uncorrected scores to corrected ones: one warning naming them."""
    from harness_ext.methods.reduction.benchmark_score import chance_warnings
    from harness_ext.store.db import Store
    from harness_ext.store.matrix import MatrixQuery, load_matrix

    require(HELM_CLASSIC)
    with Store.open(real_store, read_only=True) as s:
        df = load_matrix(s, MatrixQuery(benchmarks=("helm_classic",)))
    manifest = {"source": {"query": df.attrs["query"]},
                "datasets": [{"name": c, "normalisation": df.attrs["datasets"][c]["normalisation"]} for c in df.columns]}
    [warning] = chance_warnings(manifest)
    assert "3 of 14 datasets (MS MARCO (TREC), RAFT, TruthfulQA)" in warning and "chance-corrected" in warning
    # An Elo column never has a chance level to miss: a manifest of only Elo ratings is not flagged by the matrix.
    elo = {"scale": "elo", "flip": False, "chance_source": None, "description": "Elo win probability"}
    from harness_ext.store.scales import lacks_chance_level

    assert not lacks_chance_level(elo) and lacks_chance_level({**elo, "scale": "percent", "description": "[0,100]"})
