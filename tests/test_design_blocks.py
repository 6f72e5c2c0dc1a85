"""The design's expected figures and the item working model give the same numbers however the work is split.

``design_expected`` combines the benchmark a block of draws at a time (it once held every draw of every model and
task: 7.6 GB for 838 models x 57 tasks); ``logistic_working`` reuses its design's outer products across Newton
steps. Both must be the computation they replace, to the bit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness_ext.methods.engine import item_irt
from harness_ext.methods.engine.item_working import logistic_working
from harness_ext.methods.reduction import item_design_only
from harness_ext.methods.reduction.item_design_only import design_expected


def _tasks(n_models=23, seed=0):
    rng = np.random.default_rng(seed)
    idx = [f"m{i}" for i in range(n_models)]
    tasks = {t: {"n_items": int(n), "scores": pd.Series(rng.uniform(0.05, 0.95, n_models), index=idx)}
             for t, n in zip("abcd", (200, 90, 31, 1000))}
    tasks["b"]["scores"].iloc[2] = np.nan  # a gap: that model leaves the benchmark's figures
    return tasks, {"a": 50, "b": 40, "c": 31, "d": 7}, {"a": 1.0, "b": 2.0, "c": 1.0, "d": 3.0}


def test_the_benchmark_figures_do_not_depend_on_the_block_of_draws(monkeypatch):
    tasks, n_run, w = _tasks()
    whole = design_expected(tasks, n_run, w, 0.9, 1, draws=300)
    for block in (1, 22 * 4 + 5, 10 ** 9):  # one draw's cell at a time, blocks that split a draw, one block
        monkeypatch.setattr(item_design_only, "_BLOCK", block)
        assert design_expected(tasks, n_run, w, 0.9, 1, draws=300) == whole
    assert whole["interpolation"]["benchmark"]["n_models"] == 22
    assert whole["extrapolation"]["benchmark"]["n_models"] == round(0.3 * 22)
    assert all(f["mean_abs_error"] == 0.0 for f in (whole["interpolation"]["tasks"]["c"],))  # c measured whole


def test_one_task_takes_its_own_interval_in_every_block(monkeypatch):
    tasks, n_run, w = _tasks()
    one = {"a": tasks["a"]}
    whole = design_expected(one, {"a": 9}, {"a": 1.0}, 0.9, 2, draws=101)
    monkeypatch.setattr(item_design_only, "_BLOCK", 7)
    got = design_expected(one, {"a": 9}, {"a": 1.0}, 0.9, 2, draws=101)
    assert got == whole
    for split in ("interpolation", "extrapolation"):
        assert got[split]["benchmark"] == got[split]["tasks"]["a"]


def test_logistic_working_reuses_the_outer_products_to_the_bit(monkeypatch):
    rng = np.random.default_rng(3)
    X, X_all = rng.normal(size=(60, 5)), rng.normal(size=(80, 5))
    R = (rng.random((7, 60)) < 0.6).astype(float)
    R[1, 4] = np.nan
    prec = np.r_[np.ones(3), np.full(2, 1e-2)]
    got = logistic_working(X, R, X_all, prec)
    steps = item_irt._newton_rows

    def per_step(*a, XX=None, **kw):  # the products rebuilt at every step, as before
        return steps(*a, **kw)

    monkeypatch.setattr("harness_ext.methods.engine.item_working._newton_rows", per_step)
    assert np.array_equal(logistic_working(X, R, X_all, prec), got)
