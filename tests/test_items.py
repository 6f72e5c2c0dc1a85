"""Anchor items (issue 16): the weighted anchor estimate of a task score, its cross-validated error, determinism."""

from __future__ import annotations

import numpy as np

from harness_ext.methods.items import anchor_error, anchor_items


def _responses(n_items=200, n_models=30, seed=0):
    rng = np.random.default_rng(seed)
    ability, difficulty = rng.normal(size=n_models), rng.normal(size=n_items)
    p = 1 / (1 + np.exp(-(ability[None, :] - difficulty[:, None])))
    return (rng.random((n_items, n_models)) < p).astype(float)


def test_anchors_estimate_task_scores_better_than_random_items():
    P = _responses()
    idx, w = anchor_items(P, 20, random_state=0)
    assert len(idx) == len(w) <= 20 and np.isclose(w.sum(), 1) and (np.diff(idx) > 0).all()
    again = anchor_items(P, 20, random_state=0)
    assert (again[0] == idx).all() and np.allclose(again[1], w)
    err = anchor_error(P, 20, random_state=0)
    rng = np.random.default_rng(1)
    truth = P.mean(axis=0)
    rand = [np.sqrt(np.mean((P[rng.choice(len(P), 20, replace=False)].mean(axis=0) - truth) ** 2)) for _ in range(50)]
    assert 0 < err < np.mean(rand)


def test_missing_answers_are_filled_not_fatal():
    P = _responses()
    P[::7, 3] = np.nan
    idx, w = anchor_items(P, 10)
    assert len(idx) == 10 and np.isfinite(anchor_error(P, 10))
