"""Regression from S to D \\ S: ridge, KNN and MLPs predict a model's other datasets from its subset.

They are *inductive*: complete rows of ``X`` are the training models, and every incomplete row
(a new model with only its subset observed) is predicted from its own observed columns. Rows are
grouped by missingness pattern, so all new models that ran the same subset share one fit.

References
----------
SimBA (Subramani, Gomez and Diab 2025) §4 and §6.3.
"""

from __future__ import annotations

import warnings

import numpy as np

from harness_ext.base import BasePredictor, check_matrix, limit_threads
from harness_ext.errors import MethodError

from .predictors_baselines import _finish, _missingness_groups


class _SubsetRegressor(BasePredictor):
    """Base for predictors that regress the unobserved columns on the observed ones.

    Complete rows of ``X`` are the training rows. Each incomplete row is
    predicted from its observed columns by a regressor trained on the complete
    rows restricted to those columns; rows sharing a missingness pattern share
    one fit. A row with nothing observed gets the training rows' column means
    (the best constant under squared error).

    Subclasses implement ``_fit_predict(T_obs, T_mis, Q_obs) -> predictions``.
    """

    row_params: tuple = ()

    def fit(self, X):
        X = check_matrix(X)
        with limit_threads():
            complete = ~np.isnan(X).any(axis=1)
            mean = X.copy()
            if not complete.all():
                T = self._training_rows(X)
                self._prepare(T)
                self._fallback = self._column_means(T)
                self._fill(T, X, mean)
        self.n_train_ = int(complete.sum())
        self.mean_, self.std_ = _finish(X, mean, None)
        return self

    def predict_subsets(self, X_train, X_new, subsets):
        """Predict new rows observed on each subset in turn, preparing once.

        Equivalent to ``fit(vstack([X_train, X_new masked outside S]))`` for
        every ``S`` in ``subsets`` (the complete rows of ``X_train`` train, the
        new rows are predicted), but shared work such as ridge's Gram matrix
        is done once: this is what makes an MSE curve over ``|S| = 1..d-1``
        cheap. Sets no fitted attributes.

        Returns
        -------
        list of numpy.ndarray
            One ``(n_new, d)`` matrix per subset, observed cells passed through.
        """
        X_train = check_matrix(X_train, name="X_train")
        X_new = np.atleast_2d(np.asarray(X_new, dtype=float))
        out = []
        with limit_threads():
            T = self._training_rows(X_train, every_row=True)
            self._prepare(T)
            self._fallback = self._column_means(T)
            for subset in subsets:
                keep = np.zeros(X_new.shape[1], bool)
                keep[np.asarray(subset, dtype=int)] = True
                Xn = np.where(keep, X_new, np.nan)
                mean = Xn.copy()
                self._fill(T, Xn, mean)
                out.append(mean)
        return out

    def _training_rows(self, X, every_row: bool = False):
        """The complete rows (``every_row`` asks for every observed cell; only ridge can use incomplete rows)."""
        complete = ~np.isnan(X).any(axis=1)
        if not complete.any():
            raise MethodError(
                f"{type(self).__name__} needs at least one fully observed row (a training model with every "
                "dataset) and none of the rows is complete; use a matrix-completion predictor (pmf, bpmf) "
                "or densify the matrix (--dense)"
            )
        return X[complete]

    def _fill(self, T, X, mean):
        """Write predictions for the incomplete rows of ``X`` into ``mean``, one fit per missingness pattern."""
        for rows, cols in _missingness_groups(~np.isnan(X)):
            is_obs = np.zeros(X.shape[1], bool)
            is_obs[cols] = True
            mis = np.flatnonzero(~is_obs)
            if cols.size == 0:
                mean[np.ix_(rows, mis)] = self._fallback[mis]  # column means of the training rows
                continue
            mean[np.ix_(rows, mis)] = self._fit_predict(T, cols, mis, X[np.ix_(rows, cols)])

    def _prepare(self, T):
        """Hook for work shared by every missingness pattern (e.g. a Gram matrix)."""

    @staticmethod
    def _column_means(T):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a column nobody observed: the global mean below
            mu = np.nanmean(T, axis=0)
        return np.where(np.isnan(mu), np.nanmean(T), mu)

    def _fit_predict(self, T, cols, mis, Q):  # pragma: no cover - interface
        raise NotImplementedError


#: Pairwise covariances estimated from n common cells are shrunk towards 0 by n / (n + this).
PAIRWISE_SHRINK = 5.0


