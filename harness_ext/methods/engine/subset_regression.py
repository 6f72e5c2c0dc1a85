"""Regression from S to D \\ S: the frame that ridge, KNN and MLP predictors share, and their fits.

The registered predictors (``ridge``, ``knn``, ``mlp_12``, ``mlp_12_12``) are the classes of
:mod:`harness_ext.plugins.predictors_regression`, subclasses of :class:`SubsetRegressor` that name their
parameters and call :func:`knn_fit_predict`, :func:`mlp_fit_predict` or :class:`RidgeRegression`'s solve.

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

from harness_ext.methods.engine.baselines import missingness_groups, pass_observed


class SubsetRegressor(BasePredictor):
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
        self.mean_, self.std_ = pass_observed(X, mean, None)
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
        for rows, cols in missingness_groups(~np.isnan(X)):
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
    mu = SubsetRegressor._column_means(T)
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


class RidgeRegression(SubsetRegressor):
    """Ridge regression of D \\ S on S from a centred Gram matrix whose rows are computed on demand.

    The closed form of ``sklearn.linear_model.Ridge(alpha, fit_intercept=True)`` (intercept not
    penalised); a subclass sets ``alpha``. Complete training rows give the exact Gram matrix, one row
    per observed column as needed; incomplete ones the pairwise estimate of :func:`pairwise_gram`.

    References
    ----------
    Hoerl & Kennard (1970); SimBA §4, "Regularized Linear Regression".
    """

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


def knn_fit_predict(T, cols, mis, Q, n_neighbors: int) -> np.ndarray:
    """Predict columns ``mis`` of the rows ``Q`` (observed on ``cols``) by k-nearest-neighbour regression on ``T``.

    Euclidean distance, uniform weights; ``k`` is ``n_neighbors`` or the number of training rows when smaller.

    References
    ----------
    SimBA §4, eq. 8.
    """
    from sklearn.neighbors import KNeighborsRegressor

    if int(n_neighbors) < 1:
        raise MethodError(f"n_neighbors must be >= 1, got {n_neighbors!r}")
    k = min(int(n_neighbors), T.shape[0])
    reg = KNeighborsRegressor(n_neighbors=k).fit(T[:, cols], T[:, mis])
    return reg.predict(Q).reshape(Q.shape[0], mis.size)


def mlp_fit_predict(T, cols, mis, Q, hidden_layer_sizes, max_iter: int, random_state) -> np.ndarray:
    """Predict columns ``mis`` of the rows ``Q`` (observed on ``cols``) by an MLP regression trained on ``T``.

    sklearn's ``MLPRegressor`` (Adam); convergence warnings are silenced: with tiny training sets they are
    the rule, and SimBA reports these networks as they come out.

    References
    ----------
    SimBA §4, "MLP Regression".
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPRegressor

    reg = MLPRegressor(hidden_layer_sizes=tuple(hidden_layer_sizes), max_iter=int(max_iter),
                       random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reg.fit(T[:, cols], T[:, mis] if mis.size > 1 else T[:, mis].ravel())
    return reg.predict(Q).reshape(Q.shape[0], mis.size)
