"""Item-level estimators: intervals cover at their nominal rate on synthetic data with a known truth."""

import numpy as np
import pytest

from harness_ext.methods.engine.item_estimators import AIPW, AIPWPaper, AnchorWeighted, RandomLearn, SampleMean, random_items


def _population(n_models=160, n_items=800, seed=0, shift=0.0):
    """0/1 answers to one fixed set of items from a two-dimensional logistic item-response model.

    ``seed`` draws the models (abilities and answers); ``shift`` raises every ability.
    """
    items = np.random.default_rng(12345)
    a = items.gamma(2.0, 0.6, size=(n_items, 2))
    b = items.normal(size=n_items)
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(n_models, 2)) + shift
    p = 1 / (1 + np.exp(-(theta @ a.T - b)))
    return (rng.random(p.shape) < p).astype(float), p


def _coverage(est_cls, targets_shift=0.0, n_items=50, seeds=30):
    S, _ = _population(seed=1)
    T, P = _population(n_models=40, seed=2, shift=targets_shift)
    # The estimand is each target's mean over the task's items (its realised answers).
    truth = T.mean(axis=1)
    hits = []
    for seed in range(seeds):
        items = random_items(S.shape[1], n_items, seed)
        res = est_cls().fit(S, items).predict(T[:, items])
        hits.append((res.lower <= truth) & (truth <= res.upper))
    return float(np.mean(hits))


@pytest.mark.parametrize("est", [SampleMean, AIPW])
@pytest.mark.parametrize("shift", [0.0, 1.5])
def test_design_based_intervals_cover_whatever_the_model(est, shift):
    # shift=1.5 puts every target beyond the source population: design-based intervals still hold.
    assert 0.85 <= _coverage(est, targets_shift=shift) <= 0.95


def test_random_learn_covers_models_like_its_sources():
    # Its conformal interval is exchangeable only with the source models: no claim at the frontier.
    assert 0.85 <= _coverage(RandomLearn) <= 0.95


def test_aipw_paper_matches_its_closed_form():
    S, _ = _population(n_models=30, n_items=200, seed=3)
    items = random_items(200, 20, 0)
    y = S[:3][:, items]
    est = AIPWPaper().fit(S[3:], items).predict(y)
    from sklearn.linear_model import Ridge

    rest = np.setdiff1d(np.arange(200), items)
    for i in range(3):
        r = Ridge(alpha=10).fit(S[3:, items].T, y[i])
        want = y[i].mean() + (r.predict(S[3:, rest].T).mean() - r.predict(S[3:, items].T).mean()) / (1 + 20 / 180)
        assert est.estimate[i] == pytest.approx(want, abs=1e-9)


def test_random_items_is_the_reference_draw():
    assert list(random_items(10, 3, 0)) == list(np.random.RandomState(0).permutation(10)[:3])


def test_anchor_weights_sum_to_one_and_are_deterministic():
    S, _ = _population(n_models=40, n_items=300, seed=4)
    a1, a2 = AnchorWeighted(), AnchorWeighted()
    i1, i2 = a1.select(S, 25, 0), a2.select(S, 25, 0)
    assert list(i1) == list(i2)
    assert a1.weights_.sum() == pytest.approx(1.0)


def test_registered_item_estimators_are_the_module_table():
    from harness_ext.methods.engine.item_estimators import ESTIMATORS
    from harness_ext.plugin_manager import get_registrations

    regs = get_registrations("item_estimators")
    assert set(regs) == set(ESTIMATORS)
    assert all(regs[n].cls is ESTIMATORS[n] for n in regs)
