"""Per draw, the parts of ``crosstask``'s interval for targets and calibration models (offline variants).

    python benchmarks/screens/smallcov/dump.py OUT.pkl --items-dir DIR --tables T1 T2 --seeds 0 20 --protocols P1 P2
"""
from __future__ import annotations

import argparse
import os
import pickle
import sys
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
import quality_items as qi  # noqa: E402
from harness_ext.base import limit_threads  # noqa: E402
from harness_ext.methods.engine import item_crosstask  # noqa: E402
from harness_ext.methods.engine.item_crosstask import CrossTask  # noqa: E402

CAL = {}
_orig_cal = CrossTask._calibrated_scale


def _spy(self, held):
    k = _orig_cal(self, held)
    # the first calibration of a fit: the task-alone refit (``own_``) calibrates again afterwards
    if held["e_m"].size >= 10 and not CAL:
        bounds = (held["lo"], held["hi"])
        w = self._scaled_weight(held["sd_a"] ** 2, held["a"], held["v_m"], self.variance_scale_, bounds, m=held["m"])
        _, centre, A, B, C = self._interval_parts(held["a"], held["al"], held["au"], held["sd_a"], held["m"],
                                                  held["v_m"], held["local"], w, bounds)
        CAL.update(resid=held["truth"] - centre, A=A, B=B, C=C, w=w, sd_a=held["sd_a"],
                   gap=self._gap(held["a"], held["sd_a"], bounds, held["m"]))
    return k


CrossTask._calibrated_scale = _spy


def one(scores, protocol, seed, others, strength):
    d = qi.draw(scores, protocol, 50, seed, others, 1.0, strength)
    CAL.clear()
    with limit_threads():
        est = CrossTask().fit(d["S"], d["items"], others=d["fit_o"])
        Y = d["T"][:, d["items"]]
        res = est.predict(Y, others=d["pred_o"])
        a = est.design_.predict(Y, others=d["pred_o"])
        m = est.learn_.predict(Y, others=d["pred_o"]).estimate
        v_m = est.learn_.error_variance(Y)
        local = item_crosstask.local_loo_mse(est.learn_.loo_residuals_, est.source_.mean(axis=1), m)
        _, centre, A, B, C = est._interval_parts(a.estimate, a.lower, a.upper, a.se, m, v_m, local, est.weight_)
    return dict(seed=seed, truth=d["truth"], est=res.estimate, lower=res.lower, upper=res.upper, centre=centre,
                A=A, B=B, C=C, w=est.weight_, sd_a=a.se, k=est.interval_scale_, beyond=est.beyond_sources_,
                cal=dict(CAL), lam=est.variance_scale_, a=a.estimate, range=est.range_,
                gap=est._gap(a.estimate, a.se, None, m))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--items-dir", type=Path)
    ap.add_argument("--tables", nargs="*")
    ap.add_argument("--seeds", nargs=2, type=int)
    ap.add_argument("--protocols", nargs="*", default=["interpolation"])
    args = ap.parse_args()
    if args.items_dir:
        qi.ITEMS = args.items_dir
    tables = args.tables or sorted(str(p.relative_to(qi.ITEMS).with_suffix("")) for p in qi.ITEMS.glob("*/*.parquet"))
    out = {}
    for t in tables:
        scores, models = qi.load_named(qi.ITEMS / f"{t}.parquet")
        others = qi.sibling_tables(t, models)
        strength = qi.benchmark_strength(scores, others)
        for p in args.protocols:
            out[(t, p)] = [one(scores, p, s, others, strength) for s in range(*args.seeds)]
            print(t, p, flush=True)
    args.out.write_bytes(pickle.dumps(out))


if __name__ == "__main__":
    main()
