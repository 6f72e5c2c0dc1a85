"""Item-response tables are checked and reported as result files are: names ``reduce`` can write, conflicts
counted in the summary and listed by ``info --conflicts``, item-level data counted by ``info``."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from harness_ext.cli import main
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

from conftest import SHARED_DATA

ITEMS = SHARED_DATA / "items"


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


def _flipped_copy(src, dst):
    """``src``'s long table with the first row's 0/1 score flipped."""
    df = pd.read_csv(src) if src.suffix == ".csv" else pd.read_parquet(src)
    df.loc[0, "score"] = 1 - df.loc[0, "score"]
    df.to_parquet(dst, index=False) if dst.suffix == ".parquet" else df.to_csv(dst, index=False)
    return df.loc[0]


def _two_versions(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "t.csv").write_text("model,item,score\nm1,0,1\nm1,1,0\nm2,0,0\nm2,1,1\n")
    row = _flipped_copy(a / "t.csv", b / "t.csv")
    return a / "t.csv", b / "t.csv", row


def test_item_conflicts_are_counted_in_the_summary_and_listed_by_info(tmp_path, capsys):
    first, second, row = _two_versions(tmp_path)
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(first)]) == 0
    assert "conflicting item scores" not in capsys.readouterr().out
    assert main(["ingest", "--db", str(db), str(second), "--json", str(tmp_path / "i.json")]) == 0
    assert "0 conflicting values and 1 conflicting item score" in capsys.readouterr().out
    assert json.loads((tmp_path / "i.json").read_text())["summary"]["n_item_conflicts"] == 1
    assert main(["info", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "item level: 2 item sources, 2 item models, 1 item task, 8 item scores, 1 item conflict" in out
    assert "1 item score disagrees between source files" in out
    assert main(["info", "--db", str(db), "--conflicts", "--json", str(tmp_path / "c.json")]) == 0
    listed = json.loads((tmp_path / "c.json").read_text())["tables"]["item_conflicts"]
    assert [(r["model"], r["item"], r["value"], r["source"]) for r in listed] == [
        (row["model"], 0, 1.0, str(first)), (row["model"], 0, 0.0, str(second))]


def test_info_on_an_items_only_store_counts_the_items(tmp_path, capsys):
    p = tmp_path / "bench" / "t.csv"
    p.parent.mkdir()
    p.write_text("model,task,item,score\nm1,A,0,1\nm1,B,0,0\nm2,A,0,0\nm2,A,1,1\n")
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(p)]) == 0
    assert main(["info", "--db", str(db), "--json", str(tmp_path / "i.json")]) == 0
    counts = json.loads((tmp_path / "i.json").read_text())["summary"]["counts"]
    assert {k: counts[k] for k in counts if k.startswith("item_")} == {
        "item_sources": 1, "item_models": 2, "item_tasks": 2, "item_scores": 4, "item_conflicts": 0}
    out = capsys.readouterr().out
    assert "item-level results:" in out and "bench" in out


def test_info_header_counts_the_datasets_its_rows_count():
    from pathlib import Path

    fixtures = Path(__file__).parent / "fixtures" / "open_llm_leaderboard"
    with Store.open(":memory:") as store:
        ingest_paths(store, [fixtures], show_progress=False)
        n_rows = store.con.execute("SELECT count(*) FROM datasets").fetchone()[0]
        header = store.counts()["datasets"]
        assert header == store.benchmarks()["datasets"].sum() < n_rows  # not the (dataset, metric) pairs


@pytest.mark.skipif(not (ITEMS / "helm_lite" / "gsm.parquet").is_file(), reason="needs ../shared/data/items")
def test_a_modified_copy_of_a_shared_table_shows_its_one_conflict(tmp_path, capsys):
    shared = ITEMS / "helm_lite" / "gsm.parquet"
    copy = tmp_path / "helm_lite" / "gsm.parquet"
    copy.parent.mkdir()
    row = _flipped_copy(shared, copy)
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(shared)]) == 0
    capsys.readouterr()
    assert main(["ingest", "--db", str(db), str(copy)]) == 0
    assert "1 conflicting item score" in capsys.readouterr().out
    with Store.open(db, read_only=True) as store:
        from harness_ext.store.item_info import item_conflicts

        c = item_conflicts(store)
    assert c["model"].tolist() == [row["model"]] * 2 and c["item"].tolist() == [int(row["item"])] * 2
    assert c["source"].tolist() == [str(shared), str(copy)]


@pytest.mark.parametrize("copy_first", [False, True])
def test_item_conflicts_say_which_score_is_used(tmp_path, capsys, copy_first):
    """info --conflicts listed an item's two scores without saying which one reduce --items and predict take: the
    real GSM8K slice of HELM Lite (tests/fixtures/items) and a copy with one score flipped, in either order; the
    first stored is marked used, and it is the score the samples are read with."""
    import shutil

    from pathlib import Path

    from harness_ext.store.samples import prompt_matrix

    real = Path(__file__).parent / "fixtures" / "items" / "gsm_slice.parquet"
    a, b = tmp_path / "real" / "gsm.parquet", tmp_path / "copy" / "gsm.parquet"
    a.parent.mkdir(), b.parent.mkdir()
    shutil.copy(real, a)
    shutil.copy(real.with_name(real.name + ".meta.yaml"), a.with_name(a.name + ".meta.yaml"))
    shutil.copy(real.with_name(real.name + ".meta.yaml"), b.with_name(b.name + ".meta.yaml"))
    row = _flipped_copy(a, b)
    first, second = (b, a) if copy_first else (a, b)
    db = tmp_path / "s.duckdb"
    for p in (first, second):
        assert main(["ingest", "--db", str(db), "-q", str(p)]) == 0
    assert main(["info", "--db", str(db), "--conflicts", "--json", str(tmp_path / "c.json")]) == 0
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["summary"]["counts"]["item_conflicts"] == 1
    listed = doc["tables"]["item_conflicts"]
    first_value = float(row["score"]) if copy_first else 1 - float(row["score"])
    assert [(r["item"], r["value"], r["source"], r["used"]) for r in listed] == [
        (int(row["item"]), first_value, str(first), "first stored"), (int(row["item"]), 1 - first_value, str(second), "")]
    with Store.open(db, read_only=True) as store:  # the score the item estimates read
        P = prompt_matrix(store, "gsm", "final_number_exact_match")
    assert P.loc[int(row["item"]), row["model"]] == first_value
    capsys.readouterr()
    assert main(["info", "--db", str(db), "--conflicts"]) == 0
    out = capsys.readouterr().out
    assert "item scores that disagree between source files (the first stored is used):" in out
    assert "first stored" in out.split("item scores that disagree")[1]
