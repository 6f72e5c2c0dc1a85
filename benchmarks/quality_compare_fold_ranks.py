"""How much of the gap to the paper's Random row is the per-dataset ranking?

The store keeps one score per (model, dataset): the tsml adapter averages the
30 resamples of the TSC bake-off. ``harness-ext compare`` therefore ranks the
models on each dataset by their mean accuracy. Gusev & Zaytsev (2026) §3 rank
the models on every resample and average the resample ranks, which pulls mean
ranks towards the middle and shrinks rank MAE.

This script reads the raw resample tables of the 40 classifiers x 112 datasets
(the category folders, not ``best/``), builds both per-dataset rank matrices,
and scores uniform random k-subsets (k = 2..20, the paper's Random baseline)
against each matrix's own full-benchmark mean ranks: AUC(MAE) and
AUC(Spearman) (trapezoid, eq. 17), mean +- std over draws, and the smallest k
whose mean Spearman reaches 0.90. ``--models 35`` also draws a random 35 of
the 40 classifiers per draw, the paper's model count (its exact 35 are not
listed).

Usage::

    python benchmarks/quality_compare_fold_ranks.py               # 2000 draws, ~20 s
    python benchmarks/quality_compare_fold_ranks.py --models 35

A quality benchmark, not a speed one: ``benchmarks/run.py`` does not run it.

References
----------
Gusev & Zaytsev (2026), §3 (r-bar_d: mean of fold-wise ranks), §6 eq. (17),
Table 1 (Random: AUC(MAE) 31.06 +- 1.73, AUC(rho) 16.61 +- 0.19; 35 models).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from harness_ext.methods.compare import trapezoid_auc
from harness_ext.methods.ranking import rank_metrics, rank_per_dataset

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from _common import SHARED_DATA  # noqa: E402

TSC = SHARED_DATA / "tsml-eval-tsc-bakeoff/tsml_eval/publications/y2023/tsc_bakeoff/results"


def resample_cube():
    """(models, datasets, resamples) accuracy over the datasets every category-folder classifier has."""
    files = sorted(p for p in TSC.glob("*/*_accuracy.csv") if p.parent.name != "best")
    if not files:
        raise SystemExit(f"no TSC bake-off accuracy tables under {TSC}")
    tabs = {p.name[: -len("_accuracy.csv")]: pd.read_csv(p, index_col=0) for p in files}
    common = sorted(set.intersection(*(set(t.index) for t in tabs.values())))
    names = sorted(tabs)
    cube = np.stack([tabs[n].loc[common].to_numpy(float)[:, :30] for n in names])
    if np.isnan(cube).any():
        raise SystemExit("the resample tables have missing cells")
    return names, common, cube


def random_subset_curves(ranks_of, M, ks, draws, n_models, rng):
    """Metric curves of uniform random k-subsets.

    ``ranks_of(models)`` gives the (models, datasets) per-dataset ranks among
    those models, so both rankings live on 1..n_models.
    """
    out = {"mae": np.empty((draws, len(ks))), "spearman": np.empty((draws, len(ks)))}
    cache = ranks_of(np.arange(M)) if n_models >= M else None
    for t in range(draws):
        Rt = cache if cache is not None else ranks_of(np.sort(rng.choice(M, n_models, replace=False)))
        full = Rt.mean(axis=1)
        sub = np.stack([Rt[:, rng.choice(Rt.shape[1], k, replace=False)].mean(axis=1) for k in ks])
        vals = rank_metrics(sub, full, ["mae", "spearman"])
        for name in out:
            out[name][t] = vals[name]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--models", type=int, default=None, help="classifiers per draw (default: all 40)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    names, datasets, cube = resample_cube()
    n_models = args.models or len(names)
    print(f"{len(names)} classifiers x {len(datasets)} datasets x {cube.shape[2]} resamples; "
          f"{n_models} classifiers per draw, {args.draws} draws, k = 2..20")
    mean_acc = cube.mean(axis=2)
    schemes = (
        ("ranks of mean accuracy (harness-ext)", lambda m: rank_per_dataset(mean_acc[m])),
        ("mean of per-resample ranks (Gusev & Zaytsev §3)", lambda m: rankdata(-cube[m], axis=0).mean(axis=2)),
    )
    ks = np.arange(2, 21)
    for label, ranks_of in schemes:
        v = random_subset_curves(ranks_of, len(names), ks, args.draws, n_models, np.random.default_rng(args.seed))
        mae, rho = trapezoid_auc(v["mae"]), trapezoid_auc(v["spearman"])
        reach = np.flatnonzero(v["spearman"].mean(axis=0) >= 0.9)
        k_star = int(ks[reach[0]]) if reach.size else None
        print(f"{label:<38} Random AUC(MAE) {mae.mean():6.2f} +- {mae.std(ddof=1):.2f}   "
              f"AUC(Spearman) {rho.mean():6.2f} +- {rho.std(ddof=1):.2f}   mean k*(rho >= 0.90) {k_star}")
    print("paper (35 classifiers, Table 1)         Random AUC(MAE)  31.06 +- 1.73   AUC(Spearman)  16.61 +- 0.19")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
