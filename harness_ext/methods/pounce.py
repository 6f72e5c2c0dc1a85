"""pounce: predicting performance from a subset, and evaluating the predictors.

Two protocols:

* **SimBA §4 / §6.3 / §7** (regression from S to D \\ S). Models are split
  80/20; a selector orders the datasets using the training models only; for
  ``|S| = 1 .. d-1`` a predictor sees the training models' full rows and the
  test models' scores on ``S`` and predicts the rest. The MSE on the test
  models' ``D \\ S`` cells traces an MSE curve whose normalised area is
  AUC-MSE (Table 4); the same with Gaussian noise on the training matrix
  (Table 5) and k-fold over the training models (§7.2).
* **Zhao et al. (004) §4.2-4.3** (matrix completion). A fraction of observed
  cells is hidden, the matrix completed, and RMSE on the hidden cells compared
  with the global-mean and mean-of-means baselines; predictors with a
  predictive std are checked for calibration (share of hidden cells inside
  the central interval) and used for active evaluation (reveal the most
  uncertain cells first, against random and an oracle).

For the ``predict`` command, :func:`predict_new_models` fits a predictor on
the training models plus new models observed on a subset, and
:func:`cross_validated_error` gives the per-dataset out-of-sample RMSE of that
predictor for that subset.

References
----------
SimBA (../shared/seeds/000_*) §4, §6.3, §7, Tables 4-5; Zhao et al.
(../shared/seeds/004_*) §3.2, §4.2-4.3, Table 11, Fig. 3-4.
"""

from __future__ import annotations

from typing import Callable, Dict, NamedTuple, Optional, Sequence, Union

import numpy as np
import pandas as pd
from scipy import stats

from ..base import BasePredictor, check_matrix, clone
from ..errors import HarnessExtError, MethodError, PluginError

#: SimBA Table 4 (clean) and Table 5 (noisy) AUC-MSE, Minkowski (p=3) subsets.
PAPER_AUC_MSE = {
    "helm": {
        "clean": {"ridge": 0.005, "knn": 0.004, "mlp_12": 0.081, "mlp_12_12": 0.031},
        "sigma=0.05": {"ridge": 0.010, "knn": 0.017, "mlp_12": 0.081, "mlp_12_12": 0.031},
        "sigma=0.1": {"ridge": 0.013, "knn": 0.027, "mlp_12": 0.087, "mlp_12_12": 0.033},
    },
    "mmlu": {
        "clean": {"ridge": 0.002, "knn": 0.002, "mlp_12": 0.110, "mlp_12_12": 0.081},
        "sigma=0.05": {"ridge": 0.004, "knn": 0.012, "mlp_12": 0.079, "mlp_12_12": 0.068},
        "sigma=0.1": {"ridge": 0.007, "knn": 0.021, "mlp_12": 0.078, "mlp_12_12": 0.067},
    },
    "bigbench_lite": {
        "clean": {"ridge": 0.002, "knn": 0.002, "mlp_12": 0.006, "mlp_12_12": 0.006},
        "sigma=0.05": {"ridge": 0.004, "knn": 0.013, "mlp_12": 0.007, "mlp_12_12": 0.007},
        "sigma=0.1": {"ridge": 0.006, "knn": 0.013, "mlp_12": 0.009, "mlp_12_12": 0.008},
    },
}

#: Zhao et al. Table 11, overall RMSE on the CrossPred matrix (raw units), by hidden ratio.
PAPER_PMF_RMSE = {
    "global_mean": {0.2: 0.367, 0.4: 0.368, 0.6: 0.370, 0.8: 0.373, 0.9: 0.381, 0.95: 0.458},
    "mean_of_means": {0.2: 0.319, 0.4: 0.320, 0.6: 0.322, 0.8: 0.329, 0.9: 0.339, 0.95: 0.385},
    "pmf (MCMC)": {0.2: 0.192, 0.4: 0.199, 0.6: 0.220, 0.8: 0.258, 0.9: 0.313, 0.95: 0.462},
}

OrderSpec = Union[None, Sequence[int], Callable[[np.ndarray], Sequence[int]]]


# ---------------------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------------------


def make_predictor(name: str, **params) -> BasePredictor:
    """Instantiate a registered predictor by name with keyword parameters."""
    from ..plugin_manager import get_registration

    reg = get_registration("predictors", name)
    return reg.cls(**params)


def reindex_rows(predictor: BasePredictor, rows) -> BasePredictor:
    """An unfitted clone whose row-aligned parameters follow ``rows``.

    Predictors that take per-model side information (``model_profiles`` of
    constrained PMF) list those parameters in ``row_params``; evaluation code
    that subsets or reorders models must reindex them the same way.
    """
    est = clone(predictor)
    for p in getattr(est, "row_params", ()):
        value = est.get_params().get(p)
        if value is not None:
            est.set_params(**{p: np.asarray(value)[np.asarray(rows)]})
    return est


