"""The trials of the rank-preservation protocol: perturb the pool, let every selector pick k datasets, score the rankings.

Trials run through :class:`joblib.Parallel`. With ``n_jobs=None`` (the
default of :func:`run_protocol`) the backend and worker count come from the
caller's joblib configuration, so
``with joblib.parallel_config(backend="dask", n_jobs=-1):`` (after creating a
``dask.distributed.Client``; or Ray's ``register_ray()`` and
``backend="ray"``) moves the trials to a cluster. An explicit integer
``n_jobs`` overrides the configured worker count, and ``n_jobs=1`` runs in
the calling process whatever the configured backend. Per-trial seeds come from
``numpy.random.SeedSequence(seed).spawn(T)``: results depend on ``seed`` only,
not on ``n_jobs`` or the backend.

References
----------
Gusev & Zaytsev, "Benchmarking on Tasks That Matter: Dataset Selection for
Preserving Model Rankings", KDD 2026, §5.1 (protocol, eq. 12-16).
"""

from __future__ import annotations

import time
from typing import Dict, Optional, Sequence

import numpy as np
import pandas as pd

from ...errors import MethodError
from ..ranking import check_metrics, mean_rank, rank_metrics, rank_per_dataset, subset_mean_ranks
from .result import ProtocolResult
from .statistics import DEFAULT_SELECTORS


#: Largest subset size by default (the paper's 2..20), cut to the trials' pool of datasets when that is smaller.
DEFAULT_K_MAX = 20


def _resolve(selectors) -> Dict[str, tuple]:
    """name -> (cls, params). Accepts registered names, or (name, cls, params) triples."""
    from ...plugin_manager import get_registration

    if selectors is None:
        from ...plugin_manager import get_registrations

        regs = get_registrations("selectors")
        selectors = [n for n in DEFAULT_SELECTORS if n.replace("-", "_") in regs]
        if not selectors:
            raise MethodError("no default selector is registered")
    out = {}
    for item in selectors:
        if isinstance(item, str):
            reg = get_registration("selectors", item)
            name, cls, params = item, reg.cls, {}
        else:
            name, cls, params = item
        if name in out:
            raise MethodError(f"selector {name!r} given twice")
        out[str(name)] = (cls, dict(params or {}))
    return out


def _fit_order(cls, params, Xtr, Ftr, n_select, random_state):
    est = cls(**params)
    names = est.get_params(deep=False)
    upd = {}
    if "n_select" in names:
        upd["n_select"] = n_select
    if "random_state" in names:
        upd["random_state"] = random_state
    if upd:
        est.set_params(**upd)
    est.fit(Xtr, features=Ftr)
    order = np.asarray(est.order_, dtype=int)
    return order


def _seed_int(seed_seq) -> int:
    """A non-negative int32 seed for a selector's ``random_state``."""
    return int(seed_seq.generate_state(1)[0] & 0x7FFFFFFF)


def _select_all(cls, params, Xtr, Ftr, ks, seed_seq):
    """Subsets (pool-local column indices) for every k, as a list of arrays.

    A nested selector is fitted once (size k_max) with one seed from ``seed_seq``;
    a fixed-size one is fitted per k, each with its own seed spawned from
    ``seed_seq``, so randomised fixed-size selectors (the Random baseline, k-means
    restarts) make independent draws for different k within a trial.
    """
    k_max = int(ks[-1])
    nested = getattr(cls, "nested", None)
    accepts_n = "n_select" in cls(**params).get_params(deep=False)
    if nested or not accepts_n:
        order = _fit_order(cls, params, Xtr, Ftr, k_max, _seed_int(seed_seq))
        if len(order) < k_max:
            raise MethodError(f"selector {cls.__name__} returned {len(order)} datasets; {k_max} needed")
        return [order[:k] for k in ks]
    out = []
    for k, ss in zip(ks, seed_seq.spawn(len(ks))):
        order = _fit_order(cls, params, Xtr, Ftr, int(k), _seed_int(ss))
        if len(order) < k:
            raise MethodError(f"selector {cls.__name__} returned {len(order)} datasets for k={k}")
        out.append(order[:k])
    return out


