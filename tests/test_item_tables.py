"""Item-response tables: long and wide layouts, Parquet and CSV, one clear error per bad file."""

import numpy as np
import pandas as pd
import pytest

from harness_ext.errors import IngestError
from harness_ext.store.item_tables import is_item_table, read_item_table

from conftest import SHARED_DATA

ITEMS = SHARED_DATA / "items"


def test_long_csv_is_recognised_and_read(tmp_path):
    p = tmp_path / "gsm.csv"
    p.write_text("model,item,score\na,0,1\na,1,0\nb,0,1\nb,1,\n")
    assert is_item_table(p)
    t = read_item_table(p)
    assert t.benchmark == tmp_path.name and set(t.frame["task"]) == {"gsm"} and set(t.frame["metric"]) == {"acc"}
    assert len(t.frame) == 3 and t.notes == ["1 missing scores (no row stored)"]


def test_pandas_index_columns_of_a_parquet_are_no_table_column(tmp_path):
    """``df.to_parquet(path)`` of filtered rows stores their index as ``__index_level_0__``: still a long table."""
    frame = pd.DataFrame({"model": ["a", "a", "b"], "task": "t", "item": [0, 1, 0], "score": [1.0, 0.0, 1.0]})
    path = tmp_path / "new_model.parquet"
    frame[frame["score"] >= 0].iloc[1:].to_parquet(path)
    assert is_item_table(path)
    table = read_item_table(path)
    assert sorted(table.frame["model"].astype(str)) == ["a", "b"]


def test_a_leaderboard_csv_is_not_an_item_table(tmp_path):
    p = tmp_path / "lb.csv"
    p.write_text("model,MMLU,GSM8K\na,0.5,0.4\n")
    assert not is_item_table(p)


@pytest.mark.parametrize("layout", ["items_x_models", "models_x_items"])
def test_wide_layouts_give_the_long_rows(tmp_path, layout):
    P = np.array([[1, 0, 1], [0, 0, 1]], dtype=float)  # models x items
    df = pd.DataFrame(P, index=["m1", "m2"], columns=["q1", "q2", "q3"])
    if layout == "items_x_models":
        df = df.T
    p = tmp_path / "wide.csv"
    df.to_csv(p, index_label="id")
    t = read_item_table(p, {"layout": layout, "task": "t", "metric": "exact_match"})
    got = t.frame.pivot(index="model", columns="doc_id", values="value")
    assert got.shape == (2, 3) and got.to_numpy().sum() == P.sum()
    assert set(t.frame["metric"]) == {"exact_match"}


def test_two_scores_for_one_item_refuse_the_file(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("model,item,score\na,0,1\na,0,0\n")
    with pytest.raises(IngestError, match="two different scores"):
        read_item_table(p)


@pytest.mark.parametrize("body,reason", [("model,item,score\na,0,high\n", "not a number"),
                                         ("model,item,score\na,0,inf\n", "infinite"),
                                         ("model,item,score\n,0,1\n", "empty model")])
def test_bad_cells_name_the_file_and_reason(tmp_path, body, reason):
    p = tmp_path / "bad.csv"
    p.write_text(body)
    with pytest.raises(IngestError, match=reason) as e:
        read_item_table(p)
    assert "bad.csv" in str(e.value)


def test_not_parquet_is_a_clear_error(tmp_path):
    p = tmp_path / "x.parquet"
    p.write_bytes(b"not parquet at all")
    assert not is_item_table(p)
    with pytest.raises(IngestError, match="cannot read as an item table"):
        read_item_table(p)


@pytest.mark.skipif(not ITEMS.is_dir(), reason="needs ../shared/data/items")
def test_shared_tables_read_whole():
    t = read_item_table(ITEMS / "helm_lite" / "gsm.parquet")
    assert t.benchmark == "helm_lite" and len(t.frame) == 83 * 1000
    src = pd.read_parquet(ITEMS / "helm_lite" / "gsm.parquet")
    want = src.groupby("model")["score"].mean()
    got = t.frame.groupby("model")["value"].mean()
    assert np.allclose(got.loc[want.index], want)
