"""The rank-preservation protocol of Gusev & Zaytsev: compare dataset selectors.

For T trials the available pool is perturbed (a random fraction ``alpha`` of
the datasets, or of the models), every selector picks k = 2..k_max datasets
from the pool, and the mean-rank ranking those datasets induce is compared
with the full-benchmark ranking (:mod:`harness_ext.methods.ranking`). Per selector and
metric this gives a T x n_k array of values, summarised as

* mean curves with empirical-quantile confidence bands (eq. 15-16),
* trapezoid AUC over k (eq. 17), per trial and its mean +- std (Table 1),
* k*: the smallest k whose mean curve, or whose worst CI side
  ("conservative"), reaches a target such as Spearman >= 0.90 (Table 2),
* gains over random and one-sided paired Wilcoxon tests of the best selector
  against each other one on the per-trial AUCs, Holm-corrected within each
  metric (Table 3).

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
Preserving Model Rankings", KDD 2026, §5.1 (protocol, eq. 12-16), §6 (eq. 17,
Tables 1-3, k* in §6.2, significance in §6.3), App. B (relative gain).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy as np
import pandas as pd

from ..errors import HarnessExtError, MethodError
from .ranking import METRIC_HIGHER_IS_BETTER, METRIC_LABELS, check_metrics, rank_metrics, rank_per_dataset, subset_mean_ranks

#: Selectors compared by default (those registered are used): the paper's five and SimBA's
#: greedy coverage, the product's default ``reduce`` selector.
DEFAULT_SELECTORS = ("random-subset", "kmeans", "farthest-first-cosine", "farthest-first-euclidean", "a-optimal", "d-optimal",
                     "greedy-coverage")
#: Table 2 targets of the paper (§6.2).
DEFAULT_TARGETS = ("spearman>=0.90", "mae<=1.5")
#: Names of the Random baseline, in order of preference: the paper's fresh k-subset per k,
#: then SimBA's one random order (prefixes).
RANDOM_BASELINES = ("random-subset", "random")


def baseline_name(selectors: Sequence[str]) -> Optional[str]:
    """The selector that gains and the "vs random" tests are measured against, or None."""
    return next((b for b in RANDOM_BASELINES if b in selectors), None)


# ----------------------------------------------------------------------------- statistics
def trapezoid_auc(values, axis: int = -1) -> np.ndarray:
    """Trapezoid area under a curve sampled at consecutive k (unit spacing).

    ``AUC(y) = sum_{k=2}^{k_max-1} (y(k) + y(k+1)) / 2`` (eq. 17).

    References
    ----------
    Gusev & Zaytsev (2026), §6, eq. (17).
    """
    y = np.asarray(values, dtype=float)
    return np.trapezoid(y, dx=1.0, axis=axis)


def quantile_band(values, ci: float = 0.95, axis: int = 0):
    """Empirical-quantile confidence interval ``[F^-1(beta/2), F^-1(1 - beta/2)]``, beta = 1 - ci.

    References
    ----------
    Gusev & Zaytsev (2026), §5.1, eq. (16).
    """
    if not 0 < ci < 1:
        raise MethodError(f"ci must lie in (0, 1), got {ci}")
    beta = 1.0 - ci
    v = np.asarray(values, dtype=float)
    lo, hi = np.nanquantile(v, [beta / 2, 1 - beta / 2], axis=axis)
    return lo, hi


def holm(pvalues) -> np.ndarray:
    """Holm step-down adjusted p-values (NaN entries are left out and stay NaN).

    Sorted ascending, ``p_adj(i) = max_{j <= i} min(1, (m - j + 1) p(j))``.

    References
    ----------
    Holm (1979); used by Gusev & Zaytsev (2026), §6.3.
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    q = p[ok]
    m = q.size
    if m == 0:
        return out
    order = np.argsort(q, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * q[order]))
    res = np.empty(m)
    res[order] = adj
    out[ok] = res
    return out


