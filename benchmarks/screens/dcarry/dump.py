"""Per-target parts of ``crosstask``'s interval, for the design-carried targets' diagnosis (``w < 0.5``).

    python benchmarks/screens/dcarry/dump.py [--items-dir DIR] --table SRC/TASK --seeds 140 200 [--protocol P] --save X.pkl

Per target: the truth, the weight ``w``, the design estimate ``a``, its own variance and the smoothed one, the
design residuals' raw variance (before the 0/1 floor) and third moment, the sample mean, the regression's ``m``,
the interval's parts (``centre``, ``scaled``, ``cross``, ``fixed``, ``k``), the product's interval, the sources'
range and the beyond-sources flag. ``variants.py`` replays interval rules on these.
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
from harness_ext.methods.engine import item_estimators as ie  # noqa: E402
from harness_ext.methods.engine import item_crosstask  # noqa: E402
from harness_ext.methods.engine.item_composite import gvf_variance  # noqa: E402
from harness_ext.methods.engine.item_crosstask import CrossTask  # noqa: E402

LAST = {}
HULL = False  # the product's interval before the edge hull (``--hull`` for the variant's)
_orig = ie.design_interval


def _spy(est, resid, n_total, level, binary=False):
    LAST.update(resid=np.atleast_2d(resid).copy(), n_total=n_total, binary=binary)
    return _orig(est, resid, n_total, level, binary)


ie.design_interval = _spy


def one(scores, protocol, n, seed, others):
    d = qi.draw(scores, protocol, n, seed, others)
    S, T, truth, items = d["S"], d["T"], d["truth"], d["items"]
    est = CrossTask(hull_edge=HULL).fit(S, items, others=d["fit_o"])
    res = est.predict(T[:, items], others=d["pred_o"])
    Y = T[:, items]
    a = est.design_.predict(Y, others=d["pred_o"])
    resid = LAST["resid"]
    m = est.learn_.predict(Y, others=d["pred_o"]).estimate
    v_m = est.learn_.error_variance(Y)
    w = est.weight_
    local = item_crosstask.local_loo_mse(est.learn_.loo_residuals_, est.source_.mean(axis=1), m)
    _, centre, scaled, cross, fixed = est._interval_parts(a.estimate, a.lower, a.upper, a.se, m, v_m, local, w)
    nn = resid.shape[1]
    m3 = ((resid - resid.mean(axis=1, keepdims=True)) ** 3).mean(axis=1) * nn * nn / ((nn - 1.0) * (nn - 2.0))
    return {"seed": seed, "truth": truth, "w": w, "a": a.estimate, "se_a": a.se, "al": a.lower, "au": a.upper,
            "v_s": gvf_variance(est.gvf_, a.estimate, a.se ** 2), "s2_raw": resid.var(axis=1, ddof=1), "m3": m3,
            "n": nn, "N": LAST["n_total"], "ybar": Y.mean(axis=1), "m": m, "v_m": v_m, "local": local,
            "centre": centre, "scaled": scaled, "cross": cross, "fixed": fixed, "k": est.interval_scale_,
            "rho": est.error_correlation_, "lo": res.lower, "hi": res.upper, "est": res.estimate,
            "range": est.range_, "beyond": est.beyond_sources_, "gvf": est.gvf_}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--items-dir", type=Path)
    ap.add_argument("--table", required=True)
    ap.add_argument("--seeds", nargs=2, type=int, default=[140, 200])
    ap.add_argument("--items", type=int, default=50)
    ap.add_argument("--protocol", default="interpolation")
    ap.add_argument("--save", type=Path, required=True)
    ap.add_argument("--hull", action="store_true")
    args = ap.parse_args(argv)
    global HULL
    HULL = args.hull
    if args.items_dir:
        qi.ITEMS = args.items_dir
    scores, models = qi.load_named(qi.ITEMS / f"{args.table}.parquet")
    others = qi.sibling_tables(args.table, models)
    rows = [one(scores, args.protocol, args.items, s, others) for s in range(*args.seeds)]
    args.save.write_bytes(pickle.dumps(rows))
    cover = np.concatenate([(r["lo"] <= r["truth"]) & (r["truth"] <= r["hi"]) for r in rows])
    w = np.concatenate([r["w"] for r in rows])
    print(f"{args.table} {args.protocol} {args.seeds}: cover {cover.mean():.3f}, w<0.5 share {np.mean(w < 0.5):.3f} "
          f"cover {cover[w < 0.5].mean():.3f}")


if __name__ == "__main__":
    main()
