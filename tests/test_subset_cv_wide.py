"""Selection on wide matrices: exact shortcuts give the same numbers, flops budgets cut only past them (issue 17 item 2).

Below every budget the selector and the subset scores are those of the code before the budgets (pinned orders);
past them, fewer exact/greedy steps and a seeded sample of held-out rows, each recorded.
"""

import numpy as np
import pytest

from harness_ext.methods.engine import subset_cv
from harness_ext.methods.prowl import predictive as sp
from harness_ext.plugins.predictors import RidgePredictor
from harness_ext.plugins.selectors_predictive import PredictionGreedy


def _matrix(m, d, missing, seed):
    rng = np.random.default_rng(seed)
    X = rng.random((m, 3)) @ rng.random((3, d)) / 3 + 0.05 * rng.standard_normal((m, d))
    X[rng.random(X.shape) < missing] = np.nan
    return X


def _score_reference(X, subsets, preds, folds, w):
    """subset_cv._score before the shared pair counts (one count product per subset and fold)."""
    d = X.shape[1]
    out = []
    for si, s in enumerate(subsets):
        in_s = np.zeros(d, bool)
        in_s[s] = True
        sq, cnt, P, N, n_agg = np.zeros(d), np.zeros(d), np.zeros((d, d)), np.zeros((d, d)), 0
        for (f_tr, f_te), fold in zip(folds, preds):
            err = fold[si] - X[f_te]
            err[:, in_s] = np.nan
            ok = ~np.isnan(err)
            e0 = np.where(ok, err, 0.0)
            sq += (e0 ** 2).sum(axis=0)
            cnt += ok.sum(axis=0)
            okf = ok.astype(float)
            P += e0.T @ e0
            N += okf.T @ okf
            n_agg += int(ok.any(axis=1).sum())
        with np.errstate(invalid="ignore", divide="ignore"):
            per = np.sqrt(sq / cnt)
        per[in_s] = np.nan
        overall = float(np.sqrt(sq.sum() / cnt.sum())) if cnt.sum() else float("nan")
        mse = per[~in_s] ** 2
        profile = float(np.where(np.isfinite(mse), mse, np.nanmean(mse)).sum() / d) if np.isfinite(mse).any() else float("nan")
        aggregate = _aggregate_reference(P, N, w * ~in_s) if n_agg else (0.0 if w[~in_s].sum() == 0 else float("nan"))
        out.append(subset_cv.SubsetError(per, overall, aggregate, profile if (~in_s).any() else 0.0, n_agg))
    return out


def _aggregate_reference(P, N, w):
    """subset_cv.aggregate_rmse before the every-pair-seen shortcut."""
    on = w > 0
    if not on.any():
        return 0.0
    Pw, Nw, ww = P[np.ix_(on, on)], N[np.ix_(on, on)], w[on]
    with np.errstate(invalid="ignore", divide="ignore"):
        M = np.where(Nw > 0, Pw / Nw, np.nan)
    var = np.diag(M).copy()
    if not np.isfinite(var).any():
        return float("nan")
    var = np.where(np.isfinite(var), var, np.nanmean(var))
    sd = np.sqrt(np.clip(var, 0.0, None))
    off = ~np.eye(len(ww), dtype=bool)
    seen = off & (Nw > 0)
    denom = np.outer(sd, sd)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.where(seen & (denom > 0), M / denom, 0.0)
    n_seen = np.where(seen & (denom > 0), Nw, 0.0)
    rho = float((corr * n_seen).sum() / n_seen.sum()) if n_seen.sum() > 0 else 0.0
    M = np.where(seen, M, rho * denom)
    np.fill_diagonal(M, var)
    if seen.sum() < off.sum():
        vals, vecs = np.linalg.eigh((M + M.T) / 2)
        M = (vecs * np.clip(vals, 0.0, None)) @ vecs.T
    return float(np.sqrt(max(float(ww @ M @ ww), 0.0)))


