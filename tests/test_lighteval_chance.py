"""Chance levels of lighteval results: from the answer choices in the run's details files beside the results, else
from lighteval's task names (checked against lighteval's task registry); multiple-choice tasks left without one are
counted in a note. Results are lighteval's documented example file (tests/fixtures/lm_eval_wild) under other task
keys; the real details file is the Open LLM Leaderboard slice of tests/fixtures/lighteval_details (no choices
column); details with choices are written here in lighteval's two column layouts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, query_results

FIX = Path(__file__).parent / "fixtures"
EXAMPLE = FIX / "lm_eval_wild" / "lighteval" / "gpt2" / "results_example.json"
ARC_STAMP = "2023-07-19T13:48:53.093937"
ARC_DETAILS = (FIX / "lighteval_details" / "details_Corianas__111m" / ARC_STAMP
               / f"details_harness|arc:challenge|25_{ARC_STAMP}.parquet")
STAMP = "2024-05-01T12-00-00.123456"


def _run(tmp_path, results: dict, stamp: str = STAMP) -> Path:
    """lighteval's --output-dir layout: results/<org>/<model>/results_<stamp>.json; the example file's other keys."""
    doc = json.loads(EXAMPLE.read_text())
    doc["results"] = {**results, "all": {"acc": 0.5}}
    out = tmp_path / "out" / "results" / "org" / "m" / f"results_{stamp}.json"
    out.parent.mkdir(parents=True)
    out.write_text(json.dumps(doc))
    return out


def _details(tmp_path, key: str, rows: list, stamp: str = STAMP) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "out" / "details" / "org" / "m" / stamp / f"details_{key}_{stamp}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _missing(x) -> bool:
    return x is None or x != x  # None or NaN, as the store's frame holds a missing baseline


def _ingest(path):
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [path], show_progress=False)
        long = query_results(s, MatrixQuery(aggregates=True), all_metrics=True)
    [f] = report.files
    assert f.status == "ingested", f.reason
    return f.notes, {(t, m): (rb, src) for t, m, rb, src in
                     zip(long.task, long.metric, long.random_baseline, long.baseline_source)}


def test_lighteval_names_of_lm_eval_tasks_get_their_chance_level(tmp_path):
    """lighteval's ``glue:mnli``, ``super_glue:boolq`` and ``race:high`` are lm-eval's mnli (3 choices), boolq (2)
    and race (4): before, their lighteval names had no chance level; ARC and MMLU keep theirs."""
    notes, got = _ingest(_run(tmp_path, {
        "lighteval|glue:mnli|0": {"acc": 0.4, "acc_stderr": 0.01}, "lighteval|super_glue:boolq|0": {"acc": 0.6},
        "lighteval|race:high|0": {"acc": 0.3}, "leaderboard|arc:challenge|25": {"acc": 0.3, "acc_norm": 0.35},
        "leaderboard|mmlu:anatomy|5": {"acc": 0.3}, "lighteval|gsm8k|0": {"em": 0.1}}))
    assert got["lighteval|glue:mnli|0", "acc"][0] == pytest.approx(1 / 3)
    assert got["lighteval|super_glue:boolq|0", "acc"][0] == pytest.approx(0.5)
    assert got["lighteval|race:high|0", "acc"][0] == pytest.approx(0.25)
    assert got["leaderboard|arc:challenge|25", "acc_norm"][0] == pytest.approx(0.25)
    assert got["leaderboard|mmlu:anatomy|5", "acc"][0] == pytest.approx(0.25)
    assert _missing(got["lighteval|gsm8k|0", "em"][0])
    assert not any("without a chance level" in n for n in notes)


def test_details_beside_the_results_give_the_chance_level_of_each_document(tmp_path):
    """The details' ``choices`` (2024 layout) and ``doc.choices`` (mid-2025 layout) give 1/n when every document has
    n choices and the mean of 1/n otherwise, said in a note with counts; a generative task's details (one reference
    per document) give none, and its em keeps no chance level."""
    res = _run(tmp_path, {"lighteval|agieval:sat-math|0": {"acc": 0.3, "acc_norm": 0.31},
                          "lighteval|bigbench:causal_judgment|0": {"acc": 0.5},
                          "lighteval|qasper_ll|0": {"acc": 0.5}, "lighteval|gsm8k|0": {"em": 0.1}})
    _details(tmp_path, "lighteval|agieval:sat-math|0",
             [{"example": f"q{i}", "choices": list("abcde"[:n]), "metrics": "{'acc': 1}"}
              for i, n in enumerate((4, 4, 5))])
    _details(tmp_path, "lighteval|bigbench:causal_judgment|0",
             [{"doc": {"query": "q", "choices": [" Yes", " No"]}, "metric": {"acc": 1.0}}] * 3)
    _details(tmp_path, "lighteval|qasper_ll|0",
             [{"doc": {"query": "q", "choices": [" yes", " no"]}, "metric": {"acc": 1.0}},
              {"doc": {"query": "r", "choices": ["gold"]}, "metric": {"acc": 1.0}}])
    _details(tmp_path, "lighteval|gsm8k|0", [{"doc": {"query": "q", "choices": ["42"]}, "metric": {"em": 1.0}}])
    notes, got = _ingest(res)
    mean = (1 / 4 + 1 / 4 + 1 / 5) / 3
    for metric in ("acc", "acc_norm"):
        rb, src = got["lighteval|agieval:sat-math|0", metric]
        assert rb == pytest.approx(mean) and "3 documents" in src and "4 to 5 choices" in src
    rb, src = got["lighteval|bigbench:causal_judgment|0", "acc"]
    assert rb == pytest.approx(0.5) and src.startswith("2 answer choices")
    assert "chance levels from the answer choices listed in the run's details files (acc, acc_norm) of 2 tasks" in " ".join(notes)
    assert any("1 task scored by acc or acc_norm left without a chance level by the details" in n and "qasper_ll|0 (1 of 2)" in n for n in notes)
    assert any("1 multiple-choice task (acc, acc_norm) without a chance level" in n and "qasper_ll" in n
               and "causal_judgment" not in n for n in notes)
    assert not any("gsm8k" in n for n in notes)  # its details are not read: no acc or acc_norm


def test_details_without_choices_leave_the_name_table_in_place(tmp_path):
    """The real leaderboard details file keeps only each document's id and verdict: it lists no choices, which a note
    says, and ARC-Challenge keeps its name's 4 answer choices. A Git LFS pointer in place of a details file is
    counted, and the results are read all the same."""
    stamp = ARC_STAMP.replace(":", "-")
    res = _run(tmp_path, {"leaderboard|arc:challenge|25": {"acc_norm": 0.197098976109215},
                          "leaderboard|hellaswag|10": {"acc_norm": 0.3}}, stamp)
    d = tmp_path / "out" / "details" / "org" / "m" / stamp
    d.mkdir(parents=True)
    shutil.copy(ARC_DETAILS, d / f"details_leaderboard|arc:challenge|25_{stamp}.parquet")
    (d / f"details_leaderboard|hellaswag|10_{stamp}.parquet").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:" + "0" * 64 + "\nsize 123\n")
    notes, got = _ingest(res)
    assert got["leaderboard|arc:challenge|25", "acc_norm"] == (0.25, "4 answer choices")
    assert got["leaderboard|hellaswag|10", "acc_norm"] == (0.25, "4 answer choices")
    assert any("1 details file of the run listing no answer choices: leaderboard|arc:challenge|25" in n for n in notes)
    assert any("1 details file of the run not read" in n and "hellaswag" in n for n in notes)


def test_tasks_left_without_a_chance_level_are_counted(tmp_path):
    """A multiple-choice task whose choices nothing says (no details beside it, a name not in the table) is named in
    a note, not silently normalised as a task without chance."""
    notes, got = _ingest(_run(tmp_path, {"lighteval|agieval:lsat-ar|0": {"acc": 0.2, "acc_norm": 0.21},
                                         "community|arabic_exams|0": {"acc_norm": 0.3}}))
    assert _missing(got["lighteval|agieval:lsat-ar|0", "acc"][0])
    [note] = [n for n in notes if "without a chance level" in n]
    assert note.startswith("2 multiple-choice tasks") and "agieval:lsat-ar" in note and "arabic_exams" in note
