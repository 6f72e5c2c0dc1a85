"""lm-eval v0.4 results files written by other people's runs (tests/fixtures/lm_eval_v04, provenance in its README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix, query_results

FIX = Path(__file__).parent / "fixtures" / "lm_eval_v04"
QWEN_GPQA = FIX / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-15-28.837033.json"


def test_chance_level_from_the_files_own_answer_choices():
    """gpqa_diamond_zeroshot lists its four choices in ``configs``: chance 1/4 for acc and acc_norm, stored."""
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [QWEN_GPQA], show_progress=False)
        assert [f.adapter for f in report.files] == ["lm_eval_v04"]
        long = query_results(s, MatrixQuery(benchmarks=("lm_eval",)), all_metrics=True).set_index("metric")
        assert set(long.index) == {"acc", "acc_norm"}
        assert long.random_baseline.tolist() == [0.25, 0.25]
        assert long.baseline_source["acc"] == "4 answer choices (the file's doc_to_choice)"
        assert long.value["acc"] == 0.51 and long.stderr["acc"] == pytest.approx(0.05024183937956913)
        assert long.n_samples["acc"] == 100  # --limit 100: n-samples' effective count, not the original 198
        # a score over the first 100 of 198 questions is not the task's score over all of them: said
        (f,) = report.files
        assert ("1 task scored on part of its documents (--limit): gpqa_diamond_zeroshot 100 of 198; the full number "
                "of documents is kept with the task (reduce --items draws from all of them)") in f.notes
        assert long.num_fewshot["acc"] == 0
        m = load_matrix(s, MatrixQuery(benchmarks=("lm_eval",)))
        assert m.index.tolist() == ["Qwen/Qwen3.5-9B"]  # model_args given as a JSON object
        assert m.loc["Qwen/Qwen3.5-9B", "gpqa_diamond_zeroshot"] == pytest.approx((0.51 - 0.25) / 0.75)


@pytest.mark.parametrize("choices, expected", [
    ("{{choices}}", None),  # a template: each question has its own choices, no single chance level
    (["yes"], None),  # one choice is not a multiple-choice question
    (["no", "yes"], 0.5),
])
def test_only_a_literal_choice_list_sets_the_chance_level(tmp_path, choices, expected):
    doc = json.loads(QWEN_GPQA.read_text())
    cfg = doc["configs"]["gpqa_diamond_zeroshot"]
    cfg["doc_to_choice"] = choices
    task = "my_private_task"  # a name no chance table knows
    for block in ("results", "group_subtasks", "configs", "versions", "n-shot", "higher_is_better", "n-samples"):
        doc[block] = {task: doc[block]["gpqa_diamond_zeroshot"]}
    (tmp_path / "results_x.json").write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        ingest_paths(s, [tmp_path / "results_x.json"], show_progress=False)
        long = query_results(s, MatrixQuery(benchmarks=("lm_eval",)), all_metrics=True)
        got = long.random_baseline.dropna().unique().tolist()
        assert got == ([] if expected is None else [expected])


def test_a_group_without_an_aggregate_is_skipped_not_the_file(tmp_path):
    """lm-eval (evaluator_utils.consolidate_group_results, 0.4.3 on) writes a group with no
    ``aggregate_metric_list`` as ``{" ": " ", "alias": name}``: the file was refused whole
    ("metric must be a non-empty string, got ' '"); now the group is left out and the tasks kept."""
    doc = json.loads(QWEN_GPQA.read_text())
    doc["results"] = {"gpqa": {" ": " ", "alias": "gpqa"}, **doc["results"]}
    doc["group_subtasks"] = {"gpqa": ["gpqa_diamond_zeroshot"], **doc["group_subtasks"]}
    (tmp_path / "results_x.json").write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [tmp_path / "results_x.json"], show_progress=False)
        assert len(report.by_status("ingested")) == 1
        long = query_results(s, MatrixQuery(benchmarks=("lm_eval",)), all_metrics=True)
        assert sorted(zip(long.dataset, long.metric)) == [("gpqa_diamond_zeroshot", "acc"),
                                                          ("gpqa_diamond_zeroshot", "acc_norm")]


def test_truthfulqa_generation_is_ranked_by_its_accuracy_not_raw_bleu():
    """truthfulqa_gen's block leads with bleu_max (0-100, min-max scaled in a matrix: 0.0 with one model);
    bleu_acc, a proportion, is its primary metric. The other tasks and the group keep acc."""
    with Store.open(":memory:") as s:
        ingest_paths(s, [FIX / "meta-llama__Meta-Llama-3-8B-Instruct" / "truthfulqa.json"], show_progress=False)
        board = query_results(s, MatrixQuery(benchmarks=("lm_eval",), aggregates="include"))
        assert dict(zip(board.dataset, board.metric)) == {
            "truthfulqa": "acc", "truthfulqa_gen": "bleu_acc", "truthfulqa_mc1": "acc", "truthfulqa_mc2": "acc"}
        assert board.set_index("dataset").value["truthfulqa_gen"] == pytest.approx(0.47368421052631576)
        long = query_results(s, MatrixQuery(benchmarks=("lm_eval",), datasets="truthfulqa_gen"), all_metrics=True)
        assert len(long) == 12 and long.set_index("metric").value["bleu_max"] == pytest.approx(20.290257321258544)
        m = load_matrix(s, MatrixQuery(benchmarks=("lm_eval",)))
        assert m.loc["meta-llama/Meta-Llama-3-8B-Instruct", "truthfulqa_gen"] == pytest.approx(0.47368421052631576)


@pytest.mark.parametrize("missing", [None, "N/A"])
def test_a_metric_not_computed_is_left_out_not_the_file(tmp_path, missing):
    """A null (or "N/A") metric refused the whole file ("score ... is not a number"), losing every other
    task in it. Now that metric is left out; a task with no metric left is left out; "0.53" is 0.53."""
    doc = json.loads(QWEN_GPQA.read_text())
    gpqa = doc["results"]["gpqa_diamond_zeroshot"]
    doc["results"]["other_task"] = dict(gpqa, **{"acc,none": missing, "acc_norm,none": "0.53"})
    doc["results"]["empty_task"] = dict(gpqa, **{"acc,none": missing, "acc_norm,none": missing})
    gpqa["acc,none"] = missing  # the primary metric: acc_norm becomes primary
    (tmp_path / "results_x.json").write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [tmp_path / "results_x.json"], show_progress=False)
        assert [f.status for f in report.files] == ["ingested"] and report.files[0].n_results == 2
        long = query_results(s, MatrixQuery(benchmarks=("lm_eval",)), all_metrics=True)
        assert sorted(zip(long.dataset, long.metric, long.value)) == [
            ("gpqa_diamond_zeroshot", "acc_norm", 0.51), ("other_task", "acc_norm", 0.53)]
        board = query_results(s, MatrixQuery(benchmarks=("lm_eval",)))
        assert sorted(board.dataset) == ["gpqa_diamond_zeroshot", "other_task"]  # each still has a primary metric
    # and it is reported, with counts and names (the ingest notes)
    limited, note = report.files[0].notes  # the file's --limit run is noted first
    assert limited.startswith("1 task scored on part of its documents (--limit)")
    assert note.startswith("4 metrics written as null, NaN, Infinity or not a number (not computed) left out: ")
    assert "empty_task acc" in note and note.endswith("; 1 task with no metric left")


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_metric_is_left_out_not_the_file(tmp_path, token):
    """A bare ``NaN`` or ``Infinity`` in one metric (Python's json reads them) skipped the whole file ("score ...
    is inf, not finite"): v0.4 here, v0.3 on the shared data. Now that metric is left out, named in a note."""
    from conftest import LM_EVAL_V03, require

    v04 = json.loads(QWEN_GPQA.read_text())
    v04["results"]["other_task"] = dict(v04["results"]["gpqa_diamond_zeroshot"], **{"acc_norm,none": 0.53})
    v04["results"]["gpqa_diamond_zeroshot"]["acc,none"] = float(token.lower().replace("infinity", "inf"))
    (tmp_path / "v04").mkdir()
    (tmp_path / "v04" / "results_x.json").write_text(json.dumps(v04))  # json writes nan/inf as the bare tokens
    assert token in (tmp_path / "v04" / "results_x.json").read_text()
    v03 = json.loads(require(LM_EVAL_V03 / "llama" / "llama-7B" / "llama-7B_pawsx_0-shot.json").read_text())
    v03["results"]["pawsx_en"]["acc"] = float(token.lower().replace("infinity", "inf"))
    (tmp_path / "v03").mkdir()
    (tmp_path / "v03" / "llama-7B_pawsx_0-shot.json").write_text(json.dumps(v03))
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [tmp_path / "v04", tmp_path / "v03"], show_progress=False)
        assert [f.status for f in report.files] == ["ingested", "ingested"]
        long = query_results(s, MatrixQuery(benchmarks=("lm_eval",)), all_metrics=True)
        got = set(zip(long.dataset, long.metric))
        assert ("gpqa_diamond_zeroshot", "acc_norm") in got and ("gpqa_diamond_zeroshot", "acc") not in got
        assert ("other_task", "acc") in got and ("pawsx_en", "acc") not in got
        assert {d for d in long.dataset if d.startswith("pawsx")} == {f"pawsx_{c}" for c in
                                                                       ("es", "zh", "fr", "de", "ko", "ja")}
    notes = {Path(f.path).name: f.notes for f in report.files}
    assert any(n.startswith("1 metric written as null, NaN, Infinity") and "gpqa_diamond_zeroshot acc" in n
               for n in notes["results_x.json"])
    assert any("pawsx_en acc; 1 task with no metric left" in n for n in notes["llama-7B_pawsx_0-shot.json"])


