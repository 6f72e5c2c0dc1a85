"""Selection for prediction: choose the datasets from which the rest of a new model's profile is best predicted.

The search behind the registered selector ``prediction_greedy``
(:class:`harness_ext.plugins.selectors_predictive.PredictionGreedy`, whose parameters are named below).

The objective of a subset ``S`` is the cross-validated prediction error of the
full profile and of the full-benchmark aggregate under the chosen predictor:
held-out models reveal their cells in ``S`` (whatever part of ``S`` they have),
the predictor trained on the other models predicts the rest, and

    objective(S) = profile MSE + aggregate_weight * aggregate MSE

(:func:`harness_ext.methods.engine.subset_cv.subset_errors`; profile MSE averages over
all ``d`` cells of a profile with the subset's own cells exact). The selector
adds datasets greedily, each step taking the candidate with the lowest
objective.

Exact greedy costs one cross-validation per candidate and step. It is made
fast by a design criterion on fitted dataset loadings: a probabilistic PCA of
the training matrix (every observed cell, pairwise covariances) gives loadings
``V`` (d x r) and noise ``s2``; observing ``S`` leaves the model factors with
posterior covariance ``P = (I + V_S' V_S / s2)^-1`` and the profile with
expected error ``trace(V P V') + aggregate_weight * w' V P V' w`` (A-optimal
on the loadings, plus the c-optimal term of the aggregate). Its greedy gains
for all candidates come from one ``d x d`` matrix per step (rank-one updates).
In ``method="auto"`` each exact step evaluates only the ``n_candidates`` best
candidates by that criterion and exact steps stop after ``max_exact``; the
rest of the order follows the design criterion alone. ``method="design"`` uses
the criterion only, ``method="exact"`` evaluates every candidate (for tests
against brute force and small benchmarks).

``coverage_aware=True`` multiplies each design gain by the dataset's observed
share of models ``p_c`` (a dataset few models have informs the fit of few).
It is off by default: with the objective's per-dataset error estimate
(:mod:`harness_ext.methods.engine.subset_cv`), which counts a rarely observed
dataset's own large error, the shortlist without it chose better subsets on
the benchbench cross-leaderboard matrix in a one-off comparison that is not a
benchmark of the repository (so the option stays off, unmeasured). Exact steps reuse every fold's fit and every (model, observed
subset cells) fold-in across steps, so a step costs only the fold-ins of the
models that have the candidate. A candidate's aggregate error, whose pairwise
error moments usually need projecting onto the positive semi-definite cone (an
eigendecomposition), is bounded below by the unprojected moments; only the
candidates whose bound could still beat the best one found are projected, so
the step chooses what it chose with every candidate projected.

Wide matrices (thousands of datasets) stay within flops budgets, each a
module constant, each recorded by the selector's ``describe()`` and in the
manifest when it cuts anything: every subset is scored on a seeded sample of
held-out models past :data:`harness_ext.methods.engine.subset_cv.SCORE_FLOPS_BUDGET`;
``n_candidates`` and ``max_exact`` shrink together past
:data:`EXACT_FLOPS_BUDGET`; and past :data:`DESIGN_FLOPS_BUDGET` the datasets
after the last greedy design step follow that step's gains. No real matrix of
the repository's data reaches any of them (their orders are pinned by
tests/test_subset_cv_wide.py); 1,000 x 2,000 reaches all three.

With a size ``size`` (``reduce``'s count or fraction budget) or ``n_select``, and when
every ``size``-subset can be scored within :data:`EXHAUSTIVE_FLOPS_BUDGET` flops
(small matrices: HELM Classic's 91 pairs of 14 datasets), the first ``size`` datasets of
the order are the best subset of that size by the same objective, found by scoring all of
them, instead of the greedy path to it: greedy commits to the best single dataset and
on a matrix of strongly correlated datasets the best pair often does not contain it. The
subset's own datasets are ordered greedily among themselves and the order continues
greedily from the subset.

With ``costs`` (one positive number per dataset, e.g. the number of samples
it takes to run) each step maximises error reduction per unit of cost, and
``cost_budget`` stops the order when the next dataset no longer fits.

References
----------
Tipping & Bishop (1999), probabilistic PCA (loadings and
noise from the eigen-decomposition); Pukelsheim, *Optimal Design of
Experiments* (1993), A- and c-optimality; Krause & Golovin (2014) for the
cost-benefit greedy rule.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from harness_ext.base import limit_threads


#: Share of the (pairwise) covariance the probabilistic-PCA loadings keep.
EXPLAINED = 0.95
#: Flops ``method="auto"`` may spend scoring candidates exactly (each costs
#: :func:`harness_ext.methods.engine.subset_cv.score_flops`); past it, fewer candidates per step and fewer exact steps.
#: About a minute of one core; no matrix of the repository's real data comes near it.
EXACT_FLOPS_BUDGET = 1e11
#: Flops an exhaustive search of every ``k``-subset may spend (``C(d, k)`` subsets at
#: :func:`harness_ext.methods.engine.subset_cv.score_flops` each). About ten seconds of one core.
EXHAUSTIVE_FLOPS_BUDGET = 1e10
#: Subsets an exhaustive search may score at most (each has a per-subset overhead the flops do not count).
EXHAUSTIVE_MAX_SUBSETS = 2000
#: Flops of the greedy design steps (about ``3 d^2`` each: the gains and the rank-one update); past it, the
#: remaining datasets follow in the order of their design gains after the last greedy step.
DESIGN_FLOPS_BUDGET = 3e9


def ppca_loadings(X: np.ndarray, max_rank: Optional[int] = None, return_gram: bool = False):
    """Loadings ``V`` (d x r) and noise variance ``s2`` of a probabilistic PCA of ``X`` (NaN allowed).

    The covariance is estimated from every observed cell (pairwise-complete,
    :func:`harness_ext.methods.engine.subset_regression.pairwise_gram`); ``r`` is the
    smallest rank explaining :data:`EXPLAINED` of it (at most ``max_rank``,
    at most ``d - 1``) and ``s2`` the mean of the discarded eigenvalues (the
    maximum-likelihood noise of Tipping & Bishop 1999, eq. 8). ``return_gram``:
    also the pairwise-complete Gram matrix behind them (``(V, s2, G)``).
    """
    from harness_ext.methods.engine.subset_regression import pairwise_gram

    n, d = X.shape
    _, G = pairwise_gram(X)
    vals, vecs = np.linalg.eigh(G / max(n, 1))
    vals, vecs = np.clip(vals[::-1], 0.0, None), vecs[:, ::-1]
    total = vals.sum()
    if not total > 0:
        return (np.zeros((d, 1)), 1.0) + ((G,) if return_gram else ())
    cum = np.cumsum(vals) / total
    r = int(np.searchsorted(cum, EXPLAINED) + 1)
    r = max(1, min(r, d - 1 if d > 1 else 1, max_rank or d))
    s2 = float(vals[r:].mean()) if r < d else float(vals[-1])
    s2 = max(s2, 1e-6 * total / d)
    V = vecs[:, :r] * np.sqrt(np.clip(vals[:r] - s2, 0.0, None))
    return (V, s2) + ((G,) if return_gram else ())


def design_gains(K: np.ndarray, s2: float, w: np.ndarray, aggregate_weight: float) -> np.ndarray:
    """Reduction of ``trace(K) + a * w'Kw`` from observing each dataset, ``K`` the current error covariance.

    Observing dataset ``c`` with noise ``s2`` updates ``K -> K - K[:, c] K[c, :] / (K[c, c] + s2)``.
    """
    num = (K ** 2).sum(axis=0) + aggregate_weight * (w @ K) ** 2
    return num / (np.diag(K) + s2)


def selection_objective(X, subsets, est, folds, w, aggregate_weight: float, cache=None, gain=None) -> np.ndarray:
    """The objective of each subset: cross-validated profile MSE + ``aggregate_weight`` x aggregate MSE.

    See :func:`harness_ext.methods.engine.subset_cv.subset_errors` (an aggregate error that is not finite
    counts 0). ``gain(objectives, positions)``: the search's score of subsets from their objectives (larger is
    better, never larger for a larger objective); when given, only the subsets that could score best are
    scored in full (:func:`_best_objectives`) and the others' objectives are returned as ``inf``.
    """
    from harness_ext.methods.engine.subset_cv import subset_errors

    errs = subset_errors(X, subsets, est, weights=w, folds=folds, cache=cache, defer_aggregate=gain is not None)
    if gain is not None:
        return _best_objectives(errs, aggregate_weight, gain)
    return np.array([_objective(e.profile_mse, e.aggregate, aggregate_weight) for e in errs])


def _objective(profile_mse: float, aggregate: float, aggregate_weight: float) -> float:
    return profile_mse + aggregate_weight * (aggregate ** 2 if np.isfinite(aggregate) else 0.0)


def _best_objectives(errs, aggregate_weight: float, gain) -> np.ndarray:
    """Objectives of the subsets whose score under ``gain`` could be the highest; ``inf`` for the others.

    An aggregate whose moments need projecting (:class:`~harness_ext.methods.engine.subset_cv.PendingAggregate`)
    is at least the root of ``low - tol``: a subset whose score from that bound is below the best score found is
    strictly worse and is not projected. Subsets are completed from the highest bound down, so on the real
    matrices nearly only the winner's moments are factorised. Every completed objective is the one
    :func:`selection_objective` gives without ``gain``, so the best subset and its objective are unchanged.
    """
    from harness_ext.methods.engine.subset_cv import PendingAggregate

    obj = np.full(len(errs), np.inf)
    pending, bound = [], []
    for i, e in enumerate(errs):
        if isinstance(e.aggregate, PendingAggregate):
            low, tol = e.aggregate.low, e.aggregate.tol
            pending.append(i)
            bound.append(e.profile_mse + aggregate_weight * max(low - tol, 0.0) if np.isfinite(low + tol) else np.nan)
        else:
            obj[i] = _objective(e.profile_mse, e.aggregate, aggregate_weight)
    if not pending:
        return obj
    pending = np.asarray(pending)
    done = np.setdiff1d(np.arange(len(errs)), pending)
    scores = gain(obj[done], done)
    best = float(np.max(scores[np.isfinite(scores)], initial=-np.inf))
    top = gain(np.asarray(bound), pending)  # each pending subset's best possible score (NaN: unknown, scored)
    with limit_threads():  # one BLAS thread, as subset_errors factorises: the same bits, no contention
        for j in np.argsort(np.where(np.isnan(top), -np.inf, -top), kind="stable"):  # unknown bounds first
            if top[j] < best:  # this one and every later one is strictly worse than a completed subset
                break
            i = int(pending[j])
            e = errs[i]
            obj[i] = _objective(e.profile_mse, e.aggregate.value(), aggregate_weight)
            score = float(gain(obj[i:i + 1], pending[j:j + 1])[0])
            if np.isfinite(score):
                best = max(best, score)
    return obj


def search_budgets(n: int, d: int, k_max: int, method: str, n_candidates: int, max_exact: int) -> dict:
    """The exact and design steps the search takes on ``n`` models x ``d`` datasets, within the flops budgets.

    ``n_candidates`` x ``max_exact`` exact evaluations cost
    :func:`~harness_ext.methods.engine.subset_cv.score_flops` each; past
    :data:`EXACT_FLOPS_BUDGET` both shrink by the same factor (at least 2
    candidates, 1 exact step). Greedy steps cost about ``3 d^2``; past
    :data:`DESIGN_FLOPS_BUDGET` the steps after the last greedy one follow
    the design gains of that step. ``rule`` entries say what was cut, for
    the record (absent when nothing was).
    """
    from harness_ext.methods.engine.subset_cv import score_flops

    n_cand, n_exact = max(1, int(n_candidates)), int(max_exact)
    out = {"n_candidates": n_cand, "max_exact": n_exact, "greedy_steps": int(k_max), "rule": {}}
    if method == "auto":
        per = score_flops(n, d)
        allowed = EXACT_FLOPS_BUDGET / per
        if n_cand * n_exact > allowed:
            f = np.sqrt(allowed / (n_cand * n_exact))
            out["n_candidates"] = max(2, min(n_cand, int(n_cand * f)))
            out["max_exact"] = max(1, min(n_exact, int(allowed // out["n_candidates"])))
            out["rule"]["exact"] = {
                "reason": "exact scoring of every shortlisted candidate over the flops budget: fewer candidates "
                          "per step and fewer exact steps", "flops_per_candidate": float(f"{per:.3g}"),
                "flops": float(f"{n_cand * n_exact * per:.3g}"), "budget": float(EXACT_FLOPS_BUDGET),
                "n_candidates": out["n_candidates"], "max_exact": out["max_exact"]}
    if method != "exact":
        per_step = 3.0 * d * d
        steps = max(int(DESIGN_FLOPS_BUDGET // per_step), out["max_exact"] if method == "auto" else 0, 1)
        if steps < k_max:
            out["greedy_steps"] = steps
            out["rule"]["design"] = {
                "reason": "greedy design steps over the flops budget: later datasets follow the design gains of "
                          "the last greedy step", "flops": float(f"{k_max * per_step:.3g}"),
                "budget": float(DESIGN_FLOPS_BUDGET), "greedy_steps": steps}
    return out


def exhaustive_subset(X, est, folds, w, cache, k_max: int, size, aggregate_weight: float, allowed=None):
    """``(mask, record)``: the best ``size``-subset by the objective as a mask over datasets, or ``(None, None)``.

    Searched when every subset fits the budgets (:data:`EXHAUSTIVE_FLOPS_BUDGET`,
    :data:`EXHAUSTIVE_MAX_SUBSETS`); the caller checks the rest (a size is known, no costs, a predictor
    that folds in without refits). Ties go to the first subset in lexicographic order. ``record`` says
    what was done. ``allowed``: a mask of the datasets the subsets are drawn from (None: every dataset).
    """
    import itertools
    import math

    from harness_ext.methods.engine.subset_cv import score_flops

    n, d = X.shape
    size = min(int(size), k_max, d)
    cols = range(d) if allowed is None else np.flatnonzero(allowed).tolist()
    n_sub = math.comb(len(cols), size) if 2 <= size < d else 0
    if not n_sub or n_sub > EXHAUSTIVE_MAX_SUBSETS or n_sub * score_flops(n, d) > EXHAUSTIVE_FLOPS_BUDGET:
        return None, None
    subsets = [list(c) for c in itertools.combinations(cols, size)]
    obj = np.concatenate([selection_objective(X, subsets[a:a + 256], est, folds, w, aggregate_weight, cache,
                                              gain=lambda o, i: -o) for a in range(0, n_sub, 256)])
    obj = np.where(np.isfinite(obj), obj, np.inf)
    best = int(np.argmin(obj))
    mask = np.zeros(d, bool)
    mask[subsets[best]] = True
    return mask, {"size": size, "subsets": n_sub, "objective": float(obj[best])}


def prediction_greedy_order(X, est, folds, w, cost, *, aggregate_weight: float, method: str, n_candidates: int,
                            max_exact: int, has_costs: bool, cost_budget: Optional[float], n_select: Optional[int],
                            size: Optional[int], exhaustive: bool, coverage_aware: bool, allowed=None) -> dict:
    """Greedy forward selection on the design criterion and the cross-validated objective (see the module notes).

    ``X`` is checked (at least 3 models and 2 datasets), ``est`` the predictor, ``folds`` its model folds,
    ``w`` the aggregate's normalised weights and ``cost`` one positive cost per dataset (``has_costs``:
    the caller gave them). ``allowed``: a mask of the datasets taken first, the others only once none of these
    fits (:func:`harness_ext.methods.prowl.saturation.saturation_plan`; None: every dataset competes). The
    other arguments are the selector's parameters.

    Returns
    -------
    dict
        The selector's fitted attributes: ``order_``, ``objective_`` (cross-validated objective after each
        exact step, NaN for design steps), ``method_`` (the kind of each step), ``loadings_``, ``noise_``,
        ``cost_``, ``coverage_`` (None), ``budget_``, ``scoring_rule_`` and ``exhaustive_``.

    References
    ----------
    Tipping & Bishop (1999); Pukelsheim (1993), A- and c-optimality; Krause & Golovin (2014).
    """
    from harness_ext.methods.engine.subset_cv import scoring_folds, shared_cache

    n, d = X.shape
    k_max = d if n_select is None else min(int(n_select), d)
    budget = search_budgets(n, d, k_max, method, n_candidates, max_exact)
    with limit_threads():
        V, s2, G = ppca_loadings(X, return_gram=True)
    Sigma = G / n
    K = V @ V.T
    share = (~np.isnan(X)).mean(axis=0) if coverage_aware else np.ones(d)
    # Objective of the empty subset (column means predicted): the reference for error reduction per unit cost.
    empty = float(np.trace(Sigma) / d + aggregate_weight * w @ Sigma @ w)
    cache = shared_cache(X, est, folds)
    fast = hasattr(est, "predict_subsets") or hasattr(est, "predict_new_models")
    forced, exhausted = None, None
    if size is not None and exhaustive and not has_costs and method != "design" and fast:
        forced, exhausted = exhaustive_subset(X, est, folds, w, cache, k_max, size, aggregate_weight, allowed)
    chosen = np.zeros(d, bool)
    order, objective, how = [], [], []
    current = None  # objective of the current subset (exact steps)
    spent = 0.0
    exact_all = method == "exact"
    frozen = None  # design gains after the last greedy step (past the design budget)
    for step in range(k_max):
        fits = ~chosen & (True if cost_budget is None else spent + cost <= float(cost_budget) + 1e-12)
        if allowed is not None and (fits & allowed).any():  # demoted datasets only once no other fits
            fits &= allowed
        if forced is not None and step < forced.sum():  # the exhaustive optimum's datasets come first
            fits &= forced
        if not fits.any():
            break
        if frozen is None and not exact_all and step >= budget["greedy_steps"]:
            frozen = design_gains(K, s2, w, aggregate_weight) * share / cost
        gains = np.where(fits, frozen if frozen is not None else
                         design_gains(K, s2, w, aggregate_weight) * share / cost, -np.inf)
        ranked = np.argsort(-gains, kind="stable")[: int(fits.sum())]
        # auto: exact steps only for predictors that fold a new model in without refitting per subset.
        use_exact = exact_all or (method == "auto" and fast and step < budget["max_exact"])
        if use_exact:
            cand = ranked if exact_all else ranked[: budget["n_candidates"]]
            c, current = _exact_step(X, order, cand, est, folds, w, aggregate_weight, cache,
                                     current if current is not None else empty, cost, has_costs)
            objective.append(current)
            how.append("exact")
        else:
            c = int(ranked[0])
            objective.append(np.nan)
            how.append("design" if frozen is None else "design (frozen)")
        order.append(c)
        chosen[c] = True
        spent += cost[c]
        if frozen is None:
            _condition_on(K, c, s2)
    order = np.asarray(order, dtype=int)
    return {"order_": order, "objective_": np.asarray(objective, dtype=float), "method_": how, "loadings_": V,
            "noise_": s2, "cost_": float(cost[order].sum()), "coverage_": None, "budget_": budget,
            "scoring_rule_": scoring_folds(folds, d)[1] if any(m == "exact" for m in how) else None,
            "exhaustive_": exhausted}


def _exact_step(X, order: list, cand, est, folds, w, aggregate_weight: float, cache, ref: float, cost,
                has_costs: bool) -> tuple:
    """One exact step of :func:`prediction_greedy_order`: ``(dataset, objective)`` of the candidate in ``cand``
    whose addition to ``order`` scores best on the cross-validated objective (``ref``: the current subset's
    objective, or the empty subset's)."""
    cand = np.asarray(cand)

    def gain(obj, i):  # error reduction per unit cost; with equal costs this is the lowest objective
        return (ref - obj) / cost[cand[i]] if has_costs else -obj

    obj = selection_objective(X, [order + [int(c)] for c in cand], est, folds, w, aggregate_weight, cache, gain=gain)
    score = gain(obj, np.arange(len(cand)))
    score = np.where(np.isfinite(score), score, -np.inf)
    best = int(np.argmax(score))
    return int(cand[best]), float(obj[best])


def _condition_on(K, c: int, s2: float) -> None:
    """Condition the design kernel ``K`` on dataset ``c`` being observed: a rank-one update in place (the same
    numbers as ``K - outer / (K_cc + s2)``)."""
    upd = np.outer(K[:, c], K[c, :])
    upd /= K[c, c] + s2
    K -= upd