def paired_wilcoxon(auc_trials, ref: int, higher_is_better: bool, ref_is_better: bool = True) -> np.ndarray:
    """One-sided paired Wilcoxon signed-rank p-values of every selector against ``ref``.

    Parameters
    ----------
    auc_trials : array-like, shape (n_selectors, T)
        Per-trial AUC of each selector (trials are the pairs).
    ref : int
        Row of the reference selector.
    higher_is_better : bool
        Direction of the metric.
    ref_is_better : bool
        True: H1 "the reference is better than selector i" (best vs the rest).
        False: H1 "selector i is better than the reference" (each vs random).

    Returns
    -------
    numpy.ndarray, shape (n_selectors,)
        Raw p-values (``scipy.stats.wilcoxon(..., alternative="greater")``,
        zero differences dropped); NaN for ``ref``; 1 where all differences are 0.
    """
    from scipy.stats import wilcoxon

    A = np.asarray(auc_trials, dtype=float)
    sign = 1.0 if higher_is_better else -1.0
    d_all = sign * (A[ref][None, :] - A)
    if not ref_is_better:
        d_all = -d_all
    p = np.full(A.shape[0], np.nan)
    others = np.array([i for i in range(A.shape[0]) if i != ref], dtype=int)
    if others.size:
        d = d_all[others]
        nonzero = (np.abs(d) > 0).any(axis=1)
        pv = np.ones(others.size)
        if nonzero.any():
            with np.errstate(all="ignore"):
                res = wilcoxon(d[nonzero], alternative="greater", axis=1, zero_method="wilcox")
            pv[nonzero] = np.where(np.isnan(res.pvalue), 1.0, res.pvalue)
        p[others] = pv
    return p


def wilcoxon_vs_best(auc_trials, higher_is_better: bool):
    """One-sided paired Wilcoxon tests of the best selector against every other, Holm-corrected.

    Parameters
    ----------
    auc_trials : array-like, shape (n_selectors, T)
        Per-trial AUC of each selector.
    higher_is_better : bool
        Direction of the metric.

    Returns
    -------
    best : int
        Index of the selector with the best mean AUC.
    p_raw, p_holm : numpy.ndarray, shape (n_selectors,)
        p-values of "best is better than this one", raw and Holm-corrected over
        the n_selectors - 1 comparisons; NaN for the best itself.

    References
    ----------
    Gusev & Zaytsev (2026), §6.3 (one-sided paired Wilcoxon, Holm within each
    domain-metric block); scipy.stats.wilcoxon.
    """
    A = np.asarray(auc_trials, dtype=float)
    sign = 1.0 if higher_is_better else -1.0
    best = int(np.nanargmax(sign * np.nanmean(A, axis=1)))
    p = paired_wilcoxon(A, best, higher_is_better, ref_is_better=True)
    return best, p, holm(p)


