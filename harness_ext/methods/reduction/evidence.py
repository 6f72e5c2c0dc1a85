"""Evidence for a reduction: error against budget, and the chosen subset against random subsets of its size.

Both use the same cross-validation as the manifest's expected error
(:func:`harness_ext.methods.engine.subset_cv.subset_errors`: model folds, held-out
models revealing their subset cells, missing cells as missing), the same
predictor and the same folds, so the numbers compare like with like.

The chosen subset's own cross-validated error is in-sample (its held-out models
took part in choosing it); the figures for a new model are nested
(:func:`nested_subset_error`, :func:`compare_nested_with_random`), and are given in
benchmark points (:func:`points_scale`).

References
----------
Varma & Simon (2006), nested cross-validation; the "k random datasets + a regressor"
baseline of the developers' guide ("the subset choice must beat it, clearly").
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Sequence

import numpy as np

from ..engine.subset_cv import aggregate_rmse, fold_predictions, normalised_weights, score_flops, scoring_folds, subset_errors

#: Aggregate RMSE above which a manifest warns, as a share of each dataset's scale (normalised units: 0.05;
#: 5 points on a 0-100 column given as is).
LARGE_ERROR = 0.05
#: Share of random subsets the selection must beat, out of sample, before ``reduce`` calls it better than random.
BEATS_RANDOM = 0.95
#: ... and the one-sided level of the paired test over held-out folds (:func:`paired_test`) it must pass: on data
#: with no structure the rule claims "better than random" for at most about this share of matrices. The folds share
#: most of their training models, so a plain t-test over them is optimistic (at 0.05 a 40 x 20 matrix of pure noise
#: was called better than random for 4 of 30 seeds); the test is the corrected one of Nadeau and Bengio (2003).
PAIRED_ALPHA = 0.01
#: What the paired test is, in words (the manifest and the summary name it).
PAIRED_TEST = "corrected resampled t-test over folds of held-out models (Nadeau and Bengio 2003), one-sided"
#: Two-sided 90% normal quantile (interval half-width = Z90 * RMSE).
Z90 = 1.6448536269514722
#: Flops the evidence may spend scoring subsets (the random draws and the error-against-budget curve,
#: :func:`~harness_ext.methods.engine.subset_cv.score_flops` each); past it both take fewer random subsets
#: (:func:`evidence_counts`). About ten seconds of one core; no real matrix of the repository's data comes near it
#: (the largest, Pythia MMLU's 838 x 57, takes 1.5e9 for 274 subsets).
EVIDENCE_FLOPS_BUDGET = 5e10
#: Random subsets compared with the chosen one at least, whatever the budget (and random orders of
#: :func:`random_baseline_runs`).
MIN_RANDOM_DRAWS = 20
#: Cells (models x datasets, summed over runs) the selection's SimBA random baseline may gather
#: (:func:`harness_ext.methods.prowl.baseline.random_baseline`: a gather, two cumulative sums and a correlation per
#: cell); past it fewer random orders (:func:`random_baseline_runs`). About ten seconds of one core; the largest
#: real matrix of the repository's data (Pythia MMLU, 838 x 57) takes 1e7 for 200 runs.
RANDOM_BASELINE_CELLS = 1e8


def random_subsets(d: int, k: int, n: int, rng: np.random.Generator, costs=None, budget=None) -> list:
    """``n`` uniformly random ``k``-subsets of ``range(d)`` (with ``costs`` and ``budget``: random orders cut where
    the next dataset would exceed the budget, so their cost matches a cost budget rather than a count)."""
    if costs is None:
        return [np.sort(rng.choice(d, size=k, replace=False)) for _ in range(n)]
    out = []
    for _ in range(n):
        perm = rng.permutation(d)
        keep = np.cumsum(np.asarray(costs, dtype=float)[perm]) <= float(budget) + 1e-9
        out.append(np.sort(perm[: max(1, int(keep.sum()))]))
    return out


def evidence_counts(n: int, d: int, n_draws: int, n_sizes: int, n_random: int):
    """``(n_draws, n_random, rule)``: random subsets for :func:`compare_with_random` and per size of
    :func:`budget_curve`, within :data:`EVIDENCE_FLOPS_BUDGET`.

    The evidence scores ``1 + 2 n_draws + n_sizes (1 + n_random)`` subsets on ``n``
    held-out models of ``d`` datasets (the draws twice: in sample and out of sample). Past the budget both random counts shrink
    by the same factor (at least :data:`MIN_RANDOM_DRAWS` draws and one random
    subset per size); ``rule`` says what was cut and why (None: nothing).
    """
    per = score_flops(n, d)
    flops = (1 + 2 * n_draws + n_sizes * (1 + n_random)) * per
    if flops <= EVIDENCE_FLOPS_BUDGET:
        return n_draws, n_random, None
    # Subsets the budget pays for beyond the chosen one and the curve's own prefixes, shared in proportion.
    share = max(EVIDENCE_FLOPS_BUDGET / per - 1 - n_sizes, 0.0) / max(2 * n_draws + n_sizes * n_random, 1)
    draws = int(min(n_draws, max(MIN_RANDOM_DRAWS, share * n_draws)))
    rand = int(min(n_random, max(1, share * n_random))) if n_random else 0
    return draws, rand, {"reason": "scoring every random subset over the flops budget: fewer random subsets",
                         "n_draws": draws, "of_draws": int(n_draws), "n_random_per_size": rand,
                         "of_random_per_size": int(n_random), "flops": float(f"{flops:.3g}"),
                         "budget": float(EVIDENCE_FLOPS_BUDGET)}


def random_baseline_runs(m: int, d: int, n_runs: int):
    """``(n_runs, rule)``: the random orders of the selection's coverage baseline on ``m`` x ``d`` within
    :data:`RANDOM_BASELINE_CELLS` (at least :data:`MIN_RANDOM_DRAWS`); ``rule`` says what was cut (None: nothing)."""
    cells = float(m) * d * n_runs
    if cells <= RANDOM_BASELINE_CELLS:
        return int(n_runs), None
    runs = int(min(n_runs, max(MIN_RANDOM_DRAWS, RANDOM_BASELINE_CELLS // (float(m) * d))))
    return runs, {"reason": "coverage curves of every random order over the cell budget: fewer random orders",
                  "n_runs": runs, "of": int(n_runs), "cells": float(f"{cells:.3g}"), "budget": float(RANDOM_BASELINE_CELLS)}


class RandomComparison(NamedTuple):
    """The chosen subset against random subsets of the same size (or cost), same predictor and folds.

    ``chosen_*``: cross-validated aggregate RMSE and per-cell RMSE of the
    chosen subset; ``random_*_mean`` / ``_median``: over the random draws;
    ``ratio``: chosen aggregate RMSE / mean random aggregate RMSE (below 1 is
    better); ``beats``: share of random subsets with a larger aggregate RMSE, among those
    that are not the chosen subset drawn again (``n_same`` draws, left out: same error);
    ``cell_ratio`` / ``cell_beats``: the same on per-cell RMSE.
    """

    n_draws: int
    chosen_aggregate_rmse: float
    chosen_rmse: float
    random_aggregate_rmse_mean: float
    random_aggregate_rmse_median: float
    random_rmse_mean: float
    ratio: float
    beats: float
    cell_ratio: float
    cell_beats: float
    n_same: int = 0


def _beats(value: float, others: np.ndarray) -> float:
    """Share of ``others`` above ``value``, leaving out the draws with the same error.

    A draw with the same error is the chosen subset drawn again. Counting it as half a win, as a rank test would,
    caps the share at ``1 - 1 / (2 N)`` when only ``N`` subsets exist (1 of 6 datasets: 0.92), so the best subset of
    a few was held below :data:`BEATS_RANDOM` by its own copies.
    """
    others = others[np.isfinite(others)]
    if not np.isfinite(value):
        return float("nan")
    others = others[~_same_error(value, others)]
    return float(np.mean(value < others)) if others.size else float("nan")


def _same_error(value: float, others: np.ndarray) -> np.ndarray:
    # Nested and random errors come from different code paths; the same subset agrees to rounding, not bitwise.
    return np.isclose(others, value, rtol=1e-9, atol=0.0)


def _versus(chosen_aggregate: float, chosen_rmse: float, agg, cell, n_draws: int) -> RandomComparison:
    """The comparison of a chosen subset's aggregate and per-cell RMSE with the random subsets' (``agg``, ``cell``)."""
    agg, cell = np.asarray(agg, dtype=float), np.asarray(cell, dtype=float)
    mean_agg = float(np.nanmean(agg)) if np.isfinite(agg).any() else float("nan")
    mean_cell = float(np.nanmean(cell)) if np.isfinite(cell).any() else float("nan")
    return RandomComparison(
        n_draws=int(n_draws), chosen_aggregate_rmse=float(chosen_aggregate), chosen_rmse=float(chosen_rmse),
        random_aggregate_rmse_mean=mean_agg,
        random_aggregate_rmse_median=float(np.nanmedian(agg)) if np.isfinite(agg).any() else float("nan"),
        random_rmse_mean=mean_cell,
        ratio=chosen_aggregate / mean_agg if mean_agg > 0 else float("nan"), beats=_beats(chosen_aggregate, agg),
        cell_ratio=chosen_rmse / mean_cell if mean_cell > 0 else float("nan"), cell_beats=_beats(chosen_rmse, cell),
        n_same=int(_same_error(chosen_aggregate, agg[np.isfinite(agg)]).sum()))


def compare_with_random(X, subset, predictor, *, n_draws: int = 200, folds, weights=None, random_state: int = 0,
                        costs=None, cost_budget=None, cache: Optional[dict] = None) -> RandomComparison:
    """Cross-validated error of ``subset`` against ``n_draws`` random subsets of its size, same predictor and folds.

    In-sample for a chosen subset: the held-out models took part in choosing it
    (:func:`compare_nested_with_random` is the comparison for a new model).

    Returns
    -------
    RandomComparison
    """
    X = np.asarray(X, dtype=float)
    draws = random_subsets(X.shape[1], len(subset), int(n_draws), np.random.default_rng(random_state), costs, cost_budget)
    errs = subset_errors(X, [np.asarray(subset)] + draws, predictor, weights=weights, folds=folds, cache=cache)
    return _versus(errs[0].aggregate, errs[0].overall, [e.aggregate for e in errs[1:]], [e.overall for e in errs[1:]],
                   n_draws)


def compare_nested_with_random(X, fold_subsets: Sequence, predictor, *, k: int, n_draws: int = 200, folds,
                               weights=None, random_state: int = 0, costs=None, cost_budget=None,
                               cache: Optional[dict] = None, nested: Optional["NestedError"] = None) -> tuple:
    """The selection's error for a new model (:func:`nested_subset_error`) against ``n_draws`` random
    ``k``-subsets, all on the same held-out models and folds: the comparison out of sample.

    A random subset involves no choice, so its cross-validated error is already that of a
    new model; the chosen subset's is only when each fold's models did not choose what
    they reveal. On a matrix with no structure to find, the selection then lands among the
    random subsets, where the in-sample comparison (:func:`compare_with_random`) puts it
    ahead of nearly all of them. The draws are those of :func:`compare_with_random` with
    the same seed. ``nested``: the chosen subsets' error when already computed with these
    folds and weights.

    Where the share of random subsets beaten is itself noisy (one selection against a
    spread of draws), a paired test over the held-out models says whether the selection's
    squared full-benchmark error is below the random subsets' average for the same models
    (one-sided t-test on the folds' mean per-model differences, each model's aggregate over its
    observed cells).

    Returns
    -------
    (RandomComparison, dict)
        The comparison, and the paired test: ``p_value`` (None with fewer than
        :data:`MIN_PAIRED_MODELS` models) and ``n_models``.

    References
    ----------
    Varma & Simon (2006), nested cross-validation; Student (1908), the paired t-test; the "k random
    datasets + a regressor" baseline of the developers' guide.
    """
    from ..engine.subset_cv import STACK_CELLS

    from ...base import limit_threads

    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    w = normalised_weights(weights, d)
    if nested is None:
        nested = nested_subset_error(X, fold_subsets, predictor, folds=folds, weights=w, cache=cache)
    draws = random_subsets(d, int(k), int(n_draws), np.random.default_rng(random_state), costs, cost_budget)
    folds_s, rule = scoring_folds(folds, d)
    held = sum(len(te) for _, te in folds_s)
    per_call = len(draws) if rule is None else max(1, int(STACK_CELLS // max(1, held * d)))
    errs, random_sq = [], np.zeros(held)
    with limit_threads():  # as subset_errors: many small products, extra BLAS threads only contend
        for a in range(0, len(draws), per_call):
            part = draws[a:a + per_call]
            preds = fold_predictions(predictor, X, part, folds_s, cache)
            for i, sub in enumerate(part):
                e = pooled_error(X, [sub] * len(folds_s), [p[i] for p in preds], folds_s, w)
                errs.append((e.aggregate_rmse, e.rmse))
                random_sq += e.model_sq
    random_sq /= max(len(draws), 1)
    fold_of = np.repeat(np.arange(len(folds_s)), [len(te) for _, te in folds_s])
    agg, cell = zip(*errs) if errs else ((), ())
    return (_versus(nested.aggregate_rmse, nested.rmse, agg, cell, n_draws),
            paired_test(nested.model_sq, random_sq, fold_of))


#: Folds with a held-out model with every predicted cell needed before the paired test says anything.
MIN_PAIRED_FOLDS = 5


def paired_test(chosen_sq, random_sq, fold_of) -> dict:
    """One-sided paired test that ``chosen_sq`` is below ``random_sq``, over folds: ``{"test", "level", "p_value",
    "n_folds", "n_models"}``.

    The held-out models of a fold share one fit (and its subset), so their differences are not independent;
    each fold's mean difference is one observation (models missing a predicted cell left out). The folds'
    fits share most of their training models, so their means are correlated too, and the plain t-test over
    them is optimistic; the variance of the mean is taken as ``(1 / J + n_test / n_train) s^2`` instead of
    ``s^2 / J`` (``J`` folds; ``n_test / n_train`` the held-out share over the fitted one, averaged over the
    folds), the corrected resampled t-test.

    References
    ----------
    Nadeau and Bengio (2003), "Inference for the Generalization Error", Machine Learning 52, §4 (the corrected
    resampled t-test); Bouckaert and Frank (2004), its type I error with cross-validation folds.
    """
    chosen_sq = np.asarray(chosen_sq if chosen_sq is not None else [], dtype=float)
    diff = chosen_sq - np.asarray(random_sq, dtype=float)[: chosen_sq.size]
    ok = np.isfinite(diff)
    fold_of = np.asarray(fold_of)[: chosen_sq.size][ok]
    folds = np.unique(fold_of)
    means = np.array([diff[ok][fold_of == f].mean() for f in folds])
    out = {"test": PAIRED_TEST, "level": PAIRED_ALPHA, "p_value": None, "n_folds": int(folds.size),
           "n_models": int(ok.sum())}
    if folds.size < MIN_PAIRED_FOLDS:
        return out
    sd = float(means.std(ddof=1))
    if sd == 0:
        out["p_value"] = 0.0 if means.mean() < 0 else 1.0
        return out
    from scipy.stats import t

    sizes = np.array([(fold_of == f).sum() for f in folds], dtype=float)
    held_share = float(np.mean(sizes / np.maximum(sizes.sum() - sizes, 1.0)))  # n_test / n_train per fold
    se = sd * np.sqrt(1.0 / means.size + held_share)
    out["p_value"] = _round(t.cdf(means.mean() / se, means.size - 1))
    return out


def points_scale(normalisations: Sequence[dict], X, metrics: Optional[Sequence] = None) -> tuple:
    """``(factors, unit)``: benchmark points per normalised unit of each dataset
    (:func:`harness_ext.store.scales.points_per_unit`) and the unit's name; ``(None, "normalised units")`` when a
    dataset's scale is not linear (Elo, perplexity: no one factor holds), or when ``metrics`` differ and not every
    dataset is a 0-1 or 0-100 score: a mean of likelihood differences and accuracies is on no scale of the
    benchmark's (``predict`` gives it no score on a harness metric either)."""
    from ...store.scales import points_per_unit, raw_scale

    X = np.asarray(X, dtype=float)
    factors = [points_per_unit(n, X[:, j]) for j, n in enumerate(normalisations)]
    if not factors or any(f is None for f in factors):
        return None, "normalised units"
    kinds = {raw_scale(n, X[:, j])[0] for j, n in enumerate(normalisations)}
    if kinds <= {"proportion", "percent"}:
        return np.asarray(factors, dtype=float), "points (0-100)"
    if metrics is not None and len({str(m or "score") for m in metrics}) > 1:
        return None, "normalised units"
    return np.asarray(factors, dtype=float), "points on the benchmark's own scale"


