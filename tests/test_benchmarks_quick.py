"""The benchmark suite runs in quick mode and reports ratios (so CI exercises the benchmark code).

``python benchmarks/run.py --quick`` runs every ``benchmarks/bench_*.py`` in a
subprocess; it is meant to take under a minute on 2 quiet cores (several
times that on a loaded machine, hence the generous timeout). Real matrices are used when
../shared/data is present, synthetic ones otherwise.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import import_benchmark

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks"


def _load_run():
    return import_benchmark("run")


def test_parse_ratios_reads_inline_phrases_and_ratio_columns():
    run = _load_run()
    text = (
        "similarity        vectorised s  per-pair s    ratio  max |diff|\n"
        "pearson                 0.0002       0.266     1644     1.0e-15\n"
        "all nine                0.0136       0.991       73\n"
        "\n"
        "ridge MSE curve, 838 x 57:\n"
        "  mse_curve 72 ms, sklearn Ridge refit per step 125 ms  -> ratio 1.7x (identical curves)\n"
        "matrix                     vectorised s    loop s   ratio\n"
        "HELM 67x14 (synthetic)            0.020      0.08      4x\n"
        "\n"
        "speed ratio batched / per-file: 12.1x\n"
    )
    got = run.parse_ratios(text)
    assert [r["ratio"] for r in got] == [1644.0, 73.0, 1.7, 4.0, 12.1]
    assert got[4]["case"] == "speed ratio batched / per-file"
    assert got[0]["case"] == "similarity: pearson"
    assert got[2]["case"].startswith("ridge MSE curve, 838 x 57: mse_curve 72 ms")
    assert got[3]["case"] == "matrix: HELM 67x14 (synthetic)"


def _res(name, rows):
    return {"name": name, "rc": 0, "seconds": 1.0, "output": "", "rows": rows, "quick": False}


def _row(bench, case, size, t, ref, **extra):
    return {"bench": bench, "case": case, "size": size, "time_s": t, "ref_s": ref,
            "ratio": None if ref is None else ref / t, "peak_mb": extra.pop("peak_mb", None), "note": "", **extra}


def test_summary_keeps_library_and_naive_ratios_apart():
    run = _load_run()
    results = [
        _res("bench_similarity_libs", [_row("similarity_libs", "pearson", "838 x 57", 0.01, 0.02, loop_s=1.0)]),
        _res("bench_prowl", [_row("prowl", "synthetic similarity pearson", "79 x 58", 0.01, 0.5, ref_kind="naive")]),
    ]
    lib, naive = run.summary_rows(results)
    assert lib["ratio vs user ref"] == "2.0x" and lib["ratio vs naive loop"] == "100.0x"
    assert naive["ratio vs user ref"] == "" and naive["ratio vs naive loop"] == "50.0x"


def test_targets_table_passes_fails_and_says_what_was_not_measured():
    run = _load_run()
    sims = [_row("similarity_libs", m, "10,000 x 1,000, 20% missing", 10.0, 20.0 if m != "spearman" else 5.0)
            for m in run.MEASURES]
    results = [
        _res("bench_cli", [_row("cli", "harness-ext --version", "plain venv", 0.10, 0.05),
                           _row("cli", "harness-ext --help", "plain venv", 0.20, 0.05),
                           _row("cli", "harness-ext plugins", "plain venv", 0.40, 0.05),
                           _row("cli", "harness-ext --version", "here", 0.30, 0.20, cpu_s=0.08, ref_cpu_s=0.06)]),
        _res("bench_matrix", [_row("matrix", "store -> matrix (load_matrix, no fingerprint) vs pandas.read_parquet",
                                   "50,000 x 200", 4.0, 3.0, peak_mb=700.0, target_met=True),
                              _row("matrix", "store -> matrix with fingerprint (load_matrix as reduce/predict run it) "
                                   "vs pandas.read_parquet", "50,000 x 200", 8.0, 3.0, peak_mb=700.0)]),
        _res("bench_similarity_libs", sims),
        _res("bench_matrix", [_row("matrix", "pipeline: harness-ext reduce (defaults)", "20,000 x 2,000 (40M)", 200.0, None),
                              _row("matrix", "pipeline: ingest + reduce vs the 5-minute target", "20,000 x 2,000 (40M)",
                                   350.0, 300.0, peak_mb=3000.0, target_met=False)]),
        _res("bench_bpmf_pymc", [_row("bpmf_pymc", "BPMF vs PyMC NUTS", "79 x 57", 1.0, 100.0, rmse_ours=0.05,
                                      rmse_ref=0.05)]),
        _res("bench_reduce", [_row("reduce", "full reduce: synthetic", "100 x 60", 3.0, None, target_met=False)]),
    ]
    table = {t["target"]: t for t in run.targets_rows(results, {r["name"] for r in results})}
    assert table["harness-ext --version < 0.15 s, plain venv"]["pass"] == "PASS"
    assert table["harness-ext --help < 0.15 s, plain venv"]["pass"] == "FAIL"
    assert table["harness-ext plugins < 0.5 s, plain venv"]["pass"] == "PASS"
    here = table["harness-ext --version < 0.15 s, here"]  # each installation its own row, CPU seconds shown
    assert here["pass"] == "FAIL" and "CPU 0.080 s vs 0.060 s" in here["measured"]
    assert table["harness-ext plugins < 0.5 s, here"]["pass"] == "n/a"
    # The target row is the load without the fingerprint (Parquet's read computes none); the fingerprinted load
    # reduce and predict run is shown beside it, with its own ratio, and is not listed again.
    matrix = next(t for k, t in table.items() if k.startswith("store -> matrix >= 0.5x pandas.read_parquet, 50,000"))
    assert matrix["pass"] == "PASS" and matrix["measured"].startswith("0.75x without fingerprint (4.000 s vs 3.000 s")
    assert "with fingerprint (reduce, predict) 0.38x (8.000 s)" in matrix["measured"]
    assert not any("with fingerprint" in k for k in table)
    assert not any(k.startswith("store -> matrix (load_matrix") for k in table)  # its target_met: not a second row
    spear = next(t for k, t in table.items() if k.startswith("spearman >="))
    assert spear["pass"] == "FAIL" and "0.50x" in spear["measured"]
    assert next(t for k, t in table.items() if k.startswith("pearson >="))["pass"] == "PASS"
    assert table["nine measures, 10,000 x 1,000, 20% missing < 180 s"]["pass"] == "PASS"  # 9 x 10 s
    assert next(t for k, t in table.items() if k.startswith("BPMF vs PyMC"))["pass"] == "PASS"
    ingest = table["ingest Open LLM v2 >= 0.67x json.load + bulk insert"]
    assert ingest["pass"] == "n/a" and ingest["measured"] == "not run"
    quick = run.targets_rows(results + [_res("bench_ingest", [_row("ingest", "Open LLM v2 (EEE): ingest_paths vs json.load "
                                                                   "+ bulk insert", "400 files", 0.1, 0.03, subset=True)])],
                             {"bench_ingest"})
    row = next(t for t in quick if t["target"].startswith("ingest Open LLM v2"))
    assert row["pass"] == "n/a" and "quick subset" in row["measured"]  # the whole-set target is not judged on 400 files
    assert table["full reduce: synthetic (100 x 60)"]["pass"] == "FAIL"  # a row's own target_met is listed too
    forty = table["40M results (20,000 x 2,000): CSV ingest + CLI reduce < 5 min and < 4 GB"]
    assert forty["pass"] == "FAIL" and forty["measured"].startswith("350 s")  # the total, not the reduce stage
    assert not any(k.startswith("pipeline:") for k in table)  # listed once, as the issue-17 row


def test_fit_exponent_recovers_power_law():
    _common = import_benchmark("_common")
    sizes = [100, 200, 400, 800]
    assert _common.fit_exponent(sizes, [3e-6 * s**2 for s in sizes]) == pytest.approx(2.0)
    with _common.PeakMemory() as mem:
        block = bytearray(50 * 2**20)
    assert mem.mb >= 50
    del block


def test_scale_exponents_fit_the_largest_sizes_and_predict_10k():
    bench_scale = import_benchmark("bench_scale")
    # time = 0.05 s overhead at the smallest size, then exactly m^1 d^2 on the largest three sizes
    law = lambda m, d: 1e-9 * m * d**2  # noqa: E731
    models = {(m, 100): {"similarity (9)": law(m, 100)} for m in (1000, 2000, 4000)}
    models[(500, 100)] = {"similarity (9)": 0.05}
    datasets = {(1000, d): {"similarity (9)": law(1000, d)} for d in (100, 200, 400)}
    datasets[(1000, 50)] = {"similarity (9)": 0.05}
    rows = bench_scale.exponents({"models": models, "datasets": datasets}, runs=1000)
    sim = next(r for r in rows if r["phase"] == "similarity (9)")
    assert sim["b models"] == pytest.approx(1.0) and sim["b datasets"] == pytest.approx(2.0)
    assert sim["predicted s at 10,000 x 1,000"] == pytest.approx(law(10000, 1000))


@pytest.mark.slow
def test_run_quick_exits_zero_and_prints_ratios():
    proc = subprocess.run([sys.executable, str(BENCH / "run.py"), "--quick"], cwd=REPO, capture_output=True,
                          text=True, timeout=900)  # the whole quick suite: ~4-7 min on 2 loaded cores
    out = proc.stdout
    assert proc.returncode == 0, (out[-4000:], proc.stderr[-4000:])
    assert "summary (quick" in out
    ratios = re.findall(r"([0-9][0-9,]*\.[0-9])x", out.split("summary (quick", 1)[1])
    assert len(ratios) >= 10, out[-3000:]
    # our own benchmarks reported rows, the 100 x 60 target line, the scale phases (exponents are full-mode only)
    # The synthetic ingestion rows print on every checkout; "real ingestion" only where ../shared/data has the
    # Open LLM Leaderboard files (a fresh clone has none: the needle once failed every clone).
    needles = ["full reduce: synthetic", "100 x 60", "growth exponents: full mode only", "similarity (9)",
               "ingest   models"]
    shared = REPO.parent / "shared" / "data"
    if (shared / "pythia-evals").exists():
        needles.append("full reduce: Pythia MMLU")
    if (shared / "every_eval_ever" / "data" / "hfopenllm_v2").exists():
        needles += ["ingest Open LLM v2", "real ingestion"]
    for needle in needles:
        assert needle in out, needle