def relative_gain(auc_method, auc_random, higher_is_better: bool):
    """Relative AUC gain over random, positive = better than random.

    ``(AUC_m - AUC_rand) / AUC_rand`` for higher-is-better metrics and
    ``(AUC_rand - AUC_m) / AUC_rand`` for MAE (App. B).
    """
    m = np.asarray(auc_method, dtype=float)
    r = np.asarray(auc_random, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (m - r) / np.abs(r) if higher_is_better else (r - m) / np.abs(r)


def parse_target(text: str):
    """``"spearman>=0.9"`` -> ``("spearman", ">=", 0.9)``."""
    m = re.match(r"^\s*([A-Za-z@0-9_]+)\s*(>=|<=)\s*([-+0-9.eE]+)\s*$", str(text))
    if not m:
        raise MethodError(f"bad target {text!r}: use METRIC>=VALUE or METRIC<=VALUE, e.g. spearman>=0.9")
    (metric,) = check_metrics([m.group(1)])
    return metric, m.group(2), float(m.group(3))


def k_star(ks, curve, op: str, value: float):
    """Smallest k whose curve value meets ``op value``, or None.

    The smallest such k, even if a larger k falls back below the target
    (the paper: "the smallest subset size k* at which ... reaches a target").

    References
    ----------
    Gusev & Zaytsev (2026), §6.2.
    """
    c = np.asarray(curve, dtype=float)
    ok = c >= value if op == ">=" else c <= value
    idx = np.flatnonzero(ok)
    return int(np.asarray(ks)[idx[0]]) if idx.size else None


# ----------------------------------------------------------------------------- protocol
@dataclass
class ProtocolResult:
    """Everything the protocol measured.

    ``values[s, m, t, j]`` is metric ``metrics[m]`` of selector ``selectors[s]``
    in trial ``t`` at subset size ``ks[j]``.
    """

    selectors: List[str]
    metrics: List[str]
    ks: np.ndarray
    values: np.ndarray
    params: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def baseline(self) -> Optional[str]:
        """Name of the Random baseline among the selectors (see :data:`RANDOM_BASELINES`)."""
        return baseline_name(self.selectors)

    def _m(self, metric: str) -> int:
        return self.metrics.index(check_metrics([metric])[0])

    def mean_curves(self, metric: str) -> np.ndarray:
        """``(n_selectors, n_k)`` mean over trials (eq. 15)."""
        return np.nanmean(self.values[:, self._m(metric)], axis=1)

    def bands(self, metric: str, ci: Optional[float] = None):
        """``(lower, upper)``, each ``(n_selectors, n_k)`` (eq. 16)."""
        return quantile_band(self.values[:, self._m(metric)], ci or self.params.get("ci", 0.95), axis=1)

    def auc_trials(self, metric: str) -> np.ndarray:
        """``(n_selectors, T)`` per-trial trapezoid AUC over k."""
        return trapezoid_auc(self.values[:, self._m(metric)], axis=-1)

    # -- tables --------------------------------------------------------------------------
    def curves_frame(self) -> pd.DataFrame:
        """Long table: selector, metric, k, mean, lower, upper."""
        rows = []
        for metric in self.metrics:
            mean = self.mean_curves(metric)
            lo, hi = self.bands(metric)
            for s, name in enumerate(self.selectors):
                rows.append(pd.DataFrame({"selector": name, "metric": metric, "k": self.ks, "mean": mean[s], "lower": lo[s], "upper": hi[s]}))
        return pd.concat(rows, ignore_index=True)

    def auc_table(self) -> pd.DataFrame:
        """Table 1: mean and std over trials of the per-trial AUC, per selector and metric."""
        out = {}
        for metric in self.metrics:
            a = self.auc_trials(metric)
            out[(metric, "mean")] = np.nanmean(a, axis=1)
            out[(metric, "std")] = np.nanstd(a, axis=1, ddof=1) if a.shape[1] > 1 else np.zeros(a.shape[0])
        df = pd.DataFrame(out, index=pd.Index(self.selectors, name="selector"))
        return df

    def kstar_table(self, targets: Sequence[str] = DEFAULT_TARGETS, ci: Optional[float] = None) -> pd.DataFrame:
        """Table 2: per selector and target, k* on the mean curve and conservative k*.

        Conservative uses the worst side of the CI: the lower quantile for
        ">=" targets, the upper quantile for "<=" targets.
        """
        rows = []
        for t in targets:
            metric, op, value = parse_target(t) if isinstance(t, str) else t
            if metric not in self.metrics:
                raise MethodError(f"target {t!r} uses metric {metric!r}, which was not computed")
            mean = self.mean_curves(metric)
            lo, hi = self.bands(metric, ci)
            worst = lo if op == ">=" else hi
            label = f"{METRIC_LABELS[metric]} {op} {value:g}"
            for s, name in enumerate(self.selectors):
                rows.append({"target": label, "selector": name, "k*_mean": k_star(self.ks, mean[s], op, value),
                             "k*_conservative": k_star(self.ks, worst[s], op, value)})
        df = pd.DataFrame(rows)
        for c in ("k*_mean", "k*_conservative"):
            df[c] = df[c].astype("Int64")
        return df

    def kstar_summary(self, targets: Sequence[str] = DEFAULT_TARGETS, ci: Optional[float] = None) -> pd.DataFrame:
        """Best / median / worst k* over the non-random selectors that reach the target (the paper's Table 2 layout)."""
        kt = self.kstar_table(targets, ci)
        base = self.baseline
        rows = []
        for label, g in kt.groupby("target", sort=False):
            g = g[g["selector"] != base]
            row = {"target": label}
            for col, name in (("k*_mean", "mean k*"), ("k*_conservative", "cons. k*")):
                v = g[col].dropna().to_numpy(dtype=float)
                row[name] = "-" if v.size == 0 else f"{v.min():g} / {np.median(v):g} / {v.max():g}"
            r = kt[(kt["target"] == label) & (kt["selector"] == base)]
            if len(r):
                row["random mean k*"] = "-" if pd.isna(r["k*_mean"].iloc[0]) else int(r["k*_mean"].iloc[0])
                row["random cons. k*"] = "-" if pd.isna(r["k*_conservative"].iloc[0]) else int(r["k*_conservative"].iloc[0])
            rows.append(row)
        return pd.DataFrame(rows)

    def significance_table(self, alpha_level: float = 0.05) -> pd.DataFrame:
        """Table 3, one row per metric and selector.

        Columns: mean AUC, whether it is the best, AUC gain over random
        (direction-aware: random - m for MAE, m - random otherwise), relative
        gain over random, Holm-corrected p of "best beats this selector"
        (Holm over the comparisons with the best), whether that is significant
        at ``alpha_level``, and Holm-corrected p of "this selector beats random"
        (a second family: every non-random selector against random).
        """
        rows = []
        for metric in self.metrics:
            hib = METRIC_HIGHER_IS_BETTER[metric]
            A = self.auc_trials(metric)
            best, p_raw, p_holm = wilcoxon_vs_best(A, hib)
            means = np.nanmean(A, axis=1)
            r = self.selectors.index(self.baseline) if self.baseline else None
            p_rand = holm(paired_wilcoxon(A, r, hib, ref_is_better=False)) if r is not None else np.full(len(A), np.nan)
            for s, name in enumerate(self.selectors):
                gain = rel = np.nan
                if r is not None:
                    gain = (means[s] - means[r]) if hib else (means[r] - means[s])
                    rel = relative_gain(means[s], means[r], hib)
                rows.append({
                    "metric": METRIC_LABELS[metric], "selector": name, "auc_mean": means[s], "best": s == best,
                    "gain_vs_random": gain, "rel_gain_vs_random": rel, "p_raw_vs_best": p_raw[s],
                    "p_holm_vs_best": p_holm[s], "worse_than_best": bool(p_holm[s] < alpha_level) if s != best else False,
                    "p_holm_better_than_random": p_rand[s],
                })
        return pd.DataFrame(rows)

    def significance_summary(self, alpha_level: float = 0.05) -> pd.DataFrame:
        """The paper's compact Table 3: best, gain over random, Holm p vs random, near-top n.s."""
        full = self.significance_table(alpha_level)
        base = self.baseline
        rows = []
        for metric, g in full.groupby("metric", sort=False):
            b = g[g["best"]].iloc[0]
            rnd = g[g["selector"] == base]
            ns = g[(~g["best"]) & (g["p_holm_vs_best"] >= alpha_level)]["selector"].tolist()
            rows.append({
                "metric": metric, "best": b["selector"],
                "gain": b["gain_vs_random"] if b["selector"] != base else np.nan,
                "rel_gain_%": 100 * b["rel_gain_vs_random"] if b["selector"] != base else np.nan,
                "p_holm_vs_random": rnd["p_holm_vs_best"].iloc[0] if len(rnd) and b["selector"] != base else np.nan,
                "near_top_ns": ", ".join(ns) if ns else "-",
            })
        return pd.DataFrame(rows)


def _resolve(selectors) -> Dict[str, tuple]:
    """name -> (cls, params). Accepts registered names, or (name, cls, params) triples."""
    from ..plugin_manager import get_registration

    if selectors is None:
        from ..plugin_manager import get_registrations

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


def run_protocol(
    X,
    selectors=None,
    *,
    features=None,
    trials: int = 200,
    k_max: int = 20,
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
        Subset sizes k_min..k_max (paper: 2..20).
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

    from ..base import check_matrix
    from .ranking import mean_rank
    from ..report import progress

    X = check_matrix(X, allow_nan=False, min_rows=3, min_cols=3)
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
    if not (1 <= k_min <= k_max):
        raise MethodError(f"need 1 <= k_min <= k_max, got k_min={k_min}, k_max={k_max}")
    if k_max > pool_size:
        raise MethodError(f"k_max={k_max} exceeds the pool of {pool_size} datasets (alpha={alpha} of {n_datasets})")
    if features is not None:
        features = np.asarray(features, dtype=float)
        if features.ndim != 2 or features.shape[0] != n_datasets:
            raise MethodError(f"features must be (n_datasets={n_datasets}, p), got {features.shape}")
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
    jobs = (delayed(_run_trial)(X, ranks_all, R_full, features, specs, ks, metrics, variation, alpha, ss, representation) for ss in seeds)
    results = list(progress(parallel(jobs), total=len(seeds), desc="compare trials", disable=None if show_progress is None else not show_progress))
    values = np.stack(results, axis=2)  # (n_sel, n_metrics, T, n_k)
    params = {"trials": int(trials), "k_min": int(k_min), "k_max": int(k_max), "alpha": float(alpha),
              "variation": variation, "seed": int(seed), "ci": float(ci), "n_jobs": n_jobs,
              "selectors": {n: {"class": f"{c.__module__}.{c.__qualname__}", "params": p} for n, (c, p) in specs_by_name.items()},
              "features": None if features is None else list(features.shape),
              "representation": "features" if features is not None else representation}
    return ProtocolResult(names, metrics, ks, values, params, time.perf_counter() - t0)


# ----------------------------------------------------------------------------- plotting
def plot_curves(result: ProtocolResult, path, metrics: Optional[Sequence[str]] = None, targets: Sequence[str] = ()):
    """Mean curve and CI band per selector, one panel per metric; returns the PNG path.

    ``targets`` (e.g. ``"spearman>=0.9"``) are drawn as dotted lines on their
    metric's panel, so k* can be read off the plot.
    """
    from ..report import get_pyplot, save_figure

    plt = get_pyplot()
    from matplotlib.ticker import MaxNLocator

    metrics = list(metrics or result.metrics)
    ncols = min(3, len(metrics))
    nrows = int(np.ceil(len(metrics) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.9 * nrows), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, metric in zip(axes.ravel(), metrics):
        mean = result.mean_curves(metric)
        lo, hi = result.bands(metric)
        base = result.baseline
        for s, name in enumerate(result.selectors):
            c = "black" if name == base else colours[s % len(colours)]
            ls = "--" if name == base else "-"
            ax.plot(result.ks, mean[s], ls, color=c, lw=1.6, label=name)
            ax.fill_between(result.ks, lo[s], hi[s], color=c, alpha=0.12, lw=0)
        for t in targets:
            t_metric, _, t_value = parse_target(t)
            if t_metric == metric:
                ax.axhline(t_value, color="grey", ls=":", lw=1.2)
        arrow = "↑" if METRIC_HIGHER_IS_BETTER[metric] else "↓"
        ax.set_title(f"{METRIC_LABELS[metric]} {arrow}")
        ax.set_xlabel("subset size k")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[len(metrics):]:
        ax.axis("off")
    handles, labels = axes.ravel()[0].get_legend_handles_labels()
    ci = int(round(100 * result.params.get("ci", 0.95)))
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), frameon=False, bbox_to_anchor=(0.5, -0.02))
    fig.suptitle(f"Rank preservation vs subset size: mean and {ci}% quantile band over T={result.values.shape[2]} trials "
                 f"({result.params.get('variation')} variation, alpha={result.params.get('alpha')}, "
                 f"representation: {result.params.get('representation')})", fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 0.97))
    return save_figure(fig, path)