def points_weights(weights, factors: np.ndarray) -> tuple:
    """``(weights, multiplier)`` of the aggregate on the benchmark's own scale: an error computed with these
    weights (normalised to sum 1 inside) times ``multiplier`` is in points. With one factor for every dataset,
    the weights are unchanged."""
    w = normalised_weights(weights, len(factors))
    pw = w * factors
    return pw, float(pw.sum())


def mixed_points_weights(weights, normalisations, X_all, metrics: Optional[Sequence] = None):
    """``(weights, unit)``: the normalised weights times each dataset's points per unit, when the datasets have
    different points per unit (an error under the normalised weights then does not convert by one ratio); None
    otherwise (also when :func:`points_scale` finds no points)."""
    factors, unit = points_scale(normalisations, X_all, metrics)
    if factors is None or not np.ptp(factors):
        return None
    return normalised_weights(weights, len(factors)) * factors, unit


class NestedError(NamedTuple):
    """Held-out error when the selection is part of what is cross-validated (see :func:`nested_subset_error`).

    ``rmse``: over every predicted held-out cell; ``aggregate_rmse``: of the full-benchmark
    score (per fold from pairwise error moments, pooled over folds by their scored models);
    ``n_aggregate``: held-out models behind it.
    """

    rmse: float
    aggregate_rmse: float
    n_aggregate: int
    #: Squared error of each scored held-out model's full-benchmark score over its observed cells (:func:`_model_sq`),
    #: in the order of :func:`~harness_ext.methods.engine.subset_cv.scoring_folds`' held-out rows.
    model_sq: Optional[np.ndarray] = None


