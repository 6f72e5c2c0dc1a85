"""Wide CSV rows keyed by more than the model (:mod:`harness_ext.adapters.csv_keys`), on both reading paths.

The headers are those of real public boards; the values are made up (the boards carry no licence that lets a slice
be committed): an aviation NLP board with one row per model and task (mitre-tdp/llm_leaderboard
``data/leaderboard.csv``, bbc8d5a), a competition board of teams sharing base models
(Cohere-Labs-Community/iol-ai-2026-results ``leaderboard.csv``, e3307b8) and a pairwise-rating board repeating its
fitted parameters on every row (lechmazur/writing ``data/leaderboard.csv``, 9d09fbf).
"""

from __future__ import annotations

import json

import pytest

from harness_ext.adapters import csv_table
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

TASKS = ("Model,F1 Score,Exact Match Score,Task,Description\n"
         "Model A,81.4,78.9,Zero-shot NER,Extract tail numbers.\n"
         "Model B,95.2,95.1,Zero-shot NER,Extract tail numbers.\n"
         "Model A,48.9,,Few-shot ATC classification,\"Classify pairs of transmissions, related or not.\"\n"
         "Model A,45.6,26.8,Aircraft type,Classify reports by aircraft type.\n"
         "Model B,83.3,82.2,Aircraft type,Classify reports by aircraft type.\n"
         "Model C,48.7,,Few-shot ATC classification,\"Classify pairs of transmissions, related or not.\"\n"
         "Model B,,,Damage,Classify reports by damage.\n")

TEAMS = ("rank,team,account_type,tier,score,exact_match,chrf,model,submitted_at_utc\n"
         "1,team-a,external,Tier 1,19.79,12.41,31.57,Base-14B AWQ,2026-07-25 14:08:29\n"
         "2,team-b,external,Tier 1,18.85,11.55,30.75,Base-14B AWQ,2026-07-26 15:40:43\n"
         "3,team-c,external,Tier 2,15.12,9.62,23.78,Other-4B,2026-07-26 03:59:06\n"
         "4,team-d,organizer-participation,,8.24,4.39,15.49,,2026-07-23 12:33:25\n"
         "5,team-e,organizer,,7.1,2.56,19.65,Base-14B AWQ,2026-07-08 00:27:45\n")

RATINGS = ("rank,llm,thurstone_rating,bt_rating,bootstrap_resample_evaluators,thurstone_sigma,"
           "thurstone_sigma_bootstrap_std\n" + "".join(
               f"{i + 1},model-{i},{4.1 - i * 0.7:.3f},{6.9 - i:.3f},1,1.5012,0.0118\n" for i in range(6)))


@pytest.fixture(params=["records", "columns"])
def path_kind(request, monkeypatch):
    """Both reading paths: record by record, and column by column (pyarrow, for large files)."""
    if request.param == "columns":
        pytest.importorskip("pyarrow")
        monkeypatch.setattr(csv_table, "COLUMNAR_MIN_BYTES", 0)
    return request.param


def _ingest(path):
    s = Store.open(":memory:")
    report = ingest_paths(s, [str(path)], show_progress=False)
    (f,) = report.files
    assert f.status == "ingested", f.reason
    return s, report, "\n".join(f.notes)


