"""The benchmark's interval from its tasks' item estimates: each task's standard error and their correlation.

A benchmark's score is the weighted mean of its task scores, so its error is the weighted sum of the
tasks' errors. The tasks' items are drawn independently, so for a purely design-based estimator (the
sample mean, AIPW and its variants) the tasks' errors are independent and their variances add
(Cochran 1977, §5.3). An estimator with a regression across models (``crosstask``, ``random_learn``,
``kernel_learn``, the IRT family) errs the same way on one model's tasks: a model stronger than the
population is under-predicted on every task. Their variances then do not simply add: the benchmark's
variance is ``s' R s`` (``s`` the weighted task standard errors, ``R`` the correlation of the tasks'
standardised errors).

``reduce --items`` estimates ``R`` from the population's own cross-fitted errors (the ones its expected
figures come from: every model predicted from the other folds, and the strongest predicted from the
weakest), shrinks it toward the independence the design implies (Schäfer and Strimmer 2005, target D:
the intensity estimated from the errors' own spread, no tuning constant), and records it in the manifest
(``benchmark_correlation``); ``predict`` and ``reduce``'s expected benchmark figures combine the tasks with
it. The benchmark's variance is never taken below the independent one: a negative estimated correlation
would narrow the interval on the strength of a few dozen models.

References
----------
Cochran (1977), Sampling Techniques, §5.3 (variance of a sum over independently sampled strata). Schäfer and
Strimmer (2005), "A shrinkage approach to large-scale covariance matrix estimation", Statistical Applications
in Genetics and Molecular Biology 4(1), §2-3 (shrinkage of correlations toward zero, analytic intensity).
"""

from __future__ import annotations

import re
from typing import Optional

import numpy as np

#: Manifest key of the recorded correlation.
KEY = "benchmark_correlation"
#: Fewest models with an error on every estimated task for a correlation to be estimated.
MIN_MODELS = 10


#: How the benchmark's tasks are weighted (the manifest's ``weighting``): the mean over its tasks, or, for lm-eval's
#: MMLU subject tasks, lm-eval's ``mmlu`` group score, whose subjects count by their questions (``weight_by_size``).
UNIFORM = "uniform over tasks"
BY_SIZE = "subjects weighted by their items, as lm-eval's mmlu group"
#: lm-eval 0.4's own MMLU subject tasks (``mmlu_<subject>``): its ``mmlu`` group and the groups of the four categories
#: weight them by size. HELM (``mmlu:subject=...``) and the Open LLM Leaderboard v1 (``hendrycksTest-<subject>``)
#: average their subjects unweighted.
_LM_EVAL_SUBJECT = re.compile(r"^mmlu_[a-z_]+$")


def task_weights(sizes: dict) -> tuple:
    """``(task -> weight, weighting)``: how the benchmark's score is made from its tasks' scores, ``sizes`` each
    task's number of items.

    The benchmark score a user compares with is the harness's: every task an lm-eval MMLU subject task
    (``mmlu_abstract_algebra``) gives lm-eval's ``mmlu`` group score, the subjects weighted by their numbers of items
    (:data:`BY_SIZE`, as the dataset-level manifest weights them); anything else the unweighted mean of the tasks
    (:data:`UNIFORM`).

    References
    ----------
    Hendrycks et al. (2021), §3; lm-evaluation-harness v0.4 group aggregation (``weight_by_size``).
    """
    from ...benchmarks import mmlu_subject

    if sizes and all(_LM_EVAL_SUBJECT.match(t) and mmlu_subject(t) for t in sizes):
        return {t: float(n) for t, n in sizes.items()}, BY_SIZE
    return {t: 1.0 for t in sizes}, UNIFORM


def weighted_text(manifest: dict) -> str:
    """``"; the benchmark's <weighting>"`` for a manifest whose tasks are not weighted alike, else ``""``."""
    how = manifest.get("weighting", UNIFORM)
    return "" if how == UNIFORM else f"; the benchmark's score: {how}"


