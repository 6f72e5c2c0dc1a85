"""Probabilistic matrix (and tensor) factorisation: MAP by alternating least squares and Gibbs sampling with
predictive standard deviations, constrained variants with model and dataset profiles, and the multi-metric
tensor variant (:class:`ProbabilisticTensorFactorization`, unregistered: the registration interface is 2-D).

The registered predictors ``pmf`` and ``bpmf`` are :class:`harness_ext.plugins.predictors_pmf.PMF` and
``BayesianPMF``, which call :func:`factorise`. They are *transductive*: every observed cell informs every
prediction.

References
----------
Zhao et al. §3.1-3.5 and §4.2; Salakhutdinov & Mnih, "Bayesian Probabilistic Matrix
Factorization using MCMC", ICML 2008; Mnih & Salakhutdinov, "Probabilistic Matrix Factorization", NIPS 2007
(constrained PMF).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from harness_ext.base import BasePredictor, limit_threads
from harness_ext.errors import MethodError

from harness_ext.methods.engine.baselines import centring_variance, standardise_columns


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
    Salakhutdinov & Mnih (2008) §3.3 (Zhao et al. use an LKJ prior in PyMC instead;
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
    Zhao et al. §3.5, eq. 10-12; Mnih & Salakhutdinov (2007) §4.
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


def factorise(Z: np.ndarray, **kwargs):
    """Factorise the tensor ``Z`` (models x datasets x metrics, NaN where unobserved): ``(mean, std, info)``.

    Runs :func:`_factorise_impl`, whose keyword arguments are the predictors' parameters, with
    single-threaded BLAS (see :func:`harness_ext.base.limit_threads`).

    References
    ----------
    Zhao et al. §3.1-3.5; Salakhutdinov & Mnih (2008) §3.
    """
    with limit_threads():
        return _factorise_impl(Z, **kwargs)


def _check_pmf_args(D, n_components, inference, hyperprior, alpha, noise, n_samples, n_burnin) -> None:
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


def _svd_start(Z0, Of, D: int, rng):
    """Factors from a truncated SVD of the zero-filled matrix, slightly jittered: deterministic and close
    to a mode, so MAP converges fast and Gibbs needs a short burn-in."""
    M, N = Z0.shape[:2]
    A0 = Z0.sum(axis=2) / np.maximum(Of.sum(axis=2), 1)
    Ua, sv, Vta = np.linalg.svd(A0, full_matrices=False)
    k = min(D, sv.size)
    U = np.zeros((M, D))
    V = np.zeros((N, D))
    U[:, :k] = Ua[:, :k] * np.sqrt(sv[:k])
    V[:, :k] = Vta[:k].T * np.sqrt(sv[:k])
    U += 0.01 * rng.standard_normal(U.shape)
    V += 0.01 * rng.standard_normal(V.shape)
    return U, V


def _metric_scale(F, OA, Z0, rng=None):
    """Per-metric scale ``w_s`` and offset ``b_s`` given the factors' product ``F``: their exact Gaussian
    posterior (N(0, 1) priors), its mean, or a draw when ``rng`` is given.

    References
    ----------
    Zhao et al., PTF, eq. 4-6 (sigma_w = sigma_b = 1).
    """
    S = OA.shape[2]
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
    if rng is not None:
        y2 = y2 + rng.standard_normal((S, 2, 1))
    wb = np.linalg.solve(np.swapaxes(L2, 1, 2), y2)[:, :, 0]
    return wb[:, 0], wb[:, 1]


def _sample_noise_precision(A, sq, n_slice, n_obs: int, noise: str, rng):
    """A Gibbs draw of the noise precision per (dataset, metric) slice, given the squared residuals ``sq``."""
    if noise == "dataset":
        # a_ns ~ Gamma(shape0, rate beta), beta ~ Gamma(eps, eps): the datasets share
        # a learned scale, so a dataset with few cells borrows from the others.
        beta = rng.gamma(_EPS + A.size * _NOISE_SHAPE, 1.0 / (_EPS + A.sum()))
        return rng.gamma(_NOISE_SHAPE + n_slice / 2.0, 1.0 / (beta + sq.sum(axis=0) / 2.0))
    return np.full(A.shape, rng.gamma(_EPS + n_obs / 2.0, 1.0 / (_EPS + sq.sum() / 2.0)))


def _map_objective(A, sq, U, V, H, Y, G, X) -> float:
    """The negative log posterior MAP descends (up to constants): weighted squared error plus the factors' N(0, I) priors."""
    return float((A * sq).sum()) / 2 + ((U - (H @ Y if H is not None else 0)) ** 2).sum() / 2 \
        + ((V - (G @ X if G is not None else 0)) ** 2).sum() / 2


