"""Low-rank bias model, fold-in, conformal intervals and the BenchPress baseline."""

from __future__ import annotations

import numpy as np
import pytest

from harness_ext.methods.engine.completion import LowRankCompleter
from harness_ext.methods.engine.conformal import conformal_quantile, coverage
from harness_ext.methods.engine.lowrank import fit_als, fit_gibbs, fold_in, select_rank_lam
from harness_ext.plugin_manager import get_registrations
from harness_ext.plugins.predictors_lowrank import BenchPress


def biased_low_rank(m=90, d=30, rank=2, noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    Z = (rng.normal(size=(m, rank)) @ rng.normal(size=(d, rank)).T + 0.5 * rng.normal(size=(m, 1))
         + rng.normal(size=(1, d)))
    return Z, Z + noise * rng.standard_normal((m, d))


def hide(X, frac, seed=1):
    mask = np.random.default_rng(seed).random(X.shape) < frac
    out = X.copy()
    out[mask] = np.nan
    return out, mask


def test_registered():
    regs = get_registrations("predictors")
    for name in ("lowrank", "lowrank_bayes", "benchpress"):
        assert name in regs


@pytest.mark.parametrize("method", ["als", "gibbs"])
def test_recovers_synthetic_low_rank_matrix(method):
    truth, X = biased_low_rank()
    Xo, mask = hide(X, 0.4)
    fit = fit_als(Xo, rank=2, lam=1.0)
    if method == "gibbs":
        fit = fit_gibbs(Xo, rank=2, n_burnin=100, n_samples=100, init=fit)
    err = fit.mean()[mask] - truth[mask]
    col_means = np.nanmean(Xo, axis=0)[np.nonzero(mask)[1]] - truth[mask]
    assert np.sqrt(np.mean(err ** 2)) < 0.2  # noise sd 0.1
    assert np.sqrt(np.mean(err ** 2)) < 0.15 * np.sqrt(np.mean(col_means ** 2))


def test_cv_picks_the_true_rank():
    _, X = biased_low_rank(rank=2, noise=0.05, seed=3)
    Xo, _ = hide(X, 0.3, seed=4)
    assert select_rank_lam(Xo, ranks=(1, 2, 3, 5), lams=(0.3, 3.0), random_state=0)["rank"] in (2, 3)


@pytest.mark.parametrize("method", ["als", "gibbs"])
def test_fold_in_widens_with_fewer_cells(method):
    _, X = biased_low_rank(m=100, d=30, seed=5)
    fit = fit_als(X[20:], rank=2, lam=1.0)
    if method == "gibbs":
        fit = fit_gibbs(X[20:], rank=2, n_burnin=80, n_samples=80, init=fit)
    sds, errs = [], []
    for k in (1, 3, 8, 20):
        z = np.full((20, 30), np.nan)
        z[:, :k] = X[:20, :k]
        fi = fold_in(fit, z)
        sds.append(fi.sd[:, 20:].mean())
        errs.append(np.abs(fi.mean[:, 20:] - X[:20, 20:]).mean())
    assert all(a > b for a, b in zip(sds, sds[1:])), sds
    assert errs[-1] < errs[0]


def test_conformal_quantile_finite_sample_rule():
    s = np.arange(1, 20, dtype=float)  # n = 19: rank 0.9 x 20 = 18 exactly, the 18th smallest
    assert conformal_quantile(s, 0.9) == 18.0
    assert conformal_quantile([1.0, 2.0], 0.9) == 2.0
    s = np.arange(1, 21, dtype=float)  # n = 20: rank 18.9, interpolated; the conservative rule takes the 19th
    assert np.isclose(conformal_quantile(s, 0.9), 18.9) and conformal_quantile(s, 0.9, conservative=True) == 19.0


def _proportions(seed, m=120, d=24, noise=0.15):
    truth, Z = biased_low_rank(m=m, d=d, noise=noise, seed=seed)
    return 1 / (1 + np.exp(-Z))


@pytest.mark.slow
def test_conformal_coverage_on_held_out_cells():
    # Known noise in logit space; intervals come back on the proportion scale.
    covs = []
    for seed in range(3):
        X = _proportions(seed)
        Xo, mask = hide(X, 0.3, seed=seed + 10)
        est = LowRankCompleter(ranks=(1, 2, 3), lams=(1.0,), random_state=seed).fit(Xo)
        covs.append(coverage(X[mask], est.lower_[mask], est.upper_[mask]))
        assert (est.lower_[mask] < est.mean_[mask]).all() and (est.mean_[mask] < est.upper_[mask]).all()
        assert (est.lower_ >= 0).all() and (est.upper_ <= 1).all()
    assert 0.85 <= np.mean(covs) <= 0.95, covs


def test_new_models_coverage_and_widening():
    X = _proportions(7, m=150, d=20)
    train, new = X[:110], X[110:].copy()
    est = LowRankCompleter(ranks=(2,), lams=(1.0,), random_state=0).fit(train)
    w = np.full(20, 1 / 20)
    widths, covs = [], []
    for k in (2, 6):
        Xn = np.full_like(new, np.nan)
        Xn[:, :k] = new[:, :k]
        p = est.predict_new_models(Xn, weights=w)
        assert np.array_equal(p.mean[:, :k], new[:, :k])
        widths.append(np.median((p.upper - p.lower)[:, 6:]))
        covs.append(coverage(new[:, k:], p.lower[:, k:], p.upper[:, k:]))
        agg_true = new @ w
        assert p.aggregate.shape == (40,)
        covs.append(coverage(agg_true, p.aggregate_lower, p.aggregate_upper))
    assert widths[0] > widths[1]
    assert min(covs) >= 0.75 and np.mean(covs) >= 0.85, covs


@pytest.mark.slow
def test_benchpress_runs_with_its_published_settings():
    X = _proportions(2)
    Xo, mask = hide(X, 0.3)
    bp = BenchPress().fit(Xo)
    assert (bp.rank, bp.lam, bp.n_iter, bp.n_ensemble) == (2, 0.1, 40, 10)
    assert np.isfinite(bp.mean_).all() and np.array_equal(bp.mean_[~mask], Xo[~mask])
    assert 0.8 <= coverage(X[mask], bp.lower_[mask], bp.upper_[mask]) <= 0.97
    p = bp.predict_new_models(np.where(np.arange(24) < 4, X[:5], np.nan), weights=np.full(24, 1 / 24))
    assert p.mean.shape == (5, 24) and p.aggregate.shape == (5,)


@pytest.mark.slow
def test_lowrank_reproducible_and_describes_itself():
    X = _proportions(3, m=40, d=10)
    Xo, _ = hide(X, 0.2)
    a = LowRankCompleter(random_state=1).fit(Xo)
    b = LowRankCompleter(random_state=1).fit(Xo)
    assert np.array_equal(a.mean_, b.mean_) and np.array_equal(a.std_, b.std_)
    info = a.describe()
    assert info["rank"] == a.rank_ and info["scales"]["columns"][0]["kind"] == "logit"
    assert info["cross_validation"]["grid_mse"]


def test_predict_subsets_matches_fold_in_and_exposes_factors():
    X = _proportions(4, m=60, d=12)
    est = LowRankCompleter(ranks=(2,), lams=(1.0,))
    outs = est.predict_subsets(X[:50], X[50:], [[0, 1], [0, 1, 2, 3, 4]])
    assert len(outs) == 2 and outs[0].shape == (10, 12)
    assert np.array_equal(outs[1][:, :5], X[50:, :5])
    assert len(est.subset_std_) == 2 and (est.subset_std_[0][:, 5:] > est.subset_std_[1][:, 5:]).mean() > 0.9
    assert est.dataset_factors_.shape == (12, 2)
    p = est.predict_new_models(np.where(np.arange(12) < 2, X[50:], np.nan), calibrate=False)
    assert np.allclose(p.mean, outs[0])


def test_blend_endpoints_and_auto_choice():
    from harness_ext.methods.engine.completion import BLEND_GRID, direct_predict

    X = _proportions(5, m=80, d=12)
    Xn = np.where(np.arange(12) < 3, X[60:], np.nan)
    fold = LowRankCompleter(ranks=(2,), lams=(1.0,), blend=0.0).fit(X[:60])
    z = fold.transform_.transform(Xn)
    assert np.allclose(fold.predict_new_models(Xn, calibrate=False).mean[:, 3:],
                       fold.transform_.inverse_transform(fold_in(fold.fit_, z).mean)[:, 3:])
    direct = LowRankCompleter(ranks=(2,), lams=(1.0,), blend=1.0).fit(X[:60])
    assert np.allclose(direct.predict_new_models(Xn, calibrate=False).mean[:, 3:],
                       direct.transform_.inverse_transform(direct_predict(direct.fit_, direct.Z_, z))[:, 3:])
    auto = LowRankCompleter(ranks=(2,), lams=(1.0,)).fit(X[:60])
    p = auto.predict_new_models(Xn, weights=np.full(12, 1 / 12))
    assert auto.blend_new_ in BLEND_GRID and np.isfinite(p.aggregate).all()
    with pytest.raises(Exception, match="blend"):
        LowRankCompleter(blend=2.0).fit(X[:60]).predict_new_models(Xn, calibrate=False)


def test_with_fixed_settings_chooses_once():
    X = _proportions(6, m=50, d=10)
    est = LowRankCompleter(random_state=2)
    fixed = est.with_fixed_settings(X)
    full = LowRankCompleter(random_state=2).fit(X)
    assert (fixed.rank, fixed.lam) == (full.rank_, full.lam_)
    assert fixed.fit(X[:40]).cv_ is None  # no inner search in the folds
    assert LowRankCompleter(rank=1, lam=3.0).with_fixed_settings(X).get_params()["rank"] == 1


def test_mondrian_quantiles_per_group_with_pooled_fallback():
    from harness_ext.methods.engine.conformal import mondrian_quantiles

    rng = np.random.default_rng(0)
    s = np.r_[rng.random(50), 3 * rng.random(50), rng.random(5)]
    g = np.r_[np.zeros(50, int), np.ones(50, int), np.full(5, 2)]
    q = mondrian_quantiles(s, g, 4, 0.9, min_count=20)
    assert q[0] == conformal_quantile(s[:50], 0.9) and q[1] == conformal_quantile(s[50:100], 0.9)
    assert q[2] == q[3] == conformal_quantile(s, 0.9)  # too few / no scores: pooled


def test_scales_and_cell_blend_chosen_by_cv_and_recorded():
    X = _proportions(3, m=60, d=12)
    Xo, mask = hide(X, 0.3)
    est = LowRankCompleter(calibration_folds=0, ranks=(1, 2), lams=(1.0,)).fit(Xo)
    info = est.describe()
    assert est.scales_ in ("auto", "standardise") and info["scales_cross_validation"]["chosen"] == est.scales_
    assert {e["scales"] for e in info["scales_cross_validation"]["error"]} == {"auto", "standardise"}
    assert 0.0 <= info["cell_blend"] <= 1.0
    fixed = est.with_fixed_settings(Xo)
    assert fixed.get_params()["scales"] == est.scales_ and fixed.get_params()["cell_blend"] == est.cell_blend_


def test_transform_and_cell_blend_chosen_by_the_median_held_out_error(monkeypatch):
    """The choice follows the median normalised held-out error: a few huge errors (broken runs) do not decide it."""
    from harness_ext.methods.engine import cell_cv, completion  # noqa: F401

    X = _proportions(4, m=40, d=10)
    Xo, _ = hide(X, 0.2)
    typical = np.full(200, 0.5)

    def errors(X, Z, transform, rank, lam, est, blends, ensemble=None):
        kinds = set(getattr(transform, "inner", transform).kinds_())
        # standardise: larger typical errors, no outliers; logit: smaller typical errors, a few of 50 sds
        if "standardise" in kinds:
            return {a: typical * (1.2 + a) for a in blends}
        return {a: np.r_[typical * (1.0 + abs(a - 0.5)), np.full(5, 50.0)] for a in blends}

    monkeypatch.setattr(cell_cv, "_cell_cv_errors", errors)
    est = LowRankCompleter(calibration_folds=0, ranks=(1,), lams=(1.0,)).fit(Xo)
    assert est.scales_ == "auto" and est.cell_blend_ == 0.5  # the means would pick standardise, blend 0
    rows = {(e["scales"], e["cell_blend"]): e["error"] for e in est.describe()["scales_cross_validation"]["error"]}
    assert rows[("auto", 0.5)] == 0.5 and rows[("standardise", 0.0)] == 0.6


def test_cell_cv_error_is_the_median_of_the_held_out_errors():
    from harness_ext.methods.engine.completion import _cell_cv_error, _cell_cv_errors

    X = _proportions(5, m=40, d=10)
    Xo, _ = hide(X, 0.2)
    est = LowRankCompleter(scales="auto", rank=2, lam=1.0)
    t, tt = est._transform_for("auto", Xo)
    Z = tt.transform(Xo)
    errs = _cell_cv_errors(Xo, Z, tt, 2, 1.0, est, (0.0, 1.0))
    assert all(e.size == (~np.isnan(Xo)).sum() for e in errs.values())  # every observed cell held out once
    assert _cell_cv_error(Xo, Z, tt, 2, 1.0, est, (0.0, 1.0)) == {a: float(np.median(e)) for a, e in errs.items()}


def test_rank_ensemble_is_a_cell_cv_candidate_and_completes_the_cells_when_chosen(monkeypatch):
    """The average of every rank's fit at the chosen penalty competes with the single setting in the same held-out
    cell folds; chosen, it gives the fitted matrix's mean (new models still fold into the single fit)."""
    from harness_ext.methods.engine import cell_cv, completion  # noqa: F401
    from harness_ext.methods.engine.completion import _cell_cv_errors
    from harness_ext.methods.engine.lowrank import RankEnsemble

    X = _proportions(6, m=40, d=10)
    Xo, _ = hide(X, 0.2)
    est = LowRankCompleter(scales="auto", rank=2, lam=1.0)
    t, tt = est._transform_for("auto", Xo)
    Z = tt.transform(Xo)
    ens = {"ranks": [1, 2, 3], "lam": 1.0}
    errs = _cell_cv_errors(Xo, Z, tt, 2, 1.0, est, (0.0, 1.0), ens)
    assert set(errs) == {0.0, 1.0, ("ensemble", 0.0), ("ensemble", 1.0)}
    assert all(e.size == (~np.isnan(Xo)).sum() for e in errs.values())
    plain = _cell_cv_errors(Xo, Z, tt, 2, 1.0, est, (0.0, 1.0))
    np.testing.assert_array_equal(plain[0.0], errs[0.0])  # the single setting's errors do not change
    fits = [fit_als(Z, rank=r, lam=1.0) for r in (1, 2, 3)]
    np.testing.assert_allclose(RankEnsemble(fits).mean(), np.mean([f.mean() for f in fits], 0))

    # Chosen when its median held-out error is lower: recorded, and the cells are completed by the average.
    def favour(flag):
        def errors(X, Z, transform, rank, lam, est, blends, ensemble=None):
            out = {a: np.full(50, 1.0) for a in blends}
            out.update({("ensemble", a): np.full(50, 0.5 if flag else 2.0) for a in (blends if ensemble else ())})
            return out
        return errors

    monkeypatch.setattr(cell_cv, "_cell_cv_errors", favour(True))
    on = LowRankCompleter(calibration_folds=0, scales="auto", ranks=(1, 2, 3), lams=(1.0,), cell_blend=0.0,
                          bp_mix=0.0).fit(Xo)  # the engine's cells alone
    info = on.describe()["scales_cross_validation"]
    assert info["ensemble"] == {"ranks": [1, 2, 3], "lam": 1.0}
    assert {e.get("ensemble", False) for e in info["error"]} == {True, False}
    Zo = on.Z_
    avg = RankEnsemble(fit_als(Zo, rank=r, lam=1.0, lam_bias=on.lam_bias, max_iter=on.max_iter) for r in (1, 2, 3))
    miss = np.isnan(Xo)
    np.testing.assert_allclose(on.mean_[miss], on.transform_.inverse_transform(avg.mean())[miss])
    assert on.fit_.rank == on.rank_  # new models: the single fit
    monkeypatch.setattr(cell_cv, "_cell_cv_errors", favour(False))
    off = LowRankCompleter(calibration_folds=0, scales="auto", ranks=(1, 2, 3), lams=(1.0,), cell_blend=0.0,
                           bp_mix=0.0).fit(Xo)
    assert off.describe()["scales_cross_validation"]["ensemble"] is None
    np.testing.assert_allclose(off.mean_[miss], off.transform_.inverse_transform(off.fit_.mean())[miss])
    # A given rank has nothing to average.
    fixed = LowRankCompleter(calibration_folds=0, scales="auto", rank=2, lam=1.0, cell_blend=0.0).fit(Xo)
    assert fixed.describe()["scales_cross_validation"]["ensemble"] is None


@pytest.mark.slow
def test_a_column_with_no_observed_cell_fits_without_numpy_warnings(helm_classic_matrix):
    """A sparse matrix can hold a column nobody ran (a leaderboard's, once cross-validation hides cells or samples
    rows): the cell cross-validation's per-column sd took numpy's nanvar of it, and its 'Degrees of freedom <= 0'
    RuntimeWarning reached the user. HELM Classic with one scenario blanked and 20% of the other cells hidden."""
    import warnings

    X, _ = hide(helm_classic_matrix.to_numpy(dtype=float), 0.2)
    X[:, 3] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = LowRankCompleter(random_state=0).fit(X)
    assert np.isfinite(est.mean_).all()