def predict_new_models(predictor: BasePredictor, X_train, X_new, subset=None, rows=None):
    """Predict new models' scores from their results on a subset.

    Parameters
    ----------
    predictor : BasePredictor
        Unfitted; it is cloned, never modified.
    X_train : array-like, (n_train, d)
        The reference models' rows (full rows for the regression predictors).
    X_new : array-like, (n_new, d) or (d,)
        New models' scores; NaN where not run. Cells outside ``subset`` are
        masked when ``subset`` is given, so full rows can be passed in
        evaluation.
    subset : sequence of int, optional
        Column indices the new models were run on.
    rows : sequence of int, optional
        Original row indices of ``[X_train; X_new]`` for reindexing
        row-aligned parameters (:func:`reindex_rows`); ``None`` leaves them as
        given (they must then align with the stacked matrix).

    Returns
    -------
    (mean, std)
        ``(n_new, d)`` arrays; observed cells pass through; ``std`` is None for
        predictors without uncertainty.
    """
    X_train = check_matrix(X_train, name="X_train")
    X_new = np.atleast_2d(np.asarray(X_new, dtype=float)).copy()
    if X_new.shape[1] != X_train.shape[1]:
        raise MethodError(f"X_new has {X_new.shape[1]} datasets, X_train {X_train.shape[1]}")
    if subset is not None:
        keep = np.zeros(X_new.shape[1], bool)
        keep[np.asarray(subset, dtype=int)] = True
        X_new[:, ~keep] = np.nan
    if subset is not None and hasattr(predictor, "predict_subsets"):
        # Same predictions as fitting the stacked matrix, without copying the training rows
        # (most of a ridge CV fold's time at 10,000 x 1,000).
        return clone(predictor).predict_subsets(X_train, X_new, [subset])[0], None
    est = reindex_rows(predictor, rows) if rows is not None else clone(predictor)
    est.fit(np.vstack([X_train, X_new]))
    n = X_train.shape[0]
    std = None if est.std_ is None else np.asarray(est.std_)[n:]
    return np.asarray(est.mean_)[n:], std


def split_models(n_models: int, test_size: float = 0.2, random_state: int = 0):
    """Random 80/20 split of model rows: ``(train_idx, test_idx)``, both sorted.

    References
    ----------
    SimBA §5: "models are separated across training and test sets randomly with
    80% of models in training and 20% in test".
    """
    if not 0 < test_size < 1:
        raise MethodError(f"test_size must be in (0, 1), got {test_size!r}")
    n_test = int(round(test_size * n_models))
    if n_test < 1 or n_models - n_test < 2:
        raise MethodError(f"cannot split {n_models} models into train and test with test_size={test_size}")
    perm = np.random.default_rng(random_state).permutation(n_models)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def selector_order(X_train, selector: str = "greedy_coverage", random_state: int = 0, **params) -> np.ndarray:
    """Full dataset order from a registered selector fitted on the training models.

    ``greedy_coverage`` defaults to ``similarity="minkowski"`` (SimBA Tables 4-5
    use Minkowski p=3). Raises PluginError if the selector is not registered.
    """
    from ..plugin_manager import get_registration

    reg = get_registration("selectors", selector)
    est = reg.cls()
    names = est.get_params()
    if reg.name == "greedy_coverage" and "similarity" in names and "similarity" not in params:
        params["similarity"] = "minkowski"
    if "random_state" in names:
        params.setdefault("random_state", random_state)
    if "n_select" in names:
        params.setdefault("n_select", None)
    est.set_params(**params)
    X_train = check_matrix(X_train)
    est.fit(X_train)
    return np.asarray(est.order_, dtype=int)


def resolve_order(X_train, order: OrderSpec = None, selector: str = "greedy_coverage", random_state: int = 0):
    """``(order, source)``: a fixed order, a callable's, the selector's, or a random one.

    Falls back to a random permutation (seeded) only when the selector is not
    registered; ``source`` says which was used.
    """
    d = np.shape(X_train)[1]
    if callable(order):
        out, source = np.asarray(order(X_train), dtype=int), "callable"
    elif order is not None:
        out, source = np.asarray(order, dtype=int), "given"
    else:
        try:
            out, source = selector_order(X_train, selector, random_state), f"selector {selector}"
        except PluginError:
            out, source = np.random.default_rng(random_state).permutation(d), "random (selector not available)"
    if out.ndim != 1 or out.size == 0 or len(set(out.tolist())) != out.size or out.min() < 0 or out.max() >= d:
        raise MethodError(f"an order must list distinct column indices in [0, {d}), got {out!r}")
    return out, source


# ---------------------------------------------------------------------------------------
# SimBA protocol: MSE curves, AUC-MSE, noise, k-fold
# ---------------------------------------------------------------------------------------


def mse_curve(X_train, X_test, order, predictor: BasePredictor, sizes=None, rows=None) -> np.ndarray:
    """MSE on the test models' ``D \\ S`` cells for ``S = order[:k]``, per ``k`` in ``sizes``.

    Parameters
    ----------
    X_train, X_test : array-like
        Training and test model rows (same columns).
    order : sequence of int
        Column indices in selection order.
    predictor : BasePredictor
        Unfitted; cloned for every size.
    sizes : sequence of int, optional
        Subset sizes; default ``1 .. min(len(order), d - 1)`` (at ``|S| = d``
        nothing is left to predict, SimBA footnote 12).
    rows : sequence of int, optional
        Original row indices of ``[X_train; X_test]`` for row-aligned parameters.

    Returns
    -------
    numpy.ndarray
        One MSE per size: mean squared error over every test cell outside ``S``
        whose true value is known.

    References
    ----------
    SimBA §4.1.
    """
    X_train = check_matrix(X_train, name="X_train")
    X_test = check_matrix(X_test, name="X_test")
    d = X_train.shape[1]
    order = np.asarray(order, dtype=int)
    if sizes is None:
        sizes = range(1, min(len(order), d - 1) + 1)
    sizes = list(sizes)
    if hasattr(predictor, "predict_subsets"):
        # Inductive predictors share work across sizes (ridge: one Gram matrix).
        means = clone(predictor).predict_subsets(X_train, X_test, [order[:k] for k in sizes])
    else:
        means = [predict_new_models(predictor, X_train, X_test, subset=order[:k], rows=rows)[0] for k in sizes]
    out = []
    for k, mean in zip(sizes, means):
        rest = np.ones(d, bool)
        rest[order[:k]] = False
        err = (mean - X_test)[:, rest]
        err = err[~np.isnan(err)]
        out.append(float(np.mean(err ** 2)) if err.size else np.nan)
    return np.asarray(out)


