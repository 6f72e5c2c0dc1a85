"""Held-out quality of the prediction engine on every shared real matrix with >= 30 models.

Run::

    python benchmarks/quality_holdout.py            # full: 20 splits (a), 3 folds x 10 seeds (b); minutes
    python benchmarks/quality_holdout.py --quick    # 2 splits, 1 seed, small matrices; CI smoke test
    python benchmarks/quality_holdout.py --protocols f   # the frontier protocol alone (seconds per matrix)
    python benchmarks/quality_holdout.py --csv board.csv --protocols a,f   # your own leaderboard
    python benchmarks/quality_holdout.py --store my.duckdb --benchmark NAME  # a store you filled

Matrices (raw scores through the store, as the product ingests them; missing
cells stay missing, nothing is cut to a dense block):

* HELM Classic (Every Eval Ever), 67 x 14 with its missing cells;
* Open LLM Leaderboard v2 (Every Eval Ever), ~4,500 x 6;
* CrossPred (108 LVLMs x 178 datasets, accuracies and negative BARTScores);
* Pythia MMLU (838 runs x 57 subjects);
* TSC bake-off (40 classifiers x 112 UCR datasets, accuracy; 142 with the ``_eq`` ones, sparse);
* benchbench cross-leaderboard: every leaderboard CSV of ../shared/data/benchbench
  ingested as one benchmark group (``ingest --group benchbench``), its models
  joined by the store's canonical model ids (:mod:`harness_ext.store.identity`,
  the alias table every matrix query applies); models with >= 3 cells and
  leaderboard columns with >= 10 models are kept (sparse, mixed scales: Elo,
  percentages, 0-10 judge scores).

Your own matrices (:mod:`_holdout_matrices`): ``--csv FILE[,FILE...]`` ingests leaderboard files as
``harness-ext ingest FILE`` reads them (a sidecar beside a file included) into a throw-away store and measures
each benchmark they hold, named as ``ingest`` names it, printing ``ingest``'s notes on how each file was read;
``--store DB [--benchmark NAME[,NAME...]]`` measures the benchmarks (or groups) of a store you filled. The
matrix is the store's, as ``reduce`` sees it (aggregate columns left out), with the same protocols, baselines and
table as the shared matrices; a benchmark with fewer than 30 models is skipped with a message.

Protocol (a), held-out models: 20 seeded 80/20 model splits (of whole training runs where a
matrix's models are checkpoints, ``<model>@<revision>``: Pythia MMLU); a subset of
``k = max(2, round(0.1 d))`` datasets (``reduce``'s default budget,
``budget.default_subset_size``) is chosen on the training models as
``reduce`` chooses it: its default selector (``prediction_greedy``: greedy
forward on the cross-validated error of the profile and the aggregate under
the predictor being tested) on the training models' chance-normalised scores
(``--selector`` for another); test models are predicted from their subset
cells only. Reported: Spearman of the aggregate ranking of test models,
aggregate MAE in points, per-cell MAE in points, 90% coverage of cells pooled
and its 5th percentile over splits, aggregate coverage with its 5th percentile and its
bootstrap standard error over the splits (:func:`split_bootstrap`). The aggregate of a
model is the mean over the datasets it has of the chance-normalised score
x100 (linear normalisation of :mod:`harness_ext.store.matrix`, without clipping).
"Points" are the dataset's own units, x100 for scores in [0, 1].

Protocol (b), cell completion: observed cells split in 3 folds, for 10 seeds;
each fold hidden in turn. Reported: median absolute error in points, 90%
coverage, median interval width.

Protocol (f), the frontier (Zhang, Dorner & Hardt, "How Benchmark Prediction from Fewer Data Misses
the Mark", NeurIPS 2025, section 4): the subset is chosen and the predictor fitted on the weakest 50% of
the models by their full aggregate, and the strongest 30% are predicted from their subset cells (one
split, seed 0); where the models are checkpoints with training steps (Pythia MMLU), also ``newest``: each
run's first 50% of checkpoints by step fit, its last 30% are predicted. Reported as (a), plus the mean
signed aggregate error (bias: prediction minus truth), the median aggregate and cell interval widths in
points, the share of test models the engine flags as outside its training population, and the
baselines' aggregate MAE and bias (the plain subset mean's included).

Baselines, same splits: k random datasets + sklearn RidgeCV (expected over
``--ridge-draws`` draws), the mean of the subset (aggregate only), column
means, and the BenchPress re-implementation (``benchpress`` plugin). Ratios
are printed as baseline error / default error (above 1: the default is better).
Nothing is tuned on the test cells: the default chooses rank and penalty by
CV inside each training matrix, and its conformal quantile from held-out
training cells or training models. Protocol (a) calibrates the held-out-model
intervals as ``reduce`` -> ``predict`` do: ``reduce``'s model folds, the
selection re-run without each fold (``reduction.fold_selection.fold_selector``), each fold's
models observed on its own subset (``predict_new_models(reselect=FoldSubsets)``),
so the calibration models did not choose the subset they are scored on.
``--calibration plain`` scores only the models that chose the subset, on it; ``--calibration
design|same`` picks the reselection; ``-pooled`` after it scores each fold's models on the test
models' subset as well and keeps both (``newmodel_intervals.POOL_PLAIN_SCORES``, off by default),
``-nested`` only on the subset chosen without them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
os.environ.setdefault("HARNESS_EXT_NO_PROGRESS", "1")
os.environ.setdefault("HARNESS_EXT_LOAD_PLUGINS", "")
sys.path.insert(0, str(HERE))
from _common import SHARED_DATA as SHARED  # noqa: E402,F401 - one definition of where the shared data is
from _holdout_frontier import (  # noqa: E402,F401 - protocol (f)'s splits and report, re-exported
    FRONTIER_TEST, FRONTIER_TRAIN, _m, checkpoint_step, frontier_splits, full_aggregate, name_width, print_frontier,
    summarise_frontier)
from _holdout_selection import known_ceilings, parse_selector_params, product_plan, selection_params  # noqa: E402,F401
from _holdout_store import store_fit  # noqa: E402 - --fit store
from _holdout_matrices import (  # noqa: E402,F401 - the matrices, re-exported for the other benchmarks
    BENCHBENCH, EEE, MIN_MODELS, QUICK, SOURCES, load_matrices, load_user_matrices)
#: --calibration: plain, or the in-fold reselection, bare (POOL_PLAIN_SCORES decides) or -nested / -pooled.
CALIBRATIONS = ("plain", *(f"{r}{how}" for r in ("design", "same") for how in ("", "-nested", "-pooled")))
#: reduce's default selector (harness_ext.methods.reduction.manifest.DEFAULT_SELECTOR), fed the predictor under test.
DEFAULT_SELECTOR = "prediction_greedy"



def aggregate_scale(X, meta):
    """Per-column affine map raw -> chance-normalised points: ``(a, c)`` with ``points = a x + c``.

    As :func:`harness_ext.store.matrix.normalisation_params` (declared range, [0, 1], else min-max
    over the matrix; flipped when lower is better; chance-corrected), without clipping,
    times 100. A fixed reporting scale, not an input of any method.
    """
    lo_d = np.array([m.get("min_score") if m.get("min_score") is not None else np.nan for m in meta], float)
    hi_d = np.array([m.get("max_score") if m.get("max_score") is not None else np.nan for m in meta], float)
    cmin, cmax = np.nanmin(X, 0), np.nanmax(X, 0)
    unit = (cmin >= 0) & (cmax <= 1)
    declared = np.isfinite(lo_d) & np.isfinite(hi_d) & (hi_d > lo_d)
    lo = np.where(declared, lo_d, np.where(unit, 0.0, cmin))
    hi = np.where(declared, hi_d, np.where(unit, 1.0, cmax))
    span = np.where(hi > lo, hi - lo, 1.0)
    flip = np.array([m.get("higher_is_better") is False for m in meta])
    rb = np.array([m.get("random_baseline") if m.get("random_baseline") is not None else np.nan for m in meta], float)
    r = (rb - lo) / span
    r = np.where(flip, 1 - r, r)
    r = np.clip(np.nan_to_num(r, nan=0.0), 0.0, 0.999)
    # u = (x - lo) / span (or 1 - that), points = 100 (u - r) / (1 - r)
    sgn = np.where(flip, -1.0, 1.0)
    a = 100 * sgn / span / (1 - r)
    c = 100 * (np.where(flip, 1.0 + lo / span, -lo / span) - r) / (1 - r)
    return a, c


def points_factor(X):
    """Per-column factor from raw units to points: 100 for columns inside [0, 1], else 1."""
    return np.where((np.nanmin(X, 0) >= 0) & (np.nanmax(X, 0) <= 1), 100.0, 1.0)


# ----------------------------------------------------------------------------- methods
def choose_subset(X_train, k, seed, selector, predictor, a_sc, c_sc, params=None):
    """The first ``k`` datasets of the selector's order on the training models, as ``reduce`` picks them.

    The selector sees the chance-normalised scores (``reduce``'s input, here
    ``(a x + c) / 100``) with uniform weights (the aggregate); a selector for
    prediction (``prediction_greedy``) is given the predictor under test. Datasets
    most training models never ran go last, as ``reduce``'s default availability
    rule puts them. ``params``: more selector parameters
    (``--selector-params``, :func:`selection_params`). The parameters are ``reduce``'s own
    (:func:`product_plan`) and the selection runs in ``reduce``'s ``fold_selector`` on every training
    model, as ``product_reselect`` runs it without each fold: one code path, so the similarity is
    the selector's own (Pearson for greedy_coverage, not pounce's Minkowski) and the budget is
    cut after the availability rule as ``reduce`` cuts it.
    """
    from harness_ext.methods.reduction.fold_selection import fold_selector

    N = (X_train * a_sc + c_sc) / 100.0
    try:
        sel_params, demoted = product_plan(N, k, seed, selector, predictor, params)
        select = fold_selector(N, selector, k=k, sel_params=sel_params, random_state=seed, mode="same", demoted=demoted)
        return np.asarray(select(np.arange(len(N))), dtype=int), selector
    except Exception as exc:  # noqa: BLE001 - report and fall back, never silently
        print(f"    selector {selector} failed ({type(exc).__name__}: {exc}); random subset used", file=sys.stderr)
        return np.random.default_rng(seed).permutation(X_train.shape[1])[:k], "random"


def ridge_predict(X_train, X_test, subset, seed):
    """sklearn RidgeCV from the subset columns to every other column, fitted on training models.

    Training rows need every subset cell; each target column uses the rows that have it.
    Test models missing a subset cell get the training mean for it.
    """
    from sklearn.linear_model import RidgeCV

    alphas = np.logspace(-3, 3, 13)
    S = np.asarray(subset)
    rows = ~np.isnan(X_train[:, S]).any(1)
    A = X_train[rows][:, S]
    mu_s = np.nanmean(X_train[:, S], 0)
    Q = np.where(np.isnan(X_test[:, S]), mu_s, X_test[:, S])
    out = np.tile(np.nanmean(X_train, 0), (X_test.shape[0], 1))
    Y = X_train[rows]
    full = ~np.isnan(Y).any(0)
    full[S] = False
    if A.shape[0] >= 3 and full.any():
        out[:, full] = RidgeCV(alphas=alphas).fit(A, Y[:, full]).predict(Q).reshape(len(Q), -1)
    for j in np.flatnonzero(~full):  # sparse columns: one fit on the rows that have them
        if j in S:
            continue
        ok = ~np.isnan(Y[:, j])
        if ok.sum() >= 3:
            out[:, j] = RidgeCV(alphas=alphas).fit(A[ok], Y[ok, j]).predict(Q)
    return out


# ----------------------------------------------------------------------------- protocols
def _spearman(a, b):
    from scipy.stats import spearmanr

    ok = np.isfinite(a) & np.isfinite(b)
    return float(spearmanr(a[ok], b[ok])[0]) if ok.sum() >= 3 else np.nan


def product_reselect(X_train, k, seed, selector, predictor, a_sc, c_sc, mode, extra=None, n_folds=None, pool=None,
                     groups=None):
    """The nested calibration ``reduce`` stores and ``predict`` uses, for a subset chosen by :func:`choose_subset`.

    The training models get ``reduce``'s fold labels (its cross-validation folds, seeded
    by the selection's seed); the selection is re-run without each fold as ``reduce`` re-runs
    it (:func:`harness_ext.methods.reduction.fold_selection.fold_selector`, ``mode`` its reselection);
    the result is the :class:`~harness_ext.methods.engine.newmodel_intervals.FoldSubsets` that
    ``predict`` builds from the manifest. ``extra``: selector parameters for the in-fold run only
    (experiments: ``quality_calibration_gap.py``'s ``same:n_candidates=4``); ``n_folds``: calibration
    folds (default ``reduce``'s, ``newmodel_intervals.CALIBRATION_FOLDS``; its cross-validation keeps 5);
    ``pool``: ``FoldSubsets``' (None: ``newmodel_intervals.POOL_PLAIN_SCORES``). ``mode`` may end in
    ``-nested`` (pool False) or ``-pooled`` (pool True). ``groups``: the training models' runs
    (``newmodel_intervals.run_groups``), held out whole by the calibration's folds as ``reduce`` does.
    """
    from harness_ext.methods.reduction.fold_selection import fold_selector
    from harness_ext.methods.engine.newmodel_intervals import (CALIBRATION_FOLDS, FoldSubsets, fold_labels,
                                                        select_fold_subsets)
    from harness_ext.methods.pounce import make_predictor
    from harness_ext.methods.engine.subset_cv import model_folds, shared_cache

    mode, _, how = mode.partition("-")
    pool = {"nested": False, "pooled": True}[how] if how else pool
    N = (X_train * a_sc + c_sc) / 100.0
    labels = fold_labels(len(N), CALIBRATION_FOLDS if n_folds is None else n_folds, seed, groups)
    params, demoted = product_plan(N, k, seed, selector, predictor)
    params.update(extra or {})
    # the predictor settings the main selection chose on every training model (its per-fold cache), as in reduce
    fixed = shared_cache(N, make_predictor(predictor), model_folds(len(N), 5, seed)).get("settings")
    select = fold_selector(N, selector, k=k, sel_params=params, random_state=seed, fixed=fixed, mode=mode,
                           demoted=demoted)
    return FoldSubsets(labels, select_fold_subsets(labels, select), pool=pool)


def test_targets(Xte, subset, a_sc, c_sc):
    """Protocol (a)'s view of the test models: ``(keep, Xin, have, usable, target, W, C, agg_true)``.

    ``Xin``: the test models' subset cells only; ``usable``: models with a subset cell and a cell to
    predict; ``target``: their cells to predict; ``W``, ``C``: each model's aggregate weights (raw units)
    and offset, the mean over what it has of the chance-normalised points; ``agg_true``: that aggregate.
    """
    keep = np.zeros(Xte.shape[1], bool)
    keep[subset] = True
    Xin = np.where(keep, Xte, np.nan)
    have = ~np.isnan(Xte)
    usable = (~np.isnan(Xin)).any(1) & (have & ~keep).any(1)
    target = have & ~keep & usable[:, None]
    n_have = np.maximum(have.sum(1), 1)
    W = np.where(have, a_sc / n_have[:, None], 0.0)  # aggregate weights per test model, raw units
    C = np.where(have, c_sc / n_have[:, None], 0.0).sum(1)
    agg_true = (np.where(have, Xte, 0.0) * W).sum(1) + C
    return keep, Xin, have, usable, target, W, C, agg_true


def split_runs(runs, test_size: float, seed: int):
    """80/20 split of whole training runs (checkpoints of one run on one side): ``(train_idx, test_idx)``."""
    uniq = np.unique(runs)
    test = np.random.default_rng(seed).permutation(uniq.size)[:max(1, int(round(test_size * uniq.size)))]
    is_test = np.isin(runs, uniq[test])
    return np.flatnonzero(~is_test), np.flatnonzero(is_test)


RESULT_KEYS = ("agg_mae", "agg_bias", "spearman", "cell_mae", "cell_cov", "agg_cov", "agg_width", "cell_width")


def new_results(default, extras=()):
    """Per-estimator lists of per-split figures (:data:`RESULT_KEYS`)."""
    return {**{key: {x: [] for x in RESULT_KEYS}
               for key in (default, *extras, "benchpress", "random_ridge", "subset_mean", "column_means")},
            "claimed": {"agg_mae": [], "agg_cov": [], "held_out": [], "ceil_n": [], "ceil_cov": []}}


def evaluate_split(X, tr, te, s, k, selector, default, a_sc, c_sc, P, runs, res, ridge_draws, extras=(),
                   calibration="design", selector_params=None, meta=None, claim=False):
    """One split: choose the subset on rows ``tr`` as ``reduce`` does, predict rows ``te`` from their subset cells.

    ``selector_params``: more selector parameters (``--selector-params``), for the selection and the
    calibration's reselection alike (``meta``: the datasets' metadata, for their ceilings).

    Appends each estimator's figures to ``res`` (:func:`new_results`): aggregate MAE and mean signed
    error (bias, prediction minus truth) in points, Spearman of the test models' aggregates, cell MAE,
    cell and aggregate 90% coverage, median aggregate and cell interval width in points.
    With ``claim``, also what ``reduce`` would tell a user of these training models about the frontier
    (``res["claimed"]``: the frontier folds' aggregate MAE in points and 90% coverage, as its summary prints).
    Returns the frontier flags of the default predictor's prediction (or None).
    """
    from harness_ext.methods.pounce import make_predictor

    d = X.shape[1]
    Xtr, Xte = X[tr], X[te]
    sel_params = selection_params(selector_params, Xtr, meta) if selector_params else None
    subset, _ = choose_subset(Xtr, k, s, selector, default, a_sc, c_sc, sel_params)
    keep, Xin, have, usable, target, W, C, agg_true = test_targets(Xte, subset, a_sc, c_sc)

    def record(key, pred, lower=None, upper=None, agg_lo=None, agg_hi=None):
        pred = np.where(keep & have, Xte, pred)
        agg = (np.where(have, pred, 0.0) * W).sum(1) + C
        r = res[key]
        r["agg_mae"].append(float(np.abs(agg - agg_true)[usable].mean()))
        r["agg_bias"].append(float((agg - agg_true)[usable].mean()))
        r["spearman"].append(_spearman(agg[usable], agg_true[usable]))
        err = np.abs(pred - Xte) * P
        r["cell_mae"].append(float(err[target].mean()))
        if lower is not None:
            r["cell_cov"].append(float(((Xte >= lower) & (Xte <= upper))[target].mean()))
            r["cell_width"].append(float(np.median(((upper - lower) * P)[target])))
        if agg_lo is not None:
            r["agg_cov"].append(float(((agg_true >= agg_lo + C) & (agg_true <= agg_hi + C))[usable].mean()))
            r["agg_width"].append(float(np.median((agg_hi - agg_lo)[usable])))

    # The product path (reduce -> predict): each calibration fold's models are predicted from the subset
    # chosen without them; --calibration plain: from the subset all training models chose.
    reselect = None
    if calibration != "plain":
        reselect = product_reselect(Xtr, k, s, selector, default, a_sc, c_sc, calibration, extra=sel_params,
                                    groups=None if runs is None else runs[tr])
    sf = store_fit(Xtr, meta, FIT)
    if sf is None:
        p = make_predictor(default, random_state=s).fit(Xtr).predict_new_models(Xin, weights=W, reselect=reselect)
    else:  # --fit store: on the scores reduce fits it on, mapped back to raw units
        p = sf.predict(default, s, Xtr, Xin, W, reselect)
    record(default, p.mean, p.lower, p.upper, p.aggregate_lower, p.aggregate_upper)
    if claim:
        from harness_ext.methods.engine.frontier_report import frontier_expectation

        # Its aggregate is each row's a_sc-weighted mean of raw cells; the points aggregate is each row's plain mean
        # of points, so the folds' errors are also scored in points, each row on its own datasets (as reduce does
        # where the datasets' points per unit differ, as on benchbench).
        per = a_sc / d if sf is None else a_sc * sf.beta / d  # points per unit of what the predictor is fitted on
        fe = frontier_expectation(make_predictor(default, random_state=s) if sf is None else sf.predictor(default, s),
                                  Xtr if sf is None else sf.normalise(Xtr), subset, per,
                                  points=(per, "points", np.full(d, 1.0 / d)), reselect=reselect) or {}
        mae = (fe.get("points") or {}).get("aggregate_mae")  # None: folds without an aggregate error, or not calibrated
        res["claimed"]["agg_mae"].append(float("nan") if mae is None else mae)
        res["claimed"]["agg_cov"].append(fe.get("aggregate_coverage_90", float("nan")))
        res["claimed"]["held_out"].append(float(fe.get("held_out_models", float("nan"))))
        n_warned, warned_cov = ceiling_warned(Xtr, Xte, subset, a_sc, c_sc, meta, p, C, agg_true, usable)
        res["claimed"]["ceil_n"].append(float(n_warned))
        res["claimed"]["ceil_cov"].append(warned_cov)
    for key in extras:  # other predictors on the same subset
        q = make_predictor(key, random_state=s).fit(Xtr).predict_new_models(Xin, weights=W, reselect=reselect)
        record(key, q.mean, q.lower, q.upper, q.aggregate_lower, q.aggregate_upper)
    bp = make_predictor("benchpress", random_state=s).fit(Xtr)
    pb = bp.predict_new_models(Xin)
    record("benchpress", pb.mean, pb.lower, pb.upper)
    col = np.tile(np.nanmean(Xtr, 0), (len(te), 1))
    record("column_means", col)
    # subset mean: every unobserved dataset predicted at the model's mean subset points (a model
    # with none of the subset's cells gets the column means, as no subset points exist for it)
    seen = keep & ~np.isnan(Xte)
    sub_pts = np.where(seen, Xte * a_sc + c_sc, 0.0).sum(1) / np.maximum(seen.sum(1), 1)
    sub_pred = np.where(seen.any(1)[:, None], (sub_pts[:, None] - c_sc) / a_sc, col)
    record("subset_mean", np.where(keep, Xte, sub_pred))
    rng = np.random.default_rng(10_000 + s)
    tmp = {x: [] for x in ("agg_mae", "agg_bias", "spearman", "cell_mae")}
    for _ in range(ridge_draws):
        rs = rng.permutation(d)[:k]
        rk = np.zeros(d, bool)
        rk[rs] = True
        pr = np.where(rk, Xte, ridge_predict(Xtr, np.where(rk, Xte, np.nan), rs, s))
        rhave = rk & have
        ragg = (np.where(have, pr, 0.0) * W).sum(1) + C
        ruse = rhave.any(1) & (have & ~rk).any(1)
        rt = have & ~rk & ruse[:, None]
        tmp["agg_mae"].append(float(np.abs(ragg - agg_true)[ruse].mean()))
        tmp["agg_bias"].append(float((ragg - agg_true)[ruse].mean()))
        tmp["spearman"].append(_spearman(ragg[ruse], agg_true[ruse]))
        tmp["cell_mae"].append(float((np.abs(pr - Xte) * P)[rt].mean()))
    for x in tmp:
        res["random_ridge"][x].append(float(np.nanmean(tmp[x])))
    return getattr(p, "frontier", None)


#: --fit: "store" (``reduce``'s input: the store's normalised scores before the floor at chance, the default),
#: "store-floored" (floored at chance, as ``reduce`` fitted before) or "raw" (the predictor detects each column's scale
#: on the raw matrix).
FIT = "store"


def ceiling_warned(Xtr, Xte, subset, a_sc, c_sc, meta, p, C, agg_true, usable):
    """``(n, coverage)``: how many test models ``predict`` warns about as near the ceiling of a saturated subset
    dataset (:func:`~harness_ext.methods.reduction.predict_steps.ceiling_warnings`, on the selector's scale and the
    ceilings :func:`known_ceilings` gives), and the aggregate 90% coverage among them (NaN: none warned)."""
    from harness_ext.methods.prowl.saturation import near_ceiling, subset_saturation

    N_tr, N_te = (Xtr * a_sc + c_sc) / 100.0, (Xte * a_sc + c_sc) / 100.0
    columns = list(range(Xtr.shape[1]))
    rec = subset_saturation(N_tr, known_ceilings(N_tr, meta or [{}] * Xtr.shape[1]), subset, columns)
    warned = np.zeros(len(Xte), bool)
    for mask in near_ceiling(rec, N_te, columns).values():
        warned |= mask
    warned &= usable
    cover = (agg_true >= p.aggregate_lower + C) & (agg_true <= p.aggregate_upper + C)
    return int(warned.sum()), float(cover[warned].mean()) if warned.any() else float("nan")


def protocol_a(raw, meta, n_splits, ridge_draws, selector, default, progress, extras=(), calibration="design",
               selector_params=None):
    from harness_ext.methods.reduction.budget import default_subset_size
    from harness_ext.methods.engine.newmodel_intervals import run_groups
    from harness_ext.methods.pounce import split_models

    X = raw.to_numpy(dtype=float)
    m, d = X.shape
    k = default_subset_size(d)  # reduce's default budget: the one these tables validate
    a_sc, c_sc = aggregate_scale(X, meta)
    P = points_factor(X)
    res = new_results(default, extras)
    runs = run_groups(raw.index)
    for s in range(n_splits):
        tr, te = split_models(m, 0.2, random_state=s) if runs is None else split_runs(runs, 0.2, s)
        evaluate_split(X, tr, te, s, k, selector, default, a_sc, c_sc, P, runs, res, ridge_draws, extras, calibration,
                       selector_params, meta)
        progress(f"(a) split {s + 1}/{n_splits}")
    return res, k


def protocol_f(raw, meta, ridge_draws, selector, default, progress, extras=(), calibration="design",
               selector_params=None):
    """The frontier protocol: ``{variant: (results, n_train, n_test, flagged fraction)}`` (one split each)."""
    from harness_ext.methods.reduction.budget import default_subset_size
    from harness_ext.methods.engine.newmodel_intervals import run_groups

    X = raw.to_numpy(dtype=float)
    k = default_subset_size(X.shape[1])
    a_sc, c_sc = aggregate_scale(X, meta)
    P = points_factor(X)
    runs = run_groups(raw.index)
    out = {}
    for variant, (tr, te) in frontier_splits(raw, X, a_sc, c_sc).items():
        res = new_results(default, extras)
        flags = evaluate_split(X, tr, te, 0, k, selector, default, a_sc, c_sc, P, runs, res, ridge_draws, extras,
                               calibration, selector_params, meta, claim=True)
        flagged = float(np.mean(flags != 0)) if flags is not None else float("nan")
        out[variant] = (res, len(tr), len(te), flagged)
    progress("(f)")
    return out


def protocol_b(raw, n_seeds, default, progress, n_folds=3, extras=()):
    from harness_ext.methods.pounce import make_predictor

    X = raw.to_numpy(dtype=float)
    P = points_factor(X)
    idx = np.flatnonzero(~np.isnan(X).ravel())
    Pf = np.broadcast_to(P, X.shape).ravel()
    res = {key: {"med_ae": [], "cov": [], "width": []} for key in (default, *extras, "benchpress", "column_means")}
    for seed in range(n_seeds):
        fold = np.random.default_rng(seed).permutation(idx.size) % n_folds
        for f in range(n_folds):
            hide = idx[fold == f]
            Xt = X.ravel().copy()
            Xt[hide] = np.nan
            Xt = Xt.reshape(X.shape)
            truth = X.ravel()[hide]
            for key in (default, *extras, "benchpress"):
                est = make_predictor(key, random_state=seed).fit(Xt)
                mean, lo, hi = (a.ravel()[hide] for a in (est.mean_, est.lower_, est.upper_))
                res[key]["med_ae"].append(float(np.median(np.abs(mean - truth) * Pf[hide])))
                res[key]["cov"].append(float(((truth >= lo) & (truth <= hi)).mean()))
                res[key]["width"].append(float(np.median((hi - lo) * Pf[hide])))
            col = np.broadcast_to(np.nanmean(Xt, 0), X.shape).ravel()[hide]
            res["column_means"]["med_ae"].append(float(np.median(np.abs(col - truth) * Pf[hide])))
            progress(f"(b) seed {seed + 1}/{n_seeds} fold {f + 1}/{n_folds}")
    return res


# ----------------------------------------------------------------------------- report
def split_bootstrap(per_split, n_boot: int = 4000, seed: int = 0):
    """``(se, lo, hi)``: bootstrap over splits of the mean of ``per_split`` (e.g. each split's coverage).

    The splits are resampled with replacement, so the spread holds both the test models' draw and the
    calibration's (a conformal interval's coverage varies with its calibration set as well). The splits
    share models, so this is a lower bound on the uncertainty about the matrix's own coverage, not an
    upper one. ``lo``, ``hi``: the 5th and 95th percentiles of the bootstrap means (a 90% interval).
    """
    v = np.asarray([x for x in per_split if x is not None and np.isfinite(x)], dtype=float)
    if v.size < 2:
        return float("nan"), float("nan"), float("nan")
    means = v[np.random.default_rng(seed).integers(0, v.size, (n_boot, v.size))].mean(1)
    return float(means.std(ddof=1)), float(np.percentile(means, 5)), float(np.percentile(means, 95))


def summarise(name, shape, k, ra, rb, default, extras=()):
    D = default
    row = {"matrix": name, "shape": f"{shape[0]} x {shape[1]}", "k": k}
    for e in extras:
        if ra is not None:
            row[f"a_{e}_agg_mae"] = _m(ra[e]["agg_mae"])
            row[f"a_{e}_spearman"] = _m(ra[e]["spearman"])
            row[f"a_{e}_cov"] = _m(ra[e]["cell_cov"])
            row[f"a_{e}_cov_p05"] = float(np.percentile(ra[e]["cell_cov"], 5))
            row[f"a_{e}_agg_cov"] = _m(ra[e]["agg_cov"])
        if rb is not None:
            row[f"b_{e}_med_ae"] = _m(rb[e]["med_ae"])
            row[f"b_{e}_cov"] = _m(rb[e]["cov"])
            row[f"b_{e}_width"] = _m(rb[e]["width"])
    if ra is not None:
        row.update({
            "a_spearman": _m(ra[D]["spearman"]), "a_agg_mae": _m(ra[D]["agg_mae"]), "a_cell_mae": _m(ra[D]["cell_mae"]),
            "a_cov": _m(ra[D]["cell_cov"]), "a_cov_p05": float(np.percentile(ra[D]["cell_cov"], 5)),
            "a_agg_cov": _m(ra[D]["agg_cov"]),
            "a_agg_cov_p05": float(np.percentile(ra[D]["agg_cov"], 5)) if ra[D]["agg_cov"] else float("nan"),
            "a_agg_cov_se": split_bootstrap(ra[D]["agg_cov"])[0], "a_cov_se": split_bootstrap(ra[D]["cell_cov"])[0],
            "a_agg_cov_splits": [float(x) for x in ra[D]["agg_cov"]],
            "a_cov_splits": [float(x) for x in ra[D]["cell_cov"]],
            "a_agg_bias": _m(ra[D]["agg_bias"]), "a_agg_width": _m(ra[D]["agg_width"]),
            "a_cell_width": _m(ra[D]["cell_width"]),
            "a_ridge_agg_mae": _m(ra["random_ridge"]["agg_mae"]), "a_ridge_spearman": _m(ra["random_ridge"]["spearman"]),
            "a_bp_agg_mae": _m(ra["benchpress"]["agg_mae"]), "a_bp_cell_mae": _m(ra["benchpress"]["cell_mae"]),
            "a_bp_cov": _m(ra["benchpress"]["cell_cov"]),
            "a_subset_mean_agg_mae": _m(ra["subset_mean"]["agg_mae"]), "a_colmeans_agg_mae": _m(ra["column_means"]["agg_mae"]),
        })
        row["a_ratio_ridge"] = row["a_ridge_agg_mae"] / row["a_agg_mae"]
        row["a_ratio_bp"] = row["a_bp_agg_mae"] / row["a_agg_mae"]
        row["a_ratio_subset_mean"] = row["a_subset_mean_agg_mae"] / row["a_agg_mae"]
        row["a_ratio_colmeans"] = row["a_colmeans_agg_mae"] / row["a_agg_mae"]
    if rb is not None:
        row.update({
            "b_med_ae": _m(rb[D]["med_ae"]), "b_cov": _m(rb[D]["cov"]), "b_cov_min": float(np.min(rb[D]["cov"])),
            "b_width": _m(rb[D]["width"]), "b_bp_med_ae": _m(rb["benchpress"]["med_ae"]), "b_bp_cov": _m(rb["benchpress"]["cov"]),
            "b_bp_width": _m(rb["benchpress"]["width"]), "b_colmeans_med_ae": _m(rb["column_means"]["med_ae"]),
        })
        row["b_ratio_bp"] = row["b_bp_med_ae"] / row["b_med_ae"]
        row["b_ratio_colmeans"] = row["b_colmeans_med_ae"] / row["b_med_ae"]
    return row


def print_extras(rows, extras, file=None):
    w = name_width(rows)
    for e in extras:
        print(f"\n'{e}' on the same splits and subsets: (a) rho, aggregate MAE, cov90 (p05), aggregate coverage, "
              f"Ridge ratio; (b) medAE, cov90, width, BenchPress ratio", file=file)
        for r in rows:
            if f"a_{e}_agg_mae" in r:
                print(f"{r['matrix']:<{w}}(a){r[f'a_{e}_spearman']:>7.3f}{r[f'a_{e}_agg_mae']:>8.2f}{r[f'a_{e}_cov']:>7.3f}"
                      f"{r[f'a_{e}_cov_p05']:>6.2f}{r[f'a_{e}_agg_cov']:>7.3f}"
                      f"{r['a_ridge_agg_mae'] / r[f'a_{e}_agg_mae']:>7.2f}", end="", file=file)
            if f"b_{e}_med_ae" in r:
                print(f"   (b){r[f'b_{e}_med_ae']:>8.3f}{r[f'b_{e}_cov']:>7.3f}{r[f'b_{e}_width']:>8.2f}"
                      f"{r['b_bp_med_ae'] / r[f'b_{e}_med_ae']:>7.2f}", end="", file=file)
            print(file=file)


def print_table(rows, default, file=None):
    """Tables (a) and (b), each printed only when a row has its protocol (``--protocols f`` alone prints neither)."""
    if any("a_agg_mae" in r for r in rows):
        _print_random_splits(rows, default, file)
    if any("b_med_ae" in r for r in rows):
        _print_cell_completion(rows, file)


def _print_random_splits(rows, default, file=None):
    w = name_width(rows)
    print(f"\n(a) held-out models: default predictor '{default}' vs baselines (aggregate MAE ratios = baseline / default)",
          file=file)
    print(f"{'matrix':<{w}}{'shape':>12}{'k':>4}{'rho':>7}{'aggMAE':>8}{'cellMAE':>8}{'cov90':>7}{'p05':>6}{'se':>6}"
          f"{'aggCov':>7}{'p05':>6}{'se':>6}{'xRidge':>8}{'xBP':>6}{'xSubM':>7}{'xColM':>7}", file=file)
    for r in rows:
        if "a_agg_mae" not in r:
            continue
        print(f"{r['matrix']:<{w}}{r['shape']:>12}{r['k']:>4}{r['a_spearman']:>7.3f}{r['a_agg_mae']:>8.2f}"
              f"{r['a_cell_mae']:>8.2f}{r['a_cov']:>7.3f}{r['a_cov_p05']:>6.2f}{r.get('a_cov_se', float('nan')):>6.3f}"
              f"{r['a_agg_cov']:>7.3f}"
              f"{r.get('a_agg_cov_p05', float('nan')):>6.2f}{r.get('a_agg_cov_se', float('nan')):>6.3f}{r['a_ratio_ridge']:>8.2f}{r['a_ratio_bp']:>6.2f}{r['a_ratio_subset_mean']:>7.2f}"
              f"{r['a_ratio_colmeans']:>7.2f}", file=file)
    print("se: bootstrap standard error over the splits of the cell / aggregate coverage (mean over splits)", file=file)


def _print_cell_completion(rows, file=None):
    w = name_width(rows)
    print("\n(b) cell completion (3 folds x seeds): median |error| in points, coverage, median 90% width", file=file)
    print(f"{'matrix':<{w}}{'medAE':>8}{'cov90':>7}{'min':>6}{'width':>8}{'BP medAE':>9}{'BP cov':>7}{'BP width':>9}"
          f"{'xBP':>6}{'xColM':>7}", file=file)
    for r in rows:
        if "b_med_ae" not in r:
            continue
        print(f"{r['matrix']:<{w}}{r['b_med_ae']:>8.3f}{r['b_cov']:>7.3f}{r['b_cov_min']:>6.2f}{r['b_width']:>8.2f}"
              f"{r['b_bp_med_ae']:>9.3f}{r['b_bp_cov']:>7.3f}{r['b_bp_width']:>9.2f}{r['b_ratio_bp']:>6.2f}"
              f"{r['b_ratio_colmeans']:>7.2f}", file=file)


def user_matrices(args):
    """``--csv`` / ``--store``: the user's own matrices (:func:`load_user_matrices`), not the shared ones."""
    if args.matrices or args.db:
        raise SystemExit("quality_holdout: --matrices and --db name the shared matrices; not with --csv or --store")
    split = (lambda v: tuple(x for x in v.split(",") if x) if v else ())
    return load_user_matrices(csv=split(args.csv), store=args.store, benchmarks=split(args.benchmark))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 splits, 1 seed, HELM Classic and the TSC bake-off only")
    ap.add_argument("--matrices", default=None, help=f"comma-separated subset of {', '.join(SOURCES)}")
    ap.add_argument("--csv", default=None, metavar="FILE[,FILE...]",
                    help="your own leaderboard files instead of the shared matrices: ingested as 'harness-ext ingest "
                         "FILE' reads them (sidecars and all) into a throw-away store, one matrix per benchmark")
    ap.add_argument("--store", default=None, metavar="DB",
                    help="your own store (filled by 'harness-ext ingest ... --db DB') instead of the shared matrices")
    ap.add_argument("--benchmark", default=None, metavar="NAME[,NAME...]",
                    help="with --store (or --csv): the benchmarks or groups to measure (default: each in the store)")
    ap.add_argument("--splits", type=int, default=None, help="protocol (a) splits (default 20; quick 2)")
    ap.add_argument("--seeds", type=int, default=None, help="protocol (b) seeds of 3 folds (default 10; quick 1)")
    ap.add_argument("--ridge-draws", type=int, default=None, help="random subsets per split for random+Ridge (default 10)")
    ap.add_argument("--predictor", default="lowrank", help="the predictor under test (default lowrank)")
    ap.add_argument("--selector", default=DEFAULT_SELECTOR,
                    help=f"selector choosing the subset (default {DEFAULT_SELECTOR}, reduce's default, under --predictor)")
    ap.add_argument("--selector-params", default=None, metavar="KEY=VALUE,...",
                    help="more parameters of --selector for the selection and the calibration's reselection, e.g. "
                         "demote_saturated=true (the datasets' ceilings are then given from their metadata)")
    ap.add_argument("--extra-predictors", default=None,
                    help="other predictors measured on the same splits and subsets (default lowrank_bayes; quick: none)")
    ap.add_argument("--protocols", default="a,b,f",
                    help="a: random held-out models; b: cell completion; f: frontier (strongest models, and the newest checkpoints where the models are checkpoints of runs)")
    ap.add_argument("--calibration", default=None, choices=CALIBRATIONS,
                    help="(a): how new-model intervals are calibrated. Default: as reduce -> predict do (nested: each "
                         "calibration fold observed on the subset the selection chose without it, re-run as reduce's "
                         "FOLD_RESELECTION says; POOL_PLAIN_SCORES). design / same: nested with that reselection "
                         "(-nested: its scores only; -pooled: with the plain ones as well); plain: the "
                         "calibration models are the ones the subset was chosen on")
    ap.add_argument("--nested", action="store_true",
                    help="old name of --calibration same (the folds are now reduce's, so figures differ from runs "
                         "made before the nested default)")
    ap.add_argument("--fit", default="store", choices=("store", "store-floored", "raw"),
                    help="what the predictor under test is fitted on: store (default, reduce's input: the store's "
                         "normalised scores before the floor at chance, mapped back to raw units), store-floored "
                         "(floored at chance, as reduce fitted before) or raw (it detects each column's scale on the "
                         "raw matrix)")
    ap.add_argument("--db", default=None, help="reuse DuckDB store files for ingestion (faster reruns): one per matrix, DB.<matrix>.duckdb")
    ap.add_argument("--json", default=None, help="write the summary rows to this JSON file")
    args = ap.parse_args(argv)
    global FIT
    FIT = args.fit

    names = args.matrices.split(",") if args.matrices else (QUICK if args.quick else tuple(SOURCES))
    n_splits = args.splits or (2 if args.quick else 20)
    n_seeds = args.seeds or (1 if args.quick else 10)
    draws = args.ridge_draws or (2 if args.quick else 10)
    protos = set(args.protocols.split(","))
    extra = args.extra_predictors if args.extra_predictors is not None else ("" if args.quick else "lowrank_bayes")
    extras = tuple(e for e in extra.split(",") if e)
    sys.path.insert(0, str(REPO))
    from tqdm import tqdm

    from harness_ext.methods.reduction.budget import default_subset_size
    from harness_ext.methods.engine.newmodel_intervals import FOLD_RESELECTION

    calibration = args.calibration or ("same" if args.nested else FOLD_RESELECTION)
    sel_params = parse_selector_params(args.selector_params) or None

    t0 = time.perf_counter()
    mats = user_matrices(args) if args.csv or args.store else load_matrices(names, db=args.db)
    rows = []
    total = len(mats) * ((n_splits if "a" in protos else 0) + (3 * n_seeds if "b" in protos else 0)
                         + (1 if "f" in protos else 0))
    bar = tqdm(total=total, desc="quality_holdout", file=sys.stderr, disable=total == 0)
    for name, (raw, meta) in mats.items():
        def progress(msg, name=name):
            bar.set_postfix_str(f"{name} {msg}")
            bar.update(1)

        ra = rb = None
        k = default_subset_size(raw.shape[1])
        if "a" in protos:
            ra, k = protocol_a(raw, meta, n_splits, draws, args.selector, args.predictor, progress, extras, calibration,
                               sel_params)
        if "b" in protos:
            rb = protocol_b(raw, n_seeds, args.predictor, progress, extras=extras)
        row = summarise(name, raw.shape, k, ra, rb, args.predictor, extras)
        if "f" in protos:
            summarise_frontier(row, protocol_f(raw, meta, draws, args.selector, args.predictor, progress, (),
                                               calibration, sel_params), args.predictor)
        rows.append(row)
        if args.json:  # partial results survive an interrupted long run
            Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    bar.close()
    print_table(rows, args.predictor)
    print_extras(rows, extras)
    if "f" in protos:
        print_frontier(rows, args.predictor)
    print(f"\n{n_splits} splits (a), {n_seeds} x 3 folds (b), random+Ridge over {draws} draws, selector {args.selector}"
          f"{f' {sel_params}' if sel_params else ''}, "
          f"calibration {calibration}{' (nested)' if calibration != 'plain' else ''}; "
          f"{time.perf_counter() - t0:.0f} s", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
