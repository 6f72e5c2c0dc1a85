"""The two baseline predictors every predictor has to beat: global mean and mean of means.

Both work on the matrix standardised per dataset (:mod:`harness_ext.methods.engine.baselines`) and map
their predictions back to each dataset's units.

References
----------
Zhao et al. §4.2 (standardisation; the two baselines, Table 11).
"""

from __future__ import annotations

from harness_ext.base import BasePredictor
from harness_ext.methods.engine.baselines import (
    global_mean_prediction,
    mean_of_means_prediction,
    pass_observed,
    standardised_input,
)


class _StandardisedBaseline(BasePredictor):
    """The two baselines' shared parameters (see :func:`~harness_ext.methods.engine.baselines.standardised_input`)."""

    row_params: tuple = ()

    def __init__(self, standardize: bool = True, min_count: int = 5, column_groups=None):
        self.standardize = standardize
        self.min_count = min_count
        self.column_groups = column_groups

    def _fit(self, X, predict):
        X, Z, mu, sd = standardised_input(self, X)
        self.mean_, self.std_ = pass_observed(X, predict(Z) * sd + mu, None)
        return self


class GlobalMean(_StandardisedBaseline):
    """Predict the global mean of the observed cells for every unobserved cell.

    As in Zhao et al., the mean is taken on the matrix standardised per dataset with its
    observed cells (``standardize=True``, see
    :func:`~harness_ext.methods.engine.baselines.standardise_columns`) and
    mapped back to each dataset's units; because every column has mean 0 after
    standardisation, this predicts each dataset's observed mean (pooled mean for
    datasets with fewer than ``min_count`` observations). With
    ``standardize=False`` it is the literal global mean of the raw cells.

    References
    ----------
    Zhao et al. §4.2 baseline (1); its code ``GlobalMeanBaseline`` applied
    after ``normalize_data``.
    """

    def fit(self, X):
        return self._fit(X, global_mean_prediction)


class MeanOfMeans(_StandardisedBaseline):
    """Average of the model's mean, the dataset's mean and the global mean.

    ``(g + u_i + v_j) / 3`` for cell (i, j); a model with no observed cell uses
    ``(g + v_j) / 2``, a dataset with none ``(g + u_i) / 2``, and both missing
    ``g``. Means are taken on the per-dataset standardised matrix when
    ``standardize=True`` (as Zhao et al. do), then mapped back to the dataset's units.

    References
    ----------
    Zhao et al. §4.2 baseline (2); its code ``MeanOfMeansBaseline``.
    """

    def fit(self, X):
        return self._fit(X, mean_of_means_prediction)
