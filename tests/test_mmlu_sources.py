"""MMLU as one benchmark of 57 subjects whichever harness produced it: lm-eval v0.3 / v0.4, HELM runs
and tables, Every Eval Ever helm_mmlu and the Open LLM Leaderboard v1, in one matrix."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import LM_EVAL_V03, LM_EVAL_V04, require
from harness_ext.benchmarks import MMLU_METRIC, MMLU_SUBJECTS, chance_baseline, mmlu_subject
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix, query_results
from harness_ext.store.db import Store

FIX = Path(__file__).parent / "fixtures"
OLL = FIX / "open_llm_leaderboard"
HENRY = "HenryJJ/Instruct_Mistral-7B-v0.1_Dolly15K"


@pytest.mark.parametrize("task, subject", [
    ("hendrycksTest-abstract_algebra", "abstract_algebra"),                          # lm-eval v0.3
    ("mmlu_high_school_us_history", "high_school_us_history"),                      # lm-eval v0.4 subject task
    ("harness|hendrycksTest-world_religions|5", "world_religions"),                 # Open LLM Leaderboard v1
    ("mmlu:subject=us_foreign_policy,method=multiple_choice_joint,model=x_y", "us_foreign_policy"),  # HELM
    ("mmlu", None), ("mmlu_stem", None), ("mmlu_humanities", None), ("hendrycksTest", None),  # groups
    ("mmlu_continuation_virology", None), ("mmlu_generative_virology", None),       # other prompt formats
    ("mmlu_flan_n_shot_loglikelihood_virology", None), ("mmlu_pro_biology", None),
    ("hendrycksTest-not_a_subject", None),
])
def test_one_canonical_subject_name(task, subject):
    assert mmlu_subject(task) == subject


def test_chance_and_metric():
    assert len(MMLU_SUBJECTS) == 57 and MMLU_METRIC == "acc"
    assert chance_baseline("mmlu:subject=anatomy", "acc") == (0.25, "4 answer choices")


def test_open_llm_leaderboard_v1_real_results():
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [OLL], show_progress=False)
        assert [f.adapter for f in report.files] == ["open_llm_leaderboard_v1"] * 2
        mmlu = load_matrix(s, MatrixQuery(benchmarks=("mmlu",), normalise="none"))
        assert mmlu.shape == (2, 57)
        assert mmlu.loc[HENRY].notna().sum() == 57 and mmlu.loc["aerdincdal/CBDDO-LLM-8B-Instruct-v1"].notna().sum() == 5
        assert mmlu.loc[HENRY, "abstract_algebra"] == 0.31
        meta = mmlu.attrs["datasets"]["abstract_algebra"]
        assert (meta["metric"], meta["num_fewshot"], meta["random_baseline"]) == ("acc", 5, 0.25)
        board = query_results(s, MatrixQuery(benchmarks=("open_llm_leaderboard_v1",), models=HENRY))
        assert dict(zip(board.dataset, board.metric)) == {
            "arc_challenge": "acc_norm", "gsm8k": "acc", "hellaswag": "acc_norm", "truthfulqa_mc": "mc2",
            "winogrande": "acc"}  # the metric the leaderboard ranked by is primary
        assert dict(zip(board.dataset, board.num_fewshot)) == {
            "arc_challenge": 25, "gsm8k": 5, "hellaswag": 10, "truthfulqa_mc": 0, "winogrande": 5}
        assert board.set_index("dataset").value["truthfulqa_mc"] == pytest.approx(0.435601924823795)
        long = query_results(s, MatrixQuery(models=HENRY, datasets="abstract_algebra"), all_metrics=True)
        assert long.set_index("metric").stderr["acc"] == pytest.approx(0.04648231987117316)
        models = dict(s.con.execute("SELECT name, metadata FROM models").fetchall())
        assert "84430552036c85cc6a16722b26496df4d93f3afe" in models["aerdincdal/CBDDO-LLM-8B-Instruct-v1"]


def test_open_llm_leaderboard_v1_scores_out_of_range_and_unread_keys(tmp_path):
    """An acc_norm of 61.5 was stored as a score of 61.5; a result key that is no task row was passed over without a
    word ("all", the leaderboard's average, still is)."""
    import json

    src = next(OLL.glob("details_HenryJJ*/results_*.json"))
    doc = json.loads(src.read_text())
    doc["results"]["harness|arc:challenge|x"] = {"acc": 0.5}
    ok = tmp_path / "ok" / src.name
    ok.parent.mkdir()
    ok.write_text(json.dumps(doc))
    doc["results"]["harness|arc:challenge|25"]["acc_norm"] = 61.5
    bad = tmp_path / "bad" / src.name
    bad.parent.mkdir()
    bad.write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        by = {f.path: f for f in ingest_paths(s, [ok, bad], show_progress=False).files}
    assert by[str(ok)].notes == ["1 result key not of the form <suite>|<task>|<shots> left out: harness|arc:challenge|x"]
    assert by[str(bad)].status == "skipped" and "acc_norm = 61.5 is outside [0, 1]" in by[str(bad)].reason


def test_one_mmlu_matrix_from_pythia_llama_opt_and_v04(real_store, tmp_path):
    """Pythia (v0.3, 838 runs), LLaMA/OPT/MPT (v0.3 master) and the v0.4 PR runs in one 57-column matrix;
    then HELM runs and the Open LLM Leaderboard join the same columns."""
    require(LM_EVAL_V03)
    require(LM_EVAL_V04)
    db = tmp_path / "mmlu.duckdb"
    shutil.copy(real_store, db)  # the session store has Pythia (and HELM Classic); add the rest to a copy
    with Store.open(db) as s:
        report = ingest_paths(s, [LM_EVAL_V03, LM_EVAL_V04], show_progress=False)
        # 166 v0.3 files; 68 v0.4 (incl. the asdiv LoRA runs under '..__' directories, which have no MMLU, and a
        # gpt-4o-mini file whose mae is Infinity, that metric left out)
        assert len(report.by_status("ingested")) == 166 + 68
        long = query_results(s, MatrixQuery(benchmarks=("mmlu",)))
        src = long.source.str.extract(r"(pythia-evals|v03_results|v04_results)")[0]
        models = long.groupby(src).model.nunique().to_dict()
        assert models == {"pythia-evals": 596, "v03_results": 12, "v04_results": 14}
        assert long.model.nunique() == 614  # the 8 OPT models of pythia-evals and v0.3 master are one model each
        assert set(long.metric) == {"acc"} and long.dataset.nunique() == 57
        opt = long[long.model.str.startswith("facebook/opt-")]
        assert opt.model.nunique() == 8 and opt.groupby(["model", "dataset"]).value.nunique().max() == 1
        assert not s.conflicts().model.str.startswith("facebook/opt").any()  # same cells, same values
        df = load_matrix(s, MatrixQuery(benchmarks=("mmlu",), rows="model_shots"))
        # One row per model and shot setting: 836 Pythia-evals rows, 12 v0.3 (OPT merged), 14 v0.4 models,
        # minus the 8 OPT rows counted twice.
        assert df.shape == (854, 57) and not df.isna().any().any()
        # lm-eval's llama-7B and HELM Classic's meta/LLaMA-7B (in the session store) are one model (harness_ext.store.identity)
        assert {"meta/LLaMA-7B", "facebook/opt-66b", "google/gemma-2-9b", "meta-llama/Llama-3.2-3B"} <= set(df.index)
        five = load_matrix(s, MatrixQuery(benchmarks=("mmlu",), num_fewshot=5))
        assert five.shape == (318, 57)  # LLaMA 7B/13B/30B, MPT-7B and 314 five-shot Pythia-evals models

        report = ingest_paths(s, [OLL, FIX / "helm" / "benchmark_output" / "runs" / "v1.13.0"], show_progress=False)
        assert len(report.by_status("ingested")) == 10
        df = load_matrix(s, MatrixQuery(benchmarks=("mmlu",), rows="model_shots"))
        assert df.shape == (858, 57) and df.loc[HENRY].notna().all()
        assert df.loc["01-ai/yi-6b", "econometrics"] == pytest.approx((40 / 114 - 0.25) / 0.75)
