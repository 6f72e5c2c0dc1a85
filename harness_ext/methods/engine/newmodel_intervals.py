"""CV+ intervals for new models folded into a :class:`~harness_ext.methods.engine.completion.LowRankCompleter`.

The calibration of :meth:`LowRankCompleter.predict_new_models` holds out K
folds of training models, refits without each and scores the held-out models
masked to a new model's observed cells. A split-conformal quantile of those
scores, applied around the fit on all training models, is optimistic: the
full fit has seen more models than any fold fit (its predictive sd is not the
one the scores were normalised by) and, in ``reduce``, the same models chose
the subset. CV+ applies each score to the prediction of the fold fit it was
held out of (:func:`~harness_ext.methods.engine.conformal.cv_plus_bounds`), so every
score is compared with a prediction from a fit that never saw its model; the
fold fits are the ones the calibration already made, so it costs K fold-ins
of the new models. Cells keep a per-dataset (Mondrian) set of scores where a
dataset has enough of them; the aggregate uses the held-out models' aggregate scores.
After ``reduce``, each fold's models are scored on the subset the selection chose
without them (nested); :data:`POOL_PLAIN_SCORES` (off) keeps their scores on the new
models' subset (plain) as well: the first over-covers, the second under-covers where
the selection has many subsets to choose from.

References
----------
Barber, Candes, Ramdas & Tibshirani, "Predictive inference with the
jackknife+", Ann. Statist. 2021, §4 (CV+); Vovk et al. (2005) §4.5 (Mondrian).
"""

from __future__ import annotations

import re

import numpy as np

from ...flat import flat_slices
from .conformal import (_normal_quantile, conformal_quantile, cv_plus_bounds, mondrian_groups, mondrian_quantiles,
                        normalised_scores)
from .direct_ridge import BLEND_GRID, direct_predict
from .lowrank import fold_in

__all__ = ["CALIBRATION_FOLDS", "FOLD_RESELECTION", "POOL_PLAIN_SCORES", "SAME_RESELECTION_CELLS", "FoldSubsets",
           "calibrate_model_folds", "calibration_weights", "cv_plus_extra_aggregates", "cv_plus_new_models", "fold_labels", "run_groups",
           "run_of", "label_folds", "reselection_mode", "select_fold_subsets"]


def calibration_weights(W, n_iter: int = 50) -> np.ndarray:
    """``(d,)`` dataset weights that calibrate the aggregates of new models with weights ``W`` (n, d) of their own.

    The calibration renormalises one weight vector over each held-out model's datasets.
    Per-model weights are usually a base weight renormalised over each model's own datasets
    (an aggregate over what the model ran): ``W[t, j] = c_t a_j`` where model ``t`` weighs
    dataset ``j``. Their column mean would weigh every dataset by how many new models ran it
    as well, so on a sparse matrix the calibration aggregates would lean on the common
    datasets, which a new model's own aggregate does not. The base weights are recovered
    instead: ``log |W| = log c_t + log a_j`` fitted by least squares over the nonzero entries
    (alternating means), each dataset keeping the sign of its weights; exact (up to a
    constant) when ``W`` has that form, ``W``'s common row when its rows are equal, and 0 for
    a dataset no model weighs.
    """
    W = np.atleast_2d(np.asarray(W, dtype=float))
    on = W != 0
    L = np.log(np.where(on, np.abs(W), 1.0))
    n_row, n_col = np.maximum(on.sum(1), 1), np.maximum(on.sum(0), 1)
    col = np.zeros(W.shape[1])
    for _ in range(int(n_iter)):
        row = np.where(on, L - col, 0.0).sum(1) / n_row
        col = np.where(on, L - row[:, None], 0.0).sum(0) / n_col
    sign = np.sign(np.where(on, W, 0.0).sum(0))
    return np.where(on.any(0), sign * np.exp(col - col[on.any(0)].max(initial=0.0)), 0.0)


def fold_labels(n: int, n_splits: int, random_state: int, groups=None) -> np.ndarray:
    """Fold of each of ``n`` model rows: shuffled K-fold, the folds of
    :func:`~harness_ext.methods.engine.subset_cv.model_folds` (``reduce``'s cross-validation) as one label per row.

    With ``groups`` (one label per row, :func:`run_groups`), every group's rows share a fold: the
    groups are shuffled, then dealt largest first to the fold with the fewest rows so far (at most
    as many folds as groups). A single group cannot be held out from itself: plain folds then.
    """
    from .subset_cv import model_folds

    if groups is not None:
        uniq, inv, counts = np.unique(np.asarray(groups), return_inverse=True, return_counts=True)
        if uniq.size >= 2:
            k = min(int(n_splits), uniq.size)
            order = np.random.default_rng(random_state).permutation(uniq.size)
            order = order[np.argsort(-counts[order], kind="stable")]
            load, of_group = np.zeros(k), np.empty(uniq.size, dtype=int)
            for g in order:  # one step per training run, not per model
                of_group[g] = int(np.argmin(load))
                load[of_group[g]] += counts[g]
            return of_group[inv]
    labels = np.empty(n, dtype=int)
    for f, (_, te) in enumerate(model_folds(n, n_splits, random_state)):
        labels[te] = f
    return labels