def auc_mse(curve) -> float:
    """Area under an MSE curve with ``|S|`` rescaled to [0, 1].

    The same normalisation as SCAUC (:func:`harness_ext.methods.prowl.scauc`:
    trapezoid area divided by the number of intervals), so AUC-MSE is on the
    scale of MSE itself and comparable to SimBA Table 4. A one-point curve
    (``d = 2``) has that point as its value.

    References
    ----------
    SimBA §4.1 ("AUC-MSE") and footnote 13.
    """
    from .prowl import scauc

    curve = np.asarray(curve, dtype=float)
    if curve.size == 0 or np.isnan(curve).any():
        raise MethodError("an MSE curve needs at least one point and no NaN")
    return float(curve[0]) if curve.size == 1 else float(scauc(curve))


def add_noise(X, sigma: float, random_state: int = 0) -> np.ndarray:
    """``X + N(0, sigma^2)`` on observed cells.

    SimBA §7.1 writes ``sigma^2 = 0.05`` in the text but ``sigma = 0.05`` in
    Table 5 and Figure 3; we use ``sigma`` as the standard deviation (the
    table's reading, and METHODS.md's). Values are not clipped to [0, 1].

    Table 5's own numbers fit the text's reading better: KNN's noisy AUC-MSE
    is about its clean value plus ``sigma^2 / k`` (k = 5), i.e. +0.01 and +0.02
    for variances 0.05 and 0.1 (HELM 0.004 -> 0.017 / 0.027, MMLU 0.002 ->
    0.012 / 0.021). With ``--noise 0.2236,0.3162`` (standard deviations of
    those variances) we get KNN 0.017 / 0.029 on HELM Classic (10 splits) and
    0.011 / 0.021 on Pythia MMLU, against 0.004 / 0.006 and 0.001 / 0.003 with
    the default 0.05, 0.1.
    """
    X = np.asarray(X, dtype=float)
    return X + np.random.default_rng(random_state).normal(0.0, sigma, X.shape)


def default_n_splits(n_datasets: int) -> int:
    """5 folds for HELM-size benchmarks (<= 20 datasets), else 10 (SimBA footnote 15).

    SimBA uses 5-fold for HELM (16-17 datasets) and 10-fold for MMLU (58) and
    BigBench-Lite (74, with only 45 models), so the rule follows the number of
    datasets, not of models.
    """
    return 5 if n_datasets <= 20 else 10


class RegressionEvaluation(NamedTuple):
    """What :func:`evaluate_regression` returns.

    ``curves``: MSE per ``|S|`` (index) for each (condition, predictor) column;
    ``auc``: AUC-MSE, predictors x conditions (``clean``, ``sigma=...``) plus
    ``clean_std`` (with repeats) and ``kfold_mean``/``kfold_std``; ``order``: the dataset order used;
    ``order_source``: where it came from; ``split``: (train_idx, test_idx).
    """

    curves: pd.DataFrame
    auc: pd.DataFrame
    order: np.ndarray
    order_source: str
    split: tuple
    n_splits: int


def evaluate_regression(
    X,
    predictors: Dict[str, BasePredictor],
    order: OrderSpec = None,
    selector: str = "greedy_coverage",
    test_size: float = 0.2,
    noise_sigmas: Sequence[float] = (0.05, 0.1),
    n_splits: Optional[int] = None,
    random_state: int = 0,
    n_repeats: int = 1,
    progress: bool = False,
) -> RegressionEvaluation:
    """SimBA's pounce evaluation: MSE curves, AUC-MSE, noise robustness and k-fold stability.

    Parameters
    ----------
    X : array-like or DataFrame, (models, datasets)
    predictors : dict name -> unfitted predictor
    order : OrderSpec
        Fixed column order, a callable ``X_train -> order`` (re-run on each
        k-fold training part), or None to run ``selector`` on the training
        models (re-run per fold too).
    noise_sigmas : sequence of float
        Noise added to the training matrix only (§7.1).
    n_splits : int, optional
        k for the k-fold stability check over the training models (§7.2);
        default :func:`default_n_splits`; 0 skips it.
    random_state : int
        Seeds the split, the noise, the folds and the selector.
    n_repeats : int
        Random 80/20 splits to average over (repeat ``r`` uses seed
        ``random_state + 1000 r``; the selector is re-run on each training
        part). SimBA reports one split; one test set of a dozen models makes
        AUC-MSE vary by a factor of 2-3 between splits, so averaging helps
        comparisons. Curves and AUC columns are means over repeats;
        ``clean_std`` is the spread of the clean AUC-MSE. ``order`` and
        ``split`` in the result, and the k-fold check, are those of repeat 0.

    References
    ----------
    SimBA §4.1, §6.3 (Table 4), §7.1 (Table 5), §7.2.
    """
    from sklearn.model_selection import KFold

    from ..report import progress as progress_bar

    Xa = check_matrix(X, min_rows=3, min_cols=2)
    n, d = Xa.shape
    if int(n_repeats) < 1:
        raise MethodError(f"n_repeats must be >= 1, got {n_repeats!r}")
    cond_names = ["clean"] + [f"sigma={s:g}" for s in noise_sigmas]
    per_repeat_auc = {(c, p): [] for c in cond_names for p in predictors}
    per_repeat_curves = {(c, p): [] for c in cond_names for p in predictors}
    first = None
    tasks = [(r, c, p) for r in range(int(n_repeats)) for c in cond_names for p in predictors]
    prepared = {}
    for r, cond, name in progress_bar(tasks, total=len(tasks), desc="pounce curves", disable=None if progress else True):
        if r not in prepared:
            # repeat 0 uses random_state itself, so one repeat is exactly the single-split protocol
            seed = random_state + 1000 * r
            tr_r, te_r = split_models(n, test_size, seed)
            order_r, source_r = resolve_order(Xa[tr_r], order, selector, seed)
            noisy = {"clean": Xa[tr_r]}
            noisy.update({f"sigma={s:g}": add_noise(Xa[tr_r], s, seed + 1 + i) for i, s in enumerate(noise_sigmas)})
            prepared = {r: (tr_r, te_r, order_r, source_r, noisy)}
            if first is None:
                first = prepared[r]
        tr_r, te_r, order_r, _, noisy = prepared[r]
        sizes_r = np.arange(1, min(len(order_r), d - 1) + 1)
        curve = mse_curve(noisy[cond], Xa[te_r], order_r, predictors[name], sizes=sizes_r,
                          rows=np.concatenate([tr_r, te_r]))
        per_repeat_curves[(cond, name)].append(curve)
        per_repeat_auc[(cond, name)].append(auc_mse(curve))
    tr, te, the_order, source, _ = first
    X_tr = Xa[tr]
    sizes = np.arange(1, min(min(len(c) for v in per_repeat_curves.values() for c in v), d - 1) + 1)
    curves = {k: np.mean([c[: len(sizes)] for c in v], axis=0) for k, v in per_repeat_curves.items()}
    auc = pd.DataFrame(index=list(predictors), columns=cond_names, dtype=float)
    for (cond, name), vals in per_repeat_auc.items():
        auc.loc[name, cond] = float(np.mean(vals))
    if int(n_repeats) > 1:
        auc["clean_std"] = [float(np.std(per_repeat_auc[("clean", p)], ddof=1)) for p in predictors]
    n_splits = default_n_splits(d) if n_splits is None else int(n_splits)
    n_splits = min(n_splits, len(tr))
    if n_splits >= 2:
        kf = KFold(n_splits=n_splits, shuffle=True, random_state=random_state)
        fold_auc = {p: [] for p in predictors}
        folds = list(kf.split(tr))
        for f_tr, f_te in progress_bar(folds, total=len(folds), desc="pounce k-fold", disable=None if progress else True):
            fo, _ = resolve_order(X_tr[f_tr], order, selector, random_state)
            f_sizes = np.arange(1, min(len(fo), d - 1) + 1)
            f_rows = np.concatenate([tr[f_tr], tr[f_te]])
            for p, est in predictors.items():
                fold_auc[p].append(auc_mse(mse_curve(X_tr[f_tr], X_tr[f_te], fo, est, sizes=f_sizes, rows=f_rows)))
        auc["kfold_mean"] = [np.mean(fold_auc[p]) for p in predictors]
        auc["kfold_std"] = [np.std(fold_auc[p], ddof=1) if len(fold_auc[p]) > 1 else np.nan for p in predictors]
    curves_df = pd.DataFrame(curves, index=pd.Index(sizes, name="|S|"))
    curves_df.columns = pd.MultiIndex.from_tuples(curves_df.columns, names=["condition", "predictor"])
    return RegressionEvaluation(curves_df, auc, the_order, source, (tr, te), n_splits if n_splits >= 2 else 0)


