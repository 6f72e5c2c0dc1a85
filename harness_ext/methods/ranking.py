"""Mean-rank aggregation and the rank-preservation metrics of Gusev & Zaytsev.

A benchmark ranks models on each dataset (rank 1 = best), averages those ranks
over datasets, and orders models by the average (Gusev & Zaytsev §3). A subset of datasets
induces its own mean-rank vector ``R_S``; the metrics here say how well ``R_S``
reproduces the full-benchmark vector ``R_D``.

Every metric function is batched: ``R_sub`` may be ``(M,)`` or ``(B, M)`` (B
rankings of the same M models, e.g. every selector x subset size of a trial) and
``R_full`` is ``(M,)`` or broadcastable to ``R_sub``; the result has shape
``R_sub.shape[:-1]``. Inputs are *mean-rank vectors* (lower = better), not
scores.

Ties
----
* Per-dataset ranks: tied scores share the average of the ranks they span
  (``scipy.stats.rankdata(method="average")``), so ranks on a dataset always sum
  to ``M (M + 1) / 2``.
* Positions: NDCG@5 and MRR turn a mean-rank vector into positions 1..M by
  ranking it again with average ties (Spearman and Kendall are invariant to
  this). Subsets of 2-3 datasets produce many ties in ``R_S`` (mean ranks are
  multiples of 1/k), so this matters at small k. MAE compares the mean ranks
  themselves (the paper's formula).

References
----------
Gusev & Zaytsev, "Benchmarking on Tasks That Matter: Dataset Selection for
Preserving Model Rankings" (KDD 2026), §3 (mean rank, MAE, rho, tau, NDCG@K, MRR).
"""

from __future__ import annotations

from typing import Dict, Iterable, Optional, Sequence

import numpy as np

from ..errors import MethodError

def orient_raw_columns(df):
    """``(df, names)``: a store matrix with its raw lower-is-better columns negated, so higher is better in every
    column, and the names of the columns negated.

    A matrix read with ``--normalise none`` keeps a word error rate as it is, lower is better, while a ranking by
    score (mean win rate, mean rank, a weighted score) takes higher as better: unturned, the worst speech recogniser
    of Open ASR ranked first. The normalised matrices (``chance``, ``minmax``) are already flipped, and a column whose
    direction is unknown is left as it is. ``df`` is returned unchanged when no column is negated.
    """
    meta = df.attrs.get("datasets") or {}
    flip = [c for c in df.columns
            if isinstance(meta.get(c), dict) and meta[c].get("higher_is_better") is False
            and (meta[c].get("normalisation") or {}).get("description") == "raw"]
    if not flip:
        return df, []
    out = df.copy()
    out[flip] = -out[flip]
    return out, flip


#: Rank metrics and whether larger values are better.
METRIC_HIGHER_IS_BETTER: Dict[str, bool] = {
    "mae": False,
    "spearman": True,
    "kendall": True,
    "ndcg@5": True,
    "mrr": True,
}

#: Display labels used by tables and plots.
METRIC_LABELS: Dict[str, str] = {
    "mae": "MAE",
    "spearman": "Spearman",
    "kendall": "Kendall",
    "ndcg@5": "NDCG@5",
    "mrr": "MRR",
}

# Pairwise sign products are materialised per chunk; this caps a chunk at ~32 MB.
_PAIR_CHUNK_ELEMENTS = 4_000_000


