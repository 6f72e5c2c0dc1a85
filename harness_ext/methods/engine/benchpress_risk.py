"""BenchPress's hybrid risk model: matrix support plus the disagreement of 15 completions, conformally scaled.

The interval layer BenchPress ships as its default (``combined_risk_model``), re-implemented on the
pieces of :mod:`harness_ext.methods.engine.benchpress`. For every held-out cell of a fold, read on the
fold's training matrix:

* the 8 matrix-support features (:func:`harness_ext.methods.engine.benchpress.support_features`: the
  model's and the benchmark's observed counts and median scores, the benchmark's spread, the strongest
  absolute correlation of the model with another model and their overlap, and of the benchmark with
  another benchmark);
* the spread of BenchPress's 3 penalty variants (logit bias ALS, lambda 0.01, 0.1, 1) and of its 12
  "strong" completers (:mod:`harness_ext.methods.engine.benchpress_completers`: bias ALS under the probit,
  quantile, identity, asinh and sqrt transforms, rank-2 SVD imputation under quantile, logit, probit and
  identity, model kNN with k = 10 under logit, probit and identity) at the cell, each stack summarised by
  4 statistics (:func:`stack_features`): standard deviation, scaled median absolute deviation, the
  distance of BenchPress's own prediction from the stack's median, and the 10-90% percentile span.

The 16 features (names sorted, ``log1p`` of each clipped at 0) feed the risk model of
:class:`harness_ext.methods.engine.benchpress.RiskModel`, which predicts ``log1p |error|``; each fold's risk
comes from a model fitted on the other folds and the 90% multiplier is the quantile of ``|error| / risk``
(leave-fold-out conformal scaling), exactly as for the matrix-support features alone. The paper's hybrid
covers 0.899 at a median width of 27.2 points on its 84 x 133 matrix (matrix support alone: 0.900 at 29.3).

References
----------
Zeng & Papailiopoulos, "You Don't Need to Run Every Eval", arXiv 2606.24020 (2026), §4.4 (the hybrid
uncertainty model); the released package (microsoft/benchpress, 2025-2026: ``methods/confidence.py``,
``default_confidence_features`` and ``train_default_confidence_calibrator``).
Mazumder, Hastie & Tibshirani, JMLR 11 (2010), for the imputation among the completers.
"""

from __future__ import annotations

import warnings
from functools import partial
from typing import Sequence

import numpy as np

from ...base import limit_threads
from . import benchpress as bp
from .benchpress_completers import HP_VARIANTS, STRONG_METHODS, spec_predictions

#: The statistics of a stack of predictions at a cell, in BenchPress's sorted order of feature names.
STACK_STATS = ("delta_to_median", "mad", "p90_p10_span", "std")
#: The hybrid's 16 feature names, sorted as BenchPress sorts them (penalty variants, strong completers, support).
HYBRID_FEATURES = (tuple(f"hp_{s}" for s in STACK_STATS) + tuple(f"strong_{s}" for s in STACK_STATS)
                   + tuple(f"structural_{f}" for f in bp.FEATURES))
#: The consistent-at-the-normal scale of the median absolute deviation.
MAD_SCALE = 1.4826


