"""The full-benchmark score on the harness's own metric, its interval, and the interval level.

Regression tests for what a new user saw: the only full-benchmark estimate was chance-normalised
(Pythia-2.8B's MMLU 0.047 where lm-eval prints acc 0.28), and intervals were 90% only.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import harness_ext as hx
from harness_ext.benchmarks import MMLU_SUBJECTS, MMLU_TEST_SIZES
from harness_ext.errors import HarnessExtError, MethodError
from harness_ext.base import check_level
from harness_ext.methods.reduction.benchmark_score import benchmark_score, z_of


def _entry(name, metric="acc", chance=0.25, benchmark="mmlu", transform="linear", flip=False):
    return {"name": name, "benchmark": benchmark, "metric": metric, "weight": 1.0,
            "normalisation": {"lo": 0.0, "span": 1.0, "flip": flip, "chance": chance, "clip": True,
                              "transform": transform, "ref": 0.0}}


def test_mmlu_score_is_acc_weighted_by_test_questions():
    assert sum(MMLU_TEST_SIZES.values()) == 14042 and set(MMLU_TEST_SIZES) == set(MMLU_SUBJECTS)
    names = ["abstract_algebra", "professional_law", "virology"]
    score, why = benchmark_score({"datasets": [_entry(n) for n in names]})
    assert why is None and score.metric == "acc" and score.name == "mmlu"
    sizes = np.array([100, 1534, 166], dtype=float)
    np.testing.assert_allclose(score.weights, sizes / sizes.sum())
    # raw = 0.25 + 0.75 z per subject, so the score is 0.25 + (0.75 v) . z
    np.testing.assert_allclose(score.offset, 0.25)
    np.testing.assert_allclose(score.normalised_weights, 0.75 * sizes / sizes.sum())
    assert score.constant == pytest.approx(0.25)
    assert "lm-eval's mmlu group" in score.weighting


def test_other_benchmarks_take_the_plain_mean_and_flipped_metrics_map_back():
    score, _ = benchmark_score({"datasets": [_entry("a", "err", 0.0, "mine", flip=True),
                                             _entry("b", "err", 0.0, "mine", flip=True)]})
    np.testing.assert_allclose(score.weights, [0.5, 0.5])
    # lower is better: z = 1 - x, so x = 1 - z
    np.testing.assert_allclose(score.offset, 1.0) and np.testing.assert_allclose(score.slope, -1.0)


@pytest.mark.parametrize("entries, reason", [
    ([_entry("a", "acc"), _entry("b", "f1")], "different metrics"),
    ([_entry("a", transform="elo"), _entry("b")], "non-linear"),
])
def test_no_score_on_one_metric_says_why(entries, reason):
    score, why = benchmark_score({"datasets": entries})
    assert score is None and reason in why


def test_level_is_checked_and_a_percentage_is_named():
    assert check_level(0.8) == 0.8 and z_of(0.9) == pytest.approx(1.6448536269514722)
    with pytest.raises(MethodError, match="a percentage"):
        check_level(90)
    with pytest.raises(MethodError, match=r"in \(0, 1\)"):
        check_level(1.0)


@pytest.mark.slow
def test_extra_aggregate_is_calibrated_as_its_own_aggregate():
    """A second weight vector rides on the same calibration folds: its bounds equal a separate call's."""
    from harness_ext.methods.engine.completion import LowRankCompleter

    rng = np.random.default_rng(0)
    X = np.clip(rng.random((40, 2)) @ rng.random((2, 9)) / 2 + 0.03 * rng.standard_normal((40, 9)), 0, 1)
    new = X[:3].copy()
    new[:, 4:] = np.nan
    w = np.full(9, 1 / 9)
    u = np.linspace(0.02, 0.2, 9)
    # Exact without the frontier step: there the cells' prediction is chosen on the first aggregate's folds, so a
    # separate call with other weights may predict other cells (tested below: the bounds only widen).
    est = LowRankCompleter(random_state=0, frontier=False).fit(X[3:])
    both = est.predict_new_models(new, weights=w, extra_weights=u[None, :])
    alone = LowRankCompleter(random_state=0, frontier=False).fit(X[3:]).predict_new_models(new, weights=u)
    np.testing.assert_allclose(both.extra_aggregate[:, 0], alone.aggregate)
    np.testing.assert_allclose(both.extra_lower[:, 0], alone.aggregate_lower)
    np.testing.assert_allclose(both.extra_upper[:, 0], alone.aggregate_upper)
    plain = LowRankCompleter(random_state=0, frontier=False).fit(X[3:]).predict_new_models(new, weights=w)
    np.testing.assert_allclose(both.aggregate_lower, plain.aggregate_lower)  # the first aggregate is unchanged


def test_extra_aggregate_is_widened_at_the_frontier_like_the_first():
    """A new model beyond the training models: the benchmark score's interval is widened on frontier folds
    calibrated with its own weights, around the cells the frontier step predicts; never narrower than the model
    folds' interval around those cells."""
    from harness_ext.methods.engine.completion import LowRankCompleter

    rng = np.random.default_rng(0)
    X = np.clip(rng.random((40, 2)) @ rng.random((2, 9)) / 2 + 0.03 * rng.standard_normal((40, 9)), 0, 1)
    new = np.clip(X[:3] + 0.3, 0, 1)  # stronger than every training model
    new[:, 4:] = np.nan
    w = np.full(9, 1 / 9)
    u = np.linspace(0.02, 0.2, 9)
    on = LowRankCompleter(random_state=0).fit(X[3:]).predict_new_models(new, weights=w, extra_weights=u[None, :])
    off = LowRankCompleter(random_state=0, frontier=False).fit(X[3:]).predict_new_models(
        new, weights=w, extra_weights=u[None, :])
    flagged = on.frontier != 0
    assert flagged.any()
    np.testing.assert_allclose(on.extra_aggregate[:, 0], on.mean @ u)  # centred on the cells it predicts
    half_on = on.extra_upper[:, 0] - on.extra_lower[:, 0]
    half_off = off.extra_upper[:, 0] - off.extra_lower[:, 0]
    assert (half_on[flagged] >= half_off[flagged] - 1e-12).all()