def _run_trial(X, ranks_all, R_full, features, specs, ks, metrics, variation, alpha, seed_seq, representation="scores"):
    """One trial: perturb the pool, select for every k, score the induced rankings.

    Returns ``(n_selectors, n_metrics, n_k)``.
    """
    rng = np.random.default_rng(seed_seq)
    n_models, n_datasets = X.shape
    child_seeds = seed_seq.spawn(len(specs))
    if variation == "datasets":
        pool = np.sort(rng.choice(n_datasets, size=int(np.floor(alpha * n_datasets)), replace=False))
        models = np.arange(n_models)
        ranks = ranks_all
        ref = R_full
    else:
        pool = np.arange(n_datasets)
        models = np.sort(rng.choice(n_models, size=int(np.floor(alpha * n_models)), replace=False))
        # The reference is the full benchmark restricted to the trial's models with
        # ranks renormalised to 1..|M_t| (§5.1): per-dataset ranks among M_t, averaged
        # over every dataset, so it lives on the same scale as R_S (MAE needs that).
        ranks = rank_per_dataset(X[models])
        ref = ranks.mean(axis=1)
    Xtr = X[np.ix_(models, pool)]
    if features is not None:
        Ftr = features[pool]
    elif representation == "ranks":
        # The paper's a-posteriori "rank features" (§6.1): each dataset as the ranks of
        # the trial's models on it, which drops dataset difficulty from the geometry.
        Ftr = ranks[:, pool].T
    else:
        Ftr = None
    out = np.empty((len(specs), len(metrics), len(ks)))
    for s, (cls, params) in enumerate(specs):
        subsets = _select_all(cls, params, Xtr, Ftr, ks, child_seeds[s])
        R_sub = np.stack([subset_mean_ranks(ranks, pool[sub])[0] for sub in subsets])
        vals = rank_metrics(R_sub, ref, metrics)
        for m, name in enumerate(metrics):
            out[s, m] = vals[name]
    return out


def _check_protocol_args(X, features, trials, k_max, k_min, alpha, variation, representation):
    """Refuse settings the protocol cannot run; returns ``(features as a float array or None, k_max)``, ``k_max``
    None being :data:`DEFAULT_K_MAX` cut to the trials' pool of datasets."""
    n_models, n_datasets = X.shape
    if representation not in ("scores", "ranks"):
        raise MethodError(f"representation must be 'scores' or 'ranks', got {representation!r}")
    if variation not in ("datasets", "models"):
        raise MethodError(f"variation must be 'datasets' or 'models', got {variation!r}")
    if not 0 < alpha <= 1:
        raise MethodError(f"alpha must lie in (0, 1], got {alpha}")
    if int(trials) < 1:
        raise MethodError(f"trials must be >= 1, got {trials}")
    pool_size = int(np.floor(alpha * n_datasets)) if variation == "datasets" else n_datasets
    if variation == "models" and int(np.floor(alpha * n_models)) < 2:
        raise MethodError(f"alpha={alpha} leaves fewer than 2 of {n_models} models per trial")
    if k_max is None:
        # The paper's 20 is a default, not a requirement: a benchmark of 14 datasets (HELM Classic, a pool of 11)
        # must run without the user working out the pool size; an explicit k_max above it is still refused.
        k_max = min(DEFAULT_K_MAX, pool_size)
    if not (1 <= k_min <= k_max):
        raise MethodError(f"need 1 <= k_min <= k_max, got k_min={k_min}, k_max={k_max}")
    if k_max > pool_size:
        raise MethodError(f"k_max={k_max} exceeds the pool of {pool_size} datasets (alpha={alpha} of {n_datasets})")
    if features is not None:
        features = np.asarray(features, dtype=float)
        if features.ndim != 2 or features.shape[0] != n_datasets:
            raise MethodError(f"features must be (n_datasets={n_datasets}, p), got {features.shape}")
    return features, k_max