#: A checkpoint's suffix: the name ends in a training step, iteration or epoch after '-', '_', '/', '.' or
#: ':' (pythia-160m-step1000, .../checkpoint-26000, -ckpt80, -SPPO-Iter3, -epoch2, -step-1431k-3T,
#: -step1000-tokens4B). Only at the very end: '...-SPPO-Iter2_bt_2b-table' is a variant, not a checkpoint.
_CHECKPOINT = re.compile(r"[-_/.:](?:global[-_]?step|step|ckpt|checkpoint|iter(?:ation)?|epoch)[-_]?\d+(?:\.\d+)?"
                         r"[kmbt]?(?:[-_](?:tokens?[-_]?)?\d+(?:\.\d+)?[kmbt]?)?$", re.IGNORECASE)


def run_of(name) -> str:
    """The training run a model name belongs to: the name without its revision or checkpoint suffix.

    ``EleutherAI/pythia-160m@step1000`` (lm-eval's adapter stores a revision after ``@``) and
    ``pythia-160m-step1000`` are both checkpoints of ``pythia-160m``; a name without either is its own run.
    """
    base = str(name).split("@", 1)[0]
    return _CHECKPOINT.sub("", base) or base


def run_groups(names):
    """The training run of each model name, or None when no two names share one.

    A checkpoint is stored as ``<model>@<revision>`` (the lm-eval adapter's names) or named with a step
    suffix (``<model>-step1000``, ``<model>/checkpoint-500``, ``<model>-iter3``: :func:`run_of`).
    Checkpoints of one run are near-copies of each other: a calibration fold that holds out one
    checkpoint but keeps its siblings is far easier than a new run, whose checkpoints the reduce never
    saw (the routine loop: reduce once, then each new checkpoint of one's own training). So the folds
    hold out whole runs. Without checkpoints (every run once), or with a single run, the folds are the
    plain ones.

    Returns
    -------
    numpy.ndarray of str, or None
    """
    runs = np.array([run_of(x) for x in names], dtype=object)
    n_runs = np.unique(runs).size if runs.size else 0
    if n_runs == runs.size or n_runs < 2:  # no checkpoints; or one run only, which no fold can hold out
        return None
    return runs


def label_folds(labels) -> list:
    """``[(training rows, held-out rows)]`` of each fold of one label per row (the inverse of :func:`fold_labels`)."""
    labels = np.asarray(labels, dtype=int)
    return [(np.flatnonzero(labels != f), np.flatnonzero(labels == f)) for f in range(int(labels.max()) + 1)]


def select_fold_subsets(labels, select) -> list:
    """``select(rows)`` for the training rows of each fold (``labels != f``): the subset chosen without fold ``f``."""
    labels = np.asarray(labels, dtype=int)
    return [np.asarray(select(np.flatnonzero(labels != f)), dtype=int) for f in range(int(labels.max()) + 1)]


#: How ``reduce`` re-runs the selection without each calibration fold: ``"design"`` (a selector's cheap
#: criterion where it has one: ``prediction_greedy`` on the design criterion of the fitted loadings, no refits)
#: or ``"same"`` (the manifest's selector and parameters, the predictor's rank, penalty and scales held at
#: the values chosen on every model). Chosen by held-out coverage and cost (benchmarks/HISTORY.md;
#: benchmarks/quality_calibration_gap.py, benchmarks/quality_holdout.py --calibration design|same|plain).
FOLD_RESELECTION = "same"
#: Calibration folds of ``reduce`` when the folds re-run its own selection (its cross-validation keeps 5, and so
#: does the calibration when they re-select on the design criterion, past :data:`SAME_RESELECTION_CELLS`). A fold's
#: selection, made without the fold's models, predicts them worse than the manifest's selection, made on every
#: training model, predicts new models (K-fold pessimism of an unstable procedure): the nested scores were too
#: large and the intervals over-covered (aggregate 0.93-0.95 at 90% on HELM Classic and CrossPred with 5 folds).
#: With 10 folds each selection sees 90% of the models instead of 80%.
CALIBRATION_FOLDS = 10
#: Cells of the selection's matrix (models x datasets, after ``reduce``'s model sample) up to which the folds re-run
#: the selection as :data:`FOLD_RESELECTION` says; past them, on the design criterion: the exact greedy once per
#: fold costs about :data:`CALIBRATION_FOLDS` times the selection (the 20,000 x 2,000 benchmark's 31 s selection
#: would take five minutes more), and wide matrices are the ones whose selection already cut its exact steps.
#: Every real matrix of the repository's data is under it (the largest, Pythia MMLU: 838 x 57 = 48,000 cells).
SAME_RESELECTION_CELLS = 100_000
#: Parameters that make a selector's in-fold run cheap (``FOLD_RESELECTION = "design"``).
CHEAP_SELECTION = {"prediction_greedy": {"method": "design"}}