@pytest.fixture(scope="module")
def toy_reduction(tmp_path_factory):
    """A small reduction of a DataFrame of accuracies (one benchmark, chance 0: no chance file)."""
    rng = np.random.default_rng(3)
    ability = rng.normal(size=(30, 1))
    cols = [f"task_{j}" for j in range(8)]
    acc = 1 / (1 + np.exp(-(ability @ rng.normal(1, 0.3, (1, 8)) + rng.normal(0, 0.5, 8))))
    frame = pd.DataFrame(np.clip(acc + 0.01 * rng.standard_normal(acc.shape), 0, 1), columns=cols,
                         index=[f"m{i}" for i in range(30)])
    red = hx.reduce(frame.iloc[:-1], budget=3, seed=0, n_random_subsets=20)
    return frame, red


def test_api_aggregate_is_on_the_harness_scale_with_the_normalised_beside(toy_reduction):
    frame, red = toy_reduction
    new = frame.iloc[[-1]][red.subset]
    pred = hx.predict(red, new)
    agg = pred.aggregate.iloc[0]
    assert list(pred.aggregate.columns[:5]) == ["model", "metric", "aggregate", "lower", "upper"]
    assert {"normalised", "normalised_lower", "normalised_upper", "normalised_actual"} <= set(pred.aggregate.columns)
    assert agg["aggregate"] == pytest.approx(pred.table["raw"].mean())  # the plain mean of the datasets' metric
    assert agg["lower"] <= agg["aggregate"] <= agg["upper"]
    doc = json.loads(pred.to_json())
    assert doc["interval_level"] == 0.9 and doc["score"]["weighting"] == "unweighted mean over the datasets"
    # --level / level=: every interval narrows together; nothing else moves.
    wide = hx.predict(red, new, level=0.98)
    w = wide.aggregate.iloc[0]
    assert w["aggregate"] == pytest.approx(agg["aggregate"])
    assert w["upper"] - w["lower"] > agg["upper"] - agg["lower"]
    assert w["normalised_upper"] - w["normalised_lower"] > agg["normalised_upper"] - agg["normalised_lower"]
    assert "98% interval" in str(wide)
    with pytest.raises(HarnessExtError, match="percentage"):
        hx.predict(red, new, level=90)


def test_plot_shows_the_score_on_the_harness_metric(toy_reduction):
    """The plot once showed only the normalised aggregate: its full-benchmark panel is the score on the harness's
    metric, with its interval, labelled with the metric."""
    frame, red = toy_reduction
    pred = hx.predict(red, frame.iloc[[-1]][red.subset])
    agg = pred.aggregate.iloc[0]
    fig = pred.plot()
    panel = fig.axes[1]
    assert panel.get_ylabel() == f"{pred.score['benchmark']} {agg['metric']}"
    assert panel.get_title() == f"{agg['aggregate']:.3f} [{agg['lower']:.3f}, {agg['upper']:.3f}]"


def test_plot_legend_hides_no_data(toy_reduction):
    """The legends sat inside the panels (lower right, 'best') and hid a dataset's point and the estimate's
    upper whisker. The legend is now one, below the panels, and names only what is drawn."""
    frame, red = toy_reduction
    pred = hx.predict(red, frame.iloc[[-1]][red.subset])
    fig = pred.plot()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    [legend] = fig.legends
    box = legend.get_window_extent(renderer)
    assert all(not ax.legend_ for ax in fig.axes)
    for ax in fig.axes:
        assert not box.overlaps(ax.get_window_extent(renderer)), ax.get_title()
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels.count("actual") <= 1 and any(lab.startswith("predicted") for lab in labels)
    assert fig.axes[0].get_xlabel() == "normalised score"


@pytest.mark.slow
def test_cli_predict_level(tmp_path, capsys):
    from harness_ext.cli import main
    from test_reduced_folder import _write_population

    pop = _write_population(tmp_path / "pop", n_models=10)
    new = _write_population(tmp_path / "new", n_models=1, seed=7)
    db, red = tmp_path / "s.duckdb", tmp_path / "reduced"
    assert main(["ingest", "--db", str(db), str(pop)]) == 0
    assert main(["reduce", "--db", str(db), "--budget", "2", "--n-random", "20", "--out", str(red)]) == 0
    capsys.readouterr()
    out = tmp_path / "p.json"
    assert main(["predict", "-m", str(red), str(new), "--level", "0.8", "--json", str(out), "--no-lm-eval-results"]) == 0
    printed = capsys.readouterr().out
    assert "80% interval" in printed
    # The printed table leads with the score on the harness's metric (lm-eval's acc here), the normalised beside it.
    assert "full-benchmark estimate: " in printed and " acc (unweighted mean over the datasets)" in printed
    doc = json.loads(out.read_text())
    assert doc["interval_level"] == 0.8 and "80% conformal" in doc["method"]
    assert main(["predict", "-m", str(red), str(new), "--level", "80", "--no-lm-eval-results"]) == 1
    assert "percentage" in capsys.readouterr().err


def test_only_a_level_that_reads_as_a_percentage_gets_the_percentage_hint():
    for level, hint in ((95, "use 0.95"), (50, "use 0.5"), (1.5, None), (100, None), (250, None)):
        with pytest.raises(MethodError) as err:
            check_level(level)
        assert (hint in str(err.value)) if hint else "percentage" not in str(err.value)
