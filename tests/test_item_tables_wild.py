"""Item-response tables as they are saved in the wild: a bare 0/1 matrix without a header, a wide table naming a
model twice, a long table with a byte-order mark.

The header-less slice is real: fixtures/items_wild (PSN-IRT's combine.csv, see its PROVENANCE.md).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.item_tables import item_rows

FIX = Path(__file__).parent / "fixtures" / "items_wild"
PSN = FIX / "psn_irt_combine_slice.csv"


def _one(store, path):
    rep = ingest_paths(store, [path], show_progress=False)
    return rep.files[0]


@pytest.mark.parametrize("layout", ["models_x_items", "items_x_models"])
def test_a_matrix_without_a_header_is_refused_with_the_reason(tmp_path, layout):
    # PSN-IRT publishes its 12 models x 41,871 items as a bare 0/1 matrix. Declared as a wide table, its first
    # model's scores became the item ids (or model names), renamed by pandas where repeated ("1.0.1"), and the file
    # was refused for "6 items have two different scores".
    f = tmp_path / PSN.name
    shutil.copy(PSN, f)
    (tmp_path / (PSN.name + ".meta.yaml")).write_text(f"items:\n  layout: {layout}\n  task: combine\n")
    with Store.open(":memory:") as s:
        rep = _one(s, f)
        assert rep.status == "skipped"
        assert rep.reason.startswith("the first row holds numbers (1.0, 1.0, 1.0, 1.0, 1.0 and 19 more), not a header")
        assert item_rows(s).empty


def test_a_model_named_in_two_columns_is_refused(tmp_path):
    # pandas renamed the second "gpt-4" column to "gpt-4.1", another model's name, and stored its scores so.
    f = tmp_path / "wide.csv"
    f.write_text("item,gpt-4,gpt-4,llama\nq1,1,0,1\nq2,1,1,0\nq3,0,1,1\n")
    (tmp_path / "wide.csv.meta.yaml").write_text("items:\n  layout: items_x_models\n  task: wide\n")
    with Store.open(":memory:") as s:
        rep = _one(s, f)
        assert rep.status == "skipped"
        assert rep.reason == ("1 model name in more than one column of the header: 'gpt-4' (2 columns); "
                              "each column must have its own name")
        assert item_rows(s).empty


def test_an_item_id_named_in_two_columns_is_refused(tmp_path):
    f = tmp_path / "wide.csv"
    f.write_text("model,q1,q2,q1\na,1,0,1\nb,1,1,0\n")
    (tmp_path / "wide.csv.meta.yaml").write_text("items:\n  layout: models_x_items\n")
    with Store.open(":memory:") as s:
        assert "1 item id in more than one column of the header: 'q1' (2 columns)" in _one(s, f).reason


def test_a_long_table_with_a_byte_order_mark_is_an_item_table(tmp_path):
    # Saved as "CSV UTF-8" by a spreadsheet: the mark hid the model column, so the file was read as a leaderboard
    # with two datasets, "item" and "score", and its models' repeated rows as conflicts.
    f = tmp_path / "responses.csv"
    f.write_bytes(b"\xef\xbb\xbfmodel,item,score\na,1,1\na,2,0\nb,1,1\nb,2,1\n")
    with Store.open(":memory:") as s:
        rep = _one(s, f)
        assert rep.status == "ingested" and rep.adapter == "item_table", (rep.adapter, rep.reason)
        rows = item_rows(s)
        assert len(rows) == 4 and set(rows["model"]) == {"a", "b"} and set(rows["doc_id"]) == {1, 2}
        assert not s.con.execute("SELECT count(*) FROM results").fetchone()[0]