def test_a_task_column_keys_the_rows(tmp_path, path_kind):
    """One row per model and task: each task a dataset, each score column one of its metrics; read per model, each
    model's rows collapsed onto two datasets and the other tasks' values were conflicts."""
    path = tmp_path / "leaderboard.csv"
    path.write_text(TASKS)
    s, report, notes = _ingest(path)
    assert not report.conflicts
    rows = s.con.execute("SELECT d.name, d.metric, d.is_primary, m.name, r.value, d.metadata FROM results r "
                         "JOIN datasets d USING (dataset_id) JOIN models m USING (model_id)").fetchall()
    cells = {(d, metric, m): v for d, metric, _, m, v, _ in rows}
    assert cells[("Zero-shot NER", "F1 Score", "Model A")] == pytest.approx(81.4)
    assert cells[("Aircraft type", "Exact Match Score", "Model B")] == pytest.approx(82.2)
    assert cells[("Few-shot ATC classification", "F1 Score", "Model C")] == pytest.approx(48.7)
    assert len(rows) == 10
    assert {(d, metric) for d, metric, primary, *_ in rows if primary} == {
        ("Zero-shot NER", "F1 Score"), ("Few-shot ATC classification", "F1 Score"), ("Aircraft type", "F1 Score")}
    meta = {d: json.loads(md) for d, *_, md in rows}
    assert meta["Aircraft type"]["Description"] == "Classify reports by aircraft type."
    models = {n: json.loads(md or "{}") for n, md in s.con.execute("SELECT name, metadata FROM models").fetchall()}
    assert not any("Description" in md or "Task" in md for md in models.values())
    assert "column 'Task' names each row's task: its 4 values" in notes
    assert "Description describes the task, stored with its dataset" in notes
    assert "stored as model metadata" not in notes


def test_a_task_column_declared_metadata_reads_rows_per_model(tmp_path):
    """``--meta-columns Task`` (or the sidecar) keeps the old reading: rows per model, repeats noted."""
    path = tmp_path / "leaderboard.csv"
    path.write_text(TASKS)
    (tmp_path / "leaderboard.csv.meta.yaml").write_text("meta_columns: [Task]\n")
    s, report, notes = _ingest(path)
    assert {r[0] for r in s.con.execute("SELECT name FROM datasets").fetchall()} == {"F1 Score", "Exact Match Score"}
    assert "listed on more than one row" in notes


def test_a_row_without_its_task_is_refused(tmp_path):
    path = tmp_path / "leaderboard.csv"
    path.write_text(TASKS + "Model C,10,10,,\n")
    s = Store.open(":memory:")
    (f,) = ingest_paths(s, [str(path)], show_progress=False).files
    assert f.status == "skipped" and "row 9 has no task in column 'Task'" in f.reason
    assert s.counts()["results"] == 0


def test_teams_sharing_a_base_model_stay_apart(tmp_path, path_kind):
    """A competition board names each row by its team and gives the base model most teams share (and none for
    some): read by the model column, the teams on one base model collapsed onto it, and a row without a base
    model was refused."""
    path = tmp_path / "leaderboard.csv"
    path.write_text(TEAMS)
    s, report, notes = _ingest(path)
    assert not report.conflicts
    models = {n: json.loads(md or "{}") for n, md in s.con.execute("SELECT name, metadata FROM models").fetchall()}
    assert set(models) == {"team-a", "team-b", "team-c", "team-d", "team-e"}
    assert models["team-a"]["model"] == "Base-14B AWQ" and "model" not in models["team-d"]
    assert ("column 'model' repeats ('Base-14B AWQ' on 3 of 5 rows) while 'team' names every row differently: "
            "the rows are stored as their 'team' (5 models)") in notes


def test_a_team_column_with_repeats_does_not_name_the_rows(tmp_path):
    path = tmp_path / "leaderboard.csv"
    path.write_text(TEAMS.replace("team-b", "team-a").replace(",15.49,,", ",15.49,Other-4B,"))
    s, report, notes = _ingest(path)
    assert "repeats" not in notes
    assert "Base-14B AWQ" in {r[0] for r in s.con.execute("SELECT name FROM models").fetchall()}


def test_columns_with_one_value_on_every_row_are_settings(tmp_path, path_kind):
    """A pairwise-rating board repeats its fitted parameters (sigma, its bootstrap std) and the number of evaluators
    on every row: read as scores, each was a dataset on which every model tied."""
    path = tmp_path / "leaderboard.csv"
    path.write_text(RATINGS)
    s, report, notes = _ingest(path)
    assert {r[0] for r in s.con.execute("SELECT name FROM datasets").fetchall()} == {"thurstone_rating", "bt_rating"}
    assert "1 column stored as model metadata, not scores: thurstone_sigma (one value on every row" in notes
    assert "bootstrap_resample_evaluators, thurstone_sigma_bootstrap_std (the name describes the model" in notes


