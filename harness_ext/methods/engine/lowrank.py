"""Low-rank model with model and dataset biases, fitted by ALS (MAP) or Gibbs sampling.

In the transformed space of :mod:`harness_ext.methods.engine.transforms`::

    z_ij = mu + a_i + b_j + u_i . v_j + e_ij,    e_ij ~ N(0, sigma_j^2)

``mu`` is the mean of the observed cells, ``a`` the model (row) biases, ``b``
the dataset (column) biases and ``U`` (models x r), ``V`` (datasets x r) the
factors. Every observed cell is used; nothing is cut to a dense block.

* :func:`fit_als` minimises ``sum_obs (z - zhat)^2 + lam (|U|^2 + |V|^2) +
  lam_bias (|a|^2 + |b|^2)`` by alternating least squares. Each half-step is
  one batched ``(r+1) x (r+1)`` solve per row (or column) over the observed
  cells only: ``einsum`` builds the Gram matrices, no Python loop over cells.
  Posterior covariances of each row's ``[u_i, a_i]`` and each column's
  ``[v_j, b_j]`` (the Laplace approximation at the MAP, ``sigma^2 A^-1``) give
  a per-cell predictive standard deviation.
* :func:`fit_gibbs` samples the same model under Gaussian priors with a
  Gamma-distributed factor precision (shared) and per-dataset noise precisions
  under a shared Gamma prior; it keeps thinned draws so a new model can be
  folded in under each draw.
* :func:`fold_in` places a new model from whatever cells it has: the
  conditional posterior of ``[u, a]`` given the fitted columns. Fewer observed
  cells mean a less precise ``[u, a]`` and so wider predictive intervals.
* :func:`select_rank_lam` chooses rank and ``lam`` by K-fold cross-validation
  over held-out observed cells (seeded).

References
----------
Salakhutdinov & Mnih, "Bayesian Probabilistic Matrix Factorization using
MCMC", ICML 2008 (Gibbs conditionals); Koren, Bell & Volinsky, "Matrix
factorization techniques for recommender systems", IEEE Computer 2009 (bias
terms, ALS); Zeng & Papailiopoulos (arXiv 2606.24020) §3 (bias-decomposed
low-rank completion of benchmark matrices).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from ...errors import MethodError

#: Grid searched by :func:`select_rank_lam` unless given.
DEFAULT_RANKS = (1, 2, 3, 5)
DEFAULT_LAMS = (0.3, 1.0, 3.0, 10.0)
#: Models sampled for the rank/penalty cross-validation of a larger matrix.
MAX_CV_ROWS = 1000
#: Prior pseudo-observations pulling each dataset's noise variance to the pooled one.
NOISE_SHRINK = 5.0


@dataclass
class LowRankFit:
    """A fitted low-rank bias model in the transformed space.

    Arrays carry a leading sample axis ``S`` (1 for ALS, the kept draws for
    Gibbs) so fold-in and prediction treat both alike.
    """

    mu: float
    a: np.ndarray          # (S, m)
    b: np.ndarray          # (S, d)
    U: np.ndarray          # (S, m, r)
    V: np.ndarray          # (S, d, r)
    noise_var: np.ndarray  # (S, d): per-dataset noise variance
    weight: np.ndarray     # (S, d): per-dataset likelihood precision used by the fit (fold-in uses the same)
    prior_prec: np.ndarray  # (S, r + 1): prior precision of [u, a] in the fit's objective units
    col_cov: Optional[np.ndarray] = None  # (d, r+1, r+1) posterior covariance of [v_j, b_j] (ALS only)
    row_cov: Optional[np.ndarray] = None  # (m, r+1, r+1) posterior covariance of [u_i, a_i] (ALS only)
    info: dict = field(default_factory=dict)

    @property
    def rank(self) -> int:
        return int(self.U.shape[2])

    def mean(self) -> np.ndarray:
        """``E[z]`` for the fitted rows: average over samples of ``mu + a + b + U V^T``."""
        return (self.mu + self.a[:, :, None] + self.b[:, None, :] + np.einsum("smk,sdk->smd", self.U, self.V)).mean(0)

    def predictive(self):
        """``(mean, sd)`` of each fitted cell in the transformed space, noise included."""
        pred = self.mu + self.a[:, :, None] + self.b[:, None, :] + np.einsum("smk,sdk->smd", self.U, self.V)
        mean = pred.mean(0)
        var = pred.var(0) + self.noise_var.mean(0)[None, :]
        if self.row_cov is not None:
            ones = np.ones(self.V.shape[:2] + (1,))
            Xc = np.concatenate([self.V, ones], axis=2)[0]  # (d, r+1)
            Yr = np.concatenate([self.U, np.ones(self.U.shape[:2] + (1,))], axis=2)[0]  # (m, r+1)
            var = var + np.einsum("jk,ikl,jl->ij", Xc, self.row_cov, Xc)
            var = var + np.einsum("ik,jkl,il->ij", Yr, self.col_cov, Yr)
        return mean, np.sqrt(var)


def _init(Z, O, rank, rng):
    m, d = Z.shape
    mu = float(Z[O].mean())
    R = np.where(O, Z - mu, 0.0)
    cnt_c = np.maximum(O.sum(0), 1)
    b = R.sum(0) / (cnt_c + 1.0)
    R = np.where(O, R - b, 0.0)
    a = R.sum(1) / (np.maximum(O.sum(1), 1) + 1.0)
    R = np.where(O, R - a[:, None], 0.0)
    # Truncated SVD of the zero-filled residual: a deterministic start that ALS refines.
    if rank:
        u, s, vt = _leading_svd(R, rank)
        scale = np.sqrt(s[:rank] / np.sqrt(max(O.mean(), 1e-3)))
        U = u[:, :rank] * scale + 1e-3 * rng.standard_normal((m, rank))
        V = vt[:rank].T * scale + 1e-3 * rng.standard_normal((d, rank))
    else:
        U, V = np.zeros((m, 0)), np.zeros((d, 0))
    return mu, a, b, U, V


#: The last start's leading singular triplets, keyed by the residual's bytes (see _leading_svd).
_SVD_MEMO: dict = {}
_SVD_KEEP = 16


def _leading_svd(R, rank: int):
    """``np.linalg.svd(R, full_matrices=False)``, its leading :data:`_SVD_KEEP` triplets remembered for the next call.

    select_rank_lam fits every (rank, penalty) of its grid on the same held-out
    matrix, so the same start is decomposed 16 times per fold: the memo returns
    the identical numbers, and most of the search's time at d = 2,000 goes.
    """
    import hashlib

    key = (R.shape, hashlib.blake2b(np.ascontiguousarray(R), digest_size=16).digest())
    hit = _SVD_MEMO.get("last")
    if hit is not None and hit[0] == key and rank <= hit[1][0].shape[1]:
        return hit[1]
    u, s, vt = np.linalg.svd(R, full_matrices=False)
    out = (u[:, :_SVD_KEEP].copy(), s[:_SVD_KEEP].copy(), vt[:_SVD_KEEP].copy())
    _SVD_MEMO["last"] = (key, out)
    return out


def _solve_side(Rt, O, F, weight, prior):
    """Batched ridge solves for one side: rows of ``Rt`` (n, p) regress on design ``[F, 1]`` (p, r+1).

    ``weight`` (p,) is the likelihood precision per column of ``Rt``; ``prior`` (r+1,) or
    (n, r+1) the penalty. Returns ``(coef (n, r+1), A (n, r+1, r+1))``.
    """
    Xd = np.concatenate([F, np.ones((F.shape[0], 1))], axis=1)
    Ow = O * weight
    r1 = Xd.shape[1]
    # One BLAS product per side (the 3-operand einsum loops in C without BLAS: most of a fit at d = 2,000).
    A = (Ow @ (Xd[:, :, None] * Xd[:, None, :]).reshape(-1, r1 * r1)).reshape(-1, r1, r1)
    A[:, np.arange(r1), np.arange(r1)] += prior
    rhs = (np.where(O, Rt, 0.0) * weight) @ Xd
    return np.linalg.solve(A, rhs[:, :, None])[:, :, 0], A


def _check(Z, rank):
    Z = np.asarray(Z, dtype=float)
    if Z.ndim != 2:
        raise MethodError(f"matrix must be 2-D, got shape {Z.shape}")
    O = ~np.isnan(Z)
    if O.sum() < 2:
        raise MethodError("the matrix has fewer than two observed cells")
    if int(rank) < 0:
        raise MethodError(f"rank must be >= 0, got {rank!r}")
    return Z, O, int(min(int(rank), max(min(Z.shape) - 1, 0)))


def fit_als(Z, rank: int = 2, lam: float = 1.0, lam_bias: float = 0.1, max_iter: int = 100, tol: float = 1e-5,
            random_state: int = 0, noise_shrink: float = NOISE_SHRINK, reweight: int = 0) -> LowRankFit:
    """MAP fit of the biased low-rank model by alternating least squares.

    Parameters
    ----------
    Z : array-like, (m, d)
        Transformed scores, NaN where unobserved.
    rank : int
        Number of factors ``r`` (0 fits biases only). Capped at ``min(m, d) - 1``.
    lam, lam_bias : float
        Ridge penalties on the factors and on the biases.
    max_iter, tol : int, float
        Sweeps stop when the objective changes by less than ``tol`` (relative).
    random_state : int
        Seed of the small jitter added to the SVD start.
    noise_shrink : float
        Pseudo-observations pulling each dataset's residual variance to the pooled one.
    reweight : int
        Passes of iteratively reweighted ALS: each dataset's cells are weighted by
        the inverse of its (shrunk) residual variance from the previous pass, so a
        noisy dataset pulls the shared factors less (the MAP of the
        heteroscedastic model the Gibbs sampler samples). 0: one weight for all.

    Returns
    -------
    LowRankFit

    References
    ----------
    Koren, Bell & Volinsky (2009), eq. 5 (biased MF); Zeng & Papailiopoulos (2606.24020) §3.
    """
    Z, O, rank = _check(Z, rank)
    rng = np.random.default_rng(random_state)
    mu, a, b, U, V = _init(Z, O, rank, rng)
    m, d = Z.shape
    prior = np.r_[np.full(rank, float(lam)), float(lam_bias)]
    one_d = np.ones(m)
    wc = np.ones(d)  # per-dataset likelihood weight (relative precision, mean 1)
    n_obs, n_c = O.sum(), O.sum(0)
    dof = max(n_obs - (m + d) * (rank + 1) * 0.5, 0.25 * n_obs)
    n_iter = 0
    for _ in range(int(reweight) + 1):
        prev = np.inf
        for n_iter in range(1, int(max_iter) + 1):
            W, A_row = _solve_side(Z - mu - b[None, :], O, V, wc, prior)
            U, a = W[:, :rank], W[:, rank]
            # Column j's weight scales its whole likelihood: the same solve with the penalty divided by it.
            H, A_col = _solve_side((Z - mu - a[:, None]).T, O.T, U, one_d, prior[None, :] / wc[:, None])
            V, b = H[:, :rank], H[:, rank]
            resid = np.where(O, Z - mu - a[:, None] - b[None, :] - U @ V.T, 0.0)
            loss = float(((resid ** 2) * wc).sum() + lam * ((U ** 2).sum() + (V ** 2).sum())
                         + lam_bias * ((a ** 2).sum() + (b ** 2).sum()))
            if n_iter >= 5 and abs(prev - loss) <= tol * max(loss, 1e-12):
                break
            prev = loss
        # Residual variance: pooled with the effective degrees of freedom, then per dataset with shrinkage.
        s2 = float((resid ** 2).sum() / dof) or 1e-6
        s2_c = ((resid ** 2).sum(0) * (n_obs / dof) + noise_shrink * s2) / (n_c + noise_shrink)
        w_fit, wc = wc, s2 / np.maximum(s2_c, 1e-12)
        wc = wc / np.average(wc, weights=np.maximum(n_c, 1))
    A_col = A_col * w_fit[:, None, None]  # back in the row side's units: the precision of [v_j, b_j]
    # Laplace covariances at the MAP in the units of the noise: sigma^2 A^-1.
    row_cov = s2 * np.linalg.inv(A_row)
    col_cov = s2 * np.linalg.inv(A_col)
    return LowRankFit(mu=mu, a=a[None], b=b[None], U=U[None], V=V[None], noise_var=s2_c[None],
                      weight=(w_fit / s2)[None], prior_prec=(prior / s2)[None],
                      col_cov=col_cov, row_cov=row_cov,
                      info={"method": "als", "n_iter": n_iter, "converged": n_iter < int(max_iter), "rank": rank,
                            "lam": float(lam), "lam_bias": float(lam_bias), "noise_var": s2, "reweight": int(reweight)})


def fit_gibbs(Z, rank: int = 2, n_burnin: int = 200, n_samples: int = 200, thin: int = 4, lam_bias: float = 0.1,
              random_state: int = 0, init: Optional[LowRankFit] = None) -> LowRankFit:
    """Bayesian fit of the biased low-rank model by Gibbs sampling.

    Priors: ``u_i, v_j ~ N(0, I / lam_f)`` with ``lam_f ~ Gamma(1, 1)`` (sampled,
    so no regularisation to cross-validate), ``a_i, b_j ~ N(0, 1 / lam_bias)``,
    per-dataset noise precision ``tau_j ~ Gamma(2, beta)`` with
    ``beta ~ Gamma(1, 1)`` shared, so a dataset with few cells borrows the
    others' noise level. Conditionals are Gaussian (batched Cholesky per side)
    and Gamma. Every ``thin``-th draw after burn-in is kept.

    Parameters
    ----------
    init : LowRankFit, optional
        An ALS fit to start from (shortens burn-in).

    References
    ----------
    Salakhutdinov & Mnih (2008) §3.3-3.4 (block Gibbs for matrix factorisation).
    """
    Z, O, rank = _check(Z, rank)
    rng = np.random.default_rng(random_state)
    m, d = Z.shape
    if init is not None and init.rank == rank:
        mu, a, b, U, V = init.mu, init.a[0].copy(), init.b[0].copy(), init.U[0].copy(), init.V[0].copy()
    else:
        mu, a, b, U, V = _init(Z, O, rank, rng)
    n_c = O.sum(0)
    tau = np.full(d, 4.0)
    lam_f, beta = 1.0, 1.0
    shape0 = 2.0
    keep = {k: [] for k in ("a", "b", "U", "V", "tau", "lam")}
    total = int(n_burnin) + int(n_samples)
    r1 = rank + 1

    def sample_side(Rt, Ob, F, w, prior):
        Xd = np.concatenate([F, np.ones((F.shape[0], 1))], axis=1)
        Ow = Ob * w
        P = np.einsum("ij,jk,jl->ikl", Ow, Xd, Xd)
        P[:, np.arange(r1), np.arange(r1)] += prior
        rhs = np.einsum("ij,jk->ik", np.where(Ob, Rt, 0.0) * w, Xd)
        L = np.linalg.cholesky(P)
        y = np.linalg.solve(L, rhs[:, :, None]) + rng.standard_normal((P.shape[0], r1, 1))
        return np.linalg.solve(np.swapaxes(L, 1, 2), y)[:, :, 0]

    for it in range(total):
        prior = np.r_[np.full(rank, lam_f), lam_bias]
        W = sample_side(Z - mu - b[None, :], O, V, tau, prior)
        U, a = W[:, :rank], W[:, rank]
        # The column side's likelihood precision is one tau_j for all of column j's cells.
        H = _sample_cols(Z - mu - a[:, None], O, U, tau, prior, rng)
        V, b = H[:, :rank], H[:, rank]
        resid = np.where(O, Z - mu - a[:, None] - b[None, :] - U @ V.T, 0.0)
        sq_c = (resid ** 2).sum(0)
        tau = rng.gamma(shape0 + n_c / 2.0, 1.0 / (beta + sq_c / 2.0))
        beta = rng.gamma(1.0 + d * shape0, 1.0 / (1.0 + tau.sum()))
        if rank:
            ss = (U ** 2).sum() + (V ** 2).sum()
            lam_f = rng.gamma(1.0 + (m + d) * rank / 2.0, 1.0 / (1.0 + ss / 2.0))
        if it >= int(n_burnin) and (it - int(n_burnin)) % max(int(thin), 1) == 0:
            for k, v in (("a", a), ("b", b), ("U", U), ("V", V), ("tau", tau), ("lam", lam_f)):
                keep[k].append(np.array(v, copy=True))
    if not keep["a"]:
        raise MethodError("Gibbs kept no draws: n_samples must be positive")
    taus = np.stack(keep["tau"])
    lams = np.array(keep["lam"])
    prior_prec = np.concatenate([np.repeat(lams[:, None], rank, axis=1), np.full((lams.size, 1), lam_bias)], axis=1)
    return LowRankFit(mu=mu, a=np.stack(keep["a"]), b=np.stack(keep["b"]), U=np.stack(keep["U"]),
                      V=np.stack(keep["V"]), noise_var=1.0 / taus, weight=taus, prior_prec=prior_prec,
                      info={"method": "gibbs", "rank": rank, "n_burnin": int(n_burnin), "n_samples": int(n_samples),
                            "thin": int(thin), "n_kept": int(lams.size)})


def _sample_cols(R, O, U, tau, prior, rng):
    """Draw ``[v_j, b_j]`` for every column: likelihood precision ``tau_j`` for all of column j's cells."""
    r1 = U.shape[1] + 1
    Yd = np.concatenate([U, np.ones((U.shape[0], 1))], axis=1)  # (m, r+1)
    P = np.einsum("ij,ik,il->jkl", O.astype(float), Yd, Yd) * tau[:, None, None]
    P[:, np.arange(r1), np.arange(r1)] += prior
    rhs = np.einsum("ij,ik->jk", np.where(O, R, 0.0), Yd) * tau[:, None]
    L = np.linalg.cholesky(P)
    y = np.linalg.solve(L, rhs[:, :, None]) + rng.standard_normal((P.shape[0], r1, 1))
    return np.linalg.solve(np.swapaxes(L, 1, 2), y)[:, :, 0]


