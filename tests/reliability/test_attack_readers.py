"""Readers fail one file at a time, and the store refuses what it cannot open as asked.

Reproductions of the reader and store failures an independent attack found (hostile files made in tmp_path):

- an lm-eval v0.4 results file with a lone surrogate (``"\\ud800"``) in a ``configs`` value lost every file's
  task configurations in its batch, and re-ingest said "unchanged";
- a lone surrogate anywhere else a file's text reaches the store (names, metadata) in any adapter;
- an Inspect ``.eval`` archive whose ``header.json`` inflates to hundreds of megabytes (the size limit applied
  to the archive, not its member);
- Every Eval Ever ``*_samples.jsonl`` and lm-eval ``samples_*.jsonl`` with a ``sample_id`` of 2**63 or 10**30,
  a 401-digit score, a non-finite score, a surrogate model name or 100,000-deep nesting aborted the whole ingest
  after the result files were committed;
- any exception a reader raises outside the adapter's ``read`` aborted the ingest;
- a store with a newer schema version was written to without a word; a store in a read-only folder gave an
  "unexpected FatalException".

Each bad file is skipped with its reason, the files beside it are stored, and nothing of the bad one is.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import os
import shutil
import zipfile
from pathlib import Path

import duckdb
import pytest

from harness_ext.errors import StoreError
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.samples import ingest_samples

FIX = Path(__file__).resolve().parents[1] / "fixtures"
LM_EVAL_V04 = FIX / "lm_eval_v04" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-15-28.837033.json"
EEE_SAMPLES = FIX / "eee_samples" / "mmlu" / "openai" / "gpt2" / "None_samples.jsonl"
INSPECT_LOG = next((FIX / "inspect").glob("*.json"))
SAMPLES_RUN = FIX / "samples" / "lm_eval_output" / "toy__lm-small"
RESULTS_NAME = "results_2026-04-12T11-15-28.837033.json"


def _by_name(report) -> dict:
    return {Path(f.path).parent.name + "/" + Path(f.path).name: f for f in report.files}


def _counts(db) -> dict:
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in sorted(tables)}
    finally:
        con.close()


# -- lm-eval v0.4: a lone surrogate in a task configuration ------------------------------------------------------
def _lm_eval_run(folder: Path, name: str, description: str = "plain") -> Path:
    """A copy of the real Qwen GPQA results file as model ``org/<name>`` and task ``task_<name>``."""
    doc = json.loads(LM_EVAL_V04.read_text())
    old = next(iter(doc["configs"]))
    task = f"task_{name}"
    doc["results"] = {task: doc["results"][old]}
    doc["configs"] = {task: dict(doc["configs"][old], task=task, description=description)}
    for key in ("versions", "n-shot", "higher_is_better", "n-samples"):
        if isinstance(doc.get(key), dict) and old in doc[key]:
            doc[key] = {task: doc[key][old]}
    doc["group_subtasks"] = {task: []}
    doc["config"]["model_args"] = f"pretrained=org/{name}"
    doc["model_name"] = f"org/{name}"
    out = folder / name / RESULTS_NAME
    out.parent.mkdir(parents=True)
    out.write_text(json.dumps(doc))  # json.dumps writes a lone surrogate as the escape "\ud800"
    return out


def test_lm_eval_config_surrogate_fails_its_file_alone(tmp_path):
    runs = tmp_path / "runs"
    _lm_eval_run(runs, "a")
    _lm_eval_run(runs, "b", description="bad \ud800 text")
    _lm_eval_run(runs, "c")
    db = tmp_path / "s.duckdb"
    with Store.open(db) as store:
        rep = ingest_paths(store, [runs], show_progress=False)
    by = _by_name(rep)
    bad = by[f"b/{RESULTS_NAME}"]
    assert bad.status == "skipped"
    assert "task_config/config/description" in bad.reason and "not valid UTF-8" in bad.reason
    assert [by[f"{n}/{RESULTS_NAME}"].status for n in "ac"] == ["ingested", "ingested"]
    con = duckdb.connect(str(db), read_only=True)
    kept = sorted(r[0] for r in con.execute("SELECT task FROM task_configs").fetchall())
    models = sorted(r[0] for r in con.execute("SELECT name FROM models").fetchall())
    con.close()
    assert kept == ["task_a", "task_c"]  # the good files' configurations are kept
    assert models == ["org/a", "org/c"]  # nothing of the bad file is
    before = _counts(db)
    with Store.open(db) as store:  # re-ingest: the same answer, nothing half-stored to call "unchanged"
        again = _by_name(ingest_paths(store, [runs], show_progress=False))
    assert again[f"b/{RESULTS_NAME}"].status == "skipped"
    assert [again[f"{n}/{RESULTS_NAME}"].status for n in "ac"] == ["unchanged", "unchanged"]
    assert _counts(db) == before


def test_paired_surrogate_escape_is_valid_text(tmp_path):
    """An emoji written as a JSON surrogate pair is valid text: the check must not refuse it."""
    runs = tmp_path / "runs"
    _lm_eval_run(runs, "e", description="smile \U0001F600")
    path = runs / "e" / RESULTS_NAME
    assert "\\ud83d\\ude00" in path.read_text()
    with Store.open(tmp_path / "s.duckdb") as store:
        rep = ingest_paths(store, [runs], show_progress=False)
    assert [f.status for f in rep.files] == ["ingested"], rep.files


# -- a lone surrogate wherever a file's text reaches the store, in every adapter --------------------------------
def _eee_doc() -> dict:
    return {
        "schema_version": "0.2.0", "source_metadata": {"source_name": "helm_lite"},
        "model_info": {"name": "M", "id": "org/m", "developer": "org"},
        "evaluation_results": [
            {"evaluation_name": "BoolQ", "metric_config": {"evaluation_description": "EM on BoolQ",
                                                           "min_score": 0.0, "max_score": 1.0},
             "score_details": {"score": 0.8}}]}


def _inspect_doc() -> dict:
    return json.loads(INSPECT_LOG.read_text())


def _set(doc: dict, keys: tuple, value) -> dict:
    doc = copy.deepcopy(doc)
    d = doc
    for k in keys[:-1]:
        d = d[k]
    d[keys[-1]] = value
    return doc


HOSTILE_TEXT = {
    "eee model metadata": (_eee_doc, ("model_info", "developer"), "org\ud800"),
    "eee model name": (_eee_doc, ("model_info", "id"), "org/\udfff"),
    "eee dataset name": (_eee_doc, ("evaluation_results", 0, "evaluation_name"), "Bool\ud800Q"),
    "eee metric": (_eee_doc, ("evaluation_results", 0, "metric_config", "evaluation_description"),
                   "E\ud800M on BoolQ"),
    "inspect model": (_inspect_doc, ("eval", "model"), "openai/\ud800"),
    "inspect task": (_inspect_doc, ("eval", "task"), "task\ud800"),
    "inspect model args": (_inspect_doc, ("eval", "model_args"), {"k\ud800": 1}),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_TEXT))
def test_lone_surrogate_in_any_stored_text_fails_its_file_alone(tmp_path, case):
    make, keys, value = HOSTILE_TEXT[case]
    folder = tmp_path / "in"
    folder.mkdir()
    good = make()
    (folder / "a_good.json").write_text(json.dumps(good))
    (folder / "b_bad.json").write_text(json.dumps(_set(good, keys, value)))
    other = _set(good, ("model_info", "id"), "org/other") if "model_info" in good else _set(good, ("eval", "model"),
                                                                                               "openai/other")
    (folder / "c_good.json").write_text(json.dumps(other))
    db = tmp_path / "s.duckdb"
    with Store.open(db) as store:
        rep = ingest_paths(store, [folder], show_progress=False)
    by = {Path(f.path).name: f for f in rep.files}
    assert by["b_bad.json"].status == "skipped" and "UTF-8" in by["b_bad.json"].reason, by["b_bad.json"]
    assert by["a_good.json"].status == "ingested" and by["c_good.json"].status == "ingested"
    con = duckdb.connect(str(db), read_only=True)
    paths = {r[0] for r in con.execute("SELECT path FROM sources").fetchall()}
    con.close()
    assert not any(p.endswith("b_bad.json") for p in paths)


# -- Inspect .eval archives: every member read is bounded -------------------------------------------------------
def _eval_archive(path: Path, header_text_blocks) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z, z.open("header.json", "w") as fh:
        for block in header_text_blocks:
            fh.write(block)
    return path


def _valid_eval(path: Path) -> Path:
    doc = _inspect_doc()
    header = {k: v for k, v in doc.items() if k != "samples"}
    return _eval_archive(path, [json.dumps(header).encode()])


def test_inspect_header_inflating_past_the_limit_is_refused(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    _valid_eval(folder / "a_ok.eval")
    # 100 MB of spaces inside a JSON string: about 100 KB compressed, declared as 100 MB inflated.
    _eval_archive(folder / "b_bomb.eval", [b'{"a": "'] + [b" " * (1 << 20)] * 100 + [b'"}'])
    assert (folder / "b_bomb.eval").stat().st_size < 1 << 20
    with Store.open(tmp_path / "s.duckdb") as store:
        by = {Path(f.path).name: f for f in ingest_paths(store, [folder], show_progress=False).files}
    assert by["a_ok.eval"].status == "ingested"
    assert by["b_bomb.eval"].status == "skipped" and "header.json" in by["b_bomb.eval"].reason
    assert "limit" in by["b_bomb.eval"].reason


def test_inspect_header_inflation_ratio_is_bounded(tmp_path):
    """Below the size limit, a member inflating a thousandfold is refused as it inflates, not read whole."""
    folder = tmp_path / "logs"
    folder.mkdir()
    _eval_archive(folder / "bomb.eval", [b'{"a": "'] + [b" " * (1 << 20)] * 20 + [b'"}'])
    with Store.open(tmp_path / "s.duckdb") as store:
        (f,) = ingest_paths(store, [folder], show_progress=False).files
    assert f.status == "skipped" and "200 times its" in f.reason, f


def test_read_inflated_stops_at_the_cap():
    from harness_ext.errors import IngestError
    from harness_ext.store.ingest_read import read_inflated

    class Endless:  # a stream that never ends: read_inflated must stop on its own
        reads = 0

        def read(self, n):
            Endless.reads += 1
            return b"x" * n

    with pytest.raises(IngestError, match="inflates past the 3,000,000-byte limit"):
        read_inflated(Endless(), "f.eval", "member header.json", 10**9, 3_000_000)
    assert Endless.reads <= 4
    with pytest.raises(IngestError, match="200 times its 100 compressed bytes"):
        read_inflated(Endless(), "f.eval", "member header.json", 100, 10**9)


# -- samples files: each fails alone ---------------------------------------------------------------------------
def _eee_sample(**changes) -> dict:
    rec = json.loads(EEE_SAMPLES.read_text().splitlines()[0])
    rec.update(changes)
    return rec


EEE_HOSTILE = {
    "sample_id 2**63": (json.dumps(_eee_sample(sample_id=2**63)), "outside the 64-bit"),
    "sample_id 10**30": (json.dumps(_eee_sample(sample_id=10**30)), "outside the 64-bit"),
    "401-digit score": (json.dumps(_eee_sample(evaluation={"score": 10**400, "is_correct": True})),
                        "of 401 digits is too large"),
    "NaN score": (json.dumps(_eee_sample(evaluation={"score": float("nan")})), "not finite"),
    "Infinity score": (json.dumps(_eee_sample(evaluation={"score": float("inf")})), "not finite"),
    "surrogate model_id": (json.dumps(_eee_sample(model_id="org/\ud800")), "not valid UTF-8"),
    "surrogate sample_hash": (json.dumps(_eee_sample(sample_hash="h\ud800")), "not valid UTF-8"),
    "100,000-deep nesting": ('{"sample_id": 1, "evaluation": {"score": 1}, "x": ' + "[" * 100_000 + "]" * 100_000
                             + "}", "nested too deeply"),
    "5,000-digit integer": ('{"sample_id": 1, "evaluation": {"score": ' + "9" * 5000 + "}}", "not JSON"),
}


def _eee_tree(root: Path) -> dict:
    """An Every Eval Ever results file, then a good, every hostile and another good samples file after it."""
    root.mkdir()
    (root / "a_results.json").write_text(json.dumps(_eee_doc()))
    names = {}
    lines = {"b_good": json.dumps(_eee_sample(model_id="org/b"))}
    for i, (case, (line, _)) in enumerate(sorted(EEE_HOSTILE.items())):
        lines[f"c{i:02d}"] = line
        names[f"c{i:02d}_samples.jsonl"] = case
    lines["z_good"] = json.dumps(_eee_sample(model_id="org/z"))
    for stem, line in lines.items():
        (root / f"{stem}_samples.jsonl").write_text(line + "\n")
    return names


def test_every_eval_ever_samples_fail_one_at_a_time(tmp_path):
    names = _eee_tree(tmp_path / "eee")
    db = tmp_path / "s.duckdb"
    with Store.open(db) as store:
        rep = ingest_paths(store, [tmp_path / "eee"], show_progress=False)
    by = {Path(f.path).name: f for f in rep.files}
    assert by["a_results.json"].status == "ingested"
    assert by["b_good_samples.jsonl"].status == "ingested" and by["z_good_samples.jsonl"].status == "ingested"
    for name, case in names.items():
        f = by[name]
        assert f.status == "skipped" and EEE_HOSTILE[case][1] in f.reason, (case, f)
    con = duckdb.connect(str(db), read_only=True)
    models = sorted(r[0] for r in con.execute("SELECT DISTINCT model FROM samples").fetchall())
    n_sources = con.execute("SELECT count(*) FROM sample_sources").fetchall()[0][0]
    con.close()
    assert models == ["org/b", "org/z"] and n_sources == 2


LM_EVAL_HOSTILE = {
    "doc_id 2**63": ({"doc_id": 2**63, "acc": 1.0}, "doc_id"),
    "401-digit metric value": ({"doc_id": 1, "acc": 10**400}, "too large"),
    "surrogate metric name": ({"doc_id": 1, "metrics": ["acc\ud800"], "acc\ud800": 1.0}, "not valid UTF-8"),
    "surrogate doc_hash": ({"doc_id": 1, "acc": 1.0, "doc_hash": "\udfff"}, "not valid UTF-8"),
    "100,000-deep nesting": (None, "nested too deeply"),
}


def test_lm_eval_samples_fail_one_at_a_time(tmp_path):
    run = tmp_path / "run" / "toy__lm-small"
    shutil.copytree(SAMPLES_RUN, run)
    stamp = "2026-11-22T19-54-19.626468"
    expect = {}
    for i, (case, (line, why)) in enumerate(sorted(LM_EVAL_HOSTILE.items())):
        name = f"samples_bad{i}_{stamp}.jsonl"
        text = json.dumps(line) if line is not None else '{"doc_id": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
        (run / name).write_text(text + "\n")
        expect[name] = (case, why)
    db = tmp_path / "s.duckdb"
    with Store.open(db) as store:
        rep = ingest_paths(store, [tmp_path / "run"], show_progress=False)
    by = {Path(f.path).name: f for f in rep.files}
    for name, (case, why) in expect.items():
        assert by[name].status == "skipped" and why in by[name].reason, (case, by[name])
    good = [n for n in by if n.startswith("samples_toy_")]
    assert good and all(by[n].status == "ingested" for n in good)


def test_gzip_samples_bomb_is_refused(tmp_path, monkeypatch):
    bomb = tmp_path / "samples_t_2026-01-01T00-00-00.000000.jsonl.gz"
    with gzip.open(bomb, "wb") as fh:
        for _ in range(50):
            fh.write(b"\n" * (1 << 20))
    assert bomb.stat().st_size < 1 << 20
    with Store.open(tmp_path / "s.duckdb") as store:
        rep = ingest_samples(store, [bomb], model="m", show_progress=False)
    (f,) = rep.files
    assert f.status == "skipped" and "200 times its" in f.reason, f


def test_samples_special_file_is_not_read(tmp_path):
    fifo = tmp_path / "x_samples.jsonl"
    os.mkfifo(fifo)
    with Store.open(tmp_path / "s.duckdb") as store:
        (f,) = ingest_samples(store, [fifo], show_progress=False).files
    assert f.status == "skipped" and "FIFO" in f.reason


# -- any exception a reader raises fails that file only ---------------------------------------------------------
def test_any_reader_exception_fails_its_file_alone(tmp_path, monkeypatch):
    from harness_ext.store import ingest as ingest_mod

    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("a", "b", "c"):
        doc = _set(_eee_doc(), ("model_info", "id"), f"org/{name}")
        (folder / f"{name}.json").write_text(json.dumps(doc))
    real = ingest_mod.sha256_of

    def flaky(src, adapter):
        if src.pathname.endswith("b.json"):
            raise RuntimeError("a reader's own bug")
        return real(src, adapter)

    monkeypatch.setattr(ingest_mod, "sha256_of", flaky)
    with Store.open(tmp_path / "s.duckdb") as store:
        by = {Path(f.path).name: f for f in ingest_paths(store, [folder], show_progress=False).files}
    assert by["b.json"].status == "skipped" and by["b.json"].reason == "cannot read: RuntimeError: a reader's own bug"
    assert by["a.json"].status == by["c.json"].status == "ingested"


def test_deeply_nested_results_file_fails_alone(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps(_eee_doc()))
    (folder / "b.json").write_text('{"model_info": {}, "evaluation_results": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with Store.open(tmp_path / "s.duckdb") as store:
        by = {Path(f.path).name: f for f in ingest_paths(store, [folder], show_progress=False).files}
    assert by["a.json"].status == "ingested" and by["b.json"].status == "skipped"


# -- the store: a newer schema version, a read-only folder ------------------------------------------------------
def _small_store(tmp_path) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps(_eee_doc()))
    db = tmp_path / "s.duckdb"
    with Store.open(db) as store:
        ingest_paths(store, [folder], show_progress=False)
    return db


def test_newer_schema_version_is_refused_and_the_store_left_alone(tmp_path):
    from harness_ext.cli import main
    from harness_ext.store.tables import SCHEMA_VERSION

    newer = int(SCHEMA_VERSION) + 1
    db = _small_store(tmp_path)
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(newer)])
    con.close()
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    for read_only in (False, True):
        with pytest.raises(StoreError, match=f"schema version {newer}, newer than this harness-ext reads"):
            Store.open(db, read_only=read_only)
    assert main(["ingest", "--db", str(db), str(tmp_path / "in"), "-q"]) == 1
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    assert not os.path.exists(str(db) + ".wal")


def _deny_writes_under(monkeypatch, folder: Path):
    """Make ``folder`` read-only as the store's check sees it (as root, chmod does not stop writes)."""
    from harness_ext.store import locking

    real = os.access

    def access(path, mode, *a, **k):
        if mode & os.W_OK and Path(path).resolve().is_relative_to(folder.resolve()):
            return False
        return real(path, mode, *a, **k)

    monkeypatch.setattr(locking.os, "access", access)