def _posterior_summary(acc_sum, acc_sq, noise_var_sum, kept: int, include_noise: bool, n_iter: int):
    """``(mean, std, info)`` of the kept Gibbs draws; the std adds the noise variance when ``include_noise``."""
    mean = acc_sum / kept
    var = np.maximum(acc_sq / kept - mean * mean, 0.0)
    info = {"n_iter": n_iter, "noise_std": np.sqrt(noise_var_sum / kept)}  # (N, S)
    if include_noise:
        var = var + noise_var_sum / kept
    return mean, np.sqrt(var), info


def _update_side(F, other, Tw, Wt, P, C, mu, lam, profile_var, wishart_rng, sample_rng):
    """One side's block update (models or datasets): its Normal-Wishart hyperparameters when sampled, its
    factors, then its profile coefficients. Returns ``(F, C, mu, lam)``.

    References
    ----------
    Salakhutdinov & Mnih (2008), BPMF Gibbs steps; Zhao et al. §3.1 (constrained PMF, ``F' = F + P C``).
    """
    if wishart_rng is not None:
        mu, lam = _sample_normal_wishart(F - (P @ C if P is not None else 0.0), wishart_rng)
    prior = np.broadcast_to(mu + (P @ C if P is not None else 0.0), F.shape)
    F = _row_posterior(Tw, Wt, other, 1.0, lam, prior, sample_rng)
    if P is not None:
        C = _profile_coefficients(P, F - mu, lam, profile_var, sample_rng)
    return F, C, mu, lam