def test_a_constant_column_is_a_score_when_declared_or_rows_are_few(tmp_path):
    few = tmp_path / "a" / "leaderboard.csv"
    few.parent.mkdir()
    few.write_text("\n".join(RATINGS.splitlines()[:5]) + "\n")  # 4 rows
    s, _, notes = _ingest(few)
    assert "thurstone_sigma" in {r[0] for r in s.con.execute("SELECT name FROM datasets").fetchall()}
    declared = tmp_path / "b" / "leaderboard.csv"
    declared.parent.mkdir()
    declared.write_text(RATINGS)
    (declared.parent / "leaderboard.csv.meta.yaml").write_text("columns:\n  thurstone_sigma: {kind: dataset}\n")
    s, _, notes = _ingest(declared)
    names = {r[0] for r in s.con.execute("SELECT name FROM datasets").fetchall()}
    assert "thurstone_sigma" in names and "thurstone_sigma_bootstrap_std" not in names
    same = tmp_path / "c" / "leaderboard.csv"  # every score column constant: nothing to tell them from
    same.parent.mkdir()
    same.write_text("model,x,y\n" + "".join(f"m{i},0.5,0.7\n" for i in range(6)))
    s, _, notes = _ingest(same)
    assert {r[0] for r in s.con.execute("SELECT name FROM datasets").fetchall()} == {"x", "y"}
    ends = tmp_path / "d" / "leaderboard.csv"  # a task every model fails or passes is a score
    ends.parent.mkdir()
    ends.write_text("model,x,failed,passed\n" + "".join(f"m{i},0.{i + 1},0,1\n" for i in range(6)))
    s, _, notes = _ingest(ends)
    assert {r[0] for r in s.con.execute("SELECT name FROM datasets").fetchall()} == {"x", "failed", "passed"}


def test_a_dataset_column_without_a_value_column_keys_the_rows(tmp_path):
    """``model, dataset, acc, f1``: not the long layout (no ``value`` column), rows per model and dataset."""
    path = tmp_path / "scores.csv"
    path.write_text("model,dataset,acc,f1\nm1,boolq,0.71,0.70\nm1,rte,0.62,0.60\nm2,boolq,0.80,0.79\nm2,rte,0.66,0.65\n")
    s, report, notes = _ingest(path)
    assert not report.conflicts
    got = {(d, metric, m): v for d, metric, m, v in s.con.execute(
        "SELECT d.name, d.metric, m.name, r.value FROM results r JOIN datasets d USING (dataset_id) JOIN models m "
        "USING (model_id)").fetchall()}
    assert got[("rte", "acc", "m2")] == pytest.approx(0.66) and got[("boolq", "f1", "m1")] == pytest.approx(0.70)
    assert len(got) == 8


def test_one_model_run_several_ways_is_one_variant_per_way(tmp_path, path_kind):
    """A board listing one model zero-shot, with SFT and with GRPO (AMAAI-Lab/MusicListenBench ``leaderboard.csv``,
    02675509, its header; values made up): read by the model column, the three rows collapsed onto one model and
    the other two rows' scores were conflicts. ``benchmark_version`` (1.0 on every row) was a dataset."""
    path = tmp_path / "leaderboard.csv"
    path.write_text("type,model,organization,params_b,method,melody,rhythm,overall,verified,benchmark_version\n"
                    "model,Model A,Org,7,zero-shot,61.2,55.4,58.3,yes,1.0\nmodel,Model A,Org,7,GRPO,74.0,63.8,68.9,yes,1.0\n"
                    "model,Model A,Org,7,SFT,60.8,54.6,57.7,yes,1.0\nmodel,Model B,Org,,zero-shot,66.4,58.0,62.2,yes,1.0\n"
                    "model,Model C,Org,,zero-shot,56.4,51.0,53.7,yes,1.0\n")
    s, report, notes = _ingest(path)
    assert not report.conflicts
    models = {n: json.loads(md or "{}") for n, md in s.con.execute("SELECT name, metadata FROM models").fetchall()}
    assert {"Model A (zero-shot)", "Model A (GRPO)", "Model A (SFT)"} <= set(models)
    assert models["Model A (GRPO)"]["variant_of"] == "Model A"
    assert "benchmark_version" not in {r[0] for r in s.con.execute("SELECT name FROM datasets").fetchall()}
    assert "1 model listed on several rows that 'method' tells apart (Model A)" in notes


