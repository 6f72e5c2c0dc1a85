"""Direct ridge regression of every missing cell of a row from the cells the row has, scored from Gram matrices.

The low-rank completer blends its fold-in with a direct regression: for a row
observed on the columns ``P``, every other column ``j`` is regressed (ridge,
intercept unpenalised) on ``P`` over a completed training matrix ``Zc``
(m, d), the penalty chosen per target from :data:`RIDGE_ALPHAS`. A reduce
folds in tens of thousands of distinct observed-cell patterns (rows x folds x
candidate subsets), so the cost per pattern must not grow with ``m``.

* Up to :data:`EXACT_LOO_ROWS` training rows the penalty is chosen by exact
  leave-one-out (one SVD of each pattern's m x k design, batched over patterns;
  ``O(m k c)`` per penalty), which is cheap there and where the rows'
  leverages are uneven (``k`` not small against ``m``) differs most from GCV.
  For up to :data:`LOO_EXPANDED_MAX_RANK` predictors the errors of all
  penalties come from three batched products over the rows (the weighted
  square expanded around the residual of the projection, in cache-sized chunks
  of patterns); targets whose best two penalties come within rounding of each
  other are scored again residual by residual, so the picks are the same.
* Above, by generalised cross-validation computed from the centred
  cross-product matrix ``G = Zc_c' Zc_c`` alone, formed once per training
  matrix (:func:`ridge_design`). Per pattern, the ``k x k`` block ``G_PP`` is
  eigendecomposed once (``G_PP = V diag(s^2) V'``, ``B = V' G_P,C`` for the
  targets ``C``), and for every penalty the residual sum of squares is
  ``||r_j||^2 = G_jj - sum_l (1 + g_l) B_lj^2 / (s_l^2 + alpha)``,
  ``g_l = alpha / (s_l^2 + alpha)``, and the effective degrees of freedom
  ``1 + sum_l s_l^2 / (s_l^2 + alpha)``, so the GCV error
  ``||r_j||^2 / m / (1 - df / m)^2`` costs ``O(k |C|)`` per penalty. Patterns
  missing few cells use the eigendecomposition of the whole ``G`` instead
  (:func:`_complement_coefs`). GCV differs from leave-one-out only through the
  spread of the rows' leverages, small when ``m`` is large against ``k``.

Patterns with the same number of cells are batched.

References
----------
Golub, Heath & Wahba, *Technometrics* 21 (1979), eq. 1.4 (GCV); Hastie,
Tibshirani & Friedman, *Elements of Statistical Learning* (2009), eqs. 3.47
and 7.52 (ridge by the SVD; GCV).
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

__all__ = ["RIDGE_ALPHAS", "EXACT_LOO_ROWS", "CELL_FLOPS_BUDGET", "RidgeDesign", "ridge_design", "ridge_coefs",
           "direct_ridge_predict", "direct_predict", "cell_regression_flops", "BLEND_GRID"]

#: Weights of the direct regression tried next to the low-rank fold-in (0: fold-in only).
BLEND_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)

#: Penalties searched (per target, by GCV) by the direct regression.
RIDGE_ALPHAS = np.logspace(-3, 3, 13)
#: Training rows up to which penalties are chosen by exact leave-one-out (O(m k c) per pattern and penalty: cheap
#: there, and where ``k`` is not small against ``m`` the rows' leverages differ most from GCV's common one).
EXACT_LOO_ROWS = 300
#: Floats per batched work array (patterns x cells x targets): bounds memory, keeps the products in cache.
BATCH_FLOATS = 1 << 21
#: Rough flops above which one regression of every row's missing cells from its own observed ones (the cell blend's
#: unit of work, run once per fold and once on the whole matrix) is not attempted: about a minute of one core.
#: Every row is its own pattern there and a pattern costs ``O(k^3)`` in its ``k`` observed cells, so wide matrices
#: (thousands of datasets) cross it and narrow ones (hundreds) stay far below.
CELL_FLOPS_BUDGET = 1e11
#: Gap between a target's two lowest leave-one-out errors, relative to the size of the terms they are summed from,
#: below which the pattern is scored again residual by residual: above the worst rounding of either sum over at most
#: :data:`EXACT_LOO_ROWS` rows (about 1e-13; measured 3e-15), so near-ties pick what the residual-by-residual sum picks.
LOO_TIE_RTOL = 1e-11
#: Most predictors (rank of the design) at which the leave-one-out errors are formed from the expanded square (in
#: chunks of :data:`LOO_CHUNK_FLOATS`: measured 1.2-1.9x faster than the residual sums up to 20 predictors on
#: CrossPred's and benchbench's patterns, about even from 20 to 30, slower above).
LOO_EXPANDED_MAX_RANK = 24
#: Floats of the expanded square's largest work array (patterns x penalties x predictors x rows) per chunk of
#: patterns: about 2 MB, within a core's cache.
LOO_CHUNK_FLOATS = 1 << 18


class RidgeDesign(NamedTuple):
    """What every pattern's regression needs from the completed training matrix ``Zc``."""

    mean: np.ndarray  # (d,) column means
    gram: np.ndarray  # (d, d) centred cross-products
    m: int  # training rows
    eig: dict  # filled on first use: eigendecomposition of ``gram`` (the complement path)
    centred: Optional[np.ndarray]  # (m, d) centred ``Zc`` when m <= EXACT_LOO_ROWS (exact leave-one-out), else None


