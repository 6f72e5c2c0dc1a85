"""Writers wait, readers read (issue 19 item 7): a second writer waits for the lock with a message up to
--lock-timeout, then fails listing what it did not ingest; info and matrix work while an ingest runs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness_ext.store.ingest import ingest_paths
from harness_ext.store.db import Store

FIX = Path(__file__).parent / "fixtures"
ENV = {**os.environ, "HARNESS_EXT_NO_PROGRESS": "1"}


def _popen(*args):
    return subprocess.Popen([sys.executable, "-m", "harness_ext", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV)


@pytest.mark.slow
def test_a_second_writer_waits_for_the_lock_and_then_ingests(tmp_path):
    db = tmp_path / "s.duckdb"
    holder = Store.open(db)
    ingest_paths(holder, [FIX / "bigbench"], show_progress=False)
    holder.acquire()  # ingest_paths leaves the store open; keep holding the lock
    proc = _popen("ingest", "-q", "--db", db, "--lock-timeout", "120", FIX / "open_llm_leaderboard")
    deadline = time.time() + 60
    err = ""
    while time.time() < deadline and "waiting up to" not in err:
        time.sleep(0.5)
        err = _peek(proc)
    holder.close()
    out, rest = proc.communicate(timeout=120)
    assert proc.returncode == 0, rest
    assert "is locked by another process; waiting up to 120 s" in err + rest and "Traceback" not in rest
    with Store.open(db, read_only=True) as s:
        assert s.counts()["sources"] == 14


def _peek(proc) -> str:
    """Whatever the process wrote to stderr so far, without blocking (the wait message has no newline)."""
    import fcntl

    fd = proc.stderr.fileno()
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    try:
        chunk = os.read(fd, 65536)
    except BlockingIOError:
        chunk = b""
    _peek.buf = getattr(_peek, "buf", "") + chunk.decode(errors="replace")
    return _peek.buf


def test_a_writer_past_the_timeout_fails_listing_what_it_did_not_ingest(tmp_path):
    db = tmp_path / "s.duckdb"
    with Store.open(db) as holder:
        ingest_paths(holder, [FIX / "bigbench"], show_progress=False)
        holder.acquire()
        r = subprocess.run([sys.executable, "-m", "harness_ext", "ingest", "--db", str(db), "--lock-timeout", "1",
                            str(FIX / "open_llm_leaderboard")], capture_output=True, text=True, env=ENV, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "locked by another process" in r.stderr and "Not ingested" in r.stderr
    assert str(FIX / "open_llm_leaderboard") in r.stderr


@pytest.mark.slow
def test_readers_work_while_an_ingest_runs(tmp_path):
    """info and matrix during a multi-batch ingest: every read succeeds (between batches, or after a short wait)."""
    import harness_ext.store.ingest as ingest_mod

    src = tmp_path / "many"
    src.mkdir()
    for i in range(600):
        (src / f"f{i:04d}.csv").write_text("model,dataset,value\n" + "".join(f"m{i},d{j},{(i * j) % 97 / 97:.4f}\n"
                                                                            for j in range(5)))
    db = tmp_path / "s.duckdb"
    with Store.open(db) as s:  # a store readers can open from the start
        ingest_paths(s, [FIX / "bigbench"], show_progress=False)
    env = {**ENV, "HARNESS_EXT_BATCH_FILES": "50"}
    writer = subprocess.Popen([sys.executable, "-m", "harness_ext", "ingest", "-q", "--db", str(db), str(src)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    reads = []
    while writer.poll() is None and len(reads) < 8:
        for cmd in (["info"], ["matrix", "--benchmark", "bigbench"]):
            r = subprocess.run([sys.executable, "-m", "harness_ext", *cmd, "--db", str(db), "--lock-timeout", "120"],
                               capture_output=True, text=True, env=ENV, timeout=300)
            reads.append((cmd[0], r.returncode, r.stderr[-300:]))
    out, err = writer.communicate(timeout=300)
    assert writer.returncode == 0, err
    assert reads and all(rc == 0 for _, rc, _ in reads), reads
    with Store.open(db, read_only=True) as s:
        assert s.counts()["sources"] == 12 + 600
    assert ingest_mod.BATCH_FILES != 50  # the environment override is the subprocess's only


def test_a_read_of_a_store_in_memory_says_it_is_empty(tmp_path):
    """``reduce --db :memory:`` said "not a harness-ext store (or corrupt)": a store in memory is new and empty."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "harness_ext", "reduce", "--db", ":memory:"], capture_output=True,
                         text=True, cwd=tmp_path)
    assert out.returncode != 0 and "no store at :memory:" in out.stderr and "corrupt" not in out.stderr


def test_a_store_another_process_is_creating_is_waited_for_not_refused_as_empty(tmp_path):
    """Two ingests started at once: one has created the file, DuckDB has not yet written its header, and the other
    finds an empty file. It reads the file again for a moment before refusing it."""
    import shutil
    import threading

    made = tmp_path / "made.duckdb"
    Store.open(made).close()
    db = tmp_path / "s.duckdb"
    db.write_bytes(b"")
    timer = threading.Timer(0.3, lambda: shutil.copyfile(made, db))
    timer.start()
    try:
        Store.open(db).close()
    finally:
        timer.join()


def test_an_empty_file_that_stays_empty_is_still_refused(tmp_path):
    from harness_ext.errors import StoreError

    db = tmp_path / "empty.duckdb"
    db.write_bytes(b"")
    with pytest.raises(StoreError, match="an empty file"):
        Store.open(db)
