"""Predictor plugins (plugins/predictors.py) on small synthetic low-rank matrices."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import Ridge
from sklearn.neighbors import KNeighborsRegressor

from harness_ext.errors import MethodError
from harness_ext.plugin_manager import get_registrations
from harness_ext.plugins.predictors import (
    PMF,
    BayesianPMF,
    GlobalMean,
    KNNPredictor,
    MeanOfMeans,
    MLP2Predictor,
    MLPPredictor,
    RidgePredictor,
)
from harness_ext.methods.engine.baselines import centring_variance, standardise_columns
from harness_ext.methods.engine.pmf import ProbabilisticTensorFactorization

FAST_BPMF = dict(n_burnin=60, n_samples=80)


def low_rank(m=50, d=12, rank=2, noise=0.02, seed=0):
    rng = np.random.default_rng(seed)
    U = rng.normal(size=(m, rank))
    V = rng.normal(size=(d, rank))
    return U @ V.T + noise * rng.standard_normal((m, d)), U, V


def hide(X, ratio, seed=1):
    rng = np.random.default_rng(seed)
    mask = rng.random(X.shape) < ratio
    out = X.copy()
    out[mask] = np.nan
    return out, mask


def new_models(X, n_new=8, n_obs=4):
    """Training rows complete; the last ``n_new`` rows observed on the first ``n_obs`` columns only."""
    Xo = X.copy()
    Xo[-n_new:, n_obs:] = np.nan
    return Xo, np.s_[-n_new:, n_obs:]


def rmse(a, b):
    return float(np.sqrt(np.mean((np.asarray(a) - np.asarray(b)) ** 2)))


# -- registration -------------------------------------------------------------------------------


def test_registered_names():
    regs = get_registrations("predictors")
    for name in ("ridge", "knn", "mlp_12", "mlp_12_12", "global_mean", "mean_of_means", "pmf", "bpmf"):
        assert name in regs
    assert regs["mlp_12_12"].cls().hidden_layer_sizes == (12, 12)
    assert regs["mlp_12"].cls().hidden_layer_sizes == (12,)


def test_params_clone_with_profile_arrays():
    H = np.ones((5, 2))
    est = BayesianPMF(model_profiles=H, random_state=3)
    c = clone(est)
    assert c.get_params()["random_state"] == 3
    assert np.array_equal(c.model_profiles, H)


# -- regression predictors ------------------------------------------------------------------------


@pytest.mark.parametrize("est,tol", [(RidgePredictor(alpha=1e-3), 0.05), (KNNPredictor(), 0.9),
                                     (MLPPredictor(max_iter=2000), 1.0), (MLP2Predictor(max_iter=2000), 1.0)])
def test_regressors_recover_low_rank(est, tol):
    X, _, _ = low_rank(m=120, d=10, rank=2, noise=0.01)
    Xo, cells = new_models(X, n_new=10, n_obs=4)
    est.fit(Xo)
    base = rmse(np.nanmean(Xo[:-10], axis=0)[4:], X[cells])  # predicting the training column means
    assert rmse(est.mean_[cells], X[cells]) < tol * base
    assert est.std_ is None
    assert np.array_equal(est.mean_[:-10], X[:-10])
    assert np.array_equal(est.mean_[-10:, :4], X[-10:, :4])


def test_ridge_matches_sklearn_per_missingness_pattern():
    X, _, _ = low_rank(m=40, d=7, noise=0.1, seed=2)
    Xo = X.copy()
    Xo[30:34, 3:] = np.nan  # pattern A: first three observed
    Xo[34:37, [0, 2, 5]] = np.nan  # pattern B
    Xo[37, :] = np.nan  # nothing observed
    est = RidgePredictor(alpha=0.7).fit(Xo)
    T = X[np.r_[0:30, 38:40]]  # the complete rows
    ref = Ridge(alpha=0.7).fit(T[:, :3], T[:, 3:]).predict(X[30:34, :3])
    assert np.allclose(est.mean_[30:34, 3:], ref)
    obs = [1, 3, 4, 6]
    ref = Ridge(alpha=0.7).fit(T[:, obs], T[:, [0, 2, 5]]).predict(X[34:37][:, obs])
    assert np.allclose(est.mean_[34:37][:, [0, 2, 5]], ref)
    assert np.allclose(est.mean_[37], T.mean(axis=0))
    assert est.n_train_ == 32


def test_knn_matches_sklearn_and_caps_k_at_training_size():
    X, _, _ = low_rank(m=23, d=6, seed=3)
    Xo = X.copy()
    Xo[20:, 2:] = np.nan
    est = KNNPredictor(n_neighbors=5).fit(Xo)
    ref = KNeighborsRegressor(n_neighbors=5).fit(X[:20, :2], X[:20, 2:]).predict(X[20:, :2])
    assert np.allclose(est.mean_[20:, 2:], ref)
    small = Xo[17:]  # 3 complete rows: k becomes 3, i.e. the training mean
    est = KNNPredictor(n_neighbors=5).fit(small)
    assert np.allclose(est.mean_[3:, 2:], X[17:20, 2:].mean(axis=0))


def test_regressor_without_complete_rows_raises():
    X, _, _ = low_rank(m=10, d=4)
    X[np.arange(10), np.arange(10) % 4] = np.nan
    with pytest.raises(MethodError, match="fully observed row"):
        KNNPredictor().fit(X)


def test_ridge_uses_every_observed_cell_of_a_sparse_training_matrix():
    """No complete row at all (40% of cells missing at random): ridge trains on pairwise-complete cells instead of
    failing or dropping to a dense block, beats column means, and in predict_subsets every training row counts."""
    X, _, _ = low_rank(m=80, d=8, rank=2, noise=0.05, seed=4)
    rng = np.random.default_rng(0)
    Xo = np.where(rng.random(X.shape) < 0.4, np.nan, X)
    Xo[(~np.isnan(Xo)).all(axis=1), 0] = np.nan
    est = RidgePredictor().fit(Xo)
    hidden = np.isnan(Xo)
    base = rmse(np.broadcast_to(np.nanmean(Xo, axis=0), X.shape)[hidden], X[hidden])
    assert rmse(est.mean_[hidden], X[hidden]) < 0.6 * base
    new = np.where(np.arange(8) < 3, X[:5], np.nan)
    [pred] = RidgePredictor().predict_subsets(Xo, new, [[0, 1, 2]])
    [pred_less] = RidgePredictor().predict_subsets(Xo[:40], new, [[0, 1, 2]])
    assert not np.allclose(pred, pred_less)  # the other 40 sparse rows changed the fit: they were used
    assert rmse(pred[:, 3:], X[:5, 3:]) < 0.6 * rmse(np.broadcast_to(np.nanmean(Xo, axis=0)[3:], (5, 5)), X[:5, 3:])


def test_complete_matrix_passes_through():
    X, _, _ = low_rank(m=10, d=4)
    for est in (RidgePredictor(), KNNPredictor(), GlobalMean(), PMF(), BayesianPMF(**FAST_BPMF)):
        est.fit(X)
        assert np.array_equal(est.mean_, X)
        if est.std_ is not None:
            assert np.all(est.std_ == 0)


def test_mlp_deterministic_for_seed():
    X, _, _ = low_rank(m=40, d=6)
    Xo, cells = new_models(X, 5, 3)
    a = MLPPredictor(random_state=4).fit(Xo).mean_
    b = MLPPredictor(random_state=4).fit(Xo).mean_
    c = MLPPredictor(random_state=5).fit(Xo).mean_
    assert np.array_equal(a, b)
    assert not np.allclose(a[cells], c[cells])


# -- baselines ---------------------------------------------------------------------------------------


def test_global_mean_and_mean_of_means_by_hand():
    X = np.array([[1.0, 2.0, np.nan], [3.0, np.nan, 5.0], [np.nan, np.nan, np.nan]])
    gm = GlobalMean(standardize=False).fit(X).mean_
    assert np.allclose(gm[np.isnan(X)], 11 / 4)
    mom = MeanOfMeans(standardize=False).fit(X).mean_
    g = 11 / 4
    assert np.isclose(mom[0, 2], (g + 1.5 + 5.0) / 3)  # model mean 1.5, dataset mean 5
    assert np.isclose(mom[1, 1], (g + 4.0 + 2.0) / 3)
    assert np.isclose(mom[2, 0], (g + 2.0) / 2)  # model with nothing observed
    assert np.array_equal(mom[~np.isnan(X)], X[~np.isnan(X)])


def test_standardised_global_mean_is_the_dataset_mean():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3)) + np.array([0.0, 10.0, -5.0])
    Xo, mask = hide(X, 0.3)
    pred = GlobalMean().fit(Xo).mean_
    col_mean = np.nanmean(Xo, axis=0)
    assert np.allclose(pred[mask], np.broadcast_to(col_mean, X.shape)[mask])


def test_standardise_columns_pools_sparse_columns_within_groups():
    X = np.full((10, 4), np.nan)
    X[:, 0] = np.linspace(0, 1, 10)
    X[:, 1] = np.linspace(-9, -5, 10)
    X[:2, 2] = [0.2, 0.4]  # sparse accuracy-like column
    X[:2, 3] = [-7.0, -6.0]  # sparse BART-like column
    _, mu, sd = standardise_columns(X, min_count=5, groups=["acc", "bart", "acc", "bart"])
    assert np.isclose(mu[0], 0.5) and np.isclose(mu[1], -7.0)
    acc = np.concatenate([X[:, 0], [0.2, 0.4]])
    assert np.isclose(mu[2], acc.mean()) and np.isclose(sd[2], acc.std())
    bart = np.concatenate([X[:, 1], [-7.0, -6.0]])
    assert np.isclose(mu[3], bart.mean())
    _, mu1, _ = standardise_columns(X, min_count=5)
    assert np.isclose(mu1[2], np.nanmean(X))
    with pytest.raises(MethodError):
        standardise_columns(X, groups=["a", "b"])


# -- PMF family --------------------------------------------------------------------------------------


@pytest.mark.parametrize("est", [PMF(n_components=4), BayesianPMF(n_components=4, **FAST_BPMF),
                                 BayesianPMF(n_components=4, hyperprior="fixed", alpha=2.0, **FAST_BPMF)])
def test_factorisations_recover_low_rank(est):
    X, _, _ = low_rank(m=60, d=30, rank=3, noise=0.05)
    Xo, mask = hide(X, 0.3)
    est.fit(Xo)
    mom = MeanOfMeans().fit(Xo).mean_
    assert rmse(est.mean_[mask], X[mask]) < 0.35 * rmse(mom[mask], X[mask])
    assert np.array_equal(est.mean_[~mask], X[~mask])


def test_bpmf_std_shape_zero_on_observed_positive_elsewhere():
    X, _, _ = low_rank(m=30, d=15, rank=2)
    Xo, mask = hide(X, 0.25)
    est = BayesianPMF(n_components=3, **FAST_BPMF).fit(Xo)
    assert est.std_.shape == X.shape
    assert np.all(est.std_[~mask] == 0)
    assert np.all(est.std_[mask] > 0)
    assert est.noise_std_.shape == (15,)
    epistemic = BayesianPMF(n_components=3, include_noise=False, **FAST_BPMF).fit(Xo).std_
    assert np.all(epistemic[mask] < est.std_[mask])


def test_bpmf_calibrated_on_synthetic_data():
    X, _, _ = low_rank(m=80, d=40, rank=3, noise=0.1, seed=5)
    Xo, mask = hide(X, 0.3, seed=6)
    est = BayesianPMF(n_components=5, n_burnin=100, n_samples=150).fit(Xo)
    inside = np.abs(est.mean_[mask] - X[mask]) <= 1.6449 * est.std_[mask]
    assert 0.85 <= inside.mean() <= 0.97


def test_centring_variance_by_hand():
    X = np.array([[0.0, 1.0, 5.0], [2.0, np.nan, np.nan], [4.0, 3.0, np.nan], [6.0, np.nan, np.nan]])
    # column 0: own mean of 4 cells, s^2 = var(ddof=1) = 20/3, error of the mean s^2/4, in units of sd=2
    got = centring_variance(X, sd=np.array([2.0, 1.0, 1.0]), min_count=3)
    assert np.allclose(got, [20 / 3 / 4 / 4, 0.0, 0.0])  # columns 1-2 use a pooled centre: no term


def test_bpmf_std_includes_error_of_the_estimated_column_centre():
    """centre_error=True: std_ = sqrt(posterior+noise var + centring var) in units of X; off by default."""
    X, _, _ = low_rank(m=30, d=12, rank=2, noise=0.05, seed=3)
    Xo, mask = hide(X, 0.8, seed=4)
    Z, mu, sd = standardise_columns(Xo, min_count=5)
    std_X = BayesianPMF(n_components=3, centre_error=True, **FAST_BPMF).fit(Xo).std_
    std_default = BayesianPMF(n_components=3, **FAST_BPMF).fit(Xo).std_
    std_Z = BayesianPMF(n_components=3, standardize=False, **FAST_BPMF).fit(Z).std_  # same chain on the same Z
    cv = centring_variance(Xo, sd, 5)
    assert (cv > 0).any()
    assert np.allclose(std_X[mask], (np.sqrt(std_Z ** 2 + cv) * sd)[mask])
    assert np.allclose(std_default[mask], (std_Z * sd)[mask])


def test_bpmf_intervals_not_inflated_by_centre_error_on_well_specified_data():
    """A rank-3 matrix the factorisation explains: the default std is calibrated (~90% inside the 90%
    interval); adding the centre's error counts it twice and pushes coverage towards 1."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3)) @ rng.normal(size=(3, 25)) + 0.1 * rng.standard_normal((50, 25))
    Xo, mask = hide(X, 0.5, seed=1)

    def coverage(**kw):
        est = BayesianPMF(n_components=4, n_burnin=60, n_samples=80, **kw).fit(Xo)
        return np.mean(np.abs(est.mean_[mask] - X[mask]) <= 1.6449 * est.std_[mask])

    assert 0.85 <= coverage() <= 0.95
    assert coverage(centre_error=True) > 0.97