def reselection_mode(n_cells: int):
    """``(mode, rule)``: how the calibration folds re-run a selection made on ``n_cells`` cells, and why when it is
    not :data:`FOLD_RESELECTION` (None otherwise), for the manifest."""
    if FOLD_RESELECTION != "same" or n_cells <= SAME_RESELECTION_CELLS:
        return FOLD_RESELECTION, None
    return "design", {"reason": "the exact selection once per calibration fold over its budget: each fold re-runs it "
                                "on the design criterion, in the cross-validation's folds", "cells": int(n_cells),
                      "budget": SAME_RESELECTION_CELLS}


class FoldSubsets:
    """A ``reselect`` for :meth:`LowRankCompleter.predict_new_models` from stored fold subsets (no selection run).

    ``labels`` gives the calibration fold of every training model (the fitted
    matrix's rows), ``subsets[f]`` the subset the selection chose without fold
    ``f``'s models, in the selection's order (``reduce`` stores both in the manifest,
    ``prediction.calibration``). The calibration then uses these folds instead
    of its own seeded ones, and each call ``reselect(rows)`` must ask for the
    complement of one fold: anything else is a :class:`~harness_ext.errors.MethodError`
    (the rows are not the ones the subsets were chosen on).

    ``parts`` (p, k) bool, optional: new models that ran only part of their subset,
    one row per pattern of the positions they ran in the subset's order
    (:meth:`restrict`). Each fold's models are then observed on the same positions
    of the fold's own subset (:meth:`patterns`), cycling through the parts as the
    plain calibration cycles through new models' patterns.

    ``pool``: score the fold's models on the new models' subset as well
    (:data:`POOL_PLAIN_SCORES`, its default).
    """

    def __init__(self, labels, subsets, parts=None, pool=None):
        self.labels = np.asarray(labels, dtype=int)
        self.subsets = [np.asarray(s, dtype=int) for s in subsets]
        self.parts = None if parts is None else np.atleast_2d(np.asarray(parts, dtype=bool))
        self.pool = POOL_PLAIN_SCORES if pool is None else bool(pool)

    def __call__(self, rows):
        from ...errors import MethodError

        rows = np.sort(np.asarray(rows, dtype=int))
        out = np.ones(self.labels.size, bool)
        out[rows] = False
        held = np.unique(self.labels[out])
        if held.size != 1 or not np.array_equal(rows, np.flatnonzero(self.labels != held[0])):
            raise MethodError("the calibration rows are not the complement of one stored fold: the stored fold "
                              "subsets do not belong to this training matrix")
        return self.subsets[int(held[0])]

    def restrict(self, parts) -> "FoldSubsets":
        """The same folds for new models that ran only the positions ``parts`` (p, k) of the subset's order."""
        return FoldSubsets(self.labels, self.subsets, parts, self.pool)

    def patterns(self, rows, n: int, d: int) -> np.ndarray:
        """``(n, d)`` observed cells of ``n`` held-out models of the fold whose complement is ``rows``."""
        sub = self(rows)
        if self.parts is None:
            pat = np.zeros((1, d), bool)
            pat[0, sub] = True
        else:
            pat = np.zeros((len(self.parts), d), bool)
            k = min(sub.size, self.parts.shape[1])
            for i, part in enumerate(self.parts):
                pat[i, sub[:k][part[:k]]] = True
        return pat[np.arange(n) % len(pat)]


#: With a ``reselect``, choose the rank and blend weight on the new models' own pattern of cells (the subset they
#: ran) and take only the conformal scores from the reselected subsets: the choice then predicts from the subset
#: the new models have, and only the calibration is nested. False: both on the reselected subsets.
CHOOSE_ON_NEW_PATTERN = True
#: With a ``reselect``, score every calibration model twice from its fold fit, with half the weight each: observed
#: on the subset chosen without its fold (nested) and on the new models' subset (plain), and calibrate CV+ on both.
#: Neither score is the new models': the nested one comes from a selection made on fewer models than the one new
#: models ran, which fits the fold it left out worse than the full selection fits new models (K-fold pessimism of
#: an unstable selection: over-covers), the plain one from a subset the model's own scores helped choose (the leak:
#: under-covers where the selection has many subsets to choose from). Where the selection is stable the two are
#: the same score. Off: on protocol (a) of benchmarks/quality_holdout.py (six matrices, 20 splits,
#: ``--calibration design-pooled``) the pooled aggregate coverage is nearer 90% than the nested one on HELM
#: Classic, CrossPred and Pythia MMLU but falls under the band on the TSC bake-off (0.875 against 0.912) and is
#: no nearer on benchbench (0.925 against 0.921) (docs/quality.md). ``FoldSubsets(pool=...)`` per call.
POOL_PLAIN_SCORES = False


