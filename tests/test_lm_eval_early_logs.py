"""lm-eval 0.4.0-0.4.2's per-sample logs (``<model_args>_<task>.jsonl``, a JSON array beside ``results.json``) read
by ``ingest`` and ``predict``, from outputs recorded with those releases (no lm-eval needed here).

tests/fixtures/lm_eval_early_logs (see its PROVENANCE.md): for each of 0.4.0, 0.4.1 and 0.4.2 the stand-in model on
a multiple-choice task (``acc``, ``acc_norm``) and a generation task scored under two filters (``strict-match``,
``flexible-extract``), and an item folder's new model run with 0.4.2 on its seven tasks. The samples files are
stored gzipped; the tests unpack them where lm-eval's plain ``.jsonl`` is what is read.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

import harness_ext as hx
from harness_ext.errors import IngestError
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.samples import is_samples_file, read_samples

FIX = Path(__file__).resolve().parent / "fixtures" / "lm_eval_early_logs"
VERSIONS = ("0.4.0", "0.4.1", "0.4.2")
PREFIX = "pretrained__standin__m99,seed__99"


def _as_written(src: Path, dest: Path) -> Path:
    """``src``'s files in ``dest`` as lm-eval wrote them: the gzipped samples unpacked to ``.jsonl``."""
    dest.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.name.endswith(".jsonl.gz"):
            (dest / f.name[:-3]).write_bytes(gzip.decompress(f.read_bytes()))
        elif f.is_file():
            shutil.copy(f, dest / f.name)
    return dest


def _reported(run: Path) -> dict:
    """``{(task, metric as stored): score}`` of the results file lm-eval wrote."""
    doc = json.loads((run / "results.json").read_text())
    out = {}
    for task, row in doc["results"].items():
        for key, v in row.items():
            metric, _, filt = key.partition(",")
            if filt and "_stderr" not in metric:
                out[(task, metric if filt == "none" else key)] = v
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_ingest_reads_each_releases_logs_and_their_item_means_are_the_results_files_scores(tmp_path, version):
    run = _as_written(FIX / f"lm_eval_{version}", tmp_path / "run")
    with Store.open(tmp_path / "s.duckdb") as s:
        rep = ingest_paths(s, [run], show_progress=False)
        logs = [f for f in rep.files if f.path.endswith(".jsonl")]
        assert [f.status for f in logs] == ["ingested", "ingested"], [f.reason for f in logs]
        gen = next(f for f in logs if f.path.endswith("_t_gen.jsonl"))
        assert gen.adapter == "lm_eval_samples" and gen.n_samples == 40
        [note] = [n for n in gen.notes if "0.4.0-0.4.2" in n]
        assert "20 documents logged once per filter" in note and "(strict-match, flexible-extract)" in note
        assert "the means of 2 metrics equal the task's scores in results.json" in note
        got = {(t, m): (v, n) for t, m, v, n in s.con.execute(
            "SELECT task, metric, avg(value), count(*) FROM samples GROUP BY ALL").fetchall()}
        reported = _reported(run)
        assert set(got) == set(reported) == {("t_mc", "acc"), ("t_mc", "acc_norm"), ("t_gen",
                                              "exact_match,strict-match"), ("t_gen", "exact_match,flexible-extract")}
        for key, score in reported.items():
            assert got[key] == (pytest.approx(score, abs=1e-12), 20)
        # The two filters score differently, so a swap would show: strict-match finds only "The answer is X."
        assert reported[("t_gen", "exact_match,strict-match")] < reported[("t_gen", "exact_match,flexible-extract")]
        # The item rows are the results rows' model: one name for both.
        [(model,)] = s.con.execute("SELECT DISTINCT name FROM models").fetchall()
        assert s.con.execute("SELECT DISTINCT model FROM samples").fetchall() == [(model,)]
        n = s.con.execute("SELECT count(*) FROM samples").fetchone()[0]
        again = ingest_paths(s, [run], show_progress=False)
        assert {f.status for f in again.files} == {"unchanged"}
        assert s.con.execute("SELECT count(*) FROM samples").fetchone()[0] == n == 80


def test_a_gzipped_log_reads_as_the_plain_one(tmp_path):
    plain = _as_written(FIX / "lm_eval_0.4.2", tmp_path / "plain")
    for task in ("t_mc", "t_gen"):
        name = f"{PREFIX}_{task}.jsonl"
        assert is_samples_file(FIX / "lm_eval_0.4.2" / f"{name}.gz") and is_samples_file(plain / name)
        a, b = read_samples(FIX / "lm_eval_0.4.2" / f"{name}.gz"), read_samples(plain / name)
        assert a[:2] == b[:2] == ("standin/m99", task)
        assert a[2].equals(b[2])


