"""Damaged files and odd paths (issue 19 items 1, 4, 6): each is skipped with a per-path reason,
nothing else is lost, and no path blocks or crashes the ingest."""

from __future__ import annotations

import os
import signal
import socket
from pathlib import Path

import pytest

from harness_ext.store.ingest import ingest_paths
from harness_ext.store.db import Store

FIX = Path(__file__).parent / "fixtures"
GOOD_CSV = "model,dataset,value\nm1,d1,0.5\nm2,d1,0.25\n"


@pytest.fixture
def alarm():
    """Fail instead of hanging if something blocks (a FIFO read would block forever)."""
    def handler(*_):
        raise TimeoutError("ingest blocked")

    old = signal.signal(signal.SIGALRM, handler)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _ingest(paths, adapter=None):
    with Store.open(":memory:") as s:
        report = ingest_paths(s, paths, adapter=adapter, show_progress=False)
        return report, s.counts()


def _reasons(report):
    return {Path(f.path).name: (f.status, f.reason) for f in report.files}


def test_special_files_are_skipped_even_when_named_explicitly(tmp_path, alarm):
    good = tmp_path / "good.csv"
    good.write_text(GOOD_CSV)
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    sock_path = tmp_path / "sock.json"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    try:
        for forced in (None, "csv"):
            report, counts = _ingest([fifo, sock_path, "/dev/zero", "/dev/null", good], adapter=forced)
            r = _reasons(report)
            assert r["fifo.csv"] == ("skipped", "not a regular file (a FIFO): not read")
            assert r["sock.json"] == ("skipped", "not a regular file (a socket): not read")
            assert r["zero"][0] == "skipped" and "a device" in r["zero"][1]
            assert r["good.csv"][0] == "ingested" and counts["results"] == 2
        report, _ = _ingest([tmp_path])  # and when met while walking a directory
        r = _reasons(report)
        assert r["fifo.csv"][0] == "skipped" and r["sock.json"][0] == "skipped" and r["good.csv"][0] == "ingested"
    finally:
        sock.close()


def test_symlink_loops_and_dangling_links(tmp_path, alarm):
    d = tmp_path / "d"
    d.mkdir()
    (d / "good.csv").write_text(GOOD_CSV)
    (d / "loop.json").symlink_to(d / "loop.json")
    (d / "a.json").symlink_to(d / "b.json")
    (d / "b.json").symlink_to(d / "a.json")
    (d / "gone.csv").symlink_to(tmp_path / "nowhere.csv")
    (d / "up").symlink_to(d)  # a directory link back up: not followed
    report, counts = _ingest([d, d / "loop.json"])
    r = _reasons(report)
    assert r["loop.json"] == ("skipped", "symlink loop") and r["a.json"] == ("skipped", "symlink loop")
    assert r["gone.csv"] == ("skipped", "broken symlink")
    assert r["good.csv"][0] == "ingested" and counts["results"] == 2
    assert len(report.files) == 6


def test_a_file_name_that_is_not_utf8_gets_that_reason(tmp_path):
    bad = os.path.join(os.fsencode(tmp_path), b"caf\xe9.csv")
    with open(bad, "w") as fh:
        fh.write(GOOD_CSV)
    (tmp_path / "ok.csv").write_text(GOOD_CSV.replace("m1", "m3"))
    report, counts = _ingest([tmp_path])
    (skipped,) = report.by_status("skipped")
    assert skipped.reason == "file name is not valid UTF-8" and "caf\\xe9.csv" in skipped.path
    assert counts["results"] == 2


def test_file_size_is_checked_before_reading(tmp_path, monkeypatch):
    p = tmp_path / "big.csv"
    p.write_text(GOOD_CSV)
    monkeypatch.setenv("HARNESS_EXT_MAX_FILE_BYTES", "10")
    report, counts = _ingest([p])
    assert report.files[0].status == "skipped" and "above the 10-byte limit" in report.files[0].reason


