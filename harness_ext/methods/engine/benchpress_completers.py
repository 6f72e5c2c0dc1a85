"""The other completers of BenchPress's hybrid risk model: its score transforms, rank-2 imputation and model kNN.

BenchPress's hybrid interval layer (:mod:`harness_ext.methods.engine.benchpress_risk`) reads, for every
missing cell, how much 15 completions of the matrix disagree. Each completion is a *spec*: a score
transform, then per-column z-scores, a completer in the z-space, and the inverse map back to points
(percentages clipped to [0, 100]), as BenchPress's ``make_score_predictor`` wires them:

* transforms (:class:`ScoreTransform`): ``logit``, ``probit``, ``asinh`` (``arcsinh(x / 50)``) and
  ``sqrt`` act on percentage columns only (observed values in [-1, 101]; logit and probit clip to
  [0.5, 99.5] first); ``identity`` and ``quantile`` (average rank / (n + 1) of the observed values,
  inverted by linear interpolation between the column's sorted values) act on every column;
* completers: BenchPress's bias ALS (:func:`harness_ext.methods.engine.benchpress.bias_als`),
  rank-2 iterative SVD imputation (:func:`svd_impute`) and model kNN (:func:`model_knn`, k = 10).

Two differences from the published code, both on degenerate columns: a quantile column with at most one
observed value is left in its units both ways (the published inverse reads the previous column's ranks),
and a column without cells gets mean 0 and spread 1 (the published code gives NaN), as in
:class:`harness_ext.methods.engine.benchpress.Transform`.

References
----------
Zeng & Papailiopoulos, "You Don't Need to Run Every Eval", arXiv 2606.24020 (2026), §4.4 and the released
package (microsoft/benchpress, 2025-2026: ``methods/confidence.py``, ``completers.py``, ``transforms.py``).
Mazumder, Hastie & Tibshirani, "Spectral Regularization Algorithms for Learning Large Incomplete
Matrices", JMLR 11 (2010): Soft-Impute and its rank-truncated variant Hard-Impute (§7), which BenchPress's
``complete_soft_impute`` is.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ...base import limit_threads
from ...errors import MethodError
from . import benchpress as bp

#: Transform name -> whether it acts on percentage columns only.
TRANSFORMS = {"identity": False, "logit": True, "probit": True, "asinh": True, "sqrt": True, "quantile": False}
#: BenchPress's three penalty variants of its own completion (``DEFAULT_HP_VARIANTS``): (transform, completer, params).
HP_VARIANTS = (("logit", "bias_als", (("lam", 0.01),)), ("logit", "bias_als", (("lam", 0.1),)),
               ("logit", "bias_als", (("lam", 1.0),)))
#: BenchPress's twelve "strong" completers (``DEFAULT_STRONG_METHODS``), in its order.
STRONG_METHODS = (("probit", "bias_als", (("lam", 0.1),)), ("quantile", "bias_als", (("lam", 0.1),)),
                  ("identity", "bias_als", (("lam", 0.1),)), ("quantile", "svd_impute", (("rank", 2),)),
                  ("logit", "svd_impute", (("rank", 2),)), ("probit", "svd_impute", (("rank", 2),)),
                  ("asinh", "bias_als", (("lam", 0.1),)), ("sqrt", "bias_als", (("lam", 0.1),)),
                  ("identity", "svd_impute", (("rank", 2),)), ("logit", "model_knn", (("k", 10),)),
                  ("probit", "model_knn", (("k", 10),)), ("identity", "model_knn", (("k", 10),)))
#: asinh's scale, in points; the imputation's iteration cap and relative-change tolerance.
ASINH_SCALE, SVD_MAX_ITER, SVD_TOL = 50.0, 100, 1e-4


@dataclass
class ScoreTransform:
    """One of BenchPress's score transforms followed by per-column z-scores (``apply_transform``)."""

    name: str
    is_pct: np.ndarray
    applied: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    sorted_: Optional[np.ndarray] = None
    n_obs: Optional[np.ndarray] = None

    @classmethod
    def fit(cls, P, name: str) -> "ScoreTransform":
        """Fit on ``P`` (points, NaN unobserved): which columns are percentages, and the z-score statistics."""
        if name not in TRANSFORMS:
            raise MethodError(f"unknown BenchPress transform {name!r}; expected one of {', '.join(TRANSFORMS)}")
        P = np.asarray(P, dtype=float)
        obs = ~np.isnan(P)
        lo = np.where(obs, P, np.inf).min(0)
        hi = np.where(obs, P, -np.inf).max(0)
        is_pct = obs.any(0) & (lo >= bp.PCT_RANGE[0]) & (hi <= bp.PCT_RANGE[1])
        n_obs = obs.sum(0)
        applied = is_pct if TRANSFORMS[name] else np.ones(P.shape[1], dtype=bool)
        if name == "quantile":
            applied = applied & (n_obs > 1)  # one value has no ranks: left in its units both ways
        tr = cls(name, is_pct, applied, np.zeros(P.shape[1]), np.ones(P.shape[1]),
                 np.sort(P, axis=0) if name == "quantile" else None, n_obs)
        tr.mean, tr.std = bp.zscore_stats(tr._forward(P), obs)
        return tr

    def transform(self, P) -> np.ndarray:
        """Points -> z-scores (NaN stays NaN)."""
        return (self._forward(np.asarray(P, dtype=float)) - self.mean) / self.std

    def inverse(self, Z) -> np.ndarray:
        """z-scores -> points; percentage columns clipped to [0, 100]."""
        T = np.asarray(Z, dtype=float) * self.std + self.mean
        with np.errstate(over="ignore", invalid="ignore"):
            out = np.where(self.applied, self._backward(T), T)
        return np.where(self.is_pct, np.clip(out, 0.0, 100.0), out)

    def _forward(self, P):
        with np.errstate(invalid="ignore"):
            return np.where(self.applied, _FORWARD[self.name](P) if self.name != "quantile" else _ranks(P), P)

    def _backward(self, T):
        if self.name == "quantile":
            return _unrank(T, self.sorted_, self.n_obs)
        return _BACKWARD[self.name](T)