def rank_per_dataset(X, higher_is_better: bool = True) -> np.ndarray:
    """Rank models within each dataset (column): 1 = best, ties averaged.

    Parameters
    ----------
    X : array-like, shape (n_models, n_datasets)
        Scores; NaN marks a model not evaluated on a dataset.
    higher_is_better : bool
        Direction of the scores.

    Returns
    -------
    numpy.ndarray, shape (n_models, n_datasets)
        Ranks among the models observed on that dataset; NaN where ``X`` is NaN.

    References
    ----------
    Gusev & Zaytsev (2026), §3 "True model ranking" (r_d(m)).
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise MethodError(f"scores must be 2-D (models x datasets), got shape {X.shape}")
    signed = -X if higher_is_better else X
    from scipy.stats import rankdata  # lazy: scipy.stats costs a second at import

    return rankdata(signed, axis=0, method="average", nan_policy="omit")


def mean_rank(X, higher_is_better: bool = True) -> np.ndarray:
    """Mean-rank aggregation: rank models per dataset, average over datasets.

    Parameters
    ----------
    X : array-like, shape (n_models, n_datasets)
        Scores, NaN for missing cells.
    higher_is_better : bool
        Direction of the scores.

    Returns
    -------
    numpy.ndarray, shape (n_models,)
        ``R_D(m)``; lower is better. With missing cells a model's mean is over the
        datasets it was evaluated on and each dataset's ranks are among the models
        observed there (a documented approximation: ranks from datasets with
        different model pools are not strictly comparable).

    References
    ----------
    Gusev & Zaytsev (2026), §3, definition of R_D.
    """
    ranks = rank_per_dataset(X, higher_is_better)
    with np.errstate(invalid="ignore"):
        out = np.nanmean(ranks, axis=1) if np.isnan(ranks).any() else ranks.mean(axis=1)
    return out


def subset_mean_ranks(ranks: np.ndarray, subsets) -> np.ndarray:
    """Mean ranks induced by many dataset subsets at once.

    Parameters
    ----------
    ranks : numpy.ndarray, shape (n_models, n_datasets)
        Per-dataset ranks from :func:`rank_per_dataset` (complete, no NaN).
    subsets : array-like of int, shape (B, k)
        Column indices, one subset per row (all of size k).

    Returns
    -------
    numpy.ndarray, shape (B, n_models)
        ``R_S`` for each subset (eq. 2).

    References
    ----------
    Gusev & Zaytsev (2026), §3, eq. (2).
    """
    subsets = np.asarray(subsets, dtype=int)
    if subsets.ndim == 1:
        subsets = subsets[None, :]
    # (M, B, k) -> mean over k -> (B, M)
    return ranks[:, subsets].mean(axis=-1).T


def positions(R) -> np.ndarray:
    """Positions 1..M of a mean-rank vector (lower mean rank = position 1), ties averaged."""
    R = np.asarray(R, dtype=float)
    from scipy.stats import rankdata

    return rankdata(R, axis=-1, method="average")


def _broadcast(R_sub, R_full):
    R_sub = np.asarray(R_sub, dtype=float)
    R_full = np.asarray(R_full, dtype=float)
    if R_sub.shape[-1] != R_full.shape[-1]:
        raise MethodError(f"rankings cover different numbers of models: {R_sub.shape[-1]} vs {R_full.shape[-1]}")
    R_sub, R_full = np.broadcast_arrays(R_sub, R_full)
    return R_sub, R_full


def rank_mae(R_sub, R_full) -> np.ndarray:
    """Mean absolute difference between two mean-rank vectors.

    ``MAE(R_S, R_D) = 1/M sum_j |R_S(j) - R_D(j)|`` on the mean ranks
    themselves, exactly as the paper's formula (§3), not on positions 1..M.
    (Checked against the paper's scale on the TSC bake-off: random subsets give
    mean-rank MAE 1.41 at k = 20, consistent with the paper's "MAE <= 1.5"
    targets being reached at k* of 7-18; position MAE would be 2.5.) Both
    vectors must come from ranks among the same models.

    References
    ----------
    Gusev & Zaytsev (2026), §3 (MAE).
    """
    R_sub, R_full = _broadcast(R_sub, R_full)
    return np.abs(R_sub - R_full).mean(axis=-1)


def _rowwise_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    num = (a * b).sum(axis=-1)
    den = np.sqrt((a * a).sum(axis=-1) * (b * b).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / den
    # A constant ranking has no defined correlation (scipy returns NaN too).
    return np.where(den > 0, np.clip(out, -1.0, 1.0), np.nan)


def spearman(R_sub, R_full) -> np.ndarray:
    """Spearman's rho between two rankings (Pearson of average-tie ranks).

    Equals ``scipy.stats.spearmanr`` row by row; NaN when either ranking is
    constant.

    References
    ----------
    Gusev & Zaytsev (2026), §3.
    """
    R_sub, R_full = _broadcast(R_sub, R_full)
    return _rowwise_pearson(positions(R_sub), positions(R_full))


def kendall(R_sub, R_full) -> np.ndarray:
    """Kendall's tau-b between two rankings (ties handled as in scipy's default).

    tau-b = sum_{i<j} s_ij t_ij / sqrt(sum s_ij^2 * sum t_ij^2) with s, t the
    signs of pairwise differences; equals ``scipy.stats.kendalltau`` (variant
    "b"). NaN when either ranking is constant.

    References
    ----------
    Gusev & Zaytsev (2026), §3.
    """
    R_sub, R_full = _broadcast(R_sub, R_full)
    lead = R_sub.shape[:-1]
    M = R_sub.shape[-1]
    a = R_sub.reshape(-1, M)
    b = R_full.reshape(-1, M)
    iu, ju = np.triu_indices(M, k=1)
    n_pairs = max(len(iu), 1)
    chunk = max(1, _PAIR_CHUNK_ELEMENTS // n_pairs)
    out = np.empty(a.shape[0])
    for start in range(0, a.shape[0], chunk):
        sa = np.sign(a[start : start + chunk, iu] - a[start : start + chunk, ju])
        sb = np.sign(b[start : start + chunk, iu] - b[start : start + chunk, ju])
        num = (sa * sb).sum(axis=-1)
        den = np.sqrt(np.abs(sa).sum(axis=-1) * np.abs(sb).sum(axis=-1))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + chunk] = np.where(den > 0, num / den, np.nan)
    return out.reshape(lead)


def ndcg_at_k(R_sub, R_full, k: int = 5) -> np.ndarray:
    """NDCG@k of the subset-induced ordering against full-benchmark relevance.

    Relevance of model m is ``M + 1 - position_full(m)`` (the best model gets
    M, the worst 1; tied models share the average). The subset ranking orders
    models by ``R_sub``; models tied in ``R_sub`` share the discounts of the
    positions their tie group spans (the tie-averaged DCG of McSherry & Najork,
    what ``sklearn.metrics.ndcg_score(..., ignore_ties=False)`` computes), so the
    result does not depend on an arbitrary tie break. Discount 1/log2(i + 1) for
    position i = 1..k.

    References
    ----------
    Gusev & Zaytsev (2026), §3 (NDCG@K, K = 5). The paper does not define the
    relevance; the linear relevance above is our documented choice.
    """
    R_sub, R_full = _broadcast(R_sub, R_full)
    M = R_sub.shape[-1]
    kk = int(min(k, M))
    gains = M + 1.0 - positions(R_full)
    disc = np.zeros(M + 1)
    disc[1 : kk + 1] = 1.0 / np.log2(np.arange(2, kk + 2))
    cum = np.cumsum(disc)  # cum[p] = sum of discounts of positions 1..p
    # Tie group of each model in the subset ordering: positions start+1..start+count.
    diff = R_sub[..., :, None] - R_sub[..., None, :]
    start = (diff > 0).sum(axis=-1)
    count = (diff == 0).sum(axis=-1)
    group_disc = (cum[np.minimum(start + count, M)] - cum[start]) / count
    dcg = (gains * group_disc).sum(axis=-1)
    ideal = -np.sort(-gains, axis=-1)[..., :kk]
    idcg = (ideal * disc[1 : kk + 1]).sum(axis=-1)
    return dcg / idcg


def mrr(R_sub, R_full) -> np.ndarray:
    """Reciprocal rank of the full benchmark's best model in the subset ranking.

    ``1 / position_sub(m*)`` with ``m* = argmin R_full`` (if several models tie
    for first in the full ranking, the one placed highest by the subset counts:
    "first relevant item"). Positions use average ties, so a model tied for
    first with one other gets 1/1.5. The "mean" of MRR is taken over trials by
    the protocol.

    References
    ----------
    Gusev & Zaytsev (2026), §3 (MRR). The paper does not spell out the relevant
    item; taking the full benchmark's winner is our documented choice.
    """
    R_sub, R_full = _broadcast(R_sub, R_full)
    pos_sub = positions(R_sub)
    best = R_full == R_full.min(axis=-1, keepdims=True)
    first = np.where(best, pos_sub, np.inf).min(axis=-1)
    return 1.0 / first


_METRIC_FUNCS = {
    "mae": rank_mae,
    "spearman": spearman,
    "kendall": kendall,
    "ndcg@5": lambda a, b: ndcg_at_k(a, b, k=5),
    "mrr": mrr,
}


def check_metrics(metrics: Optional[Iterable[str]]) -> list:
    """Validate metric names (case-insensitive); None means all of them."""
    if metrics is None:
        return list(METRIC_HIGHER_IS_BETTER)
    out = []
    for m in metrics:
        key = str(m).strip().lower()
        if key not in _METRIC_FUNCS:
            raise MethodError(f"unknown rank metric {m!r}; available: {', '.join(_METRIC_FUNCS)}")
        out.append(key)
    return out


def rank_metrics(R_sub, R_full, metrics: Optional[Sequence[str]] = None) -> Dict[str, np.ndarray]:
    """All requested rank metrics between subset-induced and reference rankings.

    Parameters
    ----------
    R_sub : array-like, shape (..., M)
        Subset-induced mean-rank vectors.
    R_full : array-like, shape (M,) or broadcastable
        The reference mean-rank vector.
    metrics : sequence of str, optional
        Names from :data:`METRIC_HIGHER_IS_BETTER`; default all.

    Returns
    -------
    dict
        ``name -> array of shape R_sub.shape[:-1]``.

    References
    ----------
    Gusev & Zaytsev (2026), §3.
    """
    names = check_metrics(metrics)
    return {name: _METRIC_FUNCS[name](R_sub, R_full) for name in names}