def test_one_model_at_two_precisions_is_one_variant_per_precision(tmp_path, path_kind):
    """The first Open LLM Leaderboard lists a model once per precision it was run at (fboulnois/llm-leaderboard-csv
    ``csv/huggingface.csv``, 3792cf00, rows 10 and 12 and one other, trimmed to these columns; no licence file):
    before, the second row's six scores were conflicts and only the first precision was stored."""
    path = tmp_path / "huggingface.csv"
    path.write_text("t,model,average,arc,hellaswag,mmlu,truthfulqa,winogrande,gsm8k,precision,merged,params_b\n"
                    "\U0001f4ac,MTSAIR/MultiVerse_70B,81,78.67,89.77,78.22,75.18,87.53,76.65,bfloat16,TRUE,72\n"
                    "\U0001f536,MTSAIR/MultiVerse_70B,80.98,78.58,89.74,78.27,75.09,87.37,76.8,float16,TRUE,72\n"
                    "\U0001f536,SF-Foundation/Ein-70B-v2,81.29,79.86,91.49,78.05,75.14,87.77,75.44,float16,TRUE,72\n",
                    encoding="utf-8")
    s, report, notes = _ingest(path)
    assert not report.conflicts
    models = {n: json.loads(md or "{}") for n, md in s.con.execute("SELECT name, metadata FROM models").fetchall()}
    assert {"MTSAIR/MultiVerse_70B (bfloat16)", "MTSAIR/MultiVerse_70B (float16)"} <= set(models)
    assert models["MTSAIR/MultiVerse_70B (float16)"]["variant_of"] == "MTSAIR/MultiVerse_70B"
    assert "1 model listed on several rows that 'precision' tells apart (MTSAIR/MultiVerse_70B)" in notes


def test_a_runs_diagnostics_are_metadata(tmp_path):
    """A board's run diagnostics (NoeFlandre/benchmark-llms-landuse-relevance ``results/leaderboard.csv``, 16ea48c,
    its header; values made up): ``duration_seconds`` was a score (a slower run the better one), ``unparsed_rate``
    and ``truncated`` scores as well."""
    path = tmp_path / "leaderboard.csv"
    path.write_text("model_id,n_items,accuracy,f1,unparsed_rate,truncated,duration_seconds,model_revision\n"
                    "org/a,154,0.8571,0.8608,0.0,0,507.49,654f946\norg/b,154,0.7727,0.7619,0.01,2,853.21,5dd2260\n"
                    "org/c,154,0.5195,0.6838,0.0,0,1.58,9e6c6cc\n")
    s, report, notes = _ingest(path)
    assert {r[0] for r in s.con.execute("SELECT name FROM datasets").fetchall()} == {"accuracy", "f1"}