# ----------------------------------------------------------------------------- CLI
def read_features(path, columns) -> np.ndarray:
    """Read a dataset x feature CSV (first column: dataset name) aligned to ``columns``.

    Non-numeric feature columns are dropped. Every dataset of the matrix must
    have a row; extra rows are ignored. Empty cells are allowed (the selectors
    fill them with the feature's mean); infinite values are an error.
    """
    try:
        df = pd.read_csv(path, index_col=0)
    except (OSError, ValueError) as exc:
        raise HarnessExtError(f"cannot read features CSV {path}: {exc}") from exc
    df.index = df.index.astype(str).str.strip()
    num = df.select_dtypes(include=[np.number])
    if num.shape[1] == 0:
        raise HarnessExtError(f"features CSV {path} has no numeric columns")
    if num.index.duplicated().any():
        dup = num.index[num.index.duplicated()].unique()[:5].tolist()
        raise HarnessExtError(f"features CSV {path} lists datasets more than once: {dup}")
    missing = [c for c in columns if c not in num.index]
    if missing:
        raise HarnessExtError(f"features CSV {path} has no row for {len(missing)} dataset(s) of the matrix, e.g. {missing[:5]}")
    F = num.loc[list(columns)].to_numpy(dtype=float)
    bad = np.isinf(F).any(axis=1)
    if bad.any():
        names = [c for c, b in zip(columns, bad) if b][:5]
        raise HarnessExtError(f"features CSV {path} has infinite values for {int(bad.sum())} dataset(s), e.g. {names}")
    return F


