"""Per-target parts of ``crosstask`` against ``aipw_paper`` (small item budgets, beyond the population).

For each table, protocol and seed, drawn exactly as ``benchmarks/quality_items.py`` draws them (its ``draw``), per
target: the truth, ``aipw_paper``'s estimate, ``crosstask``'s design part ``a`` (``design_``, ``aipw_difficulty``)
and its standard error, the regression's estimate ``m`` (``learn_``), its weight ``w``, the composite before the
agreement rule ``w m + (1 - w) a``, the flag (beyond the sources on the other tasks), the final estimate and
interval, and the fit's chosen ``lam``, ``clip``, ``rho``, agreement and range. Nothing patched.

    HARNESS_EXT_SHARED_DATA=/work/shared/data nice -n 10 python benchmarks/screens/small25/diagnose.py \
        --items-dir tests/fixtures/items_unseen --protocols extrapolation --items 25 --seeds 80 --out ep25.csv
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import quality_items as q  # noqa: E402
from harness_ext.methods.engine.item_crosstask import CrossTask  # noqa: E402
from harness_ext.methods.engine.item_estimators import AIPWPaper  # noqa: E402


def one(table, scores, others, strength, protocol, n, seed, make=CrossTask) -> pd.DataFrame:
    d = q.draw(scores, protocol, n, seed, others, 1.0, strength)
    S, T, items, fit_o, pred_o, truth = d["S"], d["T"], d["items"], d["fit_o"], d["pred_o"], d["truth"]
    paper = AIPWPaper().fit(S, items).predict(T[:, items])
    ct = make().fit(S, items, others=fit_o)
    res = ct.predict(T[:, items], others=pred_o)
    ad = ct.design_.predict(T[:, items], others=pred_o)
    a = ad.estimate
    has = ct.learn_ is not None
    m = ct.learn_.predict(T[:, items], others=pred_o).estimate if has else np.full(len(a), np.nan)
    w = np.asarray(ct.weight_, dtype=float)
    comp = w * m + (1 - w) * a if has else a
    return pd.DataFrame({
        "table": table, "protocol": protocol, "n": n, "seed": seed, "model": d["targets"], "truth": truth,
        "paper": paper.estimate, "paper_lo": paper.lower, "paper_hi": paper.upper,
        "design": a, "sd_a": ad.se, "design_lo": ad.lower, "design_hi": ad.upper, "reg": m, "w": w,
        "composite": comp, "flag": np.asarray(ct.beyond_sources_, dtype=bool),
        "final": res.estimate, "lower": res.lower, "upper": res.upper,
        "lam": ct.variance_scale_, "clip": ct.gap_clip_, "rho": ct.error_correlation_, "agree": ct.agreement_,
        "kscale": ct.interval_scale_, "range_lo": ct.range_[0], "range_hi": ct.range_[1], "n_src": len(S)})


def main(argv=None, make=CrossTask):
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", nargs="*")
    ap.add_argument("--items-dir", type=Path)
    ap.add_argument("--protocols", nargs="+", default=["extrapolation"])
    ap.add_argument("--items", type=int, default=25)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    if args.items_dir is not None:
        q.ITEMS = args.items_dir
    tables = args.tables or sorted(str(p.relative_to(q.ITEMS).with_suffix("")) for p in q.ITEMS.glob("*/*.parquet"))
    frames = []
    for t in tables:
        scores, models = q.load_named(q.ITEMS / f"{t}.parquet")
        others = q.sibling_tables(t, models)
        strength = q.benchmark_strength(scores, others)
        for p in args.protocols:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                frames.append(one(t, scores, others, strength, p, args.items, seed, make))
            print(t, p, "done", file=sys.stderr, flush=True)
    pd.concat(frames).to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
