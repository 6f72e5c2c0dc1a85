"""P4 of CRITERION.md: a synthetic population whose training models differ by less than the cell noise, and stronger
new models; aggregate coverage of the new models with and without the unshrunk reading joined.

Usage: python benchmarks/screens/noise/p4_synthetic.py
"""
import numpy as np

import harness_ext.methods.engine.frontier as fr
from harness_ext.methods.engine.completion import LowRankCompleter

ORIGINAL = fr.join_unshrunk


def population(seed, m=150, n=100, d=16):
    rng = np.random.default_rng(seed)
    ability = np.concatenate([rng.uniform(0, 0.01, m), rng.uniform(0.05, 0.15, n)])
    load = rng.uniform(0.5, 1.5, d)
    return ability[:, None] * load[None, :] + rng.normal(0, 0.03, (m + n, d))


def run(rule: bool):
    fr.join_unshrunk = ORIGINAL if rule else (lambda *a, **k: None)
    d, m = 16, 150
    w = np.full(d, 1 / d)
    rows = []
    for seed in (1, 2, 3, 4):
        T = population(seed)
        new = T[m:].copy()
        new[:, 5:] = np.nan
        est = LowRankCompleter(random_state=0).fit(T[:m])
        p = est.predict_new_models(new, weights=w)
        truth = T[m:] @ w
        cov = float(((p.aggregate_lower <= truth) & (truth <= p.aggregate_upper)).mean())
        rows.append((cov, float((p.aggregate_upper - p.aggregate_lower).mean()), float((p.aggregate - truth).mean()),
                     est.calibration_share_, float((np.asarray(p.frontier) > 0).mean())))
    return rows


for rule in (False, True):
    rows = run(rule)
    print("with the rule" if rule else "product     ",
          "cover", [round(r[0], 3) for r in rows], "mean", round(float(np.mean([r[0] for r in rows])), 3),
          "width", round(float(np.mean([r[1] for r in rows])), 4), "bias", round(float(np.mean([r[2] for r in rows])), 4),
          "share", [None if r[3] is None else round(r[3], 3) for r in rows], "flagged", [round(r[4], 2) for r in rows])