def test_bpmf_deterministic_for_seed():
    X, _, _ = low_rank(m=20, d=10)
    Xo, mask = hide(X, 0.3)
    a = BayesianPMF(n_components=3, random_state=7, n_burnin=10, n_samples=10).fit(Xo)
    b = BayesianPMF(n_components=3, random_state=7, n_burnin=10, n_samples=10).fit(Xo)
    c = BayesianPMF(n_components=3, random_state=8, n_burnin=10, n_samples=10).fit(Xo)
    assert np.array_equal(a.mean_, b.mean_) and np.array_equal(a.std_, b.std_)
    assert not np.allclose(a.mean_[mask], c.mean_[mask])
    assert np.array_equal(PMF(random_state=2).fit(Xo).mean_, PMF(random_state=2).fit(Xo).mean_)


def test_bpmf_handles_new_model_with_subset_observed():
    X, _, _ = low_rank(m=50, d=12, rank=2, noise=0.02)
    Xo, cells = new_models(X, n_new=3, n_obs=4)
    est = BayesianPMF(n_components=3, **FAST_BPMF).fit(Xo)
    assert rmse(est.mean_[cells], X[cells]) < 0.5 * np.std(X[cells])
    assert np.all(est.std_[cells] > 0)


def test_constrained_pmf_uses_model_profiles_for_cold_start():
    X, U, _ = low_rank(m=60, d=20, rank=2, noise=0.02, seed=9)
    Xo, mask = hide(X, 0.2, seed=10)
    Xo[-6:] = np.nan  # six models never evaluated: only their profile is known
    cold = np.s_[-6:, :]
    plain = PMF(n_components=2).fit(Xo).mean_
    constrained = PMF(n_components=2, model_profiles=U).fit(Xo).mean_
    assert rmse(constrained[cold], X[cold]) < 0.5 * rmse(plain[cold], X[cold])
    bayes = BayesianPMF(n_components=2, model_profiles=U, dataset_profiles=np.eye(20)[:, :3], **FAST_BPMF).fit(Xo)
    assert rmse(bayes.mean_[cold], X[cold]) < 0.5 * rmse(plain[cold], X[cold])