class FoldIn:
    """Predictions for new models folded into a fitted :class:`LowRankFit` (see :func:`fold_in`).

    Attributes
    ----------
    mean, sd : numpy.ndarray, (n, d)
        Predictive mean and standard deviation in the transformed space, for
        every cell (observed ones too; callers pass those through).
    """

    def __init__(self, pred, cov_w, Xd, noise_var, col_var):
        self._pred, self._cov_w, self._Xd, self._noise, self._col = pred, cov_w, Xd, noise_var, col_var
        S, n, r1 = cov_w.shape[:3]
        self.mean = pred.mean(0)
        # x_j' Cov_n x_j for every (n, j) as one batched product (a 3-operand einsum does not use BLAS).
        XX = (Xd[..., :, None] * Xd[..., None, :]).reshape(S, Xd.shape[1], r1 * r1)
        var = np.matmul(cov_w.reshape(S, n, r1 * r1), np.swapaxes(XX, 1, 2)) + noise_var[:, None, :]
        self.sd = np.sqrt(var.mean(0) + pred.var(0) + col_var)
        self.n_draws = S

    def linear_sd(self, J) -> np.ndarray:
        """Predictive sd of ``sum_j J[n, j] z[n, j]`` per new model (``J`` (n, d)), e.g. an aggregate.

        Uses the full covariance of each model's cells (their shared ``[u, a]``
        makes the errors of one model correlated across datasets), without forming it.
        """
        J = np.asarray(J, dtype=float)
        t = np.einsum("sjk,nj->snk", self._Xd, J)  # X' J per draw
        var = np.einsum("snk,snkl,snl->sn", t, self._cov_w, t) + np.einsum("nj,sj->sn", J * J, self._noise)
        lin = np.einsum("snj,nj->sn", self._pred, J)
        return np.sqrt(var.mean(0) + lin.var(0) + (J * J * self._col).sum(1))


