"""Cross-validated error of predicting held-out models from a subset of datasets, for many subsets at once.

Everything here works on a models x datasets matrix with missing cells: a
held-out model reveals the subset cells it has (a fold-in on whatever part of
the subset it ran) and is scored on every other cell it has. Nothing is cut to
a complete block.

The full-benchmark aggregate of a held-out model whose row is incomplete is
not known, so its error is estimated from the cells it has: with ``e_j`` the
errors on its observed non-subset datasets ``O``, ``W`` the total weight outside
the subset and ``W_O`` the weight of ``O``, the aggregate error is
``(sum_{j in O} w_j e_j) * W / W_O`` (unbiased when cells are missing at
random). Models with less than half of the non-subset weight observed are left
out of the aggregate (their estimate is mostly extrapolation), unless no model
has that much, in which case every model with an observed cell is used.

References
----------
SimBA (000) §7.2 (k-fold over models); issue 14 items 1, 5 and 7.
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Sequence

import numpy as np

from ..errors import MethodError

#: A held-out model enters the aggregate error when at least this share of the non-subset weight is observed.
MIN_AGGREGATE_SHARE = 0.5


class SubsetError(NamedTuple):
    """Out-of-sample errors of one subset (normalised units).

    ``per_dataset``: RMSE per dataset over held-out models (NaN in the subset);
    ``overall``: RMSE over every predicted held-out cell; ``aggregate``: RMSE of
    the predicted full-benchmark score; ``profile_mse``: mean squared error over
    all ``d`` cells of a profile, the subset's cells counting 0 (what the
    selection objective minimises); ``n_aggregate``: held-out models behind
    ``aggregate``.
    """

    per_dataset: np.ndarray
    overall: float
    aggregate: float
    profile_mse: float
    n_aggregate: int


def normalised_weights(weights, d: int) -> np.ndarray:
    w = np.full(d, 1.0 / d) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (d,) or (w < 0).any() or not w.sum() > 0:
        raise MethodError(f"weights must be {d} non-negative numbers with a positive sum")
    return w / w.sum()


def model_folds(n: int, n_splits: int, random_state: int):
    """Shuffled K-fold over model rows (sklearn's KFold, so folds match :func:`harness_ext.methods.pounce.cross_validated_error`)."""
    from sklearn.model_selection import KFold

    k = min(int(n_splits), n)
    if k < 2:
        raise MethodError(f"cross-validation needs n_splits >= 2 and at least 2 models, got {n_splits!r} and {n}")
    return list(KFold(n_splits=k, shuffle=True, random_state=random_state).split(np.arange(n)))


def fold_predictions(predictor, X: np.ndarray, subsets: Sequence, folds, cache: Optional[dict] = None) -> list:
    """Per fold, the held-out models' predicted rows for each subset: ``[[mean per subset] per fold]``.

    A predictor with ``predict_new_models`` (the low-rank completers of
    :mod:`harness_ext.methods.completion`) is fitted once per fold and each
    subset folded in (``calibrate=False``); ``cache``, a dict kept by the
    caller, holds those per-fold fits across calls on the same matrix and
    folds. Its settings chosen by an inner cross-validation (rank, penalty)
    are chosen once on all of ``X`` (``with_fixed_settings``) and then held
    fixed in every fold, so the folds do not each repeat that search. Otherwise
    ``predictor.predict_subsets`` (fit once per fold, fold each subset in) is
    used when the predictor has it, else one fit of the stacked matrix per
    (fold, subset) through :func:`harness_ext.methods.pounce.predict_new_models`.
    """
    from ..base import clone
    from .pounce import predict_new_models

    if hasattr(predictor, "with_fixed_settings"):
        fixed = cache.get("settings") if cache is not None else None
        if fixed is None:
            fixed = predictor.with_fixed_settings(X)
            if cache is not None:
                cache["settings"] = fixed
        predictor = fixed
    out = []
    for i, (f_tr, f_te) in enumerate(folds):
        if hasattr(predictor, "predict_new_models"):
            est = cache.get(i) if cache is not None else None
            if est is None:
                est = clone(predictor).fit(X[f_tr])
                if cache is not None:
                    cache[i] = est
            masked = []
            for s in subsets:
                keep = np.zeros(X.shape[1], bool)
                keep[np.asarray(s, dtype=int)] = True
                masked.append(np.where(keep, X[f_te], np.nan))
            out.append([np.asarray(est.predict_new_models(m, calibrate=False).mean) for m in masked])
        elif hasattr(predictor, "predict_subsets"):
            X_new = X[f_te]
            out.append(clone(predictor).predict_subsets(X[f_tr], X_new, [np.asarray(s, dtype=int) for s in subsets]))
        else:
            rows = np.concatenate([f_tr, f_te])
            out.append([predict_new_models(predictor, X[f_tr], X[f_te], subset=s, rows=rows)[0] for s in subsets])
    return out


def subset_errors(X, subsets: Sequence, predictor, n_splits: int = 5, random_state: int = 0, weights=None,
                  folds=None, cache: Optional[dict] = None) -> list:
    """:class:`SubsetError` of each subset under ``predictor``, all on the same model folds.

    Parameters
    ----------
    X : array-like, (models, datasets), NaN for missing cells
    subsets : sequence of sequences of int
    predictor : BasePredictor
        Unfitted; cloned per fold.
    n_splits, random_state : int
        Model folds (shuffled K-fold), capped at the number of models.
    weights : array-like, optional
        Dataset weights of the aggregate (normalised to sum 1); default uniform.
    folds : list of (train, test), optional
        Precomputed folds (overrides ``n_splits``/``random_state``).
    cache : dict, optional
        Per-fold fitted predictors reused across calls (see :func:`fold_predictions`).

    Returns
    -------
    list of SubsetError
    """
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    subsets = [np.asarray(s, dtype=int) for s in subsets]
    for s in subsets:
        if s.size == 0 or s.min() < 0 or s.max() >= d:
            raise MethodError(f"a subset must hold column indices in [0, {d})")
    w = normalised_weights(weights, d)
    folds = folds if folds is not None else model_folds(n, n_splits, random_state)
    preds = fold_predictions(predictor, X, subsets, folds, cache)
    obs = ~np.isnan(X)
    out = []
    for si, s in enumerate(subsets):
        in_s = np.zeros(d, bool)
        in_s[s] = True
        sq = np.zeros(d)
        cnt = np.zeros(d)
        agg_err, agg_share = [], []
        prof_sq, prof_n = 0.0, 0
        for (f_tr, f_te), fold in zip(folds, preds):
            err = fold[si] - X[f_te]
            err[:, in_s] = np.nan
            ok = ~np.isnan(err)
            e0 = np.where(ok, err, 0.0)
            sq += (e0 ** 2).sum(axis=0)
            cnt += ok.sum(axis=0)
            # Profile MSE over all d cells: subset cells are exact (0), missing truths are averaged over.
            n_rest = ok.sum(axis=1)
            has = n_rest > 0
            prof_sq += float(((e0 ** 2).sum(axis=1)[has] / n_rest[has] * (~in_s).sum() / d).sum())
            prof_n += int(has.sum())
            w_obs = (ok * w).sum(axis=1)
            w_rest = w[~in_s].sum()
            if w_rest > 0:
                with np.errstate(invalid="ignore", divide="ignore"):
                    agg_err.append((e0 @ w) * w_rest / w_obs)
                agg_share.append(w_obs / w_rest)
            else:  # the subset carries all the weight: the aggregate is observed, not predicted
                agg_err.append(np.zeros(len(f_te)))
                agg_share.append(np.ones(len(f_te)))
        agg_err = np.concatenate(agg_err)
        share = np.concatenate(agg_share)
        use = share >= MIN_AGGREGATE_SHARE - 1e-12
        if not use.any():
            use = share > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            per = np.sqrt(sq / cnt)
        per[in_s] = np.nan
        overall = float(np.sqrt(sq.sum() / cnt.sum())) if cnt.sum() else float("nan")
        aggregate = float(np.sqrt(np.mean(agg_err[use] ** 2))) if use.any() else (0.0 if w[~in_s].sum() == 0 else float("nan"))
        out.append(SubsetError(per, overall, aggregate, prof_sq / prof_n if prof_n else float("nan"), int(use.sum())))
    return out