# -- a faulty adapter fails only its own file ---------------------------------------------------------
def _fake_adapter(monkeypatch, read):
    import harness_ext.store.ingest as ingest_mod
    from harness_ext.types import Adapter

    real = ingest_mod.get_registrations

    def regs(kind, pm=None):
        out = dict(real(kind, pm))
        if kind == "adapters":
            fake = Adapter(name="fake", can_handle=lambda src: src.path.suffix == ".fake", read=read)
            fake.source = "fake (harness-ext-fake)"
            out["fake"] = fake
        return out

    monkeypatch.setattr(ingest_mod, "get_registrations", regs)


@pytest.mark.parametrize("read, match", [
    (lambda src: (_ for _ in ()).throw(RuntimeError("plugin bug")), "adapter fake [fake (harness-ext-fake)] failed: RuntimeError: plugin bug"),
    (lambda src: [{"model": "m", "dataset": "d", "value": 0.5}], "adapter fake [fake (harness-ext-fake)] yielded dict, not ResultRecord"),
    (lambda src: [None], "yielded NoneType"),
    (lambda src: (_ for _ in ()).throw(MemoryError()), "too large to read in memory"),
    (lambda src: 5, "TypeError"),
])
def test_an_adapter_that_raises_or_yields_the_wrong_type_fails_only_its_file(tmp_path, monkeypatch, read, match):
    _fake_adapter(monkeypatch, read)
    (tmp_path / "a_good.csv").write_text(GOOD_CSV)
    (tmp_path / "b_bad.fake").write_text("x")
    (tmp_path / "c_good.csv").write_text(GOOD_CSV.replace("m1", "m9"))
    report, counts = _ingest([tmp_path / "a_good.csv", tmp_path / "b_bad.fake", tmp_path / "c_good.csv"])
    r = _reasons(report)
    assert r["b_bad.fake"][0] == "skipped" and match in r["b_bad.fake"][1], r
    assert r["a_good.csv"][0] == r["c_good.csv"][0] == "ingested" and counts["results"] == 4


# -- completeness and duplicates ----------------------------------------------------------------------
TSML = "Resamples:,0,1,2\nACSF1,0.64,0.56,0.49\nAdiac,0.6,0.61,0.62\n"


@pytest.mark.parametrize("text, match", [
    (TSML[:-6], "last line has no line break"),
    (TSML[:-9] + "\n", "2 of 3 resamples"),
    (TSML.replace("0.61", ""), "2 of 3 resamples"),
    (TSML.replace("0.61", "NaN"), "2 of 3 resamples"),
    (TSML + TSML, "second header"),
    (TSML + "ACSF1,0.1,0.2,0.3\n", "dataset 'ACSF1' again"),
])
def test_tsml_files_must_be_complete(tmp_path, text, match):
    p = tmp_path / "DTW_accuracy.csv"
    p.write_text(text)
    report, counts = _ingest([p])
    assert report.files[0].status == "skipped" and match in report.files[0].reason, report.files[0]
    assert counts["results"] == 0


def test_csv_duplicates_within_a_file_are_stored_and_reported_like_conflicts(tmp_path):
    from harness_ext.cli import main

    p = tmp_path / "dup.csv"
    p.write_text("model,dataset,value\nm1,d1,0.5\nm1,d1,0.7\nm2,d1,0.25\nm2,d1,0.25\n")
    db = tmp_path / "s.duckdb"
    with Store.open(db) as s:
        report = ingest_paths(s, [p], show_progress=False)
        (f,) = report.files
        assert f.status == "ingested" and len(f.conflicts) == 1
        c = f.conflicts[0]
        assert (c.model, c.stored_value, c.new_value) == ("m1", 0.5, 0.7)
        conf = s.conflicts()
        assert sorted(conf["value"]) == [0.5, 0.7] and set(conf["source"]) == {str(p)}
        assert s.counts()["conflicts"] == 1
    assert main(["info", "--db", str(db), "--conflicts"]) == 0
