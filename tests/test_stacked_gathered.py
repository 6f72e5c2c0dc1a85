"""``StackedLearn`` reads the other tasks' answers once per fit, with byte-identical results.

The factor model's columns are taken task by task (the sampled items and evenly spaced others, when a benchmark
has more items than ``max_items``) instead of stacking every item of every task first, and the stack's held-out
kernel refits get the other tasks' sampled answers alone, gathered once per fit. The old constructions are kept
here as the reference: the stack's share, leave-one-out residuals and predictions must be equal bit for bit.
"""

from __future__ import annotations

import numpy as np

from harness_ext.methods.engine.item_factor import FactorKernel, StackedLearn
from harness_ext.methods.engine.item_learn import KernelLearn, _fill_missing
from harness_ext.methods.engine.item_working import logistic_working, logistic_working_grouped


def _benchmark(n_tasks=5, n_models=30, n=10, seed=0):
    rng = np.random.default_rng(seed)
    ability = rng.normal(size=(n_models, 2))
    tasks, items = [], []
    for t in range(n_tasks):
        n_items = 40 + 15 * t
        load = rng.normal(size=(2, n_items))
        S = (rng.random((n_models, n_items)) < 1 / (1 + np.exp(-(ability @ load - rng.normal(size=n_items)))))
        S = S.astype(float)
        if t % 2:  # gaps: filled from the column's mean over the models fitted on
            S[rng.random(S.shape) < 0.03] = np.nan
        tasks.append(S)
        items.append(np.sort(rng.choice(n_items, n, replace=False)))
    return tasks, items


def _old_answers(self, S, others):
    """The construction before: every item of every task stacked (gaps filled), then the kept columns."""
    blocks = [_fill_missing(S, S)[0]] + [_fill_missing(S_k, S_k)[0] for S_k, _ in others]
    ends = np.cumsum([0] + [b.shape[1] for b in blocks])
    observed = np.concatenate([self.items_] + [ends[k + 1] + np.asarray(it) for k, (_, it) in enumerate(others)])
    X = np.hstack(blocks)
    if X.shape[1] <= self.max_items:
        return X, observed
    rest = np.setdiff1d(np.arange(X.shape[1]), observed)
    keep = rest[np.linspace(0, len(rest) - 1, max(0, self.max_items - len(observed))).astype(int)]
    cols = np.concatenate([observed, np.unique(keep)])
    return X[:, cols], np.arange(len(observed))


def _old_held_out(self, X, observed, y, h, sampled=None):
    """The held-out refits before: the kernel given every item of the other tasks, sliced per fold."""
    fit_o = [(S_k[~h], it) for S_k, it in self.others_]
    pred_o = [S_k[h][:, it] for S_k, it in self.others_]
    k = KernelLearn(level=self.level, **KernelLearn.fixed_params(self))._fit_estimate(
        self.source_[~h], self.items_, others=fit_o)._estimate(self.source_[h][:, self.items_], others=pred_o)
    f = FactorKernel(**self.factor_.fixed_params())._fit_estimate(X[~h], observed, y[~h]).predict(X[h][:, observed])
    return k, np.clip(f, *self.score_range_)


def _fit_and_read(tasks, items, max_items):
    others = list(zip(tasks[1:], items[1:]))
    fit_o = [(S[:25], it) for S, it in others]
    st = StackedLearn(max_items=max_items).fit(tasks[0][:25], items[0], others=fit_o)
    est = st.predict(tasks[0][25:][:, items[0]], others=[np.nan_to_num(S[25:][:, it], nan=0.5) for S, it in others])
    return st, (st.share_, st.loo_residuals_, est.estimate, est.lower, est.upper)


def test_the_factor_models_columns_are_the_stacked_ones():
    tasks, items = _benchmark()
    for max_items in (8000, 150, 60):  # every item, and two caps that keep some
        st = StackedLearn(max_items=max_items).fit(tasks[0], items[0], others=list(zip(tasks[1:], items[1:])))
        for rows in (slice(None), np.arange(30) % 3 > 0):
            got = st._answers(tasks[0][rows], [(S[rows], it) for S, it in st.others_])
            old = _old_answers(st, tasks[0][rows], [(S[rows], it) for S, it in st.others_])
            assert got[0].tobytes() == old[0].tobytes() and np.array_equal(got[1], old[1])


def test_the_stack_is_byte_identical_to_the_construction_before(monkeypatch):
    tasks, items = _benchmark()
    for max_items in (8000, 150):
        _, new = _fit_and_read(tasks, items, max_items)
        with monkeypatch.context() as m:
            m.setattr(StackedLearn, "_answers", _old_answers)
            m.setattr(StackedLearn, "_held_out", _old_held_out)
            st, old = _fit_and_read(tasks, items, max_items)
        assert st.factor_ is not None  # the stack's search ran (the factor kernel fitted, the share chosen)
        for a, b in zip(new, old):
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes()


def test_the_grouped_logit_on_many_tasks_is_the_dense_one_to_rounding():
    """57 tasks (MMLU's count), rows in any order, a task without rows: within 1e-10 of the dense design."""
    rng = np.random.default_rng(3)
    k, d = 57, 2
    sizes = rng.integers(5, 20, size=k)
    sizes[[0, 17]] = (12, 0)
    group = rng.permutation(np.repeat(np.arange(k), sizes))
    F, F_all = rng.normal(size=(len(group), d)), rng.normal(size=(30, d))
    R = (rng.random((8, len(group))) < 0.6).astype(float)
    R[1, 5] = R[4, -2] = np.nan
    prec = np.r_[np.full(d, 1.0), np.full(k, 1e-2)]
    dense = logistic_working(np.hstack([F, np.eye(k)[group]]), R, np.hstack([F_all, np.eye(k)[np.zeros(30, int)]]), prec)
    np.testing.assert_allclose(logistic_working_grouped(F, group, R, F_all, prec, k), dense, rtol=0, atol=1e-10)