def pairwise_gram(T: np.ndarray):
    """Column means and centred Gram matrix of a matrix with missing cells, from every observed cell.

    Means are over each column's observed cells; covariance ``(j, k)`` is the
    mean product of centred values over the rows observing both, shrunk towards
    0 by ``n_jk / (n_jk + c)`` relative to a pair all ``n`` rows observe,
    ``c = PAIRWISE_SHRINK`` (a pair seen by three models says little), then projected onto the positive semi-definite cone (eigenvalues
    clipped at 0) so ridge systems stay well posed, and scaled by the number of
    rows to be on the scale of a complete Gram matrix (``alpha`` keeps its
    complete-data meaning).

    Returns
    -------
    (mean, gram)
        ``(d,)`` and ``(d, d)`` arrays.

    References
    ----------
    Available-case (pairwise) covariance estimation: Little & Rubin, *Statistical
    Analysis with Missing Data*, 3rd ed., §3.4; Higham (1988) for the PSD projection.
    """
    obs = ~np.isnan(T)
    mu = _SubsetRegressor._column_means(T)
    Tc = np.where(obs, T - mu, 0.0)
    O = obs.astype(float)
    N = O.T @ O
    cov = np.divide(Tc.T @ Tc, N, out=np.zeros((T.shape[1], T.shape[1])), where=N > 0)
    # Relative to a pair every row observes, so a complete matrix is not shrunk at all.
    n = T.shape[0]
    shrink = (N / (N + PAIRWISE_SHRINK)) / (n / (n + PAIRWISE_SHRINK))
    np.fill_diagonal(shrink, 1.0)
    vals, vecs = np.linalg.eigh(cov * shrink)
    cov = (vecs * np.clip(vals, 0.0, None)) @ vecs.T
    return mu, n * cov


class RidgePredictor(_SubsetRegressor):
    """Ridge regression of D \\ S on S (multi-output, intercept not penalised).

    Closed form identical to ``sklearn.linear_model.Ridge(alpha, fit_intercept=True)``
    when the training rows are complete: the rows of the centred Gram matrix are
    computed once per ``fit`` and only for observed columns, so each missingness
    pattern costs one ``|S| x |S|`` solve.

    Sparse training matrices use every observed cell: in ``predict_subsets``
    (what ``predict``, ``reduce``'s cross-validation and pounce's curves call)
    every training row with an observed cell trains, column means are taken over
    observed cells and the Gram matrix is estimated from pairwise-complete cells
    (:func:`pairwise_gram`), so a model that ran only some datasets still informs
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

    def _training_rows(self, X, every_row: bool = False):
        obs = ~np.isnan(X)
        complete = obs.all(axis=1)
        if complete.all() or (complete.any() and not every_row):
            return X[complete]
        rows = obs.any(axis=1)
        if not (obs[rows].sum(axis=0) >= 2).any():
            raise MethodError("ridge needs a dataset with at least two observed cells to estimate anything")
        return X[rows]

    def _prepare(self, T):
        if not self.alpha >= 0:
            raise MethodError(f"ridge alpha must be >= 0, got {self.alpha!r}")
        if np.isnan(T).any():
            self._t_mean, self._gram = pairwise_gram(T)
            self._have = np.ones(T.shape[1], bool)
            return
        self._t_mean = T.mean(axis=0)
        self._tc = T - self._t_mean
        # Gram rows are filled on demand: one subset needs only its |S| rows (|S| x d, what a
        # Ridge fit costs), an MSE curve over nested subsets fills each row once.
        self._gram = np.empty((T.shape[1], T.shape[1]))
        self._have = np.zeros(T.shape[1], bool)

    def _gram_rows(self, cols):
        need = cols[~self._have[cols]]
        if need.size:
            self._gram[need] = self._tc[:, need].T @ self._tc
            self._have[need] = True
        return self._gram[cols]

    def _fit_predict(self, T, cols, mis, Q):
        G = self._gram_rows(cols)
        A = G[:, cols] + self.alpha * np.eye(cols.size)
        B = G[:, mis]
        # lstsq rather than solve: alpha=0 with collinear columns must not crash
        coef = np.linalg.lstsq(A, B, rcond=None)[0] if self.alpha == 0 else np.linalg.solve(A, B)
        return (Q - self._t_mean[cols]) @ coef + self._t_mean[mis]


class KNNPredictor(_SubsetRegressor):
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
        from sklearn.neighbors import KNeighborsRegressor

        if int(self.n_neighbors) < 1:
            raise MethodError(f"n_neighbors must be >= 1, got {self.n_neighbors!r}")
        k = min(int(self.n_neighbors), T.shape[0])
        reg = KNeighborsRegressor(n_neighbors=k).fit(T[:, cols], T[:, mis])
        return reg.predict(Q).reshape(Q.shape[0], mis.size)


class MLPPredictor(_SubsetRegressor):
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
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPRegressor

        reg = MLPRegressor(hidden_layer_sizes=tuple(self.hidden_layer_sizes), max_iter=int(self.max_iter),
                           random_state=self.random_state)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            reg.fit(T[:, cols], T[:, mis] if mis.size > 1 else T[:, mis].ravel())
        return reg.predict(Q).reshape(Q.shape[0], mis.size)


class MLP2Predictor(MLPPredictor):
    """MLP regression of D \\ S on S with two hidden layers of 12 units.

    References
    ----------
    SimBA §4, "MLP Regression" (the two-layer architecture).
    """

    def __init__(self, hidden_layer_sizes: tuple = (12, 12), max_iter: int = 200, random_state: int = 0):
        super().__init__(hidden_layer_sizes=hidden_layer_sizes, max_iter=max_iter, random_state=random_state)
