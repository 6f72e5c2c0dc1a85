"""The store's item id map: one number per (benchmark, task, item id) across every item table of the task.

A task's text ids numbered by position were numbered per file: two files of one task (one per model) listing
the same ids in other orders gave one question two numbers and two questions one number, and the scores of
different questions were read as one item's. The map keeps each id's number; a later file reuses it.
"""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from harness_ext.cli import main
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.item_tables import item_rows


def _table(path, model, ids, scores=None, task="t"):
    """A long CSV or Parquet table of one model on ``ids`` (in that order), task ``task``, benchmark ``b``, metric
    ``acc`` named in its sidecar (so the only notes are the ids')."""
    scores = scores if scores is not None else [float(k % 2) for k in range(len(ids))]
    df = pd.DataFrame({"model": model, "item": ids, "score": scores})
    if path.suffix == ".parquet":
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False)
    (path.parent / f"{path.name}.meta.yaml").write_text(f"benchmark: b\nitems:\n  task: {task}\n  metric: acc\n")
    return path


def _ingest(db, *paths):
    with Store.open(db) as store:
        rep = ingest_paths(store, [str(p) for p in paths], show_progress=False)
    return {f.path: f for f in rep.files}


def _map(db) -> dict:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT item, doc_id FROM item_ids WHERE task = 't'").fetchall()
    return {item: int(d) for item, d in rows}


def _numbers(db, model) -> dict:
    """``{doc_id: score}`` of one model."""
    with Store.open(db, read_only=True) as store:
        rows = item_rows(store)
    rows = rows[rows["model"] == model]
    return dict(zip(rows["doc_id"].astype(int), rows["value"]))


def _notes(report) -> str:
    return " | ".join(report.notes)


def test_a_later_file_keeps_the_numbers_and_appends_new_ids(tmp_path):
    db = tmp_path / "s.duckdb"
    a = _table(tmp_path / "a.csv", "m1", ["q-a", "q-b", "q-c"], [1.0, 0.0, 1.0])
    b = _table(tmp_path / "b.csv", "m2", ["q-d", "q-c", "q-a"], [1.0, 0.0, 0.0])
    _ingest(db, a)
    rep = _ingest(db, b)[str(b)]
    assert _map(db) == {"q-a": 0, "q-b": 1, "q-c": 2, "q-d": 3}
    assert _numbers(db, "m2") == {3: 1.0, 2: 0.0, 0: 0.0}
    notes = _notes(rep)
    assert "2 of 2 item ids of task 't' that earlier files of 'b' already numbered keep those numbers" in notes
    assert "1 item ids of task 't' new to 'b' numbered after the ids earlier files numbered (3 to 3, after 3)" in notes


def test_reingesting_changes_nothing_and_a_refused_file_leaves_the_map(tmp_path, monkeypatch):
    db = tmp_path / "s.duckdb"
    a = _table(tmp_path / "a.csv", "m1", ["q-a", "q-b", "q-c"])
    _ingest(db, a)
    before = _map(db)
    assert _ingest(db, a)[str(a)].status == "unchanged" and _map(db) == before
    # The same ids in a changed file (another model's scores): the same numbers, nothing added to the map.
    c = _table(tmp_path / "c.csv", "m3", ["q-c", "q-b", "q-a"])
    assert _ingest(db, c)[str(c)].status == "ingested" and _map(db) == before
    # A file the store refuses while writing its rows: its new ids are not in the map either.
    real = Store.transaction

    class Refusing:
        def __init__(self, con):
            self.con = con

        def execute(self, sql, *args):
            if sql.startswith("INSERT INTO samples"):
                raise duckdb.ConstraintException("refused for the test")
            return self.con.execute(sql, *args)

    def transaction(self, **frames):
        from contextlib import contextmanager

        @contextmanager
        def block():
            with real(self, **frames) as con:
                yield Refusing(con)
        return block()

    monkeypatch.setattr(Store, "transaction", transaction)
    d = _table(tmp_path / "d.csv", "m4", ["q-new", "q-a"])
    got = _ingest(db, d)[str(d)]
    assert got.status == "skipped" and "refused for the test" in got.reason
    monkeypatch.undo()
    assert _map(db) == before
    assert _ingest(db, d)[str(d)].status == "ingested" and _map(db) == {**before, "q-new": 3}


