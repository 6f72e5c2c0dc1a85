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
    from harness_ext.methods.engine import item_crosstask, item_estimators, item_irt_estimators
    from harness_ext.methods.engine.item_designs import DESIGN_ESTIMATORS
    from harness_ext.plugin_manager import get_registrations

    ESTIMATORS = {**item_estimators.ESTIMATORS, **item_irt_estimators.ESTIMATORS, **item_crosstask.ESTIMATORS}
    regs = get_registrations("item_estimators")
    table = {**ESTIMATORS, **DESIGN_ESTIMATORS}
    assert set(regs) == set(table)
    assert all(regs[n].cls is table[n] for n in regs)


# --- the IRT family (Polo et al. 2024) and IRT-assisted AIPW --------------------------------------------

def _irt_population(n_models=120, n_items=400, dims=1, seed=0, shift=0.0):
    """0/1 answers from a known 2PL model: returns answers, abilities, loadings and difficulties."""
    items = np.random.default_rng(777)
    A = items.gamma(4.0, 0.3, size=(n_items, dims))
    b = items.normal(size=n_items)
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(n_models, dims)) + shift
    p = 1 / (1 + np.exp(-(theta @ A.T - b)))
    return (rng.random(p.shape) < p).astype(float), theta, A, b


def test_fit_2pl_recovers_known_item_parameters():
    from harness_ext.methods.engine.item_irt import fit_2pl

    R, theta, A, b = _irt_population(n_models=400, n_items=60)
    A_hat, b_hat, th_hat = fit_2pl(R, dims=1)
    # One dimension is identified up to its sign; the prior on theta fixes the scale.
    sign = np.sign(np.corrcoef(A_hat[:, 0], A[:, 0])[0, 1])
    assert np.corrcoef(sign * A_hat[:, 0], A[:, 0])[0, 1] > 0.85
    assert np.corrcoef(b_hat, b)[0, 1] > 0.95
    assert np.corrcoef(sign * th_hat[:, 0], theta[:, 0])[0, 1] > 0.95


def test_fit_2pl_ignores_missing_answers_and_is_deterministic():
    from harness_ext.methods.engine.item_irt import _CACHE, fit_2pl

    R, *_ = _irt_population(n_models=60, n_items=50)
    R2 = R.copy()
    R2[0, :10] = np.nan
    _CACHE.clear()
    A1, b1, _ = fit_2pl(R2, dims=2)
    _CACHE.clear()
    A2, b2, _ = fit_2pl(R2, dims=2)
    assert np.isfinite(A1).all() and np.array_equal(A1, A2) and np.array_equal(b1, b2)


def test_pirt_with_true_parameters_is_close_to_the_truth():
    from harness_ext.methods.engine.item_irt import pirt_estimates

    R, theta, A, b = _irt_population(n_models=50, n_items=400)
    items = random_items(400, 50, 0)
    irt, pirt, sd_irt, sd_pirt, P = pirt_estimates(R[:, items], items, A, b)
    truth = R.mean(axis=1)
    assert np.mean(np.abs(pirt - truth)) < np.mean(np.abs(R[:, items].mean(axis=1) - truth))
    # The model-based sd is the right size: standardised errors about N(0, 1).
    z = (pirt - truth) / sd_pirt
    assert 0.5 < np.sqrt(np.mean(z ** 2)) < 2.0
    assert P.shape == (50, 400)


def test_pirt_keeps_the_answered_items():
    from harness_ext.methods.engine.item_irt import pirt_estimates

    R, theta, A, b = _irt_population(n_models=5, n_items=30)
    items = np.arange(30)
    _, pirt, *_ = pirt_estimates(R, items, A, b)
    assert pirt == pytest.approx(R.mean(axis=1))


def test_gpirt_lambda_is_a_weight_and_mixes_its_parts():
    from harness_ext.methods.engine.item_irt_estimators import GPIRT, PIRT

    S, *_ = _irt_population(seed=1)
    T, *_ = _irt_population(n_models=10, seed=2)
    items = random_items(400, 40, 0)
    g = GPIRT(dims=1).fit(S, items)
    p = PIRT(dims=1).fit(S, items)
    assert 0.0 <= g.lambda_ <= 1.0
    want = g.lambda_ * T[:, items].mean(axis=1) + (1 - g.lambda_) * p.predict(T[:, items]).estimate
    assert g.predict(T[:, items]).estimate == pytest.approx(want)