def test_a_jsonl_file_is_a_log_only_beside_a_results_file_that_ran_its_task(tmp_path):
    run = _as_written(FIX / "lm_eval_0.4.1", tmp_path / "run")
    (run / "notes.jsonl").write_text('[{"doc_id": 0, "acc": 1}]')
    (run / f"{PREFIX}_t_other.jsonl").write_text('[{"doc_id": 0, "acc": 1}]')
    assert not is_samples_file(run / "notes.jsonl") and not is_samples_file(run / f"{PREFIX}_t_other.jsonl")
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(run / f"{PREFIX}_t_mc.jsonl", lone)
    assert not is_samples_file(lone / f"{PREFIX}_t_mc.jsonl")  # no results file: nothing names its task or model
    # lm-eval run with --output_path run.json: the results file has that name, the logs are in its folder.
    (run / "results.json").rename(run / "run.json")
    assert read_samples(run / f"{PREFIX}_t_mc.jsonl")[:2] == ("standin/m99", "t_mc")


def _skipped(run: Path, name: str, tmp_path: Path) -> str:
    with Store.open(tmp_path / f"{name}.duckdb") as s:
        rep = ingest_paths(s, [run], show_progress=False)
        [f] = [f for f in rep.files if f.path.endswith(name)]
        assert f.status == "skipped"
        assert s.con.execute("SELECT count(*) FROM sample_sources WHERE path LIKE ?", [f"%{name}"]).fetchone()[0] == 0
        assert s.con.execute("SELECT count(DISTINCT task) FROM samples").fetchone()[0] == 1  # the other log is stored
        return f.reason


def test_a_bad_log_is_one_clear_error_and_stores_nothing(tmp_path):
    run = _as_written(FIX / "lm_eval_0.4.0", tmp_path / "run")
    gen = run / f"{PREFIX}_t_gen.jsonl"
    text = gen.read_text()
    gen.write_text(text[: len(text) // 2])
    assert "not JSON (lm-eval 0.4.0-0.4.2 write one JSON array)" in _skipped(run, gen.name, tmp_path / "a")
    samples = json.loads(text)
    gen.write_text(json.dumps(samples[:30]))  # the second filter's logging of 10 documents lost
    assert "10 documents (doc_id 10 first) logged fewer times than the 2 filters" in _skipped(run, gen.name,
                                                                                               tmp_path / "b")
    gen.write_text(json.dumps(samples + samples[:1]))
    assert "sample 41: doc_id 0 logged 3 times" in _skipped(run, gen.name, tmp_path / "c")
    gen.write_text(json.dumps({"samples": samples}))
    assert "a JSON dict, expected the JSON array" in _skipped(run, gen.name, tmp_path / "d")
    gen.write_text(json.dumps(samples[:19] + [[1, 2]] + samples[20:]))
    assert "sample 20 is list, expected an object" in _skipped(run, gen.name, tmp_path / "e")


def test_another_runs_log_in_the_folder_is_refused_not_given_the_results_files_model(tmp_path):
    run = _as_written(FIX / "lm_eval_0.4.0", tmp_path / "run")
    other = run / "pretrained__standin__m07,seed__7_t_mc.jsonl"
    (run / f"{PREFIX}_t_mc.jsonl").rename(other)
    assert is_samples_file(other)
    reason = _skipped(run, other.name, tmp_path)
    assert "is of another run (model_args 'pretrained=standin/m99,seed=99')" in reason
    assert read_samples(other, model="standin/m07")[:2] == ("standin/m07", "t_mc")


def test_predict_reads_lm_eval_0_4_2_logs_and_the_estimate_is_the_results_files_mean(tmp_path):
    run = _as_written(FIX / "lm_eval_0.4.2_items" / "run", tmp_path / "run")
    pred = hx.predict(str(FIX / "lm_eval_0.4.2_items"), str(run))
    reported = {t: v for (t, m), v in _reported(run).items() if m == "acc"}
    assert len(reported) == 7
    [agg] = pred.aggregate.to_dict("records")
    # Every item was run (0.4.2 has no --samples): each task is observed, the estimate is their plain mean.
    assert agg["aggregate"] == pytest.approx(sum(reported.values()) / 7, abs=1e-12)
    assert agg["n_observed"] == 7


@pytest.mark.parametrize("results", ["not json", "[" * 100_000, '{"config": {"model_args": 5}, "configs": {}}', None])
def test_a_hostile_results_file_makes_no_log_of_the_file_beside_it(tmp_path, results):
    import os

    run = _as_written(FIX / "lm_eval_0.4.1", tmp_path / "run")
    (run / "results.json").unlink()
    if results is None:
        os.mkfifo(run / "results.json")  # read without waiting: refused as no regular file
    else:
        (run / "results.json").write_text(results)
    log = run / f"{PREFIX}_t_mc.jsonl"
    assert not is_samples_file(log)
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [log], show_progress=False)
        assert [f.status for f in rep.files] == ["skipped"]
        assert "samples" not in s.con.execute("SHOW TABLES").fetchdf().get("name", []).tolist() or \
            s.con.execute("SELECT count(*) FROM samples").fetchone()[0] == 0
