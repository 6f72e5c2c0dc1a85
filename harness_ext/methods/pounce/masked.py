"""Zhao et al.'s protocol: hide observed cells, complete the matrix, score the hidden cells.

RMSE on the hidden cells is compared with the global-mean and mean-of-means baselines;
predictors with a predictive std are checked for calibration (share of hidden cells inside
the central interval) and used for active evaluation (reveal the most uncertain cells first,
against random and an oracle). The multi-metric variant masks a models x datasets x metrics
tensor and compares tensor factorisation with one matrix per metric.

References
----------
Zhao et al. §3.2-3.3, §4.2-4.4, Tables 1, 11-12, Fig. 3-4.
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence

import numpy as np
import pandas as pd

from ...base import BasePredictor, check_matrix, clone
from ...errors import MethodError
from ...store.matrix import load_metric_tensor  # noqa: F401  (built in the store; importable here as before)
from .results import ActiveResult, CompletionResult, TensorResult

#: Zhao et al. Table 11, overall RMSE on the CrossPred matrix (raw units), by hidden ratio.
PAPER_PMF_RMSE = {
    "global_mean": {0.2: 0.367, 0.4: 0.368, 0.6: 0.370, 0.8: 0.373, 0.9: 0.381, 0.95: 0.458},
    "mean_of_means": {0.2: 0.319, 0.4: 0.320, 0.6: 0.322, 0.8: 0.329, 0.9: 0.339, 0.95: 0.385},
    "pmf (MCMC)": {0.2: 0.192, 0.4: 0.199, 0.6: 0.220, 0.8: 0.258, 0.9: 0.313, 0.95: 0.462},
}


def hide_cells(X, ratio: float, rng: np.random.Generator) -> np.ndarray:
    """Boolean mask of ``int(ratio * n_observed)`` observed cells chosen uniformly (Zhao et al. ``mask_randomly``)."""
    X = np.asarray(X, dtype=float)
    if not 0 < ratio < 1:
        raise MethodError(f"hidden ratio must be in (0, 1), got {ratio!r}")
    obs = np.flatnonzero(~np.isnan(X).ravel())
    hide = rng.choice(obs, size=int(ratio * obs.size), replace=False)
    mask = np.zeros(X.size, bool)
    mask[hide] = True
    return mask.reshape(X.shape)


def interval_coverage(truth, mean, std, level: float = 0.9) -> float:
    """Share of cells whose true value lies in the central Gaussian ``level`` interval ``mean +- z std``."""
    from scipy import stats

    truth, mean, std = (np.asarray(a, dtype=float) for a in (truth, mean, std))
    z = stats.norm.ppf(0.5 + level / 2)
    ok = ~np.isnan(truth)
    return float(np.mean(np.abs(truth[ok] - mean[ok]) <= z * std[ok]))


def masked_rmse(
    X,
    predictors: Dict[str, BasePredictor],
    hidden_ratios: Sequence[float] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
    n_repeats: int = 1,
    level: float = 0.9,
    random_state: int = 0,
    progress: bool = False,
) -> pd.DataFrame:
    """RMSE on randomly hidden cells, for each predictor and hidden ratio (Zhao et al. §4.2, Fig. 3, Table 11).

    Every predictor sees the same masks (repeat ``r`` uses seed
    ``random_state + r``). Errors are in the units of ``X``.

    Returns
    -------
    pandas.DataFrame
        Long format: ``ratio, repeat, predictor, rmse, mae, coverage`` (share of
        hidden cells inside the ``level`` interval; NaN without ``std_``),
        ``mean_std`` (average predictive std on hidden cells) and ``n_hidden``.
    """
    from ...report import progress as progress_bar

    Xa = check_matrix(X)
    rows = []
    tasks = [(r, ratio) for r in range(int(n_repeats)) for ratio in hidden_ratios]
    for r, ratio in progress_bar(tasks, total=len(tasks), desc="pounce masked", disable=None if progress else True):
        mask = hide_cells(Xa, ratio, np.random.default_rng(random_state + r))
        train = np.where(mask, np.nan, Xa)
        for name, est in predictors.items():
            fitted = clone(est).fit(train)
            err = fitted.mean_[mask] - Xa[mask]
            std = fitted.std_
            rows.append({
                "ratio": ratio, "repeat": r, "predictor": name,
                "rmse": float(np.sqrt(np.mean(err ** 2))), "mae": float(np.mean(np.abs(err))),
                "coverage": interval_coverage(Xa[mask], fitted.mean_[mask], std[mask], level) if std is not None else np.nan,
                "mean_std": float(np.mean(std[mask])) if std is not None else np.nan,
                "n_hidden": int(mask.sum()),
            })
    return pd.DataFrame(rows)


def active_evaluation(
    X,
    predictor: BasePredictor,
    initial: float = 0.2,
    pool: float = 0.6,
    step: float = 0.05,
    n_steps: int = 6,
    strategies: Sequence[str] = ("uncertainty", "random", "oracle"),
    n_repeats: int = 1,
    random_state: int = 0,
    progress: bool = False,
) -> pd.DataFrame:
    """Active evaluation: which cells to evaluate next (Zhao et al. §3.2, §4.3, Fig. 4).

    Observed cells are split into ``initial`` (known), ``pool`` (may be
    evaluated) and the rest (test). Each step reveals ``step`` x (all observed
    cells) from the pool -- the most uncertain (largest ``std_``), random ones,
    or (oracle) those with the largest actual error -- refits, and records
    RMSE on the test cells.

    Returns
    -------
    pandas.DataFrame
        ``repeat, strategy, extra`` (fraction of observed cells revealed so
        far), ``rmse``, ``improvement`` (initial RMSE minus current).

    Raises
    ------
    MethodError
        If ``uncertainty`` is requested and the predictor has no ``std_``.
    """
    from ...report import progress as progress_bar

    Xa = check_matrix(X)
    if initial <= 0 or pool <= 0 or initial + pool >= 1:
        raise MethodError("need initial > 0, pool > 0 and initial + pool < 1")
    unknown = set(strategies) - {"uncertainty", "random", "oracle"}
    if unknown:
        raise MethodError(f"unknown active-evaluation strategies: {sorted(unknown)}")
    obs = np.flatnonzero(~np.isnan(Xa).ravel())
    n_obs = obs.size
    batch = max(1, int(round(step * n_obs)))
    out = []
    tasks = [(r, s) for r in range(int(n_repeats)) for s in strategies]
    initial_fit = {}
    for r, strategy in progress_bar(tasks, total=len(tasks), desc="pounce active", disable=None if progress else True):
        rng = np.random.default_rng(random_state + r)
        perm = rng.permutation(obs)
        n_init, n_pool = int(initial * n_obs), int(pool * n_obs)
        known = np.zeros(Xa.size, bool)
        known[perm[:n_init]] = True
        pool_cells = perm[n_init:n_init + n_pool]
        test = np.zeros(Xa.size, bool)
        test[perm[n_init + n_pool:]] = True
        known, test = known.reshape(Xa.shape), test.reshape(Xa.shape)
        remaining = pool_cells.copy()
        pick_rng = np.random.default_rng(random_state + 10_000 + r)
        if r not in initial_fit:
            initial_fit[r] = clone(predictor).fit(np.where(known, Xa, np.nan))
        fitted = initial_fit[r]
        base = float(np.sqrt(np.mean((fitted.mean_[test] - Xa[test]) ** 2)))
        out.append({"repeat": r, "strategy": strategy, "extra": 0.0, "rmse": base, "improvement": 0.0})
        revealed = 0
        for _ in range(int(n_steps)):
            if remaining.size == 0:
                break
            if strategy == "uncertainty":
                if fitted.std_ is None:
                    raise MethodError(f"{type(predictor).__name__} has no predictive std; uncertainty sampling needs one")
                score = np.asarray(fitted.std_).ravel()[remaining]
                pick = remaining[np.argsort(-score, kind="stable")[:batch]]
            elif strategy == "oracle":
                score = np.abs(np.asarray(fitted.mean_).ravel()[remaining] - Xa.ravel()[remaining])
                pick = remaining[np.argsort(-score, kind="stable")[:batch]]
            else:
                pick = pick_rng.choice(remaining, size=min(batch, remaining.size), replace=False)
            remaining = np.setdiff1d(remaining, pick)
            known.ravel()[pick] = True
            revealed += pick.size
            fitted = clone(predictor).fit(np.where(known, Xa, np.nan))
            rmse = float(np.sqrt(np.mean((fitted.mean_[test] - Xa[test]) ** 2)))
            out.append({"repeat": r, "strategy": strategy, "extra": round(revealed / n_obs, 4), "rmse": rmse,
                        "improvement": base - rmse})
    return pd.DataFrame(out)


def masked_rmse_tensor(
    T,
    tensor_predictors: Dict[str, BasePredictor],
    matrix_predictors: Optional[Dict[str, BasePredictor]] = None,
    metrics: Optional[Sequence[str]] = None,
    hidden_ratios: Sequence[float] = (0.2, 0.9),
    n_repeats: int = 1,
    random_state: int = 0,
    progress: bool = False,
) -> pd.DataFrame:
    """RMSE on hidden cells of a models x datasets x metrics tensor (Zhao et al. §3.3, §4.4, Table 1 / Table 12).

    ``tensor_predictors`` (e.g. :class:`ProbabilisticTensorFactorization`)
    see the whole masked tensor; ``matrix_predictors`` are fitted to each
    metric's slice separately (Zhao et al.'s "PMF (Sep)"), on the datasets that have
    the metric. Masks hide ``ratio`` of all observed entries uniformly (Zhao et al.
    ``split_train_test_3d``).

    Returns
    -------
    pandas.DataFrame
        ``ratio, repeat, predictor, metric, rmse, n_hidden``; ``metric`` is each
        metric name and ``overall`` (all hidden entries pooled).
    """
    from ...report import progress as progress_bar

    T = np.asarray(T, dtype=float)
    if T.ndim != 3:
        raise MethodError(f"need a 3-D tensor (models x datasets x metrics), got shape {T.shape}")
    S = T.shape[2]
    metrics = list(metrics) if metrics is not None else [f"metric{s}" for s in range(S)]
    matrix_predictors = matrix_predictors or {}
    rows = []
    tasks = [(r, ratio) for r in range(int(n_repeats)) for ratio in hidden_ratios]
    for r, ratio in progress_bar(tasks, total=len(tasks), desc="pounce tensor", disable=None if progress else True):
        mask = hide_cells(T.reshape(T.shape[0], -1), ratio, np.random.default_rng(random_state + r)).reshape(T.shape)
        train = np.where(mask, np.nan, T)
        preds = {}
        for name, est in tensor_predictors.items():
            preds[name] = clone(est).fit(train).mean_
        for name, est in matrix_predictors.items():
            full = np.full(T.shape, np.nan)
            for s in range(S):
                cols = ~np.isnan(T[:, :, s]).all(axis=0)
                slice_train = train[:, cols, s]
                if np.isnan(slice_train).all():
                    continue
                full[:, cols, s] = clone(est).fit(slice_train).mean_
            preds[name] = full
        for name, pred in preds.items():
            err = np.where(mask, pred - T, np.nan)
            for s, metric in [(None, "overall")] + list(enumerate(metrics)):
                e = err if s is None else err[:, :, s]
                e = e[~np.isnan(e)]
                rows.append({"ratio": ratio, "repeat": r, "predictor": name, "metric": metric,
                             "rmse": float(np.sqrt(np.mean(e ** 2))) if e.size else np.nan, "n_hidden": int(e.size)})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------
# The analyses: the tables above as results that render and plot themselves
# ---------------------------------------------------------------------------------------


def column_groups(df: pd.DataFrame) -> Optional[np.ndarray]:
    """Per-column metric labels when the columns of ``df`` mix metrics, else None.

    Completion predictors standardise per dataset and pool sparse datasets within one metric
    (their ``column_groups`` parameter); the labels come from the matrix's dataset metadata.
    """
    meta = df.attrs.get("datasets") or {}
    labels = [str((meta.get(c) or {}).get("metric")) for c in df.columns]
    return np.asarray(labels) if len(set(labels)) > 1 else None


def evaluate_completion(
    X,
    predictors: Dict[str, BasePredictor],
    hidden_ratios: Sequence[float] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
    n_repeats: int = 1,
    level: float = 0.9,
    random_state: int = 0,
    groups: Optional[Sequence[str]] = None,
    raw_units: bool = False,
    progress: bool = False,
) -> CompletionResult:
    """Masked-cell RMSE and calibration of completion predictors against the baselines (Zhao et al. Fig. 3, Table 11).

    Parameters
    ----------
    X, predictors, hidden_ratios, n_repeats, level, random_state, progress
        As :func:`masked_rmse`.
    groups : sequence of str, optional
        The metric labels the predictors standardise within (:func:`column_groups`), to report.
    raw_units : bool
        The matrix is in raw units, as Zhao et al.'s: show Table 11 next to the result.

    Returns
    -------
    CompletionResult
        RMSE by hidden ratio and predictor (and whether each beats both baselines), the
        calibration of predictors with a predictive std; ``.plot()`` draws RMSE against the hidden share.

    References
    ----------
    Zhao et al. §4.2, Fig. 3, Table 11.
    """
    long = masked_rmse(X, predictors, hidden_ratios, n_repeats=n_repeats, level=level,
                       random_state=random_state, progress=progress)
    return CompletionResult(long=long, predictors=list(predictors), level=float(level), n_repeats=int(n_repeats),
                            groups=None if groups is None else sorted(set(map(str, groups))), raw_units=raw_units,
                            paper=PAPER_PMF_RMSE if raw_units else None)


def evaluate_active(X, predictor: BasePredictor, name: str = "", step: float = 0.05, n_steps: int = 6,
                    n_repeats: int = 1, random_state: int = 0, progress: bool = False) -> ActiveResult:
    """Active evaluation (uncertainty vs random vs oracle) as a result (Zhao et al. §4.3, Fig. 4).

    Parameters are those of :func:`active_evaluation`; ``name`` labels the predictor.

    Returns
    -------
    ActiveResult
        Test RMSE after each step per strategy; ``.plot()`` draws the improvement.

    References
    ----------
    Zhao et al. §3.2, §4.3, Fig. 4.
    """
    long = active_evaluation(X, predictor, step=step, n_steps=n_steps, n_repeats=n_repeats,
                             random_state=random_state, progress=progress)
    return ActiveResult(long=long, predictor=name or type(predictor).__name__)


def evaluate_tensor(T, metrics: Sequence[str], hidden_ratios: Sequence[float] = (0.2, 0.9), n_repeats: int = 1,
                    random_state: int = 0, n_samples: Optional[int] = None, progress: bool = False) -> TensorResult:
    """Tensor factorisation (PTF, BPTF) against one matrix per metric (PMF, BPMF, baselines) on a masked tensor.

    Parameters
    ----------
    T : array-like, (models, datasets, metrics)
    metrics : sequence of str
        Names of the tensor's last axis.
    n_samples : int, optional
        Gibbs draws kept (and burn-in) for the Bayesian predictors; default theirs.
    hidden_ratios, n_repeats, random_state, progress
        As :func:`masked_rmse_tensor`.

    Returns
    -------
    TensorResult
        RMSE per predictor and metric at each hidden share.

    Raises
    ------
    MethodError
        With fewer than two metrics.

    References
    ----------
    Zhao et al. §3.3, §4.4, Table 1, Table 12.
    """
    from ..engine.pmf import ProbabilisticTensorFactorization
    from .core import make_predictor

    if len(metrics) < 2:
        raise MethodError(f"the tensor analysis needs several metrics per dataset; the selection has {list(metrics)}")
    burn = {"n_burnin": n_samples, "n_samples": n_samples} if n_samples else {}
    tensor_preds = {"ptf": ProbabilisticTensorFactorization(random_state=random_state),
                    "bptf": ProbabilisticTensorFactorization(inference="gibbs", random_state=random_state, **burn)}
    bpmf = make_predictor("bpmf", random_state=random_state)
    bpmf.set_params(**{k: v for k, v in burn.items() if k in bpmf.get_params()})
    matrix_preds = {"global_mean (sep)": make_predictor("global_mean"),
                    "mean_of_means (sep)": make_predictor("mean_of_means"),
                    "pmf (sep)": make_predictor("pmf", random_state=random_state), "bpmf (sep)": bpmf}
    long = masked_rmse_tensor(T, tensor_preds, matrix_preds, list(metrics), hidden_ratios, n_repeats=n_repeats,
                              random_state=random_state, progress=progress)
    return TensorResult(long=long, metrics=list(metrics), predictors=list(matrix_preds) + list(tensor_preds))