# ---------------------------------------------------------------------------------------
# Cross-validated error of a predictor for a given subset (used by the manifest / predict)
# ---------------------------------------------------------------------------------------


class CVError(NamedTuple):
    """Out-of-sample error of a predictor for one subset (:func:`cross_validated_error`).

    ``per_dataset``: RMSE per dataset over held-out models (NaN for datasets in
    the subset, which are observed, not predicted; a Series when ``X`` was a
    DataFrame). ``overall``: RMSE over every predicted held-out cell.
    ``aggregate``: RMSE of the predicted full-benchmark mean score (observed
    subset cells plus predictions, averaged over all datasets) over held-out
    models whose full row is known -- the interval width for an aggregate.
    """

    per_dataset: Union[np.ndarray, pd.Series]
    overall: float
    aggregate: float


def cross_validated_error(X, subset, predictor: BasePredictor, n_splits: int = 5, random_state: int = 0,
                          weights=None) -> CVError:
    """Per-dataset out-of-sample RMSE of ``predictor`` when models are observed on ``subset`` only.

    Models are split into ``n_splits`` folds; each fold's models play new
    models (only ``subset`` observed, :func:`predict_new_models`) for a
    predictor fitted with the other folds' rows. Missing cells are the normal
    case: held-out models reveal the subset cells they have and are scored on
    the others they have (:mod:`harness_ext.methods.subset_cv`, which also
    says how the aggregate error of an incomplete row is estimated).

    Parameters
    ----------
    X : array-like or DataFrame, (models, datasets)
    subset : sequence of int or of column names (DataFrame)
    predictor : BasePredictor
        Unfitted; cloned per fold (row-aligned parameters are reindexed).
    n_splits : int
        Capped at the number of models.
    random_state : int
        Seeds the fold assignment.
    weights : array-like, optional
        Dataset weights of the full-benchmark aggregate (normalised to sum 1);
        default uniform (the mean over datasets).

    Returns
    -------
    CVError
        ``per_dataset``, ``overall`` and ``aggregate`` RMSE.

    References
    ----------
    SimBA §7.2 (k-fold over models); the error bar ``predict`` reports.
    """
    from .subset_cv import subset_errors

    columns = X.columns if isinstance(X, pd.DataFrame) else None
    if columns is not None:
        subset = [columns.get_loc(c) if not isinstance(c, (int, np.integer)) else int(c) for c in subset]
    Xa = check_matrix(X, min_rows=2)
    [res] = subset_errors(Xa, [subset], predictor, n_splits=n_splits, random_state=random_state, weights=weights)
    per = res.per_dataset
    if columns is not None:
        per = pd.Series(per, index=columns, name="rmse")
    return CVError(per, res.overall, res.aggregate)


# ---------------------------------------------------------------------------------------
# 004 protocol: masked-cell RMSE, calibration, active evaluation
# ---------------------------------------------------------------------------------------


