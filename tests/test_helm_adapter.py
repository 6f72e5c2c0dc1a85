"""HELM adapters: run-name parser on all 8,526 real HELM Classic names, the real run directory,
a benchmark_output tree written in the real format, and helm-summarize leaderboard tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import HELM_CLASSIC, SHARED_DATA, require
from harness_ext.adapters.helm import MAIN_METRICS, main_metric, parse_run_name, records_for_run
from harness_ext.errors import IngestError
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix, query_results
from harness_ext.store.db import Store

FIX = Path(__file__).parent / "fixtures" / "helm"
RUNS = FIX / "benchmark_output" / "runs"
RELEASES = FIX / "benchmark_output" / "releases"
HELM_RAW = SHARED_DATA / "helm-raw-example" / "examples"


@pytest.fixture
def store():
    with Store.open(":memory:") as s:
        yield s


# -- run names ----------------------------------------------------------------------------------
def test_all_real_helm_classic_run_names_parse_to_unique_cells():
    names = list(json.loads(require(HELM_RAW / "runs_to_runsuites.json").read_text()))
    assert len(names) == 8526
    runs = [parse_run_name(n) for n in names]
    assert all(r.model for r in runs)
    assert len({r.model for r in runs}) == 70
    # 37 distinct run-spec heads (PROVENANCE.md), three of them legal_support with its method baked in.
    assert len({n.split(":")[0] for n in names}) == 37 and len({r.scenario for r in runs}) == 35
    # Every run's main metric is found in the schema table (none falls back).
    assert all(r.group in MAIN_METRICS for r in runs)
    # A cell is (dataset, model, shots): the 283 in-context ablation runs (max_train_instances=0 to 16 in their names)
    # are one dataset each at several shots, as lm-eval runs at several shots are, not one dataset per shot count.
    cells = {(("mmlu", r.mmlu_subject) if r.mmlu_subject else ("helm", r.dataset), r.model,
              r.arg_dict.get("max_train_instances")) for r in runs}
    assert len(cells) == len(names)  # unique: no two runs fight over one cell
    assert not any("max_train_instances" in r.dataset for r in runs)
    assert sum("max_train_instances" in n for n in names) == 283
    # 315 canonical + 15 stop=hash + 5 global_prefix MMLU runs are standard; the 90 ablation runs are not.
    assert sum(r.mmlu_subject is not None for r in runs) == 335
    assert sum(r.scenario == "mmlu" for r in runs) == 425


@pytest.mark.parametrize("name, scenario, dataset, group, model", [
    ("babi_qa:task=15,model=AlephAlpha_luminous-base", "babi_qa", "babi_qa:task=15", "babi_qa",
     "AlephAlpha/luminous-base"),
    ("legal_support,method=multiple_choice_joint:model=mistralai_mistral-7b-v0.1", "legal_support",
     "legal_support:method=multiple_choice_joint", "legal_support", "mistralai/mistral-7b-v0.1"),
    ("dyck_language_np=3:model=openai_davinci", "dyck_language_np=3", "dyck_language_np=3", "dyck_language",
     "openai/davinci"),
    ("natural_qa:mode=closedbook,model=together_yalm,data_augmentation=canonical", "natural_qa",
     "natural_qa:mode=closedbook", "natural_qa_closedbook", "together/yalm"),
    ("raft:subset=ade_corpus_v2,model=together_t0pp,data_augmentation=canonical,stop=hash", "raft",
     "raft:subset=ade_corpus_v2", "raft", "together/t0pp"),
    ("math:subject=algebra,level=1,use_official_examples=False,use_chain_of_thought=True,model=openai_davinci",
     "math", "math:subject=algebra,level=1,use_official_examples=False,use_chain_of_thought=True",
     "math_chain_of_thought", "openai/davinci"),
    ("commonsense:dataset=hellaswag,method=multiple_choice_separate_original,model=openai_ada,"
     "data_augmentation=canonical", "commonsense", "commonsense:dataset=hellaswag,method=multiple_choice_separate_original",
     "hellaswag", "openai/ada"),
    ("synthetic_efficiency:random=None,model=ai21_j1-large,tokenizer=ai21_j1,num_prompt_tokens=1,num_output_tokens=1",
     "synthetic_efficiency", "synthetic_efficiency:random=None,num_prompt_tokens=1,num_output_tokens=1",
     "synthetic_efficiency", "ai21/j1-large"),
])
def test_parse_run_name(name, scenario, dataset, group, model):
    r = parse_run_name(name)
    assert (r.scenario, r.dataset, r.group, r.model) == (scenario, dataset, group, model)


def test_mmlu_runs_standard_vs_ablation():
    std = parse_run_name("mmlu:subject=us_foreign_policy,method=multiple_choice_joint,model=openai_davinci,"
                         "data_augmentation=canonical")
    v1 = parse_run_name("mmlu:subject=anatomy,method=multiple_choice_joint,eval_split=test,groups=mmlu_anatomy,"
                        "model=01-ai_yi-6b")
    abl = parse_run_name("mmlu:subject=anatomy,method=multiple_choice_separate_original,model=openai_davinci,"
                         "groups=ablation_multiple_choice")
    assert (std.mmlu_subject, v1.mmlu_subject, abl.mmlu_subject) == ("us_foreign_policy", "anatomy", None)


@pytest.mark.parametrize("bad", ["", "   ", ":model=x", "babi_qa:task"])
def test_bad_run_names_raise(bad):
    with pytest.raises(ValueError):
        parse_run_name(bad)


# -- run directories ----------------------------------------------------------------------------
def test_real_run_directory(store):
    run = require(HELM_RAW / "run")
    report = ingest_paths(store, [run], show_progress=False)
    assert [f.adapter for f in report.files] == ["helm_run", "item_table"]  # and its per-instance scores
    long = query_results(store, MatrixQuery(benchmarks=("helm",)))
    assert len(long) == 1
    row = long.iloc[0]
    # schema_classic: babi_qa -> quasi_exact_match on test; the unperturbed test stat's mean.
    assert (row.model, row.dataset, row.metric) == ("AlephAlpha/luminous-base", "babi_qa:task=15", "quasi_exact_match")
    assert row.value == pytest.approx(0.25375870920425375) and row.num_fewshot == 5 and row.n_samples == 909
    every = query_results(store, MatrixQuery(benchmarks=("helm",)), all_metrics=True)
    assert set(every.metric) == {"quasi_exact_match", "exact_match", "prefix_exact_match", "quasi_prefix_exact_match"}


def test_benchmark_output_tree(store):
    report = ingest_paths(store, [RUNS], show_progress=False)
    by_name = {Path(f.path).name: f for f in report.files}
    assert len(report.by_status("ingested")) == 14  # 1 real + 5 classic + 8 MMLU v1.x runs
    assert all(f.adapter == "helm_run" for f in report.by_status("ingested"))
    copyright_ = next(f for n, f in by_name.items() if n.startswith("copyright"))
    assert copyright_.status == "skipped" and "no main accuracy metric" in copyright_.reason
    assert by_name["costs.json"].status == "skipped"
    long = query_results(store, MatrixQuery())
    cell = {(r.model, r.benchmark, r.dataset): r for r in long.itertuples()}
    d2 = "openai/text-davinci-002"
    boolq = cell[(d2, "helm", "boolq")]
    # BoolQ's main split is valid: the mean of the three unperturbed valid trials, not test, not perturbed.
    assert boolq.metric == "quasi_exact_match" and boolq.value == pytest.approx(0.877) and boolq.random_baseline == 0.5
    assert cell[(d2, "helm", "dyck_language_np=3")].metric == "exact_match_indicator"
    custom = cell[(d2, "helm", "my_custom_scenario:difficulty=hard")]
    assert custom.metric == "exact_match" and custom.value == pytest.approx(0.61)  # fallback: test split
    assert cell[(d2, "mmlu", "econometrics")].metric == "acc"
    assert cell[(d2, "mmlu", "econometrics")].random_baseline == 0.25
    ablation = "mmlu:subject=econometrics,method=multiple_choice_separate_original,groups=ablation_multiple_choice"
    assert cell[(d2, "helm", ablation)].value == pytest.approx(40 / 114)
    yi = cell[("01-ai/yi-6b", "mmlu", "econometrics")]
    assert yi.value == pytest.approx(40 / 114) and yi.num_fewshot == 5 and yi.n_samples == 114
    mmlu = load_matrix(store, MatrixQuery(benchmarks=("mmlu",), models="01-ai/*", normalise="none"))
    assert mmlu.shape == (2, 4) and not mmlu.isna().any().any()


def _stats(*entries):
    return [{"name": n, "count": 1, "sum": v, "mean": v} for n, v in entries]


def test_perturbed_and_sub_split_stats_are_never_the_main_value():
    spec = {"name": "boolq:model=openai_ada", "adapter_spec": {"model": "openai/ada", "max_train_instances": 5},
            "groups": ["boolq"]}
    only_perturbed = _stats(({"name": "quasi_exact_match", "split": "valid",
                              "perturbation": {"name": "robustness", "computed_on": "worst"}}, 0.1),
                            ({"name": "quasi_exact_match", "split": "valid", "sub_split": "toxic"}, 0.2))
    with pytest.raises(IngestError, match="not in stats.json"):
        records_for_run(spec, only_perturbed, "x")
    good = only_perturbed + _stats(({"name": "quasi_exact_match", "split": "valid"}, 0.7))
    recs = records_for_run(spec, good, "x")
    assert [(r.metric, r.value, r.primary) for r in recs] == [("quasi_exact_match", 0.7, True)]


def test_main_metric_table_and_fallback():
    run = parse_run_name("msmarco:track=trec,valid_topk=30,model=openai_ada,data_augmentation=canonical")
    assert main_metric(run, [], {}, "x")[:2] == ("NDCG@10", "valid")
    run = parse_run_name("new_thing:model=openai_ada")
    assert main_metric(run, [], {("f1_score", "valid"): {}, ("exact_match", "valid"): {}}, "x")[:2] == \
        ("exact_match", "valid")
    with pytest.raises(IngestError, match="not in the main-metric table"):
        main_metric(run, [], {("num_instances", "test"): {}}, "x")
    # run_spec.groups wins over the name-derived group.
    assert main_metric(run, ["wikifact"], {}, "x")[:2] == ("quasi_exact_match", "test")


@pytest.mark.parametrize("spec, stats, match", [
    ({"adapter_spec": {}}, [], "no run name"),
    ({"name": "boolq"}, [], "no model"),
    ({"name": "boolq:model=a_b", "adapter_spec": []}, [], "adapter_spec"),
    ({"name": "boolq:model=a_b"}, {"not": "a list"}, "expected a list"),
    ({"name": "boolq:model=a_b"}, [{"count": 1}], "has no 'name'"),
    ({"name": "boolq:model=a_b"}, _stats(({"name": "quasi_exact_match", "split": "valid"}, None)), "no value"),
    # A score HELM did not write: percent, a duplicated stat that disagrees, a mean that is text.
    ({"name": "boolq:model=a_b"}, _stats(({"name": "quasi_exact_match", "split": "valid"}, 72.5)),
     r"quasi_exact_match \(valid\) = 72.5 is outside \[0, 1\]"),
    ({"name": "boolq:model=a_b"}, _stats(({"name": "quasi_exact_match", "split": "valid"}, 0.7),
                                          ({"name": "quasi_exact_match", "split": "valid"}, 0.9)),
     r"gives quasi_exact_match \(valid\) twice: 0.7 and 0.9"),
    ({"name": "boolq:model=a_b"}, _stats(({"name": "quasi_exact_match", "split": "valid"}, "high")),
     "mean 'high' is not a number"),
])
def test_malformed_runs_raise_ingest_error(spec, stats, match):
    with pytest.raises(IngestError, match=match):
        records_for_run(spec, stats, "x")


# -- leaderboard tables -------------------------------------------------------------------------
def test_core_scenarios_table(store):
    report = ingest_paths(store, [RELEASES / "v0.4.0"], show_progress=False)
    status = {str(Path(f.path).relative_to(RELEASES)): f.status for f in report.files}
    assert status == {"v0.4.0/groups.json": "skipped", "v0.4.0/groups/core_scenarios.json": "ingested",
                      "v0.4.0/groups/json/core_scenarios_accuracy.json": "ingested", "v0.4.0/groups/mmlu.json": "ingested"}
    assert not report.conflicts  # the single-table JSON repeats the accuracy table: duplicates, not conflicts
    df = load_matrix(store, MatrixQuery(benchmarks=("helm_core_scenarios",), normalise="none"))
    assert df.shape == (4, 5) and sorted(df.columns) == ["BoolQ", "HellaSwag", "MMLU", "NarrativeQA", "XSUM"]
    assert int(df.isna().sum().sum()) == 2  # gpt-3.5-turbo-0613 was not run on HellaSwag / XSUM
    metrics = {c: m["metric"] for c, m in df.attrs["datasets"].items()}
    assert metrics["XSUM"] == "ROUGE-2" and metrics["NarrativeQA"] == "F1"
    # Robustness values (0.04 lower in the fixture) and efficiency columns are not read.
    assert df.loc["openai/text-davinci-002", "BoolQ"] == pytest.approx(0.877)
    assert set(store.benchmarks()["benchmark"]) == {"helm_core_scenarios", "mmlu"}
    if HELM_CLASSIC.exists():  # the same published numbers as Every Eval Ever's helm_classic conversion
        ingest_paths(store, [HELM_CLASSIC / "openai"], show_progress=False)
        eee = load_matrix(store, MatrixQuery(benchmarks=("helm_classic",), models="openai/text-*", normalise="none"))
        for model in ("openai/text-davinci-002", "openai/text-curie-001"):
            for col in ("MMLU", "BoolQ", "NarrativeQA", "HellaSwag", "XSUM"):
                assert df.loc[model, col] == pytest.approx(eee.loc[model, col])


def test_scenario_tables_map_mmlu_subjects_and_skip_the_aggregate(store):
    ingest_paths(store, [RELEASES / "v0.4.0" / "groups" / "mmlu.json"], show_progress=False)
    long = query_results(store, MatrixQuery())
    assert set(long.benchmark) == {"mmlu"} and set(long.metric) == {"acc"}
    assert sorted(long.dataset.unique()) == ["econometrics", "us_foreign_policy"]
    v = long.set_index(["model", "dataset"]).value
    assert v[("openai/text-davinci-003", "us_foreign_policy")] == pytest.approx(0.86)  # EM column, not robustness


def test_mmlu_table_and_every_eval_ever_meet_in_the_same_cells(store):
    ingest_paths(store, [RELEASES / "v1.13.0"], show_progress=False)
    report = ingest_paths(store, [FIX / "every_eval_ever"], show_progress=False)
    assert [f.adapter for f in report.files] == ["every_eval_ever", "every_eval_ever"]
    df = load_matrix(store, MatrixQuery(benchmarks=("mmlu",), normalise="none"))
    assert df.shape == (2, 11)  # one row per model: the two sources share model names, subjects and metric
    # The table has k/n, Every Eval Ever the 3-decimal rounding: 11 of 22 cells differ in the 4th decimal, each the
    # table's value rounded (harness_ext.store.rounding): no conflict, said once, the exact value used.
    assert report.conflicts == [] and store.n_conflicting_cells() == 0
    assert "11 cells given by two files that agree to the decimals the less precise gives" in report.summary()
    assert df.loc["01-ai/yi-6b", "econometrics"] == 40 / 114
    meta = df.attrs["datasets"]["econometrics"]
    assert meta["metric"] == "acc" and meta["random_baseline"] == 0.25


def test_every_eval_ever_rounding_first_still_gives_the_tables_exact_value(store):
    """The same two real sources the other way round: Every Eval Ever's 3 decimals ingested first, the HELM table's
    k/n used all the same (harness_ext.store.rounding)."""
    ingest_paths(store, [FIX / "every_eval_ever"], show_progress=False)
    report = ingest_paths(store, [RELEASES / "v1.13.0"], show_progress=False)
    assert report.conflicts == [] and store.n_conflicting_cells() == 0
    df = load_matrix(store, MatrixQuery(benchmarks=("mmlu",), normalise="none"))
    assert df.loc["01-ai/yi-6b", "econometrics"] == 40 / 114


def test_calibration_tables_and_aggregates_are_not_read(store):
    ingest_paths(store, [RELEASES / "v1.13.0"], show_progress=False)
    long = query_results(store, MatrixQuery(), all_metrics=True)
    assert len(long) == 22 and set(long.metric) == {"acc"}  # 2 models x 11 subjects; no ECE, no win rate


def test_table_errors(tmp_path, store):
    bad = {"title": "Accuracy", "name": "accuracy",
           "header": [{"value": "Model"}, {"value": "X - EM", "metadata": {"metric": "EM", "run_group": "X"}}],
           "rows": [[{"value": "m"}, {"value": "high"}]]}
    p = tmp_path / "t.json"
    p.write_text(json.dumps(bad))
    report = ingest_paths(store, [p], show_progress=False)
    assert report.files[0].status == "skipped" and "not a number" in report.files[0].reason
    assert store.counts()["results"] == 0


def test_table_cells_in_percent_are_refused_and_empty_cells_counted(tmp_path, store):
    """An EM of 55 was stored as a score of 55; a model's empty cell (not run) was left out without a word."""
    table = {"title": "Accuracy", "name": "accuracy",
             "header": [{"value": "Model"}, {"value": "X - EM", "metadata": {"metric": "EM", "run_group": "X"}},
                        {"value": "Y - EM", "metadata": {"metric": "EM", "run_group": "Y"}}],
             "rows": [[{"value": "m1"}, {"value": 0.5}, {"value": None}], [{"value": "m2"}, {"value": 0.7}, {}]]}
    p = tmp_path / "ok.json"
    p.write_text(json.dumps(table))
    (f,) = ingest_paths(store, [p], show_progress=False).files
    assert f.status == "ingested" and f.n_results == 2
    assert f.notes == ["2 empty cells (not run) left out: m1 on Y - EM, m2 on Y - EM"]
    table["rows"][1][1]["value"] = 55.0
    p = tmp_path / "pct.json"
    p.write_text(json.dumps(table))
    (f,) = ingest_paths(store, [p], show_progress=False).files
    assert f.status == "skipped" and "column 'X - EM': EM 55 is outside [0, 1]" in f.reason
