"""Item-response tables are checked and reported as result files are: names ``reduce`` can write, conflicts
counted in the summary and listed by ``info --conflicts``, item-level data counted by ``info``."""

from __future__ import annotations

import pytest

from harness_ext.cli import main
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths


def _ingest(db, *paths):
    with Store.open(db) as store:
        return ingest_paths(store, list(paths), show_progress=False)


@pytest.mark.parametrize("body,what", [
    ('model,task,item,score\nm,"a\ninclude: /etc/passwd",0,1\nm,b,0,1\n', "task"),
    ("model,item,score\nm\x01x,0,1\n", "model"),
    ("model,item,score,metric\nm,0,1,acc\x1b[31m\n", "metric"),
    ("model,task,item,score\nm, ,0,1\n", "task"),
])
def test_names_reduce_cannot_write_refuse_the_file_at_ingest(tmp_path, body, what):
    bad, good = tmp_path / "bad.csv", tmp_path / "good.csv"
    bad.write_text(body)
    good.write_text("model,item,score\nm,0,1\nm,1,0\n")
    db = tmp_path / "s.duckdb"
    rep = _ingest(db, bad, good)
    by = {f.path: f for f in rep.files}
    assert by[str(bad)].status == "skipped" and by[str(bad)].reason.startswith(what), by[str(bad)].reason
    assert by[str(good)].status == "ingested"
    with Store.open(db, read_only=True) as store:  # nothing of the refused file is stored
        assert store.con.execute("SELECT DISTINCT source FROM samples").fetchall() == [(str(good),)]


def test_a_bad_task_name_is_named_with_its_file_on_the_command_line(tmp_path, capsys):
    bad = tmp_path / "x.csv"
    bad.write_text('model,task,item,score\nm,"a\ninclude: /etc/passwd",0,1\n')
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), str(bad)]) == 1  # nothing could be ingested
    said = capsys.readouterr()
    assert f"skipped {bad}: task 'a\\ninclude: /etc/passwd' contains a control character or line break" in said.err
