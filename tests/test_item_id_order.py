"""The same item tables ingested in another order give the same item-level reduction.

The store numbers a task's text ids in the order its files first list them, so one file per model, each
listing the items in its own order, ingested A then B or B then A, gives one question two different numbers.
``reduce --items`` drew its seeded sample over the items in number order: the same files and seed drew other
questions, with another expected error, depending on the order of the ``ingest`` commands; it now lists such a
task's items by id and numbers them 0, 1, ... in that order (tests/test_item_order_manifest.py: the written files).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness_ext.methods.reduction.item_manifest import decode_ids, item_positions
from harness_ext.methods.reduction.item_reduce import build_item_manifest
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

N_ITEMS, N_MODELS = 60, 6


def _files(folder) -> list:
    """One long CSV per model of task ``t`` (benchmark ``b``): text ids, each file in its own order, some short."""
    rng = np.random.default_rng(3)
    ability = np.linspace(-1.5, 1.5, N_MODELS)
    hardness = rng.normal(size=N_ITEMS)
    ids = np.array([f"q-{k * 7919 % 1000:03d}x" for k in range(N_ITEMS)])
    out = []
    for m in range(N_MODELS):
        order = rng.permutation(N_ITEMS)[: N_ITEMS - 4 * (m % 3)]  # not every file lists every item
        score = (rng.random(N_ITEMS) < 1 / (1 + np.exp(hardness - ability[m]))).astype(float)
        path = folder / f"m{m}.csv"
        pd.DataFrame({"model": f"m{m}", "item": ids[order], "score": score[order]}).to_csv(path, index=False)
        (folder / f"m{m}.csv.meta.yaml").write_text("benchmark: b\nitems:\n  task: t\n")
        out.append(path)
    return out


def _manifest(db, paths, design: str) -> dict:
    for p in paths:  # one ingest per file, as a user adding one model's file at a time
        with Store.open(db) as store:
            ingest_paths(store, [str(p)], show_progress=False)
    with Store.open(db, read_only=True) as store:
        return build_item_manifest(store, 12, random_state=0, design=design,
                                   n_strata=3 if design == "stratified" else 5)


def _drawn(block: dict) -> list:
    """The text ids of the items a block's sample runs."""
    name = dict(zip(decode_ids(block["items"]).tolist(), block["item_ids"]))
    return sorted(name[int(d)] for d in decode_ids(block["sample"]))


@pytest.mark.parametrize("design", ["random", "stratified", "irt-anchors", "search"])
@pytest.mark.slow
def test_ingest_order_draws_the_same_items(tmp_path, design):
    paths = _files(tmp_path)
    a = _manifest(tmp_path / "forward.duckdb", paths, design)
    b = _manifest(tmp_path / "backward.duckdb", paths[::-1], design)
    ta, tb = a["tasks"]["t"], b["tasks"]["t"]
    assert ta["item_ids"] == tb["item_ids"] == sorted(ta["item_ids"])  # the items are listed by id
    assert decode_ids(ta["items"]).tolist() == list(range(len(ta["item_ids"])))  # and numbered in that order
    assert _drawn(ta) == _drawn(tb)
    # The same block: numbers, population answers, design fields; and the same expected errors.
    assert ta == tb
    assert a["expected_error"] == b["expected_error"] and a["source"] == b["source"]


def test_item_positions_of_ids_listed_by_item_id():
    ids = np.array([5, 2, 9, 0, 7])
    assert item_positions(ids, [9, 5, 0]).tolist() == [2, 0, 3]


def test_item_scores_two_files_disagree_on_are_said_to_follow_the_ingest_order(tmp_path):
    """A model's items scored differently by a second file: the population takes the score stored first, so the
    order of ingestion chooses its answers; either order says how many."""
    rng = np.random.default_rng(0)
    rows = [(f"m{m}", k, float(rng.random() < 0.2 + 0.1 * m)) for m in range(6) for k in range(20)]
    pd.DataFrame(rows, columns=["model", "item", "score"]).to_csv(tmp_path / "a.csv", index=False)
    pd.DataFrame([("m0", k, 1.0 - rows[k][2]) for k in range(3)], columns=["model", "item", "score"]).to_csv(
        tmp_path / "b.csv", index=False)
    for name in ("a", "b"):
        (tmp_path / f"{name}.csv.meta.yaml").write_text("benchmark: b\nitems:\n  task: t\n")
    paths = [tmp_path / "a.csv", tmp_path / "b.csv"]
    said = []
    for db, order in ((tmp_path / "forward.duckdb", paths), (tmp_path / "backward.duckdb", paths[::-1])):
        notes = _manifest(db, order, "random")["tasks"]["t"]["notes"]
        said.append([n for n in notes if "two source files give differently" in n])
    assert said[0] == said[1] and len(said[0]) == 1 and said[0][0].startswith("3 item scores")