def hide_cells(X, ratio: float, rng: np.random.Generator) -> np.ndarray:
    """Boolean mask of ``int(ratio * n_observed)`` observed cells chosen uniformly (004 ``mask_randomly``)."""
    X = np.asarray(X, dtype=float)
    if not 0 < ratio < 1:
        raise MethodError(f"hidden ratio must be in (0, 1), got {ratio!r}")
    obs = np.flatnonzero(~np.isnan(X).ravel())
    hide = rng.choice(obs, size=int(ratio * obs.size), replace=False)
    mask = np.zeros(X.size, bool)
    mask[hide] = True
    return mask.reshape(X.shape)


def interval_coverage(truth, mean, std, level: float = 0.9) -> float:
    """Share of cells whose true value lies in the central Gaussian ``level`` interval ``mean +- z std``."""
    truth, mean, std = (np.asarray(a, dtype=float) for a in (truth, mean, std))
    z = stats.norm.ppf(0.5 + level / 2)
    ok = ~np.isnan(truth)
    return float(np.mean(np.abs(truth[ok] - mean[ok]) <= z * std[ok]))


def masked_rmse(
    X,
    predictors: Dict[str, BasePredictor],
    hidden_ratios: Sequence[float] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
    n_repeats: int = 1,
    level: float = 0.9,
    random_state: int = 0,
    progress: bool = False,
) -> pd.DataFrame:
    """RMSE on randomly hidden cells, for each predictor and hidden ratio (004 §4.2, Fig. 3, Table 11).

    Every predictor sees the same masks (repeat ``r`` uses seed
    ``random_state + r``). Errors are in the units of ``X``.

    Returns
    -------
    pandas.DataFrame
        Long format: ``ratio, repeat, predictor, rmse, mae, coverage`` (share of
        hidden cells inside the ``level`` interval; NaN without ``std_``),
        ``mean_std`` (average predictive std on hidden cells) and ``n_hidden``.
    """
    from ..report import progress as progress_bar

    Xa = check_matrix(X)
    rows = []
    tasks = [(r, ratio) for r in range(int(n_repeats)) for ratio in hidden_ratios]
    for r, ratio in progress_bar(tasks, total=len(tasks), desc="pounce masked", disable=None if progress else True):
        mask = hide_cells(Xa, ratio, np.random.default_rng(random_state + r))
        train = np.where(mask, np.nan, Xa)
        for name, est in predictors.items():
            fitted = clone(est).fit(train)
            err = fitted.mean_[mask] - Xa[mask]
            std = fitted.std_
            rows.append({
                "ratio": ratio, "repeat": r, "predictor": name,
                "rmse": float(np.sqrt(np.mean(err ** 2))), "mae": float(np.mean(np.abs(err))),
                "coverage": interval_coverage(Xa[mask], fitted.mean_[mask], std[mask], level) if std is not None else np.nan,
                "mean_std": float(np.mean(std[mask])) if std is not None else np.nan,
                "n_hidden": int(mask.sum()),
            })
    return pd.DataFrame(rows)


def active_evaluation(
    X,
    predictor: BasePredictor,
    initial: float = 0.2,
    pool: float = 0.6,
    step: float = 0.05,
    n_steps: int = 6,
    strategies: Sequence[str] = ("uncertainty", "random", "oracle"),
    n_repeats: int = 1,
    random_state: int = 0,
    progress: bool = False,
) -> pd.DataFrame:
    """Active evaluation: which cells to evaluate next (004 §3.2, §4.3, Fig. 4).

    Observed cells are split into ``initial`` (known), ``pool`` (may be
    evaluated) and the rest (test). Each step reveals ``step`` x (all observed
    cells) from the pool -- the most uncertain (largest ``std_``), random ones,
    or (oracle) those with the largest actual error -- refits, and records
    RMSE on the test cells.

    Returns
    -------
    pandas.DataFrame
        ``repeat, strategy, extra`` (fraction of observed cells revealed so
        far), ``rmse``, ``improvement`` (initial RMSE minus current).

    Raises
    ------
    MethodError
        If ``uncertainty`` is requested and the predictor has no ``std_``.
    """
    from ..report import progress as progress_bar

    Xa = check_matrix(X)
    if initial <= 0 or pool <= 0 or initial + pool >= 1:
        raise MethodError("need initial > 0, pool > 0 and initial + pool < 1")
    unknown = set(strategies) - {"uncertainty", "random", "oracle"}
    if unknown:
        raise MethodError(f"unknown active-evaluation strategies: {sorted(unknown)}")
    obs = np.flatnonzero(~np.isnan(Xa).ravel())
    n_obs = obs.size
    batch = max(1, int(round(step * n_obs)))
    out = []
    tasks = [(r, s) for r in range(int(n_repeats)) for s in strategies]
    initial_fit = {}
    for r, strategy in progress_bar(tasks, total=len(tasks), desc="pounce active", disable=None if progress else True):
        rng = np.random.default_rng(random_state + r)
        perm = rng.permutation(obs)
        n_init, n_pool = int(initial * n_obs), int(pool * n_obs)
        known = np.zeros(Xa.size, bool)
        known[perm[:n_init]] = True
        pool_cells = perm[n_init:n_init + n_pool]
        test = np.zeros(Xa.size, bool)
        test[perm[n_init + n_pool:]] = True
        known, test = known.reshape(Xa.shape), test.reshape(Xa.shape)
        remaining = pool_cells.copy()
        pick_rng = np.random.default_rng(random_state + 10_000 + r)
        if r not in initial_fit:
            initial_fit[r] = clone(predictor).fit(np.where(known, Xa, np.nan))
        fitted = initial_fit[r]
        base = float(np.sqrt(np.mean((fitted.mean_[test] - Xa[test]) ** 2)))
        out.append({"repeat": r, "strategy": strategy, "extra": 0.0, "rmse": base, "improvement": 0.0})
        revealed = 0
        for _ in range(int(n_steps)):
            if remaining.size == 0:
                break
            if strategy == "uncertainty":
                if fitted.std_ is None:
                    raise MethodError(f"{type(predictor).__name__} has no predictive std; uncertainty sampling needs one")
                score = np.asarray(fitted.std_).ravel()[remaining]
                pick = remaining[np.argsort(-score, kind="stable")[:batch]]
            elif strategy == "oracle":
                score = np.abs(np.asarray(fitted.mean_).ravel()[remaining] - Xa.ravel()[remaining])
                pick = remaining[np.argsort(-score, kind="stable")[:batch]]
            else:
                pick = pick_rng.choice(remaining, size=min(batch, remaining.size), replace=False)
            remaining = np.setdiff1d(remaining, pick)
            known.ravel()[pick] = True
            revealed += pick.size
            fitted = clone(predictor).fit(np.where(known, Xa, np.nan))
            rmse = float(np.sqrt(np.mean((fitted.mean_[test] - Xa[test]) ** 2)))
            out.append({"repeat": r, "strategy": strategy, "extra": round(revealed / n_obs, 4), "rmse": rmse,
                        "improvement": base - rmse})
    return pd.DataFrame(out)


