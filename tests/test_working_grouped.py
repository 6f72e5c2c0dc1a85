"""The working logit through its design's structure is the dense one's computation to rounding.

``logistic_working_grouped`` fits ``[features, one-hot(task)]`` without forming the one-hot block: each Newton
step costs observations x features**2 per target where the dense design costs observations x (features +
tasks)**2, so ``crosstask``'s held-out fits no longer grow with the fourth power of a benchmark's tasks.
"""

from __future__ import annotations

import numpy as np

from harness_ext.methods.engine import item_crosstask
from harness_ext.methods.engine.item_crosstask import DifficultyAIPW, SelectedAIPW
from harness_ext.methods.engine.item_working import logistic_working, logistic_working_grouped


def _design(k, d=2, seed=0, sizes=None):
    rng = np.random.default_rng(seed)
    sizes = sizes or [12] + [9] * (k - 1)
    group = np.repeat(np.arange(k), sizes)
    F, F_all = rng.normal(size=(len(group), d)), rng.normal(size=(40, d))
    R = (rng.random((6, len(group))) < 0.6).astype(float)
    R[0, 3] = R[2, -1] = np.nan  # answers missing: left out of the likelihood
    prec = np.r_[np.full(d, 1.0), np.full(k, 1e-2)]
    X = np.hstack([F, np.eye(k)[group]])
    X_all = np.hstack([F_all, np.eye(k)[np.zeros(len(F_all), dtype=int)]])
    return F, group, R, F_all, prec, X, X_all


def test_the_grouped_logit_is_the_dense_one_to_rounding():
    for k, d, sizes in ((1, 2, None), (3, 2, None), (20, 2, None), (20, 4, None), (4, 2, [10, 0, 7, 5])):
        F, group, R, F_all, prec, X, X_all = _design(k, d, sizes=sizes)  # (4, ..): a task without rows
        dense = logistic_working(X, R, X_all, prec)
        got = logistic_working_grouped(F, group, R, F_all, prec, k)
        assert got.shape == dense.shape
        np.testing.assert_allclose(got, dense, rtol=0, atol=1e-12)


def test_the_grouped_logit_takes_rows_in_any_order():
    F, group, R, F_all, prec, _, _ = _design(5)
    order = np.random.default_rng(1).permutation(len(group))
    np.testing.assert_allclose(logistic_working_grouped(F[order], group[order], R[:, order], F_all, prec, 5),
                               logistic_working_grouped(F, group, R, F_all, prec, 5), rtol=0, atol=1e-12)


def _benchmark(n_tasks, n_models=30, n_items=60, n=12, seed=0):
    rng = np.random.default_rng(seed)
    ability = rng.normal(size=n_models)
    tasks = [(rng.random((n_models, n_items)) < 1 / (1 + np.exp(-(ability[:, None] - rng.normal(size=n_items)))))
             .astype(float) for _ in range(n_tasks)]
    items = [np.sort(rng.choice(n_items, n, replace=False)) for _ in range(n_tasks)]
    return tasks, items


def test_crosstask_working_models_agree_on_either_path(monkeypatch):
    tasks, items = _benchmark(18)
    others = list(zip(tasks[1:], items[1:]))
    fit_o, pred_o = [(S[:24], it) for S, it in others], [S[24:][:, it] for S, it in others]
    for cls in (DifficultyAIPW, SelectedAIPW):
        got = {}
        for switch in (10 ** 6, 1):  # the dense design everywhere, the grouped one everywhere
            monkeypatch.setattr(item_crosstask, "GROUPED_FROM", switch)
            got[switch] = cls().fit(tasks[0][:24], items[0], others=fit_o).predict(tasks[0][24:][:, items[0]],
                                                                                   others=pred_o)
        for field in ("estimate", "lower", "upper", "se"):
            np.testing.assert_allclose(getattr(got[1], field), getattr(got[10 ** 6], field), rtol=0, atol=1e-10)


def test_reduce_items_moves_a_bar_over_its_held_out_estimates(tmp_path, monkeypatch):
    import pandas as pd

    import harness_ext as hx
    from harness_ext import report
    from harness_ext.cli import main

    rng = np.random.default_rng(2)
    folder = tmp_path / "bench"
    folder.mkdir()
    for task in ("a", "b", "c"):
        Y = (rng.random((12, 40)) < 0.6).astype(float)
        pd.DataFrame({"model": np.repeat([f"m{i:02d}" for i in range(12)], 40), "item": np.tile(np.arange(40), 12),
                      "score": Y.ravel()}).to_parquet(folder / f"{task}.parquet", index=False)
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(folder)]) == 0
    bars = []

    class Bar:
        def __init__(self, iterable=None, total=None, desc="", disable=None):
            self.total, self.desc, self.n, self.closed = total, desc, 0, False
            bars.append(self)

        def update(self, n=1):
            self.n += n

        def set_postfix_str(self, s):
            pass

        def close(self):
            self.closed = True

    monkeypatch.setattr(report, "progress", Bar)
    hx.reduce_items(db, 10, estimator="sample_mean", seed=0)
    held = [b for b in bars if b.desc.startswith("held-out estimates")]
    assert len(held) == 1 and held[0].total == 6 and held[0].n == 6 and held[0].closed  # 3 tasks x 2 splits