def calibrate_model_folds(est, O_new, w, reselect=None, extra_truth=None):
    """Rank, blend weight and conformal scores (cells, aggregate) for new models observed as in ``O_new``.

    The training models are split into K seeded folds; each fold is refitted
    without, its models are masked to the observed pattern of a new model
    (cycling through the new models' patterns) and predicted; scores are
    taken on their other observed cells and on their aggregate over the
    datasets they have (weights renormalised there). With ALS every rank of
    ``ranks`` (and the cell-CV one) is tried in the same folds, and with
    ``blend="auto"`` every weight of ``BLEND_GRID``; the pair with the lowest
    held-out squared error (transformed space) is used: the rank that
    completes cells best is not always the one that predicts a model from
    few cells best. Only training models are used. With ``reselect`` (a callable
    ``rows -> subset``), each fold's models are observed on the subset
    ``reselect`` chooses from the other folds' models instead of a new model's
    pattern: the selection is then part of what is cross-validated (rank and
    blend are still chosen on the new models' pattern, :data:`CHOOSE_ON_NEW_PATTERN`),
    and with :data:`POOL_PLAIN_SCORES` (or ``reselect.pool``) each fold's models are
    scored on the new models' pattern as well, both scores kept (CV+ over the pool). A
    ``reselect`` with fold ``labels`` (:class:`FoldSubsets`) brings its folds:
    they replace the seeded ones. ``extra_truth`` (m, d): the values the further aggregates
    (rows of ``w`` after the first) are scored against, observed cells included (default the
    fitted matrix; the benchmark's own score counts scores below chance as they are); given, their
    intervals also join the plain and signed residuals' (the part of the error below chance does not
    scale with the predictor's sd).

    Returns
    -------
    (q_cell, q_agg, (n_cell_scores, n_agg_scores), rank, blend, q_cell per dataset (d,), cal)
        The split-conformal multipliers, and ``cal`` for :func:`cv_plus_new_models`
        (the chosen rank's fold fits, the scores and the fold each came from).
    """
    Z = est.Z_
    m, d = Z.shape
    fold, K = _calibration_folds(est, reselect, m)
    patterns = np.unique(O_new, axis=0)
    ranks, alphas = _calibration_grid(est, m, d, K)
    # w: (d,), or (k, d) for k aggregates calibrated on the same folds (the first is the returned q_agg;
    # the others are in cal["extra"]), e.g. the normalised aggregate and the benchmark's own score.
    W_all = None if w is None else np.atleast_2d(np.asarray(w, dtype=float))
    # Unscaled scores only where a truth is given (the benchmark's score on a matrix with scores below chance):
    # without one the scaled scores are what they always were.
    book = _ScoreBook(ranks, alphas, 0 if w is None else len(W_all), unscaled=extra_truth is not None)
    pool = reselect is not None and getattr(reselect, "pool", POOL_PLAIN_SCORES)
    for f in range(K):
        test = np.flatnonzero(fold == f)
        if test.size == 0 or test.size == m:
            continue
        rows = np.flatnonzero(fold != f)
        pat_new = patterns[np.arange(test.size) % len(patterns)]
        if reselect is None:
            pat = pat_new
        elif hasattr(reselect, "patterns"):  # stored fold subsets (FoldSubsets), partial patterns included
            pat = reselect.patterns(rows, test.size, d)
        else:
            pat = np.zeros((test.size, d), bool)
            pat[:, np.asarray(reselect(rows), dtype=int)] = True
        _score_fold(est, book, _FoldTargets.of(est, test, W_all, extra_truth), f, rows, pat, pat_new,
                    split_choice=reselect is not None and CHOOSE_ON_NEW_PATTERN, pool=pool)
    return _calibration_result(est, book, d, W_all)


def _calibration_folds(est, reselect, m: int) -> tuple:
    """``(fold label per training model, K)``: the ``reselect``'s stored folds, else K seeded ones."""
    fold = getattr(reselect, "labels", None)
    if fold is None:
        K = int(min(est.calibration_folds, m))
        return np.random.default_rng(est.random_state + 104729).permutation(m) % K, K
    if fold.shape != (m,):
        from ...errors import MethodError

        raise MethodError(f"the stored calibration folds label {fold.size} models, the predictor was fitted on {m}")
    return fold, int(fold.max()) + 1