def nested_subset_error(X, fold_subsets: Sequence, predictor, *, folds, weights=None,
                        cache: Optional[dict] = None) -> NestedError:
    """Cross-validated error of select-then-predict: fold ``f``'s models reveal ``fold_subsets[f]``, the subset
    chosen without them, and are predicted by the fit on the other folds.

    The error of the manifest's subset scored on the models that chose it is
    optimistic (they predict it better than a new model would); here no held-out
    model took part in choosing what it reveals, as for the new models ``predict``
    sees. ``folds`` are the model folds the subsets were chosen on (``cache`` as in
    :func:`~harness_ext.methods.engine.subset_cv.subset_errors`, shared with the other evidence); past its
    flops budget the held-out rows are the sample :func:`~harness_ext.methods.engine.subset_cv.scoring_folds` keeps.

    Returns
    -------
    NestedError

    References
    ----------
    Varma & Simon, "Bias in error estimation when using cross-validation for model
    selection", BMC Bioinformatics 2006 (nested cross-validation).
    """
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    w = normalised_weights(weights, d)
    subsets = [np.asarray(s, dtype=int) for s in fold_subsets]
    folds, _ = scoring_folds(folds, d)
    if hasattr(predictor, "predict_new_models"):  # fits cached per fold index: every subset folded into every fold
        preds = [p[f] for f, p in enumerate(fold_predictions(predictor, X, subsets, folds, cache))]
    else:  # one fit per (fold, subset) otherwise: only each fold's own subset
        preds = [fold_predictions(predictor, X, [s], [fd])[0][0] for s, fd in zip(subsets, folds)]
    return pooled_error(X, subsets, preds, folds, w)