def masked_rmse_tensor(
    T,
    tensor_predictors: Dict[str, BasePredictor],
    matrix_predictors: Optional[Dict[str, BasePredictor]] = None,
    metrics: Optional[Sequence[str]] = None,
    hidden_ratios: Sequence[float] = (0.2, 0.9),
    n_repeats: int = 1,
    random_state: int = 0,
    progress: bool = False,
) -> pd.DataFrame:
    """RMSE on hidden cells of a models x datasets x metrics tensor (004 §3.3, §4.4, Table 1 / Table 12).

    ``tensor_predictors`` (e.g. :class:`ProbabilisticTensorFactorization`)
    see the whole masked tensor; ``matrix_predictors`` are fitted to each
    metric's slice separately (004's "PMF (Sep)"), on the datasets that have
    the metric. Masks hide ``ratio`` of all observed entries uniformly (004
    ``split_train_test_3d``).

    Returns
    -------
    pandas.DataFrame
        ``ratio, repeat, predictor, metric, rmse, n_hidden``; ``metric`` is each
        metric name and ``overall`` (all hidden entries pooled).
    """
    from ..report import progress as progress_bar

    T = np.asarray(T, dtype=float)
    if T.ndim != 3:
        raise MethodError(f"need a 3-D tensor (models x datasets x metrics), got shape {T.shape}")
    S = T.shape[2]
    metrics = list(metrics) if metrics is not None else [f"metric{s}" for s in range(S)]
    matrix_predictors = matrix_predictors or {}
    rows = []
    tasks = [(r, ratio) for r in range(int(n_repeats)) for ratio in hidden_ratios]
    for r, ratio in progress_bar(tasks, total=len(tasks), desc="pounce tensor", disable=None if progress else True):
        mask = hide_cells(T.reshape(T.shape[0], -1), ratio, np.random.default_rng(random_state + r)).reshape(T.shape)
        train = np.where(mask, np.nan, T)
        preds = {}
        for name, est in tensor_predictors.items():
            preds[name] = clone(est).fit(train).mean_
        for name, est in matrix_predictors.items():
            full = np.full(T.shape, np.nan)
            for s in range(S):
                cols = ~np.isnan(T[:, :, s]).all(axis=0)
                slice_train = train[:, cols, s]
                if np.isnan(slice_train).all():
                    continue
                full[:, cols, s] = clone(est).fit(slice_train).mean_
            preds[name] = full
        for name, pred in preds.items():
            err = np.where(mask, pred - T, np.nan)
            for s, metric in [(None, "overall")] + list(enumerate(metrics)):
                e = err if s is None else err[:, :, s]
                e = e[~np.isnan(e)]
                rows.append({"ratio": ratio, "repeat": r, "predictor": name, "metric": metric,
                             "rmse": float(np.sqrt(np.mean(e ** 2))) if e.size else np.nan, "n_hidden": int(e.size)})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------
# CLI: harness-ext pounce
# ---------------------------------------------------------------------------------------

ANALYSES = ("regression", "completion", "active", "tensor")


def _floats(text: str) -> list:
    return [float(t) for t in str(text).split(",") if t.strip()]


def _names(text: str) -> list:
    return [t.strip() for t in str(text).split(",") if t.strip()]


def _paper_key(args) -> Optional[str]:
    if args.paper == "none":
        return None
    if args.paper != "auto":
        return args.paper
    names = " ".join(args.benchmark or []).lower()
    for key, pat in (("helm", "helm"), ("mmlu", "mmlu"), ("bigbench_lite", "bigbench")):
        if pat in names:
            return key
    return None


def _with_params(est: BasePredictor, **params) -> BasePredictor:
    """Set those of ``params`` the estimator has (seeds, groups), leave the rest."""
    have = est.get_params()
    return est.set_params(**{k: v for k, v in params.items() if k in have and v is not None})


def _column_groups(df: pd.DataFrame):
    """Per-column metric labels when columns mix metrics (standardisation pools within a metric)."""
    meta = df.attrs.get("datasets") or {}
    labels = [str((meta.get(c) or {}).get("metric")) for c in df.columns]
    return np.asarray(labels) if len(set(labels)) > 1 else None


def _print(title: str, table: pd.DataFrame, floatfmt="{:.4f}", index=True):
    from ..report import format_table

    print(f"\n{title}")
    print(format_table(table, floatfmt=floatfmt, index=index))


