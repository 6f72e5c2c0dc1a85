"""Items chosen on cross-validated error (random search + learn): the search and its estimator's interval.

Synthetic populations with a known truth (0/1 answers from a 2PL model): the vectorised search scores every
candidate as a plain ridge fit does, it is seeded, and its estimator's interval covers models like the
population at least at the nominal rate (it is model-based, so only those).
"""

from __future__ import annotations

import numpy as np
import pytest

from harness_ext.methods.engine.item_designs import design_estimator, draw_design
from harness_ext.methods.engine.item_estimators import AIPW
from harness_ext.methods.engine.item_search import SearchLearn, _ridge_val_mae, search_items

from test_item_designs import _population  # 0/1 answers from a 2PL model


@pytest.mark.parametrize("n_train, n_items", [(60, 20), (30, 40)])  # more models than items, and fewer
def test_the_batched_score_is_a_ridge_fit_with_its_leave_one_out_penalty(n_train, n_items):
    from sklearn.linear_model import RidgeCV

    S = _population(n_models=n_train + 20, n_items=400)
    y = S.mean(axis=1)
    rng = np.random.default_rng(0)
    cands = np.stack([rng.permutation(S.shape[1])[:n_items] for _ in range(4)])
    train, val = np.arange(n_train), np.arange(n_train, n_train + 20)
    got = _ridge_val_mae(np.transpose(S[:, cands], (1, 0, 2)), y, train, val, (0.1, 1.0, 10.0))
    for c, g in zip(cands, got):
        ridge = RidgeCV(alphas=(0.1, 1.0, 10.0)).fit(S[train][:, c], y[train])
        assert g == pytest.approx(np.abs(ridge.predict(S[val][:, c]) - y[val]).mean(), rel=1e-8)


def test_search_is_seeded_and_keeps_the_best_candidate():
    S = _population(n_models=80, n_items=400)
    items, err = search_items(S, 25, random_state=3, n_search=200)
    again, err2 = search_items(S, 25, random_state=3, n_search=200)
    assert np.array_equal(items, again) and err == err2
    assert len(items) == 25 and len(np.unique(items)) == 25 and np.all(np.diff(items) > 0)
    # More candidates never choose a worse subset on the same split (the first 200 are the same draws).
    _, err_more = search_items(S, 25, random_state=3, n_search=400)
    assert err_more <= err
    # A budget of the whole task is the task.
    assert np.array_equal(search_items(S[:, :30], 40)[0], np.arange(30))


def test_the_design_takes_only_its_own_estimator():
    S = _population(n_models=80, n_items=400)
    items, info = draw_design("search", S, 20, random_state=1)
    assert np.isfinite(info["search_error"])
    with pytest.raises(ValueError, match="search_learn"):
        design_estimator("search", AIPW, 0.9, info, S, items)
    with pytest.raises(ValueError, match="does not estimate from a simple random sample"):
        design_estimator("random", SearchLearn, 0.9, {}, S, items)


@pytest.mark.slow
def test_interval_covers_models_like_the_population_at_least_at_the_nominal_rate():
    # The radius is the larger of the folds' and the population's frontier's: conservative inside.
    hits, n = 0, 0
    for seed in range(6):
        P = _population(n_models=120, seed=seed)
        S, T = P[:90], P[90:]
        est = SearchLearn(n_search=300, random_state=seed)
        items = est.select(S, 30)
        res = est.fit(S, items).predict(T[:, items])
        truth = T.mean(axis=1)
        hits += int(((res.lower <= truth) & (truth <= res.upper)).sum())
        n += len(truth)
        assert np.all(np.isfinite(res.width))
    assert hits / n >= 0.85, hits / n
