"""Regression from S to D \\ S: ridge, KNN and MLPs predict a model's other datasets from its subset.

They are *inductive*: complete rows of ``X`` are the training models, and every incomplete row (a new model
with only its subset observed) is predicted from its own observed columns, one fit per missingness pattern
(:class:`harness_ext.methods.engine.subset_regression.SubsetRegressor`).

References
----------
SimBA (Subramani, Gomez and Diab 2025) §4 and §6.3.
"""

from __future__ import annotations

from harness_ext.methods.engine.subset_regression import (
    RidgeRegression,
    SubsetRegressor,
    knn_fit_predict,
    mlp_fit_predict,
)


class RidgePredictor(RidgeRegression):
    """Ridge regression of D \\ S on S (multi-output, intercept not penalised).

    Closed form identical to ``sklearn.linear_model.Ridge(alpha, fit_intercept=True)``
    when the training rows are complete: the rows of the centred Gram matrix are
    computed once per ``fit`` and only for observed columns, so each missingness
    pattern costs one ``|S| x |S|`` solve.

    Sparse training matrices use every observed cell: in ``predict_subsets``
    (what ``predict``, ``reduce``'s cross-validation and pounce's curves call)
    every training row with an observed cell trains, column means are taken over
    observed cells and the Gram matrix is estimated from pairwise-complete cells
    (:func:`~harness_ext.methods.engine.subset_regression.pairwise_gram`), so a model that ran only some datasets still informs
    the regression of those datasets on each other; nothing is dropped to reach a
    complete block. ``fit(X)`` keeps the inductive contract of the family
    (complete rows train, incomplete rows are the new models being predicted)
    and uses every row, pairwise, when no row is complete.

    Parameters
    ----------
    alpha : float
        L2 penalty (sklearn's default 1.0; SimBA does not state its value).

    References
    ----------
    SimBA §4, "Regularized Linear Regression"; Hoerl & Kennard (1970).
    """

    def __init__(self, alpha: float = 1.0):
        self.alpha = alpha


class KNNPredictor(SubsetRegressor):
    """K-nearest-neighbour regression of D \\ S on S (Euclidean, uniform weights).

    Parameters
    ----------
    n_neighbors : int
        ``k``; SimBA uses 5, or the training size when that is smaller (done
        automatically here).

    References
    ----------
    SimBA §4, eq. 8.
    """

    def __init__(self, n_neighbors: int = 5):
        self.n_neighbors = n_neighbors

    def _fit_predict(self, T, cols, mis, Q):
        return knn_fit_predict(T, cols, mis, Q, self.n_neighbors)


class MLPPredictor(SubsetRegressor):
    """MLP regression of D \\ S on S with one hidden layer of 12 units (sklearn ``MLPRegressor``).

    Parameters
    ----------
    hidden_layer_sizes : tuple of int
        ``(12,)`` here; ``(12, 12)`` for :class:`MLP2Predictor`.
    max_iter : int
        Adam epochs (sklearn default 200). Convergence warnings are silenced:
        with tiny training sets they are the rule, and SimBA reports these
        networks as they come out.
    random_state : int
        Seed of the weight initialisation and batch shuffling.

    References
    ----------
    SimBA §4, "MLP Regression".
    """

    def __init__(self, hidden_layer_sizes: tuple = (12,), max_iter: int = 200, random_state: int = 0):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.max_iter = max_iter
        self.random_state = random_state

    def _fit_predict(self, T, cols, mis, Q):
        return mlp_fit_predict(T, cols, mis, Q, self.hidden_layer_sizes, self.max_iter, self.random_state)


class MLP2Predictor(MLPPredictor):
    """MLP regression of D \\ S on S with two hidden layers of 12 units.

    References
    ----------
    SimBA §4, "MLP Regression" (the two-layer architecture).
    """

    def __init__(self, hidden_layer_sizes: tuple = (12, 12), max_iter: int = 200, random_state: int = 0):
        super().__init__(hidden_layer_sizes=hidden_layer_sizes, max_iter=max_iter, random_state=random_state)