def run(args) -> int:
    from pathlib import Path

    from ..cli.options import matrix_from_args

    analyses = set(ANALYSES) if args.analysis.strip() == "all" else set(_names(args.analysis))
    bad = analyses - set(ANALYSES)
    if bad:
        raise HarnessExtError(f"unknown analysis {', '.join(sorted(bad))}; choose from {', '.join(ANALYSES)} or all")
    df = matrix_from_args(args)
    out = Path(args.out)
    print(f"matrix: {df.shape[0]} models x {df.shape[1]} datasets, {df.isna().to_numpy().mean():.1%} missing")
    if (df.attrs.get("dropped") or {}).get("models") or (df.attrs.get("dropped") or {}).get("datasets"):
        from .manifest import dense_cut_message

        print(f"note: {dense_cut_message(df.attrs['dropped'])}")
    seed = int(args.seed)

    if "regression" in analyses:
        _run_regression(args, df, out, seed)
    if "completion" in analyses:
        _run_completion(args, df, out, seed)
    if "active" in analyses:
        _run_active(args, df, out, seed)
    if "tensor" in analyses:
        _run_tensor(args, df, out, seed, explicit=args.analysis.strip() != "all")
    return 0


def _run_regression(args, df, out, seed):
    from ..report import get_pyplot, save_figure

    X = df.to_numpy(dtype=float)
    if np.isnan(X).any():
        complete = int((~np.isnan(X)).all(axis=1).sum())
        print(f"note: {int(np.isnan(X).any(axis=1).sum())} of {X.shape[0]} models have missing cells: ridge trains on "
              "every observed cell (pairwise-complete Gram matrix); knn and the MLPs can only train on the "
              f"{complete} complete models; test cells that are missing are not scored")
    preds = {n: _with_params(make_predictor(n), random_state=seed) for n in _names(args.predictors)}
    order = None
    if args.order:
        cols = list(df.columns)
        missing = [c for c in _names(args.order) if c not in cols]
        if missing:
            raise HarnessExtError(f"--order names datasets not in the matrix: {', '.join(missing)}")
        order = [cols.index(c) for c in _names(args.order)]
    res = evaluate_regression(X, preds, order=order, selector=args.selector, test_size=args.test_size,
                              noise_sigmas=_floats(args.noise), n_splits=args.folds, random_state=seed,
                              n_repeats=args.splits, progress=True)
    tr, te = res.split
    split_note = f" (AUC-MSE averaged over {args.splits} random splits; order shown for the first)" if args.splits > 1 else ""
    print(f"\nSimBA pounce: {len(tr)} training / {len(te)} test models{split_note}; dataset order from {res.order_source}: "
          + ", ".join(str(df.columns[i]) for i in res.order[:5]) + (" ..." if len(res.order) > 5 else ""))
    auc = res.auc.copy()
    key = _paper_key(args)
    if key:
        for cond in [c for c in auc.columns if c in PAPER_AUC_MSE[key]]:
            auc[f"paper {cond}"] = [PAPER_AUC_MSE[key][cond].get(p, np.nan) for p in auc.index]
    if res.n_splits:
        print(f"k-fold stability: {res.n_splits}-fold over the training models")
    _print(f"AUC-MSE (lower is better; SimBA Table 4/5{' columns: ' + key if key else ''})", auc)
    shown = res.curves
    if len(shown) > 12:
        pick = sorted(set(np.unique(np.linspace(0, len(shown) - 1, 12).round().astype(int))))
        shown = shown.iloc[pick]
    clean = shown["clean"] if "clean" in shown.columns.get_level_values(0) else shown
    _print("MSE per |S| on held-out models (clean training matrix)", clean)
    out.mkdir(parents=True, exist_ok=True)
    res.curves.to_csv(out / "mse_curves.csv")
    res.auc.to_csv(out / "auc_mse.csv")
    plt = get_pyplot()
    conds = list(dict.fromkeys(res.curves.columns.get_level_values(0)))
    fig, axes = plt.subplots(1, len(conds), figsize=(4.2 * len(conds), 3.6), sharey=True, squeeze=False)
    for ax, cond in zip(axes[0], conds):
        for p in res.curves[cond].columns:
            ax.plot(res.curves.index, res.curves[cond][p], marker=".", label=p)
        ax.set_title(f"{cond} (training matrix)")
        ax.set_xlabel("|S| (datasets observed)")
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("MSE on held-out models, D \\ S")
    axes[0][-1].legend(fontsize=8)
    fig.suptitle("pounce: MSE curves (SimBA Fig. 3)", y=1.04)
    path = save_figure(fig, out / "mse_curves.png")
    print(f"\nwrote {path}")


def _completion_predictors(args, df, seed):
    groups = _column_groups(df)
    preds = {}
    for n in _names(args.completion_predictors):
        est = _with_params(make_predictor(n), random_state=seed, column_groups=groups)
        if args.n_samples and "n_samples" in est.get_params():
            est.set_params(n_samples=args.n_samples, n_burnin=args.n_samples)
        preds[n] = est
    if args.profiles:
        from ..adapters.crosspred import load_profiles

        H, G = load_profiles(args.profiles, list(df.index), list(df.columns))
        for n, name in (("pmf", "cpmf"), ("bpmf", "bcpmf")):
            if n in preds:
                preds[name] = clone(preds[n]).set_params(model_profiles=H, dataset_profiles=G)
    return preds, groups


