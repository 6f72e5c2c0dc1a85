"""The ``benchmark-frontier`` protocol of ``benchmarks/quality_items.py``: targets ranked on the whole benchmark."""

import numpy as np
import pytest


@pytest.fixture(scope="module")
def mod():
    from conftest import import_benchmark

    return import_benchmark("quality_items")


def _benchmark():
    """20 models on two tasks whose orders disagree: model i's mean on task A is i/20, on task B (19 - i)/40
    plus 0.6 for the strongest four on both; NaN where a model lacks task B."""
    m, n = 20, 40
    a = np.zeros((m, n))
    b = np.zeros((m, n))
    for i in range(m):
        a[i, : int(round(n * i / m))] = 1.0
        b[i, : int(round(n * ((19 - i) / 40 + (0.6 if i >= 16 else 0.0))))] = 1.0
    b[3] = np.nan  # a model the other task's table lacks: ranked on task A alone
    return a, b


def test_benchmark_strength_weights_each_task_equally_over_the_tasks_a_model_has(mod):
    a, b = _benchmark()
    s = mod.benchmark_strength(a, [b])
    assert s[3] == pytest.approx(a[3].mean())
    assert s[10] == pytest.approx((a[10].mean() + b[10].mean()) / 2)
    assert np.isnan(mod.benchmark_strength(np.full((2, 3), np.nan))).all()


def test_the_split_follows_the_benchmark_not_the_task(mod):
    a, b = _benchmark()
    strength = mod.benchmark_strength(a, [b])
    src, tgt = mod.split(a, "benchmark-frontier", 0, strength=strength)
    order = np.argsort(strength, kind="stable")
    assert list(tgt) == list(order[-6:]) and list(src) == list(order[:10])
    assert not set(src) & set(tgt)
    # The per-task extrapolation split of task B differs: its own strongest are the weakest on A.
    src_b, tgt_b = mod.split(b[[i for i in range(20) if i != 3]], "extrapolation", 0)
    assert set(tgt) != set(tgt_b)
    # The same models on every task of the benchmark: the split does not read the task's own scores.
    assert [list(x) for x in mod.split(b, "benchmark-frontier", 5, strength=strength)] == [list(src), list(tgt)]
    # The seed does not move it; a share of the sources is drawn as for the other protocols.
    src_f, tgt_f = mod.split(a, "benchmark-frontier", 1, 0.5, strength)
    assert list(tgt_f) == list(tgt) and len(src_f) == 10 and set(src_f) <= set(src)
    with pytest.raises(ValueError, match="mean over the benchmark"):
        mod.split(a, "benchmark-frontier", 0)


def test_run_one_measures_the_benchmark_frontier(mod):
    a, b = _benchmark()
    strength = mod.benchmark_strength(a, [b])
    out = mod.run_one(a, "benchmark-frontier", 10, 0, ["sample_mean"], strength=strength)
    err, cover, width = out["sample_mean"]
    truth = a[mod.split(a, "benchmark-frontier", 0, strength=strength)[1]].mean(axis=1)
    assert err.shape == cover.shape == width.shape == truth.shape == (6,)
    assert np.all(np.isfinite(err)) and np.all(width > 0)


def test_coverage_se_counts_the_held_out_models_as_units(mod):
    """The extrapolation protocol holds out the same models in every seed. When a model is covered in every seed or
    in none, the seeds' spread is 0 but the rate for other such models is as uncertain as 20 models make it: the
    two-way standard error is the models' one (sqrt(p (1 - p) / 20) up to the small-sample factor)."""
    rng = np.random.default_rng(0)
    covered = rng.random(20) < 0.9
    seeds, models = np.repeat(np.arange(10), 20), np.tile(np.arange(20), 10)
    cover = covered[models].astype(float)
    p = cover.mean()
    se = mod._two_way_se(cover, seeds, models)
    assert se == pytest.approx(np.sqrt(p * (1 - p) / 20 * 20 / 19), rel=1e-9)
    # Independent cells: the two-way variance is about the cells' own, never below either one-way variance.
    cells = (rng.random(200) < 0.9).astype(float)
    assert mod._two_way_se(cells, seeds, models) >= np.sqrt(mod._cluster_variance(cells - cells.mean(), seeds))


def test_per_draw_rows_hold_each_draws_error_coverage_and_width(mod, tmp_path):
    err, cover, width = np.array([1.0, 3.0]), np.array([1.0, np.nan]), np.array([0.1, 0.3])
    row = mod.draw_row("helm_lite/gsm", "extrapolation", 50, 7, "stratified/stratified_aipw", err, cover, width)
    assert (row["design"], row["estimator"], row["seed"], row["n_targets"]) == ("stratified", "stratified_aipw", 7, 2)
    assert float(row["mean_abs_err_pts"]) == 2.0 and float(row["coverage"]) == 1.0
    assert float(row["median_width_pts"]) == pytest.approx(0.2)
    bare = mod.draw_row("t", "p", 50, 0, "anchor_weighted", err, np.full(2, np.nan), np.full(2, np.nan))
    assert (bare["design"], bare["coverage"], bare["median_width_pts"]) == ("random", "", "")
    path = tmp_path / "draws.csv"
    mod.write_per_draw(path, [row, bare])
    lines = path.read_text().splitlines()
    assert lines[0].split(",") == list(mod.PER_DRAW_FIELDS) and len(lines) == 3
    assert not list(tmp_path.glob("*.part"))