def test_store_in_a_read_only_folder_is_a_clear_error(tmp_path, monkeypatch, capsys):
    from harness_ext.cli import main

    db = _small_store(tmp_path)
    ro = tmp_path / "ro"
    ro.mkdir()
    shutil.copy(db, ro / "s.duckdb")
    _deny_writes_under(monkeypatch, ro)
    with pytest.raises(StoreError, match=r"cannot write the store at .*s\.duckdb: read-only folder"):
        Store.open(ro / "s.duckdb")
    with pytest.raises(StoreError, match="cannot write the store at .*new.duckdb: read-only folder"):
        Store.open(ro / "new.duckdb")
    assert not (ro / "new.duckdb").exists()
    with Store.open(ro / "s.duckdb", read_only=True) as store:  # reading it is fine
        assert store.counts()["results"] == 1
    assert main(["ingest", "--db", str(ro / "s.duckdb"), str(tmp_path / "in"), "-q"]) == 1
    err = capsys.readouterr().err
    assert "read-only folder" in err and "unexpected" not in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to a folder whatever its mode")
def test_store_in_a_chmod_read_only_folder(tmp_path):
    db = _small_store(tmp_path)
    os.chmod(tmp_path, 0o555)
    try:
        with pytest.raises(StoreError, match="read-only folder"):
            Store.open(db)
    finally:
        os.chmod(tmp_path, 0o755)