def _factorise_impl(Z: np.ndarray, *, n_components: int, inference: str, alpha: Optional[float], hyperprior: str,
               n_burnin: int, n_samples: int, max_iter: int, tol: float, model_profiles, dataset_profiles,
               profile_std: float, metric_weights: bool, random_state: int, include_noise: bool = True,
               noise: str = "global"):
    """Fit ``Z[m, n, s] ~ N((U_m' V_n') w_s + b_s, 1/alpha)`` by MAP (ALS) or Gibbs sampling.

    ``U' = U + H Y`` and ``V' = V + G X`` when profiles are given (constrained
    PMF); ``w = 1, b = 0`` are fixed unless ``metric_weights`` (PTF). Returns
    ``(mean, std, info)`` of the reconstruction, with ``std=None`` for MAP.

    Choices (documented because Zhao et al. and S&M 2008 differ):

    * MAP uses ``alpha`` (fixed) and N(0, I) priors (Zhao et al. §3.1, ``sigma_U =
      sigma_V = 1``); it is block coordinate ascent, each block an exact ridge solve.
    * Gibbs with ``hyperprior="wishart"`` is BPMF (S&M 2008): Normal-Wishart
      hyperpriors on each side; ``hyperprior="fixed"`` samples the plain PMF
      posterior (N(0, I) priors), which is what Zhao et al. call PMF with MCMC.
    * ``alpha=None`` puts a vague Gamma(1e-3, 1e-3) prior on the noise
      precision and samples it (S&M and Zhao et al. fix alpha = 2); a sampled noise
      level is what makes the predictive intervals calibrated. With
      ``noise="dataset"`` each dataset (and metric) has its own precision,
      ``a_n ~ Gamma(2, beta)`` with a shared, sampled rate ``beta`` (vague
      Gamma prior), so datasets with few cells borrow strength.
    * The predictive std is the spread of ``U V^T`` across draws (Zhao et al.'s
      uncertainty) plus, with ``include_noise``, the noise variance ``1/alpha``
      (the predictive distribution of a fresh measurement).
    """
    M, N, S = Z.shape
    D = int(n_components)
    _check_pmf_args(D, n_components, inference, hyperprior, alpha, noise, n_samples, n_burnin)
    H = _check_profiles(model_profiles, M, "model")
    G = _check_profiles(dataset_profiles, N, "dataset")
    rng = np.random.default_rng(random_state)
    O = ~np.isnan(Z)
    if not O.any():
        raise MethodError("the matrix has no observed cells")
    Of = O.astype(float)
    Z0 = np.where(O, Z, 0.0)
    n_obs = int(O.sum())

    U, V = _svd_start(Z0, Of, D, rng)
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
        wishart_rng = rng if gibbs and hyperprior == "wishart" else None
        Wt, Tw = weights_targets()
        U, Y, mu_U, lam_U = _update_side(U, V, Tw, Wt, H, Y, mu_U, lam_U, profile_std ** 2, wishart_rng, sample_rng)
        V, X, mu_V, lam_V = _update_side(V, U, Tw.T, Wt.T, G, X, mu_V, lam_V, profile_std ** 2, wishart_rng, sample_rng)
        F = U @ V.T  # (M, N)
        # --- per-metric scale and offset (PTF, Zhao et al. eq. 4-6, sigma_w = sigma_b = 1)
        if metric_weights:
            w, b = _metric_scale(F, Of * A, Z0, rng if gibbs else None)
        pred = F[:, :, None] * w + b
        sq = np.where(O, Z0 - pred, 0.0) ** 2
        if gibbs and alpha is None:
            A = _sample_noise_precision(A, sq, n_slice, n_obs, noise, rng)
        if gibbs:
            if it >= int(n_burnin):
                acc_sum += pred
                acc_sq += pred * pred
                noise_var_sum += 1.0 / A
                kept += 1
        else:
            loss = _map_objective(A, sq, U, V, H, Y, G, X)
            if abs(prev_loss - loss) <= tol * max(1.0, abs(loss)):
                break
            prev_loss = loss
    if not gibbs:
        return pred, None, {"n_iter": n_iter, "converged": n_iter < total_iter}
    return _posterior_summary(acc_sum, acc_sq, noise_var_sum, kept, include_noise, n_iter)


class ProbabilisticTensorFactorization(BasePredictor):
    """Multi-metric PTF: ``R[m, n, s] ~ N((U_m . V_n) w_s + b_s, 1/alpha)``.

    Takes a 3-D tensor (models x datasets x metrics, NaN where unobserved or
    where a metric does not apply) rather than a matrix, so it is *not* a
    registered predictor (the registration interface is 2-D); call it
    directly. ``fit(T)`` sets ``mean_`` and ``std_`` of shape ``T.shape``
    (``std_`` is ``None`` for ``inference="map"``); observed cells pass through.

    Each (dataset, metric) slice is standardised over models as in Zhao et al.'s
    ``load_data_for_ptf`` (fewer than ``min_count`` values: the metric's pooled
    mean and std). ``inference="gibbs"`` is Bayesian PTF (BPTF); profiles give
    the constrained variants (CPTF, BCPTF). Parameters not listed below are
    those of :class:`harness_ext.plugins.predictors_pmf.BayesianPMF`.

    Parameters
    ----------
    inference : {"map", "gibbs"}
    alpha : float or None
        Noise precision; ``None`` samples it (Gibbs only); MAP then uses 0.5, as
        :class:`harness_ext.plugins.predictors_pmf.PMF`.

    References
    ----------
    Zhao et al. §3.3 eq. 4-6, §4.4 (Table 1, Table 12).
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
        mean, std, info = factorise(
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
