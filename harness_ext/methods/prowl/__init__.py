"""prowl: find a representative subset of datasets and measure how well it covers the benchmark.

SimBA phase 2. A selector orders the datasets; for every prefix ``S`` of that
order, coverage ``eta(S)`` is the Pearson correlation between the models' mean
win rate on ``S`` and on the full benchmark (eqs. 6-7). The curve of ``eta``
over ``|S| = 1..d`` is summarised by its signed area (SCAUC) and by ``|S*|``,
the smallest prefix reaching the target coverage (0.95 in the paper). The
RANDOM baseline is the same curve for 1000 random orders, computed in one
vectorised pass; every method is also scored by the proportion of random runs
it matches or beats on SCAUC ("AUC") and on the SCAUC up to ``|S*|`` ("Max2",
Appendix B).

Definitions where the paper is silent (each is tested in tests/test_prowl.py)
-----------------------------------------------------------------------------
* Mean win rate, ties and missing cells: by default HELM's rule (the paper
  cites HELM's "mean win rate"). On each dataset a model's win rate is
  ``(#models it beats + 0.5 * #models it ties) / (n_d - 1)`` over the ``n_d``
  models observed on that dataset (datasets with ``n_d < 2`` carry no win
  rate); a model's MWR on ``S`` is the mean over the datasets of ``S`` it has a
  win rate on. Eq. 6 as printed counts strict wins only
  (``I[B'[mu, d] > B'[mu', d]]``): ``ties="strict"`` gives that literal reading
  (CLI ``--ties strict``). The two differ only where scores tie, which the
  chance normalisation makes common (every model at or below chance scores
  exactly 0). Eq. 6 also divides the win count by ``m - 1`` only; the
  per-dataset mean differs from it by the factor ``|S|`` on complete data,
  which Pearson ignores.
* Coverage with missing MWR: ``eta`` is computed over the models that have an
  MWR on both ``S`` and the full benchmark. An undefined ``eta`` (constant MWR
  on ``S``, e.g. every model tied) is reported as NaN and counts as 0 in areas
  and never reaches the target.
* SCAUC: trapezoid area under ``eta`` against ``|S|`` = 1..k, divided by the
  width ``k - 1`` so a curve that is 1 everywhere scores 1 (Table 3 reports
  values near 0.98 for HELM's 16 datasets, which fixes this normalisation).
  A single point has no area (NaN).
* Max2: SCAUC over ``|S| = 1..max(|S*|, 2)`` (the paper: "if |S*| = 1, we
  consider the first two datasets"), compared with each random run over the
  same range.
* "Matches or beats": the fraction of random runs whose value is <= the
  method's (with a 1e-12 tolerance).
* RANDOM row of the table: the mean over runs of SCAUC and of ``|S*|`` (the
  paper's 2.5 for HELM is such a mean).

References
----------
SimBA (Subramani, Gomez, Diab), §3.3 (eqs. 6-7, SCAUC), §6.2 (Table 3,
Figure 2), Appendix B (Table 6). HELM (Liang et al. 2023) for mean win rate.

Modules: :mod:`.coverage` (mean win rate, ``eta``, SCAUC, ``|S*|``), :mod:`.baseline` (the RANDOM
baseline), :mod:`.selection` (a selector's order evaluated; Table 3 on one matrix) and
:mod:`.results` (the results, which render themselves and plot Figure 2).
"""

from __future__ import annotations

from .baseline import RandomBaseline, random_baseline
from .coverage import (
    TIES,
    coverage,
    coverage_curve,
    matched_or_beaten,
    mean_win_rate,
    n_star,
    prefix_mean_win_rates,
    scauc,
    win_rates,
)
from .results import BASELINE_LABELS, ProwlReport, ProwlResult
from .selection import default_measures, evaluate_order, prowl_table, run_prowl

__all__ = [
    "BASELINE_LABELS", "ProwlReport", "ProwlResult", "RandomBaseline", "TIES", "coverage", "coverage_curve",
    "default_measures", "evaluate_order", "matched_or_beaten", "mean_win_rate", "n_star", "prefix_mean_win_rates",
    "prowl_table", "random_baseline", "run_prowl", "scauc", "win_rates",
]
