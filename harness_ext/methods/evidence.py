"""Evidence for a reduction: error against budget, and the chosen subset against random subsets of its size.

Both use the same cross-validation as the manifest's expected error
(:func:`harness_ext.methods.subset_cv.subset_errors`: model folds, held-out
models revealing their subset cells, missing cells as missing), the same
predictor and the same folds, so the numbers compare like with like.

References
----------
Issue 14 items 5 and 7; the "k random datasets + a regressor" baseline of
DEVELOPERS_GUIDE ("the subset choice must beat it, clearly").
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Sequence

import numpy as np

from .subset_cv import aggregate_rmse, fold_predictions, normalised_weights, score_flops, scoring_folds, subset_errors

#: Two-sided 90% normal quantile (interval half-width = Z90 * RMSE).
Z90 = 1.6448536269514722
#: Flops the evidence may spend scoring subsets (the random draws and the error-against-budget curve,
#: :func:`~harness_ext.methods.subset_cv.score_flops` each); past it both take fewer random subsets
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

    The evidence scores ``1 + n_draws + n_sizes (1 + n_random)`` subsets on ``n``
    held-out models of ``d`` datasets. Past the budget both random counts shrink
    by the same factor (at least :data:`MIN_RANDOM_DRAWS` draws and one random
    subset per size); ``rule`` says what was cut and why (None: nothing).
    """
    per = score_flops(n, d)
    flops = (1 + n_draws + n_sizes * (1 + n_random)) * per
    if flops <= EVIDENCE_FLOPS_BUDGET:
        return n_draws, n_random, None
    # Subsets the budget pays for beyond the chosen one and the curve's own prefixes, shared in proportion.
    share = max(EVIDENCE_FLOPS_BUDGET / per - 1 - n_sizes, 0.0) / max(n_draws + n_sizes * n_random, 1)
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
    better); ``beats``: share of random subsets with a larger aggregate RMSE
    (ties count half); ``cell_ratio`` / ``cell_beats``: the same on per-cell RMSE.
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


def _beats(value: float, others: np.ndarray) -> float:
    others = others[np.isfinite(others)]
    if not others.size or not np.isfinite(value):
        return float("nan")
    return float(np.mean((value < others) + 0.5 * (value == others)))


def compare_with_random(X, subset, predictor, *, n_draws: int = 200, folds, weights=None, random_state: int = 0,
                        costs=None, cost_budget=None, cache: Optional[dict] = None) -> RandomComparison:
    """Cross-validated error of ``subset`` against ``n_draws`` random subsets of its size, same predictor and folds.

    Returns
    -------
    RandomComparison
    """
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    rng = np.random.default_rng(random_state)
    draws = random_subsets(d, len(subset), int(n_draws), rng, costs, cost_budget)
    errs = subset_errors(X, [np.asarray(subset)] + draws, predictor, weights=weights, folds=folds, cache=cache)
    agg = np.array([e.aggregate for e in errs[1:]])
    cell = np.array([e.overall for e in errs[1:]])
    c = errs[0]
    mean_agg = float(np.nanmean(agg)) if np.isfinite(agg).any() else float("nan")
    mean_cell = float(np.nanmean(cell)) if np.isfinite(cell).any() else float("nan")
    return RandomComparison(
        n_draws=int(n_draws), chosen_aggregate_rmse=c.aggregate, chosen_rmse=c.overall,
        random_aggregate_rmse_mean=mean_agg,
        random_aggregate_rmse_median=float(np.nanmedian(agg)) if np.isfinite(agg).any() else float("nan"),
        random_rmse_mean=mean_cell,
        ratio=c.aggregate / mean_agg if mean_agg > 0 else float("nan"), beats=_beats(c.aggregate, agg),
        cell_ratio=c.overall / mean_cell if mean_cell > 0 else float("nan"), cell_beats=_beats(c.overall, cell))


class NestedError(NamedTuple):
    """Held-out error when the selection is part of what is cross-validated (see :func:`nested_subset_error`).

    ``rmse``: over every predicted held-out cell; ``aggregate_rmse``: of the full-benchmark
    score (per fold from pairwise error moments, pooled over folds by their scored models);
    ``n_aggregate``: held-out models behind it.
    """

    rmse: float
    aggregate_rmse: float
    n_aggregate: int


def nested_subset_error(X, fold_subsets: Sequence, predictor, *, folds, weights=None,
                        cache: Optional[dict] = None) -> NestedError:
    """Cross-validated error of select-then-predict: fold ``f``'s models reveal ``fold_subsets[f]``, the subset
    chosen without them, and are predicted by the fit on the other folds.

    The error of the manifest's subset scored on the models that chose it is
    optimistic (they predict it better than a new model would); here no held-out
    model took part in choosing what it reveals, as for the new models ``predict``
    sees. ``folds`` are the model folds the subsets were chosen on (``cache`` as in
    :func:`~harness_ext.methods.subset_cv.subset_errors`, shared with the other evidence); past its
    flops budget the held-out rows are the sample :func:`~harness_ext.methods.subset_cv.scoring_folds` keeps.

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
    sq = cnt = 0.0
    agg_sq, n_agg = 0.0, 0
    for f, (_, te) in enumerate(folds):
        err = preds[f] - X[te]
        out = np.ones(d, bool)
        out[subsets[f]] = False
        err[:, ~out] = np.nan
        ok = ~np.isnan(err)
        e0 = np.where(ok, err, 0.0)
        sq += float((e0 ** 2).sum())
        cnt += float(ok.sum())
        n_f = int(ok.any(axis=1).sum())
        if n_f:
            okf = ok.astype(float)
            a = aggregate_rmse(e0.T @ e0, okf.T @ okf, w * out)
            if np.isfinite(a):
                agg_sq += n_f * a ** 2
                n_agg += n_f
    return NestedError(float(np.sqrt(sq / cnt)) if cnt else float("nan"),
                       float(np.sqrt(agg_sq / n_agg)) if n_agg else float("nan"), n_agg)


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


def plot_budget_curve(rows: list, path, title: str = "", chosen_k: Optional[int] = None, cost_label: str = "datasets run"):
    """Error-vs-budget figure (matplotlib imported here): chosen prefixes against random subsets, 90% width axis.

    Returns the path written, or the figure when ``path`` is None (a notebook shows it).
    """
    from ..report import get_pyplot, save_figure

    plt = get_pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    x = [r["cost"] for r in rows]
    ax.plot(x, [r["aggregate_rmse"] for r in rows], marker="o", label="selected subset: aggregate RMSE")
    if any(r["random_aggregate_rmse"] is not None for r in rows):
        ax.plot(x, [np.nan if r["random_aggregate_rmse"] is None else r["random_aggregate_rmse"] for r in rows],
                marker=".", linestyle="--", label="random subsets (mean): aggregate RMSE")
    ax.plot(x, [r["rmse"] for r in rows], marker="s", alpha=0.6, label="selected subset: per-dataset RMSE")
    if chosen_k is not None:
        for r in rows:
            if r["k"] == chosen_k:
                ax.axvline(r["cost"], color="grey", linestyle=":", label=f"chosen budget ({chosen_k} datasets)")
    ax.set_xlabel(cost_label)
    ax.set_ylabel("cross-validated RMSE (normalised units)\n90% interval width = 3.29 x aggregate RMSE")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title or "error against budget (held-out models)")
    return fig if path is None else save_figure(fig, path)