@pytest.mark.parametrize("missing, nan_preds", [(0.0, False), (0.2, False), (0.2, True), (0.85, False)])
def test_score_with_shared_pair_counts_is_bit_identical(missing, nan_preds):
    """Complete, sparse, predictions missing on observed cells (the per-subset path), and pairs never seen together."""
    X = _matrix(40, 9, missing, 3)
    rng = np.random.default_rng(4)
    folds = subset_cv.model_folds(40, 4, 0)
    subsets = [[0], [1, 4], [2, 3, 8], list(range(8))]
    preds = [[np.where(np.isnan(X[te]), rng.random((len(te), 9)), X[te] + 0.1 * rng.standard_normal((len(te), 9)))
              for _ in subsets] for _, te in folds]
    if nan_preds:
        preds[1][2][0, 5] = np.nan
    w = subset_cv.normalised_weights(None, 9)
    got, want = subset_cv._score(X, subsets, preds, folds, w), _score_reference(X, subsets, preds, folds, w)
    for g, r in zip(got, want):
        np.testing.assert_array_equal(g.per_dataset, r.per_dataset)
        assert (g.overall, g.profile_mse, g.n_aggregate) == (r.overall, r.profile_mse, r.n_aggregate)
        assert g.aggregate == r.aggregate or (np.isnan(g.aggregate) and np.isnan(r.aggregate))


@pytest.mark.parametrize("args, order", [
    ((80, 30, 0.15, 0, "lowrank"), [12, 22, 8, 20, 11, 9, 16, 29, 27, 0, 18, 7, 5, 1, 3, 15, 19, 13, 24, 21, 28, 14,
                                    6, 23, 26, 10, 2, 17, 4, 25]),
    ((120, 40, 0.0, 1, "ridge"), [23, 0, 7, 11, 1, 21, 34, 22, 16, 30, 19, 13, 18, 17, 29, 10, 4, 15, 14, 12, 33, 20,
                                  36, 37, 25, 26, 31, 38, 3, 28, 35, 2, 8, 24, 6, 5, 9, 39, 27, 32]),
])
def test_orders_below_the_budgets_are_pinned(args, order):
    """Orders of the code before the budgets (854ede4): below every budget nothing changes."""
    m, d, missing, seed, predictor = args
    sel = PredictionGreedy(predictor=predictor, random_state=0).fit(_matrix(m, d, missing, seed))
    assert sel.order_.tolist() == order
    assert sel.describe()["budget_rules"] is None and sel.describe()["scoring_rows"] is None


def test_scoring_folds_sample_held_out_rows_past_the_budget(monkeypatch):
    X = _matrix(200, 12, 0.1, 5)
    folds = subset_cv.model_folds(200, 5, 0)
    same, rule = subset_cv.scoring_folds(folds, 12)
    assert same is folds and rule is None
    monkeypatch.setattr(subset_cv, "SCORE_FLOPS_BUDGET", 2.0 * 100 * 12 * 12)  # room for 100 of 200 rows
    sub, rule = subset_cv.scoring_folds(folds, 12)
    assert rule["rows"] == sum(len(te) for _, te in sub) == 100 and rule["of"] == 200
    for (tr, te), (tr2, te2) in zip(folds, sub):
        assert tr2 is tr and set(te2) <= set(te) and len(te2) == 20 and list(te2) == sorted(te2)
    again, _ = subset_cv.scoring_folds(folds, 12)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(sub, again))
    assert subset_cv.score_flops(200, 12) == 2.0 * 100 * 12 * 12
    # Scores on the sampled rows are those of the sampled folds, whatever the shared cache held before.
    subsets = [[0, 1], [2, 5, 7]]
    cache = {}
    monkeypatch.setattr(subset_cv, "SCORE_FLOPS_BUDGET", 1e12)
    full = subset_cv.subset_errors(X, subsets, RidgePredictor(), folds=folds, cache=cache)
    monkeypatch.setattr(subset_cv, "SCORE_FLOPS_BUDGET", 2.0 * 100 * 12 * 12)
    cut = subset_cv.subset_errors(X, subsets, RidgePredictor(), folds=folds, cache=cache)
    monkeypatch.setattr(subset_cv, "SCORE_FLOPS_BUDGET", 1e12)
    direct = subset_cv.subset_errors(X, subsets, RidgePredictor(), folds=sub)
    # Past the budget the folds' errors are pooled into one product: the same numbers, summed in another order.
    assert [c.aggregate for c in cut] == pytest.approx([r.aggregate for r in direct], rel=1e-10)
    assert [c.overall for c in cut] == pytest.approx([r.overall for r in direct], rel=1e-12)
    for c, r in zip(cut, direct):
        np.testing.assert_allclose(c.per_dataset, r.per_dataset, rtol=1e-12)
    assert [c.n_aggregate for c in cut] == [100, 100] and [f.n_aggregate for f in full] == [200, 200]