def pooled_error(X: np.ndarray, subsets: Sequence, preds: Sequence, folds, w: np.ndarray) -> NestedError:
    """Held-out error of fold ``f``'s models revealing ``subsets[f]`` and predicted as ``preds[f]``, the errors
    of every fold pooled into one set of pairwise moments.

    A revealed cell is exact (error 0), so folds revealing different subsets pool like
    any other; with one subset for every fold this is the aggregate of
    :func:`~harness_ext.methods.engine.subset_cv.subset_errors`, so the selection and random
    subsets are scored alike (:func:`compare_nested_with_random`). On a complete
    matrix it equals the per-fold moments pooled by the folds' sizes.
    """
    d = X.shape[1]
    P, N = np.zeros((d, d)), np.zeros((d, d))
    sq = cnt = 0.0
    n_agg = 0
    model_sq = []
    for s, pred, (_, te) in zip(subsets, preds, folds):
        shown = np.zeros(d, bool)
        shown[np.asarray(s, dtype=int)] = True
        err = np.where(shown, 0.0, pred - X[te])
        ok = ~np.isnan(err)
        e0 = np.where(ok, err, 0.0)
        okf = ok.astype(float)
        P += e0.T @ e0
        N += okf.T @ okf
        sq += float((e0[:, ~shown] ** 2).sum())
        cnt += float(ok[:, ~shown].sum())
        n_agg += int(ok[:, ~shown].any(axis=1).sum())
        model_sq.append(_model_sq(err, ~np.isnan(X[te]), w))
    agg = aggregate_rmse(P, N, w) if n_agg else float("nan")
    return NestedError(float(np.sqrt(sq / cnt)) if cnt else float("nan"), agg, n_agg,
                       np.concatenate(model_sq) if model_sq else np.zeros(0))