def test_profile_shape_is_checked():
    X, _, _ = low_rank(m=10, d=5)
    with pytest.raises(MethodError, match="model profiles"):
        PMF(model_profiles=np.ones((9, 2))).fit(X)


def test_bad_parameters_raise_method_error():
    X, _, _ = low_rank(m=10, d=5)
    with pytest.raises(MethodError):
        BayesianPMF(hyperprior="lkj").fit(X)
    with pytest.raises(MethodError):
        PMF(n_components=0).fit(X)
    with pytest.raises(MethodError):
        GlobalMean().fit(np.full((3, 3), np.nan))


# -- PTF -----------------------------------------------------------------------------------------------


def low_rank_tensor(m=40, d=25, seed=0):
    X, _, _ = low_rank(m=m, d=d, rank=2, noise=0.02, seed=seed)
    w = np.array([1.0, 0.5, -0.8])
    b = np.array([0.0, 0.3, 1.0])
    rng = np.random.default_rng(seed)
    return X[:, :, None] * w + b + 0.02 * rng.standard_normal((m, d, 3))


def test_ptf_recovers_linearly_related_metrics():
    T = low_rank_tensor()
    rng = np.random.default_rng(1)
    mask = rng.random(T.shape) < 0.4
    To = np.where(mask, np.nan, T)
    est = ProbabilisticTensorFactorization(n_components=3).fit(To)
    assert est.mean_.shape == T.shape and est.std_ is None
    base = np.broadcast_to(np.nanmean(To, axis=0, keepdims=True), T.shape)
    assert rmse(est.mean_[mask], T[mask]) < 0.3 * rmse(base[mask], T[mask])
    assert np.array_equal(est.mean_[~mask], T[~mask])


