"""The selection's aggregate, its last step deferred, against the one-step computation it replaces
(harness_ext.methods.engine.subset_cv.pending_aggregate, harness_ext.methods.prowl.predictive._best_objectives)."""

import numpy as np
import pytest

from harness_ext.methods.engine import subset_cv
from harness_ext.methods.engine.subset_cv import PendingAggregate, aggregate_rmse, pending_aggregate


def _one_step(P, N, w):
    """``aggregate_rmse`` as it was written before its last step could be deferred (the reference, verbatim)."""
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
    unseen = ~(Nw > 0)
    np.fill_diagonal(unseen, False)
    if not unseen.any():
        np.fill_diagonal(M, var)
        if (Nw == Nw.flat[0]).all() or subset_cv._is_positive_definite(M):
            return float(np.sqrt(max(float(ww @ M @ ww), 0.0)))
    off = ~np.eye(len(ww), dtype=bool)
    seen = off & (Nw > 0)
    denom = np.outer(sd, sd)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.where(seen & (denom > 0), M / denom, 0.0)
    n_seen = np.where(seen & (denom > 0), Nw, 0.0)
    rho = float((corr * n_seen).sum() / n_seen.sum()) if n_seen.sum() > 0 else 0.0
    M = np.where(seen, M, rho * denom)
    np.fill_diagonal(M, var)
    vals, vecs = np.linalg.eigh((M + M.T) / 2)
    M = (vecs * np.clip(vals, 0.0, None)) @ vecs.T
    return float(np.sqrt(max(float(ww @ M @ ww), 0.0)))


def _moments(rng, n, d, missing, subset=()):
    """Pairwise-complete error moments of ``n`` held-out models on ``d`` datasets, a share ``missing`` unobserved."""
    E = rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) / np.sqrt(d)
    have = rng.random((n, d)) >= missing
    e0 = np.where(have, E, 0.0)
    h = have.astype(float)
    w = rng.random(d)
    w[list(subset)] = 0.0
    return e0.T @ e0, h.T @ h, w / w.sum()


CASES = [(40, 12, 0.0), (8, 30, 0.0), (30, 12, 0.2), (10, 25, 0.3), (6, 40, 0.6), (3, 20, 0.8)]


@pytest.mark.parametrize("n,d,missing", CASES)
def test_deferred_aggregate_equals_the_one_step_one(n, d, missing):
    # Complete (one set of models: no projection), fewer models than datasets (not positive definite), sparse
    # (pairs unobserved: filled and projected), and so sparse that some datasets have no cell.
    for seed in range(10):
        rng = np.random.default_rng(seed)
        P, N, w = _moments(rng, n, d, missing, subset=rng.permutation(d)[:3])
        want = _one_step(P, N, w)
        assert aggregate_rmse(P, N, w) == want or (np.isnan(want) and np.isnan(aggregate_rmse(P, N, w)))
        parts = pending_aggregate(P, N, w)
        got = parts.value() if isinstance(parts, PendingAggregate) else parts
        assert got == want or (np.isnan(want) and np.isnan(got))
        if isinstance(parts, PendingAggregate):  # the bound the search prunes with
            assert parts.low - parts.tol <= got ** 2


def test_the_bound_is_tight_when_no_projection_is_needed():
    rng = np.random.default_rng(3)
    P, N, w = _moments(rng, 400, 10, 0.05)
    parts = pending_aggregate(P, N, w)
    assert isinstance(parts, PendingAggregate) and parts.check_pd and subset_cv._is_positive_definite(parts.M)
    assert parts.value() == float(np.sqrt(parts.low))


def _sparse(m=70, d=12, missing=0.3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((m, 3)) @ rng.random((3, d)) / 3 + 0.05 * rng.standard_normal((m, d))
    X[rng.random(X.shape) < missing] = np.nan
    return X


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pruned_objectives_keep_the_best_subset_and_its_objective(seed):
    # Every subset the search could choose is scored in full, to the bit; the others are inf. Repeated subsets
    # (exact ties) keep the first; with costs the score is the error reduction per unit cost.
    from harness_ext.methods.engine.completion import LowRankCompleter
    from harness_ext.methods.engine.subset_cv import model_folds
    from harness_ext.methods.prowl.predictive import selection_objective

    X = _sparse(seed=seed)
    d = X.shape[1]
    est = LowRankCompleter(rank=2, lam=1.0, scales="auto", blend=0.5)
    folds = model_folds(X.shape[0], 5, seed)
    w = np.full(d, 1.0 / d)
    rng = np.random.default_rng(seed)
    subsets = [sorted(rng.permutation(d)[:3].tolist()) for _ in range(8)]
    subsets += subsets[::-1]  # every subset twice: the best one ties with its twin
    full = selection_objective(X, subsets, est, folds, w, 1.0, cache={})
    cost = rng.random(len(subsets)) + 0.5
    for tie, gain in ((True, lambda o, i: -o), (False, lambda o, i: (0.5 - o) / cost[i])):
        pruned = selection_objective(X, subsets, est, folds, w, 1.0, cache={}, gain=gain)
        kept = np.isfinite(pruned)
        np.testing.assert_array_equal(pruned[kept], full[kept])
        everything = np.arange(len(subsets))
        assert np.argmax(gain(pruned, everything)) == np.argmax(gain(full, everything))
        assert (gain(full[~kept], everything[~kept]) < gain(full, everything).max()).all()
        assert kept.sum() >= (2 if tie else 1) and kept.sum() < len(subsets)  # the twins tie without costs


def test_an_unknown_bound_is_always_scored():
    # A pending aggregate whose bound is not finite cannot be ruled out, even after a worse one ends the search
    # (a non-finite aggregate counts 0, so it may be the best).
    from harness_ext.methods.engine.subset_cv import SubsetError
    from harness_ext.methods.prowl.predictive import _best_objectives

    per = np.zeros(2)
    eye = np.eye(2)
    errs = [SubsetError(per, 0.0, 0.1, 0.01, 5),  # objective 0.02
            SubsetError(per, 0.0, PendingAggregate(eye, np.full(2, 0.5), True, 1.0, 1e-9), 0.01, 5),  # far worse
            SubsetError(per, 0.0, PendingAggregate(eye, np.full(2, 0.5), True, np.nan, 1e-9), 0.005, 5)]
    obj = _best_objectives(errs, 1.0, lambda o, i: -o)
    assert obj[0] == 0.01 + 0.1 ** 2 and obj[1] == np.inf and obj[2] == 0.005