#: Share of the aggregate's weight a held-out model must have observed for its own aggregate error to count in
#: the paired test (:func:`paired_test`).
MIN_OBSERVED_WEIGHT = 0.5


def _model_sq(err: np.ndarray, observed: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Each held-out model's squared error of its full-benchmark score over the cells it has (weights
    renormalised over them; revealed cells have error 0); NaN below :data:`MIN_OBSERVED_WEIGHT`. The cells
    depend on the model only, so the selection and a random subset are compared on the same ones."""
    ww = np.where(observed, w, 0.0)
    total = ww.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        agg = np.where(observed, np.nan_to_num(err), 0.0) @ w / total
    return np.where(total >= MIN_OBSERVED_WEIGHT * w.sum(), agg ** 2, np.nan)


def budget_sizes(d: int, k: int, max_points: int = 15) -> list:
    """Subset sizes of the error-vs-budget curve: every size up to 20 datasets, else a geometric grid; always ``k``."""
    top = d - 1
    if top <= 20:
        sizes = set(range(1, top + 1))
    else:
        sizes = set(np.unique(np.round(np.geomspace(1, top, max_points)).astype(int)).tolist())
    sizes.add(int(k))
    return sorted(s for s in sizes if 1 <= s <= top)


def budget_curve(X, order: Sequence[int], predictor, *, sizes: Sequence[int], folds, weights=None, n_random: int = 20,
                 random_state: int = 0, costs=None, cache: Optional[dict] = None) -> list:
    """Cross-validated error of the first ``k`` datasets of ``order`` for each ``k`` in ``sizes``, next to random
    ``k``-subsets (mean of ``n_random`` draws; 0 skips them).

    Returns
    -------
    list of dict
        ``k``, ``cost`` (sum of ``costs`` of the prefix, or ``k``), ``aggregate_rmse``,
        ``interval_width_90`` (``2 * Z90 * aggregate_rmse``), ``rmse`` (per cell),
        ``random_aggregate_rmse`` and ``random_rmse`` (means over the draws).
    """
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    order = np.asarray(order, dtype=int)
    rng = np.random.default_rng(random_state)
    subsets, owner = [], []
    for i, k in enumerate(sizes):
        subsets.append(order[:k])
        owner.append((i, False))
        for r in random_subsets(d, k, int(n_random), rng):
            subsets.append(r)
            owner.append((i, True))
    errs = subset_errors(X, subsets, predictor, weights=weights, folds=folds, cache=cache)
    cost = np.ones(d) if costs is None else np.asarray(costs, dtype=float)
    rows = []
    for i, k in enumerate(sizes):
        mine = [e for e, (j, rnd) in zip(errs, owner) if j == i and not rnd][0]
        rand = [e for e, (j, rnd) in zip(errs, owner) if j == i and rnd]
        ra = np.array([e.aggregate for e in rand], dtype=float)
        rc = np.array([e.overall for e in rand], dtype=float)
        rows.append({
            "k": int(k), "cost": float(cost[order[:k]].sum()),
            "aggregate_rmse": mine.aggregate, "interval_width_90": 2 * Z90 * mine.aggregate, "rmse": mine.overall,
            "random_aggregate_rmse": float(np.nanmean(ra)) if np.isfinite(ra).any() else None,
            "random_rmse": float(np.nanmean(rc)) if np.isfinite(rc).any() else None,
        })
    return rows


def plot_budget_curve(rows: list, path, title: str = "", chosen_k: Optional[int] = None, cost_label: str = "datasets run",
                      factor: float = 1.0, unit: str = "normalised units"):
    """Error-vs-budget figure (matplotlib imported here): chosen prefixes against random subsets, 90% width axis.

    The errors are multiplied by ``factor`` and labelled ``unit``, as the printed table shows them.
    Returns the path written, or the figure when ``path`` is None (a notebook shows it).
    """
    from ...report import get_pyplot, save_figure

    plt = get_pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    x = [r["cost"] for r in rows]
    y = (lambda key: [np.nan if r.get(key) is None else r[key] * factor for r in rows])
    ax.plot(x, y("aggregate_rmse"), marker="o", label="selected subset: aggregate RMSE")
    if any(r["random_aggregate_rmse"] is not None for r in rows):
        ax.plot(x, y("random_aggregate_rmse"), marker=".", linestyle="--", label="random subsets (mean): aggregate RMSE")
    ax.plot(x, y("rmse"), marker="s", alpha=0.6, label="selected subset: per-dataset RMSE")
    if chosen_k is not None:
        for r in rows:
            if r["k"] == chosen_k:
                ax.axvline(r["cost"], color="grey", linestyle=":", label=f"chosen budget ({chosen_k} datasets)")
    ax.set_xlabel(cost_label)
    ax.set_ylabel(f"RMSE ({unit})\n90% interval width = 3.29 x aggregate RMSE")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title or "error against budget (in-sample: prefixes of the order chosen on every model)", fontsize=9)
    return fig if path is None else save_figure(fig, path)


def beats_random(comparison: dict) -> bool:
    """Whether an out-of-sample comparison (:func:`new_model_evidence`'s ``random_subsets``) shows the selection
    better than random subsets: ahead of :data:`BEATS_RANDOM` of them, and below their average error for the
    same held-out models at :data:`PAIRED_ALPHA` (:func:`paired_test`). Undecided counts as not."""
    beats, ratio = comparison.get("beats"), comparison.get("ratio")
    p = (comparison.get("paired_test") or {}).get("p_value")
    return (beats is not None and ratio is not None and p is not None and beats >= BEATS_RANDOM and ratio < 1
            and p < PAIRED_ALPHA)


def share_beaten_text(comparison: dict, of: str) -> str:
    """``better than 100% of <of> (37 of them the chosen subset itself, left out)``: the share of random subsets
    beaten (:func:`_beats`, which leaves out draws of the chosen subset), or, when every draw's error equals the
    chosen subset's, that none differs."""
    beats, same = comparison.get("beats"), comparison.get("n_same") or 0
    if beats is None or not np.isfinite(beats):
        return f"no better than any of {of} (each gives the same error)"
    return f"better than {beats:.0%} of {of}" + (f" ({same} of them the chosen subset itself, left out)" if same else "")


def new_model_evidence(X, X_all, normalisations: Sequence[dict], fold_subsets: Sequence, predictor,
                       nested: NestedError, *, k: int, n_draws: int, folds, weights, random_state: int = 0,
                       cache: Optional[dict] = None, costs=None, cost_budget=None,
                       metrics: Optional[Sequence] = None) -> dict:
    """The evidence for a new model, in the benchmark's points: what ``reduce`` leads with.

    ``X``: the matrix the selection ran on (a sample of ``X_all``'s models past the model cap);
    ``X_all``: every model, whose values give the scale of a column given as is; ``metrics``: each
    dataset's metric (:func:`points_scale`).

    Returns
    -------
    dict
        ``points`` (``unit``, ``aggregate_rmse``, ``aggregate_interval_90`` and, when every dataset has
        the same factor, per-cell ``rmse``; None on a non-linear scale), ``random_subsets``
        (:func:`compare_nested_with_random` as a dict, aggregate errors in its ``unit``) and ``widths``
        (each dataset's scale width, :func:`harness_ext.store.scales.scale_width`).
    """
    from ...store.scales import scale_width

    factors, unit = points_scale(normalisations, X_all, metrics)
    widths = np.array([scale_width(n, X_all[:, j]) for j, n in enumerate(normalisations)], dtype=float)
    w, mult = normalised_weights(weights, X.shape[1]), 1.0
    uniform = factors is None or bool(np.ptp(factors) == 0)
    if factors is not None:
        w, mult = points_weights(w, factors)
    # With one factor for every dataset the weights are the same once normalised: the nested error is reused.
    comp, test = compare_nested_with_random(X, fold_subsets, predictor, k=k, n_draws=n_draws, folds=folds,
                                            weights=w, random_state=random_state, costs=costs, cost_budget=cost_budget,
                                            cache=cache, nested=nested if uniform else None)
    agg = comp.chosen_aggregate_rmse * mult
    comp = comp._replace(**{f: getattr(comp, f) * mult for f in (
        "chosen_aggregate_rmse", "random_aggregate_rmse_mean", "random_aggregate_rmse_median")})
    if uniform and factors is not None:  # per-cell errors convert too (otherwise they stay normalised)
        comp = comp._replace(chosen_rmse=comp.chosen_rmse * mult, random_rmse_mean=comp.random_rmse_mean * mult)
    points = None
    if factors is not None and np.isfinite(agg):
        points = {"unit": unit, "aggregate_rmse": _round(agg), "aggregate_interval_90": _round(Z90 * agg),
                  **({"rmse": _round(nested.rmse * mult)} if uniform else {})}
    doc = {f: (_round(v) if isinstance(v, float) else v) for f, v in comp._asdict().items()}
    doc["paired_test"] = test
    doc["unit"] = unit if factors is not None else "normalised units"
    doc["cell_unit"] = doc["unit"] if uniform else "normalised units"
    return {"points": points, "random_subsets": doc, "widths": widths}


def _round(v):
    v = float(v)
    return round(v, 10) if np.isfinite(v) else None


def large_error_warnings(aggregate_rmse: float, rmse_per_dataset, weights, widths, columns, subset_idx) -> list:
    """Warnings for a large expected error: the aggregate above :data:`LARGE_ERROR` of the scale, datasets above
    twice that, each against its own scale's width (1 when normalised, 100 for a 0-100 column given as is)."""
    widths = np.asarray(widths, dtype=float)
    w = normalised_weights(weights, len(widths))
    out = []
    scale = float(w @ widths)
    if np.isfinite(aggregate_rmse) and aggregate_rmse > LARGE_ERROR * scale:
        out.append("the predicted full-benchmark score has a cross-validated RMSE for a new model of "
                   + (f"{aggregate_rmse:.3f} (normalised units), above {LARGE_ERROR}" if np.isclose(scale, 1.0) else
                      f"{aggregate_rmse:.3g} ({aggregate_rmse / scale:.1%} of the scale), above {LARGE_ERROR:.0%} "
                      "of the scale"))
    rmse = np.asarray(rmse_per_dataset, dtype=float)
    rest = np.setdiff1d(np.arange(len(widths)), subset_idx)
    large = [columns[j] for j in rest if rmse[j] > 2 * LARGE_ERROR * widths[j]]
    if large:
        limit = f"{2 * LARGE_ERROR}" if (widths[rest] == 1).all() else f"{2 * LARGE_ERROR:.0%} of their scale"
        out.append(f"{len(large)} datasets are predicted with RMSE above {limit}: {', '.join(large[:5])}"
                   + (" ..." if len(large) > 5 else ""))
    return out