def run_protocol(
    X,
    selectors=None,
    *,
    features=None,
    trials: int = 200,
    k_max: Optional[int] = None,
    k_min: int = 2,
    alpha: float = 0.8,
    variation: str = "datasets",
    metrics: Optional[Sequence[str]] = None,
    seed: int = 0,
    n_jobs: Optional[int] = None,
    ci: float = 0.95,
    representation: str = "scores",
    show_progress: Optional[bool] = None,
) -> ProtocolResult:
    """Run the rank-preservation protocol.

    Parameters
    ----------
    X : array-like, shape (n_models, n_datasets)
        Complete performance matrix, higher is better.
    selectors : sequence, optional
        Registered selector names, or ``(name, cls, params)`` triples; default
        the registered ones among :data:`DEFAULT_SELECTORS`. A selector with an
        ``n_select`` parameter and ``nested`` not True is fitted once per k;
        one with a ``random_state`` parameter gets a seed per trial (and per k
        when it is fitted per k). The first of :data:`RANDOM_BASELINES`
        present is the baseline of gains and "vs random" tests.
    features : array-like, shape (n_datasets, p), optional
        A-priori dataset representation passed to every selector (rows of the
        trial's pool); default: selectors use the performance columns of the
        trial's models.
    trials : int
        T (eq. 12).
    k_max, k_min : int
        Subset sizes k_min..k_max (paper: 2..20). Default ``k_max``: 20, or the trials' pool of datasets
        (``floor(alpha * n_datasets)`` with ``variation="datasets"``) when smaller; an explicit ``k_max`` above
        the pool is an error.
    alpha : float
        Pool fraction in (0, 1); the pool has floor(alpha * n) items.
    variation : {"datasets", "models"}
        Dataset-pool variation (reference: R_D on every dataset and model) or
        model-pool variation (all datasets; reference: R_D restricted to the
        trial's models).
    metrics : sequence of str, optional
        Rank metrics; default all five.
    seed : int
        Root of ``SeedSequence(seed).spawn(trials)``.
    n_jobs : int or None
        joblib workers. None (default) takes backend and worker count from
        ``joblib.parallel_config`` (1 worker, in process, when nothing is
        configured); an int overrides the configured count (1 = sequential).
    ci : float
        Confidence level of the quantile bands.
    representation : {"scores", "ranks"}
        Without ``features``: "scores" lets selectors use the performance
        columns of the trial's models (``X``); "ranks" passes each dataset's
        vector of per-dataset model ranks as features (the paper's oracle "rank
        features", §6.1). Both are a-posteriori representations.

    Returns
    -------
    ProtocolResult

    Notes
    -----
    ``X`` has one score per cell (the store keeps, e.g., accuracy averaged
    over resamples), so a dataset's ranks are the ranks of those scores. The
    paper ranks the models on every fold and averages the fold ranks (§3),
    which pulls mean ranks towards the middle and so lowers MAE: on the TSC
    bake-off (40 x 112, 30 resamples) Random's AUC(MAE) over k = 2..20 is
    34.6 with per-resample ranks and 40.8 with ranks of the mean accuracy,
    while AUC(Spearman) barely moves (16.41 vs 16.30); with 35 classifiers
    per draw, per-resample ranks give 30.2, the paper's Random 31.06
    (``benchmarks/quality_compare_fold_ranks.py``).

    References
    ----------
    Gusev & Zaytsev (2026), §5.1 (Stages 1-3) and §6 "Evaluation protocol".
    """
    from joblib import Parallel, delayed

    from ...base import check_matrix
    from ...plugin_guard import for_workers
    from ...report import progress

    X = check_matrix(X, allow_nan=False, min_rows=3, min_cols=3)
    n_models, n_datasets = X.shape
    features, k_max = _check_protocol_args(X, features, trials, k_max, k_min, alpha, variation, representation)
    metrics = check_metrics(metrics)
    specs_by_name = _resolve(selectors)
    names = list(specs_by_name)
    specs = list(specs_by_name.values())
    ks = np.arange(int(k_min), int(k_max) + 1)
    ranks_all = rank_per_dataset(X)
    R_full = mean_rank(X)
    seeds = np.random.SeedSequence(int(seed)).spawn(int(trials))
    t0 = time.perf_counter()
    parallel = Parallel(n_jobs=n_jobs, return_as="generator")
    # A worker imports a plugin's class afresh: for_workers guards it there too and names the plugin in its errors.
    trial = for_workers(_run_trial, [cls for cls, _ in specs])
    jobs = (delayed(trial)(X, ranks_all, R_full, features, specs, ks, metrics, variation, alpha, ss, representation) for ss in seeds)
    results = list(progress(parallel(jobs), total=len(seeds), desc="compare trials", disable=None if show_progress is None else not show_progress))
    values = np.stack(results, axis=2)  # (n_sel, n_metrics, T, n_k)
    params = {"models": int(n_models), "datasets": int(n_datasets), "trials": int(trials), "k_min": int(k_min), "k_max": int(k_max), "alpha": float(alpha),
              "variation": variation, "seed": int(seed), "ci": float(ci), "n_jobs": n_jobs,
              "selectors": {n: {"class": f"{c.__module__}.{c.__qualname__}", "params": p} for n, (c, p) in specs_by_name.items()},
              "features": None if features is None else list(features.shape),
              "representation": "features" if features is not None else representation}
    return ProtocolResult(names, metrics, ks, values, params, time.perf_counter() - t0)



def oriented(df: pd.DataFrame) -> pd.DataFrame:
    """Flip raw (un-normalised) lower-is-better columns so higher is always better (the protocol ranks by score):
    :func:`harness_ext.methods.ranking.orient_raw_columns` without the names."""
    from ..ranking import orient_raw_columns

    return orient_raw_columns(df)[0]