def _irt_coverage(est_cls, shift=0.0, seeds=12, n_items=50, **params):
    S, *_ = _irt_population(seed=1)
    T, *_ = _irt_population(n_models=30, seed=2, shift=shift)
    truth = T.mean(axis=1)
    hits, errs = [], []
    for seed in range(seeds):
        items = random_items(S.shape[1], n_items, seed)
        res = est_cls(**params).fit(S, items).predict(T[:, items])
        hits.append((res.lower <= truth) & (truth <= res.upper))
        errs.append(np.abs(res.estimate - truth))
    return float(np.mean(hits)), float(np.mean(errs))


@pytest.mark.parametrize("name", ["pirt", "gpirt"])
def test_irt_intervals_cover_models_like_the_population(name):
    from harness_ext.methods.engine.item_irt_estimators import ESTIMATORS

    cover, err = _irt_coverage(ESTIMATORS[name], dims=1)
    _, err_mean = _irt_coverage(SampleMean)
    assert 0.82 <= cover <= 0.98
    assert err < err_mean  # the right model beats the plain mean


@pytest.mark.parametrize("shift", [0.0, 1.5])
def test_aipw_irt_is_design_based_whatever_the_model(shift):
    from harness_ext.methods.engine.item_irt_estimators import AIPWIRT

    cover, _ = _irt_coverage(AIPWIRT, shift=shift, dims=1)
    assert 0.82 <= cover <= 0.98


def test_crosstask_aipw_uses_the_other_tasks_and_checks_them():
    from harness_ext.methods.engine.item_irt_estimators import AIPWIRT, CrossTaskAIPW

    # Two tasks sharing one ability: the other task's sampled items sharpen the working model.
    R, *_ = _irt_population(n_models=90, n_items=300, seed=3)
    S, T = R[:70], R[70:]
    a, o = np.arange(150), np.arange(150, 300)
    items, other = random_items(150, 30, 0), random_items(150, 60, 1)
    est = CrossTaskAIPW(dims=1).fit(S[:, a], items, others=[(S[:, o], other)])
    res = est.predict(T[:, a][:, items], others=[T[:, o][:, other]])
    assert res.estimate.shape == (20,) and np.all(res.lower <= res.upper)
    alone = CrossTaskAIPW(dims=1).fit(S[:, a], items).predict(T[:, a][:, items])
    plain = AIPWIRT(dims=1).fit(S[:, a], items).predict(T[:, a][:, items])
    assert alone.estimate == pytest.approx(plain.estimate)
    with pytest.raises(ValueError, match="other tasks"):
        est.predict(T[:, a][:, items])
    with pytest.raises(ValueError, match="align the rows"):
        CrossTaskAIPW(dims=1).fit(S[:, a], items, others=[(S[:60, o], other)])


def test_irt_estimators_refuse_non_binary_scores():
    from harness_ext.methods.engine.item_irt_estimators import PIRT

    S = np.random.default_rng(0).random((30, 100))
    with pytest.raises(ValueError, match="0/1 item scores"):
        PIRT().fit(S, random_items(100, 20, 0))


def test_irt_estimators_pass_the_plugin_contract():
    from harness_ext.plugin_manager import get_registrations
    from harness_ext.testing import check_item_estimator_interval, check_item_estimator_params

    regs = get_registrations("item_estimators")
    for name in ("irt", "pirt", "gpirt", "aipw_irt", "aipw_crosstask"):
        check_item_estimator_params(regs[name])
        check_item_estimator_interval(regs[name])


@pytest.mark.slow
def test_pirt_beats_the_sample_mean_on_real_items():
    from conftest import SHARED_DATA, require

    pd = pytest.importorskip("pandas")
    from harness_ext.methods.engine.item_irt_estimators import PIRT

    df = pd.read_parquet(require(SHARED_DATA / "items" / "helm_lite" / "gsm.parquet"))
    M = df.pivot(index="model", columns="item", values="score").to_numpy(dtype=float)
    targets = np.random.RandomState(0).permutation(len(M))[:20]
    S, T = np.delete(M, targets, axis=0), M[targets]
    errs, base = [], []
    for seed in range(3):
        items = random_items(M.shape[1], 50, seed)
        errs.append(np.abs(PIRT().fit(S, items).predict(T[:, items]).estimate - T.mean(1)).mean())
        base.append(np.abs(T[:, items].mean(1) - T.mean(1)).mean())
    assert np.mean(errs) < np.mean(base)