def test_groups_stored_as_aggregates_are_noted():
    """lm-eval's group scores (mmlu over its 57 subjects) are stored as aggregates: the ingest notes say which."""
    from conftest import LM_EVAL, require

    path = require(LM_EVAL / "v04_results_from_pull_refs" / "results" / "Qwen__Qwen2.5-1.5B"
                   / "results_2025-03-03T00-05-12.300060.json")
    with Store.open(":memory:") as s:
        (f,) = ingest_paths(s, [path], show_progress=False).by_status("ingested")
    assert f.notes == ["5 groups stored as aggregates (lm-eval's scores over their tasks): mmlu, mmlu_humanities, "
                       "mmlu_other, mmlu_social_sciences, mmlu_stem"]


@pytest.mark.parametrize("value", [1.7, -0.3, "62"])
def test_an_accuracy_outside_0_1_refuses_the_file(tmp_path, value):
    """lm-eval writes acc as a proportion: one acc of 1.7 would have made the column read as percentages for every
    model (0.2 -> 0.002). The file is refused, named, with the reason; the store is unchanged."""
    doc = json.loads(QWEN_GPQA.read_text())
    doc["results"]["gpqa_diamond_zeroshot"]["acc,none"] = value
    (tmp_path / "results_x.json").write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [tmp_path / "results_x.json"], show_progress=False)
        [f] = report.files
        assert f.status == "skipped" and "'gpqa_diamond_zeroshot'" in f.reason and "outside [0, 1]" in f.reason
        assert s.con.execute("SELECT count(*) FROM results").fetchone()[0] == 0


