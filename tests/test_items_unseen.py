"""Real item tables the item-level constants were not chosen on: EvalPlus HumanEval+ (49 models x 164 problems)
and MBPP+ (59 models x 378 problems), one benchmark with two tasks.

The tables are fixtures/items_unseen/evalplus (see its PROVENANCE.md). The checks below are the source's own
figures: each model's pass@1 as its model table publishes it, and the number of models solving an example as its
example table lists them, so a cell misread when converting would show here.
"""

from __future__ import annotations

import numpy as np
import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.item_tables import item_rows

from conftest import REPO

UNSEEN = REPO / "tests" / "fixtures" / "items_unseen"
TABLE = UNSEEN / "evalplus" / "humaneval_plus.parquet"

# The source's example table: how many of the 49 models solve HumanEval/<k> under HumanEval+'s tests.
SOLVED = {7: 48, 10: 18, 14: 37, 18: 43, 29: 49, 38: 40, 49: 24, 68: 33, 101: 16, 104: 38, 117: 35, 118: 15,
          138: 14, 149: 41, 150: 42, 155: 22}
# The source's model table: pass@1 over the 164 problems.
PASS1 = {"claude-3-opus-20240229": 127, "deepseek-coder-33b-instruct": 125, "gpt-3.5-turbo": 116,
         "phi-2": 75, "octocoder": 55, "python-code-13b": 52}

MBPP = UNSEEN / "evalplus" / "mbpp_plus.parquet"
# The same two published tables for MBPP+ (items are the numbers in Mbpp/<k>, 378 of them between 2 and 809).
MBPP_SOLVED = {109: 6, 145: 36, 226: 50, 265: 24, 266: 31, 267: 0, 286: 7, 300: 0, 391: 6, 425: 56, 445: 14,
               554: 32, 558: 7, 576: 5, 606: 42, 728: 58, 742: 14, 760: 36, 773: 23, 796: 57, 809: 13}
MBPP_PASS1 = {"gpt-4-1106-preview": 280, "claude-3-opus-20240229": 278, "claude-3-haiku-20240307": 262,
              "databricks--dbrx-instruct": 213, "mixtral-8x7b-instruct": 190, "code-llama-multi-7b": 167,
              "gemma-7b-it": 125}
# The six models the example table lists as solving Mbpp/391.
MBPP_391 = {"HuggingFaceH4--starchat2-15b-v0.1", "code-millenials-34b", "databricks--dbrx-instruct",
            "deepseek-coder-33b-instruct", "gpt-4-1106-preview", "solar-10.7b-instruct"}


@pytest.fixture(scope="module")
def mod():
    from conftest import import_benchmark

    return import_benchmark("quality_items")


def test_the_table_matches_the_sources_published_counts(mod):
    scores, models = mod.load_named(TABLE)
    assert scores.shape == (49, 164)
    assert set(np.unique(scores)) == {0.0, 1.0}
    col = scores.sum(axis=0)
    assert {k: int(col[k]) for k in SOLVED} == SOLVED
    row = dict(zip(models, scores.sum(axis=1).astype(int)))
    assert {m: row[m] for m in PASS1} == PASS1


def test_the_mbpp_table_matches_the_sources_published_counts(mod):
    import pandas as pd

    scores, models = mod.load_named(MBPP)
    assert scores.shape == (59, 378)
    assert set(np.unique(scores)) == {0.0, 1.0}
    items = sorted(pd.read_parquet(MBPP, columns=["item"])["item"].unique())  # load_named's column order
    col = dict(zip(items, scores.sum(axis=0).astype(int)))
    assert {k: col[k] for k in MBPP_SOLVED} == MBPP_SOLVED
    row = dict(zip(models, scores.sum(axis=1).astype(int)))
    assert {m: row[m] for m in MBPP_PASS1} == MBPP_PASS1
    assert {m for m, v in zip(models, scores[:, items.index(391)]) if v == 1} == MBPP_391
    _, he_models = mod.load_named(TABLE)
    assert len(set(models) & set(he_models)) == 37  # the models the two tasks share, by the source's names


def test_quality_items_reads_another_folder_and_keeps_its_default(mod, capsys):
    default = mod.ITEMS
    mod.main(["--items-dir", str(UNSEEN), "--items", "20", "--seeds", "2", "--estimators", "sample_mean",
              "--protocols", "interpolation"])
    out = capsys.readouterr().out
    assert "evalplus/humaneval_plus | interpolation | 20 | sample_mean |" in out
    assert "evalplus/mbpp_plus | interpolation | 20 | sample_mean |" in out
    mod.ITEMS = default  # main() repoints the module's folder; later tests in this process read the default


def test_the_table_ingests_as_a_user_would(tmp_path):
    import shutil

    folder = tmp_path / "evalplus"
    shutil.copytree(UNSEEN / "evalplus", folder)
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [folder], show_progress=False)
        assert [f.status for f in rep.files] == ["ingested", "ingested"]
        rows = item_rows(s)
        assert len(rows) == 49 * 164 + 59 * 378
        assert set(rows["benchmark"]) == {"evalplus"} and set(rows["task"]) == {"humaneval_plus", "mbpp_plus"}
        assert set(rows["metric"]) == {"pass1"}
