"""The benchmark's interval from its tasks' item estimates: one standard-error rule, the tasks' error correlation.

Synthetic errors with a known correlation: the combined interval covers at its level, the independent one
does not; independent errors keep the independent interval. The correlation reduce records round-trips
through the manifest, and a manifest without it (an older one) still predicts, as independent, with a note.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from harness_ext.cli import main
from harness_ext.errors import HarnessExtError
from harness_ext.methods.engine.item_estimators import _z
from harness_ext.methods.reduction.item_benchmark import (KEY, benchmark_interval, correlation_block,
                                                          shrunk_correlation, task_standard_error)
from harness_ext.methods.reduction.item_predict import predict_items
from harness_ext.methods.reduction.manifest import load_manifest


def _errors(rng, n, R, se):
    """``n`` models x tasks errors ``se * z`` with ``z ~ N(0, R)``."""
    return (rng.standard_normal((n, len(R))) @ np.linalg.cholesky(R).T) * se


def test_correlated_task_errors_are_covered_only_when_combined_with_their_correlation():
    rng = np.random.default_rng(0)
    k, rho = 4, 0.5
    R = np.full((k, k), rho) + (1 - rho) * np.eye(k)
    # The population's held-out errors (as reduce has them), standardised: the correlation is estimated there.
    R_hat, lam = shrunk_correlation(_errors(rng, 200, R, 1.0))
    assert lam < 0.2 and np.allclose(R_hat[~np.eye(k, dtype=bool)], rho, atol=0.12)
    # New models: each its own task standard errors and errors with that correlation.
    se = rng.uniform(0.01, 0.05, size=(5000, k))
    truth = rng.uniform(0.2, 0.8, size=(5000, k))
    est = truth + _errors(rng, 5000, R, 1.0) * se
    w = np.full(k, 1 / k)
    cover = {}
    for name, corr in (("combined", R_hat), ("independent", None)):
        _, lo, hi, _ = benchmark_interval(est, se, w, 0.9, corr)
        cover[name] = np.mean((lo <= truth @ w) & (truth @ w <= hi))
    assert 0.87 <= cover["combined"] <= 0.93 and cover["independent"] < 0.80


def test_independent_errors_keep_the_independent_interval():
    rng = np.random.default_rng(1)
    R_hat, lam = shrunk_correlation(rng.standard_normal((300, 3)))
    assert lam > 0.5 and np.abs(R_hat - np.eye(3)).max() < 0.05
    est, se, w = np.array([0.5, 0.6, 0.7]), np.array([0.02, 0.03, 0.04]), np.array([0.2, 0.3, 0.5])
    e, lo, hi, s = benchmark_interval(est, se, w, 0.9)
    assert e == pytest.approx(w @ est) and s == pytest.approx(np.sqrt(np.sum((w * se) ** 2)))
    assert hi - e == pytest.approx(_z(0.9) * s)
    # A negative correlation does not narrow the interval below the independent one.
    neg = np.full((3, 3), -0.4) + 1.4 * np.eye(3)
    assert benchmark_interval(est, se, w, 0.9, neg)[3] == pytest.approx(s)


def test_one_standard_error_rule_for_every_interval():
    z = _z(0.9)
    # The estimator's own standard error first (a skew-corrected interval is not symmetric) ...
    assert task_standard_error(0.1, 0.5, 0.07, 0.9) == pytest.approx(0.07)
    # ... else a radius interval's half-width over the normal quantile (not Student's t).
    assert task_standard_error(0.1, 0.5, None, 0.9) == pytest.approx(0.2 / z)
    assert task_standard_error(np.array([0.1, 0.3]), np.array([0.5, 0.3]), np.array([np.nan, np.nan]),
                               0.9).tolist() == pytest.approx([0.2 / z, 0.0])


def test_design_based_estimators_record_independence_without_estimating():
    block = correlation_block({}, ["a", "b"], [], "aipw", design_based=True)
    assert block["matrix"] == [[1.0, 0.0], [0.0, 1.0]] and block["n_errors"] == 0


# -- the manifest field --------------------------------------------------------------------------------------
def _store(tmp_path, n_models=30, n_items=60, tasks=("t1", "t2", "t3")):
    """An item-response table per task of one benchmark: 0/1 answers from a shared ability, ingested."""
    rng = np.random.default_rng(3)
    ability = rng.normal(size=n_models + 1)
    folder = tmp_path / "bench"
    folder.mkdir()
    for j, task in enumerate(tasks):
        diff = rng.normal(size=n_items) + 0.3 * j
        p = 1 / (1 + np.exp(-(ability[:, None] - diff[None, :])))
        Y = (rng.random(p.shape) < p).astype(float)
        pd.DataFrame({"model": np.repeat([f"m{i:02d}" for i in range(n_models + 1)], n_items),
                      "item": np.tile(np.arange(n_items), n_models + 1), "score": Y.ravel()}).query(
            f"model != 'm{n_models:02d}'").to_parquet(folder / f"{task}.parquet", index=False)
        pd.DataFrame({"item": np.arange(n_items), "score": Y[-1]}).to_parquet(tmp_path / f"new_{task}.parquet")
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(folder)]) == 0
    return db


@pytest.mark.slow
def test_the_correlation_round_trips_through_the_manifest_and_old_manifests_still_predict(tmp_path, capsys):
    from test_item_loop import _write_logs

    db = _store(tmp_path)
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "12", "--out", str(out), "--no-plot"]) == 0
    again = tmp_path / "again"
    assert main(["reduce", "--db", str(db), "--items", "12", "--out", str(again), "--no-plot"]) == 0
    assert (again / "manifest.json").read_bytes() == (out / "manifest.json").read_bytes()  # deterministic
    m = load_manifest(out)
    block = m[KEY]
    assert block["estimator"] == "crosstask" and block["tasks"] == ["t1", "t2", "t3"]
    R = np.array(block["matrix"])
    assert R.shape == (3, 3) and np.allclose(R, R.T) and np.allclose(np.diag(R), 1.0)
    assert 0.0 <= block["shrinkage"] <= 1.0 and block["n_errors"] >= 30 and "Schäfer" in block["method"]
    assert json.loads(json.dumps(block)) == json.loads((out / "manifest.json").read_text())[KEY]
    samples = json.loads((out / "harness_ext_reduced_samples.json").read_text())
    scores = {t: pd.read_parquet(tmp_path / f"new_{t}.parquet")["score"] for t in samples}
    _write_logs(tmp_path / "run", "new-model", scores, samples)
    assert "The benchmark's interval combines the tasks' errors with their correlation" in capsys.readouterr().out
    new = predict_items(m, [tmp_path / "run"])
    assert not any("correlation" in w for w in new.warnings)
    # Written before the field existed: it loads, predicts as independent, and says so.
    old = {k: v for k, v in m.items() if k != KEY}
    legacy = predict_items(old, [tmp_path / "run"])
    assert any("records no correlation" in w for w in legacy.warnings)
    assert legacy.aggregate["aggregate"].tolist() == new.aggregate["aggregate"].tolist()
    forced = predict_items(dict(m, **{KEY: dict(block, matrix=np.eye(3).tolist())}), [tmp_path / "run"])
    assert legacy.aggregate["lower"].tolist() == pytest.approx(forced.aggregate["lower"].tolist())
    # A design-based estimator combines its tasks as independent, without a note.
    aipw = predict_items(m, [tmp_path / "run"], estimator="aipw")
    assert not any("correlation" in w for w in aipw.warnings)
    # A malformed field is refused with the reason.
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(dict(m, **{KEY: dict(block, matrix=[[1.0, 2.0], [2.0, 1.0]])})))
    with pytest.raises(HarnessExtError, match="bad.json.*correlation matrix"):
        load_manifest(bad)


def test_the_benchmark_interval_stays_in_the_range_of_a_mean_of_proportions():
    """A model that answered none of the drawn items had the benchmark interval -0.085 to 0.086 (Inspect AI's
    mockllm, run live): an accuracy below 0 says nothing the range does not. Clipped to [0, sum of weights], never so
    that it leaves out the estimate (a new model's logs may hold scores outside [0, 1], which predict says)."""
    from harness_ext.methods.reduction.item_benchmark import benchmark_interval

    est, lo, hi, se = benchmark_interval([0.0, 0.001], [0.05, 0.05], [0.5, 0.5], 0.9)
    assert lo == 0.0 and 0 < hi < 0.1 and se > 0
    est, lo, hi, _ = benchmark_interval([[1.0, 0.99], [0.5, 0.5]], [[0.05, 0.05], [0.05, 0.05]], [0.5, 0.5], 0.9)
    assert hi[0] == 1.0 and lo[0] < 1.0 and lo[1] > 0.4 and hi[1] < 0.6
    est, lo, hi, _ = benchmark_interval([1.2, 1.2], [0.05, 0.05], [0.5, 0.5], 0.9)  # out-of-range logs: kept
    assert est == pytest.approx(1.2) and lo < est <= hi
    _, lo, hi, _ = benchmark_interval([0.0, 0.0], [0.05, 0.05], [0.25, 0.25], 0.9)  # two of four tasks' share
    assert lo == 0.0 and hi <= 0.5


def test_a_benchmark_of_one_task_takes_the_task_interval():
    """With one task the benchmark is the task: its row took the normal quantile around the task's standard error
    while the task's row took Student's t (or a skew-corrected interval), so the two rows of one number disagreed."""
    est, lo, hi, _ = benchmark_interval([0.5], [0.1], [1.0], 0.9, bounds=([0.31], [0.7]))
    assert (est, lo, hi) == (pytest.approx(0.5), pytest.approx(0.31), pytest.approx(0.7))
    est, lo, hi, _ = benchmark_interval([[0.5], [0.2]], [[0.1], [0.1]], [1.0], 0.9, bounds=([[0.3], [0.05]], [[0.7], [0.4]]))
    assert list(lo) == pytest.approx([0.3, 0.05]) and list(hi) == pytest.approx([0.7, 0.4])
    _, lo2, hi2, _ = benchmark_interval([0.5, 0.5], [0.1, 0.1], [0.5, 0.5], 0.9, bounds=([0.0, 0.0], [1.0, 1.0]))
    assert 0.0 < lo2 < hi2 < 1.0  # two tasks: combined, the bounds unused