def fold_in(fit: LowRankFit, z_new, level_scale: float = 1.0) -> FoldIn:
    """Predict new models (rows) from whatever cells they have, with the fitted columns held fixed.

    Under each draw (one for ALS), ``[u, a]`` has the Gaussian conditional
    posterior of a Bayesian linear regression on the new row's observed cells
    with design ``[v_j, 1]``; the predictive variance of cell ``j`` is
    ``x_j' Cov x_j + sigma_j^2`` (+ the column's own posterior spread for ALS),
    mixed over draws. The prior of ``[u, a]`` is empirical: the mean and
    covariance of the fitted models' ``[u_i, a_i]`` (under each draw), so a
    model with one observed cell is predicted like a typical model shifted
    along the directions that cell informs. With fewer cells ``Cov`` is larger,
    so intervals widen.

    Parameters
    ----------
    z_new : array-like, (n, d) or (d,)
        Transformed scores of the new models, NaN where not run.
    level_scale : float
        Multiplies the prior sd of the model's offset ``a`` (1: the fitted models' spread). A large
        value leaves a new model's overall level to its own cells, unshrunk toward the population
        (:mod:`~harness_ext.methods.engine.frontier`'s estimator for models beyond the training range).

    Returns
    -------
    FoldIn
    """
    z = np.atleast_2d(np.asarray(z_new, dtype=float))
    S, d, r = fit.V.shape
    if z.shape[1] != d:
        raise MethodError(f"new models have {z.shape[1]} datasets, the fit has {d}")
    O = ~np.isnan(z)
    r1 = r + 1
    Xd = np.concatenate([fit.V, np.ones((S, d, 1))], axis=2)  # (S, d, r+1)
    Rt = np.where(O[None], z[None] - fit.mu - fit.b[:, None, :], 0.0)  # (S, n, d)
    Ow = O[None].astype(float) * fit.weight[:, None, :]  # (S, n, d)
    # Empirical prior: the fitted models' [u_i, a_i] under the same draw. A new model is "one more
    # model like these"; the MAP penalty alone is not a calibrated prior (it makes 1-cell folds too sure).
    Wt = np.concatenate([fit.U, fit.a[:, :, None]], axis=2)  # (S, m, r+1)
    w0 = Wt.mean(1)
    dW = Wt - w0[:, None]
    C = np.einsum("smk,sml->skl", dW, dW) / max(Wt.shape[1] - 1, 1)
    C[:, np.arange(r1), np.arange(r1)] += 1e-6 + 1.0 / fit.prior_prec / max(Wt.shape[1], 1)
    if level_scale != 1.0:  # D C D with D = diag(1, ..., 1, level_scale): the offset's prior widened alone
        g = np.r_[np.ones(r), float(level_scale)]
        C = C * g[None, :, None] * g[None, None, :]
    Cinv = np.linalg.inv(C)  # (S, r+1, r+1)
    n = z.shape[0]
    XX = (Xd[..., :, None] * Xd[..., None, :]).reshape(S, d, r1 * r1)
    P = np.matmul(Ow, XX).reshape(S, n, r1, r1) + Cinv[:, None]
    rhs = np.matmul(Rt * Ow, Xd) + np.einsum("skl,sl->sk", Cinv, w0)[:, None]
    cov_w = np.linalg.inv(P)  # (S, n, r+1, r+1)
    w = np.einsum("snkl,snl->snk", cov_w, rhs)
    pred = np.matmul(w, np.swapaxes(Xd, 1, 2)) + fit.mu + fit.b[:, None, :]  # (S, n, d)
    if fit.col_cov is not None:
        wr = np.concatenate([w[0, :, :r], np.ones((z.shape[0], 1))], axis=1)  # (n, r+1)
        col_var = (wr[:, :, None] * wr[:, None, :]).reshape(n, -1) @ fit.col_cov.reshape(d, -1).T
    else:
        col_var = np.zeros(z.shape)
    return FoldIn(pred, cov_w, Xd, fit.noise_var, col_var)


