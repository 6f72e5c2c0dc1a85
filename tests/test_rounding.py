"""Values that agree to the decimals the less precise file gives are no conflict (:mod:`harness_ext.store.rounding`).

Real file: ``tests/fixtures/lm_eval_v04/meta-llama__Meta-Llama-3-8B-Instruct/truthfulqa.json`` (saucam/model_evals at
69b815816ce50ecadeb0d8d443a21fb834ab7fc6, see that folder's README). The leaderboard table against it is composed
(no published table quotes this run): its scores are the file's own, rounded as a leaderboard prints a percent to 2
decimals (51.71 percent, 0.5171 as a proportion), or moved beyond that rounding.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness_ext.cli.info import store_info
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix
from harness_ext.store.rounding import EXACT_DECIMALS, agree, decimals, decimals_sql

RESULTS = (Path(__file__).resolve().parent / "fixtures" / "lm_eval_v04" / "meta-llama__Meta-Llama-3-8B-Instruct"
           / "truthfulqa.json")
MODEL = "meta-llama/Meta-Llama-3-8B-Instruct"
MC2, MC1 = 0.5171452023492725, 0.3623011015911873  # the file's truthfulqa_mc2 and truthfulqa_mc1 acc


def _table(tmp_path, mc2: float, mc1: float) -> Path:
    """A leaderboard's long table of the two scores (a proportion, as printed)."""
    path = tmp_path / "lm_eval.csv"
    path.write_text("model,benchmark,dataset,metric,num_fewshot,value\n"
                    f"{MODEL},lm_eval,truthfulqa_mc2,acc,0,{mc2}\n{MODEL},lm_eval,truthfulqa_mc1,acc,0,{mc1}\n")
    return path


def _store(paths):
    s = Store.open(":memory:")
    report = ingest_paths(s, [str(p) for p in paths], show_progress=False)
    assert [f.status for f in report.files] == ["ingested"] * len(paths), [f.reason for f in report.files]
    return s, report


@pytest.mark.parametrize("table_first", [False, True])
def test_a_table_to_two_percent_decimals_agrees_with_the_results_file(tmp_path, table_first):
    paths = [RESULTS, _table(tmp_path, 0.5171, 0.3623)]
    s, report = _store(paths[::-1] if table_first else paths)
    assert report.conflicts == [] and s.n_conflicting_cells() == 0
    note = "2 cells given by two files that agree to the decimals the less precise gives: the more precise value used"
    assert note in report.summary()
    info = store_info(s)
    assert info.counts["conflicts"] == 0 and note in info.render()
    m = load_matrix(s, MatrixQuery(normalise="none"))
    assert m.at[MODEL, "truthfulqa_mc2"] == MC2 and m.at[MODEL, "truthfulqa_mc1"] == MC1  # the file's, either order


@pytest.mark.parametrize("table_first", [False, True])
def test_values_beyond_the_rounding_stay_conflicts(tmp_path, table_first):
    """0.5180 is not 0.51715 to 4 decimals, 0.3613 not 0.36230: two conflicts, the first ingested used."""
    paths = [RESULTS, _table(tmp_path, 0.5180, 0.3613)]
    s, report = _store(paths[::-1] if table_first else paths)
    assert len(report.conflicts) == 2 and s.n_conflicting_cells() == 2
    assert "agree to the decimals" not in report.summary()
    c = s.conflicts()
    used = c[c["used"] != ""].set_index("dataset")["value"]
    assert used["truthfulqa_mc2"] == (0.5180 if table_first else MC2)


def test_one_cell_rounded_the_other_beyond(tmp_path):
    s, report = _store([RESULTS, _table(tmp_path, 0.5171, 0.3613)])
    assert len(report.conflicts) == 1 and s.n_conflicting_cells() == 1
    assert "1 cell given by two files that agree" in report.summary()


def test_decimals_are_read_off_the_float_the_same_in_sql_and_numpy():
    import duckdb

    values = [0.6523, 65.23 / 100, 0.65, 0.652345123, 0.5, 1.0, 0.0, 0.123456, 0.1234567, 45.11 / 100, 7.25, 51.71]
    want = [4, 4, 2, EXACT_DECIMALS, EXACT_DECIMALS, EXACT_DECIMALS, EXACT_DECIMALS, 6, EXACT_DECIMALS, 4, 2, 2]
    assert decimals(values).tolist() == want
    con = duckdb.connect()
    got = con.execute(f"SELECT {decimals_sql('v')} FROM unnest(?::DOUBLE[]) t(v)", [values]).fetchall()
    assert [g[0] for g in got] == want


def test_only_an_exact_value_against_its_rounding_agrees():
    a = np.array([0.6523, 0.6524, 0.65, 0.66, 0.5, 0.6523, 0.6523])
    b = np.array([0.6523451, 0.6523451, 0.6523451, 0.6523451, 0.52, 0.6524, 0.6523])
    # rounded right, rounded wrong, to 2 decimals, wrong at 2, 0.5 is exact, two rounded values, the same value
    assert agree(a, b).tolist() == [True, False, True, False, False, False, False]
    assert agree(b, a).tolist() == agree(a, b).tolist()
    assert agree([0.6524], [0.65235001])[0] and not agree([0.6523], [0.65235101])[0]  # at half a unit


def test_predict_reads_a_new_models_files_by_the_same_rule():
    """``used_first`` (predict's reading of a new model's files): the exact value first, whatever the order."""
    import pandas as pd

    from harness_ext.store.cell_choice import used_first

    keys = ["model_name", "benchmark", "dataset", "metric", "num_fewshot"]
    cell = {"model_name": MODEL, "benchmark": "lm_eval", "dataset": "truthfulqa_mc2", "metric": "acc", "num_fewshot": 0}
    for values, want in (([0.5171, MC2], MC2), ([MC2, 0.5171], MC2), ([0.5180, MC2], 0.5180)):
        frame = pd.DataFrame([{**cell, "value": v, "n_samples": None} for v in values])
        assert used_first(frame, keys).drop_duplicates(keys)["value"].tolist() == [want]
