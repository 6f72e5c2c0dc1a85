"""Cross-validated error of predicting held-out models from a subset of datasets, for many subsets at once.

Everything here works on a models x datasets matrix with missing cells: a
held-out model reveals the subset cells it has (a fold-in on whatever part of
the subset it ran) and is scored on every other cell it has. Nothing is cut to
a complete block.

The full-benchmark aggregate of a held-out model whose row is incomplete is
not known, so its mean squared error is estimated from the errors on every
observed cell: with ``e_ij`` the held-out error of model ``i`` on dataset ``j``
and ``M_jk`` the mean of ``e_ij e_ik`` over the held-out models observing both
``j`` and ``k`` (pairwise-complete second moments, every observed cell used),
the aggregate MSE is ``w' M w`` over the datasets outside the subset. Pairs no
held-out model observes together get the mean observed error correlation
(weighted by pair counts) times their two RMSEs. On a complete matrix this is
exactly the mean of ``(sum_j w_j e_ij)^2`` over models. (Extrapolating each
model's error from its own few cells, ``(sum_O w_j e_j) * W / W_O``, inflates
the variance of sparse rows by ``W / W_O`` and on a matrix with a quarter of
its cells observed left a dozen of 255 models to judge a subset by.)

On wide matrices a subset's score costs ``2 n d^2`` flops in those moments;
past :data:`SCORE_FLOPS_BUDGET` every subset is scored on the same seeded
sample of held-out models (:func:`scoring_folds`; the manifest records it).

References
----------
SimBA §7.2 (k-fold over models); Hastie, Tibshirani & Friedman, *Elements of Statistical Learning* (2009),
§7.10 (K-fold cross-validation; here over models, each held-out model observed on the subset only).
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Sequence

import numpy as np

from ...base import limit_threads
from ...errors import MethodError


class SubsetError(NamedTuple):
    """Out-of-sample errors of one subset (normalised units).

    ``per_dataset``: RMSE per dataset over held-out models (NaN in the subset);
    ``overall``: RMSE over every predicted held-out cell; ``aggregate``: RMSE of
    the predicted full-benchmark score; ``profile_mse``: mean squared error over
    all ``d`` cells of a profile, the subset's cells counting 0 and each other
    dataset its own MSE over the held-out models observing it (what the
    selection objective minimises; a per-model average over the cells each
    model has would favour subsets that leave only well-observed datasets to
    predict); ``n_aggregate``: held-out models with at
    least one predicted observed cell (behind ``aggregate``).
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


#: Masked rows folded in per call when many subsets are stacked (bounds the (S, n, r+1, r+1) work arrays).
STACK_ROWS = 4096
#: Matrices whose per-fold fits are kept by :func:`shared_cache` (the selector's and reduce's evidence share them).
SHARED_CACHE_SIZE = 2
_SHARED: dict = {}


def shared_cache(X: np.ndarray, predictor, folds) -> dict:
    """The per-fold fit cache of :func:`fold_predictions` for this matrix, predictor and folds, kept across callers.

    ``reduce`` cross-validates the same matrix with the same folds and
    predictor twice: once inside the selector (the greedy objective) and once
    for the manifest's evidence. Keyed on the matrix bytes, the predictor's
    class and ``get_params()`` and the folds, the second caller reuses the
    first one's rank/penalty search and fold fits instead of repeating them
    (the results are identical: the fits are deterministic given the key).
    At most :data:`SHARED_CACHE_SIZE` matrices are kept.
    """
    import hashlib

    h = hashlib.sha1(np.ascontiguousarray(X, dtype=float).tobytes())
    h.update(repr(X.shape).encode())
    h.update(f"{type(predictor).__module__}.{type(predictor).__qualname__}{sorted(predictor.get_params().items())!r}".encode())
    for tr, te in folds:
        h.update(np.asarray(te, dtype=np.int64).tobytes())
        h.update(b"|")
    key = h.hexdigest()
    if key not in _SHARED:
        while len(_SHARED) >= SHARED_CACHE_SIZE:
            _SHARED.pop(next(iter(_SHARED)))
        _SHARED[key] = {}
    return _SHARED[key]


