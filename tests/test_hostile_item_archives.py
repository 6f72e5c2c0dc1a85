"""An Inspect ``.eval`` archive or a HELM run directory is read twice, for its run's results and for its item scores.
When the item reader refuses a hostile file (a member named ``samples/../../evil.json``, a per-instance entry without
an id), its results are already stored: ingest said "skipped PATH", while the store held the file's result
(benchmarks/HISTORY.md, the fourth red-team pass). The line now says what was skipped. Composed values on the real
``inspect_evals/popularity`` log and the real HELM babi_qa run of tests/fixtures."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

from harness_ext.cli import main
from harness_ext.store.db import Store

FIX = Path(__file__).parent / "fixtures"
LOG = FIX / "inspect" / "samples" / "2025-05-12T20-28-13-04-00_popularity_gpt-4o-mini.json"
RUN = FIX / "helm_instances" / "babi_qa_task15"


def _eval_archive(path: Path, extra: str) -> None:
    """The real log as an ``.eval`` archive (header.json, one member per sample) with one more member ``extra``."""
    doc = dict(json.loads(LOG.read_text()), status="success")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", json.dumps({k: v for k, v in doc.items() if k != "samples"}))
        for s in doc["samples"]:
            z.writestr(f"samples/{s['id']}_epoch_1.json", json.dumps(s))
        z.writestr(extra, "{}")


def _ingest(tmp_path, folder, capsys) -> tuple:
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(folder)]) == 0
    captured = capsys.readouterr()
    with Store.open(db, read_only=True) as store:
        models = [m for (m,) in store.con.execute("SELECT name FROM models").fetchall()]
    return captured.out + captured.err, models


def test_an_archive_whose_items_are_refused_says_its_results_were_stored(tmp_path, capsys):
    folder = tmp_path / "logs"
    folder.mkdir()
    _eval_archive(folder / "popularity.eval", "samples/../../evil.json")
    text, models = _ingest(tmp_path, folder, capsys)
    assert models == ["openai/gpt-4o-mini"]  # the header's result is stored
    assert "skipped the item scores of" in text and "(its results were stored)" in text
    assert "names a path outside the archive's samples/ folder" in text
    assert f"skipped {folder / 'popularity.eval'}:" not in text
    assert not (tmp_path / "evil.json").exists()


def test_a_helm_run_whose_items_are_refused_says_its_results_were_stored(tmp_path, capsys):
    run = tmp_path / "runs" / "babi"
    shutil.copytree(RUN, run)
    doc = json.loads((run / "per_instance_stats.json").read_text())
    del doc[3]["instance_id"]
    (run / "per_instance_stats.json").write_text(json.dumps(doc))
    text, models = _ingest(tmp_path, tmp_path / "runs", capsys)
    assert len(models) == 1
    assert "skipped the item scores of" in text and "entry 3 has no instance_id" in text


def test_a_file_refused_whole_is_still_skipped(tmp_path, capsys):
    folder = tmp_path / "logs"
    folder.mkdir()
    doc = dict(json.loads(LOG.read_text()), status="success")
    doc["samples"][0]["id"] = {"a": 1}
    (folder / "popularity.json").write_text(json.dumps(doc))
    text, _ = _ingest(tmp_path, folder, capsys)
    assert "is not an integer or text" in text  # the item reader's reason, with the file named


def test_a_helm_instance_id_that_is_no_text_is_refused_naming_the_entry(tmp_path, capsys):
    """HELM writes ``"id123"``; a null, list, mapping or float id was hashed into an item number without a word."""
    from harness_ext.adapters.helm_instances import read_run_instances
    from harness_ext.errors import IngestError
    import pytest

    for bad in (None, [1, 2], {"a": 1}, 1.5, True):
        run = tmp_path / f"r{len(list(tmp_path.iterdir()))}"
        shutil.copytree(RUN, run)
        doc = json.loads((run / "per_instance_stats.json").read_text())
        doc[2]["instance_id"] = bad
        (run / "per_instance_stats.json").write_text(json.dumps(doc))
        with pytest.raises(IngestError, match=r"entry 2: instance_id .* is not text or a whole number"):
            read_run_instances(run)
    assert len(read_run_instances(RUN).frame) == 40  # the real run as before