def ridge_design(Zc: np.ndarray) -> RidgeDesign:
    """Column means and centred Gram matrix of a complete training matrix (one ``m d^2`` product)."""
    Zc = np.asarray(Zc, dtype=float)
    mu = Zc.mean(0)
    Yc = Zc - mu
    return RidgeDesign(mu, Yc.T @ Yc, int(Zc.shape[0]), {}, Yc if Zc.shape[0] <= EXACT_LOO_ROWS else None)


def _gcv_pick(rss, df, m):
    """Per pattern and target, the index of the penalty with the lowest GCV error (the first of equal ones).

    ``rss`` is (p, penalties, c), ``df`` (p, penalties); the common factor ``1/m`` is left out.
    """
    err = np.clip(rss, 0.0, None) / np.maximum(1.0 - df / m, 1e-6)[:, :, None] ** 2
    return np.argmin(err, axis=1)


def ridge_coefs(design: RidgeDesign, P: np.ndarray, C: np.ndarray, alphas=RIDGE_ALPHAS) -> np.ndarray:
    """Ridge coefficients of targets ``C`` on predictors ``P``, penalty per target by LOO or GCV, for many patterns.

    Designs of at most :data:`EXACT_LOO_ROWS` rows choose each penalty by exact
    leave-one-out (:func:`_exact_loo_coefs`); larger ones by GCV from the Gram
    matrix alone (:func:`_eigen_coefs`, :func:`_complement_coefs`).

    Parameters
    ----------
    design : RidgeDesign
    P : int array (p, k)
        Predictor columns of each of ``p`` patterns (``k >= 1``).
    C : int array (p, c)
        Target columns of each pattern: every column outside ``P`` (the complement
        path, taken when ``c < k``, relies on it).

    Returns
    -------
    numpy.ndarray, (p, k, c)
        Coefficients on the centred predictors (the intercept is the target's mean).

    References
    ----------
    Golub, Heath & Wahba (1979), eq. 1.4; Hastie, Tibshirani & Friedman (2009), eq. 7.52.
    """
    alphas = np.asarray(alphas, dtype=float)
    if design.centred is not None:
        return _exact_loo_coefs(design, P, C, alphas)
    k, c, d = P.shape[1], C.shape[1], design.gram.shape[0]
    return (_complement_coefs if _complement_cheaper(k, c, d, alphas.size) else _eigen_coefs)(design, P, C, alphas)


