"""Result files that are Git LFS pointers: a clone made without ``git lfs`` holds, in place of each results and
samples file, a three-line text file (``version https://git-lfs.github.com/spec/v1``, ``oid sha256:...``,
``size N``). Public lm-eval result repositories keep their ``samples_*.jsonl`` (and some their ``results_*.json``)
in LFS. Ingest skipped them as "not valid JSON (Expecting value: line 1 column 1)", "line 1 is not JSON" or, for a
CSV or Parquet table, with no reason at all; now the skip says the file is an LFS pointer and how to fetch it.
"""

from __future__ import annotations

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.ingest_read import lfs_pointer_reason

POINTER = (b"version https://git-lfs.github.com/spec/v1\n"
           b"oid sha256:" + b"0123456789abcdef" * 4 + b"\n"
           b"size 286539\n")


def test_lfs_pointers_are_skipped_with_the_reason_and_how_to_fetch_them(tmp_path):
    run = tmp_path / "org__model"
    run.mkdir()
    names = ["results_2025-01-25T04-48-43.622918.json", "samples_leaderboard_bbh_navigate_2025-01-25T04-48-43.622918.jsonl",
             "leaderboard.csv", "items.parquet"]
    for name in names:
        (run / name).write_bytes(POINTER)
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [tmp_path], show_progress=False)
    skipped = {f.path.rsplit("/", 1)[-1]: f.reason for f in rep.by_status("skipped")}
    assert sorted(skipped) == sorted(names)
    for name, reason in skipped.items():
        assert "a Git LFS pointer, not the file: its content of 286,539 bytes was never downloaded" in reason, name
        assert "git lfs pull" in reason


def test_only_a_pointer_is_called_one():
    assert lfs_pointer_reason(POINTER).startswith("a Git LFS pointer")
    assert lfs_pointer_reason(b'{"results": {}}') == ""
    assert lfs_pointer_reason(b"version https://git-lfs.github.com/spec/v1\n").endswith("(run 'git lfs pull' in the "
                                                                                         "repository it came from)")
