"""Whether a task follows the benchmark's other tasks, read on the source models, and what a model beyond the sources
on those tasks is given when it does not.

:class:`~.item_crosstask.CrossTask` learns how a task follows the benchmark's other tasks from the source models. A
target beyond every source on the other tasks (its ``beyond_sources_``) meets that relation where no source was; on a
benchmark whose tasks move together (HELM Lite: a model strong on the others is strong here) the composite still
carries it, and on one whose tasks rank the models differently (the Open LLM Leaderboard v2's IFEval, MuSR and
MATH-hard) it does not. The sources say which: :func:`sources_agreement` is the Spearman correlation of their score on
this task with their mean score over the other tasks. When the other tasks' order explains less than half the
variance of this task's ranks (``rho < sqrt(0.5)``: :data:`AGREEMENT_THRESHOLD`, fixed from that principle, not
fitted), a flagged target's estimate is :func:`agreement_estimate`: the equal-weight mean of the two estimates that
do not lean on the other tasks' relation, the design part (AIPW) and this task's own composite (fitted on this task's
items alone). Equal weights, because the sources give no evidence to choose between them; the mean's absolute error
is at most the mean of theirs. Intervals are the composite's, unchanged.

Measured (`benchmarks/screens/itemagree`, 50 items per task, seeds 40-59 never run before the rule was fixed): for the
models strongest on the whole benchmark (the benchmark-frontier protocol), the mean error ratio to the best of four
published baselines 1.073 -> 0.972 (MuSR -36%, MATH-hard -14%, IFEval -2.6%, MATH -2.5%, MedQA -1.1%, the others
unchanged); on the paper's splits no table moved by more than 0.2%.

References
----------
Zhang, Dorner and Hardt (2025), "How Benchmark Prediction from Fewer Data Misses the Mark", §4 (design-based
estimates at the frontier); Spearman (1904) (rank correlation).
"""

from __future__ import annotations

import numpy as np

__all__ = ["AGREEMENT_THRESHOLD", "MIN_AGREEMENT_MODELS", "agreement_estimate", "row_means", "sources_agreement"]

#: Below this rank correlation the other tasks explain less than half the variance of this task's ranks among the
#: sources (``rho ** 2 < 0.5``).
AGREEMENT_THRESHOLD = float(np.sqrt(0.5))
#: Fewer source models with every task answered than this: no agreement is read (the composite stands).
MIN_AGREEMENT_MODELS = 10


def row_means(x) -> np.ndarray:
    """Each row's mean over its finite cells (NaN for a row with none, without numpy's warning)."""
    x = np.atleast_2d(np.asarray(x, dtype=float))
    ok = np.isfinite(x)
    n = ok.sum(axis=1)
    return np.where(n > 0, np.where(ok, x, 0.0).sum(axis=1) / np.maximum(n, 1), np.nan)


def sources_agreement(source, others) -> float:
    """The Spearman correlation, over the source models that answered every task, of their mean on this task
    (``source``, models x items) with their mean over the other tasks (``others``: ``(answers, sampled items)`` pairs,
    each task's full answers weighted equally); NaN without other tasks, with fewer than
    :data:`MIN_AGREEMENT_MODELS` such models, or when either mean is the same for every one of them.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.uniform(size=(30, 1)); S = (rng.uniform(size=(30, 20)) < a).astype(float)
    >>> round(sources_agreement(S, [(S[:, ::-1], np.arange(5))]), 2)
    1.0
    """
    others = list(others)
    if not others:
        return float("nan")
    own = row_means(source)
    other = np.column_stack([row_means(S_k) for S_k, _ in others])
    ok = np.isfinite(own) & np.isfinite(other).all(axis=1)
    if ok.sum() < MIN_AGREEMENT_MODELS or np.ptp(own[ok]) == 0 or np.ptp(other[ok].mean(axis=1)) == 0:
        return float("nan")  # a task every model scores alike (saturated) orders nothing
    from scipy.stats import spearmanr

    return float(spearmanr(own[ok], other[ok].mean(axis=1))[0])


def agreement_estimate(estimate, design, own, flagged) -> np.ndarray:
    """The flagged targets' estimate: the equal-weight mean of the ``design`` part's and this task's ``own``
    composite's; the others keep ``estimate``."""
    return np.where(np.asarray(flagged, dtype=bool), 0.5 * (np.asarray(design) + np.asarray(own)), estimate)