def test_ids_that_kept_their_numbers_keep_them_in_a_file_numbered_by_position(tmp_path):
    """File 1 keeps its ids' numbers (id3, id5, id9); file 2 needs positions (it has q-x): its id3 is item 3."""
    db = tmp_path / "s.duckdb"
    a = _table(tmp_path / "a.csv", "m1", ["id3", "id5", "id9"], [1.0, 1.0, 0.0])
    b = _table(tmp_path / "b.csv", "m2", ["id5", "q-x", "id3"], [0.0, 1.0, 1.0])
    assert _notes(_ingest(db, a)[str(a)]) == ""
    notes = _notes(_ingest(db, b)[str(b)])
    assert _map(db) == {"id3": 3, "id5": 5, "id9": 9, "q-x": 10}
    assert _numbers(db, "m2") == {5: 0.0, 10: 1.0, 3: 1.0}
    assert "3 item ids of task 't' numbered from 0 in order of first appearance" in notes  # as the file alone reads
    assert "2 of 2 item ids of task 't' that earlier files of 'b' already numbered keep those numbers" in notes
    assert "1 item ids of task 't' new to 'b' numbered after" in notes


def test_own_numbers_taken_by_other_ids_are_not_merged(tmp_path):
    """File 1 is numbered by position (q-a 0, q-b 1); file 2's id0 and id1 would keep 0 and 1 alone: not here."""
    db = tmp_path / "s.duckdb"
    a = _table(tmp_path / "a.csv", "m1", ["q-a", "q-b"], [1.0, 0.0])
    b = _table(tmp_path / "b.csv", "m1", ["id0", "id1", "id7"], [0.0, 1.0, 1.0])
    _ingest(db, a)
    rep = _ingest(db, b)[str(b)]
    assert _map(db) == {"q-a": 0, "q-b": 1, "id0": 2, "id1": 3, "id7": 4}
    assert _numbers(db, "m1") == {0: 1.0, 1: 0.0, 2: 0.0, 3: 1.0, 4: 1.0}
    assert rep.item_conflicts == 0
    assert ("3 item ids of task 't' new to 'b' numbered after the ids earlier files numbered, not by their own "
            "numbers: other ids of the task already have some of them") in _notes(rep)


def test_whole_numbers_are_one_item_however_written(tmp_path):
    """Parquet int ids, then CSV ids written as 7.0: one item each, no note, the numbers themselves."""
    db = tmp_path / "s.duckdb"
    a = tmp_path / "a.parquet"
    pd.DataFrame({"model": "m1", "item": pd.array([7, 2, 11], dtype="int32"), "score": [1.0, 0.0, 1.0]}).to_parquet(a)
    (tmp_path / "a.parquet.meta.yaml").write_text("benchmark: b\nitems:\n  task: t\n")
    b = _table(tmp_path / "b.csv", "m2", ["11.0", "7.0", "2.0", "3.0"], [0.0, 0.0, 1.0, 1.0])
    _ingest(db, a)
    rep = _ingest(db, b)[str(b)]
    assert _map(db) == {"7": 7, "2": 2, "11": 11, "3": 3} and _notes(rep) == ""
    assert _numbers(db, "m2") == {11: 0.0, 7: 0.0, 2: 1.0, 3: 1.0}