@pytest.mark.parametrize("missing", [0.0, 0.2, 0.85])
def test_pooled_score_equals_the_per_fold_one(missing):
    """Pooled errors and ``u' (P / N) u`` give the per-fold sums and aggregate_rmse's number; with pairs never seen
    together (85% missing) or a prediction missing on an observed cell, the general path is taken."""
    X = _matrix(60, 9, missing, 9)
    rng = np.random.default_rng(10)
    folds = subset_cv.model_folds(60, 4, 0)
    subsets = [[0], [1, 4], [2, 3, 8]]
    preds = [[np.where(np.isnan(X[te]), rng.random((len(te), 9)), X[te] + 0.1 * rng.standard_normal((len(te), 9)))
              for _ in subsets] for _, te in folds]
    w = subset_cv.normalised_weights(np.arange(1, 10), 9)
    missing_pred = [[f.copy() for f in fold] for fold in preds]
    missing_pred[0][1][0, np.flatnonzero(~np.isnan(X[folds[0][1][0]]))[0]] = np.nan  # the general path
    for p in (preds, missing_pred):
        got, want = subset_cv._score(X, subsets, p, folds, w, pooled=True), subset_cv._score(X, subsets, p, folds, w)
        for g, r in zip(got, want):
            np.testing.assert_allclose(g.per_dataset, r.per_dataset, rtol=1e-12)
            assert (g.aggregate, g.overall, g.profile_mse) == pytest.approx((r.aggregate, r.overall, r.profile_mse),
                                                                             rel=1e-10)
            assert g.n_aggregate == r.n_aggregate


def test_stacked_calls_split_past_the_cell_limit_give_the_same_scores(monkeypatch):
    X = _matrix(150, 10, 0.1, 6)
    subsets = [[0], [1, 2], [3, 4, 5], [6], [7, 8]]
    want = subset_cv.subset_errors(X, subsets, RidgePredictor())
    monkeypatch.setattr(subset_cv, "STACK_CELLS", 150 * 10 * 2)  # two subsets per call, but only past the budget
    assert [g.aggregate for g in subset_cv.subset_errors(X, subsets, RidgePredictor())] == [w.aggregate for w in want]
    monkeypatch.setattr(subset_cv, "SCORE_FLOPS_BUDGET", 2.0 * 50 * 10 * 10)  # past it: 20 rows (the minimum) of 30
    assert subset_cv.scoring_folds(subset_cv.model_folds(150, 5, 0), 10)[1]["rows"] == 100
    monkeypatch.setattr(subset_cv, "STACK_CELLS", 100 * 10 * 2)
    got = subset_cv.subset_errors(X, subsets, RidgePredictor())
    monkeypatch.setattr(subset_cv, "STACK_CELLS", 10 ** 9)
    whole = subset_cv.subset_errors(X, subsets, RidgePredictor())
    assert [g.aggregate for g in got] == pytest.approx([w.aggregate for w in whole], rel=1e-12)
    assert [g.n_aggregate for g in got] == [100] * 5


