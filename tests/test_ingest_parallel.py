"""A large walk's JSON files read half in a forked worker (store.ingest_parallel): the outcome is the serial one."""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest

from conftest import LM_EVAL_V04, PYTHIA, require
from harness_ext.adapters import every_eval_ever
from harness_ext.store import ingest as ingest_mod
from harness_ext.store import ingest_parallel
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.types import Adapter

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker is forked (Linux)")


def _eee(model: str, scores: dict) -> dict:
    return {"schema_version": "0.2.0", "model_info": {"id": model, "name": model.split("/")[-1]},
            "source_metadata": {"source_name": "Test Board"},
            "evaluation_results": [{"evaluation_name": n, "metric_config": {
                "evaluation_description": f"Accuracy on {n}", "lower_is_better": False, "min_score": 0.0,
                "max_score": 1.0}, "score_details": {"score": v}} for n, v in scores.items()]}


def _tree(root):
    """Good files of two formats, repeats (same content twice, a conflicting value), and bad files, in both halves."""
    require(PYTHIA)
    require(LM_EVAL_V04)
    pythia = sorted(PYTHIA.rglob("*.json"))[:6]
    v04 = sorted(LM_EVAL_V04.rglob("results_*.json"))[:4]
    for i in range(24):
        d = root / f"d{i:02d}"
        d.mkdir(parents=True)
        (d / "a.json").write_text(json.dumps(_eee(f"org/m{i % 7}", {"A": 0.5 + i / 100, "B": 0.25})))
        if i % 4 == 0:
            shutil.copy(pythia[i // 4], d / "p.json")
        if i % 6 == 1:
            shutil.copy(v04[i // 6], d / "results_x.json")
        if i % 5 == 2:
            (d / "bad.json").write_text("{not json")
        if i % 7 == 3:
            (d / "other.json").write_text(json.dumps({"neither": "format"}))
        if i % 9 == 4:
            (d / "nan.json").write_text(json.dumps(_eee("org/x", {"A": float("nan")})))
    shutil.copy(root / "d01" / "a.json", root / "d23" / "copy.json")  # the same content under two names


def _outcome(db, paths, workers, monkeypatch):
    monkeypatch.setenv("HARNESS_EXT_INGEST_WORKERS", str(workers))
    with Store.open(db) as st:
        rep = ingest_paths(st, paths, show_progress=False)
        again = ingest_paths(st, paths, show_progress=False)
        names = [t for (t,) in st.con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        tables = {t: st.con.execute(f"SELECT * EXCLUDE (ingested_at) FROM {t} ORDER BY ALL"
                                    if t in ("sources", "task_configs") else f"SELECT * FROM {t} ORDER BY ALL").fetchall()
                  for t in sorted(names)}
    files = [(f.path, f.status, f.adapter, f.n_results, f.reason, [str(c) for c in f.conflicts]) for f in rep.files]
    return files, [(f.path, f.status, f.reason) for f in again.files], tables


@pytest.fixture
def few_files(monkeypatch):
    monkeypatch.setattr(ingest_parallel, "MIN_FILES", 4)


def test_worker_outcome_is_the_serial_one(tmp_path, monkeypatch, few_files):
    _tree(tmp_path / "t")
    started = []
    real_start = ingest_parallel.start
    monkeypatch.setattr(ingest_parallel, "start", lambda *a: started.append(real_start(*a)) or started[-1])
    serial = _outcome(tmp_path / "s.duckdb", [tmp_path / "t"], 1, monkeypatch)
    assert started == [None, None]
    parallel = _outcome(tmp_path / "p.duckdb", [tmp_path / "t"], 2, monkeypatch)
    assert started[2] is not None and started[3] is not None  # the worker ran, on the ingest and the re-ingest
    assert parallel == serial
    files, again, tables = parallel
    statuses = {s for _, s, *_ in files}
    assert statuses == {"ingested", "skipped", "unchanged"}
    assert any("not a recognised result file" in f[4] for f in files)
    assert any(f[5] for f in files)  # a conflict
    assert {s for _, s, _ in again} == {"unchanged", "skipped"}  # the re-ingest is a no-op
    assert tables["task_configs"]


def test_a_failing_worker_leaves_the_files_to_the_loop(tmp_path, monkeypatch, few_files):
    _tree(tmp_path / "t")
    serial = _outcome(tmp_path / "s.duckdb", [tmp_path / "t"], 1, monkeypatch)

    def crash(*a, **k):
        os._exit(3)

    monkeypatch.setattr(ingest_parallel, "_prepare", crash)
    assert _outcome(tmp_path / "p.duckdb", [tmp_path / "t"], 2, monkeypatch) == serial


def test_ambiguous_and_changing_formats_follow_the_serial_detection(tmp_path, monkeypatch, few_files):
    """A file two adapters claim goes to the walk's established adapter, or is refused, exactly as serially."""
    for i in range(12):
        p = tmp_path / "t" / f"d{i:02d}" / "a.json"
        p.parent.mkdir(parents=True)
        p.write_text(json.dumps(_eee(f"org/m{i}", {"A": 0.5}) if i % 3 else {**_eee(f"org/m{i}", {"A": 0.5}),
                                                                                "clone": True}))
    adapters = dict(ingest_mod.get_registrations("adapters"))

    def clone_claims(src):
        doc = src.try_json()
        return isinstance(doc, dict) and "clone" in doc

    adapters["clone"] = Adapter(name="clone", can_handle=clone_claims, read=every_eval_ever.read)
    monkeypatch.setattr(ingest_mod, "get_registrations", lambda kind: adapters)
    serial = _outcome(tmp_path / "s.duckdb", [tmp_path / "t"], 1, monkeypatch)
    assert _outcome(tmp_path / "p.duckdb", [tmp_path / "t"], 2, monkeypatch) == serial
    assert any("ambiguous" in f[4] for f in serial[0])


def test_small_walks_and_one_core_stay_in_this_process(tmp_path, monkeypatch):
    monkeypatch.delenv("HARNESS_EXT_INGEST_WORKERS", raising=False)
    assert not ingest_parallel._enabled(ingest_parallel.MIN_FILES - 1)
    monkeypatch.setenv("HARNESS_EXT_INGEST_WORKERS", "1")
    assert not ingest_parallel._enabled(10 ** 6)