def test_speed_and_memory_columns_are_metadata(tmp_path, path_kind):
    """How fast and how big a model runs is not a score. A speech board (huggingface/open_asr_leaderboard
    ``scripts/data/25032026_en_shortform.csv``, 0badcff, its header; values made up) gives each model's ``RTFx`` (an
    inverse real-time factor, -1 where unknown): read as a score of unknown direction, -1 a real value. An embedding
    board (embeddings-benchmark/leaderboard ``boards_data/en/data_tasks/STS/default.jsonl``, 006466a, its keys as a
    CSV header; values made up) gives ``Memory Usage (GB, fp32)``: read as a percentage score, and its clustering
    board (``boards_data/en/data_tasks/Clustering/default.jsonl``, f632e87) ``Embedding Dimensions``: a score. Its
    rows of models not yet run on the task (metadata alone) were left out without a word."""
    def datasets(name, text):
        path = tmp_path / name
        path.write_text(text)
        s, _, notes = _ingest(path)
        return {r[0] for r in s.con.execute("SELECT name FROM datasets WHERE kind = 'dataset'").fetchall()}, notes, s

    names, notes, _ = datasets("asr.csv", "model,Avg. WER,RTFx,Model size (B),License,AMI WER,Earnings22 WER,LS Clean WER\n"
                               "org/a,5.5,-1,-1,Proprietary,10.0,9.5,1.6\norg/b,6.1,280.0,2,Open,8.4,8.5,1.4\n"
                               "org/c,9.3,418.3,2.5,Open,19.2,10.5,3.6\n")
    assert names == {"AMI WER", "Earnings22 WER", "LS Clean WER"} and "RTFx" in notes
    names, notes, s = datasets(
        "sts.csv", 'Rank,Model,Model Size (Million Parameters),"Memory Usage (GB, fp32)",Embedding Dimensions,'
        "Average,BIOSSES,STS12\n1,emb-a,1220,4.54,1024,86.1,89.7,86.5\n2,emb-b,110,0.41,768,80.2,80.4,72.6\n"
        "3,emb-c,,,4096,79.3,78.0,72.3\n4,emb-d,438,1.63,768,,,\n5,emb-e,,,,,,\n")
    assert names == {"BIOSSES", "STS12"} and "Memory Usage (GB, fp32), Embedding Dimensions" in notes
    assert "2 rows without a value in any score column left out (nothing to store): emb-d, emb-e" in notes
    assert {r[0] for r in s.con.execute("SELECT name FROM models").fetchall()} == {"emb-a", "emb-b", "emb-c"}


def test_an_average_of_a_benchmark_the_file_lacks_is_a_dataset(tmp_path, path_kind):
    """A Japanese board (wandb/llm-leaderboard ``scripts/analysis/Nejumi4_result_20280826.csv``, 9511486, part of
    its header; values made up) gives ``AVG_jaster_0shot``, ``AVG_mtbench``, ``AVG_swebench``: each the board's
    score of a benchmark whose parts the file does not hold, stored as aggregates of the other columns (out of the
    matrix). ``GLP_AVG`` beside ``GLP_*`` and ``TOTAL_SCORE`` are aggregates; ``model_size`` (a parameter count,
    ``null`` where unknown) was a score."""
    path = tmp_path / "nejumi.csv"
    path.write_text("model_name,TOTAL_SCORE,GLP_AVG,GLP_translation,GLP_coding,AVG_jaster_0shot,AVG_jaster_2shots,"
                    "AVG_mtbench,AVG_swebench,Mean win rate,model_size\n"
                    "org/a,0.79,0.75,0.91,0.60,0.82,0.84,0.94,0.60,0.9,null\n"
                    "org/b,0.71,0.69,0.90,0.53,0.79,0.77,0.96,0.29,0.5,117000000000\n"
                    "org/c,0.41,0.35,0.86,0.14,0.32,0.46,0.40,0.00,0.1,3212749824\n")
    s, report, notes = _ingest(path)
    kinds = dict(s.con.execute("SELECT name, kind FROM datasets").fetchall())
    assert {n for n, k in kinds.items() if k == "aggregate"} == {"TOTAL_SCORE", "GLP_AVG", "Mean win rate"}
    assert {n for n, k in kinds.items() if k == "dataset"} == {
        "GLP_translation", "GLP_coding", "AVG_jaster_0shot", "AVG_jaster_2shots", "AVG_mtbench", "AVG_swebench"}
    assert "model_size" in notes


