"""BIG-bench scores_<model>.json: one dataset per (sub)task, aggregates skipped, low_score as chance,
normalisation equal to the paper's, BIG-bench Lite selectable as its own benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness_ext.adapters.bigbench import BIGBENCH_LITE_TASKS, read
from harness_ext.errors import IngestError
from harness_ext.store.ingest import ingest_paths, read_source
from harness_ext.store.matrix import MatrixQuery, load_matrix, query_results
from harness_ext.plugin_manager import get_registration
from harness_ext.store.db import Store
from harness_ext.types import SourceFile

FIX = Path(__file__).parent / "fixtures" / "bigbench" / "benchmark_tasks"


@pytest.fixture(scope="module")
def bb_store():
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [FIX], show_progress=False)
        assert len(report.by_status("ingested")) == 12 and not report.conflicts
        assert {f.adapter for f in report.files} == {"bigbench"}
        yield s


def test_bbl_list_is_the_24_tasks():
    assert len(BIGBENCH_LITE_TASKS) == 24 and "logical_deduction" in BIGBENCH_LITE_TASKS
    assert "arithmetic" not in BIGBENCH_LITE_TASKS


def test_one_dataset_per_subtask_and_aggregates_skipped(bb_store):
    full = load_matrix(bb_store, MatrixQuery(benchmarks=("bigbench",), rows="model_shots"))
    assert sorted(full.columns) == [
        "arithmetic:1_digit_addition", "arithmetic:2_digit_multiplication", "auto_debugging",
        "logical_deduction:five_objects", "logical_deduction:seven_objects", "logical_deduction:three_objects",
        "strategyqa"]
    # 3 models x {0, 1} shots; a task without subtasks keeps its task-level entry (strategyqa).
    assert full.shape == (6, 7) and not full.isna().any().any()
    assert "GPT-3 200B [1-shot]" in full.index and "BIG-G T=0/8b [0-shot]" in full.index
    # One row per model: each task at the setting most models ran (a 0/1-shot tie goes to 0 shots).
    one = load_matrix(bb_store, MatrixQuery(benchmarks=("bigbench",)))
    assert one.shape == (3, 7) and "GPT-3 200B" in one.index
    assert {m["num_fewshot"] for m in one.attrs["datasets"].values()} == {0}
    np.testing.assert_allclose(one.loc["GPT-3 200B"], full.loc["GPT-3 200B [0-shot]"])


def test_bigbench_lite_is_its_own_benchmark(bb_store):
    bbl = load_matrix(bb_store, MatrixQuery(benchmarks=("bigbench_lite",)))
    assert sorted(bbl.columns) == ["auto_debugging", "logical_deduction:five_objects",
                                   "logical_deduction:seven_objects", "logical_deduction:three_objects", "strategyqa"]
    meta = json.loads(bb_store.con.execute(
        "SELECT metadata FROM datasets WHERE benchmark = 'bigbench' AND name = 'strategyqa' AND is_primary").fetchone()[0])
    assert meta["bigbench_lite"] is True and meta["low_score"] == 0.5
    meta = json.loads(bb_store.con.execute(
        "SELECT metadata FROM datasets WHERE benchmark = 'bigbench' AND name LIKE 'arithmetic%' LIMIT 1").fetchone()[0])
    assert meta["bigbench_lite"] is False
    full = load_matrix(bb_store, MatrixQuery(benchmarks=("bigbench",)))
    np.testing.assert_allclose(bbl.to_numpy(), full[bbl.columns].to_numpy())


def test_normalisation_matches_the_paper(bb_store):
    raw = load_matrix(bb_store, MatrixQuery(benchmarks=("bigbench",), normalise="none", rows="model_shots"))
    norm = load_matrix(bb_store, MatrixQuery(benchmarks=("bigbench",), rows="model_shots"))
    low = {"logical_deduction:three_objects": 1 / 3, "logical_deduction:five_objects": 0.2,
           "logical_deduction:seven_objects": 1 / 7, "strategyqa": 0.5}
    for col in raw.columns:
        lo = low.get(col, 0.0)
        expected = np.clip((raw[col].to_numpy() - lo) / (1.0 - lo), 0, 1)  # BIG-bench §2.1, then max(0, .)
        np.testing.assert_allclose(norm[col].to_numpy(), expected, atol=1e-12)
        meta = norm.attrs["datasets"][col]
        assert meta["baseline_source"] == "BIG-bench low_score" and meta["random_baseline"] == pytest.approx(lo)
    # The 2m model is below chance on five_objects: clipped to 0, not negative.
    assert raw.loc["BIG-G T=0/2m [0-shot]", "logical_deduction:five_objects"] < 0.2
    assert norm.loc["BIG-G T=0/2m [0-shot]", "logical_deduction:five_objects"] == 0.0


def test_secondary_metrics_are_kept_and_derived_score_dropped(bb_store):
    long = query_results(bb_store, MatrixQuery(benchmarks=("bigbench",), datasets="strategyqa"), all_metrics=True)
    assert "normalized_aggregate_score" not in set(long.metric)
    assert {"multiple_choice_grade", "macro_f1", "expected_calibration_error"} <= set(long.metric)
    assert set(long[long.metric == "macro_f1"].random_baseline.dropna()) == set()


def _write(tmp_path, doc, name="scores_X.json"):
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return SourceFile(p)


def _doc(scores, task="toy_task"):
    return {"model": {"model_family": "Fam", "model_name": "1b", "total_params": 10}, "task": {"task_name": task},
            "scores": scores}


def test_lower_is_better_bounds_reproduce_the_paper_formula(tmp_path):
    entry = {"score_dict": {"loss": 2.0}, "preferred_score": "loss", "number_of_shots": 0,
             "low_score": 5.0, "high_score": 1.0, "subtask_description": "toy_task"}
    (rec,) = read(_write(tmp_path, _doc([entry])))
    assert rec.higher_is_better is False and (rec.min_score, rec.max_score) == (1.0, 5.0)
    with Store.open(":memory:") as s:
        ingest_paths(s, [tmp_path], show_progress=False)
        v = load_matrix(s, MatrixQuery()).iloc[0, 0]
    assert v == pytest.approx((2.0 - 5.0) / (1.0 - 5.0))  # (x - low) / (high - low)


def test_model_name_and_path_derived_task(tmp_path):
    d = tmp_path / "some_task" / "results"
    d.mkdir(parents=True)
    doc = _doc([{"score_dict": {"exact_str_match": 0.5}, "preferred_score": "exact_str_match", "number_of_shots": 2,
                 "low_score": 0.0, "high_score": 1.0, "subtask_description": ""}])
    del doc["task"]
    (rec,) = read(_write(d, doc))
    assert (rec.model, rec.dataset, rec.num_fewshot, rec.task) == ("Fam/1b", "some_task", 2, "some_task")
    assert rec.model_metadata["total_params"] == 10


@pytest.mark.parametrize("mutate, match", [
    (lambda d: d["scores"][0].pop("score_dict"), "needs score_dict"),
    (lambda d: d["scores"][0].update(preferred_score="bleu"), "not in score_dict"),
    (lambda d: d["scores"].append(3), "is not an object"),
    (lambda d: d["model"].pop("model_family"), "not a BIG-bench scores file"),
    (lambda d: d["scores"][0]["score_dict"].update(exact_str_match=None), "not a number"),
    # A share of examples written in percent was stored as a grade of 55.
    (lambda d: d["scores"][0]["score_dict"].update(exact_str_match=55.0), r"exact_str_match = 55.0 is outside \[0, 1\]"),
])
def test_malformed_files_raise_ingest_error(tmp_path, mutate, match):
    doc = _doc([{"score_dict": {"exact_str_match": 0.5, "bleu_extra": None}, "preferred_score": "exact_str_match",
                 "number_of_shots": 0, "low_score": 0.0, "high_score": 1.0, "subtask_description": "toy_task"}])
    mutate(doc)
    with pytest.raises(IngestError, match=match):
        read_source(_write(tmp_path, doc), get_registration("adapters", "bigbench"))


def test_secondary_scores_that_are_no_numbers_are_counted_in_a_note(tmp_path):
    """They were left out without a word."""
    doc = _doc([{"score_dict": {"exact_str_match": 0.5, "bleu_extra": None, "rouge": "n/a", "f1": 0.3},
                 "preferred_score": "exact_str_match", "number_of_shots": 0, "low_score": 0.0, "high_score": 1.0,
                 "subtask_description": "toy_task"}])
    with Store.open(":memory:") as s:
        (f,) = ingest_paths(s, [_write(tmp_path, doc).path], show_progress=False).files
    assert f.status == "ingested" and f.n_results == 2
    assert f.notes == ["2 secondary scores left out (not a number): toy_task bleu_extra, toy_task rouge"]


def test_calibration_metrics_are_lower_is_better(bb_store, tmp_path):
    """They were stored with no direction, which the matrix reads as higher-is-better: with
    ``--metric expected_calibration_error`` a larger calibration error counted as a better score."""
    long = query_results(bb_store, MatrixQuery(benchmarks=("bigbench",), datasets="strategyqa"), all_metrics=True)
    by_metric = long.groupby("metric").higher_is_better.agg(lambda v: set(v))
    assert by_metric["expected_calibration_error"] == by_metric["calibration_multiple_choice_brier_score"] == {False}
    assert not long[long.metric == "macro_f1"].higher_is_better.eq(False).any()  # none given: higher is better
    doc = _doc([{"score_dict": {"multiple_choice_grade": 0.5, "expected_calibration_error": 0.3},
                 "preferred_score": "multiple_choice_grade", "number_of_shots": 0, "low_score": 0.25,
                 "high_score": 1.0, "subtask_description": "toy_task"}])
    recs = {r.metric: r for r in read(_write(tmp_path, doc))}
    assert recs["expected_calibration_error"].higher_is_better is False
    assert recs["multiple_choice_grade"].higher_is_better is True
