"""``benchmarks/quality_holdout.py --csv`` / ``--store``: the protocols on a leaderboard a user holds, end to end.

The leaderboard is a real 36-model slice of LiveBench's 2024-08-29 table (tests/fixtures/holdout_csv/PROVENANCE.md:
IBM/benchbench, 1dfd46a, Apache-2.0), ingested by the product's own ``ingest``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import import_benchmark

BOARD = Path(__file__).resolve().parent / "fixtures" / "holdout_csv" / "livebench_240829_slice.csv"
FAST = ["--protocols", "a,f", "--splits", "2", "--ridge-draws", "2", "--extra-predictors", ""]


def test_csv_runs_both_protocols_on_a_users_leaderboard(tmp_path, capsys):
    qh = import_benchmark("quality_holdout")
    out = tmp_path / "rows.json"
    assert qh.main(["--csv", str(BOARD), *FAST, "--json", str(out)]) == 0
    captured = capsys.readouterr()
    # ingest's own notes on how the file was read are shown, then the tables of the shared matrices
    assert "livebench_240725 (named as the leaderboard's own score)" in captured.err
    assert "(a) held-out models" in captured.out and "(f) frontier" in captured.out
    [row] = json.loads(out.read_text())
    assert row["matrix"] == "livebench_240829_slice" and row["shape"] == "36 x 6" and row["k"] == 2
    for key in ("a_agg_mae", "a_cov", "a_agg_cov", "a_ridge_agg_mae", "a_subset_mean_agg_mae", "a_colmeans_agg_mae",
                "f_frontier_lowrank_agg_mae", "f_frontier_lowrank_agg_bias", "f_frontier_lowrank_agg_cov"):
        assert row[key] == row[key], key  # finite, not NaN
    assert 0 < row["a_agg_mae"] < 20 and 0 <= row["a_cov"] <= 1
    assert row["f_frontier_n"] == [18, 11]  # the weakest 50% fit, the strongest 30% predicted


def test_store_and_benchmark_measure_a_filled_store(tmp_path, capsys):
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths

    db = tmp_path / "mine.duckdb"
    with Store.open(str(db)) as store:
        ingest_paths(store, [BOARD], show_progress=False)
    qh = import_benchmark("quality_holdout")
    frontier = [*FAST, "--protocols", "f"]  # the last --protocols wins: the frontier's one split, seconds
    out = tmp_path / "rows.json"
    assert qh.main(["--store", str(db), "--benchmark", "livebench_240829_slice", *frontier, "--json", str(out)]) == 0
    [row] = json.loads(out.read_text())
    assert row["matrix"] == "livebench_240829_slice" and row["shape"] == "36 x 6"
    # the same matrix as --csv gives, so the same figures
    assert qh.main(["--csv", str(BOARD), *frontier, "--json", str(tmp_path / "csv.json")]) == 0
    again = json.loads((tmp_path / "csv.json").read_text())[0]
    assert again["f_frontier_lowrank_agg_mae"] == row["f_frontier_lowrank_agg_mae"]


@pytest.mark.parametrize("argv, message", [
    (["--csv", "no/such.csv"], "--csv: no such file: no/such.csv"),
    (["--store", "no/such.duckdb"], "--store: no such store file: no/such.duckdb"),
    (["--csv", str(BOARD), "--matrices", "helm_classic"], "--matrices and --db name the shared matrices"),
    (["--csv", str(BOARD), "--store", "x.duckdb"], "give either --csv FILE[,FILE...] or --store DB"),
    (["--csv", str(BOARD), "--benchmark", "mmlu"], "benchmark 'mmlu'"),
])
def test_a_wrong_option_is_one_clear_error(argv, message):
    qh = import_benchmark("quality_holdout")
    with pytest.raises(SystemExit) as exc:
        qh.main([*argv, *FAST])
    assert message in str(exc.value)
