"""benchmarks/quality_holdout.py runs end to end in quick mode on a real matrix and prints its two tables."""

from __future__ import annotations

import json

import pytest

from conftest import HELM_CLASSIC, import_benchmark, require


@pytest.mark.slow  # a real matrix end to end: the slow real-data tier
def test_quality_holdout_quick(tmp_path, capsys):
    require(HELM_CLASSIC)
    qh = import_benchmark("quality_holdout")
    out = tmp_path / "rows.json"
    assert qh.main(["--quick", "--matrices", "helm_classic", "--splits", "2", "--seeds", "1",
                    "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "(a) held-out models" in text and "(b) cell completion" in text
    row = json.loads(out.read_text())[0]
    assert row["matrix"] == "helm_classic" and row["shape"].startswith("67 x")
    for key in ("a_spearman", "a_agg_mae", "a_cov", "a_ratio_ridge", "a_ratio_bp", "b_med_ae", "b_cov", "b_ratio_bp"):
        assert row[key] == row[key], key  # finite, not NaN
    assert 0.5 < row["b_cov"] <= 1.0
    # protocol (f) also records what reduce's summary would have told a user of the training models
    assert 0 < row["f_frontier_claimed_agg_mae"] < 50 and 0 <= row["f_frontier_claimed_agg_cov"] <= 1


def test_benchbench_rows_are_the_stores_canonical_models(tmp_path):
    from conftest import SHARED_DATA

    require(SHARED_DATA / "benchbench" / "leaderboards")
    qh = import_benchmark("quality_holdout")
    db = tmp_path / "bb.duckdb"
    raw, _ = qh.load_matrices(["benchbench"], db=str(db), verbose=False)["benchbench"]
    from harness_ext.store.db import Store

    # One store file per matrix (DB.<matrix>.duckdb): a matrix does not depend on the others in the run.
    with Store.open(str(tmp_path / "bb.benchbench.duckdb"), read_only=True) as store:
        canon = dict(store.con.execute("SELECT alias, canonical FROM model_aliases").fetchall())
    merged = {c for a, c in canon.items() if a != c}
    assert not set(raw.index) & {a for a, c in canon.items() if a != c}  # no row under a merged-away spelling
    assert set(raw.index) & merged  # rows that join names the leaderboards spell differently
    assert raw.shape[0] >= 30 and (raw.notna().sum(axis=1) >= 3).all()


@pytest.mark.slow
def test_calibration_gap_reports_score_ranks(tmp_path, capsys):
    """benchmarks/quality_calibration_gap.py: a mode with in-fold selector parameters runs, and the rank columns
    (mean u of test scores among the calibration's, the calibration's and the test's 90% quantiles) are printed."""
    require(HELM_CLASSIC)
    gap = import_benchmark("quality_calibration_gap")
    assert gap.parse_mode("same:n_candidates=4,max_exact=2") == ("same", {"n_candidates": 4, "max_exact": 2})
    assert gap.parse_mode("plain") == ("plain", {})
    out = tmp_path / "gap.json"
    modes = ["plain", "design-nested", "design-pooled"]
    assert gap.main(["--matrices", "helm_classic", "--splits", "2", "--modes", ";".join(modes), "--json", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "mean u" in lines[0] and "cal q90" in lines[0] and "test q90" in lines[0] and " se " in lines[0]
    rows = [line.split() for line in lines if line.startswith("helm_classic")]
    assert [r[1] for r in rows] == modes
    for r in rows:
        cov, se, mean_u = float(r[3]), float(r[4]), float(r[7])
        assert 0.0 <= cov <= 1.0 and 0.0 <= se < 0.2 and 0.0 < mean_u < 1.0
    per_split = json.loads(out.read_text())["helm_classic"]
    assert set(per_split) == set(modes) and len(per_split["design-pooled"]["agg"]) == 2


def test_split_bootstrap_standard_error():
    """quality_holdout.split_bootstrap: the bootstrap over splits of a mean is about its standard error
    (sd / sqrt(n) for independent splits), its 90% interval holds the mean, and one split gives NaN."""
    import numpy as np

    qh = import_benchmark("quality_holdout")
    v = np.random.default_rng(3).normal(0.9, 0.05, 200)
    se, lo, hi = qh.split_bootstrap(v)
    assert abs(se - v.std(ddof=1) / np.sqrt(v.size)) < 0.1 * se
    assert lo < v.mean() < hi
    assert qh.split_bootstrap(v) == (se, lo, hi)  # seeded
    assert all(x != x for x in qh.split_bootstrap([0.9]))


def test_frontier_report_states_what_its_test_counts_can_resolve():
    """Protocol (f)'s report: each coverage's Clopper-Pearson interval, the chance a calibrated interval lands in
    85-95% with that many test models, and that chance for every row at once."""
    import io

    fr = import_benchmark("_holdout_frontier")
    assert fr.band_chance(12) == pytest.approx(0.377, abs=1e-3)  # only 11 of 12 is inside the band
    assert fr.band_chance(1348) > 0.999
    lo, hi = fr.coverage_interval(1.0, 12)
    assert hi == 1.0 and 0.77 < lo < 0.79
    nan = float("nan")
    row = {"matrix": "toy", "f_frontier_n": (40, 12), "f_frontier_flagged": 0.5,
           "f_newest_n": (40, 20), "f_newest_flagged": 0.1}
    for variant in ("frontier", "newest"):
        for key in ("lowrank", "subset_mean", "random_ridge", "column_means", "benchpress"):
            for x in ("agg_mae", "agg_bias", "spearman", "cell_cov", "agg_cov", "agg_width", "cell_width"):
                row[f"f_{variant}_{key}_{x}"] = 0.9 if x == "agg_cov" else nan
    row["f_frontier_claimed_agg_mae"], row["f_frontier_claimed_agg_cov"] = 1.234, 0.93
    row["f_frontier_claimed_held_out"] = 10.0
    row["f_frontier_claimed_ceil_n"], row["f_frontier_claimed_ceil_cov"] = 3.0, 2 / 3
    out = io.StringIO()
    fr.print_frontier([row], "lowrank", file=out)
    text = out.getvalue()
    assert "claimed: what reduce's summary tells a user" in text
    [line] = [x for x in text.splitlines() if x.startswith("toy") and "frontier" in x]
    # The claim, then its coverage's Clopper-Pearson interval over the folds' 10 different held-out models.
    lo, hi = fr.coverage_interval(0.93, 10)
    assert line.endswith(f"|    1.23  0.93{f'{lo:.2f}-{hi:.2f}':>11}   10 |     3   0.667"), line
    assert "ceilN: test models predict warns about as near the ceiling" in text
    assert f"P(band) on every row at once (independent splits): {fr.band_chance(12) * fr.band_chance(20):.2f}" in text