def is_design_based(reg) -> bool:
    """Whether the registered item estimator is purely design-based (its tasks' errors are independent)."""
    return bool(getattr(reg.cls, "design_based", False))


def task_standard_error(lower, upper, se, level: float) -> np.ndarray:
    """A task estimate's standard error: the estimator's own where it gives one, else its interval's half-width
    over the normal quantile of ``level``.

    The one rule for every estimator, in ``predict`` and in ``reduce``'s expected figures. A skew-corrected
    design interval is not symmetric, so its width alone does not give its standard error (hence the
    estimator's own first); a radius interval (split-conformal, the IRT family's calibrated one) has none,
    and its half-width is read as a normal interval's. A measured task (``lower == upper``) has 0.
    """
    from ..engine.item_estimators import _z

    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    half = (upper - lower) / (2 * _z(level))
    if se is None:
        return half
    se = np.broadcast_to(np.asarray(se, dtype=float), half.shape)
    return np.where(np.isfinite(se), se, half)


def benchmark_interval(estimates, ses, weights, level: float, corr: Optional[np.ndarray] = None,
                       bounds: Optional[tuple] = None) -> tuple:
    """``(estimate, lower, upper, se)`` of the weighted mean of the task ``estimates`` (models x tasks, or tasks).

    ``ses``: the tasks' standard errors (:func:`task_standard_error`; 0 for a measured task); ``weights``:
    per task, as they enter the benchmark's score (the caller normalises them); ``corr``: the tasks' error correlation (tasks x tasks, default independence).
    The variance is ``(w s)' R (w s)``, never below the independent ``sum (w s)**2``; normal quantile. The interval
    is clipped to the benchmark's range, ``[0, sum(w)]`` (item scores lie in [0, 1]: ``reduce`` refuses others), but
    never so that it leaves out the estimate (a new model's logs may hold scores outside it, which ``predict`` says).
    ``bounds``: the tasks' own ``(lower, upper)``, shaped as ``estimates``; a benchmark of one task then takes its
    task's interval (Student's t, or skew-corrected), so its two rows never disagree.
    """
    from ..engine.item_estimators import _z

    est, s = np.atleast_2d(np.asarray(estimates, dtype=float)), np.atleast_2d(np.asarray(ses, dtype=float))
    w = np.asarray(weights, dtype=float)
    ws = w * s
    var = np.sum(ws ** 2, axis=1)
    if corr is not None:
        var = np.maximum(var, np.einsum("mi,ij,mj->m", ws, np.asarray(corr, dtype=float), ws))
    centre, se = est @ w, np.sqrt(var)
    half = _z(level) * se
    # A mean of proportions: an interval reaching below 0 or above 1 says nothing the range does not.
    top = w.sum()
    lower = np.maximum(centre - half, np.minimum(0.0, centre))
    upper = np.minimum(centre + half, np.maximum(top, centre))
    if bounds is not None and w.size == 1:
        lower, upper = (np.atleast_2d(np.asarray(b, dtype=float))[:, 0] * w[0] for b in bounds)
    out = centre, lower, upper, se
    return out if np.ndim(estimates) > 1 else tuple(float(v[0]) for v in out)


