"""The other tasks of a benchmark, for item estimators that borrow across tasks.

A new model runs the sampled items of every task of the benchmark; an estimator whose class sets
``uses_other_tasks`` (:mod:`harness_ext.methods.engine.item_crosstask`) takes, for one task, the
population's answers to every other task (rows aligned to this task's population models, NaN for a
model without that task) with that task's sampled columns, and the target's answers to them. These
helpers build both from ``reduce``'s population (:func:`population_others`) and from an item-level
manifest and a new model's logs (:func:`manifest_others`), and call the estimator either way
(:func:`fit_predict`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...base import limit_threads
from ..engine.item_agreement import AGREEMENT_THRESHOLD
from .item_manifest import item_positions, task_population

#: What the estimate of a model beyond the population on the other tasks is, said where it is reported.
KEPT_WORDS = (f"the estimate is unchanged where the population's scores on the task rank its models as their mean "
              f"over the other tasks does (rank correlation at least {AGREEMENT_THRESHOLD:.2f}); on a task where "
              "they do not, the other tasks cannot carry it past the population, and it is the mean of the "
              "design-based part's and of the estimator fitted on that task's items alone")


def uses_other_tasks(reg) -> bool:
    """Whether the registered item estimator takes the other tasks' samples."""
    return bool(getattr(reg.cls, "uses_other_tasks", False))


def align_rows(M: np.ndarray, models: list, to: list) -> np.ndarray:
    """``M``'s rows (one per name in ``models``) in the order of ``to``; NaN rows for names it lacks."""
    index = {m: i for i, m in enumerate(models)}
    out = np.full((len(to), M.shape[1]), np.nan)
    have = [(j, index[m]) for j, m in enumerate(to) if m in index]
    if have:
        rows, src = map(list, zip(*have))
        out[rows] = M[src]
    return out


def population_others(pops: dict, samples: dict, task: str) -> list:
    """``[(answers aligned to task's models, sampled columns)]`` of every other task of ``pops``."""
    models = pops[task][1]
    return [(align_rows(M, names, models), np.asarray(samples[u])) for u, (M, names) in pops.items() if u != task]


def manifest_others(manifest: dict, task: str, logs: dict) -> tuple:
    """``(others for fit, others for predict)`` of one task of an item-level manifest for one new model.

    ``logs``: task -> the model's logged scores (a Series indexed by item id); an item it did not log
    (or a task it did not run) is NaN, which the cross-task estimators fill or leave out.
    """
    names = task_population(manifest, task)[3]
    fit, pred = [], []
    for u in manifest["tasks"]:
        if u == task:
            continue
        ids, sample, M, models = task_population(manifest, u)
        pos = item_positions(ids, sample)
        logged = logs.get(u, pd.Series(dtype=float))
        fit.append((align_rows(M, models, names), pos))
        pred.append(np.array([[float(logged[s]) if s in logged.index else np.nan for s in sample]]))
    return fit, pred


def fit_predict(reg, level: float, source: np.ndarray, items: np.ndarray, Y: np.ndarray, others_fit=(),
                others_pred=(), cache=None, key=None):
    """The estimator's :class:`~harness_ext.methods.engine.item_estimators.ItemEstimate` for ``Y``.

    The other tasks go to an estimator that takes them and nowhere else. With a ``cache`` (a dict), the
    estimator fitted for ``key`` is reused: the fit depends on the population and the items, not on the
    target, so many new models with the same items cost one fit.
    """
    cross = uses_other_tasks(reg)

    def fit():
        est = reg.cls(level=level)
        return est.fit(source, items, others=list(others_fit)) if cross else est.fit(source, items)

    est = cached_fit(cache, key, fit)
    with limit_threads():
        return est.predict(Y, others=list(others_pred)) if cross else est.predict(Y)


def cached_fit(cache, key, fit):
    """The estimator ``fit()`` returns, reused from ``cache`` (a dict, or None) for ``key``: a fit depends on the
    population and the items used, not on the new model, so many models with the same items cost one fit."""
    if cache is not None and key in cache:
        return cache[key]
    # One BLAS thread: the estimators make thousands of small solves and eigendecompositions (a few hundred
    # population models), which several BLAS threads slow down by up to tenfold on a busy machine.
    with limit_threads():
        est = fit()
    if cache is not None:
        cache[key] = est
    return est


def widened_line(manifest: dict) -> str:
    """How many held-out task estimates the estimator widened for a model beyond its training models on the other
    tasks' sampled items, per split, and on which tasks their estimate is the agreement rule's mean
    (:mod:`~harness_ext.methods.engine.item_agreement`); ``""`` for an estimator that does not look."""
    from ...report import listed

    ex, said = manifest["expected_error"], []
    for split, short in (("interpolation", "in"), ("extrapolation", "frontier")):
        figs = [f for f in ex[split]["tasks"].values() if f.get("n_widened") is not None]
        if figs:
            said.append(f"{sum(f['n_widened'] for f in figs):,} of {sum(f['n_models'] for f in figs):,} '{short}'")
    if not said:
        return ""
    low = sorted(t for t, f in ex["extrapolation"]["tasks"].items()
                 if f.get("agreement") is not None and f["agreement"] < AGREEMENT_THRESHOLD)
    kept = (f"with this population a new model's estimate is unchanged (each task's scores rank the models as their "
            f"mean over the other tasks does, rank correlation at least {AGREEMENT_THRESHOLD:.2f})" if not low else
            f"with this population a new model's estimate is unchanged except on {listed(low, 5)}: the scores there "
            f"do not rank the models as their mean over the other tasks does (rank correlation below "
            f"{AGREEMENT_THRESHOLD:.2f}), so its estimate is the mean of the design-based part's and of the estimator "
            "fitted on that task's items alone")
    return (f"\n{manifest['design']['estimator']} widened the interval of {' and '.join(said)} held-out task estimates "
            "to also cover its design-based part's: their model's mean over the other tasks' sampled items lies above "
            f"every training model's; {kept}. The held-out fits read that correlation on their own training models, "
            "and the figures below include them.")
