"""Per-target and per-held-out-source parts of ``crosstask``'s interval, for the over-covering HELM Lite cells.

    python benchmarks/screens/overcov/dump.py --table SRC/TASK --seeds 260 280 --protocol P --save X.pkl

Per draw: for each target the truth, weight ``w``, design estimate and interval, regression ``m``, ``v_m``, ``local``,
the interval's parts (``centre``, ``scaled``, ``cross``, ``fixed``), the calibrated ``k``, the interval before the edge
hull, after it, and the product's (after the beyond-sources widening), the flags; and the calibration set (the
reselected interleaved folds' held-out sources) with the same parts, so the factor each needs can be compared.
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

HERE = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(HERE / "benchmarks"))
import quality_items as qi  # noqa: E402
from harness_ext.methods.engine import item_crosstask  # noqa: E402
from harness_ext.methods.engine.item_composite import edge_hull  # noqa: E402
from harness_ext.methods.engine.item_crosstask import GAP_LOWER_Z, CrossTask  # noqa: E402
from harness_ext.methods.engine.item_estimators import _z  # noqa: E402


class Spy(CrossTask):
    def _calibrated_scale(self, held):
        k = super()._calibrated_scale(held)
        bounds = (held["lo"], held["hi"])
        w = self._scaled_weight(held["v_s"], held["a"], held["v_m"], self.variance_scale_, bounds, m=held["m"])
        _, centre, scaled, cross, fixed = self._interval_parts(
            held["a"], held["al"], held["au"], held["sd_a"], held["m"], held["v_m"], held["local"], w, bounds)
        self.cal_ = {"w": w, "centre": centre, "scaled": scaled, "cross": cross, "fixed": fixed,
                     "truth": held["truth"], "m": held["m"], "a": held["a"], "sd_a": held["sd_a"],
                     "v_m": held["v_m"], "local": held["local"], "lo": held["lo"], "hi": held["hi"]}
        return k


class Folds10(Spy):
    """Variant (i): the interval's scale calibrated on 10 interleaved folds (each fit on 90% of the sources)."""
    cal_folds = 10

    def fit(self, source, items, others=()):
        super().fit(source, items, others=others)
        if self.learn_ is not None and self.calibrate:
            from harness_ext.methods.engine.item_composite import gvf_variance as _gv
            held = self._held_out_errors(list(others), n_folds=self.cal_folds)
            held["v_s"] = _gv(self.gvf_, held["a"], held["sd_a"] ** 2)
            inside = {k: v[~held["frontier"]] for k, v in held.items()}
            self.interval_scale_ = self._calibrated_scale(self._reselected(inside, list(others), self.cal_folds))
        return self


VARIANT = Spy


def one(scores, protocol, n, seed, others):
    d = qi.draw(scores, protocol, n, seed, others)
    S, T, truth, items = d["S"], d["T"], d["truth"], d["items"]
    est = VARIANT().fit(S, items, others=d["fit_o"])
    res = est.predict(T[:, items], others=d["pred_o"])
    Y = T[:, items]
    a = est.design_.predict(Y, others=d["pred_o"])
    m = est.learn_.predict(Y, others=d["pred_o"]).estimate
    v_m = est.learn_.error_variance(Y)
    w = est.weight_
    local = item_crosstask.local_loo_mse(est.learn_.loo_residuals_, est.source_.mean(axis=1), m)
    _, centre, scaled, cross, fixed = est._interval_parts(a.estimate, a.lower, a.upper, a.se, m, v_m, local, w)
    k = est.interval_scale_
    z = _z(est.level)
    se0 = np.sqrt(np.maximum(k ** 2 * scaled + k * cross + fixed, 0.0))
    lo0, hi0 = centre - z * se0, centre + z * se0
    r = z * k * np.sqrt(np.maximum(v_m, local))
    lo1, hi1 = edge_hull(lo0, hi0, a.estimate, a.se, est.range_, m - r, m + r, GAP_LOWER_Z)
    return {"seed": seed, "truth": truth, "w": w, "a": a.estimate, "se_a": a.se, "al": a.lower, "au": a.upper,
            "m": m, "v_m": v_m, "local": local, "centre": centre, "scaled": scaled, "cross": cross, "fixed": fixed,
            "k": k, "lam": est.variance_scale_, "clip": est.gap_clip_, "rho": est.error_correlation_,
            "lo0": lo0, "hi0": hi0, "lo1": lo1, "hi1": hi1, "lo": res.lower, "hi": res.upper, "est": res.estimate,
            "range": est.range_, "beyond": est.beyond_sources_, "cal": est.cal_, "n_src": S.shape[0]}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--items-dir", type=Path)
    ap.add_argument("--table", required=True)
    ap.add_argument("--seeds", nargs=2, type=int, default=[260, 280])
    ap.add_argument("--items", type=int, default=50)
    ap.add_argument("--protocol", default="interpolation")
    ap.add_argument("--save", type=Path, required=True)
    ap.add_argument("--variant", default="main", choices=["main", "folds10"])
    args = ap.parse_args(argv)
    global VARIANT
    VARIANT = {"main": Spy, "folds10": Folds10}[args.variant]
    if args.items_dir:
        qi.ITEMS = args.items_dir
    scores, models = qi.load_named(qi.ITEMS / f"{args.table}.parquet")
    others = qi.sibling_tables(args.table, models)
    rows = [one(scores, args.protocol, args.items, s, others) for s in range(*args.seeds)]
    args.save.write_bytes(pickle.dumps(rows))
    cover = np.concatenate([(r["lo"] <= r["truth"]) & (r["truth"] <= r["hi"]) for r in rows])
    print(f"{args.table} {args.protocol} {args.seeds}: cover {cover.mean():.3f}")


if __name__ == "__main__":
    main()
