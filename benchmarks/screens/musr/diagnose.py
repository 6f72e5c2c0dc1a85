"""Diagnosis of ``crosstask`` against ``aipw_paper`` per target (brief: MuSR and MATH-hard at the paper's frontier).

For each table, protocol and seed (as ``benchmarks/quality_items.py`` draws them: same split, same item draws, same
other-task draws), per target: the truth, ``aipw_paper``'s estimate, ``crosstask``'s design part
(``aipw_difficulty``, the fitted ``design_``), its regression part (``learn_``), the regression's weight ``weight_``,
the composite before the agreement rule ``w m + (1 - w) a``, whether the target is flagged beyond the sources on the
other tasks, the own-task composite where the rule acts, and the final estimate (``crosstask``'s). Nothing patched.

    HARNESS_EXT_SHARED_DATA=/work/shared/data nice -n 10 python benchmarks/screens/musr/diagnose.py \
        --tables open_llm_v2/musr open_llm_v2/openllm_math --protocols extrapolation --seeds 20 --out diag.csv
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
from harness_ext.methods.engine.item_estimators import AIPWPaper, random_items  # noqa: E402


def one(table, scores, others, strength, protocol, n, seed) -> pd.DataFrame:
    sources, targets = q.split(scores, protocol, seed, 1.0, strength)
    S, T = scores[sources], scores[targets]
    truth = T.mean(axis=1)
    other_items = [random_items(o.shape[1], n, 10_000 * (k + 1) + seed) for k, o in enumerate(others)]
    items = random_items(scores.shape[1], n, seed)
    fit_o = [(o[sources], it) for o, it in zip(others, other_items)]
    pred_o = [o[targets][:, it] for o, it in zip(others, other_items)]
    paper = AIPWPaper().fit(S, items).predict(T[:, items]).estimate
    ct = CrossTask().fit(S, items, others=fit_o)
    res = ct.predict(T[:, items], others=pred_o)
    ad = ct.design_.predict(T[:, items], others=pred_o)
    a = ad.estimate
    m = ct.learn_.predict(T[:, items], others=pred_o).estimate if ct.learn_ is not None else np.full(len(a), np.nan)
    w = np.asarray(ct.weight_, dtype=float)
    comp = w * m + (1 - w) * a if ct.learn_ is not None else a
    own = ct.own_.predict(T[:, items]).estimate if ct.own_ is not None else np.full(len(a), np.nan)
    return pd.DataFrame({
        "table": table, "protocol": protocol, "seed": seed, "model": targets, "truth": truth, "paper": paper,
        "design": a, "sd_a": ad.se, "reg": m, "w": w, "composite": comp, "flag": np.asarray(ct.beyond_sources_, dtype=bool),
        "own": own, "final": res.estimate, "lower": res.lower, "upper": res.upper,
        "lam": ct.variance_scale_, "clip": ct.gap_clip_, "rho": ct.error_correlation_, "agree": ct.agreement_,
        "range_hi": ct.range_[1]})


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", nargs="+", required=True)
    ap.add_argument("--protocols", nargs="+", default=["extrapolation"])
    ap.add_argument("--items", type=int, default=50)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    frames = []
    for t in args.tables:
        scores, models = q.load_named(q.ITEMS / f"{t}.parquet")
        others = q.sibling_tables(t, models)
        strength = q.benchmark_strength(scores, others)
        for p in args.protocols:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                frames.append(one(t, scores, others, strength, p, args.items, seed))
                print(t, p, seed, file=sys.stderr, flush=True)
    pd.concat(frames).to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
