"""A completer of a different kind: each dataset regressed by ridge on every other dataset of a low-rank completion.

The low-rank completers (the engine's ALS, BenchPress's logit bias ALS) explain every cell by a few shared
factors; their errors are alike where the matrix is not low-rank. This completer keeps the low-rank model only
as the filling of the predictors: the matrix is mapped to BenchPress's scale (per-column logit for percentages,
then z-scores; :class:`~harness_ext.methods.engine.benchpress.Transform`), completed by BenchPress's bias ALS at
ranks 1, 2 and 3 (averaged, so no single rank decides the fill), and then each dataset's observed cells are
regressed by ridge on other datasets' (observed or filled) cells, the penalty chosen per dataset by exact
leave-one-out over :data:`LAMS`, and the fit predicts that dataset's missing cells; the predictors are the
datasets observed together with the target on at least a share of its models, and the predictions of the
shares of :data:`SHARES` are averaged. One sweep, not iterated to a fixed
point: a second sweep regresses on the first sweep's own predictions and, on the shared matrices, loses what
the first gained (sequential regression imputation, van Buuren & Groothuis-Oudshoorn 2011, one round from a
low-rank start).

Used by :mod:`~harness_ext.methods.engine.completion_mix` as the third member of the cell completion's
averages (its errors differ from both ALS fits', so averages with it gain more than averages of ALS variants).

References
----------
van Buuren & Groothuis-Oudshoorn, "mice: Multivariate Imputation by Chained Equations in R", Journal of
Statistical Software 2011 (regression imputation dataset by dataset); Hastie, Tibshirani & Friedman, *Elements
of Statistical Learning* (2009), eqs. 3.44 and 7.52 (ridge by the SVD, leave-one-out residuals of a linear
smoother); Zeng & Papailiopoulos, arXiv 2606.24020 (2026), §4.2 (the logit bias ALS filling the predictors).
"""

from __future__ import annotations

import numpy as np

from . import benchpress as bp
from .direct_ridge import loo_residuals
from .neighbour_residual import regress_neighbours

#: Ridge penalties tried per dataset (the predictors are z-scores, so one grid fits every matrix).
LAMS = tuple(float(v) for v in np.logspace(-2, 4, 13))
#: Ranks of BenchPress's bias ALS averaged into the predictors' filling (the published rank, 2, in the middle).
FILL_RANKS = (1, 2, 3)
#: Fewest observed cells a dataset needs to be regressed (fewer: its missing cells keep the filling).
MIN_ROWS = 3
#: Shares of a dataset's observed models another dataset must also be observed on to be a predictor; the
#: predictions of the five predictor sets are averaged. On a sparse matrix a dataset seen with few of the target's
#: models is mostly the filling, not data; no single share suits every matrix, so all of them are averaged
#: (Breiman 1996), from every dataset (0) to those seen with most of the target's models (0.6).
SHARES = (0.0, 0.15, 0.3, 0.45, 0.6)


def loo_ridge(F, y, lams=LAMS):
    """``(intercept, coef, lam)`` of ridge of ``y`` on ``F`` (centred, intercept unpenalised), ``lam`` by exact LOO.

    The leave-one-out residual of a linear smoother is ``e_i / (1 - H_ii)``
    (Hastie et al. 2009, eq. 7.52 with the hat matrix's diagonal); with the
    thin SVD of the centred ``F`` every penalty costs one pass over ``U``.
    Ties go to the larger penalty (the grid is scanned from the top).
    """
    fm, ym = F.mean(0), float(y.mean())
    U, s, Vt = np.linalg.svd(F - fm, full_matrices=False)
    grid = sorted(lams, reverse=True)
    mse = np.mean(loo_residuals(U, s ** 2, y - ym, grid) ** 2, axis=1)
    best = None
    for loo, lam in zip(mse, grid):
        if best is None or loo < best[0] - 1e-12:
            best = (float(loo), lam)
    lam = best[1]
    Uy = U.T @ (y - ym)
    coef = Vt.T @ ((s / (s ** 2 + lam)) * Uy)
    return ym - float(fm @ coef), coef, lam


def regress_columns(Z, fill, lams=LAMS, min_rows: int = MIN_ROWS, shares=SHARES) -> np.ndarray:
    """One sweep: every column of ``Z`` (NaN missing) with ``min_rows`` observed cells and a missing one is
    predicted by ridge on other columns of ``Z`` filled with ``fill``, averaged over the predictor sets of
    ``shares`` (for share ``s``: the columns observed together with the target on at least ``s`` of the target's
    observed rows; a share without one predicts ``fill``); every other missing cell keeps ``fill``."""
    O = ~np.isnan(Z)
    Of = O.astype(float)
    together = Of.T @ Of  # rows observed in both columns
    Zc = np.where(O, Z, fill)
    out = Zc.copy()
    for j in np.flatnonzero((O.sum(0) >= min_rows) & ~O.all(0)):
        rows = O[:, j]
        preds, seen = [], {}
        for share in shares:
            keep = together[j] >= share * rows.sum()
            keep[j] = False
            if not keep.any():  # no predictor at this share: its prediction is the filling
                preds.append(Zc[~rows, j])
                continue
            key = keep.tobytes()
            if key not in seen:  # a set met at two shares is fitted once and counted twice
                F = Zc[:, keep]
                b0, coef, _ = loo_ridge(F[rows], Z[rows, j], lams)
                seen[key] = b0 + F[~rows] @ coef
            preds.append(seen[key])
        out[~rows, j] = np.mean(preds, axis=0)
    return out


def completions(X, neighbours: bool = False):
    """``(benchpress, ridge)``: BenchPress's completion of ``X`` (own units; :func:`~harness_ext.methods.engine.benchpress.complete_units`)
    and this module's, sharing BenchPress's rank-2 fit. BenchPress's observed cells are its fit's, the ridge's ``X``'s.
    With ``neighbours``, a third: :func:`~harness_ext.methods.engine.neighbour_residual.regress_neighbours` over the
    same filling (observed cells ``X``'s).

    Parameters
    ----------
    X : array-like, (m, d)
        Scores in the project's units (proportions stay proportions), NaN where not run.
    """
    X = np.asarray(X, dtype=float)
    factor = bp.points_factor(X)
    tr = bp.Transform.fit(X * factor)
    Z = tr.transform(X * factor)
    fits = {r: bp.bias_als(Z, rank=r) for r in FILL_RANKS}
    fill = np.mean([fits[r] for r in FILL_RANKS], axis=0)
    out = (tr.inverse(fits[bp.RANK]) / factor, np.where(np.isnan(X), tr.inverse(regress_columns(Z, fill)) / factor, X))
    if not neighbours:
        return out
    return out + (np.where(np.isnan(X), tr.inverse(regress_neighbours(Z, fill)) / factor, X),)


def complete(X) -> np.ndarray:
    """This module's completion of ``X`` (own units; observed cells as given)."""
    return completions(X)[1]
