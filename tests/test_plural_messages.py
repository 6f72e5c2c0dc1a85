"""Counts in what the commands print take the noun's singular at 1: "1 file ingested", never "1 files".

On the committed real HELM Lite GSM8K slice (fixtures/items: 8 models x items 0-39): one file, one item file, one
task, as ``ingest`` and ``info`` count them.
"""

from __future__ import annotations

from pathlib import Path

from harness_ext.cli import main
from harness_ext.report import plural

GSM = Path(__file__).resolve().parent / "fixtures" / "items" / "gsm_slice.parquet"


def test_plural_takes_the_singular_at_one_only():
    assert plural(1, "file") == "1 file"
    assert [plural(n, "item score") for n in (0, 2, 1250)] == ["0 item scores", "2 item scores", "1,250 item scores"]
    assert plural(1, "entry", "entries") == "1 entry" and plural(3, "entry", "entries") == "3 entries"


def test_ingest_and_info_count_one_file_and_one_task_in_the_singular(tmp_path, capsys):
    folder = tmp_path / "gsm"
    folder.mkdir()
    for f in (GSM, GSM.with_name(GSM.name + ".meta.yaml")):
        (folder / f.name).write_bytes(f.read_bytes())
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 file ingested (0 results, 320 item scores from 1 item file), 0 unchanged (already in "
                          "the store), 0 skipped, 0 conflicting values"), out
    assert main(["info", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "item level: 1 item source, 8 item models, 1 item task, 320 item scores, 0 item conflicts" in out, out
    assert "1 files" not in out and "1 item tasks" not in out
