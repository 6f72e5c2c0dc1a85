"""Item ids of item-response tables: distinct ids stay distinct items, and the numbers stored are the ones
lm-eval's ``--samples`` gets.

A task's ids keep their numbers only when that keeps them apart (whole numbers, or one prefix and distinct
numbers); otherwise they are numbered by first appearance, with a note. Before, ``dev-0`` and ``test-0`` were
one item (half a table lost as "repeated rows"), ``dev1`` and ``test1`` with different scores refused the file,
and any other text became a 63-bit hash written to ``--samples`` as a document number.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from harness_ext.cli import main
from harness_ext.methods.reduction.item_manifest import decode_ids
from harness_ext.store.item_tables import read_item_table


def _long(path, ids, models=("m1", "m2", "m3"), task=None, score=None):
    rows = [(m, i, float(score(m, k) if score else (k + j) % 2))
            for j, m in enumerate(models) for k, i in enumerate(ids)]
    df = pd.DataFrame(rows, columns=["model", "item", "score"])
    if task is not None:
        df.insert(1, "task", task)
    if path.suffix == ".parquet":
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False)
    return df


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_split_prefixes_are_distinct_items_numbered_by_first_appearance(tmp_path, suffix):
    ids = [f"dev-{k}" for k in range(5)] + [f"test-{k}" for k in range(5)]
    df = _long(tmp_path / f"t{suffix}", ids)
    t = read_item_table(tmp_path / f"t{suffix}")
    assert len(t.frame) == len(df) == 30  # nothing merged away as repeated rows
    assert sorted(set(t.frame["doc_id"])) == list(range(10))
    first = t.frame[t.frame["model"] == "m1"]
    assert first["doc_id"].tolist() == list(range(10))  # in the table's order
    assert first["value"].tolist() == df[df["model"] == "m1"]["score"].tolist()
    assert len(t.notes) == 1 and "10 item ids of task 't'" in t.notes[0] and "'dev-', 'test-'" in t.notes[0]


def test_same_number_under_two_prefixes_is_not_a_conflict(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("model,item,score\na,dev1,1\na,test1,0\nb,dev1,0\nb,test1,1\n")
    t = read_item_table(p)  # refused before: "item 1: ... two different scores"
    got = t.frame.set_index(["model", "doc_id"])["value"]
    assert got.to_dict() == {("a", 0): 1.0, ("a", 1): 0.0, ("b", 0): 0.0, ("b", 1): 1.0}


def test_ids_that_are_no_numbers_never_become_hashes(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("model,item,score\na,../../etc/passwd0,1\na,why?,0\na,../../etc/passwd0x,1\n")
    t = read_item_table(p)
    assert t.frame["doc_id"].tolist() == [0, 1, 2]
    assert "'../../etc/passwd0' is not a number" in t.notes[0]


def test_ids_that_keep_apart_keep_their_numbers(tmp_path):
    _long(tmp_path / "a.csv", ["id3", "id5", "id9"])
    _long(tmp_path / "b.csv", ["7", "2", "11"])
    for name, want in (("a.csv", [3, 5, 9]), ("b.csv", [2, 7, 11])):
        t = read_item_table(tmp_path / name)
        assert sorted(set(t.frame["doc_id"])) == want and t.notes == []


def test_each_task_decides_alone_and_leading_zeros_are_not_one_item(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("model,task,item,score\n"
                 "a,A,id01,1\na,A,id1,0\na,A,id2,1\n"  # id01 and id1 would be one item 1
                 "a,B,q4,1\na,B,q6,0\n")
    t = read_item_table(p)
    ids = t.frame.groupby("task", observed=True)["doc_id"].apply(list).to_dict()
    assert ids == {"A": [0, 1, 2], "B": [4, 6]}
    assert len(t.notes) == 1 and "task 'A'" in t.notes[0] and "'id01' and 'id1'" in t.notes[0]


def test_ids_apart_within_each_task_keep_their_numbers(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("model,task,item,score\na,A,01,1\na,A,02,0\na,B,1,1\na,B,2,0\n")  # 01 and 1: other tasks
    t = read_item_table(p)
    assert t.frame["doc_id"].tolist() == [1, 2, 1, 2] and t.notes == []


def test_a_scored_row_without_an_id_refuses_the_file(tmp_path):
    from harness_ext.errors import IngestError

    p = tmp_path / "t.csv"
    p.write_text("model,item,score\na,,1\na,x,0\n")
    with pytest.raises(IngestError, match="no item id") as e:
        read_item_table(p)
    assert str(p) in str(e.value)


def test_reduce_writes_the_stored_positions_to_samples(tmp_path, capsys):
    rng = np.random.default_rng(0)
    ids = [f"dev-{k}" for k in range(20)] + [f"test-{k}" for k in range(20)]
    ability = rng.normal(size=20)
    folder = tmp_path / "bench"
    folder.mkdir()
    _long(folder / "t.csv", ids, models=[f"m{j:02d}" for j in range(20)],
          score=lambda m, k: rng.random() < 1 / (1 + np.exp(-ability[int(m[1:])] + k / 20)))
    db, out = tmp_path / "s.duckdb", tmp_path / "out"
    assert main(["ingest", "--db", str(db), str(folder)]) == 0
    said = capsys.readouterr()
    assert "numbered from 0 in order of first appearance" in said.out + said.err
    assert main(["reduce", "--db", str(db), "--items", "8", "--item-estimator", "sample_mean",
                 "--out", str(out), "--no-plot"]) == 0
    drawn = json.loads((out / "harness_ext_reduced_samples.json").read_text())["t"]
    assert len(drawn) == len(set(drawn)) == 8 and all(0 <= d < 40 for d in drawn)
    task = json.loads((out / "manifest.json").read_text())["tasks"]["t"]
    # The item ids reduce reads are the same positions, listed by the items' ids (dev-0, dev-1, dev-10, ...).
    assert task["n_items"] == 40 and sorted(decode_ids(task["items"]).tolist()) == list(range(40))
    assert task["item_ids"] == sorted(ids)


def _one_model(path, model, ids, score):
    """A long table of one model: ``score[id]`` for each id, in the order of ``ids``."""
    df = pd.DataFrame({"model": model, "item": ids, "score": [float(score[i]) for i in ids]})
    if path.suffix == ".parquet":
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False)


def _stored(db):
    from harness_ext.store.db import Store
    from harness_ext.store.item_tables import item_rows

    with Store.open(db, read_only=True) as store:
        return item_rows(store)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_files_of_one_task_give_each_text_id_one_number(tmp_path, suffix):
    """One file per model listing the same text ids in other orders: each id is one item across the files."""
    ids = ["q-alpha", "q-beta", "q-gamma", "q-delta", "q-eps"]
    truth = {"m1": dict(zip(ids, [1, 0, 0, 1, 1])), "m2": dict(zip(ids, [0, 1, 1, 0, 1]))}
    folder = tmp_path / "bench"
    folder.mkdir()
    _one_model(folder / f"m1{suffix}", "m1", ids, truth["m1"])
    _one_model(folder / f"m2{suffix}", "m2", ids[::-1], truth["m2"])  # the same ids, another order
    sidecar = "items:\n  task: t\n"
    for name in ("m1", "m2"):
        (folder / f"{name}{suffix}.meta.yaml").write_text(sidecar)
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(folder)]) == 0
    rows = _stored(db)
    assert len(rows) == 10 and set(rows["task"]) == {"t"}
    number = {m: {} for m in truth}
    for m, d, v in zip(rows["model"], rows["doc_id"], rows["value"]):
        number[m][d] = v
    first = {i: k for k, i in enumerate(ids)}  # m1's file is read first: its order numbers the ids
    for m, score in truth.items():
        assert {first[i]: float(s) for i, s in score.items()} == number[m]