def shrunk_correlation(Z: np.ndarray) -> tuple:
    """``(R, intensity)``: the correlation of the columns of ``Z`` (models x tasks standardised errors), about zero,
    shrunk toward the identity.

    Errors are deviations from the truth, so the moments are about zero, not the mean: a bias shared by the
    tasks (a strong model under-predicted on each) counts as correlation. ``r_ij = sum z_i z_j / sqrt(sum z_i**2
    sum z_j**2)``; the intensity ``sum_{i != j} Var(r_ij) / sum_{i != j} r_ij**2`` (clipped to [0, 1]), with
    ``Var(r_ij)`` the sampling variance of the mean of the models' products (Schäfer and Strimmer 2005, eq. 12
    with target D), so few or noisy errors shrink toward independence and many consistent ones keep their
    correlation.

    References
    ----------
    Schäfer and Strimmer (2005), §2-3, Table 1 (target D).
    """
    Z = np.asarray(Z, dtype=float)
    n, k = Z.shape
    if k < 2:
        return np.eye(k), 1.0
    U = Z / np.maximum(np.sqrt(np.mean(Z ** 2, axis=0)), 1e-300)
    P = U[:, :, None] * U[:, None, :]  # models x tasks x tasks products
    r = P.mean(axis=0)
    var_r = P.var(axis=0, ddof=1) / n
    off = ~np.eye(k, dtype=bool)
    denom = np.sum(r[off] ** 2)
    lam = 1.0 if denom <= 0 else float(np.clip(np.sum(var_r[off]) / denom, 0.0, 1.0))
    R = (1.0 - lam) * r
    R[np.diag_indices(k)] = 1.0
    return R, lam


def standardised_errors(cells: dict, tasks: list, models: list) -> np.ndarray:
    """Models x tasks ``(estimate - truth) / se`` of the models with a finite one on every task.

    ``cells``: (model, task) -> (estimate, lower, upper, truth, se).
    """
    rows = []
    for m in models:
        got = [cells.get((m, t)) for t in tasks]
        if any(c is None for c in got):
            continue
        z = np.array([(c[0] - c[3]) / c[4] if c[4] > 0 else np.nan for c in got])
        if np.isfinite(z).all():
            rows.append(z)
    return np.array(rows).reshape(-1, len(tasks))


def correlation_block(split_cells: dict, tasks: list, models: list, estimator: str, design_based: bool) -> dict:
    """What the manifest records under :data:`KEY`: the tasks' error correlation and what it was estimated from.

    ``split_cells``: split name -> its cells (:func:`standardised_errors`), pooled: each model's held-out
    errors inside the population and, for the strongest, at its frontier. A design-based estimator records
    independence without estimating. Rounded to 6 digits, so the manifest stays byte-identical.
    """
    block = {"estimator": estimator, "tasks": list(tasks)}
    if design_based or len(tasks) < 2:
        return {**block, "matrix": np.eye(len(tasks)).tolist(), "method": "independence (design-based estimator)"
                if design_based else "independence (one estimated task)", "n_errors": 0, "shrinkage": 1.0}
    by_split = {s: standardised_errors(c, tasks, models) for s, c in split_cells.items()}
    Z = np.vstack(list(by_split.values()))
    counts = {s: int(len(z)) for s, z in by_split.items()}
    if len(Z) < MIN_MODELS:
        return {**block, "matrix": np.eye(len(tasks)).tolist(), "n_errors": int(len(Z)), "shrinkage": 1.0,
                "method": f"independence (errors on every task for {len(Z)} models, {MIN_MODELS} needed)"}
    R, lam = shrunk_correlation(Z)
    return {**block, "matrix": np.round(R, 6).tolist(), "n_errors": int(len(Z)), "errors_by_split": counts,
            "shrinkage": round(lam, 6),
            "method": "correlation about zero of the tasks' standardised held-out errors on the population's models, "
                      "shrunk toward independence (Schäfer and Strimmer 2005)"}


