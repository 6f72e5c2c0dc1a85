"""Probabilistic matrix factorisation predictors: PMF (MAP) and Bayesian PMF by Gibbs sampling, with their
constrained variants (model and dataset profiles).

The factorisation is :func:`harness_ext.methods.engine.pmf.factorise`; the multi-metric tensor variant (PTF,
unregistered) is :class:`harness_ext.methods.engine.pmf.ProbabilisticTensorFactorization`.

References
----------
Zhao et al. §3.1-3.5 and §4.2; Salakhutdinov & Mnih, "Bayesian Probabilistic Matrix
Factorization using MCMC", ICML 2008; Mnih & Salakhutdinov, "Probabilistic Matrix Factorization", NIPS 2007
(constrained PMF).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from harness_ext.base import BasePredictor
from harness_ext.methods.engine.baselines import centring_variance, pass_observed, standardised_input
from harness_ext.methods.engine.pmf import factorise


class PMF(BasePredictor):
    """Probabilistic matrix factorisation, MAP estimate (alternating least squares).

    ``R_mn ~ N(U_m . V_n, 1/alpha)``, ``U_m, V_n ~ N(0, I)`` on the matrix standardised per dataset (as Zhao et al. do;
    ``standardize=False`` fits raw values). With ``model_profiles`` ``H`` (models x K) and/or ``dataset_profiles``
    ``G`` (datasets x J) this is constrained PMF: ``U' = U + H Y``, ``V' = V + G X`` with
    ``Y, X ~ N(0, profile_std^2)``. Profiles are used as given: scale continuous features beforehand.

    ``std_`` is ``None``: a point estimate carries no uncertainty; use :class:`BayesianPMF` for intervals.

    Parameters
    ----------
    n_components : int
        Latent dimension ``D`` (Zhao et al. use 10).
    alpha : float
        Noise precision (Zhao et al. use 2).
    max_iter, tol : int, float
        ALS stops when the relative change of the objective is below ``tol``.
    standardize, min_count : bool, int
        Per-dataset z-scoring, see :func:`~harness_ext.methods.engine.baselines.standardise_columns`.
    model_profiles, dataset_profiles : array-like, optional
        Side features; ``model_profiles`` is row-aligned with ``X``.
    profile_std : float
        Prior standard deviation of the profile effects.
    random_state : int
        Seed of the small jitter added to the SVD initialisation.

    References
    ----------
    Zhao et al. §3.1 eq. 1-3 and §3.5 eq. 10-12; Mnih & Salakhutdinov (2007).
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
        X, Z, mu, sd = standardised_input(self, X)
        mean, _, info = factorise(
            Z[:, :, None], n_components=self.n_components, inference="map", alpha=self.alpha, hyperprior="fixed",
            n_burnin=0, n_samples=0, max_iter=self.max_iter, tol=self.tol, model_profiles=self.model_profiles,
            dataset_profiles=self.dataset_profiles, profile_std=self.profile_std, metric_weights=False,
            random_state=self.random_state)
        self.n_iter_ = info["n_iter"]
        self.mean_, self.std_ = pass_observed(X, mean[:, :, 0] * sd + mu, None)
        return self


class BayesianPMF(BasePredictor):
    """Bayesian PMF by Gibbs sampling, with a predictive standard deviation per cell.

    The model of :class:`PMF` with Normal-Wishart hyperpriors on the latent means and precisions
    (``hyperprior="wishart"``, Salakhutdinov & Mnih 2008) or the fixed N(0, I) priors of plain PMF
    (``hyperprior="fixed"``: the posterior Zhao et al. sample with NUTS). ``mean_`` is the average of ``U V^T`` over the
    kept draws (Zhao et al.'s reconstruction), ``std_`` their spread plus the noise standard deviation
    (``include_noise=True``; set it False for Zhao et al.'s uncertainty of the estimate alone). ``centre_error=True`` adds
    the error of each dataset's estimated centre (:func:`~harness_ext.methods.engine.baselines.centring_variance`,
    whose notes say why it is off by default). Constrained (profile) variants as in :class:`PMF`; the profile
    effects are sampled too.

    Parameters
    ----------
    n_components : int
        Latent dimension (Zhao et al.: 10).
    alpha : float or None
        Noise precision; ``None`` (default) samples it under a vague Gamma prior (a documented departure from S&M
        2008, which fixes 2), which is what calibrates the intervals.
    noise : {"global", "dataset"}
        One noise precision for the whole matrix (default; best calibrated in our checks) or one per dataset under a
        shared hierarchical prior.
    hyperprior : {"wishart", "fixed"}
    n_burnin, n_samples : int
        Gibbs sweeps discarded and kept. Sweeps are cheap (one batched Cholesky per side); 300 + 300 on the 108 x
        176 CrossPred matrix takes a few seconds.
    include_noise : bool
    centre_error : bool
        Add the centring variance to the predictive variance (only with ``standardize=True``). Off by default: it
        double-counts on matrices the factorisation explains well (see that function's notes).
    standardize, min_count, model_profiles, dataset_profiles, profile_std
        As in :class:`PMF`.
    random_state : int
        Seed of the sampler; results are identical for the same seed.

    References
    ----------
    Zhao et al. §3.1-3.2, §3.4-3.5, §4.2; Salakhutdinov & Mnih (2008) §3.
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
        X, Z, mu, sd = standardised_input(self, X)
        mean, std, info = factorise(
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
        self.mean_, self.std_ = pass_observed(X, mean[:, :, 0] * sd + mu, std * sd)
        return self