def loo_residuals(U, s2, yc, alphas, floor: float = 1e-6) -> np.ndarray:
    """Exact leave-one-out residuals ``(len(alphas), m)`` of ridge (or kernel ridge) with an unpenalised intercept.

    Parameters
    ----------
    U : numpy.ndarray (m, r)
        Left singular vectors of the centred design (or eigenvectors of the centred kernel).
    s2 : numpy.ndarray (r,)
        The matching squared singular values (kernel eigenvalues), non-negative.
    yc : numpy.ndarray (m,)
        The centred response.
    alphas : sequence of float
        Penalties.
    floor : float
        Smallest ``1 - H_ii`` divided by (a row the fit interpolates).

    Returns
    -------
    numpy.ndarray
        ``(y_i - yhat_i) / (1 - H_ii)`` for each penalty, ``H = 11'/m + U diag(s2 / (s2 + alpha)) U'``: one
        decomposition serves every penalty. :func:`_exact_loo_coefs` is the same formula batched over patterns.

    References
    ----------
    Hastie, Tibshirani & Friedman (2009), eq. 7.52.
    """
    m = len(yc)
    Uy, U2 = U.T @ yc, U * U
    out = np.empty((len(alphas), m))
    for i, a in enumerate(alphas):
        f = s2 / (s2 + a)
        out[i] = (yc - U @ (f * Uy)) / np.maximum(1.0 - (U2 @ f + 1.0 / m), floor)
    return out


def _exact_loo_coefs(design: RidgeDesign, P, C, alphas):
    """:func:`ridge_coefs` by exact leave-one-out over the ``m`` rows: residuals ``(y - yhat) / (1 - h_ii)`` from one
    SVD of each pattern's centred design (as sklearn's ``RidgeCV(alpha_per_target=True)``), batched over patterns."""
    Yc, m = design.centred, design.m
    U, sv, Vt = np.linalg.svd(Yc[:, P].transpose(1, 0, 2), full_matrices=False)  # (p, m, k), (p, k), (p, k, k)
    Y = Yc[:, C].transpose(1, 0, 2)  # (p, m, c)
    UtY = U.transpose(0, 2, 1) @ Y
    s2 = sv * sv
    pick = _loo_picks(U, s2, Y, UtY, alphas, m)
    return Vt.transpose(0, 2, 1) @ ((sv[:, :, None] / (s2[:, :, None] + alphas[pick][:, None, :])) * UtY)


def _loo_picks(U, s2, Y, UtY, alphas, m):
    """Per pattern and target, the index of the penalty with the lowest leave-one-out error (the first of equal ones).

    The errors of every penalty come from a few batched products (:func:`_loo_errors_expanded`) unless the
    pattern has more than :data:`LOO_EXPANDED_MAX_RANK` predictors or more than twice the root of its targets
    (those products then cost more than the residuals); a pattern where a
    target's two lowest errors lie within their rounding of each other (:data:`LOO_TIE_RTOL`), or an error is not
    finite, is scored again residual by residual (:func:`_loo_picks_direct`), so near-ties are broken as that
    summation order breaks them.
    """
    # Per penalty the expanded errors take about (r c + r^2 + c) m multiply-adds in products, the residuals r c m
    # in products and 5 c m in passes over memory: measured (m = 97-230, c = 47-177), the expanded ones are 2-3.5x
    # faster for r <= 4; in chunks that stay in cache 1.2-1.9x faster up to r = 20 and even to about r = 30.
    if alphas.size < 2 or U.shape[2] > LOO_EXPANDED_MAX_RANK or U.shape[2] ** 2 >= 4 * Y.shape[2]:
        return _loo_picks_direct(U, s2, Y, UtY, alphas, m)
    err, scale = _loo_errors_chunked(U, s2, Y, UtY, alphas, m)
    pick = np.argmin(err, axis=1)
    low = np.partition(err, 1, axis=1)
    unsure = ~(low[:, 1] - low[:, 0] > LOO_TIE_RTOL * scale.max(1)) | ~np.isfinite(err).all(1)  # (p, c)
    redo = np.flatnonzero(unsure.any(1))
    if redo.size:
        pick[redo] = _loo_picks_direct(U[redo], s2[redo], Y[redo], UtY[redo], alphas, m)
    return pick