def test_interval_bounds_beside_their_score_are_metadata(tmp_path, path_kind):
    """A travel-planning agents' board (TonyQJH/TREK ``results/leaderboard.csv``, 8289ebb, part of its header; values
    made up) gives each category score with ``_lo`` and ``_hi`` bounds: read as scores, each bound was a dataset.
    ``avg_elapsed_sec`` was an aggregate (its "avg"), a run's time."""
    path = tmp_path / "leaderboard.csv"
    path.write_text("model,n_tasks,cat_satisfaction,cat_truthfulness,overall_avg,avg_elapsed_sec,cat_satisfaction_lo,"
                    "cat_satisfaction_hi,cat_truthfulness_lo,cat_truthfulness_hi\n"
                    "a,800,0.30,0.95,0.62,158.8,0.26,0.34,0.92,0.96\nb,800,0.26,0.86,0.56,212.6,0.22,0.29,0.83,0.89\n"
                    "c,800,0.29,0.87,0.58,132.0,0.26,0.34,0.84,0.90\n")
    s, report, notes = _ingest(path)
    assert {r[0] for r in s.con.execute("SELECT name FROM datasets").fetchall()} == {
        "cat_satisfaction", "cat_truthfulness", "overall_avg"}
    assert "cat_satisfaction_lo, cat_satisfaction_hi, cat_truthfulness_lo, cat_truthfulness_hi (named as bounds" in notes


def test_a_hallucination_rate_is_lower_is_better(tmp_path):
    """A Korean false-premise board (abdulkarimali0001/korean-hallucination-benchmark ``results/leaderboard.csv``,
    6464269, its header; values made up): its hallucination rate was higher-is-better, and its two prompts' rows of
    each model collapsed (now one variant per prompt)."""
    path = tmp_path / "leaderboard.csv"
    path.write_text("model,prompt,factual_accuracy,false_premise_hallucination_rate,false_premise_rejection_rate\n"
                    "m1,cautious,0.55,0.33,0.67\nm2,cautious,0.95,0.53,0.47\nm1,plain,0.52,0.57,0.43\nm2,plain,0.95,0.73,0.27\n")
    s, report, notes = _ingest(path)
    assert not report.conflicts
    hib = dict(s.con.execute("SELECT name, higher_is_better FROM datasets").fetchall())
    assert hib["false_premise_hallucination_rate"] is False and hib["false_premise_rejection_rate"] is not False
    assert len(s.con.execute("SELECT name FROM models").fetchall()) == 4


def test_prices_per_million_tokens_are_metadata_and_a_sycophancy_rate_lower_is_better(tmp_path):
    """A summarisation board's prices per million tokens and cache savings were scores (jclab-joseph/
    llm-summary-and-classification-benchmark ``results/leaderboard.csv``, 072553c, part of its header), and a
    sycophancy board's rate of giving in was higher-is-better (PariMehla/LLM-Sycophancy-Evaluation-Framework,
    54e56b8). Values made up."""
    path = tmp_path / "a" / "leaderboard.csv"
    path.parent.mkdir()
    path.write_text("model,input_per_million,output_per_million,summary_en,cls_en,cached_input_per_million,"
                    "estimated_cache_savings\nm1,0.25,1.5,0.18,0.891,0.025,0.02\nm2,0.15,0.47,0.16,0.882,0.016,0.0\n")
    s, _, _ = _ingest(path)
    assert {r[0] for r in s.con.execute("SELECT name FROM datasets").fetchall()} == {"summary_en", "cls_en"}
    other = tmp_path / "b" / "leaderboard.csv"
    other.parent.mkdir()
    other.write_text("model,n_items,initial_accuracy,sycophancy_rate,sycophancy_rate_strong_pushback\n"
                     "m1,160,0.97,0.006,0.0\nm2,160,0.93,0.14,0.24\nm3,160,0.79,0.30,0.35\n")
    s, _, _ = _ingest(other)
    hib = dict(s.con.execute("SELECT name, higher_is_better FROM datasets").fetchall())
    assert hib["sycophancy_rate"] is False and hib["sycophancy_rate_strong_pushback"] is False
    assert hib["initial_accuracy"] is not False
