"""Performance predictors: complete a models x datasets matrix (pounce).

Every predictor follows :class:`harness_ext.base.BasePredictor`: ``fit(X)``
takes an ``(n_models, n_datasets)`` matrix with NaN for unobserved cells and
sets ``mean_`` (every cell filled, observed cells passed through unchanged)
and ``std_`` (predictive standard deviation, 0 on observed cells, or ``None``
when the method has no uncertainty of its own).

Two families live here:

* **Regression from S to D \\ S** (SimBA 000 §4): ridge, KNN, MLP (12) and
  MLP (12, 12). They are *inductive*: complete rows of ``X`` are the training
  models, and every incomplete row (a new model with only its subset observed)
  is predicted from its own observed columns. Rows are grouped by missingness
  pattern, so all new models that ran the same subset share one fit. This is
  the shape of the ``predict`` use case: training models' full rows plus the
  new model's row with only the subset observed.
* **Matrix completion** (Zhao et al. 004): global mean and mean of means
  baselines, PMF (MAP), Bayesian PMF by Gibbs sampling with predictive standard
  deviations, and their constrained variants with model and dataset profiles.
  They are *transductive*: every observed cell informs every prediction.
  The multi-metric tensor variant (PTF) takes a 3-D tensor and is therefore a
  separate, unregistered class, :class:`ProbabilisticTensorFactorization`
  (the registration interface is 2-D).

Row-aligned parameters
----------------------
``model_profiles`` is aligned with the rows of ``X``. Predictors list such
parameters in the class attribute ``row_params`` so evaluation code that
reorders or subsets rows (train/test splits, cross-validation) can reindex
them (see :func:`harness_ext.methods.pounce.reindex_rows`).

References
----------
SimBA (../shared/seeds/000_*) §4 and §6.3; Zhao et al. (../shared/seeds/004_*)
§3.1-3.5 and §4.2; Salakhutdinov & Mnih, "Bayesian Probabilistic Matrix
Factorization using MCMC", ICML 2008; Mnih & Salakhutdinov, "Probabilistic
Matrix Factorization", NIPS 2007 (constrained PMF).
"""

from __future__ import annotations

import warnings
from typing import Optional, Tuple

import numpy as np

from harness_ext.base import BasePredictor, check_matrix, limit_threads
from harness_ext.errors import MethodError
from harness_ext.hookspecs import hookimpl
from harness_ext.types import Predictor

# ---------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------