def test_bayesian_ptf_std_and_sparse_metric_borrowing():
    T = low_rank_tensor(seed=2)
    To = T.copy()
    rng = np.random.default_rng(3)
    To[:, :, 2][rng.random(To.shape[:2]) < 0.9] = np.nan  # third metric barely observed
    mask = np.isnan(To)
    est = ProbabilisticTensorFactorization(n_components=3, inference="gibbs", **FAST_BPMF).fit(To)
    assert est.std_.shape == T.shape and np.all(est.std_[~mask] == 0) and np.all(est.std_[mask] > 0)
    m2 = mask[:, :, 2]
    single = PMF(n_components=3).fit(To[:, :, 2]).mean_
    assert rmse(est.mean_[:, :, 2][m2], T[:, :, 2][m2]) < rmse(single[m2], T[:, :, 2][m2])


def test_ptf_needs_3d():
    with pytest.raises(MethodError, match="3-D"):
        ProbabilisticTensorFactorization().fit(np.zeros((3, 3)))


@pytest.mark.parametrize("est", [RidgePredictor(alpha=0.5), KNNPredictor(n_neighbors=3), MLPPredictor(max_iter=50)])
def test_predict_subsets_equals_fit_on_stacked_matrix(est):
    X, _, _ = low_rank(m=30, d=6, seed=11)
    X_train, X_new = X[:25].copy(), X[25:].copy()
    if not isinstance(est, RidgePredictor):
        X_train[3, 2] = np.nan  # an incomplete training row is not a training row (ridge uses it: test above)
    X_new[0, 0] = np.nan  # a new model that missed one subset dataset
    subsets = [[0], [0, 1, 2], [5, 4, 3, 2, 1]]
    fast = clone(est).predict_subsets(X_train, X_new, subsets)
    for subset, got in zip(subsets, fast):
        keep = np.zeros(6, bool)
        keep[subset] = True
        ref = clone(est).fit(np.vstack([X_train, np.where(keep, X_new, np.nan)])).mean_[25:]
        assert np.allclose(got, ref)


def test_missingness_groups_one_pattern_and_many():
    from harness_ext.methods.engine.baselines import missingness_groups as _missingness_groups

    rng = np.random.default_rng(0)
    obs = rng.random((200, 19)) < 0.7
    obs[::7] = True  # complete rows are never a group
    got = {tuple(cols): set(rows) for rows, cols in _missingness_groups(obs)}
    want = {}
    for i in np.flatnonzero(~obs.all(axis=1)):
        want.setdefault(tuple(np.flatnonzero(obs[i])), set()).add(i)
    assert got == want
    one = np.ones((5, 19), bool)
    one[1:, 3:] = False  # rows 1-4 share one pattern: the fast path
    ((rows, cols),) = list(_missingness_groups(one))
    assert rows.tolist() == [1, 2, 3, 4] and cols.tolist() == [0, 1, 2]