def _oriented(df: pd.DataFrame) -> pd.DataFrame:
    """Flip raw (un-normalised) lower-is-better columns so higher is always better."""
    meta = df.attrs.get("datasets") or {}
    flip = [c for c in df.columns
            if isinstance(meta.get(c), dict) and meta[c].get("higher_is_better") is False
            and (meta[c].get("normalisation") or {}).get("description") == "raw"]
    if not flip:
        return df
    out = df.copy()
    out[flip] = -out[flip]
    return out


def run(args) -> int:
    from ..cli.options import matrix_from_args
    from ..report import format_table

    df = matrix_from_args(args)
    if df.isna().any().any():
        n = int(df.isna().sum().sum())
        raise HarnessExtError(f"the matrix has {n} missing cells; the protocol needs a complete matrix (add --dense)")
    df = _oriented(df)
    features = read_features(args.features, df.columns) if args.features else None
    targets = args.target or list(DEFAULT_TARGETS)
    for t in targets:
        parse_target(t)
    res = run_protocol(df.to_numpy(dtype=float), args.selectors, features=features, trials=args.trials, k_max=args.k_max,
                       alpha=args.alpha, variation=args.variation, metrics=args.metrics, seed=args.seed,
                       n_jobs=args.n_jobs, ci=args.ci, representation=args.representation)
    rep = ("a-priori features from " + str(args.features) if features is not None else
           {"scores": "performance columns", "ranks": "per-dataset rank vectors"}[args.representation] + " of the trial's models")
    print(f"matrix: {df.shape[0]} models x {df.shape[1]} datasets; T={args.trials} trials, {args.variation} variation, "
          f"alpha={args.alpha}, k=2..{args.k_max}, seed={args.seed}; representation: {rep}")
    print(f"runtime: {res.seconds:.1f} s with n_jobs={args.n_jobs}\n")

    auc = res.auc_table()
    t1 = pd.DataFrame(index=auc.index)
    for m in res.metrics:
        arrow = "↑" if METRIC_HIGHER_IS_BETTER[m] else "↓"
        t1[f"AUC({METRIC_LABELS[m]}) {arrow}"] = [f"{a:.2f} ± {s:.2f}" for a, s in zip(auc[(m, "mean")], auc[(m, "std")])]
    print(f"Table 1. AUC over k=2..{args.k_max} (trapezoid), mean ± std over trials")
    print(format_table(t1))
    print()
    kt = res.kstar_table(targets)
    wide = kt.pivot(index="selector", columns="target", values=["k*_mean", "k*_conservative"])
    wide = wide.reindex(res.selectors)
    wide.columns = [f"{t}: {'mean' if c == 'k*_mean' else 'cons.'} k*" for c, t in wide.columns]
    wide = wide.astype(object).where(wide.notna(), "-")
    print(f"Table 2. k*: smallest k reaching the target on the mean curve / on the worst side of the {int(100 * args.ci)}% band")
    print(format_table(wide))
    print()
    print(format_table(res.kstar_summary(targets), index=False))
    print("(best / median / worst over the non-random selectors that reach the target; '-' = none for k <= k_max)\n")
    sig = res.significance_summary()
    print("Table 3. Best selector per metric, AUC gain over random, Holm-corrected one-sided Wilcoxon p vs random, "
          "selectors not significantly worse than the best (p_holm >= 0.05)")
    print(format_table(sig, floatfmt="{:.3g}", index=False))
    print()
    full = res.significance_table()
    base = res.baseline
    if base:
        g = full[full["selector"] != base].copy()
        g["cell"] = [f"{100 * r:+.1f}% (p={p:.2g})" for r, p in zip(g["rel_gain_vs_random"], g["p_holm_better_than_random"])]
        wide = g.pivot(index="selector", columns="metric", values="cell").reindex([x for x in res.selectors if x != base])
        wide = wide[[METRIC_LABELS[m] for m in res.metrics]]
        print("Relative AUC gain over random (positive = better) and Holm-corrected one-sided Wilcoxon p that the selector beats random")
        print(format_table(wide))
        print()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    res.curves_frame().to_csv(out / "curves.csv", index=False)
    auc.columns = [f"{m}_{s}" for m, s in auc.columns]
    auc.to_csv(out / "auc.csv")
    kt.to_csv(out / "kstar.csv", index=False)
    full.to_csv(out / "significance.csv", index=False)
    png = plot_curves(res, out / "compare_curves.png", targets=targets)
    print(f"wrote {png} and curves.csv, auc.csv, kstar.csv, significance.csv (all selectors vs the best) to {out}")
    return 0
