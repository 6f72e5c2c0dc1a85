"""An item table that names no metric: its 0/1 scores are stored as ``acc``, and ``ingest`` and ``info`` say so.

The name stays ``acc`` (lm-eval's multiple-choice metric, which ``reduce --items`` and ``predict`` match); what
changes is that a user is told the name is the reader's, not the file's. The real case is a shared HELM Lite table
(``items/helm_lite/gsm.parquet``: long Parquet ``model, item, score``, 0/1 under HELM's
``final_number_exact_match``, which the file does not name). The small tables below are composed in the tests.
"""

from __future__ import annotations

import json
import shutil

import pytest

from harness_ext.cli import main
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.item_tables import item_rows

from conftest import SHARED_DATA, require

GSM = SHARED_DATA / "items" / "helm_lite" / "gsm.parquet"


def _ingest(db, *paths):
    with Store.open(db) as store:
        return ingest_paths(store, list(paths), show_progress=False)


def _info(db, tmp_path, capsys) -> tuple:
    """``(printed text, item_notes of --json)`` of ``harness-ext info``."""
    out = tmp_path / "info.json"
    assert main(["info", "--db", str(db), "--json", str(out)]) == 0
    return capsys.readouterr().out, json.loads(out.read_text())["summary"].get("item_notes", [])


@pytest.mark.slow
def test_shared_helm_table_without_a_metric_is_noted_then_named_by_its_sidecar(tmp_path, capsys):
    """Copied so a sidecar can be put beside it (the shared folder is read-only); the sidecar is composed here."""
    folder = tmp_path / "helm_lite"
    folder.mkdir()
    table = folder / "gsm.parquet"
    shutil.copyfile(require(GSM), table)
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(table), "--json", str(tmp_path / "ingest.json")]) == 0
    err = capsys.readouterr().err
    want = ("no metric named (no metric column or sidecar metric:): its 83,000 0/1 scores stored as acc; a metric "
            "column or the sidecar's items: block names the file's own")
    assert f"note: {table}: {want}" in err
    (f,) = json.loads((tmp_path / "ingest.json").read_text())["tables"]["files"]
    assert f["n_samples"] == 83_000 and want in f["notes"]
    assert set(_rows(db)["metric"]) == {"acc"}  # the stored name is unchanged: manifests and lm-eval's --samples
    out, notes = _info(db, tmp_path, capsys)
    said = (f"1 item table names no metric ({table}): 83,000 0/1 scores stored as acc, the reader's name, not the "
            "file's (a metric column or the sidecar's items: block names it; ingest the file again)")
    assert notes == [said] and f"note: {said}" in out

    # Named by its sidecar, the file is read again in place of the reading that named nothing: no note is left.
    (folder / "gsm.parquet.meta.yaml").write_text("items:\n  metric: final_number_exact_match\n")
    rep = _ingest(db, table)
    assert rep.files[0].status == "ingested" and not any("no metric named" in n for n in rep.files[0].notes)
    assert set(_rows(db)["metric"]) == {"final_number_exact_match"} and len(_rows(db)) == 83_000
    out, notes = _info(db, tmp_path, capsys)
    assert notes == [] and "names no metric" not in out


def _metric_notes(rep) -> list:
    """A file's notes but the one on its benchmark (a table naming none is stored under its folder's name)."""
    return [n for n in rep.files[0].notes if not n.startswith("no benchmark named")]


def _rows(db):
    with Store.open(db, read_only=True) as store:
        return item_rows(store)


@pytest.mark.parametrize("text, sidecar, metric", [
    ("model,item,score,metric\nm,0,1,exact_match\nm,1,0,exact_match\n", None, "exact_match"),
    ("model,item,score\nm,0,1\nm,1,0\n", "items: {metric: em}\n", "em"),
    ("model,item,score\nm,0,0.5\nm,1,0.25\n", None, "score"),  # graded: the neutral name, nothing to say
])
def test_a_named_metric_or_graded_scores_get_no_note(tmp_path, capsys, text, sidecar, metric):
    """Tables composed here: a metric column, a sidecar's metric, graded scores without a metric."""
    p = tmp_path / "t.csv"
    p.write_text(text)
    if sidecar:
        (tmp_path / "t.csv.meta.yaml").write_text(sidecar)
    db = tmp_path / "s.duckdb"
    rep = _ingest(db, p)
    assert rep.files[0].status == "ingested" and _metric_notes(rep) == []
    assert set(_rows(db)["metric"]) == {metric}
    assert _info(db, tmp_path, capsys)[1] == []


def test_a_binary_table_without_a_metric_counts_its_scores(tmp_path):
    """Composed: one model's three 0/1 scores, one of them missing (not stored, not counted)."""
    p = tmp_path / "t.csv"
    p.write_text("model,item,score\nm,0,1\nm,1,0\nm,2,\n")
    rep = _ingest(tmp_path / "s.duckdb", p)
    assert _metric_notes(rep) == ["1 missing scores (no row stored)",
                                  "no metric named (no metric column or sidecar metric:): its 2 0/1 scores stored "
                                  "as acc; a metric column or the sidecar's items: block names the file's own"]


def test_a_store_made_before_the_column_says_nothing_and_takes_tables(tmp_path, capsys):
    """Composed table; the column dropped to stand for a store written before it."""
    p = tmp_path / "t.csv"
    p.write_text("model,item,score\nm,0,1\nm,1,0\n")
    db = tmp_path / "s.duckdb"
    _ingest(db, p)
    with Store.open(db) as store:
        store.con.execute("ALTER TABLE sample_sources DROP COLUMN assumed_metric")
    assert _info(db, tmp_path, capsys)[1] == []
    q = tmp_path / "u.csv"
    q.write_text("model,item,score\nm,0,0\nm,1,1\n")
    assert _ingest(db, q).files[0].status == "ingested"  # the column is added back by the next item ingest
    notes = _info(db, tmp_path, capsys)[1]
    assert len(notes) == 1 and notes[0].startswith(f"1 item table names no metric ({q}): 2 0/1 scores stored as acc")