def test_exact_budget_shrinks_candidates_and_exact_steps(monkeypatch):
    X = _matrix(60, 16, 0.1, 7)
    per = subset_cv.score_flops(60, 16)
    monkeypatch.setattr(sp, "EXACT_FLOPS_BUDGET", 12 * per)  # 12 evaluations instead of 12 x 20
    sel = PredictionGreedy(predictor="ridge", random_state=0).fit(X)
    b = sel.budget_
    assert (b["n_candidates"], b["max_exact"]) == (2, 6)
    assert sel.method_ == ["exact"] * 6 + ["design"] * 10
    rule = sel.describe()["budget_rules"]["exact"]
    assert rule["budget"] == 12 * per and rule["n_candidates"] == 2 and rule["max_exact"] == 6
    assert sorted(sel.order_) == list(range(16))


def test_design_budget_freezes_the_order_after_the_greedy_steps(monkeypatch):
    X = _matrix(60, 30, 0.1, 8)
    full = PredictionGreedy(method="design").fit(X)
    monkeypatch.setattr(sp, "DESIGN_FLOPS_BUDGET", 3.0 * 30 * 30 * 7)  # 7 greedy steps
    cut = PredictionGreedy(method="design").fit(X)
    assert cut.order_[:7].tolist() == full.order_[:7].tolist() and sorted(cut.order_) == list(range(30))
    assert cut.method_ == ["design"] * 7 + ["design (frozen)"] * 23
    assert cut.describe()["budget_rules"]["design"]["greedy_steps"] == 7
    assert cut.describe()["steps"] == {"exact": 0, "design": 7, "design (frozen)": 23}
    # The frozen part follows the gains after the last greedy step.
    K = cut.loadings_ @ cut.loadings_.T
    for c in full.order_[:7]:
        K = K - np.outer(K[:, c], K[c, :]) / (K[c, c] + cut.noise_)
    g = sp.design_gains(K, cut.noise_, np.full(30, 1 / 30), 1.0)
    g[full.order_[:7]] = -np.inf
    assert cut.order_[7:].tolist() == np.argsort(-g, kind="stable")[:23].tolist()


@pytest.mark.slow
def test_manifest_past_the_budgets_records_them_and_is_byte_identical(monkeypatch):
    """Past every budget reduce finishes, says what was cut, and the same inputs and seed give the same bytes."""
    import json

    import pandas as pd

    from harness_ext.methods.reduction.manifest import build_manifest, validate_manifest

    X = _matrix(120, 24, 0.1, 11)
    df = pd.DataFrame(X, index=[f"m{i:03d}" for i in range(120)], columns=[f"d{j:02d}" for j in range(24)])
    below = build_manifest(df, budget="3", predictor="ridge", n_random=10, n_random_subsets=10)
    assert "budget_rules" not in below["selection"] and "scoring_rows" not in below["evidence"]
    monkeypatch.setattr(subset_cv, "SCORE_FLOPS_BUDGET", 2.0 * 30 * 24 * 24)  # 20 per fold (the minimum) of 24
    monkeypatch.setattr(sp, "EXACT_FLOPS_BUDGET", 12 * subset_cv.score_flops(120, 24))
    monkeypatch.setattr(sp, "DESIGN_FLOPS_BUDGET", 3.0 * 24 * 24 * 8)
    runs = [build_manifest(df, budget="3", predictor="ridge", n_random=10, n_random_subsets=10) for _ in range(2)]
    validate_manifest(runs[0])
    assert json.dumps(runs[0], sort_keys=True) == json.dumps(runs[1], sort_keys=True)
    rules = runs[0]["selection"]["budget_rules"]
    assert rules["exact"]["n_candidates"] == 2 and rules["design"]["greedy_steps"] == 8
    assert (runs[0]["evidence"]["scoring_rows"]["rows"], runs[0]["evidence"]["scoring_rows"]["of"]) == (100, 120)
