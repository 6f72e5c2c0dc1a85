"""SimBA's pounce protocol: MSE curves over ``|S|``, AUC-MSE, noise robustness and k-fold stability.

Models are split 80/20; a selector orders the datasets using the training models only; for
``|S| = 1 .. d-1`` a predictor sees the training models' full rows and the test models' scores
on ``S`` and predicts the rest. The MSE on the test models' ``D \\ S`` cells traces an MSE curve
whose normalised area is AUC-MSE (Table 4); the same with Gaussian noise on the training matrix
(Table 5) and k-fold over the training models (§7.2).

References
----------
SimBA (Subramani, Gomez and Diab 2025) §4, §6.3, §7, Tables 4-5.
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence

import numpy as np
import pandas as pd

from ...base import BasePredictor, check_matrix, clone
from ...errors import MethodError
from .core import OrderSpec, predict_new_models, resolve_order, split_models
from .results import RegressionEvaluation

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
    from ..prowl import scauc

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
    progress : bool
        Show a progress bar (stderr, only on a terminal).

    Returns
    -------
    RegressionEvaluation
        The curves and AUC-MSE table; renders itself and plots the curves (``.plot()``).

    References
    ----------
    SimBA §4.1, §6.3 (Table 4), §7.1 (Table 5), §7.2.
    """
    from sklearn.model_selection import KFold

    from ...report import progress as progress_bar

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
    missing = np.isnan(Xa)
    return RegressionEvaluation(
        curves=curves_df, auc=auc, order=the_order, order_source=source, split=(tr, te),
        n_splits=n_splits if n_splits >= 2 else 0, n_repeats=int(n_repeats),
        datasets=[str(c) for c in X.columns] if isinstance(X, pd.DataFrame) else None,
        n_incomplete=int(missing.any(axis=1).sum()), n_models=int(n))