def manifest_correlation(manifest: dict, reg, name: str, tasks: list) -> tuple:
    """``(R or None, note or None)``: the correlation ``predict`` combines the tasks' errors with.

    ``None`` (independence): a design-based estimator (no note: that is its design); a manifest without the
    field (written before it existed), or one estimated for another estimator or other tasks (said in the
    note, the benchmark's interval then too narrow for an estimator whose errors are correlated).
    """
    if is_design_based(reg):
        return None, None
    block = manifest.get(KEY)
    if not isinstance(block, dict):
        return None, ("the manifest records no correlation of the tasks' errors (written by an older version): the "
                      "benchmark's interval combines the tasks as independent, too narrow where the estimator's "
                      "errors run together (reduce again to record it)")
    if block.get("estimator") != name:
        return None, (f"the manifest's correlation of the tasks' errors is that of {block.get('estimator')}, not "
                      f"{name}: the benchmark's interval combines the tasks as independent")
    if check_correlation(manifest) is not None:
        return None, ("the manifest's correlation of the tasks' errors is not a matrix over its tasks: the benchmark's "
                      "interval combines the tasks as independent")
    have = list(block["tasks"])
    R = np.asarray(block["matrix"], dtype=float).reshape(len(have), len(have))
    # A task not in it (run whole when reduced: measured, no error) keeps independence; its standard error is 0.
    out = np.eye(len(tasks))
    pos = [(i, have.index(t)) for i, t in enumerate(tasks) if t in have]
    if pos:
        mine, theirs = map(list, zip(*pos))
        out[np.ix_(mine, mine)] = R[np.ix_(theirs, theirs)]
    return out, None


def check_correlation(manifest: dict) -> Optional[str]:
    """Why the manifest's :data:`KEY` is unusable (``None`` if it is absent or sound): an object with ``tasks`` (distinct
    tasks of the manifest) and ``matrix``, a symmetric correlation matrix over them (unit diagonal, entries in
    [-1, 1]), and the ``estimator`` it was estimated for."""
    if KEY not in manifest:
        return None
    block = manifest[KEY]
    if not isinstance(block, dict) or not isinstance(block.get("estimator"), str):
        return f"'{KEY}' must be an object naming its estimator"
    tasks = block.get("tasks")
    if not isinstance(tasks, list) or len(set(map(str, tasks))) != len(tasks) or not set(tasks) <= set(
            manifest.get("tasks") or {}):
        return f"'{KEY}.tasks' must be distinct tasks of the manifest"
    try:
        R = np.asarray(block.get("matrix"), dtype=float)
    except (TypeError, ValueError):
        return f"'{KEY}.matrix' is not a matrix of numbers"
    k = len(tasks)
    R = R.reshape(0, 0) if k == 0 and R.size == 0 else R
    if R.shape != (k, k) or not np.isfinite(R).all() or not np.allclose(R, R.T) or not np.allclose(np.diag(R), 1.0) \
            or np.abs(R).max(initial=0.0) > 1.0:
        return f"'{KEY}.matrix' must be a symmetric {k} x {k} correlation matrix (unit diagonal, entries in [-1, 1])"
    return None


def correlation_text(manifest: dict) -> str:
    """One sentence for ``reduce``'s summary: how the benchmark's interval combines the tasks' errors."""
    block = manifest.get(KEY)
    if not isinstance(block, dict) or len(block.get("tasks") or []) < 2:
        return ""
    R = np.asarray(block["matrix"], dtype=float)
    off = R[~np.eye(len(R), dtype=bool)]
    if not block.get("n_errors"):
        return f"\nThe benchmark's interval combines the tasks' errors as independent: {block['method']}."
    lead = (f"\nThe benchmark's interval combines the tasks' errors with their correlation on the population's held-out "
            f"errors ({block['n_errors']} held-out estimates over both splits, 'in' and 'frontier'; ")
    if float(block["shrinkage"]) >= 0.995:  # printed as "+0.00 to +0.00 after shrinking 100%": say what it means
        return lead + "shrunk fully to independence, so the tasks combine as independent)."
    # Two tasks have one correlation: "-0.21 to -0.21" read as a range of one.
    shown = f"{off.min():+.2f}" if np.ptp(off) < 0.005 else f"off-diagonal {off.min():+.2f} to {off.max():+.2f}"
    return lead + (f"{'their correlation ' if len(R) == 2 else ''}{shown} after shrinking "
                   f"{block['shrinkage']:.0%} of the way to independence).")
