"""A design-style aggregate interval for frontier models when the frontier folds are too thin to calibrate one.

The frontier folds (:mod:`~harness_ext.methods.engine.frontier`) hold out the strongest training models; the
geometries overlap, so on a matrix with few models they reuse the same handful of held-out models. A two-sided
split-conformal interval at level ``1 - alpha`` takes each side's quantile at ``1 - alpha / 2``; that rank exists
among ``n`` exchangeable scores only when ``(n + 1)(1 - alpha / 2) <= n``, i.e. ``n >= 2 / alpha - 1`` (19 models
for a 90% interval). With fewer *distinct* held-out models the folds cannot identify the tail they are asked for
(:func:`min_calibration_models`), so the interval of a flagged model is joined (never narrowed) with a
design-style one that does not rest on the low-rank structure at all.

The design-style interval reads the new model's level from its ``k`` subset cells and treats every dataset it did
not run as one draw of the training matrix's two-way additive residual: a dataset's residual variance
``s_j^2`` is that of ``x_ij - mean_j - level_i`` over the training models (each model's level the mean of its
centred cells). The aggregate over the unobserved datasets ``h`` with weights ``W_h`` then has variance
``sum_h W_h^2 s_h^2 + (sum_h W_h)^2 mean_o(s_o^2) / k`` (independent dataset residuals, plus the error of a level
read from ``k`` observed datasets ``o``), and the interval is the prediction plus or minus the normal quantile
times its square root: the sampling view of random dataset subsets (Zhang, Dorner & Hardt 2025 find design-based
estimators are the ones that stay honest at the frontier), without the rank structure's shrinkage.

References
----------
Zhang, Dorner & Hardt, "How Benchmark Prediction from Fewer Data Misses the Mark", NeurIPS 2025, §4;
Vovk, Gammerman & Shafer (2005) and Lei et al. (JASA 2018) §2 (the split-conformal rank ``ceil((n + 1)(1 - alpha))``).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

__all__ = ["design_aggregate_sd", "design_cell_sd", "distinct_held_out", "min_calibration_models", "min_symmetric_models"]


def min_calibration_models(level: float) -> int:
    """Fewest exchangeable scores for which each side's split-conformal quantile at ``(1 + level) / 2`` exists:
    ``ceil(2 / (1 - level)) - 1`` (19 for a 90% interval)."""
    alpha = 1.0 - float(level)
    return int(math.ceil(2.0 / alpha - 1e-9)) - 1


def min_symmetric_models(level: float) -> int:
    """Fewest exchangeable scores for which a symmetric (absolute-score) split-conformal quantile at ``level``
    exists: ``ceil(1 / (1 - level)) - 1`` (9 for a 90% interval)."""
    alpha = 1.0 - float(level)
    return int(math.ceil(1.0 / alpha - 1e-9)) - 1


def distinct_held_out(records) -> int:
    """How many different training models the frontier folds ``records`` held out (the geometries overlap)."""
    if not records:
        return 0
    return int(np.unique(np.concatenate([np.asarray(r["held"]) for r in records])).size)


def _residual_variances(X_fit, O):
    """Each dataset's two-way additive residual variance ``s_j^2`` over the training models (module docstring) and
    each new row's level variance ``mean_o(s_o^2) / k`` from its ``k`` observed cells."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a dataset or model with no cells: no residual from it
        mu = np.nanmean(X_fit, 0)
        level = np.nanmean(X_fit - mu[None, :], 1)
        s2 = np.nanmean((X_fit - mu[None, :] - level[:, None]) ** 2, 0)
    fallback = float(np.nanmean(s2)) if np.isfinite(s2).any() else 0.0
    s2 = np.where(np.isfinite(s2), s2, fallback)  # a dataset without residuals: the matrix's average one
    k = np.maximum(O.sum(1), 1)
    return s2, np.where(O, s2[None, :], 0.0).sum(1) / k / k


def design_aggregate_sd(X_fit, O, W) -> np.ndarray:
    """The design-style sd of each new row's aggregate (module docstring).

    ``X_fit`` (m, d): the training matrix on the predictor's input scale; ``O`` (n, d): the cells each new row has;
    ``W`` (n, d): the aggregate weights (the prediction's own units per dataset).
    """
    s2, level_var = _residual_variances(X_fit, O)
    Wh = np.where(O, 0.0, W)
    return np.sqrt((Wh ** 2 * s2[None, :]).sum(1) + Wh.sum(1) ** 2 * level_var)


def design_cell_sd(X_fit, O) -> np.ndarray:
    """The design-style sd of each new row's unobserved cells, ``sqrt(s_j^2 + level variance)`` (n, d): the
    aggregate's formula with all its weight on one dataset; 0 where the row has the cell."""
    s2, level_var = _residual_variances(X_fit, O)
    return np.where(O, 0.0, np.sqrt(s2[None, :] + level_var[:, None]))

