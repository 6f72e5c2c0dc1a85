"""pounce: predicting performance from a subset, and evaluating the predictors.

Two protocols:

* **SimBA §4 / §6.3 / §7** (regression from S to D \\ S, :mod:`.regression`): models split
  80/20, a selector orders the datasets on the training models, and for ``|S| = 1 .. d-1`` a
  predictor predicts the test models' other datasets; the MSE curve's normalised area is
  AUC-MSE (Table 4), also with noise on the training matrix (Table 5) and k-fold (§7.2).
* **Zhao et al. §4.2-4.4** (matrix completion, :mod:`.masked`): hide a share of the
  observed cells, complete the matrix, compare RMSE with the global-mean and mean-of-means
  baselines, check calibration, evaluate actively, and do the same on a metrics tensor.

For ``reduce`` and ``predict``, :mod:`.core` fits a predictor on the training models plus new
models observed on a subset (:func:`predict_new_models`) and gives the per-dataset
out-of-sample RMSE of that predictor for that subset (:func:`cross_validated_error`).
Each analysis returns a result from :mod:`.results` that renders itself and plots its figure.

References
----------
SimBA (Subramani, Gomez and Diab 2025) §4, §6.3, §7, Tables 4-5; Zhao et al.
§3.2, §4.2-4.4, Table 11, Fig. 3-4.
"""

from __future__ import annotations

from .core import (
    CVError,
    OrderSpec,
    cross_validated_error,
    make_predictor,
    predict_new_models,
    reindex_rows,
    resolve_order,
    selector_order,
    split_models,
)
from .masked import (
    PAPER_PMF_RMSE,
    active_evaluation,
    column_groups,
    evaluate_active,
    evaluate_completion,
    evaluate_tensor,
    hide_cells,
    interval_coverage,
    load_metric_tensor,
    masked_rmse,
    masked_rmse_tensor,
)
from .regression import add_noise, auc_mse, default_n_splits, evaluate_regression, mse_curve
from .results import PAPER_AUC_MSE, ActiveResult, CompletionResult, PounceReport, RegressionEvaluation, TensorResult

#: The analyses of the ``pounce`` command, in the order it runs them.
ANALYSES = ("regression", "completion", "active", "tensor")

__all__ = [
    "ANALYSES", "ActiveResult", "CVError", "CompletionResult", "OrderSpec", "PAPER_AUC_MSE", "PAPER_PMF_RMSE",
    "PounceReport", "RegressionEvaluation", "TensorResult", "active_evaluation", "add_noise", "auc_mse",
    "column_groups", "cross_validated_error", "default_n_splits", "evaluate_active", "evaluate_completion",
    "evaluate_regression", "evaluate_tensor", "hide_cells", "interval_coverage", "load_metric_tensor",
    "make_predictor", "masked_rmse", "masked_rmse_tensor", "mse_curve", "predict_new_models", "reindex_rows",
    "resolve_order", "selector_order", "split_models",
]
