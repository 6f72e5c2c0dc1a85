"""Hostile input around lm-eval 0.4.0-0.4.2's per-sample logs (``<model_args>_<task>.jsonl`` beside
``results.json``), read by ``ingest`` and by ``predict`` (which reads the logs its walk finds without ``ingest``'s
checks).

Every case starts from the real outputs in tests/fixtures/lm_eval_early_logs (see its PROVENANCE.md) and changes
one thing in a copy: a FIFO named as a log, a results file whose task name is empty, whose score is an integer too
large for a float, or whose filter list names one filter twice.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from harness_ext.errors import HarnessExtError
from harness_ext.methods.reduction.item_predict import read_item_logs
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.samples import is_samples_file

FIX = Path(__file__).resolve().parent / "fixtures" / "lm_eval_early_logs" / "lm_eval_0.4.2"
PREFIX = "pretrained__standin__m99,seed__99"


def _run(tmp_path, edit=None) -> Path:
    """A copy of lm-eval 0.4.2's run (``results.json`` and the two logs, unpacked), ``edit(results)`` applied."""
    run = tmp_path / "run"
    run.mkdir()
    doc = json.loads((FIX / "results.json").read_text())
    if edit is not None:
        edit(doc)
    (run / "results.json").write_text(json.dumps(doc))
    for task in ("t_mc", "t_gen"):
        (run / f"{PREFIX}_{task}.jsonl").write_bytes(gzip.decompress((FIX / f"{PREFIX}_{task}.jsonl.gz").read_bytes()))
    return run


def _ingested(tmp_path, run: Path) -> tuple:
    """``({file name: (status, reason)}, {(task, metric): rows})`` of ingesting ``run`` into a new store."""
    with Store.open(tmp_path / "s.duckdb") as s:
        rep = ingest_paths(s, [run], show_progress=False)
        files = {Path(f.path).name: (f.status, f.reason or "") for f in rep.files}
        rows = {}
        if "samples" in {r[0] for r in s.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}:
            rows = {(t, m): n for t, m, n in s.con.execute("SELECT task, metric, count(*) FROM samples GROUP BY ALL")
                    .fetchall()}
    return files, rows


