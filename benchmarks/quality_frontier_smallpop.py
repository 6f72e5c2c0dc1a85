"""The frontier split of a small population: the shared matrices subsampled below 40 models, small-population rules.

Run (about 25 minutes on 2 shared cores for 5 matrices x 2 sizes x 20 seeds)::

    HARNESS_EXT_SHARED_DATA=/work/shared/data python benchmarks/quality_frontier_smallpop.py \\
        --sizes 32,36 --seeds 20 --json /tmp/smallpop.json

Each shared matrix with at least 60 models (:data:`MATRICES`) is subsampled without replacement to each size (seed
``1000 + s``; columns kept with at least 5 models in the sample), and protocol (f) of ``quality_holdout.py`` is run
on it: the weakest 50% by full aggregate fit (16 and 18 models at sizes 32 and 36: below
:data:`~harness_ext.methods.engine.frontier.MIN_FRONTIER_MODELS`, so no frontier folds), the strongest 30% predicted
from their subset cells, the subset chosen and the intervals calibrated as ``reduce`` -> ``predict`` do. Each rule of
:data:`VARIANTS` sets ``frontier.SMALL_CANDIDATE`` and ``frontier.SMALL_INTERVAL`` on the same subset and calibration;
the subset mean and k random datasets + Ridge are the baselines. Printed: per matrix the mean over sizes and seeds of
the aggregate MAE, 90% coverage, median width (points) and bias, and the criterion written before the first run
(``benchmarks/HISTORY.md``, "The frontier of a small population"), then each variant's frontier cell coverage and
median cell width. The ``thin_*`` variants set ``frontier.THIN_RULE`` and ``THIN_CELLS`` for sizes where the
frontier folds exist but hold out fewer than 19 models (``--sizes 48,60 --variants thin_none,thin_small,...``;
"Thin frontier folds" in HISTORY).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HARNESS_EXT_NO_PROGRESS", "1")
import quality_holdout as qh  # noqa: E402 - the protocols' splits, subset choice and baselines

MATRICES = ("helm_classic", "open_llm_v2", "pythia_mmlu", "benchbench", "crosspred")
#: name -> (SMALL_CANDIDATE, SMALL_INTERVAL); "today" is the rule before the small-population change.
SMALL_RULES = {"today": (None, "far"), "design_all": (None, "flagged"),
               "aggshift": ("aggregate_shift", "far"), "aggshift_all": ("aggregate_shift", "flagged"),
               "stdmean": ("standard_mean", "far"), "stdmean_all": ("standard_mean", "flagged"),
               "unshrunk": ("unshrunk_level", "far"), "unshrunk_all": ("unshrunk_level", "flagged"),
               "submean": ("subset_mean", "far"), "posline": ("position_line", "far")}
#: name -> the ``frontier`` module settings of a variant (the rest at their defaults): the small-population rules,
#: and what the cells of a flagged model beyond the extreme get when the frontier folds are thin (``THIN_CELLS``;
#: its screen runs at sizes where the folds exist but hold out fewer than 19 models).
VARIANTS = {**{name: {"SMALL_CANDIDATE": c, "SMALL_INTERVAL": i} for name, (c, i) in SMALL_RULES.items()},
            "thin_none": {"THIN_RULE": None, "THIN_CELLS": None}, "thin_design": {"THIN_RULE": None, "THIN_CELLS": "design"},
            "thin_foldin": {"THIN_RULE": None, "THIN_CELLS": "foldin"}, "thin_small": {"THIN_RULE": "small"},
            "thin_design_all": {"THIN_RULE": "design_all"},
            "thin_small_design": {"THIN_RULE": "small", "THIN_CELLS": "design"},
            "thin_design_all_cells": {"THIN_RULE": "design_all", "THIN_CELLS": "design"}}


def _figures(agg, agg_true, usable, lo=None, hi=None):
    e = (agg - agg_true)[usable]
    out = dict(mae=float(np.abs(e).mean()), bias=float(e.mean()))
    if lo is not None:
        out.update(cov=float(((agg_true >= lo) & (agg_true <= hi))[usable].mean()),
                   width=float(np.median((hi - lo)[usable])))
    return out


def _cell_figures(p, Xte, hidden):
    """Cell 90% coverage and median width (the matrix's own scale) over the test rows' ``hidden`` cells."""
    lo, hi, t = p.lower[hidden], p.upper[hidden], Xte[hidden]
    return dict(cell_cov=float(((t >= lo) & (t <= hi)).mean()), cell_width=float(np.median(hi - lo)))


def _baselines(X, Xtr, Xte, keep, have, usable, W, C, agg_true, a_sc, c_sc, k):
    """The subset mean (points) and k random datasets + RidgeCV over 10 draws, as ``quality_holdout`` scores them."""
    d = X.shape[1]
    seen = keep & ~np.isnan(Xte)
    sub_pts = np.where(seen, Xte * a_sc + c_sc, 0.0).sum(1) / np.maximum(seen.sum(1), 1)
    out = {"subset_mean": _figures(sub_pts, agg_true, usable & seen.any(1))}
    rng = np.random.default_rng(10_000)
    draws = []
    for _ in range(10):
        rk = np.zeros(d, bool)
        rk[rng.permutation(d)[:k]] = True
        pr = np.where(rk, Xte, qh.ridge_predict(Xtr, np.where(rk, Xte, np.nan), np.flatnonzero(rk), 0))
        ragg = (np.where(have, pr, 0.0) * W).sum(1) + C
        draws.append(_figures(ragg, agg_true, (rk & have).any(1) & (have & ~rk).any(1)))
    out["random_ridge"] = {x: float(np.nanmean([r[x] for r in draws])) for x in ("mae", "bias")}
    return out


def one_split(raw, meta, variants):
    """Protocol (f)'s frontier split of ``raw``: each variant's aggregate figures and the baselines'."""
    from harness_ext.methods.engine import frontier as F
    from harness_ext.methods.engine.newmodel_intervals import run_groups
    from harness_ext.methods.pounce import make_predictor
    from harness_ext.methods.reduction.budget import default_subset_size

    X = raw.to_numpy(float)
    k = default_subset_size(X.shape[1])
    a_sc, c_sc = qh.aggregate_scale(X, meta)
    tr, te = qh.frontier_splits(raw, X, a_sc, c_sc)["frontier"]
    runs = run_groups(raw.index)
    Xtr, Xte = X[tr], X[te]
    subset, _ = qh.choose_subset(Xtr, k, 0, qh.DEFAULT_SELECTOR, "lowrank", a_sc, c_sc)
    keep, Xin, have, usable, _, W, C, agg_true = qh.test_targets(Xte, subset, a_sc, c_sc)
    reselect = qh.product_reselect(Xtr, k, 0, qh.DEFAULT_SELECTOR, "lowrank", a_sc, c_sc, "design",
                                   groups=None if runs is None else runs[tr])
    out = {"n": [len(tr), len(te)]}
    saved = {a: getattr(F, a) for v in VARIANTS.values() for a in v}
    hidden = have & ~keep & usable[:, None]
    try:
        for name in variants:
            for a, value in {**saved, **VARIANTS[name]}.items():
                setattr(F, a, value)
            p = make_predictor("lowrank", random_state=0).fit(Xtr).predict_new_models(Xin, weights=W, reselect=reselect)
            agg = (np.where(have, np.where(keep & have, Xte, p.mean), 0.0) * W).sum(1) + C
            out[name] = {**_figures(agg, agg_true, usable, p.aggregate_lower + C, p.aggregate_upper + C),
                         **_cell_figures(p, Xte, hidden)}
        out["frontier_flagged"] = float(np.mean(np.asarray(p.frontier) > 0)) if p.frontier is not None else 0.0
    finally:
        for a, value in saved.items():
            setattr(F, a, value)
    out.update(_baselines(X, Xtr, Xte, keep, have, usable, W, C, agg_true, a_sc, c_sc, k))
    return out


def subsample(raw, size, seed):
    """``size`` rows of ``raw`` drawn without replacement, columns with >= 5 of them; redrawn (up to 20 times) until
    >= 3 columns are left and every row has >= 2 cells. Returns the frame and the kept columns' positions."""
    rng = np.random.default_rng(1000 + seed)
    for _ in range(20):
        sub = raw.iloc[np.sort(rng.choice(raw.shape[0], size, replace=False))]
        sub = sub.loc[:, sub.notna().sum(axis=0) >= 5]
        if sub.shape[1] >= 3 and (sub.notna().sum(axis=1) >= 2).all():
            break
    return sub, [list(raw.columns).index(c) for c in sub.columns]


def summary(res, variants):
    """Per matrix and variant the mean figures over its splits, and the criterion's verdict per variant."""
    mats = sorted({key.split("|")[0] for key in res})
    per = {(v, m): {x: float(np.nanmean([r[v].get(x, np.nan) for key, r in res.items() if key.startswith(m + "|")]))
                    for x in ("mae", "cov", "width", "bias")} for v in (*variants, "subset_mean", "random_ridge") for m in mats}
    print(f"{'variant':<14}" + "".join(f"{m[:12]:>30}" for m in mats) + f"{'mean':>30}")
    for v in (*variants, "subset_mean", "random_ridge"):
        cells = [per[(v, m)] for m in mats]
        cells.append({x: float(np.mean([c[x] for c in cells])) for x in ("mae", "cov", "width", "bias")})
        print(f"{v:<14}" + "".join(f"{c['mae']:>8.2f}{c['cov']:>7.3f}{c['width']:>8.2f}{c['bias']:>+7.2f}" for c in cells))
    print(f"\ncells (coverage, median width on the matrix's scale){'':<4}" + "".join(f"{m[:12]:>16}" for m in mats))
    for v in variants:
        figs = [[np.nanmean([r[v].get(x, np.nan) for key, r in res.items() if key.startswith(m + "|")])
                 for x in ("cell_cov", "cell_width")] for m in mats]
        print(f"{v:<54}" + "".join(f"{c:>8.3f}{w:>8.3g}" for c, w in figs))
    if "today" not in variants:
        return
    for v in variants:
        cov, cov0 = (np.array([per[(x, m)]["cov"] for m in mats]) for x in (v, "today"))
        mae, mae0 = (np.array([per[(x, m)]["mae"] for m in mats]) for x in (v, "today"))
        c1 = (cov.mean() >= 0.85 or (abs(cov.mean() - 0.9) < abs(cov0.mean() - 0.9) and (cov - cov0).min() >= -0.05)) \
            and cov.mean() <= 0.97
        c2 = mae.mean() <= mae0.mean() and (mae / mae0).max() <= 1.10
        print(f"{v:<14} coverage {cov.mean():.3f} MAE {mae.mean():.2f} worst MAE ratio {(mae / mae0).max():.2f}: "
              f"C1 {'pass' if c1 else 'fail'}, C2 {'pass' if c2 else 'fail'}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matrices", default=",".join(MATRICES))
    ap.add_argument("--sizes", default="32,36")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--json", default=None, help="write (and resume from) the per-split figures")
    args = ap.parse_args(argv)
    variants = tuple(args.variants.split(","))
    res = json.loads(Path(args.json).read_text()) if args.json and Path(args.json).exists() else {}
    for name, (raw, meta) in qh.load_matrices(args.matrices.split(",")).items():
        for size in (int(x) for x in args.sizes.split(",")):
            for seed in range(args.seeds):
                key = f"{name}|{size}|{seed}"
                if key not in res:
                    sub, cols = subsample(raw, size, seed)
                    res[key] = one_split(sub, [meta[c] for c in cols], variants)
                    if args.json:
                        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    summary(res, variants)
    return 0


if __name__ == "__main__":
    sys.exit(main())