#: Predicted rows remembered per fold across calls (distinct (row, observed cells) pairs), at most this many cells.
MEMO_CELLS = 4_000_000


def stacked_fold_in(est, X_te: np.ndarray, subsets: Sequence, memo: Optional[dict] = None) -> list:
    """Mean predictions of the rows ``X_te`` masked to each subset, by one de-duplicated stacked fold-in.

    A fold-in predicts each row from its own observed cells only, so the rows
    of every subset can be folded in together. A row whose observed cells
    inside two subsets are the same gets the same prediction: on a sparse
    matrix most (row, subset) pairs repeat (a row with 10 of 78 cells meets
    most subsets in the same few cells), so each distinct (row, observed
    cells) pair is predicted once. ``memo`` (a dict kept per fold by the
    caller) remembers those predictions across calls: a greedy step's
    candidates differ from the previous subset by one dataset, so only the
    rows that have it are folded in again. Identical to one call per subset.
    """
    n, d = X_te.shape
    have = ~np.isnan(X_te)
    keep = np.zeros((len(subsets), d), bool)
    for i, s in enumerate(subsets):
        keep[i, np.asarray(s, dtype=int)] = True
    pat = keep[:, None, :] & have[None, :, :]  # (subsets, n, d)
    rows = np.broadcast_to(np.arange(n)[None, :], pat.shape[:2])
    key = np.concatenate([rows.reshape(-1, 1).astype(np.int64).view(np.uint8).reshape(-1, 8),
                          np.packbits(pat.reshape(-1, d), axis=1)], axis=1)
    uniq, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    memo = {} if memo is None else memo
    keys = [u.tobytes() for u in uniq]
    todo = np.array([k not in memo for k in keys], dtype=bool)
    fresh = {}
    if todo.any():
        idx = first[todo]
        u_pat = pat.reshape(-1, d)[idx]
        masked = np.where(u_pat, X_te[rows.reshape(-1)[idx]], np.nan)
        new = np.empty_like(masked)
        means = getattr(est, "predict_new_means", None) or (lambda x: est.predict_new_models(x, calibrate=False).mean)
        for a in range(0, len(masked), STACK_ROWS):
            new[a:a + STACK_ROWS] = np.asarray(means(masked[a:a + STACK_ROWS]))
        fresh = dict(zip((k for k, t in zip(keys, todo) if t), new))
    # Stack before the memo may be cleared below: this call needs its remembered rows too.
    pred = np.stack([fresh[k] if k in fresh else memo[k] for k in keys]) if keys else np.empty((0, d))
    if (len(memo) + len(fresh)) * d > MEMO_CELLS:
        memo.clear()
    memo.update(fresh)
    full = pred[inverse].reshape(len(subsets), n, d)
    return [full[i] for i in range(len(subsets))]


def fold_predictions(predictor, X: np.ndarray, subsets: Sequence, folds, cache: Optional[dict] = None) -> list:
    """Per fold, the held-out models' predicted rows for each subset: ``[[mean per subset] per fold]``.

    A predictor with ``predict_new_models`` (the low-rank completers of
    :mod:`harness_ext.methods.engine.completion`) is fitted once per fold and every
    subset folded in together (:func:`stacked_fold_in`, ``calibrate=False``);
    ``cache``, a dict kept by the caller (or :func:`shared_cache`), holds
    those per-fold fits across calls on the same matrix and folds. Its
    settings chosen by an inner cross-validation (rank, penalty) are chosen
    once on all of ``X`` (``with_fixed_settings``) and then held fixed in
    every fold, so the folds do not each repeat that search. Otherwise
    ``predictor.predict_subsets`` (fit once per fold, fold each subset in) is
    used when the predictor has it, else one fit of the stacked matrix per
    (fold, subset) through :func:`harness_ext.methods.engine.from_subset.predict_new_models`.
    """
    from ...base import clone
    from .from_subset import predict_new_models

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
            # Keyed by the held-out rows too: its keys are row positions (scoring_folds may keep fewer rows).
            memo = cache.setdefault(("rows", i, np.asarray(f_te).tobytes()), {}) if cache is not None else None
            out.append(stacked_fold_in(est, X[f_te], subsets, memo))
        elif hasattr(predictor, "predict_subsets"):
            X_new = X[f_te]
            out.append(clone(predictor).predict_subsets(X[f_tr], X_new, [np.asarray(s, dtype=int) for s in subsets]))
        else:
            rows = np.concatenate([f_tr, f_te])
            out.append([predict_new_models(predictor, X[f_tr], X[f_te], subset=s, rows=rows)[0] for s in subsets])
    return out