def _within(seconds: float, fn, fifos=()):
    """``fn()``'s value or exception, failing the test when it has not returned after ``seconds`` (a blocked open of
    a FIFO); the FIFOs are then opened for writing, so the blocked reader wakes and the thread ends."""
    out = {}

    def work():
        try:
            out["value"] = fn()
        except Exception as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    t = threading.Thread(target=work, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        for f in fifos:
            try:
                os.close(os.open(f, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        t.join(5)
        pytest.fail(f"still reading after {seconds} s (blocked on a FIFO)")
    return out


@pytest.mark.parametrize("name", [f"{PREFIX}_t_mc.jsonl", "samples_t_mc_2024-05-01T12-00-00.123456.jsonl",
                                  f"{PREFIX}_t_mc.jsonl.gz"])
def test_predict_refuses_a_fifo_named_as_a_log_at_once_naming_it(tmp_path, name):
    run = _run(tmp_path)
    os.unlink(run / f"{PREFIX}_t_mc.jsonl")
    fifo = run / name
    os.mkfifo(fifo)
    got = _within(20, lambda: read_item_logs([str(run)]), [fifo])
    assert isinstance(got.get("error"), HarnessExtError), got
    assert str(fifo) in str(got["error"]) and "FIFO" in str(got["error"])


def test_a_score_too_large_for_a_float_in_the_results_file_beside_is_no_crash(tmp_path):
    def huge(doc):
        doc["results"]["t_mc"]["acc,none"] = 10 ** 400

    run = _run(tmp_path, huge)
    files, rows = _ingested(tmp_path, run)
    assert files[f"{PREFIX}_t_mc.jsonl"][0] == "ingested", files
    assert files["results.json"][0] == "skipped" and "too large for a float" in files["results.json"][1]
    assert rows[("t_mc", "acc")] == 20
    long, _, notes = read_item_logs([str(run)])
    assert set(long["task"]) == {"t_mc", "t_gen"}
    [note] = [n for n in notes if f"{PREFIX}_t_mc.jsonl" in n and "0.4.0-0.4.2" in n]
    assert "1 metric not reported in results.json" in note  # acc: its score is no float; acc_norm compared


def test_an_empty_task_name_in_the_results_file_claims_no_log(tmp_path):
    def empty(doc):
        doc["configs"][""] = doc["configs"].pop("t_mc")
        doc["results"][""] = doc["results"].pop("t_mc")

    run = _run(tmp_path, empty)
    log = run / f"{PREFIX}_.jsonl"
    (run / f"{PREFIX}_t_mc.jsonl").rename(log)
    assert not is_samples_file(log)
    files, rows = _ingested(tmp_path, run)
    assert files["results.json"][0] == "skipped" and "non-empty" in files["results.json"][1]
    assert files[log.name][0] == "skipped" and "not a recognised result file" in files[log.name][1]
    assert {t for t, _ in rows} == {"t_gen"}  # nothing stored under an empty task name
    long = read_item_logs([str(run)])[0]
    assert set(long["task"]) == {"t_gen"}


def _one_filter_twice(doc):
    flist = doc["configs"]["t_gen"]["filter_list"]
    flist[1]["name"] = flist[0]["name"]  # "strict-match" twice: lm-eval keeps one answer per filter name


def test_a_filter_named_twice_is_one_filter_as_lm_eval_logs_it(tmp_path):
    run = _run(tmp_path, _one_filter_twice)
    log = run / f"{PREFIX}_t_gen.jsonl"
    samples = json.loads(log.read_text())
    log.write_text(json.dumps(samples[:20]))  # each document once: what lm-eval writes for one filter name
    files, rows = _ingested(tmp_path, run)
    assert files[log.name][0] == "ingested", files
    assert rows[("t_gen", "exact_match,strict-match")] == 20
    assert not any(m.endswith("flexible-extract") for _, m in rows)
    long = read_item_logs([str(run)])[0]
    assert len(long[long["task"] == "t_gen"]) == 20


def test_a_log_of_two_loggings_per_document_for_a_filter_named_twice_is_refused_by_ingest_and_predict(tmp_path):
    run = _run(tmp_path, _one_filter_twice)
    files, rows = _ingested(tmp_path, run)
    status, reason = files[f"{PREFIX}_t_gen.jsonl"]
    assert status == "skipped" and "doc_id 0 logged 2 times" in reason and "1 filter (strict-match)" in reason
    assert not any(t == "t_gen" for t, _ in rows)
    with pytest.raises(HarnessExtError, match="doc_id 0 logged 2 times"):
        read_item_logs([str(run)])


def test_a_symlinked_log_is_read_as_ingest_reads_any_linked_file(tmp_path):
    """Held: a log that is a link is followed, as every file ``ingest`` walks is (not a new rule)."""
    run = _run(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.move(run / f"{PREFIX}_t_mc.jsonl", elsewhere / "x.jsonl")
    (run / f"{PREFIX}_t_mc.jsonl").symlink_to(elsewhere / "x.jsonl")
    files, rows = _ingested(tmp_path, run)
    assert files[f"{PREFIX}_t_mc.jsonl"][0] == "ingested" and rows[("t_mc", "acc")] == 20


def test_a_table_of_json_records_named_board_task_beside_the_results_file_is_not_taken_for_a_log(tmp_path):
    """A ``.jsonl`` whose name ends in ``_<task>`` of the run is taken for another run's log (and refused) only when
    it is a JSON array, as lm-eval 0.4.0-0.4.2 write: JSON records one a line are a table the adapters read."""
    run = _run(tmp_path)
    board = run / "board_t_mc.jsonl"
    board.write_text('{"model": "m1", "t_mc": 0.5}\n{"model": "m2", "t_mc": 0.7}\n')
    other = run / "pretrained__other_t_mc.jsonl"  # another run's log: an array
    shutil.copy(run / f"{PREFIX}_t_mc.jsonl", other)
    assert not is_samples_file(board) and is_samples_file(other)
    files, _ = _ingested(tmp_path, run)
    assert files[board.name] == ("ingested", ""), files[board.name]
    assert files[other.name][0] == "skipped" and "another run" in files[other.name][1]


def test_the_results_files_beside_a_log_are_not_held_whole_in_memory(tmp_path):
    """``runs_beside`` caches what it read per folder: only the model's fields, filter names and scores are kept,
    so results files padded with configuration (twenty such files are read for one ``.jsonl``) do not stay in
    memory folder after folder (on main, 1.2 GB of padded JSON in 3 folders held 21 GB)."""
    import tracemalloc

    from harness_ext.store.early_sample_logs import _runs_in, runs_beside

    run = _run(tmp_path)
    (run / "results.json").unlink()
    doc = json.loads((FIX / "results.json").read_text())
    doc["configs"]["t_mc"]["pad"] = [{}] * 200_000  # 0.8 MB of text, 13 MB once parsed
    for j in range(3):
        (run / f"run{j}.json").write_text(json.dumps({**doc, "config": {**doc["config"], "model_args": f"m{j}"}}))
    _runs_in.cache_clear()
    tracemalloc.start()
    try:
        runs = runs_beside(run / f"{PREFIX}_t_mc.jsonl")
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        _runs_in.cache_clear()
    assert len(runs) == 3
    assert held < 2 * 2**20, f"{held:,} bytes held"
    slim = runs[0][1]
    assert slim["configs"]["t_gen"]["filter_list"] == [{"name": "strict-match"}, {"name": "flexible-extract"}]
    assert slim["results"]["t_mc"]["acc,none"] == 0.85 and "pad" not in slim["configs"]["t_mc"]


def test_a_model_name_that_is_no_text_is_one_clear_error_for_the_results_file_and_its_logs(tmp_path):
    def unnamed(doc):
        doc["config"]["model_args"] = "dtype=float16"  # no pretrained=: the top-level model_name would name it
        doc["model_name"] = {"a": 1}

    run = _run(tmp_path, unnamed)
    for f in run.glob("*.jsonl"):
        f.rename(run / f.name.replace(PREFIX, "dtype__float16"))
    files, rows = _ingested(tmp_path, run)
    assert {s for s, _ in files.values()} == {"skipped"} and not rows
    assert {r for _, r in files.values()} == {"config.model_args names no model (no pretrained=, model= or engine=)"}
    with pytest.raises(HarnessExtError, match="names no model"):
        read_item_logs([str(run)])


def test_model_args_recorded_as_a_mapping_whose_model_is_no_text_refuses_the_results_file_naming_it(tmp_path):
    def mapping(doc):
        doc["config"]["model_args"] = {"pretrained": ["a", "b"]}

    run = _run(tmp_path, mapping)
    files, rows = _ingested(tmp_path, run)
    assert files["results.json"] == ("skipped", "config.model_args pretrained is a list, not a model's name")


def test_predict_names_the_log_when_a_reader_fails_in_a_way_not_foreseen(tmp_path, monkeypatch):
    """Whatever else reading one third-party log raises is one error naming the file, as ``ingest`` reports it."""
    import harness_ext.store.samples as samples

    def broken(path, model=None, task=None):
        raise OverflowError("int too large to convert to float")

    monkeypatch.setattr(samples, "read_samples", broken)
    run = _run(tmp_path)
    with pytest.raises(HarnessExtError, match=r"cannot read the per-item log .*_t_\w+\.jsonl: OverflowError: int too"):
        read_item_logs([str(run)])
