"""`crosstask` on a task the benchmark's other tasks do not carry: a target beyond the sources on those tasks gets the
mean of the design part and this task's own composite (item_agreement), read from the sources' rank agreement."""

import os
from pathlib import Path

import numpy as np
import pytest

from harness_ext.methods.engine.item_agreement import (AGREEMENT_THRESHOLD, MIN_AGREEMENT_MODELS, agreement_estimate,
                                                       sources_agreement)
from harness_ext.methods.engine.item_crosstask import CrossTask
from harness_ext.methods.engine.item_estimators import random_items


def _benchmark(n_models, seed, shift=0.0, n_items=200, own_weight=1.0):
    """0/1 answers to task 0 and two other tasks: task 0's ability is ``own_weight`` x its own plus the shared one
    (raised by ``shift``) x (1 - ``own_weight``); the other tasks follow the shared ability alone."""
    rng_items, rng = np.random.default_rng(4321), np.random.default_rng(seed)
    own, shared = rng.normal(size=n_models), rng.normal(size=n_models) + shift
    tasks = []
    for theta in (own_weight * own + (1 - own_weight) * shared, shared, shared):
        a, b = rng_items.gamma(4.0, 0.3, size=n_items), rng_items.normal(size=n_items)
        p = 1 / (1 + np.exp(-(theta[:, None] * a - b)))
        tasks.append((rng.random(p.shape) < p).astype(float))
    return tasks


def _fit_predict(source, target, n=30):
    items = [random_items(S.shape[1], n, 100 * k) for k, S in enumerate(source)]
    est = CrossTask().fit(source[0], items[0], others=[(S, it) for S, it in zip(source[1:], items[1:])])
    others = [T[:, it] for T, it in zip(target[1:], items[1:])]
    res = est.predict(target[0][:, items[0]], others=others)
    return est, res, est.design_.predict(target[0][:, items[0]], others=others), target[0][:, items[0]]


def test_sources_agreement_reads_the_rank_correlation_with_the_other_tasks():
    agree = _benchmark(60, seed=1, own_weight=0.0)
    apart = _benchmark(60, seed=1, own_weight=1.0)
    it = np.arange(10)
    assert sources_agreement(agree[0], [(agree[1], it), (agree[2], it)]) > 0.9
    assert abs(sources_agreement(apart[0], [(apart[1], it), (apart[2], it)])) < AGREEMENT_THRESHOLD
    assert np.isnan(sources_agreement(agree[0], []))
    few = MIN_AGREEMENT_MODELS - 1
    assert np.isnan(sources_agreement(agree[0][:few], [(agree[1][:few], it)]))


def test_agreement_estimate_moves_only_flagged_targets():
    out = agreement_estimate(np.array([0.5, 0.5]), np.array([0.6, 0.6]), np.array([0.8, 0.8]), np.array([True, False]))
    assert np.allclose(out, [0.7, 0.5])


def test_a_task_the_others_do_not_carry_gives_flagged_targets_the_mean_of_design_and_own():
    source = _benchmark(80, seed=1)
    est, res, design, Y = _fit_predict(source, _benchmark(20, seed=2, shift=3.0))
    assert est.agreement_ < AGREEMENT_THRESHOLD and est.own_ is not None
    b = est.beyond_sources_
    assert b.mean() > 0.5
    own = est.own_.predict(Y).estimate
    assert np.allclose(res.estimate[b], 0.5 * (design.estimate[b] + own[b]))
    # the interval is the composite's, widened to cover the design part's, as without the rule
    assert np.all(res.lower[b] <= design.lower[b] + 1e-12) and np.all(res.upper[b] >= design.upper[b] - 1e-12)
    # a target not flagged keeps the composite's estimate
    est.own_ = None
    plain = est.predict(Y, others=[T[:, it] for T, it in zip(_benchmark(20, seed=2, shift=3.0)[1:],
                                                               [random_items(200, 30, 100 * k) for k in (1, 2)])])
    assert np.allclose(res.estimate[~b], plain.estimate[~b]) and not np.allclose(res.estimate[b], plain.estimate[b])


def test_a_task_the_others_carry_keeps_the_composite():
    source = _benchmark(80, seed=1, own_weight=0.0)
    est, _, _, _ = _fit_predict(source, _benchmark(20, seed=2, shift=3.0, own_weight=0.0))
    assert est.agreement_ >= AGREEMENT_THRESHOLD and est.own_ is None


SHARED = Path(os.environ.get("HARNESS_EXT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


@pytest.mark.skipif(not (SHARED / "items").is_dir(), reason="needs ../shared/data/items")
def test_real_tables_sort_as_measured():
    """The Open LLM Leaderboard v2's MuSR ranks its models apart from IFEval and MATH-hard (the rule acts); HELM Lite's
    MMLU follows its other tasks (it does not): all 428 and 83 models as sources."""
    import pandas as pd

    def agreement(folder, task, others):
        tables = {t: pd.read_parquet(f) for t, f in ((t, next((SHARED / "items" / folder).glob(f"*{t}*.parquet")))
                                                     for t in (task, *others))}
        wide = {t: df.pivot_table(index="model", columns="item", values="score") for t, df in tables.items()}
        models = sorted(set.intersection(*(set(w.index) for w in wide.values())))
        arr = {t: w.loc[models].to_numpy(float) for t, w in wide.items()}
        return sources_agreement(arr[task], [(arr[t], np.arange(5)) for t in others])

    assert agreement("open_llm_v2", "musr", ("ifeval", "math")) < AGREEMENT_THRESHOLD
    assert agreement("helm_lite", "mmlu", ("gsm", "med_qa", "math", "commonsense")) >= AGREEMENT_THRESHOLD