def _run_completion(args, df, out, seed):
    from ..report import get_pyplot, save_figure

    preds, groups = _completion_predictors(args, df, seed)
    if groups is not None:
        print(f"\nstandardising per dataset, pooling sparse datasets within metric ({', '.join(sorted(set(groups)))})")
    ratios = _floats(args.hidden_ratios)
    long = masked_rmse(df.to_numpy(dtype=float), preds, ratios, n_repeats=args.repeats, level=args.level,
                       random_state=seed, progress=True)
    rmse = long.pivot_table(index="ratio", columns="predictor", values="rmse", aggfunc="mean")[list(preds)]
    base = [b for b in ("global_mean", "mean_of_means") if b in rmse.columns]
    if base:
        best_base = rmse[base].min(axis=1)
        for p in rmse.columns:
            if p not in base:
                rmse[f"{p} beats baselines"] = (rmse[p] < best_base).map({True: "yes", False: "no"})
    _print(f"masked-cell RMSE by hidden ratio (004 Fig. 3 / Table 11; mean of {args.repeats} mask(s), units of the matrix)", rmse)
    cov = long.dropna(subset=["coverage"])
    if len(cov):
        ctab = cov.pivot_table(index="ratio", columns="predictor", values="coverage", aggfunc="mean")
        _print(f"calibration: share of hidden cells inside the {args.level:.0%} predictive interval", ctab, "{:.3f}")
    if args.normalise == "none":
        ref = pd.DataFrame(PAPER_PMF_RMSE)
        _print("for reference, 004 Table 11 on the CrossPred matrix (raw units, overall RMSE)", ref, "{:.3f}")
    out.mkdir(parents=True, exist_ok=True)
    long.to_csv(out / "completion.csv", index=False)
    plt = get_pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    means = long.pivot_table(index="ratio", columns="predictor", values="rmse", aggfunc="mean")
    for p in preds:
        ax.plot(means.index * 100, means[p], marker="o", label=p)
    ax.set_xlabel("hidden cells (%)")
    ax.set_ylabel("RMSE on hidden cells")
    ax.set_title("pounce: matrix completion (004 Fig. 3)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    path = save_figure(fig, out / "completion_rmse.png")
    print(f"\nwrote {path}")


def _run_active(args, df, out, seed):
    from ..report import get_pyplot, save_figure

    groups = _column_groups(df)
    est = _with_params(make_predictor(args.active_predictor), random_state=seed, column_groups=groups)
    if args.n_samples and "n_samples" in est.get_params():
        est.set_params(n_samples=args.n_samples, n_burnin=args.n_samples)
    long = active_evaluation(df.to_numpy(dtype=float), est, step=args.active_step, n_steps=args.active_steps,
                             n_repeats=args.repeats, random_state=seed, progress=True)
    tab = long.pivot_table(index="extra", columns="strategy", values="rmse", aggfunc="mean")
    _print(f"active evaluation with {args.active_predictor}: test RMSE after revealing extra cells "
           "(004 Fig. 4; start 20% known, 60% pool, 20% test)", tab)
    out.mkdir(parents=True, exist_ok=True)
    long.to_csv(out / "active.csv", index=False)
    plt = get_pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    imp = long.pivot_table(index="extra", columns="strategy", values="improvement", aggfunc="mean")
    for s in imp.columns:
        ax.plot(imp.index * 100, imp[s], marker="o", label=s)
    ax.set_xlabel("extra cells evaluated (% of observed)")
    ax.set_ylabel("RMSE improvement on test cells")
    ax.set_title(f"pounce: active evaluation with {args.active_predictor} (004 Fig. 4)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    path = save_figure(fig, out / "active.png")
    print(f"\nwrote {path}")


def tensor_from_args(args, models, datasets):
    """``(T, metrics)``: every metric the selected benchmarks report, as a models x datasets x metrics tensor.

    Uses the same matrix-selection options with ``--metric`` set to each
    metric in turn, aligned on ``models`` and ``datasets`` (the primary-metric
    matrix's labels); a dataset without a metric is NaN in that slice.
    """
    from dataclasses import replace

    from ..store.matrix import MatrixQuery, load_matrix
    from ..store.db import Store

    base = MatrixQuery(benchmarks=tuple(args.benchmark or ()), datasets=args.datasets, models=args.models,
                       source=args.source, num_fewshot=args.num_fewshot, dense=False, normalise=args.normalise)
    with Store.open(args.db, read_only=True) as store:
        where = "WHERE benchmark IN (" + ",".join("?" * len(base.benchmarks)) + ")" if base.benchmarks else ""
        metrics = [r[0] for r in store.con.execute(
            f"SELECT DISTINCT metric FROM datasets {where} ORDER BY metric", list(base.benchmarks)).fetchall()]
        slices = []
        for m in metrics:
            df = load_matrix(store, replace(base, metric=m))
            slices.append(df.reindex(index=models, columns=datasets).to_numpy(dtype=float))
    return np.stack(slices, axis=2), metrics


def _run_tensor(args, df, out, seed, explicit=True):
    from ..plugins.predictors import ProbabilisticTensorFactorization

    T, metrics = tensor_from_args(args, list(df.index), list(df.columns))
    if len(metrics) < 2:
        msg = f"the tensor analysis needs several metrics per dataset; the selection has {metrics}"
        if explicit:
            raise HarnessExtError(msg)
        print(f"\nskipping the multi-metric (tensor) analysis: {msg}")
        return
    burn = {"n_burnin": args.n_samples, "n_samples": args.n_samples} if args.n_samples else {}
    tensor_preds = {"ptf": ProbabilisticTensorFactorization(random_state=seed),
                    "bptf": ProbabilisticTensorFactorization(inference="gibbs", random_state=seed, **burn)}
    matrix_preds = {"global_mean (sep)": make_predictor("global_mean"), "mean_of_means (sep)": make_predictor("mean_of_means"),
                    "pmf (sep)": make_predictor("pmf", random_state=seed),
                    "bpmf (sep)": _with_params(make_predictor("bpmf", random_state=seed), **burn)}
    long = masked_rmse_tensor(T, tensor_preds, matrix_preds, metrics, _floats(args.tensor_ratios),
                              n_repeats=args.repeats, random_state=seed, progress=True)
    for ratio, part in long.groupby("ratio"):
        tab = part.pivot_table(index="predictor", columns="metric", values="rmse", aggfunc="mean")
        tab = tab[["overall"] + [m for m in metrics if m in tab.columns]].loc[list(matrix_preds) + list(tensor_preds)]
        _print(f"multi-metric RMSE at {ratio:.0%} hidden ({len(metrics)} metrics; 004 Table 1 / 12; "
               "(sep) = one matrix per metric)", tab)
    out.mkdir(parents=True, exist_ok=True)
    long.to_csv(out / "tensor.csv", index=False)
    print(f"\nwrote {out / 'tensor.csv'}")