def stack_features(S, target) -> np.ndarray:
    """The 4 disagreement statistics of a stack ``S`` (K completers x n cells) around BenchPress's ``target`` (n,).

    Returns ``(n, 4)`` in :data:`STACK_STATS` order: ``|target - median|``,
    ``1.4826 x`` median absolute deviation, 90th minus 10th percentile
    (linear), standard deviation (``ddof=0``); NaN predictions ignored.

    References
    ----------
    The released package's ``stack_features`` and ``mad_uncertainty`` (Zeng & Papailiopoulos, 2026).
    """
    S = np.asarray(S, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        med = np.nanmedian(S, axis=0)
        mad = MAD_SCALE * np.nanmedian(np.abs(S - med), axis=0)
        p90, p10 = np.nanpercentile(S, [90, 10], axis=0)
        std = np.nanstd(S, axis=0)
    return np.column_stack([np.abs(np.asarray(target, dtype=float) - med), mad, p90 - p10, std])


def hybrid_design(P, stacks, target, rows, cols) -> np.ndarray:
    """``(n, 16)`` design of cells ``(rows, cols)`` of training matrix ``P`` (points), in :data:`HYBRID_FEATURES` order.

    ``stacks`` is ``(15, n)``: the 3 penalty variants' then the 12 strong completers' predictions at the
    cells; ``target`` BenchPress's own prediction there. Each feature is ``log1p(max(f, 0))``.
    """
    k = len(HP_VARIANTS)
    raw = np.column_stack([stack_features(stacks[:k], target), stack_features(stacks[k:], target)])
    return np.column_stack([np.log1p(np.maximum(raw, 0.0)), bp.cell_features(bp.support_features(P), rows, cols)])


def _stacks(P, **als):
    """``(target, stacks)`` of a batch of training matrices ``P`` (B, m, d): BenchPress's completion (with ``als``'s
    rank and penalty) and the 15 other completions, in points."""
    own = ("logit", "bias_als", (("lam", float(als.get("lam", bp.LAM))), ("rank", int(als.get("rank", bp.RANK)))))
    if own[2] == (("lam", bp.LAM), ("rank", bp.RANK)):
        own = HP_VARIANTS[1]  # the published settings: the middle penalty variant is the prediction itself
    pred = spec_predictions(P, (own,) + HP_VARIANTS + STRONG_METHODS, **als)
    return pred[0], pred[1:]


def hybrid_fold_records(P, F, **als):
    """Complete every fold of masks ``F`` (hidden cells) of ``P`` (points) 16 ways: ``(design, |error|, fold, pred)``.

    The design is :func:`hybrid_design` read on the fold's training matrix; ``pred`` BenchPress's own
    prediction. The signature of :func:`harness_ext.methods.engine.benchpress.fold_records`.

    References
    ----------
    Zeng & Papailiopoulos (2026), §4.4 (the released package's ``_training_records``).
    """
    F = np.asarray(F, dtype=bool)
    Ptr = np.where(F, np.nan, P[None])
    target, stacks = _stacks(Ptr, **als)
    feats, err, fold, preds = [], [], [], []
    for f in range(F.shape[0]):
        rows, cols = np.nonzero(F[f])
        pred = target[f, rows, cols]
        feats.append(hybrid_design(Ptr[f], stacks[:, f, rows, cols], pred, rows, cols))
        err.append(np.abs(pred - P[rows, cols]))
        fold.append(np.full(rows.size, f))
        preds.append(pred)
    return np.concatenate(feats), np.concatenate(err), np.concatenate(fold), np.concatenate(preds)


def hybrid_cell_features(P, pred, rows, cols, **als) -> np.ndarray:
    """The hybrid design of cells ``(rows, cols)`` of the matrix ``P`` (points) being completed; ``pred`` its
    predictions there (BenchPress's). The 15 other completions are fitted on ``P`` once."""
    _, stacks = _stacks(np.asarray(P, dtype=float)[None], **als)
    return hybrid_design(P, stacks[:, 0, rows, cols], pred, rows, cols)


def calibrate_hybrid(P, folds=None, kinds: Sequence[str] = ("ridge",), level: float = bp.LEVEL,
                     seed: int = bp.BASE_SEED, **als) -> bp.Calibration:
    """BenchPress's hybrid interval layer fitted on matrix ``P`` (points).

    :func:`harness_ext.methods.engine.benchpress.calibrate` with the hybrid features: the holdout folds
    (the paper's seeds, fewer on a large matrix), cross-fitted risk, the ``level`` quantile of
    ``|error| / risk`` as the multiplier, and the risk model refitted on every fold's cells. Its
    :func:`~harness_ext.methods.engine.benchpress.intervals` reads the hybrid features of the matrix it
    completes.

    References
    ----------
    Zeng & Papailiopoulos (2026), §4.4 (``train_default_confidence_calibrator``, ``combined_risk_model``).
    """
    return bp.calibrate(P, folds, kinds, level, seed, records=hybrid_fold_records,
                        features=partial(hybrid_cell_features, **als), **als)


def paper_evaluation_hybrid(P, F, kinds: Sequence[str] = ("ridge",), level: float = bp.LEVEL,
                            seed: int = bp.BASE_SEED, **als) -> dict:
    """:func:`harness_ext.methods.engine.benchpress.paper_evaluation` with the hybrid risk model's features.

    References
    ----------
    Zeng & Papailiopoulos (2026), §4.4: the hybrid covers 0.899 at a median width of 27.2 points on its matrix.
    """
    with limit_threads():
        return bp.paper_evaluation(P, F, kinds, level, seed, records=hybrid_fold_records, **als)
