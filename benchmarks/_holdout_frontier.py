"""Protocol (f) of ``quality_holdout.py``, the frontier: its splits and its report.

The strongest models by full aggregate held out (Zhang, Dorner & Hardt, "How Benchmark Prediction from Fewer
Data Misses the Mark", NeurIPS 2025, section 4), and the newest checkpoints of every run where the models are
checkpoints. ``quality_holdout.protocol_f`` evaluates the splits with the protocols' shared split evaluation.
"""

from __future__ import annotations

import re

import numpy as np


def _m(v):
    """The mean of the finite values of ``v`` (NaN without any): one figure over a protocol's splits."""
    v = [x for x in v if x is not None and np.isfinite(x)]
    return float(np.mean(v)) if v else float("nan")


#: Frontier protocol: fit on the weakest FRONTIER_TRAIN of the models by their full aggregate, predict the
#: strongest FRONTIER_TEST (Zhang, Dorner & Hardt 2025, section 4's "extrapolation" split).
FRONTIER_TRAIN, FRONTIER_TEST = 0.5, 0.3
_STEP = re.compile(r"(?:step|ckpt|checkpoint|iter(?:ation)?|epoch)[-_]?(\d+(?:\.\d+)?)([kmbt]?)", re.IGNORECASE)


def full_aggregate(X, a_sc, c_sc):
    """Each model's aggregate over every dataset it has: the mean of its chance-normalised points."""
    pts = X * a_sc + c_sc
    return np.nanmean(pts, 1)


def checkpoint_step(name):
    """The training step (iteration, epoch) a checkpoint name ends in, or NaN (``@step1000``, ``-ckpt80``)."""
    hits = _STEP.findall(str(name))
    if not hits:
        return float("nan")
    v, unit = hits[-1]
    return float(v) * {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}[unit.lower()]


def frontier_splits(raw, X, a_sc, c_sc):
    """``{variant: (train rows, test rows)}``: ``frontier`` (weakest 50% -> strongest 30% by full aggregate)
    and, where the models are checkpoints of runs with steps, ``newest`` (each run's first 50% of its
    checkpoints by step -> its last 30%)."""
    from harness_ext.methods.engine.newmodel_intervals import run_groups

    m = X.shape[0]
    agg = full_aggregate(X, a_sc, c_sc)
    order = np.argsort(agg, kind="stable")
    out = {"frontier": (np.sort(order[:int(round(FRONTIER_TRAIN * m))]),
                        np.sort(order[m - int(round(FRONTIER_TEST * m)):]))}
    runs = run_groups(raw.index)
    steps = np.array([checkpoint_step(n) for n in raw.index])
    if runs is not None and np.isfinite(steps).mean() > 0.5:
        tr, te = [], []
        for run in np.unique(runs):
            rows = np.flatnonzero((runs == run) & np.isfinite(steps))
            if rows.size < 3:
                continue
            rows = rows[np.argsort(steps[rows], kind="stable")]
            n = rows.size
            tr.extend(rows[:int(round(FRONTIER_TRAIN * n))])
            te.extend(rows[n - max(1, int(round(FRONTIER_TEST * n))):])
        out["newest"] = (np.sort(tr), np.sort(te))
    return out


def summarise_frontier(row, rf, default):
    """Add protocol (f)'s figures to ``row``: ``f_<variant>_<estimator>_<figure>`` (one split per variant)."""
    for variant, (res, n_train, n_test, flagged) in rf.items():
        row[f"f_{variant}_n"] = [n_train, n_test]
        row[f"f_{variant}_flagged"] = flagged
        for key in (default, "random_ridge", "subset_mean", "column_means", "benchpress", "claimed"):
            for x, v in res[key].items():
                if v:
                    row[f"f_{variant}_{key}_{x}"] = _m(v)
    return row


def coverage_interval(coverage, n, level=0.90):
    """The Clopper-Pearson ``level`` interval of a coverage observed as ``coverage`` over ``n`` test models."""
    from scipy.stats import beta

    k = int(round(coverage * n))
    a = (1.0 - level) / 2
    lo = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return lo, hi


def band_chance(n, nominal=0.90, band=(0.85, 0.95)):
    """The probability that an exactly calibrated ``nominal`` interval covers a share of ``n`` independent test models
    inside ``band``: what one frontier split can resolve (12 test models: 0.38; 20: 0.74)."""
    from scipy.stats import binom

    ks = np.arange(n + 1)
    inside = (ks / n >= band[0] - 1e-12) & (ks / n <= band[1] + 1e-12)
    return float(binom.pmf(ks[inside], n, nominal).sum())