def test_tasks_and_benchmarks_have_their_own_maps(tmp_path):
    db = tmp_path / "s.duckdb"
    a = _table(tmp_path / "a.csv", "m1", ["x", "y"])
    b = _table(tmp_path / "b.csv", "m1", ["y", "x"], task="u")  # another task: its own numbers
    _ingest(db, a, b)
    with duckdb.connect(str(db), read_only=True) as con:
        got = con.execute("SELECT task, item, doc_id FROM item_ids ORDER BY task, doc_id").fetchall()
    assert got == [("t", "x", 0), ("t", "y", 1), ("u", "y", 0), ("u", "x", 1)]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_store_without_the_map_opens_and_takes_files(tmp_path, capsys, suffix):
    """A store written before the map (simulated: the map dropped) is read as it is; the next file of a task
    stored then is numbered as its first, with a note saying its items cannot be matched by id."""
    db = tmp_path / "s.duckdb"
    a = _table(tmp_path / f"a{suffix}", "m1", ["q-a", "q-b", "q-c"])
    _ingest(db, a)
    with duckdb.connect(str(db)) as con:
        con.execute("DROP TABLE item_ids")
    assert main(["info", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "3 item scores" in out
    assert "did not keep item ids" not in out  # one file: its numbers cannot disagree with another's
    b = _table(tmp_path / f"b{suffix}", "m2", ["q-c", "q-a"])
    rep = _ingest(db, b)[str(b)]
    assert rep.status == "ingested" and _map(db) == {"q-c": 0, "q-a": 1}
    assert ("task 't' of 'b' already holds 3 items stored by a version that did not keep item ids") in _notes(rep)
    c = _table(tmp_path / f"c{suffix}", "m3", ["q-a", "q-c"])  # the files after it follow its numbers
    assert "did not keep item ids" not in _notes(_ingest(db, c)[str(c)]) and _numbers(db, "m3") == {1: 0.0, 0: 1.0}
    assert main(["info", "--db", str(db)]) == 0
    assert "did not keep item ids" not in capsys.readouterr().out


def test_info_says_which_ids_the_store_numbered(tmp_path, capsys):
    import json

    from harness_ext.store.item_ids import item_id_map

    db = tmp_path / "s.duckdb"
    a = _table(tmp_path / "a.csv", "m1", ["q-a", "q-b", "q-c"])
    b = _table(tmp_path / "b.csv", "m1", ["id3", "id5"], task="u")  # kept their numbers: not said
    _ingest(db, a, b)
    assert main(["info", "--db", str(db), "--json", str(tmp_path / "i.json")]) == 0
    out = capsys.readouterr().out
    assert "note: 3 item ids of 1 task are not numbers that keep them apart: the store numbered them" in out
    assert json.loads((tmp_path / "i.json").read_text())["summary"]["item_notes"][0].startswith("3 item ids of 1 ")
    with Store.open(db, read_only=True) as store:
        got = item_id_map(store, task="t")
    assert got.to_dict("list") == {"benchmark": ["b"] * 3, "task": ["t"] * 3, "item": ["q-a", "q-b", "q-c"],
                                   "doc_id": [0, 1, 2]}


def test_predict_reads_logs_that_name_items_by_id_as_the_store_numbered_them(tmp_path, capsys):
    """Population: one item table per model, text ids in each model's own order. A new model's Every Eval Ever
    instance file names the items by the same ids: predict reads them as the population's items (the manifest
    keeps each item's id), so with every item logged its estimate is the model's mean over the items."""
    import json

    import numpy as np

    from harness_ext.methods.reduction.item_manifest import decode_ids
    from harness_ext.methods.reduction.item_predict import predict_items
    from harness_ext.methods.reduction.manifest import load_manifest

    rng = np.random.default_rng(1)
    ids = [f"q-{w}" for w in ("ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen", "ibis", "jay", "kit", "lark")]
    folder = tmp_path / "b"
    folder.mkdir()
    for j in range(8):
        order = list(rng.permutation(ids))
        _table(folder / f"m{j}.csv", f"m{j}", order, [float(rng.random() < 0.3 + 0.05 * j) for _ in order])
    db, out = tmp_path / "s.duckdb", tmp_path / "out"
    assert main(["ingest", "--db", str(db), "-q", str(folder)]) == 0
    assert main(["reduce", "--db", str(db), "--items", "5", "--item-estimator", "sample_mean", "--out", str(out),
                 "--no-plot"]) == 0
    manifest = load_manifest(out)
    block = manifest["tasks"]["t"]
    assert block["item_ids"] == sorted(_map(db))  # listed by id: the store's numbers follow the ingest order,
    assert decode_ids(block["items"]).tolist() == list(range(len(ids)))  # so the manifest numbers them in id order
    answers = {i: bool(k % 3 == 0) for k, i in enumerate(ids)}
    log = tmp_path / "new" / "t_samples.jsonl"
    log.parent.mkdir()
    lines = [{"schema_version": "0.2.1", "model_id": "new/m", "evaluation_name": "t", "sample_id": i,
              "sample_hash": "h", "evaluation": {"score": float(a), "is_correct": a}} for i, a in answers.items()]
    lines.append({**lines[0], "sample_id": "q-not-an-item"})
    log.write_text("".join(json.dumps(x) + "\n" for x in lines))
    pred = predict_items(manifest, [log.parent])
    [row] = pred.table.to_dict("records")
    assert row["observed"] and row["n_used"] == 12 and row["score"] == np.mean(list(answers.values()))
    want = "t: 1 logged item ids that are not items of the task (or that two of its ids read as) left out (2 scores)"
    assert any(want in w for w in pred.warnings), pred.warnings
    capsys.readouterr()


def test_a_manifest_without_text_ids_is_unchanged_and_bad_item_ids_are_refused(tmp_path):
    from harness_ext.errors import HarnessExtError
    from harness_ext.methods.reduction.item_manifest import validate_item_manifest
    from harness_ext.methods.reduction.manifest import load_manifest

    folder = tmp_path / "b"
    folder.mkdir()
    for j in range(4):
        _table(folder / f"m{j}.csv", f"m{j}", [f"id{k}" for k in range(10)],
               [float((k + j) % 3 == 0) for k in range(10)])
    db, out = tmp_path / "s.duckdb", tmp_path / "out"
    assert main(["ingest", "--db", str(db), "-q", str(folder)]) == 0
    assert main(["reduce", "--db", str(db), "--items", "5", "--item-estimator", "sample_mean", "--out", str(out),
                 "--no-plot"]) == 0
    manifest = load_manifest(out)
    assert "item_ids" not in manifest["tasks"]["t"]  # id0..id9 keep their numbers: nothing to map
    manifest["tasks"]["t"]["item_ids"] = ["x"] * 10
    with pytest.raises(HarnessExtError, match="item_ids must be distinct"):
        validate_item_manifest(manifest)
    manifest["tasks"]["t"]["item_ids"] = ["x"]
    with pytest.raises(HarnessExtError, match="one id .* per item, 10"):
        validate_item_manifest(manifest)


def test_info_names_tasks_of_several_files_stored_before_the_map(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    a = _table(tmp_path / "a.csv", "m1", ["q-a", "q-b"])
    b = _table(tmp_path / "b.csv", "m2", ["q-b", "q-a"])
    c = _table(tmp_path / "c.csv", "m1", ["id3", "id5"], task="u")  # kept its numbers: nothing to say
    d = _table(tmp_path / "d.csv", "m2", ["id5", "id3"], task="u")
    _ingest(db, a, b, c, d)
    with duckdb.connect(str(db)) as con:
        con.execute("DROP TABLE item_ids")
    assert main(["info", "--db", str(db)]) == 0
    assert ("note: 1 task of item tables (b/t) were stored from several files by a version that did not keep item "
            "ids") in capsys.readouterr().out


def test_tables_of_several_tasks_and_ids_beyond_float_precision(tmp_path):
    """A task column: each task's ids follow its own map. Whole-number ids near 2**63 stay exact, and a task with no
    numbers left after them refuses the file, naming it."""
    db = tmp_path / "s.duckdb"
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("model,task,item,score\nm1,A,x,1\nm1,A,y,0\nm1,B,p,1\nm1,B,q,0\nm1,B,r,1\n")
    b.write_text("model,task,item,score\nm2,B,r,0\nm2,A,y,1\nm2,B,p,0\nm2,A,x,0\nm2,B,s,1\n")
    _ingest(db, a, b)
    with Store.open(db, read_only=True) as store:
        rows = item_rows(store)
    got = {(t, d): v for m, t, d, v in zip(rows["model"], rows["task"], rows["doc_id"], rows["value"]) if m == "m2"}
    assert got == {("B", 2): 0.0, ("A", 1): 1.0, ("B", 0): 0.0, ("A", 0): 0.0, ("B", 3): 1.0}
    big = 2 ** 63 - 2
    c, d = tmp_path / "c.parquet", tmp_path / "d.csv"
    pd.DataFrame({"model": "m1", "task": "C", "item": pd.array([big, big - 1], dtype="int64"),
                  "score": [1.0, 0.0]}).to_parquet(c)
    d.write_text(f"model,task,item,score\nm2,C,{big},0\nm2,C,z1,1\nm2,C,z2,1\n")
    rep = _ingest(db, c, d)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT item, doc_id FROM item_ids WHERE task = 'C' ORDER BY doc_id").fetchall() == [
            (str(big - 1), big - 1), (str(big), big)]
    assert rep[str(d)].status == "skipped" and str(d) not in rep[str(d)].reason
    assert "task 'C': no numbers left after item" in rep[str(d)].reason


def test_log_ids_two_items_read_as_one_number_are_not_guessed():
    from harness_ext.methods.reduction.item_manifest import log_numbers
    from harness_ext.store.samples import doc_id

    manifest = {"tasks": {"t": {"items": [[0, 3]], "item_ids": ["id5", "5", "q-x"]}}}
    long = pd.DataFrame({"model": "m", "task": "t", "doc_id": [5, doc_id("q-x"), 5],
                         "metric": "acc", "value": [1.0, 0.0, 1.0], "by_id": [True, True, False]})
    warnings = []
    got = log_numbers(manifest, long, warnings)
    assert got["doc_id"].tolist() == [2, 5]  # q-x is item 2; lm-eval's own document 5 is left as it is
    assert len(warnings) == 1 and "1 logged item ids" in warnings[0]


def test_the_sample_id_reader_is_public_and_the_only_one():
    """``doc_id`` was private (``_doc_id``) yet imported by the HELM adapter, the item manifest and a test: one
    public, documented function now, and no module reaches for the old private name."""
    from pathlib import Path

    from harness_ext.errors import IngestError
    from harness_ext.store.samples import doc_id

    assert doc_id(7) == 7 and doc_id("id147") == 147 and doc_id("dev1") == doc_id("dev1") != 1
    assert 0 <= doc_id("q-x") < 2**63 and "Parameters" in doc_id.__doc__
    with pytest.raises(IngestError, match="outside the 64-bit"):
        doc_id(2**63, "f.json", 3)
    root = Path(__file__).resolve().parents[1]
    old = "_doc" + "_id"  # spelt apart so that this file does not match itself
    users = [p.name for d in ("harness_ext", "adapters", "tests") for p in (root / d).rglob("*.py")
             if f"{old}(" in p.read_text(encoding="utf-8") or f"import {old}" in p.read_text(encoding="utf-8")]
    assert users == []
