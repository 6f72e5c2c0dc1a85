"""Offline replay of a training-conditional (PAC) aggregate quantile on diag.py's records.

The aggregate CV+ bounds are recomputed from the fold fits' centres and scales with the order statistic
``k`` that Vovk (2012) gives for split conformal: the smallest ``k`` with ``Beta(k, n + 1 - k).cdf(level) <= delta``
(coverage conditional on the calibration is at least ``level`` with probability ``1 - delta``), i.e. the CV+ level
``k / (n + 1)``; the result is joined with the recorded final bounds (the frontier step only ever widens), so the
replay is exact for models the frontier step left alone.

    python benchmarks/screens/splitcov/replay_pac.py diag_crosspred.json [delta ...]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from scipy.stats import beta

sys.path.insert(0, Path(__file__).resolve().parents[3].as_posix())
from harness_ext.methods.engine.conformal import cv_plus_bounds  # noqa: E402


def pac_level(n: int, level: float, delta: float) -> float:
    for k in range(1, n + 1):
        if beta.cdf(level, k, n + 1 - k) <= delta:
            return k / (n + 1)
    return n / (n + 1)


def replay(path, delta):
    covs, widths = [], []
    for r in json.load(open(path)):
        u = np.array(r["usable"])
        t, lo, hi, off = (np.array(r[k]) for k in ("agg_true", "lo", "hi", "offset"))
        if delta is not None:
            s = np.array(r["scores"])
            lv = pac_level(int(np.isfinite(s).sum()), 0.9, delta)
            clo, chi = cv_plus_bounds(np.array(r["centres"]), np.array(r["scales"]), s, np.array(r["folds"]), lv)
            lo, hi = np.minimum(lo, clo + off), np.maximum(hi, chi + off)
        covs.append(((t >= lo) & (t <= hi))[u].mean())
        widths.append(np.median((hi - lo)[u]))
    covs = np.array(covs)
    return covs.mean(), np.percentile(covs, 5), np.mean(widths), covs


if __name__ == "__main__":
    path = sys.argv[1]
    for d in [None] + [float(x) for x in sys.argv[2:]]:
        m, p05, w, covs = replay(path, d)
        print(f"delta {d}: pooled {m:.3f} p05 {p05:.3f} width {w:.2f}  sorted {np.round(np.sort(covs), 3).tolist()}")
