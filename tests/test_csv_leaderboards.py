"""Leaderboard CSVs as published: metadata columns, percent scales, aggregates, metric variants, sidecars.

Real-format files: the ObsScaling slices in fixtures/csv (ryoungj/ObsScaling, see fixtures/csv/README.md)
and the benchbench leaderboards in ../shared/data/benchbench (IBM/benchbench, PROVENANCE.md).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import SHARED_DATA, require
from harness_ext.cli import main
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix
from harness_ext.store.db import Store

FIX = Path(__file__).parent / "fixtures" / "csv"
OBS = FIX / "obsscaling_base_llm_benchmark_eval.csv"
ALPACA = FIX / "alpaca_eval_benchmarks.csv"
EMERGENT = FIX / "obsscaling_base_llm_emergent_capability_eval.csv"
ARENA = FIX / "arena_leaderboard_table_20240118.csv"
ALPACA_RANKING = FIX / "alpaca_eval_claude_3_opus_ranking_leaderboard.csv"
ALPACA_NAME = FIX / "alpaca_eval_gpt4_turbo_fn_leaderboard.csv"
ARENA_HARD = FIX / "arena_hard_auto_leaderboard_v0.1.csv"
OPENCOMPASS = FIX / "opencompass_summary_race.csv"
BENCHBENCH = SHARED_DATA / "benchbench" / "leaderboards"


def _datasets(store):
    return store.con.execute("SELECT benchmark, name, metric, is_primary, kind, scale, min_score, max_score, "
                             "higher_is_better, random_baseline, baseline_source FROM datasets").df()


def test_model_family_and_size_columns_are_metadata_not_scores():
    # Issue 15: "row 2: 'Model Family' score 'Llama-2' is not a number"; "Model Size (B)" and "FLOPs (1E21)"
    # were ingested as datasets.
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [OBS], show_progress=False)
        assert len(rep.by_status("ingested")) == 1, [f.reason for f in rep.files]
        d = _datasets(s)
        assert sorted(d["name"]) == sorted(["MMLU", "ARC-C", "HellaSwag", "Winograd", "TruthfulQA", "GSM8K",
                                            "XWinograd", "HumanEval"])
        md = s.model_metadata(["meta-llama/Llama-2-7b-hf"]).set_index("key")["value"]
        assert md["Model Family"] == "Llama-2"
        assert md["Model Size (B)"] == 7.0 and md["FLOPs (1E21)"] == 84.0 and md["Pretraining Data Size (T)"] == 2.0
        # Mistral has no data size or FLOPs in the file: those keys are absent, not NaN
        mistral = s.model_metadata(["mistralai/Mistral-7B-v0.1"]).set_index("key")["value"]
        assert "FLOPs (1E21)" not in mistral and mistral["Model Size (B)"] == 7.3
        df = load_matrix(s, MatrixQuery(normalise="none"))
        assert df.shape == (8, 8)
        assert df.loc["meta-llama/Meta-Llama-3-8B", "ARC-C"] != df.loc["meta-llama/Meta-Llama-3-8B", "ARC-C"]  # empty cell
        assert set(d["scale"]) == {"proportion"}


def test_meta_columns_option_and_reingest_with_other_options(tmp_path):
    db = str(tmp_path / "s.duckdb")
    # Declared metadata: HumanEval is kept out of the scores (a user's choice, not the name rule).
    assert main(["ingest", str(OBS), "--db", db, "-q", "--meta-columns", "HumanEval,XWinograd"]) == 0
    with Store.open(db, read_only=True) as s:
        assert "HumanEval" not in set(_datasets(s)["name"])
        assert s.model_metadata(["huggyllama/llama-7b"]).set_index("key")["value"]["HumanEval"] > 0.1
    assert main(["ingest", str(OBS), "--db", db, "-q", "--meta-columns", "Nope"]) == 1  # skipped: no such column
    with Store.open(db, read_only=True) as s:
        assert s.counts()["sources"] == 1


def test_unknown_meta_column_is_an_error_naming_it(tmp_path, capsys):
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", str(OBS), "--db", db, "--meta-columns", "Nope"]) == 1
    cap = capsys.readouterr()
    out = cap.out + cap.err  # the skipped file's reason is a warning, on stderr
    assert "Nope" in out and OBS.name in out


def test_stray_text_in_a_numeric_column_is_an_error_not_metadata(tmp_path):
    text = OBS.read_text().splitlines()
    cells = text[3].split(",")
    cells[5] = "n/a*"  # MMLU of one model
    text[3] = ",".join(cells)
    p = tmp_path / "lb.csv"
    p.write_text("\n".join(text) + "\n")
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [p], show_progress=False)
        (f,) = rep.by_status("skipped")
        assert "row 4" in f.reason and "'MMLU'" in f.reason and "--meta-columns" in f.reason
        assert s.counts()["results"] == 0


def test_metric_variants_of_one_task_are_one_dataset():
    # Issue 15: "a task reported with 4 metrics gets 4x the weight". ipa_transliterate_2 has exact_match and bleu.
    with Store.open(":memory:") as s:
        ingest_paths(s, [EMERGENT], show_progress=False)
        d = _datasets(s).set_index(["name", "metric"])
        assert d.loc[("ipa_transliterate_2", "exact_match"), "is_primary"]
        assert not d.loc[("ipa_transliterate_2", "bleu"), "is_primary"]
        assert d.loc[("ipa_transliterate_2", "bleu"), "scale"] == "percent"  # BLEU 0-100 next to proportions
        assert ("word_unscrambling_2_exact_match", "score") in d.index  # a lone suffixed column stays as it is
        df = load_matrix(s, MatrixQuery(normalise="none"))
        assert "ipa_transliterate_2" in df.columns and df.shape[1] == 7
        bleu = load_matrix(s, MatrixQuery(normalise="none", metric="bleu"))
        assert list(bleu.columns) == ["ipa_transliterate_2"]
        assert bleu.loc["meta-llama/Llama-2-7b-hf"].iloc[0] == pytest.approx(27.23879164406593)


def test_sidecar_sets_chance_direction_scale_kind(tmp_path):
    p = tmp_path / "lb.csv"
    shutil.copy(OBS, p)
    (tmp_path / "lb.csv.meta.yaml").write_text(
        "benchmark: obs\n"
        "meta_columns: [HumanEval]\n"
        "columns:\n"
        "  MMLU: {choices: 4}\n"
        "  ARC-C: {chance: 0.25, source: 'ARC: 4 choices'}\n"
        "  TruthfulQA: {higher_is_better: false}\n"
        "  GSM8K: {kind: aggregate}\n"
        "  XWinograd: {dataset: xwinograd, metric: acc}\n")
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [p], show_progress=False)
        assert len(rep.by_status("ingested")) == 1, [f.reason for f in rep.files]
        d = _datasets(s).set_index("name")
        assert set(d["benchmark"]) == {"obs"} and "HumanEval" not in d.index
        assert d.loc["MMLU", "random_baseline"] == 0.25 and d.loc["MMLU", "baseline_source"] == "4 answer choices (sidecar)"
        assert d.loc["ARC-C", "baseline_source"] == "ARC: 4 choices"
        assert d.loc["TruthfulQA", "higher_is_better"] == False  # noqa: E712
        assert d.loc["GSM8K", "kind"] == "aggregate" and d.loc["xwinograd", "metric"] == "acc"
        assert "GSM8K" not in load_matrix(s, MatrixQuery(normalise="none")).columns
        assert list(load_matrix(s, MatrixQuery(normalise="none", aggregates="only")).columns) == ["GSM8K"]
    # Editing the sidecar changes what the file means: ingesting again re-reads it.
    with Store.open(":memory:") as s:
        ingest_paths(s, [p], show_progress=False)
        (tmp_path / "lb.csv.meta.yaml").write_text("columns:\n  Nope: {kind: metadata}\n")
        rep = ingest_paths(s, [p], show_progress=False)
        (f,) = rep.by_status("skipped")
        assert "Nope" in f.reason and f.path == str(p)


def test_bad_sidecar_is_reported_with_its_file(tmp_path):
    p = tmp_path / "lb.csv"
    shutil.copy(OBS, p)
    (tmp_path / "lb.meta.yaml").write_text("columns:\n  MMLU: {chanse: 0.25}\n")
    with Store.open(":memory:") as s:
        (f,) = ingest_paths(s, [p], show_progress=False).by_status("skipped")
        assert "lb.meta.yaml" in f.reason or "chanse" in f.reason


def test_benchbench_leaderboards_percent_elo_and_aggregates():
    root = require(BENCHBENCH)
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [root], show_progress=False)
        # 40 files; opencompass_academic's last line is "Mistral-7B-Instruct-v0.321" (name and score run together)
        assert len(rep.by_status("ingested")) == 39
        (bad,) = rep.by_status("skipped")
        assert "opencompass_academic" in bad.path and "row 21" in bad.reason
        d = _datasets(s).set_index(["benchmark", "name"])
        assert d.loc[("chatbot_arena_241104_holistic", "arena_elo"), "scale"] == "elo"
        assert d.loc[("opencompass_arena_240829_holistic", "OC_arena"), "scale"] == "elo"
        assert d.loc[("arena_hard_240829_holistic", "arena_hard"), "scale"] == "percent"
        assert d.loc[("mmlu_pro_240829_knowledge", "mmlu_pro"), "scale"] == "proportion"
        # aggregates: by name (lvbench "average", hydrox "overall"), by value (LiveBench's total is the row mean),
        # and AIR-Bench's "AIR_Score" (the one "... score" column, inside the other 16 columns' range on every row;
        # not their row mean: AIR weights its categories). Nothing else of the 40 files.
        agg = set(d.index[d["kind"] == "aggregate"])
        assert agg == {("lvbench_241189_longcontext", "average"), ("hydrox_safety_241001_safety", "hydrox_overall_score"),
                       ("livebench_240701_holistic", "livebench_240624"), ("livebench_240829_holistic", "livebench_240725"),
                       ("helm_airbench_240916_safety", "HELM_AIRBENCH_AIR_Score")}
        # a leaderboard's only column is its score, whatever its name
        assert d.loc[("tablebench_241002_tables", "tablebench_overall_dp"), "kind"] == "dataset"
        lb = load_matrix(s, MatrixQuery(benchmarks=("livebench_240829_holistic",), normalise="none"))
        assert list(lb.columns) == ["LB_Coding", "LB_Data_Analysis", "LB_IF", "LB_Language", "LB_Mathematics", "LB_Reasoning"]


@pytest.mark.parametrize("threshold", [0, 1 << 40], ids=["columnar", "records"])
def test_air_score_is_an_aggregate_on_both_paths_and_a_lone_score_column_is_not(tmp_path, monkeypatch, threshold):
    """A new-user sweep: HELM AIR-Bench's AIR_Score (its overall score) was stored as a 17th dataset, so reduce could
    pick it. A column named "... score" on another scale than the others (MT-bench 0-10 beside proportions) stays one."""
    import harness_ext.adapters.csv_table as csv_table

    air = require(BENCHBENCH / "helm_airbench_240916_safety.csv")
    monkeypatch.setattr(csv_table, "COLUMNAR_MIN_BYTES", threshold)
    mt = tmp_path / "mixed.csv"
    mt.write_text("model,MMLU,GSM8K,ARC,MT-bench score\na,0.5,0.4,0.6,7.1\nb,0.6,0.5,0.7,8.0\nc,0.7,0.6,0.8,8.9\n")
    with Store.open(":memory:") as s:
        ingest_paths(s, [air, mt], show_progress=False)
        d = _datasets(s).set_index("name")
        assert d.loc["HELM_AIRBENCH_AIR_Score", "kind"] == "aggregate"
        assert (d.loc[d.index.str.startswith("HELM_AIRBENCH_"), "kind"] == "dataset").sum() == 16
        assert d.loc["MT-bench score", "kind"] == "dataset"


def test_llm_model_header_is_a_model_column():
    root = require(BENCHBENCH)
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [root / "lvbench_241189_longcontext.csv"], show_progress=False)
        assert len(rep.by_status("ingested")) == 1
        df = load_matrix(s, MatrixQuery(normalise="none"))
        assert df.shape == (10, 11) and "ChatGLM3-6B" in df.index


@pytest.mark.parametrize("threshold", [0, 1 << 40], ids=["columnar", "records"])
def test_spreadsheet_export_with_wrapped_headers_and_mixed_scales(tmp_path, monkeypatch, threshold):
    """AlpacaEval's benchmark table (fixtures/csv/README.md), a leaderboard never tuned on: it was refused whole
    ("dataset 'Arena Elo\\n[Feb 2, 2024]' contains a control character or line break")."""
    import harness_ext.adapters.csv_table as csv_table

    monkeypatch.setattr(csv_table, "COLUMNAR_MIN_BYTES", threshold)  # a wrapped header goes to the record path
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [ALPACA], show_progress=False)
        assert len(rep.by_status("ingested")) == 1
        d = _datasets(s).set_index("name")
        # wrapped header cells are read as the text they show; nothing else about a name changes
        assert "Arena Elo [Feb 2, 2024]" in d.index and "AGI Eval (en)" in d.index and "BBH, cot (3-shot)" in d.index
        assert "Output Length" not in d.index  # an answer length describes a model: metadata, not a score
        assert len(d) == 21
        assert d.loc["Arena Elo [Feb 2, 2024]", "scale"] == "elo"
        assert tuple(d.loc["MT-bench (multi-turn)", ["scale", "min_score", "max_score"]]) == ("bounded", 1.0, 10.0)
        assert d.loc["HELM Lite", "scale"] == "proportion" and d.loc["WildBench", "scale"] == "unbounded"
        df = load_matrix(s, MatrixQuery(normalise="none"))
        assert df.shape == (53, 21) and df.loc["gpt4_0314", "MT-bench (multi-turn)"] == pytest.approx(8.96)
        # normalised: the shot count in a header does not hide the task's answer choices (chance-corrected)
        norm = load_matrix(s, MatrixQuery())
        assert norm.loc["gpt4_0314", "MMLU (5-shot)"] == pytest.approx((0.864 - 0.25) / 0.75)
        assert norm.loc["gpt4_0314", "MT-bench (multi-turn)"] == pytest.approx((8.96 - 1) / 9)
        assert s.model_metadata(["gpt4_0314"]).set_index("key")["value"]["Output Length"] == pytest.approx(1371.0)


def test_clean_header_and_known_scale_prefix():
    from harness_ext.adapters.csv_table import META_NAME, clean_header
    from harness_ext.store.scales import chance_level, infer_scale

    assert clean_header("Arena Elo\n[Feb 2, 2024]") == "Arena Elo [Feb 2, 2024]"
    assert clean_header(" MMLU  (5-shot)\t") == "MMLU  (5-shot)"  # only breaks and tabs change; spaces stay
    for meta in ("Output Length", "avg_length", "Length", "mean length"):
        assert META_NAME.search(meta), meta
    for score in ("length_controlled_winrate", "Length-controlled Win Rate", "LC AlpacaEval 2.0", "LongBench"):
        assert not META_NAME.search(score), score
    assert infer_scale([4.3, 9.3], name="MT-bench (multi-turn)")[0] == "bounded"
    assert infer_scale([40.0, 93.0], name="MT-bench win rate")[0] == "percent"  # outside 1-10: not the judge score
    assert chance_level("HellaSwag (10-shot)", "score")[0] == pytest.approx(0.25)
    assert chance_level("mmlu_5shot", "acc")[0] == pytest.approx(0.25)
    assert chance_level("TruthfulQA (0-shot)", "score") == (None, None)


@pytest.mark.parametrize("threshold", [0, 1 << 40], ids=["columnar", "records"])
def test_model_column_not_first_named_name_or_an_unnamed_index(tmp_path, monkeypatch, threshold):
    """Three real leaderboards (fixtures/csv/README.md) that were skipped as "not a recognised result file": Chatbot
    Arena's table leads with the model key before "Model", AlpacaEval's docs name the model column "name", and its
    package's leaderboards are pandas dumps indexed by model (an unnamed first column). AlpacaEval's
    "standard_error" was stored as a lower-is-better score ("error")."""
    import harness_ext.adapters.csv_table as csv_table

    monkeypatch.setattr(csv_table, "COLUMNAR_MIN_BYTES", threshold)
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [ARENA], show_progress=False)
        assert len(rep.by_status("ingested")) == 1, [f.reason for f in rep.files]
        d = _datasets(s).set_index("name")
        assert sorted(d.index) == ["MMLU", "MT-bench (score)"]
        assert tuple(d.loc["MT-bench (score)", ["scale", "min_score", "max_score"]]) == ("bounded", 1.0, 10.0)
        assert d.loc["MMLU", "scale"] == "proportion"
        df = load_matrix(s, MatrixQuery(normalise="none", aliases=False))
        # 14 rows; pplx-70b-online has "-" in both columns, so no score
        assert df.shape == (13, 2) and df.loc["GPT-4-Turbo", "MT-bench (score)"] == pytest.approx(9.32)
        assert df.loc["GPT-4-Turbo", "MMLU"] != df.loc["GPT-4-Turbo", "MMLU"]  # "-": missing
        md = s.model_metadata(["Yi-34B-Chat"]).set_index("key")["value"]
        assert md["key"] == "yi-34b-chat" and md["Organization"] == "01 AI"
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [ALPACA_RANKING], show_progress=False)
        assert len(rep.by_status("ingested")) == 1, [f.reason for f in rep.files]
        d = _datasets(s).set_index("name")
        assert sorted(d.index) == ["discrete_win_rate", "length_controlled_winrate", "win_rate"]
        assert set(d["scale"]) == {"percent"} and set(d["kind"]) == {"dataset"}
        df = load_matrix(s, MatrixQuery(normalise="none", aliases=False))
        assert df.shape == (6, 3)
        assert df.loc["claude-3-opus-20240229", "length_controlled_winrate"] == pytest.approx(43.25056335573304)
        md = s.model_metadata(["claude-3-opus-20240229"]).set_index("key")["value"]
        assert md["standard_error"] == pytest.approx(1.5714493961428302) and md["n_total"] == 805
        assert md["mode"] == "minimal" and "" not in set(md.index)
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [ALPACA_NAME], show_progress=False)
        assert len(rep.by_status("ingested")) == 1, [f.reason for f in rep.files]
        assert list(_datasets(s)["name"]) == ["win_rate"]
        df = load_matrix(s, MatrixQuery(normalise="none", aliases=False))
        assert df.shape == (11, 1) and df.loc["Yi 34B Chat", "win_rate"] == pytest.approx(35.9375)
        assert s.model_metadata(["ChatGPT"]).set_index("key")["value"]["avg_length"] == 832


@pytest.mark.parametrize("threshold", [0, 1 << 40], ids=["columnar", "records"])
def test_interval_bounds_and_token_counts_are_metadata(monkeypatch, threshold):
    """Arena-Hard-Auto's leaderboard (fixtures/csv/README.md): its score's interval bounds (rating_q025,
    rating_q975) were stored as two more datasets, and avg_tokens (named "avg") as the aggregate."""
    import harness_ext.adapters.csv_table as csv_table

    monkeypatch.setattr(csv_table, "COLUMNAR_MIN_BYTES", threshold)
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [ARENA_HARD], show_progress=False)
        assert len(rep.by_status("ingested")) == 1, [f.reason for f in rep.files]
        d = _datasets(s)
        assert list(d["name"]) == ["score"] and list(d["kind"]) == ["dataset"] and list(d["scale"]) == ["percent"]
        md = s.model_metadata(["gemma-2b-it"]).set_index("key")["value"]
        assert md["rating_q025"] == pytest.approx(2.33) and md["rating_q975"] == pytest.approx(3.67)
        assert md["avg_tokens"] == 369.0 and md["CI"] == "(0.7, 0.7)"
    from harness_ext.adapters.csv_table import META_NAME

    for meta in ("ci_low", "CI high", "rating_upper", "95% CI (lower)", "num_tokens"):
        assert META_NAME.search(meta), meta
    for score in ("date_understanding", "uppercase_eval", "q2_accuracy", "tokenizer_eval", "score"):
        assert not META_NAME.search(score), score


def test_opencompass_summary_csv(tmp_path):
    """OpenCompass's summary CSV (datasets as rows, one column per model) was skipped as not a result file."""
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [OPENCOMPASS], show_progress=False)
        assert len(rep.by_status("ingested")) == 1, [f.reason for f in rep.files]
        d = _datasets(s).set_index("name")
        assert set(d["benchmark"]) == {"opencompass"} and set(d["scale"]) == {"percent"}
        assert d.loc["race", "kind"] == "aggregate" and d.loc["race", "metric"] == "naive_average"
        assert tuple(d.loc[["race-high", "race-middle"], "kind"]) == ("dataset", "dataset")
        df = load_matrix(s, MatrixQuery(normalise="none"))
        assert df.loc["internlm-7b-hf", "race-high"] == pytest.approx(74.53) and "race" not in df.columns
    # AISBench, OpenCompass's fork, adds a count column and writes "82.00 (7/8)"; "-" is missing, a divider row skipped
    f = tmp_path / "summary_20260809.csv"
    f.write_text("dataset,version,metric,mode,total_count,vllm\ngsm8k,1,accuracy,gen,8,82.00 (7/8)\n"
                 "math,1,accuracy,gen,8,-\n--------- Exam ---------,-,-,-,-,-\n")
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [f], show_progress=False)
        assert len(rep.by_status("ingested")) == 1, [f.reason for f in rep.files]
        df = load_matrix(s, MatrixQuery(normalise="none"))
        assert df.shape == (1, 1) and df.loc["vllm", "gsm8k"] == pytest.approx(82.0)
    # what was left out is noted: the row without a score and the count column
    assert rep.files[0].notes == ["1 row without a score in any model column left out: math accuracy",
                                  "1 column that counts items, not a model, left out: total_count"]


def test_unnamed_first_column_of_row_numbers_is_refused_with_the_reason(tmp_path):
    f = tmp_path / "scores.csv"
    f.write_text(",MMLU,GSM8K\n0,0.5,0.3\n1,0.6,0.2\n")
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [f], show_progress=False)
        assert not rep.by_status("ingested")
        assert "unnamed first column holds row numbers" in rep.files[0].reason


def test_spread_after_a_score_is_dropped_not_the_column():
    """Scores printed with their spread ("85.2 \u00b1 1.1") made a column text: model metadata, its scores lost."""
    from harness_ext.adapters.csv_table import META_NAME, _parse

    for cell in ("85.2 \u00b1 1.1", "85.2\u00b11.1", "85.2 (\u00b11.1)", "85.2 +/- 1.1", "85.2 (1.1)", "85.2 (-1.5, +1.7)"):
        assert _parse(cell) == (85.2, False), cell
    assert _parse("85.2% \u00b1 1.1%") == (85.2, True)
    for text in ("Llama (7B)", "(3)", "7B"):
        with pytest.raises(ValueError):
            _parse(text)
    for spread in ("standard_error", "lc_standard_error", "Std Dev", "standard deviation"):
        assert META_NAME.search(spread), spread