def _loo_errors_chunked(U, s2, Y, UtY, alphas, m):
    """:func:`_loo_errors_expanded` over chunks of patterns whose (patterns, penalties, r, m) products stay within
    :data:`LOO_CHUNK_FLOATS` (a larger work array leaves the cache: 47 patterns of 18 predictors took 1.6x longer)."""
    p, m_rows, r = U.shape
    step = max(1, LOO_CHUNK_FLOATS // (alphas.size * r * m_rows))
    if step >= p:
        return _loo_errors_expanded(U, s2, Y, UtY, alphas, m)
    parts = [_loo_errors_expanded(U[a:a + step], s2[a:a + step], Y[a:a + step], UtY[a:a + step], alphas, m)
             for a in range(0, p, step)]
    return np.concatenate([e for e, _ in parts]), np.concatenate([sc for _, sc in parts])


def _loo_errors_expanded(U, s2, Y, UtY, alphas, m):
    """Leave-one-out mean squared errors ``(p, penalties, c)`` of every penalty, and a bound of their terms' size.

    With ``B = U'Y``, ``Y_perp = Y - U B`` and ``g = alpha / (s^2 + alpha)`` the residual is
    ``Y_perp + U (g B)``, and with the rows' weights ``w_i = 1 / (1 - h_ii)^2`` its weighted sum of squares is
    ``sum_i w_i Y_perp^2 + 2 sum_l g_l B_l (sum_i w_i U_il Y_perp) + (gB)' (sum_i w_i U_i U_i') (gB)``: three
    batched products over the rows for all penalties at once, instead of a residual matrix per penalty. The first
    and last terms are non-negative; with the diagonal of the last they bound every term (Cauchy-Schwarz), and that
    bound is returned as the size against which the rounding of the expanded square is judged.
    """
    p, _, r = U.shape
    n_a, c = alphas.size, Y.shape[2]
    Ut = np.ascontiguousarray(U.transpose(0, 2, 1))  # (p, r, m)
    den = s2[:, None, :] + alphas[None, :, None]  # (p, penalties, r)
    h = (s2[:, None, :] / den) @ (Ut * Ut) + 1.0 / m  # (p, penalties, m)
    wt = 1.0 / (1.0 - np.minimum(h, 1.0 - 1e-6))
    wt *= wt
    R = np.matmul(U, UtY)
    np.subtract(Y, R, out=R)  # Y_perp
    t1 = wt @ (R * R)
    g = alphas[None, :, None] / den  # (p, penalties, r)
    WU = np.empty((p, n_a, r, Ut.shape[2]))  # g_l w_i U_il, in C order so the reshapes below are views
    np.multiply(g[:, :, :, None], Ut[:, None, :, :], out=WU)
    WU *= wt[:, :, None, :]
    TG = (WU.reshape(p, n_a * r, -1) @ R).reshape(p, n_a, r, c)  # g_l sum_i w_i U_il Y_perp,i
    K = (WU.reshape(p, n_a * r, -1) @ U).reshape(p, n_a, r, r) * g[:, :, None, :]  # g_l g_l' sum_i w_i U_il U_il'
    KB = (K.reshape(p, n_a * r, r) @ UtY).reshape(p, n_a, r, c)
    t2 = 2.0 * np.einsum("parc,prc->pac", TG, UtY)
    t3 = np.einsum("parc,prc->pac", KB, UtY)
    # |t2| <= 2 sqrt(t1 r d) and t3 <= r d, d = sum_l K_ll B_l^2 >= 0: the size every term is rounded against.
    diag = np.diagonal(K, axis1=2, axis2=3) @ (UtY * UtY)
    return (t1 + t2 + t3) / m, (t1 + r * diag) / m


def _loo_picks_direct(U, s2, Y, UtY, alphas, m):
    """:func:`_loo_picks` from each penalty's residual matrix, summed over the rows one penalty at a time."""
    U2 = U * U
    best = np.full(UtY.shape[::2], np.inf)  # (p, c)
    pick = np.zeros(best.shape, dtype=np.intp)
    R = np.empty_like(Y)
    for i, a in enumerate(alphas):
        f = s2 / (s2 + a)
        inv = 1.0 / (1.0 - np.minimum(U2 @ f[:, :, None] + 1.0 / m, 1.0 - 1e-6))  # (p, m, 1): 1 / (1 - h)
        # In place, and the squares summed over the rows by einsum: the chain of temporaries it replaces, with
        # a mean over the middle axis, took 5x longer on sparse rows' patterns (35 x 257 x 75: 4.1 -> 0.8 ms).
        np.matmul(U, f[:, :, None] * UtY, out=R)
        np.subtract(Y, R, out=R)
        R *= inv
        err = np.einsum("pmc,pmc->pc", R, R) / m
        better = err < best
        best = np.where(better, err, best)
        pick[better] = i
    return pick


def _complement_cheaper(k: int, c: int, d: int, n_alphas: int) -> bool:
    """Whether :func:`_complement_coefs` takes fewer flops than :func:`_eigen_coefs` for one pattern (rough counts)."""
    return c < k and 4 * n_alphas * c * c * d + 6 * d * d * c < 10 * k ** 3


def _eigen_coefs(design: RidgeDesign, P, C, alphas):
    """:func:`ridge_coefs` from the eigendecomposition of each pattern's ``G_PP`` (see the module docstring)."""
    G, m = design.gram, design.m
    s2, V = np.linalg.eigh(G[P[:, :, None], P[:, None, :]])
    s2 = np.clip(s2, 0.0, None)[:, None, :]  # (p, 1, k)
    B = V.transpose(0, 2, 1) @ G[P[:, :, None], C[:, None, :]]  # (p, k, c)
    gjj = np.diagonal(G)[C][:, None, :]  # (p, 1, c)
    inv = 1.0 / (s2 + alphas[None, :, None])  # (p, penalties, k)
    rss = gjj - ((1.0 + alphas[None, :, None] * inv) * inv) @ (B * B)  # (p, penalties, c): O(p k c) per penalty
    pick = _gcv_pick(rss, 1.0 + (s2 * inv).sum(2), m)
    return V @ (B / (s2.transpose(0, 2, 1) + alphas[pick][:, None, :]))


def _complement_coefs(design: RidgeDesign, P, C, alphas):
    """:func:`ridge_coefs` for patterns missing few cells, from ``N = (G + alpha I)^-1`` on the complement ``C``.

    With ``M = G + alpha I`` and ``N = M^-1`` (one eigendecomposition
    ``G = W diag(lam) W'`` per design), block inversion gives
    ``M_PP^-1 M_PC = -N_PC N_CC^-1``, so the coefficients are ``-N_PC N_CC^-1``
    (``M_PC = G_PC``); with ``Q = N_CC^-1`` and ``N2 = (N^2)_CC`` the residual
    sums of squares are ``diag(Q) - alpha diag(Q N2 Q)`` and
    ``tr(M_PP^-1) = tr(N) - tr(Q N2)``. ``N_CC`` and ``N2`` for every penalty
    come from one product of the eigenvectors' outer products at ``C`` with
    ``1 / (lam + alpha)``: ``O(c^2 d)`` per pattern and penalty instead of an
    eigendecomposition of ``G_PP``.
    """
    if "W" not in design.eig:
        lam, W = np.linalg.eigh(design.gram)
        design.eig.update(lam=np.clip(lam, 0.0, None), W=W)
    lam, W, m = design.eig["lam"], design.eig["W"], design.m
    p, k = P.shape
    c, d = C.shape[1], W.shape[0]
    WC = W[C]  # (p, c, d): rows of the eigenvectors at the targets
    Dm = 1.0 / (lam[:, None] + alphas[None, :])  # (d, penalties)
    outer = (WC[:, :, None, :] * WC[:, None, :, :]).reshape(-1, d)
    Q = np.linalg.inv((outer @ Dm).reshape(p, c, c, -1).transpose(0, 3, 1, 2))  # (p, penalties, c, c)
    QN2 = Q @ (outer @ (Dm * Dm)).reshape(p, c, c, -1).transpose(0, 3, 1, 2)
    rss = np.diagonal(Q, axis1=2, axis2=3) - alphas[None, :, None] * (QN2 * Q.transpose(0, 1, 3, 2)).sum(3)
    df = 1.0 + k - alphas[None, :] * (Dm.sum(0)[None, :] - np.trace(QN2, axis1=2, axis2=3))
    pick = _gcv_pick(rss, df, m)  # (p, c)
    coef = np.zeros((p, k, c))
    rows = np.arange(p)[:, None]
    for i in np.unique(pick):
        NC = ((W * Dm[:, i]) @ WC.reshape(-1, d).T).reshape(d, p, c).transpose(1, 0, 2)  # (p, d, c): columns C of N
        coef = np.where((pick == i)[:, None, :], -NC[rows, P] @ Q[:, i], coef)
    return coef


def _floats_per_pattern(k: int, c: int, d: int, m: int) -> int:
    """Work-array floats one pattern takes in :func:`ridge_coefs` (its path for ``m`` rows)."""
    if m <= EXACT_LOO_ROWS:
        return m * (2 * k + 3 * c)
    if _complement_cheaper(k, c, d, RIDGE_ALPHAS.size):
        return c * c * (d + 2 * RIDGE_ALPHAS.size) + c * (d + k)
    return k * (k + c) + RIDGE_ALPHAS.size * (k + c)


def _flops(k: int, c: int, d: int, n_alphas: int) -> int:
    """Rough flops of one pattern in :func:`ridge_coefs` (the cheaper of its two paths)."""
    eigen = 10 * k ** 3 + 2 * k * k * c + 2 * n_alphas * k * c
    return min(eigen, 4 * n_alphas * c * c * d + 6 * d * d * c) if c < k else eigen


def cell_regression_flops(O: np.ndarray, hidden: float = 0.0) -> float:
    """Rough flops of :func:`direct_ridge_predict` on every row of a matrix observed at ``O`` (each row its own
    pattern, the upper bound), with a further fraction ``hidden`` of each row's cells held out (a CV fold)."""
    O = np.asarray(O, dtype=bool)
    m, d = O.shape
    k = np.floor(O.sum(1) * (1.0 - hidden)).astype(np.int64)
    k = k[(k > 0) & (k < d)]
    if m <= EXACT_LOO_ROWS:  # one SVD of the m x k design plus O(m min(m, k) c) per penalty
        r = np.minimum(k, m)
        return float((4 * m * k * r + 2 * RIDGE_ALPHAS.size * m * r * (d - k)).sum())
    ks, n = np.unique(k, return_counts=True)
    return float(sum(c * _flops(int(a), d - int(a), d, RIDGE_ALPHAS.size) for a, c in zip(ks, n)))


def _unique_rows(B: np.ndarray):
    """``(first, inverse)`` of the distinct rows of a boolean matrix (rows packed to bytes: fast)."""
    packed = np.ascontiguousarray(np.packbits(B, axis=1))
    _, first, inverse = np.unique(packed.view(np.dtype((np.void, packed.shape[1]))).ravel(),
                                  return_index=True, return_inverse=True)
    return first, np.asarray(inverse).reshape(-1)


def _scatter(out, z_new, mean, rows, pid, P, T, coef):
    """``out[row, T] = (z[row, P] - mean[P]) @ coef + mean[T]`` for each row's pattern ``pid`` (chunked)."""
    k, c = P.shape[1], T.shape[1]
    chunk = max(1, BATCH_FLOATS // max(k * c, 1))
    for r in range(0, rows.size, chunk):  # bounds the (rows, k, c) gathered coefficients
        rr, pp = rows[r:r + chunk], pid[r:r + chunk]
        X = z_new[rr[:, None], P[pp]] - mean[P[pp]]
        out[rr[:, None], T[pp]] = (X[:, None, :] @ coef[pp])[:, 0] + mean[T[pp]]


def direct_ridge_predict(design: RidgeDesign, z_new: np.ndarray, alphas=RIDGE_ALPHAS) -> np.ndarray:
    """Each row of ``z_new`` (NaN where missing): its missing cells regressed on its observed ones.

    Rows sharing a pattern of observed cells share one regression; patterns with
    the same number of cells are solved together, in batches of about
    :data:`BATCH_FLOATS`. Observed cells are returned as given; a row with no
    observed cell gets the column means.
    """
    z_new = np.atleast_2d(np.asarray(z_new, dtype=float))
    O = ~np.isnan(z_new)
    alphas = np.asarray(alphas, dtype=float)
    out = np.where(O, z_new, design.mean)
    rows = np.flatnonzero(O.any(1) & ~O.all(1))
    if rows.size:
        _by_patterns(design, z_new, O, rows, alphas, out)
    return out


def _by_patterns(design, z_new, O, rows_in, alphas, out):
    """:func:`direct_ridge_predict` for the rows ``rows_in``: one regression per pattern, batched by size."""
    d = O.shape[1]
    first, inverse = _unique_rows(O[rows_in])
    distinct = O[rows_in[first]]
    # Patterns relabelled in order of their number of cells, so each size's patterns and rows are contiguous.
    by_size = np.argsort(distinct.sum(1), kind="stable")
    patterns = distinct[by_size]
    label = np.empty_like(by_size)
    label[by_size] = np.arange(len(by_size))
    inverse = label[inverse]
    sizes = patterns.sum(1)
    order = rows_in[np.argsort(inverse, kind="stable")]  # rows grouped by pattern
    starts = np.searchsorted(np.sort(inverse, kind="stable"), np.arange(len(patterns) + 1))
    cols = np.arange(d)
    for k in np.unique(sizes):
        c = d - k
        group = np.flatnonzero(sizes == k)
        step = max(1, BATCH_FLOATS // _floats_per_pattern(k, c, d, design.m))
        for a in range(group[0], group[-1] + 1, step):
            g = np.arange(a, min(a + step, group[-1] + 1))
            pat = patterns[g]
            P = np.broadcast_to(cols, pat.shape)[pat].reshape(len(g), k)
            C = np.broadcast_to(cols, pat.shape)[~pat].reshape(len(g), c)
            pid = np.repeat(np.arange(len(g)), starts[g + 1] - starts[g])
            _scatter(out, z_new, design.mean, order[starts[g[0]]:starts[g[-1] + 1]], pid, P, C,
                     ridge_coefs(design, P, C, alphas))


def direct_predict(fit, Z_train, z_new, design=None) -> np.ndarray:
    """Direct regression of each new row's missing cells (transformed space) from the cells it has.

    The training matrix is completed by the low-rank fit (its observed cells kept)
    and summarised once (:func:`ridge_design`); every distinct pattern of observed
    cells then gets its ridge regression with penalties by leave-one-out or GCV
    (:func:`direct_ridge_predict`). ``design`` may be passed when the caller has it.
    Observed cells are returned as given. The low-rank completer, its cell
    cross-validation, its new-model calibration and the frontier all blend with it.
    """
    if design is None:
        design = ridge_design(np.where(np.isnan(Z_train), fit.mean(), Z_train))
    return direct_ridge_predict(design, z_new)
