"""lm-eval and lighteval outputs of other eras and producers (tests/fixtures/lm_eval_wild, provenance beside them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix, query_results
from harness_ext.store.samples import ingest_samples

from conftest import LM_EVAL_V04, require

FIX = Path(__file__).parent / "fixtures" / "lm_eval_wild"
LIGHTEVAL = FIX / "lighteval" / "gpt2" / "results_example.json"


def _ingest(paths):
    with Store.open(":memory:") as s:
        report = ingest_paths(s, paths, show_progress=False)
        return report, query_results(s, MatrixQuery(aggregates=True), all_metrics=True)


def test_lighteval_results_of_its_own_suite_are_read():
    """lighteval's documented result file was passed over ("no adapter claims it": only ``harness|`` keys were
    looked for); its task is read, ``all`` (the run's mean) is left out with a note, and the ``_stderr`` keys are
    standard errors, not scores."""
    report, long = _ingest([LIGHTEVAL])
    [f] = report.files
    assert f.adapter == "lighteval" and f.status == "ingested"
    assert any("all" in n for n in f.notes)
    assert sorted(zip(long.benchmark, long.dataset, long.metric)) == [
        ("lighteval", "gsm8k", "em"), ("lighteval", "gsm8k", "maj@8")]
    row = long.set_index("metric").loc["em"]
    assert (row.model, row.value, row.stderr, row.num_fewshot, row.task) == ("gpt2", 0.0, 0.0, 0, "lighteval|gsm8k|0")
    assert row.n_samples == 1  # run with max_samples 1: config_tasks' effective_num_docs, not gsm8k's 1319
    assert bool(row.higher_is_better)
    with Store.open(":memory:") as s:
        ingest_paths(s, [LIGHTEVAL], show_progress=False)
        assert load_matrix(s, MatrixQuery(normalise="none")).attrs["datasets"]["gsm8k"]["metric"] == "em"  # primary


def _variant(tmp_path, name, edit):
    doc = json.loads(LIGHTEVAL.read_text())
    edit(doc)
    out = tmp_path / name / "results_example.json"
    out.parent.mkdir(parents=True)
    out.write_text(json.dumps(doc))
    return out


def test_lighteval_mmlu_subjects_land_in_lm_evals_cells_and_averages_are_aggregates(tmp_path):
    """``leaderboard|mmlu:<subject>|5`` (the prompt lm-eval's mmlu_<subject> and the v1 leaderboard use) is MMLU's
    subject; ``helm|mmlu:...`` keeps its own benchmark (another prompt); ``mmlu:_average`` is an aggregate."""
    def edit(doc):
        doc["results"] = {"leaderboard|mmlu:abstract_algebra|5": {"acc": 0.31, "acc_stderr": 0.046},
                          "helm|mmlu:abstract_algebra|5": {"em": 0.3, "em_stderr": 0.046},
                          "leaderboard|mmlu:_average|5": {"acc": 0.31, "acc_stderr": 0.046},
                          "all": {"acc": 0.31}}
    report, long = _ingest([_variant(tmp_path, "mmlu", edit)])
    by = {(b, d): r for b, d, r in zip(long.benchmark, long.dataset, long.itertuples())}
    assert set(by) == {("mmlu", "abstract_algebra"), ("lighteval_helm", "mmlu_abstract_algebra"), ("mmlu", "mmlu")}
    assert by["mmlu", "abstract_algebra"].random_baseline == 0.25
    assert by["mmlu", "mmlu"].kind == "aggregate" and by["mmlu", "abstract_algebra"].kind != "aggregate"


def test_lighteval_keys_without_a_suite_and_model_config(tmp_path):
    """lighteval 0.11 writes ``gsm8k|0`` and names the model in ``config_general.model_config``; a perplexity is
    lower-is-better; a file naming no model is refused with the reason."""
    def edit(doc):
        doc["config_general"]["model_config"] = {"model_name": doc["config_general"].pop("model_name")}
        doc["results"] = {"gsm8k|0": {"extractive_match": 0.8, "extractive_match_stderr": 0.02},
                          "wikitext|0": {"word_perplexity": 31.2, "bits_per_byte": 0.9}}
    report, long = _ingest([_variant(tmp_path, "new", edit)])
    got = {m: bool(h) for m, h in zip(long.metric, long.higher_is_better)}
    assert got == {"extractive_match": True, "word_perplexity": False, "bits_per_byte": False}
    assert set(long.model) == {"gpt2"} and set(long.benchmark) == {"lighteval"}

    def unnamed(doc):
        del doc["config_general"]["model_name"]
    report, _ = _ingest([_variant(tmp_path, "unnamed", unnamed)])
    assert report.files[0].status == "skipped" and "naming no model" in report.files[0].reason


def test_open_llm_leaderboard_files_stay_with_their_adapter():
    report, _ = _ingest([Path(__file__).parent / "fixtures" / "open_llm_leaderboard"])
    assert {f.adapter for f in report.files} == {"open_llm_leaderboard_v1"}


def test_v03_results_without_config_say_what_is_missing():
    """lm-eval v0.3's ``{"results", "versions"}`` file was skipped as "not a recognised result file"; it is an lm-eval
    file whose model is not recorded, and the reason says so."""
    report, long = _ingest([FIX / "v03_without_config"])
    [f] = report.files
    assert f.status == "skipped" and "'config'" in f.reason and "no model" in f.reason
    assert long.empty


def test_samples_of_a_corpus_level_metric_say_why_they_hold_no_scores():
    """A generative task scored by corpus-level F1 logs ``[reference, [prediction]]`` per sample: the file was skipped
    with "no per-sample metric values found"; the reason now names the metric and why."""
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [FIX / "samples_corpus_metric"], show_progress=False)
        assert [r for r in report.files if r.status == "ingested"][0].adapter == "lm_eval_v04"
        m = load_matrix(s, MatrixQuery(normalise="none"))
        assert m.loc["google/gemma-2b", "masakhaner_luo_prompt_1"] == pytest.approx(0.0656270305392884)
        rep = ingest_samples(s, [FIX / "samples_corpus_metric"], show_progress=False)
    [f] = rep.files
    assert f.status == "skipped"
    assert "f1,flexible-extract" in f.reason and "whole set" in f.reason


@pytest.mark.slow
def test_predict_reads_a_lighteval_run_of_mmlu(tmp_path):
    """A new model's lighteval run of the leaderboard suite's MMLU predicts lm-eval's full MMLU: its subjects match the
    manifest's columns (lm-eval's mmlu_<subject>). The run is the Open LLM Leaderboard v1 fixture's (lighteval wrote it
    with ``harness|hendrycksTest-<s>|5`` keys) under the keys lighteval's leaderboard suite writes now,
    ``leaderboard|mmlu:<s>|5``, its values as they are."""
    from harness_ext.cli import main

    src = next((Path(__file__).parent / "fixtures" / "open_llm_leaderboard").glob("details_HenryJJ*/results_*.json"))
    doc = json.loads(src.read_text())
    results = {f"leaderboard|mmlu:{k.split('-', 1)[1].split('|')[0]}|5": v
               for k, v in doc["results"].items() if "hendrycksTest-" in k}
    run = tmp_path / "run" / "results" / "HenryJJ" / "results_2024-01-04T13-27-32.660899.json"
    run.parent.mkdir(parents=True)
    run.write_text(json.dumps({"config_general": {"model_name": doc["config_general"]["model_name"]},
                               "results": {**results, "all": doc["results"]["all"]}}))
    db, reduced, out = tmp_path / "s.duckdb", tmp_path / "reduced", tmp_path / "pred.json"
    assert main(["ingest", "-q", "--db", str(db), str(require(LM_EVAL_V04))]) == 0
    assert main(["reduce", "-q", "--db", str(db), "--benchmark", "mmlu", "--budget", "8", "--out", str(reduced),
                 "--no-plot", "--n-random-subsets", "5", "--n-random", "2"]) == 0
    assert main(["predict", "-q", "-m", str(reduced), str(run.parent.parent.parent), "--json", str(out)]) == 0
    [agg] = json.loads(out.read_text())["aggregate"]
    assert agg["model"] == "HenryJJ/Instruct_Mistral-7B-v0.1_Dolly15K" and agg["n_observed"] == 8
    assert agg["actual"] == pytest.approx(0.6177, abs=1e-4)  # the run has every subject: lm-eval's weighted mean
    assert abs(agg["aggregate"] - agg["actual"]) < 0.05
    assert not list(run.parent.glob("harness_ext_prediction*"))  # lm-eval's layout is written beside lm-eval files only


def test_lm_eval_brier_score_is_lower_is_better_when_the_file_does_not_say(tmp_path):
    """lm-eval registers ``brier_score`` with ``higher_is_better=False``; a v0.4 file without its
    ``higher_is_better`` block stored it as higher-is-better, so a reduction ranked the worst-calibrated model first."""
    doc = {"results": {"toy_mc": {"acc,none": 0.6, "acc_stderr,none": 0.02, "brier_score,none": 0.4,
                                  "brier_score_stderr,none": 0.01, "alias": "toy_mc"}},
           "versions": {"toy_mc": 1.0}, "n-shot": {"toy_mc": 0},
           "config": {"model": "hf", "model_args": "pretrained=org/model"}}
    path = tmp_path / "results_2025-01-01T00-00-00.json"
    path.write_text(json.dumps(doc))
    _, long = _ingest([path])
    got = {m: bool(h) for m, h in zip(long.metric, long.higher_is_better)}
    assert got == {"acc": True, "brier_score": False}