def _probit(P):
    from scipy.special import ndtri

    return ndtri(np.clip(P, bp.LOGIT_EPS, 100.0 - bp.LOGIT_EPS) / 100.0)


def _unprobit(T):
    from scipy.special import ndtr

    return ndtr(T) * 100.0


_FORWARD = {"identity": lambda P: P, "logit": lambda P: bp._feature(P, True), "probit": _probit,
            "asinh": lambda P: np.arcsinh(P / ASINH_SCALE), "sqrt": lambda P: np.sqrt(np.maximum(P, 0.0))}
_BACKWARD = {"identity": lambda T: T, "logit": lambda T: 100.0 / (1.0 + np.exp(-T)), "probit": _unprobit,
             "asinh": lambda T: np.sinh(T) * ASINH_SCALE, "sqrt": lambda T: T ** 2}


def _ranks(P):
    """Average rank of each observed value within its column over ``n + 1`` (NaN stays NaN)."""
    from scipy.stats import rankdata

    n = (~np.isnan(P)).sum(0)
    return rankdata(P, axis=0, nan_policy="omit") / (n + 1)


def _unrank(T, S, n):
    """Linear interpolation of quantile ``T`` between each column's sorted observed values ``S`` (NaN last)."""
    nn = np.maximum(n, 1)
    idx = np.clip(T * (nn + 1) - 1.0, 0.0, nn - 1.0)
    finite = np.isfinite(idx)
    idx = np.where(finite, idx, 0.0)
    lo = np.floor(idx).astype(int)
    hi = np.minimum(lo + 1, nn - 1)
    frac = idx - lo
    cols = np.broadcast_to(np.arange(S.shape[1]), idx.shape)
    out = S[lo, cols] * (1.0 - frac) + S[hi, cols] * frac
    return np.where(finite, out, np.nan)