def _calibration_grid(est, m: int, d: int, K: int) -> tuple:
    """``(ranks, blend weights)`` tried in the calibration's folds: every rank a fold fit can hold (ALS with
    ``rank="auto"``) and every weight of ``BLEND_GRID`` (``blend="auto"``), else the fitted ones."""
    if est.method == "als" and est.rank == "auto":
        ranks = sorted({int(r) for r in est.ranks if int(r) < min(m - m // K, d)} | {est.rank_})
    else:
        ranks = [est.rank_]
    alphas = BLEND_GRID if est.blend == "auto" else (est._uncalibrated_blend(),)
    return ranks, alphas


class _ScoreBook:
    """The held-out scores of each (rank, blend) grid point, with the fold fit each came from, and the squared
    errors that choose the grid point."""

    def __init__(self, ranks, alphas, n_agg: int, unscaled: bool = False):
        self.ranks, self.alphas = ranks, alphas
        self.grid = [(r, a) for r in ranks for a in alphas]
        self.cell_scores = {g: [] for g in self.grid}
        self.cell_cols = {g: [] for g in self.grid}
        self.cell_folds = {g: [] for g in self.grid}
        self.agg_scores = {g: [[] for _ in range(n_agg)] for g in self.grid}
        self.agg_folds = {g: [[] for _ in range(n_agg)] for g in self.grid}
        self.residuals = {g: [[] for _ in range(n_agg)] for g in self.grid}  # further aggregates with a truth of their own
        self.main = {g: [] for g in self.grid}  # the first aggregate's (truth, prediction) pairs: the explained share
        self.sq = {g: 0.0 for g in self.grid}
        self.fits = {r: [] for r in ranks}
        self.unscaled = unscaled  # the further aggregates also keep their signed residuals

    def add(self, est, t: "_FoldTargets", g, mz, fi, seen) -> None:
        """The fold's cell and aggregate scores, its models observed on ``seen``, into grid point ``g``'s lists."""
        target = t.have & ~seen
        fit_index = len(self.fits[g[0]]) - 1
        self.cell_scores[g].append(normalised_scores(t.Zt[target], mz[target], fi.sd[target]))
        self.cell_cols[g].append(np.nonzero(target)[1])
        self.cell_folds[g].append(np.full(self.cell_scores[g][-1].size, fit_index))
        if t.W_all is None:
            return
        x_pred = np.where(seen & t.have, t.X_true, est.transform_.inverse_transform(mz))
        # the further aggregates count their observed cells as extra_truth has them
        x_extra = x_pred if t.T_true is None else np.where(seen & t.have, t.T_true, x_pred)
        deriv = est.transform_.derivative(mz)
        for a in range(len(t.W_all)):
            ok = (t.tot[a, :, 0] != 0) & target.any(1) & (seen & t.have).any(1)
            a_pred = (np.where(t.have, x_pred if a == 0 else x_extra, 0.0) * t.wt[a]).sum(1)
            J = np.where(target, t.wt[a] * deriv, 0.0)
            self.agg_scores[g][a].append(normalised_scores(t.a_true[a][ok], a_pred[ok], fi.linear_sd(J)[ok]))
            self.agg_folds[g][a].append(np.full(self.agg_scores[g][a][-1].size, fit_index))
            if a == 0:
                self.main[g].append((t.a_true[0][ok], a_pred[ok]))
            if a > 0 and self.unscaled:
                # Scored against its own truth (scores below chance as they are), the aggregate errs by a part
                # the fitted matrix cannot show, so the predictor's sd does not scale it: signed residuals too.
                # On the aggregate's own scale: the weights were renormalised to sum 1 over the model's datasets,
                # a new model's aggregate uses them as given (MMLU acc's sum to 0.75, the chance slope).
                r = (t.a_true[a][ok] - a_pred[ok]) * t.tot[a, ok, 0]
                rows = self.fits[g[0]][fit_index][1]
                dist = _distances(np.where(seen, t.Zt, np.nan)[ok], seen[ok], est.Z_[rows])
                self.residuals[g][a].append((r, np.full(r.size, fit_index), dist))  # cv_plus_bounds drops non-finite ones


class _FoldTargets:
    """A held-out fold's true values: normalised (``Zt``), raw (``X_true``), which are observed (``have``), and
    per aggregate the renormalised weights ``wt`` (k, t, d), their totals ``tot`` and the true aggregates
    ``a_true`` (k, t); ``T_true``: the values the further aggregates are scored against (``extra_truth``'s rows,
    None without it)."""

    @classmethod
    def of(cls, est, test, W_all, extra_truth=None):
        t = cls()
        t.Zt, t.W_all = est.Z_[test], W_all
        t.have = ~np.isnan(t.Zt)
        t.X_true = est.X_[test]  # raw values: the transform clips at chance and at eps
        t.T_true = None if extra_truth is None else extra_truth[test]
        if W_all is not None:  # one weight vector per aggregate
            wt = np.where(t.have[None], W_all[:, None, :], 0.0)
            t.tot = wt.sum(2, keepdims=True)
            t.wt = wt / np.where(t.tot != 0, t.tot, 1.0)
            t.a_true = np.nansum(np.where(t.have, t.X_true, 0.0)[None] * t.wt, 2)
            if t.T_true is not None:
                t.a_true[1:] = np.nansum(np.where(t.have, t.T_true, 0.0)[None] * t.wt[1:], 2)
        return t


def _score_fold(est, book: _ScoreBook, t: _FoldTargets, f: int, rows, pat, pat_new, *, split_choice: bool,
                pool: bool) -> None:
    """Fit each rank without fold ``f``, fold its models in on ``pat`` and score every blend weight into ``book``
    (and on the new models' pattern ``pat_new``: the squared error that chooses rank and blend when
    ``split_choice``, the pooled plain scores when ``pool``)."""
    Z, alphas = est.Z_, book.alphas
    need_new = split_choice or pool
    z_in = np.where(pat, t.Zt, np.nan)
    for r in book.ranks:
        ft = est._fit_z(Z[rows], seed_offset=f + 101, rank=r)
        book.fits[r].append((ft, rows))
        fi = fold_in(ft, z_in)
        direct = direct_predict(ft, Z[rows], z_in) if any(a > 0 for a in alphas) else fi.mean
        if need_new:  # the new models' own pattern: rank and blend judged there, plain scores pooled
            z_new = np.where(pat_new, t.Zt, np.nan)
            fi_new = fold_in(ft, z_new)
            direct_new = direct_predict(ft, Z[rows], z_new) if any(a > 0 for a in alphas) else fi_new.mean
        for a in alphas:
            mz = (1.0 - a) * fi.mean + a * direct if a > 0 else fi.mean
            m_new = ((1.0 - a) * fi_new.mean + a * direct_new if a > 0 else fi_new.mean) if need_new else None
            if split_choice:
                book.sq[(r, a)] += float(((m_new - t.Zt)[t.have & ~pat_new] ** 2).sum())
            else:
                book.sq[(r, a)] += float(((mz - t.Zt)[t.have & ~pat] ** 2).sum())
            book.add(est, t, (r, a), mz, fi, pat)
            if pool:
                book.add(est, t, (r, a), m_new, fi_new, pat_new)


def _calibration_result(est, book: _ScoreBook, d: int, W_all) -> tuple:
    """:func:`calibrate_model_folds`'s result from the grid point with the lowest held-out squared error."""
    grid, sq = book.grid, book.sq
    best = min(grid, key=lambda g: (round(sq[g], 10), g[0], g[1]))
    cells, cols = _cat(book.cell_scores[best]), _cat(book.cell_cols[best], int)
    c_folds = _cat(book.cell_folds[best], int)
    q_cell = conformal_quantile(cells, est.level) if cells.size else _normal_quantile(est.level)
    q_by = np.full(d, q_cell)
    if est.mondrian and cells.size:
        q_by = mondrian_quantiles(cells, cols, d, est.level)
    q_agg, n_agg, aggs, extra = None, 0, np.array([]), []
    for a in range(0 if W_all is None else len(W_all)):
        s_a = _cat(book.agg_scores[best][a])
        q_a = conformal_quantile(s_a, est.level) if s_a.size else _normal_quantile(est.level)
        if a == 0:
            q_agg, n_agg, aggs = q_a, int(s_a.size), s_a
        else:
            extra.append({"q": q_a, "agg_scores": s_a, "agg_folds": _cat(book.agg_folds[best][a], int),
                          "residuals": _cat([r for r, _, _ in book.residuals[best][a]]),
                          "residual_folds": _cat([k for _, k, _ in book.residuals[best][a]], int),
                          "residual_distances": _cat([x for _, _, x in book.residuals[best][a]])})
    est.calibration_sq_ = {f"rank={r},blend={a}": v for (r, a), v in sq.items()}
    est.calibration_share_ = held_out_share(book.main[best]) if W_all is not None else None
    cal = {"fits": book.fits[best[0]], "blend": float(best[1]), "cell_scores": cells, "cell_cols": cols,
           "cell_folds": c_folds, "agg_scores": aggs,
           "agg_folds": _cat(book.agg_folds[best][0], int) if W_all is not None else np.array([], dtype=int),
           "extra": extra}
    return q_cell, q_agg, (int(cells.size), n_agg), int(best[0]), float(best[1]), q_by, cal


def held_out_share(pairs, min_models: int = 10):
    """One minus the held-out models' mean squared aggregate error over the variance of their true aggregates (the
    cross-validated R squared), from the folds' ``(truth, prediction)`` pairs; None below ``min_models`` held-out
    models or without spread. Read by :mod:`~harness_ext.methods.engine.frontier_unidentified`."""
    if not pairs:
        return None
    t, p = _cat([a for a, _ in pairs]), _cat([b for _, b in pairs])
    ok = np.isfinite(t) & np.isfinite(p)
    # Aggregates all equal have a variance of rounding (1e-32), not spread: no share, not one of -1e27.
    if ok.sum() < min_models or flat_slices(t[ok])[0] or np.var(t[ok]) <= 0:
        return None
    return float(1.0 - np.mean((t[ok] - p[ok]) ** 2) / np.var(t[ok]))


def _distances(z_seen, seen, Z_fit) -> np.ndarray:
    """``|frontier distance|`` of rows ``z_seen`` (transformed, NaN off their ``seen`` cells) beyond the training rows
    ``Z_fit``, each on its own pattern of cells (:func:`~harness_ext.methods.engine.frontier.frontier_distance`)."""
    from .frontier import frontier_distance, positions

    out = np.zeros(len(z_seen))
    patterns, inv = np.unique(seen, axis=0, return_inverse=True)
    for i, pattern in enumerate(patterns):
        rows = np.flatnonzero(inv.ravel() == i)
        out[rows] = np.abs(frontier_distance(positions(z_seen[rows], pattern), positions(Z_fit, pattern)))
    return out


def _cat(parts, dtype=float) -> np.ndarray:
    return np.concatenate(parts) if parts else np.array([], dtype=dtype)


def _fold_predictions(est, cal, z, X_new, O, W):
    """Per fold fit: transformed means and sds of the cells, aggregate and its linear sd (own scale)."""
    alpha = cal["blend"]
    mz, sd, agg, agg_sd = [], [], [], []
    for fit, rows in cal["fits"]:
        fi = fold_in(fit, z)
        m = fi.mean if alpha <= 0 else (1.0 - alpha) * fi.mean + alpha * direct_predict(fit, est.Z_[rows], z)
        mz.append(m)
        sd.append(fi.sd)
        if W is not None:
            x = np.where(O, X_new, est.transform_.inverse_transform(m))
            agg.append((x * W).sum(1))
            agg_sd.append(fi.linear_sd(np.where(O, 0.0, W * est.transform_.derivative(m))))
    return np.stack(mz), np.stack(sd), (np.stack(agg), np.stack(agg_sd)) if W is not None else None


def cv_plus_new_models(est, cal, X_new, z, O, W=None, mondrian=True):
    """CV+ bounds for new models' cells (own scale) and, with weights ``W`` (n, d), their aggregate.

    Parameters
    ----------
    est : LowRankCompleter
        Fitted; ``transform_`` and ``Z_`` are used.
    cal : dict
        From the model-fold calibration: ``fits`` (one ``(fit, training rows)``
        per fold at the chosen rank), ``blend``, ``cell_scores``/``cell_cols``/
        ``cell_folds`` and ``agg_scores``/``agg_folds`` (fold = index into ``fits``).
    X_new, z, O : numpy.ndarray, (n, d)
        New models' raw scores, transformed scores and observed mask.

    Returns
    -------
    (lower, upper, agg_lower, agg_upper)
        Cell bounds (n, d) on each dataset's own scale (observed cells: the value);
        aggregate bounds (n,) or None.

    References
    ----------
    Barber et al., Ann. Statist. 2021, eq. (9).
    """
    level = float(est.level)
    mz, sd, aggs = _fold_predictions(est, cal, z, X_new, O, W)
    n, d = z.shape
    lo_z, hi_z = mz.mean(0).copy(), mz.mean(0).copy()
    scores, cols, folds = cal["cell_scores"], cal["cell_cols"], cal["cell_folds"]
    need = (~O).any(0)
    labels = mondrian_groups(np.bincount(cols, minlength=d)) if mondrian else np.full(d, -1)
    K = mz.shape[0]
    for lab in np.unique(labels[need]):  # one loop over Mondrian groups, vectorised over models, datasets, scores
        js = np.flatnonzero(need & (labels == lab))
        sel = labels[cols] == lab if lab >= 0 else slice(None)  # -1: the pool of every score
        lo, hi = cv_plus_bounds(mz[:, :, js].reshape(K, -1), sd[:, :, js].reshape(K, -1), scores[sel], folds[sel], level)
        lo_z[:, js], hi_z[:, js] = lo.reshape(n, -1), hi.reshape(n, -1)
    lo_x, hi_x = est.transform_.inverse_interval(lo_z, hi_z)
    lower, upper = np.where(O, X_new, lo_x), np.where(O, X_new, hi_x)
    agg_lo = agg_hi = None
    if aggs is not None:
        agg_lo, agg_hi = cv_plus_bounds(aggs[0], aggs[1], cal["agg_scores"], cal["agg_folds"], level)
    return lower, upper, agg_lo, agg_hi


def cv_plus_extra_aggregates(est, cal, X_new, z, O, W_extra):
    """CV+ bounds ``(lower, upper)``, each ``(n, k)``, of the ``k`` further aggregates ``W_extra`` (k, d).

    Their held-out scores were taken on the same folds as the first aggregate's
    (:func:`calibrate_model_folds` with a stack of weight vectors, ``cal["extra"]``). An aggregate
    scored against values of its own (``extra_truth``: the benchmark's score counting scores below
    chance as they are) also has unscaled held-out residuals, and its bounds are the union of three CV+
    intervals, each valid at the level: the scaled one (Lei et al. 2018), the plain one (absolute residuals)
    and the one of the signed residuals (their quantiles at (1 - level) / 2 and (1 + level) / 2). The part
    of its error below chance does not grow with the predictor's sd and lies mostly on one side, so scaled
    scores alone gave the models nearest chance, whose sd is smallest, the narrowest intervals and the
    largest errors (over every held-out Pythia run, 81% of the 90% MMLU acc intervals held the truth;
    with the union, 84%). The residuals are on the aggregate's own scale (its weights as given), and the plain and
    signed ones are joined a second time normalised by one plus the frontier distance (:func:`_distance_scaled`):
    on their own they under-covered the models beyond the training range (Pythia's strongest 30%, fitted on floored
    scores: 0.69; 0.85 joined; fitted before the floor the residuals are a third as large and the union holds 0.35).

    References
    ----------
    Barber et al., Ann. Statist. 2021, eq. (9); Lei et al., JASA 2018, §5.2 (scaled residuals).
    """
    level = float(est.level)
    lows, highs = [], []
    for row, ex in zip(np.atleast_2d(W_extra), cal["extra"]):
        _, _, aggs = _fold_predictions(est, cal, z, X_new, O, np.broadcast_to(row, X_new.shape))
        lo, hi = cv_plus_bounds(aggs[0], aggs[1], ex["agg_scores"], ex["agg_folds"], level)
        if ex.get("residuals") is not None and ex["residuals"].size:
            r, k = ex["residuals"], ex["residual_folds"]  # truth - prediction, on the score's own scale
            for scale, s in ((np.ones_like(aggs[1]), r), _distance_scaled(est, cal, z, O, r, ex)):
                lo, hi = _union_unscaled(aggs[0], scale, s, k, level, lo, hi)
        lows.append(lo)
        highs.append(hi)
    return np.stack(lows, axis=1), np.stack(highs, axis=1)


def _union_unscaled(centres, scale, r, folds, level, lo, hi) -> tuple:
    """``(lo, hi)`` joined with the CV+ intervals of the plain (``|r|``) and signed (``r``'s quantiles at
    ``(1 -+ level) / 2``) residual scores ``r``, each applied times ``scale`` (K, n)."""
    tail = (1.0 + level) / 2.0
    lo_a, hi_a = cv_plus_bounds(centres, scale, np.abs(r), folds, level)
    lo_s = cv_plus_bounds(centres, scale, -r, folds, tail)[0]
    hi_s = cv_plus_bounds(centres, scale, r, folds, tail)[1]
    return np.minimum(np.minimum(lo, lo_a), lo_s), np.maximum(np.maximum(hi, hi_a), hi_s)


def _distance_scaled(est, cal, z, O, r, ex) -> tuple:
    """``(scale (K, n), scores)`` of the residuals ``r`` normalised by ``1 + |frontier distance|`` (Lei et al. 2018's
    locally weighted scores, the distance the only scale): each held-out model's beyond the fit it was held out of
    (``ex["residual_distances"]``), each new model's beyond each fold fit's training models, on the new models' cells.

    A model beyond the training range errs more on the score's part below chance and above it alike (at the frontier
    the predictions shrink toward the population), and no predictor's sd shows it: the plain residuals of models
    mostly inside the range under-covered there (Pythia MMLU's strongest 30%: 0.69 of 90%)."""
    d_new = np.stack([_distances(np.where(O, z, np.nan), O, est.Z_[rows]) for _, rows in cal["fits"]])
    dist = ex.get("residual_distances")
    dist = np.zeros_like(r) if dist is None or dist.size != r.size else dist
    return 1.0 + d_new, r / (1.0 + dist)