#: Flops of one subset's pairwise error moments (``2 n d^2`` over its ``n`` held-out rows) above which they, and
#: the fold-ins behind them, come from a seeded sample of held-out rows (:func:`scoring_folds`). About 0.05 s of
#: one core; no real matrix of the repository's data comes near it (the largest, 2,000 x 100, takes 4e7).
SCORE_FLOPS_BUDGET = 1e9
#: Held-out rows scored per fold at least, whatever the budget.
MIN_SCORING_ROWS = 20
#: Past :data:`SCORE_FLOPS_BUDGET`, predicted cells (subsets x held-out rows x datasets) stacked per call of
#: :func:`fold_predictions` (bounds its memory).
STACK_CELLS = 20_000_000


def scoring_folds(folds, d: int):
    """``(folds, rule)``: the folds whose held-out rows score a subset, and why, within :data:`SCORE_FLOPS_BUDGET`.

    A subset's score costs ``2 n d^2`` flops in its pairwise error moments
    (plus ``n d`` fold-in cells), ``n`` held-out rows. Past the budget (wide
    and tall matrices: 1,000 x 2,000 takes 8e9 per subset, and ``reduce``
    scores about 500 subsets) each fold keeps a seeded sample of its held-out
    rows, in proportion to its size, at least :data:`MIN_SCORING_ROWS`; the
    fits still use every training row. The sample depends only on the folds
    and ``d``, so every subset of a selection and of its evidence is scored on
    the same rows (paired comparisons). ``rule`` is None when nothing is cut,
    else what was done, for the record.
    """
    n = sum(len(te) for _, te in folds)
    flops = 2.0 * n * d * d
    if flops <= SCORE_FLOPS_BUDGET or n == 0:
        return folds, None
    keep = max(1, int(SCORE_FLOPS_BUDGET // (2.0 * d * d)))
    out = []
    for i, (tr, te) in enumerate(folds):
        te = np.asarray(te)
        k = min(len(te), max(MIN_SCORING_ROWS, int(np.ceil(keep * len(te) / n))))
        pick = np.sort(np.random.default_rng(i).permutation(len(te))[:k])
        out.append((tr, te[pick]))
    rows = sum(len(te) for _, te in out)
    if rows == n:  # every fold already at the minimum: nothing cut
        return folds, None
    rule = {"reason": "pairwise error moments over every held-out model over the flops budget: a seeded sample "
                      "of held-out models per fold scores each subset",
            "rows": int(rows), "of": int(n), "flops": float(f"{flops:.3g}"), "budget": float(SCORE_FLOPS_BUDGET)}
    return out, rule


def score_flops(n: int, d: int) -> float:
    """Flops of scoring one subset on ``n`` held-out rows of ``d`` datasets after :func:`scoring_folds`'s cut
    (an estimate: the cut's per-fold minimum is not counted)."""
    rows = n if 2.0 * n * d * d <= SCORE_FLOPS_BUDGET else max(1, int(SCORE_FLOPS_BUDGET // (2.0 * d * d)))
    return 2.0 * min(n, rows) * d * d


def subset_errors(X, subsets: Sequence, predictor, n_splits: int = 5, random_state: int = 0, weights=None,
                  folds=None, cache: Optional[dict] = None, truth=None, defer_aggregate: bool = False) -> list:
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
    truth : array-like, optional
        The values the predictions are scored against (``X``'s shape and missing cells; default
        ``X``): e.g. scores below chance as they are, where ``X`` floors them at chance.
    defer_aggregate : bool
        Leave the aggregate's last step (:class:`PendingAggregate`) to the caller where it needs one: for a
        search that projects the moments of only the subsets that could win.

    Returns
    -------
    list of SubsetError
        Scored on every held-out row, or past :data:`SCORE_FLOPS_BUDGET` on the
        rows :func:`scoring_folds` keeps.
    """
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    subsets = [np.asarray(s, dtype=int) for s in subsets]
    for s in subsets:
        if s.size == 0 or s.min() < 0 or s.max() >= d:
            raise MethodError(f"a subset must hold column indices in [0, {d})")
    w = normalised_weights(weights, d)
    folds = folds if folds is not None else model_folds(n, n_splits, random_state)
    folds, rule = scoring_folds(folds, d)
    held = sum(len(te) for _, te in folds)
    # Past the budget (wide matrices) the stacked fold-ins go in parts of at most STACK_CELLS predicted cells.
    per_call = len(subsets) if rule is None else max(1, int(STACK_CELLS // max(1, held * d)))
    out = []
    T = X if truth is None else np.asarray(truth, dtype=float)
    if T.shape != X.shape:
        raise MethodError(f"truth must have the matrix's shape {X.shape}, got {T.shape}")
    # Many small products per subset and fold: extra BLAS threads only contend (15x slower on a busy machine).
    with limit_threads():
        for a in range(0, len(subsets), per_call):
            part = subsets[a:a + per_call]
            out += _score(T, part, fold_predictions(predictor, X, part, folds, cache), folds, w, pooled=rule is not None,
                          defer=defer_aggregate)
    return out


def _score(X, subsets, preds, folds, w, pooled: bool = False, defer: bool = False) -> list:
    """:class:`SubsetError` per subset from the folds' predictions.

    ``pooled`` (the sampled rows of :func:`scoring_folds`, past the budget): when
    every prediction is finite where its cell is observed and every pair of
    datasets is observed together by some held-out model, the folds' errors are
    pooled into one product and the aggregate is ``u' (P / N) u`` directly
    (the same quantity as :func:`aggregate_rmse`, which then fills nothing in,
    summed in another order, as long as the moments are positive definite: this
    path does not project them, to spare a factorisation per subset on wide matrices). ``defer``: aggregates
    that need a factorisation are left as :class:`PendingAggregate`.
    """
    d = X.shape[1]
    haves = [~np.isnan(X[f_te]) for _, f_te in folds]
    n_all = None  # pair counts of every held-out model, computed once (see below)
    out = []
    for si, s in enumerate(subsets):
        in_s = np.zeros(d, bool)
        in_s[s] = True
        if pooled:
            errs = [fold[si] - X[f_te] for (f_tr, f_te), fold in zip(folds, preds)]
            if all(np.array_equal(~np.isnan(e), h) for e, h in zip(errs, haves)):
                if n_all is None:
                    H = np.concatenate(haves).astype(float)
                    n_all = H.T @ H
                if n_all.min() > 0:
                    out.append(_score_pooled(np.concatenate(errs), np.concatenate(haves), in_s, n_all, w))
                    continue
        sq = np.zeros(d)
        cnt = np.zeros(d)
        P = np.zeros((d, d))  # sum of e_ij e_ik over held-out models observing j and k
        N = np.zeros((d, d))  # how many
        n_agg = 0
        errs = [fold[si] - X[f_te] for (f_tr, f_te), fold in zip(folds, preds)]
        # A prediction is finite on every observed cell (the usual case): then the pair counts are those of all
        # held-out models with the subset's rows and columns cut, exact integers, the same for every subset.
        finite = all(np.array_equal(~np.isnan(e), h) for e, h in zip(errs, haves))
        for err, have in zip(errs, haves):
            err[:, in_s] = np.nan
            ok = have & ~in_s if finite else ~np.isnan(err)
            e0 = np.where(ok, err, 0.0)
            sq += (e0 ** 2).sum(axis=0)
            cnt += ok.sum(axis=0)
            P += e0.T @ e0
            if not finite:
                okf = ok.astype(float)
                N += okf.T @ okf
            n_agg += int(ok.any(axis=1).sum())
        if finite:
            if n_all is None:
                n_all = np.zeros((d, d))
                for have in haves:
                    hf = have.astype(float)
                    n_all += hf.T @ hf
            N = n_all.copy()
            N[in_s, :] = 0.0
            N[:, in_s] = 0.0
        if n_agg:
            aggregate = (pending_aggregate if defer else aggregate_rmse)(P, N, w * ~in_s)
        else:
            aggregate = 0.0 if w[~in_s].sum() == 0 else float("nan")
        out.append(_subset_error(sq, cnt, in_s, aggregate, n_agg))
    return out


def _subset_error(sq, cnt, in_s, aggregate: float, n_agg: int) -> SubsetError:
    """The :class:`SubsetError` of per-dataset squared-error sums ``sq`` over ``cnt`` held-out cells."""
    d = len(sq)
    with np.errstate(invalid="ignore", divide="ignore"):
        per = np.sqrt(sq / cnt)
    per[in_s] = np.nan
    overall = float(np.sqrt(sq.sum() / cnt.sum())) if cnt.sum() else float("nan")
    # Profile MSE over all d cells: subset cells exact (0); a dataset no held-out model scores takes the mean MSE.
    mse = per[~in_s] ** 2
    profile = float(np.where(np.isfinite(mse), mse, np.nanmean(mse)).sum() / d) if np.isfinite(mse).any() else float("nan")
    return SubsetError(per, overall, aggregate, profile if (~in_s).any() else 0.0, n_agg)


def _score_pooled(err, have, in_s, n_all, w) -> SubsetError:
    """One subset's score from its held-out errors of every fold at once (see :func:`_score`'s ``pooled``)."""
    ok = have & ~in_s
    e0 = np.where(ok, err, 0.0)
    n_agg = int(ok.any(axis=1).sum())
    u = w * ~in_s
    if n_agg:
        Q = e0.T @ e0
        Q /= n_all  # the subset's rows and columns are 0 in the errors, so 0 here too
        aggregate = float(np.sqrt(max(float(u @ Q @ u), 0.0)))
    else:
        aggregate = 0.0 if u.sum() == 0 else float("nan")
    return _subset_error((e0 ** 2).sum(axis=0), ok.sum(axis=0), in_s, aggregate, n_agg)


def aggregate_rmse(P: np.ndarray, N: np.ndarray, w: np.ndarray) -> float:
    """RMSE of ``sum_j w_j e_j`` from pairwise-complete error moments ``P / N`` (see the module docstring).

    ``P[j, k]`` sums ``e_ij e_ik`` over the ``N[j, k]`` held-out models observing
    both; ``w`` is zero on datasets that are not predicted (the subset's).
    Datasets with no scored cell take the mean RMSE of the others. When some pair is
    unobserved, or the moments (each over the models observing its pair) are not
    positive definite, the matrix of moments is projected onto the positive semi-definite cone
    (Higham 1988), as :func:`harness_ext.methods.engine.subset_regression.pairwise_gram` does.
    """
    parts = pending_aggregate(P, N, w)
    return parts if isinstance(parts, float) else parts.value()


class PendingAggregate(NamedTuple):
    """An :func:`aggregate_rmse` whose last step (a Cholesky test, and an eigendecomposition when the moments are
    not positive definite) is left for :meth:`value`; ``low`` bounds its square from below.

    The filled moments ``M`` differ from their projection onto the positive semi-definite cone by a positive
    semi-definite matrix (the negative eigenvalues' part), so ``w'Mw`` (``low``, the square of the value when no
    projection is needed) is at most the projected ``w'M+w``. ``tol`` bounds the rounding of both sums against
    each other: a selection that compares many subsets projects only those whose ``low - tol`` could still win.
    """

    M: np.ndarray  # the filled moments over the weighted datasets
    ww: np.ndarray  # their weights
    check_pd: bool  # every pair observed: projected only when the Cholesky factorisation fails
    low: float  # w'Mw
    tol: float  # rounding allowance of ``low`` against the projected square

    def value(self) -> float:
        """The aggregate RMSE, as :func:`aggregate_rmse` returns it."""
        M, ww = self.M, self.ww
        if self.check_pd and _is_positive_definite(M):
            return _root(self.low)
        # pairwise moments need not be positive semi-definite: clip negative eigenvalues
        vals, vecs = np.linalg.eigh((M + M.T) / 2)
        M = (vecs * np.clip(vals, 0.0, None)) @ vecs.T
        return float(np.sqrt(max(float(ww @ M @ ww), 0.0)))


#: Rounding allowance of :class:`PendingAggregate`, relative to ``||M||_F w'w`` (an eigendecomposition of ``n x n``
#: moments is exact to about ``n`` units of rounding of ``||M||_2``: 1e-13 for a thousand datasets).
PENDING_RTOL = 1e-9


def _root(sq: float) -> float:
    return float(np.sqrt(max(sq, 0.0)))


def pending_aggregate(P: np.ndarray, N: np.ndarray, w: np.ndarray):
    """:func:`aggregate_rmse` up to its last step: the value (a float) when no factorisation is needed, else a
    :class:`PendingAggregate`. Same arithmetic as :func:`aggregate_rmse`, whose value it gives."""
    on = w > 0
    if not on.any():
        return 0.0
    Pw, Nw, ww = P[np.ix_(on, on)], N[np.ix_(on, on)], w[on]
    with np.errstate(invalid="ignore", divide="ignore"):
        M = np.where(Nw > 0, Pw / Nw, np.nan)
    var = np.diag(M).copy()
    if not np.isfinite(var).any():
        return float("nan")
    var = np.where(np.isfinite(var), var, np.nanmean(var))
    unseen = ~(Nw > 0)
    np.fill_diagonal(unseen, False)
    if not unseen.any():  # every pair observed together: nothing to fill in
        np.fill_diagonal(M, var)
        # Moments over one set of models are a Gram matrix, positive semi-definite. Over different sets (pairs
        # observed by 1 to 21 models: the HELM leaderboards as a group) they need not be, and w'Mw fell below
        # zero: an aggregate RMSE of 0 that the selector then chose. Such M is projected (PendingAggregate.value).
        low = float(ww @ M @ ww)
        if (Nw == Nw.flat[0]).all():
            return _root(low)
        return PendingAggregate(M, ww, True, low, _pending_tol(M, ww))
    sd = np.sqrt(np.clip(var, 0.0, None))
    off = ~np.eye(len(ww), dtype=bool)
    seen = off & (Nw > 0)
    denom = np.outer(sd, sd)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.where(seen & (denom > 0), M / denom, 0.0)
    n_seen = np.where(seen & (denom > 0), Nw, 0.0)
    rho = float((corr * n_seen).sum() / n_seen.sum()) if n_seen.sum() > 0 else 0.0
    M = np.where(seen, M, rho * denom)
    np.fill_diagonal(M, var)
    return PendingAggregate(M, ww, False, float(ww @ M @ ww), _pending_tol(M, ww))


def _pending_tol(M, ww) -> float:
    return PENDING_RTOL * float(np.sqrt((M * M).sum())) * float(ww @ ww)


def _is_positive_definite(M: np.ndarray) -> bool:
    """Whether the symmetric ``M`` has a Cholesky factor (a third of an eigendecomposition's cost)."""
    try:
        np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        return False
    return True