# ----------------------------------------------------------------------------- completers in the z-space
def svd_impute(Z, rank: int = 2, max_iter: int = SVD_MAX_ITER, tol: float = SVD_TOL) -> np.ndarray:
    """Iterative rank-``rank`` SVD imputation of z-scored matrices (BenchPress's ``complete_soft_impute``).

    Missing cells start at their column's mean (0 for a column without
    cells); each sweep replaces them by the best rank-``rank`` approximation
    of the filled matrix, until the filled matrix changes by less than
    ``tol`` relative (root mean square) or ``max_iter`` sweeps. Each matrix
    of a batch stops on its own.

    Parameters
    ----------
    Z : array-like, (B, m, d)
        z-scores, NaN where unobserved.

    Returns
    -------
    numpy.ndarray
        ``(B, m, d)``: observed cells as given, missing cells imputed.

    References
    ----------
    Mazumder, Hastie & Tibshirani (2010), §7 (Hard-Impute: rank truncation instead of soft thresholding).
    """
    Z = np.asarray(Z, dtype=float)
    obs = ~np.isnan(Z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cm = np.nan_to_num(np.nanmean(Z, axis=1, keepdims=True), nan=0.0)
    M = np.where(obs, Z, np.broadcast_to(cm, Z.shape))
    active = np.arange(Z.shape[0])
    for _ in range(int(max_iter)):
        if active.size == 0:
            break
        old = M[active]
        U, s, Vt = np.linalg.svd(old, full_matrices=False)
        approx = (U[..., :rank] * s[:, None, :rank]) @ Vt[:, :rank]
        new = np.where(obs[active], Z[active], approx)
        M[active] = new
        diff = np.sqrt(((new - old) ** 2).mean((1, 2)))
        rel = diff / (np.sqrt((old ** 2).mean((1, 2))) + 1e-12)
        active = active[rel >= tol]
    return M


def model_knn(Z, k: int = 10, block: int = 512) -> np.ndarray:
    """Model kNN completion of z-scored matrices (BenchPress's ``complete_model_knn``).

    A missing cell ``(i, j)`` is the mean of column ``j`` over those of
    model ``i``'s ``k`` nearest models that have it (distance: root mean
    square difference over at least 3 shared columns; ties to the lower
    index); with none, the column's mean.

    Parameters
    ----------
    Z : array-like, (B, m, d)
        z-scores, NaN where unobserved.
    block : int
        Rows whose distances are held at once (memory: ``block x m``).

    Returns
    -------
    numpy.ndarray
        ``(B, m, d)``: observed cells as given, missing cells predicted (NaN in a column without cells).
    """
    Z = np.asarray(Z, dtype=float)
    out = Z.copy()
    for b in range(Z.shape[0]):
        O = ~np.isnan(Z[b])
        Of = O.astype(float)
        Zf = np.where(O, Z[b], 0.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            col_mean = np.nanmean(Z[b], axis=0)
        for s in range(0, Z.shape[1], block):
            sl = slice(s, min(Z.shape[1], s + block))
            out[b, sl] = np.where(O[sl], Z[b, sl], _knn_rows(Zf, Of, sl, int(k), col_mean))
    return out


def _knn_rows(Zf, Of, sl, k, col_mean):
    """Predictions of rows ``sl`` from their ``k`` nearest rows (the distances as BenchPress computes them)."""
    rows = np.arange(sl.stop - sl.start)
    N = Of[sl] @ Of.T
    Z2 = Zf * Zf
    ssd = Z2[sl] @ Of.T + Of[sl] @ Z2.T - 2.0 * (Zf[sl] @ Zf.T)
    dist = np.where(N >= 3, np.sqrt(np.maximum(ssd, 0.0) / np.maximum(N, 1.0)), np.inf)
    dist[rows, rows + sl.start] = np.inf
    near = np.argsort(dist, axis=1, kind="stable")[:, :k]
    W = np.zeros_like(dist)
    W[rows[:, None], near] = np.isfinite(np.take_along_axis(dist, near, axis=1))
    cnt = W @ Of
    return np.where(cnt > 0, (W @ Zf) / np.maximum(cnt, 1.0), col_mean)


# ----------------------------------------------------------------------------- specs
def spec_predictions(P, specs, **als) -> np.ndarray:
    """Every spec's completion of every matrix of ``P``: ``(len(specs), B, m, d)`` in points.

    Parameters
    ----------
    P : array-like, (B, m, d)
        Points, NaN where unobserved (the training matrices of a batch of folds).
    specs : sequence of (transform, completer, params)
        As :data:`HP_VARIANTS`; a bias ALS spec's ``lam`` (and ``rank``) are the spec's, the other ALS
        settings (``n_iter``, ``n_ensemble``, ``base_seed``) come from ``als``.

    Returns
    -------
    numpy.ndarray
        Each spec's prediction of every cell (observed cells as given); a spec named twice is fitted once.
    """
    P = np.asarray(P, dtype=float)
    # one BLAS thread: small SVDs and solves ran 30 times slower with several on a busy 2-core machine
    with limit_threads():
        done = _fit_specs(P, specs, {k: v for k, v in als.items() if k not in ("rank", "lam")})
    return np.stack([done[(n, c, tuple(p))] for n, c, p in specs])


def _fit_specs(P, specs, base):
    trans, done = {}, {}
    for name, completer, params in specs:
        key = (name, completer, tuple(params))
        if key in done:
            continue
        if name not in trans:
            fits = [ScoreTransform.fit(p, name) for p in P]
            trans[name] = (fits, np.stack([t.transform(p) for t, p in zip(fits, P)]))
        fits, Z = trans[name]
        Zhat = _complete_z(Z, completer, dict(params), base)
        done[key] = np.where(np.isnan(P), np.stack([t.inverse(z) for t, z in zip(fits, Zhat)]), P)
    return done


def _complete_z(Z, completer, params, base):
    if completer == "bias_als":
        return bp.bias_als(Z, rank=int(params.get("rank", bp.RANK)), lam=float(params["lam"]), **base)
    if completer == "svd_impute":
        return svd_impute(Z, rank=int(params.get("rank", 2)))
    if completer == "model_knn":
        return model_knn(Z, k=int(params.get("k", 10)))
    raise MethodError(f"unknown BenchPress completer {completer!r}")