def test_a_truncated_results_file_says_where_it_ends(tmp_path):
    """A .json no adapter claims because it is cut short says so, with the parser's position."""
    text = QWEN_GPQA.read_text()
    (tmp_path / "results_x.json").write_text(text[: len(text) // 2])
    (tmp_path / "results_y.json").write_text("")
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [tmp_path], show_progress=False)
        reasons = {Path(f.path).name: f.reason for f in report.files}
        assert "not valid JSON (" in reasons["results_x.json"] and "line " in reasons["results_x.json"]
        assert "not a recognised result file: empty" in reasons["results_y.json"]


def test_ruler_minus_one_for_an_unrun_sequence_length_is_left_out(tmp_path):
    """lm-eval's RULER tasks name one metric per sequence length and aggregate a length without samples to -1
    (``lm_eval/tasks/ruler/common_utils.py``: ``aggregate_metrics`` returns -1); read as a score it sat below every
    real one. A real v0.4 results file with RULER's blocks added as lm-eval writes them (``"4096,none": 0.998,
    "8192,none": -1.0``, stderrs ``"N/A"``): each -1 is left out with a note, the lengths that ran are kept, a task
    whose only length did not run is counted, and a -1 under a metric not named by a length stays a score."""
    doc = json.loads(QWEN_GPQA.read_text())
    for task, value in (("niah_single_1", 0.998), ("niah_single_2", 0.97)):
        doc["results"][task] = {"alias": task, "4096,none": value, "4096_stderr,none": "N/A", "8192,none": -1.0,
                                "8192_stderr,none": "N/A"}
    doc["results"]["ruler_vt"] = {"alias": "ruler_vt", "4096,none": -1, "4096_stderr,none": "N/A"}
    doc["results"]["mcc_task"] = {"alias": "mcc_task", "mcc,none": -1.0, "mcc_stderr,none": "N/A"}
    path = tmp_path / QWEN_GPQA.name
    path.write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        (f,) = ingest_paths(s, [path], show_progress=False).by_status("ingested")
        rows = query_results(s, MatrixQuery(), all_metrics=True)
    rows = rows[rows["dataset"].str.match(r"niah|ruler|mcc")]
    got = sorted(zip(rows["dataset"], rows["metric"], rows["value"]))
    assert got == [("mcc_task", "mcc", -1.0), ("niah_single_1", "4096", 0.998), ("niah_single_2", "4096", 0.97)]
    assert ("3 metrics at -1 for a sequence length without samples (RULER's placeholder) left out: niah_single_1 "
            "8192, niah_single_2 8192, ruler_vt 4096; 1 task with no metric left") in f.notes


def test_superglue_cb_and_wic_have_their_chance_levels_multirc_none(tmp_path):
    """LLaMA-13B's real SuperGLUE run (lm-eval v0.3): CB's `acc` is one of three labels (chance 1/3), WiC's one of
    two (1/2); MultiRC's `acc` is lm-eval's share of questions with every answer right (0.016 here), which has no
    chance level of one choice in two, so it gets none."""
    from conftest import LM_EVAL_V03, require

    path = require(LM_EVAL_V03 / "llama" / "llama-13B" / "llama-13B_superglue_0-shot.json")
    with Store.open(":memory:") as s:
        ingest_paths(s, [path], show_progress=False)
        rows = query_results(s, MatrixQuery(), all_metrics=True)
    chance = {d: b for d, m, b in zip(rows["dataset"], rows["metric"], rows["random_baseline"]) if m == "acc"}
    assert chance["cb"] == pytest.approx(1 / 3) and chance["wic"] == 0.5 and chance["boolq"] == 0.5
    assert chance["multirc"] is None or chance["multirc"] != chance["multirc"]  # None or NaN: no chance level