class RankEnsemble:
    """Fits of several ranks at one penalty, averaged: ``mean()`` as a fit's (the cell completion's ensemble).

    Averaging the completions of several ranks lowers the variance of a completion on small,
    noisy matrices, where the single best rank is itself a noisy choice.

    References
    ----------
    Breiman, "Bagging predictors", Machine Learning 1996 (averaging unstable fits lowers variance).
    """

    def __init__(self, fits):
        self.fits = list(fits)

    def mean(self) -> np.ndarray:
        return np.mean([f.mean() for f in self.fits], axis=0)


def select_rank_lam(Z, ranks: Sequence[int] = DEFAULT_RANKS, lams: Sequence[float] = DEFAULT_LAMS, n_folds: int = 3,
                    random_state: int = 0, lam_bias: float = 0.1, max_iter: int = 60,
                    max_rows: Optional[int] = MAX_CV_ROWS) -> dict:
    """Choose ``(rank, lam)`` by K-fold cross-validation over held-out observed cells.

    Observed cells are split into ``n_folds`` seeded folds; each fold is hidden
    in turn, the model fitted on the rest for every grid point, and the mean
    squared error on the hidden cells (transformed space) recorded. Ranks at or
    above ``min(m, d)`` are dropped. A matrix with more than ``max_rows`` models
    is cross-validated on a seeded sample of that many (Open LLM v2's 4,500
    models choose the same settings as a 1,000-model sample, at a fifth of the cost).

    Returns
    -------
    dict
        ``{"rank", "lam", "cv_mse": {(rank, lam): mse}, "n_folds"}``.
    """
    Z = np.asarray(Z, dtype=float)
    rng = np.random.default_rng(random_state)
    if max_rows is not None and Z.shape[0] > int(max_rows):
        Z = Z[np.sort(rng.choice(Z.shape[0], int(max_rows), replace=False))]
    O = ~np.isnan(Z)
    idx = np.flatnonzero(O.ravel())
    if idx.size < 2 * n_folds:
        return {"rank": 0, "lam": float(lams[0]), "cv_mse": {}, "n_folds": 0}
    fold = rng.permutation(idx.size) % int(n_folds)
    ranks = sorted({int(r) for r in ranks if int(r) < min(Z.shape)}) or [0]
    err = {(r, float(l)): 0.0 for r in ranks for l in lams}
    for f in range(int(n_folds)):
        hide = idx[fold == f]
        Zt = Z.copy().ravel()
        Zt[hide] = np.nan
        Zt = Zt.reshape(Z.shape)
        truth = Z.ravel()[hide]
        for r in ranks:
            for l in lams:
                fit = fit_als(Zt, rank=r, lam=l, lam_bias=lam_bias, max_iter=max_iter, tol=1e-4,
                              random_state=random_state)
                err[(r, float(l))] += float(((fit.mean().ravel()[hide] - truth) ** 2).sum())
    err = {k: v / idx.size for k, v in err.items()}
    best = min(err, key=lambda k: (round(err[k], 12), k[0], -k[1]))
    return {"rank": best[0], "lam": best[1], "cv_mse": err, "n_folds": int(n_folds)}