def _n(v):
    """A count read back from a mean over splits (0 when missing)."""
    return int(v) if np.isfinite(v) else 0


def _ci_text(coverage, n):
    if not np.isfinite(coverage) or n < 1:
        return "-"
    lo, hi = coverage_interval(coverage, n)
    return f"{lo:.2f}-{hi:.2f}"


def name_width(rows) -> int:
    """The tables' first column: 14 characters (the shared matrices' names), wider for a longer name (a user's
    benchmark, ``quality_holdout.py --csv``) so the columns stay aligned."""
    return max([14] + [len(str(r["matrix"])) + 1 for r in rows])


def print_frontier(rows, default, file=None):
    """Protocol (f): one row per matrix and variant, the default predictor then the baselines' aggregate MAE and bias."""
    w = name_width(rows)
    print(f"\n(f) frontier: fit on the weakest {FRONTIER_TRAIN:.0%} of models by full aggregate, predict the strongest "
          f"{FRONTIER_TEST:.0%} (newest: each run's first {FRONTIER_TRAIN:.0%} of checkpoints -> its last "
          f"{FRONTIER_TEST:.0%}); aggregate MAE / bias in points, Spearman among the test models, 90% coverage of cells and "
          "aggregates, median widths in points, flagged: share of test models marked frontier; aggCI: the aggregate "
          "coverage's 90% Clopper-Pearson interval over the test models; P(band): the chance that an exactly calibrated "
          "90% interval covers 85-95% of this many test models (binomial); claimed: what reduce's summary tells a user "
          "of the training models about the frontier (its frontier folds' aggregate MAE in points, each held-out "
          "model's error on its own datasets, and 90% coverage; covCI: that coverage's 90% Clopper-Pearson interval over "
          "n, the different models the folds held out); ceilN: test models predict warns about as near the ceiling of a "
          "saturated subset dataset, ceilCov: their aggregate coverage", file=file)
    print(f"{'matrix':<{w}}{'variant':<10}{'train':>6}{'test':>5}{'aggMAE':>8}{'bias':>7}{'rho':>7}{'cellCov':>8}"
          f"{'aggCov':>7}{'aggCI':>12}{'P(band)':>8}{'aggW':>7}{'cellW':>7}{'flag':>6} | {'SubM MAE':>8}{'bias':>7} | {'Ridge':>6}{'bias':>7} | "
          f"{'ColM':>6} | {'BP':>6} | {'claimed':>7}{'cov':>6}{'covCI':>11}{'n':>5} | {'ceilN':>5}{'ceilCov':>8}", file=file)
    nan = float("nan")
    every = 1.0
    for r in rows:
        for variant in ("frontier", "newest"):
            if f"f_{variant}_n" not in r:
                continue
            every *= band_chance(r[f"f_{variant}_n"][1])
            g = lambda key, x: r.get(f"f_{variant}_{key}_{x}", nan)  # noqa: E731
            n_tr, n_te = r[f"f_{variant}_n"]
            print(f"{r['matrix']:<{w}}{variant:<10}{n_tr:>6}{n_te:>5}{g(default, 'agg_mae'):>8.2f}"
                  f"{g(default, 'agg_bias'):>7.2f}{g(default, 'spearman'):>7.3f}{g(default, 'cell_cov'):>8.3f}"
                  f"{g(default, 'agg_cov'):>7.3f}{_ci_text(g(default, 'agg_cov'), n_te):>12}{band_chance(n_te):>8.2f}"
                  f"{g(default, 'agg_width'):>7.2f}{g(default, 'cell_width'):>7.2f}"
                  f"{r[f'f_{variant}_flagged']:>6.2f} | {g('subset_mean', 'agg_mae'):>8.2f}{g('subset_mean', 'agg_bias'):>7.2f} | "
                  f"{g('random_ridge', 'agg_mae'):>6.2f}{g('random_ridge', 'agg_bias'):>7.2f} | "
                  f"{g('column_means', 'agg_mae'):>6.2f} | {g('benchpress', 'agg_mae'):>6.2f} | "
                  f"{g('claimed', 'agg_mae'):>7.2f}{g('claimed', 'agg_cov'):>6.2f}"
                  f"{_ci_text(g('claimed', 'agg_cov'), _n(g('claimed', 'held_out'))):>11}{g('claimed', 'held_out'):>5.0f} | "
                  f"{g('claimed', 'ceil_n'):>5.0f}{g('claimed', 'ceil_cov'):>8.3f}",
                  file=file)
    print(f"P(band) on every row at once (independent splits): {every:.2f}: how often an exactly calibrated 90% interval "
          "would put every row's coverage in 85-95%", file=file)
