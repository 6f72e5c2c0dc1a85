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

Modules: :mod:`.statistics` (AUC, bands, k*, Wilcoxon/Holm, gains, the defaults),
:mod:`.protocol` (the trials, :func:`run_protocol`), :mod:`.result`
(:class:`ProtocolResult`, which renders the tables and plots the curves).

References
----------
Gusev & Zaytsev, "Benchmarking on Tasks That Matter: Dataset Selection for
Preserving Model Rankings", KDD 2026, §5.1 (protocol, eq. 12-16), §6 (eq. 17,
Tables 1-3, k* in §6.2, significance in §6.3), App. B (relative gain).
"""

from __future__ import annotations

from .protocol import oriented, run_protocol
from .result import ProtocolResult, plot_curves
from .statistics import (DEFAULT_SELECTORS, DEFAULT_TARGETS, RANDOM_BASELINES, baseline_name, holm, k_star,
                         paired_wilcoxon, parse_target, quantile_band, relative_gain, trapezoid_auc, wilcoxon_vs_best)

__all__ = ["DEFAULT_SELECTORS", "DEFAULT_TARGETS", "RANDOM_BASELINES", "ProtocolResult", "baseline_name", "holm",
           "k_star", "oriented", "paired_wilcoxon", "parse_target", "plot_curves", "quantile_band", "relative_gain",
           "run_protocol", "trapezoid_auc", "wilcoxon_vs_best"]