def _missingness_groups(observed: np.ndarray):
    """Yield ``(row_indices, observed_columns)`` for each distinct pattern of incomplete rows."""
    incomplete = np.flatnonzero(~observed.all(axis=1))
    if incomplete.size == 0:
        return
    obs = observed[incomplete]
    if (obs == obs[0]).all():  # new models run on one subset: the usual case, no sort needed
        yield incomplete, np.flatnonzero(obs[0])
        return
    # Sorting rows of packed bits: 8x fewer bytes per row to compare than the boolean rows.
    packed = np.packbits(obs, axis=1)
    _, first, inverse = np.unique(packed, axis=0, return_index=True, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    for g, row in enumerate(first):
        yield incomplete[inverse == g], np.flatnonzero(obs[row])


def standardise_columns(X: np.ndarray, min_count: int = 5, groups=None) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Z-score each column over its observed cells.

    Columns with fewer than ``min_count`` observations (or zero spread) use the
    mean and standard deviation pooled over every observed cell of their group
    instead, as the reference implementation of 004 does (its
    ``normalize_data`` pools accuracy columns and BARTScore columns
    separately). ``groups`` labels each column (e.g. its metric); ``None`` puts
    all columns in one group, which is right when every column is on the same
    scale (the [0, 1]-normalised matrices of SimBA) and wrong for mixed raw
    scales, where one pooled mean is far from every column.

    Returns
    -------
    (Z, mu, sd)
        ``Z = (X - mu) / sd`` with NaN kept; ``mu`` and ``sd`` have shape ``(n_cols,)``.

    References
    ----------
    Zhao et al. (004) §4.2: "use the observed portion to normalize R".
    """
    obs = ~np.isnan(X)
    if not obs.any():
        raise MethodError("the matrix has no observed cells")
    n_cols = X.shape[1]
    if groups is None:
        labels = np.zeros(n_cols, dtype=int)
    else:
        groups = np.asarray(groups)
        if groups.shape != (n_cols,):
            raise MethodError(f"column_groups must have one label per dataset ({n_cols}), got shape {groups.shape}")
        labels = np.unique(groups, return_inverse=True)[1].reshape(-1)
    count = obs.sum(axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns are replaced just below
        mu = np.nanmean(X, axis=0)
        sd = np.nanstd(X, axis=0)
    all_mu, all_sd = float(np.nanmean(X)), float(np.nanstd(X)) or 1.0
    pooled_mu = np.empty(n_cols)
    pooled_sd = np.empty(n_cols)
    for g in np.unique(labels):  # a loop over the few groups, not over cells
        cols = labels == g
        vals = X[:, cols][obs[:, cols]]
        pooled_mu[cols] = vals.mean() if vals.size else all_mu
        pooled_sd[cols] = (vals.std() or all_sd) if vals.size else all_sd
    few = (count < min_count) | ~np.isfinite(mu)
    mu = np.where(few, pooled_mu, mu)
    sd = np.where(few | ~(sd > 0), pooled_sd, sd)
    return (X - mu) / sd, mu, sd


def centring_variance(X: np.ndarray, sd: np.ndarray, min_count: int = 5) -> np.ndarray:
    """Variance, in standardised units, of each column's estimated centre (see :func:`standardise_columns`).

    A column centred on the mean of its ``n`` observed cells carries the
    error of that mean, ``s^2 / n`` (``s`` the column's own spread), into every
    prediction: the factorisation only sees the centred cells, whose mean is 0
    by construction, so its posterior cannot know it. Divided by the ``sd``
    used for the column, this is ``1 / n`` for a column scaled by its own
    spread. Columns centred on a pooled mean (fewer than ``min_count`` cells)
    get 0: the error of a pooled mean is the between-column spread, which the
    observed cells of the column do not tell.

    Returns
    -------
    numpy.ndarray, shape (n_cols,)

    References
    ----------
    The predictive variance of a new draw from a column with estimated mean,
    ``s^2 (1 + 1/n)`` (e.g. Gelman et al., *Bayesian Data Analysis*, 3rd ed., §3.2).

    Notes
    -----
    Opt-in (``centre_error=True``) in :class:`BayesianPMF` and PTF: a factorisation
    whose latent means are sampled (``hyperprior="wishart"``) has column offsets of
    its own (``mu_U . V_j``) that absorb the centre's error, and the known row
    factors of the models that were observed say how far their mean sits from the
    rest, so adding ``s^2 / n`` counts it twice. On a well-specified rank-3 matrix
    (50 x 25, noise 0.1) it doubles the predictive std and takes 90%-interval
    coverage from 0.91-0.92 to 0.99-1.00; on CrossPred, where the posterior is too
    narrow for other reasons, it lifts coverage at 90% hidden from 0.84 to 0.87.
    """
    count = (~np.isnan(X)).sum(axis=0)
    own = count >= min_count
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns are not 'own' and get 0 below
        var = np.nanvar(X, axis=0, ddof=1)
    out = np.zeros(X.shape[1])
    out[own] = var[own] / count[own] / np.asarray(sd, dtype=float)[own] ** 2
    return out


def _finish(X: np.ndarray, mean: np.ndarray, std: Optional[np.ndarray]):
    """Pass observed cells through and zero their std (the BasePredictor contract)."""
    obs = ~np.isnan(X)
    mean = np.where(obs, X, mean)
    if std is not None:
        std = np.where(obs, 0.0, std)
    return mean, std


# ---------------------------------------------------------------------------------------
# Regression from S to D \ S (SimBA §4)
# ---------------------------------------------------------------------------------------


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
    SimBA (000) §4, "Regularized Linear Regression"; Hoerl & Kennard (1970).
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
    SimBA (000) §4, eq. 8.
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
    SimBA (000) §4, "MLP Regression".
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
    SimBA (000) §4, "MLP Regression" (the two-layer architecture).
    """

    def __init__(self, hidden_layer_sizes: tuple = (12, 12), max_iter: int = 200, random_state: int = 0):
        super().__init__(hidden_layer_sizes=hidden_layer_sizes, max_iter=max_iter, random_state=random_state)


# ---------------------------------------------------------------------------------------
# Baselines of Zhao et al. (004 §4.2)
# ---------------------------------------------------------------------------------------


class GlobalMean(BasePredictor):
    """Predict the global mean of the observed cells for every unobserved cell.

    As in 004, the mean is taken on the matrix standardised per dataset with its
    observed cells (``standardize=True``, see :func:`standardise_columns`) and
    mapped back to each dataset's units; because every column has mean 0 after
    standardisation, this predicts each dataset's observed mean (pooled mean for
    datasets with fewer than ``min_count`` observations). With
    ``standardize=False`` it is the literal global mean of the raw cells.

    References
    ----------
    Zhao et al. (004) §4.2 baseline (1); its code ``GlobalMeanBaseline`` applied
    after ``normalize_data``.
    """

    row_params: tuple = ()

    def __init__(self, standardize: bool = True, min_count: int = 5, column_groups=None):
        self.standardize = standardize
        self.min_count = min_count
        self.column_groups = column_groups

    def fit(self, X):
        X = check_matrix(X)
        Z, mu, sd = standardise_columns(X, self.min_count, self.column_groups) if self.standardize else (X, 0.0, 1.0)
        if np.isnan(Z).all():
            raise MethodError("the matrix has no observed cells")
        pred = np.full(X.shape, np.nanmean(Z)) * sd + mu
        self.mean_, self.std_ = _finish(X, pred, None)
        return self


class MeanOfMeans(BasePredictor):
    """Average of the model's mean, the dataset's mean and the global mean.

    ``(g + u_i + v_j) / 3`` for cell (i, j); a model with no observed cell uses
    ``(g + v_j) / 2``, a dataset with none ``(g + u_i) / 2``, and both missing
    ``g``. Means are taken on the per-dataset standardised matrix when
    ``standardize=True`` (as 004 does), then mapped back to the dataset's units.

    References
    ----------
    Zhao et al. (004) §4.2 baseline (2); its code ``MeanOfMeansBaseline``.
    """

    row_params: tuple = ()

    def __init__(self, standardize: bool = True, min_count: int = 5, column_groups=None):
        self.standardize = standardize
        self.min_count = min_count
        self.column_groups = column_groups

    def fit(self, X):
        X = check_matrix(X)
        Z, mu, sd = standardise_columns(X, self.min_count, self.column_groups) if self.standardize else (X, 0.0, 1.0)
        obs = ~np.isnan(Z)
        if not obs.any():
            raise MethodError("the matrix has no observed cells")
        Zf = np.where(obs, Z, 0.0)
        g = Zf.sum() / obs.sum()
        nr, nc = obs.sum(axis=1), obs.sum(axis=0)
        u = np.divide(Zf.sum(axis=1), nr, out=np.zeros(len(nr)), where=nr > 0)
        v = np.divide(Zf.sum(axis=0), nc, out=np.zeros(len(nc)), where=nc > 0)
        total = g + np.where(nr > 0, u, 0.0)[:, None] + np.where(nc > 0, v, 0.0)[None, :]
        terms = 1.0 + (nr > 0)[:, None] + (nc > 0)[None, :]
        pred = (total / terms) * sd + mu
        self.mean_, self.std_ = _finish(X, pred, None)
        return self


# ---------------------------------------------------------------------------------------
# Factorisation engine shared by PMF, Bayesian PMF, their constrained variants and PTF
# ---------------------------------------------------------------------------------------


def _row_posterior(Tw: np.ndarray, W: np.ndarray, V: np.ndarray, alpha: float, prior_prec: np.ndarray,
                   prior_mean: np.ndarray, rng: Optional[np.random.Generator]) -> np.ndarray:
    """Posterior mean (``rng=None``) or a draw of every row's latent vector at once.

    Row ``i`` has precision ``P_i = Lambda + alpha * sum_j W_ij V_j V_j^T`` and
    mean ``P_i^{-1} (Lambda m_i + alpha * sum_j Tw_ij V_j)``, where ``W`` holds
    the observation weights (0/1 for a matrix; ``sum_s O w_s^2`` for PTF) and
    ``Tw`` the weighted targets. All rows are solved in one batched Cholesky.

    References
    ----------
    Salakhutdinov & Mnih (2008), eq. 11-12.
    """
    M, D = prior_mean.shape
    VV = (V[:, :, None] * V[:, None, :]).reshape(V.shape[0], D * D)
    P = prior_prec[None] + alpha * (W @ VV).reshape(M, D, D)
    b = prior_mean @ prior_prec + alpha * (Tw @ V)
    L = np.linalg.cholesky(P)
    y = np.linalg.solve(L, b[:, :, None])
    if rng is not None:
        y = y + rng.standard_normal((M, D, 1))
    # x = L^{-T} (L^{-1} b + z): mean P^{-1} b, covariance P^{-1}
    return np.linalg.solve(np.swapaxes(L, 1, 2), y)[:, :, 0]


def _sample_normal_wishart(E: np.ndarray, rng: np.random.Generator, beta0: float = 2.0, nu0: Optional[float] = None):
    """Draw ``(mu, Lambda)`` from the Normal-Wishart posterior given latent rows ``E``.

    Hyperprior ``mu0 = 0``, ``beta0 = 2``, ``nu0 = D``, ``W0 = I`` as in
    Salakhutdinov & Mnih (2008) §3.3 (004 uses an LKJ prior in PyMC instead;
    the Wishart keeps the sampler conjugate and fast).
    """
    n, D = E.shape
    nu0 = float(D) if nu0 is None else nu0
    ebar = E.mean(axis=0)
    C = E - ebar
    S = C.T @ C
    beta_n, nu_n = beta0 + n, nu0 + n
    mu_n = n * ebar / beta_n
    Wn_inv = np.eye(D) + S + (beta0 * n / beta_n) * np.outer(ebar, ebar)
    Wn = np.linalg.inv(Wn_inv)
    Wn = (Wn + Wn.T) / 2
    from scipy import stats  # about 1 s to import: only when a Bayesian predictor samples

    Lam = np.atleast_2d(stats.wishart(df=nu_n, scale=Wn).rvs(random_state=rng))
    Lc = np.linalg.cholesky(beta_n * Lam)
    mu = mu_n + np.linalg.solve(Lc.T, rng.standard_normal(D))
    return mu, Lam


def _profile_coefficients(H: np.ndarray, E: np.ndarray, Lam: np.ndarray, prior_var: float,
                          rng: Optional[np.random.Generator]) -> np.ndarray:
    """Posterior mean or draw of the profile effects ``Y`` in ``U = mu + H Y + eps``.

    With ``eps ~ N(0, Lambda^{-1})`` per row and ``Y_k ~ N(0, prior_var I)``, the
    row-major ``vec(Y)`` has precision ``kron(H^T H, Lambda) + I / prior_var``
    and linear term ``vec(H^T E Lambda)``.

    References
    ----------
    Zhao et al. (004) §3.5, eq. 10-12; Mnih & Salakhutdinov (2007) §4.
    """
    K, D = H.shape[1], E.shape[1]
    P = np.kron(H.T @ H, Lam) + np.eye(K * D) / prior_var
    b = (H.T @ E @ Lam).reshape(-1)
    L = np.linalg.cholesky(P)
    y = np.linalg.solve(L, b)
    if rng is not None:
        y = y + rng.standard_normal(K * D)
    return np.linalg.solve(L.T, y).reshape(K, D)


def _check_profiles(P, n: int, what: str) -> Optional[np.ndarray]:
    if P is None:
        return None
    P = np.asarray(P, dtype=float)
    if P.ndim == 1:
        P = P[:, None]
    if P.ndim != 2 or P.shape[0] != n:
        raise MethodError(f"{what} profiles must have one row per {what} ({n}), got shape {P.shape}")
    if not np.isfinite(P).all():
        raise MethodError(f"{what} profiles contain NaN or infinite values")
    return P


#: Vague Gamma(eps, eps) prior of a shared noise precision (and of the per-dataset precisions' rate).
_EPS = 1e-3
#: Shape of the per-dataset noise precisions' Gamma prior (2: the prior mean of the variance is finite).
_NOISE_SHAPE = 2.0


def _factorise(Z: np.ndarray, **kwargs):
    """Run :func:`_factorise_impl` with single-threaded BLAS (see :func:`harness_ext.base.limit_threads`)."""
    with limit_threads():
        return _factorise_impl(Z, **kwargs)


def _factorise_impl(Z: np.ndarray, *, n_components: int, inference: str, alpha: Optional[float], hyperprior: str,
               n_burnin: int, n_samples: int, max_iter: int, tol: float, model_profiles, dataset_profiles,
               profile_std: float, metric_weights: bool, random_state: int, include_noise: bool = True,
               noise: str = "global"):
    """Fit ``Z[m, n, s] ~ N((U_m' V_n') w_s + b_s, 1/alpha)`` by MAP (ALS) or Gibbs sampling.

    ``U' = U + H Y`` and ``V' = V + G X`` when profiles are given (constrained
    PMF); ``w = 1, b = 0`` are fixed unless ``metric_weights`` (PTF). Returns
    ``(mean, std, info)`` of the reconstruction, with ``std=None`` for MAP.

    Choices (documented because 004 and S&M 2008 differ):

    * MAP uses ``alpha`` (fixed) and N(0, I) priors (004 §3.1, ``sigma_U =
      sigma_V = 1``); it is block coordinate ascent, each block an exact ridge solve.
    * Gibbs with ``hyperprior="wishart"`` is BPMF (S&M 2008): Normal-Wishart
      hyperpriors on each side; ``hyperprior="fixed"`` samples the plain PMF
      posterior (N(0, I) priors), which is what 004 calls PMF with MCMC.
    * ``alpha=None`` puts a vague Gamma(1e-3, 1e-3) prior on the noise
      precision and samples it (S&M and 004 fix alpha = 2); a sampled noise
      level is what makes the predictive intervals calibrated. With
      ``noise="dataset"`` each dataset (and metric) has its own precision,
      ``a_n ~ Gamma(2, beta)`` with a shared, sampled rate ``beta`` (vague
      Gamma prior), so datasets with few cells borrow strength.
    * The predictive std is the spread of ``U V^T`` across draws (004's
      uncertainty) plus, with ``include_noise``, the noise variance ``1/alpha``
      (the predictive distribution of a fresh measurement).
    """
    M, N, S = Z.shape
    D = int(n_components)
    if D < 1:
        raise MethodError(f"n_components must be >= 1, got {n_components!r}")
    if inference not in ("map", "gibbs"):
        raise MethodError(f"inference must be 'map' or 'gibbs', got {inference!r}")
    if hyperprior not in ("wishart", "fixed"):
        raise MethodError(f"hyperprior must be 'wishart' or 'fixed', got {hyperprior!r}")
    if inference == "map" and alpha is None:
        raise MethodError("MAP inference needs a fixed noise precision alpha")
    if noise not in ("global", "dataset"):
        raise MethodError(f"noise must be 'global' or 'dataset', got {noise!r}")
    if alpha is not None and not alpha > 0:
        raise MethodError(f"alpha must be > 0, got {alpha!r}")
    if inference == "gibbs" and (int(n_samples) < 1 or int(n_burnin) < 0):
        raise MethodError(f"need n_samples >= 1 and n_burnin >= 0, got {n_samples!r}, {n_burnin!r}")
    H = _check_profiles(model_profiles, M, "model")
    G = _check_profiles(dataset_profiles, N, "dataset")
    rng = np.random.default_rng(random_state)
    O = ~np.isnan(Z)
    if not O.any():
        raise MethodError("the matrix has no observed cells")
    Of = O.astype(float)
    Z0 = np.where(O, Z, 0.0)
    n_obs = int(O.sum())

    # Initialise from a truncated SVD of the zero-filled matrix: deterministic and
    # close to a mode, so MAP converges fast and Gibbs needs a short burn-in.
    A0 = Z0.sum(axis=2) / np.maximum(Of.sum(axis=2), 1)
    Ua, sv, Vta = np.linalg.svd(A0, full_matrices=False)
    k = min(D, sv.size)
    U = np.zeros((M, D))
    V = np.zeros((N, D))
    U[:, :k] = Ua[:, :k] * np.sqrt(sv[:k])
    V[:, :k] = Vta[:k].T * np.sqrt(sv[:k])
    U += 0.01 * rng.standard_normal(U.shape)
    V += 0.01 * rng.standard_normal(V.shape)
    w, b = np.ones(S), np.zeros(S)
    Y = np.zeros((H.shape[1], D)) if H is not None else None
    X = np.zeros((G.shape[1], D)) if G is not None else None
    eye = np.eye(D)
    lam_U, lam_V, mu_U, mu_V = eye, eye, np.zeros(D), np.zeros(D)
    # Noise precision per (dataset, metric) slice; one shared value unless noise="dataset".
    A = np.full((N, S), float(alpha) if alpha is not None else 2.0)
    gibbs = inference == "gibbs"
    sample_rng = rng if gibbs else None
    n_slice = Of.sum(axis=0)  # (N, S) observations per slice

    def weights_targets():
        # W[m, n] = sum_s O a_ns w_s^2 ; Tw[m, n] = sum_s O a_ns w_s (Z - b_s)
        OA = Of * A
        return OA @ (w * w), (OA * (Z0 - b)) @ w

    total_iter = (int(n_burnin) + int(n_samples)) if gibbs else int(max_iter)
    acc_sum = np.zeros((M, N, S))
    acc_sq = np.zeros((M, N, S))
    noise_var_sum = np.zeros((N, S))
    kept = 0
    prev_loss = np.inf
    n_iter = 0
    for it in range(total_iter):
        n_iter = it + 1
        # --- model side
        if gibbs and hyperprior == "wishart":
            E = U - (H @ Y if H is not None else 0.0)
            mu_U, lam_U = _sample_normal_wishart(E, rng)
        prior_U = mu_U + (H @ Y if H is not None else 0.0)
        prior_U = np.broadcast_to(prior_U, (M, D))
        Wt, Tw = weights_targets()
        U = _row_posterior(Tw, Wt, V, 1.0, lam_U, prior_U, sample_rng)
        if H is not None:
            Y = _profile_coefficients(H, U - mu_U, lam_U, profile_std ** 2, sample_rng)
        # --- dataset side
        if gibbs and hyperprior == "wishart":
            E = V - (G @ X if G is not None else 0.0)
            mu_V, lam_V = _sample_normal_wishart(E, rng)
        prior_V = np.broadcast_to(mu_V + (G @ X if G is not None else 0.0), (N, D))
        V = _row_posterior(Tw.T, Wt.T, U, 1.0, lam_V, prior_V, sample_rng)
        if G is not None:
            X = _profile_coefficients(G, V - mu_V, lam_V, profile_std ** 2, sample_rng)
        F = U @ V.T  # (M, N)
        # --- per-metric scale and offset (PTF, 004 eq. 4-6, sigma_w = sigma_b = 1)
        if metric_weights:
            OA = Of * A
            Fw = F[:, :, None] * OA
            spp = (Fw * F[:, :, None]).sum(axis=(0, 1))
            sp = Fw.sum(axis=(0, 1))
            sn = OA.sum(axis=(0, 1))
            spr = (Fw * Z0).sum(axis=(0, 1))
            sr = (OA * Z0).sum(axis=(0, 1))
            P2 = np.stack([np.stack([1 + spp, sp], -1), np.stack([sp, 1 + sn], -1)], -2)  # (S, 2, 2)
            r2 = np.stack([spr, sr], -1)
            L2 = np.linalg.cholesky(P2)
            y2 = np.linalg.solve(L2, r2[:, :, None])
            if gibbs:
                y2 = y2 + rng.standard_normal((S, 2, 1))
            wb = np.linalg.solve(np.swapaxes(L2, 1, 2), y2)[:, :, 0]
            w, b = wb[:, 0], wb[:, 1]
        pred = F[:, :, None] * w + b
        sq = np.where(O, Z0 - pred, 0.0) ** 2
        if gibbs and alpha is None:
            if noise == "dataset":
                # a_ns ~ Gamma(shape0, rate beta), beta ~ Gamma(eps, eps): the datasets share
                # a learned scale, so a dataset with few cells borrows from the others.
                beta = rng.gamma(_EPS + A.size * _NOISE_SHAPE, 1.0 / (_EPS + A.sum()))
                A = rng.gamma(_NOISE_SHAPE + n_slice / 2.0, 1.0 / (beta + sq.sum(axis=0) / 2.0))
            else:
                A = np.full((N, S), rng.gamma(_EPS + n_obs / 2.0, 1.0 / (_EPS + sq.sum() / 2.0)))
        if gibbs:
            if it >= int(n_burnin):
                acc_sum += pred
                acc_sq += pred * pred
                noise_var_sum += 1.0 / A
                kept += 1
        else:
            loss = float((A * sq).sum()) / 2 + ((U - (H @ Y if H is not None else 0)) ** 2).sum() / 2 \
                + ((V - (G @ X if G is not None else 0)) ** 2).sum() / 2
            if abs(prev_loss - loss) <= tol * max(1.0, abs(loss)):
                break
            prev_loss = loss
    info = {"n_iter": n_iter}
    if not gibbs:
        info["converged"] = n_iter < total_iter
        return pred, None, info
    mean = acc_sum / kept
    var = np.maximum(acc_sq / kept - mean * mean, 0.0)
    info["noise_std"] = np.sqrt(noise_var_sum / kept)  # (N, S)
    if include_noise:
        var = var + noise_var_sum / kept
    return mean, np.sqrt(var), info


class PMF(BasePredictor):
    """Probabilistic matrix factorisation, MAP estimate (alternating least squares).

    ``R_mn ~ N(U_m . V_n, 1/alpha)``, ``U_m, V_n ~ N(0, I)`` on the matrix
    standardised per dataset (as 004 does; ``standardize=False`` fits raw
    values). With ``model_profiles`` ``H`` (models x K) and/or
    ``dataset_profiles`` ``G`` (datasets x J) this is constrained PMF:
    ``U' = U + H Y``, ``V' = V + G X`` with ``Y, X ~ N(0, profile_std^2)``.
    Profiles are used as given: scale continuous features beforehand.

    ``std_`` is ``None``: a point estimate carries no uncertainty; use
    :class:`BayesianPMF` for intervals.

    Parameters
    ----------
    n_components : int
        Latent dimension ``D`` (004 uses 10).
    alpha : float
        Noise precision (004 uses 2).
    max_iter, tol : int, float
        ALS stops when the relative change of the objective is below ``tol``.
    standardize, min_count : bool, int
        Per-dataset z-scoring, see :func:`standardise_columns`.
    model_profiles, dataset_profiles : array-like, optional
        Side features; ``model_profiles`` is row-aligned with ``X``.
    profile_std : float
        Prior standard deviation of the profile effects.
    random_state : int
        Seed of the small jitter added to the SVD initialisation.

    References
    ----------
    Zhao et al. (004) §3.1 eq. 1-3 and §3.5 eq. 10-12; Mnih & Salakhutdinov (2007).
    """

    row_params: tuple = ("model_profiles",)

    def __init__(self, n_components: int = 10, alpha: float = 0.5, max_iter: int = 200, tol: float = 1e-6,
                 standardize: bool = True, min_count: int = 5, column_groups=None, model_profiles=None,
                 dataset_profiles=None, profile_std: float = 1.0, random_state: int = 0):
        self.n_components = n_components
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self.standardize = standardize
        self.min_count = min_count
        self.column_groups = column_groups
        self.model_profiles = model_profiles
        self.dataset_profiles = dataset_profiles
        self.profile_std = profile_std
        self.random_state = random_state

    def fit(self, X):
        X = check_matrix(X)
        Z, mu, sd = standardise_columns(X, self.min_count, self.column_groups) if self.standardize else (X, 0.0, 1.0)
        mean, _, info = _factorise(
            Z[:, :, None], n_components=self.n_components, inference="map", alpha=self.alpha, hyperprior="fixed",
            n_burnin=0, n_samples=0, max_iter=self.max_iter, tol=self.tol, model_profiles=self.model_profiles,
            dataset_profiles=self.dataset_profiles, profile_std=self.profile_std, metric_weights=False,
            random_state=self.random_state)
        self.n_iter_ = info["n_iter"]
        self.mean_, self.std_ = _finish(X, mean[:, :, 0] * sd + mu, None)
        return self


class BayesianPMF(BasePredictor):
    """Bayesian PMF by Gibbs sampling, with a predictive standard deviation per cell.

    The model of :class:`PMF` with Normal-Wishart hyperpriors on the latent
    means and precisions (``hyperprior="wishart"``, Salakhutdinov & Mnih 2008)
    or the fixed N(0, I) priors of plain PMF (``hyperprior="fixed"``: the
    posterior 004 samples with NUTS). ``mean_`` is the average of
    ``U V^T`` over the kept draws (004's reconstruction), ``std_`` their
    spread plus the noise standard deviation (``include_noise=True``; set it
    False for 004's uncertainty of the estimate alone). ``centre_error=True``
    adds the error of each dataset's estimated centre (:func:`centring_variance`,
    whose notes say why it is off by default). Constrained (profile)
    variants as in :class:`PMF`; the profile effects are sampled too.

    Parameters
    ----------
    n_components : int
        Latent dimension (004: 10).
    alpha : float or None
        Noise precision; ``None`` (default) samples it under a vague Gamma
        prior (a documented departure from S&M 2008, which fixes 2), which is
        what calibrates the intervals.
    noise : {"global", "dataset"}
        One noise precision for the whole matrix (default; best calibrated in
        our checks) or one per dataset under a shared hierarchical prior.
    hyperprior : {"wishart", "fixed"}
    n_burnin, n_samples : int
        Gibbs sweeps discarded and kept. Sweeps are cheap (one batched Cholesky
        per side); 300 + 300 on the 108 x 176 CrossPred matrix takes a few seconds.
    include_noise : bool
    centre_error : bool
        Add :func:`centring_variance` to the predictive variance (only with
        ``standardize=True``). Off by default: it double-counts on matrices the
        factorisation explains well (see that function's notes).
    standardize, min_count, model_profiles, dataset_profiles, profile_std
        As in :class:`PMF`.
    random_state : int
        Seed of the sampler; results are identical for the same seed.

    References
    ----------
    Zhao et al. (004) §3.1-3.2, §3.4-3.5, §4.2; Salakhutdinov & Mnih (2008) §3.
    """

    row_params: tuple = ("model_profiles",)

    def __init__(self, n_components: int = 10, alpha: Optional[float] = None, hyperprior: str = "wishart",
                 n_burnin: int = 300, n_samples: int = 300, include_noise: bool = True, noise: str = "global",
                 centre_error: bool = False, standardize: bool = True,
                 min_count: int = 5, column_groups=None, model_profiles=None, dataset_profiles=None,
                 profile_std: float = 1.0, random_state: int = 0):
        self.n_components = n_components
        self.alpha = alpha
        self.hyperprior = hyperprior
        self.n_burnin = n_burnin
        self.n_samples = n_samples
        self.include_noise = include_noise
        self.noise = noise
        self.centre_error = centre_error
        self.standardize = standardize
        self.min_count = min_count
        self.column_groups = column_groups
        self.model_profiles = model_profiles
        self.dataset_profiles = dataset_profiles
        self.profile_std = profile_std
        self.random_state = random_state

    def fit(self, X):
        X = check_matrix(X)
        Z, mu, sd = standardise_columns(X, self.min_count, self.column_groups) if self.standardize else (X, 0.0, 1.0)
        mean, std, info = _factorise(
            Z[:, :, None], n_components=self.n_components, inference="gibbs", alpha=self.alpha,
            hyperprior=self.hyperprior, n_burnin=self.n_burnin, n_samples=self.n_samples, max_iter=0, tol=0.0,
            model_profiles=self.model_profiles, dataset_profiles=self.dataset_profiles,
            profile_std=self.profile_std, metric_weights=False, random_state=self.random_state,
            include_noise=self.include_noise, noise=self.noise)
        # noise level of one measurement, per dataset, in the units of X
        self.noise_std_ = info["noise_std"][:, 0] * np.asarray(sd, dtype=float)
        std = std[:, :, 0]
        if self.standardize and self.centre_error:
            std = np.sqrt(std ** 2 + centring_variance(X, sd, self.min_count))
        self.mean_, self.std_ = _finish(X, mean[:, :, 0] * sd + mu, std * sd)
        return self


class ProbabilisticTensorFactorization(BasePredictor):
    """Multi-metric PTF: ``R[m, n, s] ~ N((U_m . V_n) w_s + b_s, 1/alpha)``.

    Takes a 3-D tensor (models x datasets x metrics, NaN where unobserved or
    where a metric does not apply) rather than a matrix, so it is *not* a
    registered predictor (the registration interface is 2-D); call it
    directly. ``fit(T)`` sets ``mean_`` and ``std_`` of shape ``T.shape``
    (``std_`` is ``None`` for ``inference="map"``); observed cells pass through.

    Each (dataset, metric) slice is standardised over models as in 004's
    ``load_data_for_ptf`` (fewer than ``min_count`` values: the metric's pooled
    mean and std). ``inference="gibbs"`` is Bayesian PTF (BPTF); profiles give
    the constrained variants (CPTF, BCPTF).

    Parameters
    ----------
    inference : {"map", "gibbs"}
    alpha : float or None
        Noise precision; ``None`` samples it (Gibbs only); MAP then uses 0.5, as :class:`PMF`.
    Others as in :class:`BayesianPMF`.

    References
    ----------
    Zhao et al. (004) §3.3 eq. 4-6, §4.4 (Table 1, Table 12).
    """

    row_params: tuple = ("model_profiles",)

    def __init__(self, n_components: int = 10, inference: str = "map", alpha: Optional[float] = None,
                 hyperprior: str = "wishart", n_burnin: int = 300, n_samples: int = 300, max_iter: int = 200,
                 tol: float = 1e-6, include_noise: bool = True, centre_error: bool = False, standardize: bool = True,
                 min_count: int = 5,
                 model_profiles=None, dataset_profiles=None, profile_std: float = 1.0, random_state: int = 0):
        self.n_components = n_components
        self.inference = inference
        self.alpha = alpha
        self.hyperprior = hyperprior
        self.n_burnin = n_burnin
        self.n_samples = n_samples
        self.max_iter = max_iter
        self.tol = tol
        self.include_noise = include_noise
        self.centre_error = centre_error
        self.standardize = standardize
        self.min_count = min_count
        self.model_profiles = model_profiles
        self.dataset_profiles = dataset_profiles
        self.profile_std = profile_std
        self.random_state = random_state

    def fit(self, T):
        T = np.asarray(T, dtype=float)
        if T.ndim != 3:
            raise MethodError(f"PTF needs a 3-D tensor (models x datasets x metrics), got shape {T.shape}")
        if np.isinf(T).any():
            raise MethodError("the tensor contains infinite values")
        M, N, S = T.shape
        if self.standardize:
            mu = np.empty((1, N, S))
            sd = np.empty((1, N, S))
            centre_var = np.zeros((1, N, S))
            for s in range(S):  # a loop over the few metrics, not over cells
                if np.isnan(T[:, :, s]).all():
                    mu[0, :, s], sd[0, :, s] = 0.0, 1.0
                    continue
                _, mu[0, :, s], sd[0, :, s] = standardise_columns(T[:, :, s], self.min_count)
                if self.centre_error:
                    centre_var[0, :, s] = centring_variance(T[:, :, s], sd[0, :, s], self.min_count)
            Z = (T - mu) / sd
        else:
            mu, sd, Z, centre_var = 0.0, 1.0, T, 0.0
        alpha = self.alpha if (self.alpha is not None or self.inference == "gibbs") else 0.5
        mean, std, info = _factorise(
            Z, n_components=self.n_components, inference=self.inference, alpha=alpha, hyperprior=self.hyperprior,
            n_burnin=self.n_burnin, n_samples=self.n_samples, max_iter=self.max_iter, tol=self.tol,
            model_profiles=self.model_profiles, dataset_profiles=self.dataset_profiles,
            profile_std=self.profile_std, metric_weights=True, random_state=self.random_state,
            include_noise=self.include_noise)
        self.n_iter_ = info["n_iter"]
        obs = ~np.isnan(T)
        self.mean_ = np.where(obs, T, mean * sd + mu)
        self.std_ = None if std is None else np.where(obs, 0.0, np.sqrt(std ** 2 + centre_var) * sd)
        return self


# ---------------------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------------------


@hookimpl
def harness_ext_predictors():
    yield Predictor(name="ridge", cls=RidgePredictor,
                    description="ridge regression of the other datasets on the subset (SimBA §4)")
    yield Predictor(name="knn", cls=KNNPredictor,
                    description="k-nearest-neighbour regression, k = 5 or the training size (SimBA §4)")
    yield Predictor(name="mlp_12", cls=MLPPredictor,
                    description="MLP regression, one hidden layer of 12 (SimBA §4)")
    yield Predictor(name="mlp_12_12", cls=MLP2Predictor,
                    description="MLP regression, two hidden layers of 12 (SimBA §4)")
    yield Predictor(name="global_mean", cls=GlobalMean,
                    description="global mean of the dataset-standardised matrix (004 baseline)")
    yield Predictor(name="mean_of_means", cls=MeanOfMeans,
                    description="average of model, dataset and global means (004 baseline)")
    yield Predictor(name="pmf", cls=PMF,
                    description="probabilistic matrix factorisation, MAP; profiles give constrained PMF (004 §3.1, §3.5)")
    yield Predictor(name="bpmf", cls=BayesianPMF,
                    description="Bayesian PMF by Gibbs sampling with predictive std (004 §3.4; S&M 2008)")
