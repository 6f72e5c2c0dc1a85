"""Coverage of ``crosstask``'s interval by part, per draw (the small-population diagnosis).

    python benchmarks/screens/smallcov/diag.py --items-dir DIR --table SRC/TASK --seeds 0 20 [--frac F] [--protocol P]

Per target: the composite's cover, the design part's own interval's cover, the regression alone at the calibrated
scale (``m -/+ z k sqrt(inside)``) and at ``k = 1``, the regression's weight ``w`` and the scaled part's share of the
interval's variance. Per draw: the calibration's ``k``, the number of calibration models it kept, ``lam``, ``rho``,
and the calibration models' own coverage at ``k``.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
import numpy as np

HERE = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(HERE / "benchmarks"))
import quality_items as qi  # noqa: E402
from harness_ext.methods.engine import item_composite, item_crosstask  # noqa: E402
from harness_ext.methods.engine.item_crosstask import CrossTask, _z  # noqa: E402

CAL = {}
_orig = item_composite.coverage_scale


def _spy(resid, scaled, cross, fixed, level=0.9, z=None, cap=1e3):
    k = _orig(resid, scaled, cross, fixed, level, z, cap)
    A, B, C = (np.asarray(v, float) for v in (scaled, cross, fixed))
    total = A + np.abs(B) + C
    keep = A >= item_composite.MIN_SCALED_SHARE * np.where(total > 0, total, np.inf)
    zz = _z(level) if z is None else z
    cov = np.abs(resid) <= zz * np.sqrt(np.maximum(k * k * A + k * B + C, 0))
    CAL.update(k=k, n=len(A), keep=int(keep.sum()), cal_cover=float(cov.mean()),
               cal_cover_keep=float(cov[keep].mean()) if keep.any() else np.nan,
               resid=np.asarray(resid, float), A=A, B=B, C=C)
    return k


item_crosstask.coverage_scale = _spy


def one(scores, protocol, n, seed, frac, others):
    d = qi.draw(scores, protocol, n, seed, others, frac)
    S, T, truth, items = d["S"], d["T"], d["truth"], d["items"]
    CAL.clear()
    est = CrossTask().fit(S, items, others=d["fit_o"])
    res = est.predict(T[:, items], others=d["pred_o"])
    Y = T[:, items]
    a = est.design_.predict(Y, others=d["pred_o"])
    m = est.learn_.predict(Y, others=d["pred_o"]).estimate
    v_m = est.learn_.error_variance(Y)
    w = est.weight_
    local = item_crosstask.local_loo_mse(est.learn_.loo_residuals_, est.source_.mean(axis=1), m)
    _, centre, scaled, cross, fixed = est._interval_parts(a.estimate, a.lower, a.upper, a.se, m, v_m, local, w)
    k = est.interval_scale_
    z = _z(0.9)
    inside = np.where(w > 0, scaled / np.maximum(w ** 2, 1e-300), np.maximum(v_m, local))
    cov = lambda lo, hi: (lo <= truth) & (truth <= hi)  # noqa: E731
    tot = k * k * scaled + k * cross + fixed
    return {
        "seed": seed, "k": k, "lam": est.variance_scale_, "rho": est.error_correlation_, "clip": est.gap_clip_,
        "n_src": S.shape[0], "cal_n": CAL.get("n", 0), "cal_keep": CAL.get("keep", 0),
        "cal_cover": CAL.get("cal_cover", np.nan),
        "cover": cov(res.lower, res.upper), "cover_design": cov(a.lower, a.upper),
        "cover_reg_k": np.abs(m - truth) <= z * k * np.sqrt(inside),
        "cover_reg_1": np.abs(m - truth) <= z * np.sqrt(inside),
        "w": w, "share": k * k * scaled / np.maximum(tot, 1e-300),
        "err_m": m - truth, "err_a": a.estimate - truth, "err": res.estimate - truth,
        "sd_m": np.sqrt(inside), "sd_a": a.se, "width": res.upper - res.lower,
        "v_m_ratio": v_m / np.maximum(inside, 1e-300),
        "cal_resid": CAL.get("resid"), "cal_A": CAL.get("A"),
    }


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--items-dir", type=Path)
    ap.add_argument("--table", required=True)
    ap.add_argument("--seeds", nargs=2, type=int, default=[0, 20])
    ap.add_argument("--items", type=int, default=50)
    ap.add_argument("--frac", type=float, default=1.0)
    ap.add_argument("--protocol", default="interpolation")
    ap.add_argument("--save", type=Path)
    args = ap.parse_args(argv)
    if args.items_dir:
        qi.ITEMS = args.items_dir
    scores, models = qi.load_named(qi.ITEMS / f"{args.table}.parquet")
    others = qi.sibling_tables(args.table, models)
    rows = [one(scores, args.protocol, args.items, s, args.frac, others) for s in range(*args.seeds)]
    cat = lambda key: np.concatenate([np.atleast_1d(r[key]) for r in rows])  # noqa: E731
    print(f"{args.table} {args.protocol} frac={args.frac} n_src={rows[0]['n_src']} seeds={args.seeds} draws={len(rows)}")
    for key in ("cover", "cover_design", "cover_reg_k", "cover_reg_1"):
        per = [r[key].mean() for r in rows]
        print(f"  {key:14s} {cat(key).mean():.3f} (se {np.std(per, ddof=1) / np.sqrt(len(per)):.3f})")
    ks = np.array([r["k"] for r in rows])
    print(f"  k: median {np.median(ks):.2f}, mean {ks.mean():.2f}, share k==1 {np.mean(ks == 1):.2f}; "
          f"cal kept median {np.median([r['cal_keep'] for r in rows])} of {rows[0]['cal_n']}; "
          f"cal cover at k {np.nanmean([r['cal_cover'] for r in rows]):.3f}")
    print(f"  lam=0 share {np.mean([r['lam'] == 0 for r in rows]):.2f}; rho mean {np.mean([r['rho'] for r in rows]):.2f}; "
          f"w median {np.median(cat('w')):.2f}; scaled share median {np.median(cat('share')):.2f}")
    print(f"  rmse: m {np.sqrt(np.mean(cat('err_m') ** 2)) * 100:.2f}, a {np.sqrt(np.mean(cat('err_a') ** 2)) * 100:.2f}, "
          f"composite {np.sqrt(np.mean(cat('err') ** 2)) * 100:.2f}; mean sd_m {np.sqrt(np.mean(cat('sd_m') ** 2)) * 100:.2f} "
          f"(k*sd_m {np.sqrt(np.mean((np.repeat(ks, [len(r['w']) for r in rows]) * cat('sd_m')) ** 2)) * 100:.2f}), "
          f"sd_a {np.sqrt(np.mean(cat('sd_a') ** 2)) * 100:.2f}; median width {np.median(cat('width')) * 100:.2f}")
    # the regression's standardised errors on targets vs calibration models
    zt = cat("err_m") / cat("sd_m")
    print(f"  targets |e_m|/sd_m: q90 {np.quantile(np.abs(zt), 0.9):.2f}; "
          f"k needed for 90% on targets {np.quantile(np.abs(zt), 0.9) / _z(0.9):.2f}")
    # per-draw correlation between coverage and k
    cov_d = np.array([r["cover"].mean() for r in rows])
    print(f"  per-draw coverage vs k corr {np.corrcoef(ks, cov_d)[0, 1]:.2f}; coverage where k<median "
          f"{cov_d[ks < np.median(ks)].mean():.3f}, k>=median {cov_d[ks >= np.median(ks)].mean():.3f}")
    if args.save:
        import pickle
        args.save.write_bytes(pickle.dumps(rows))


if __name__ == "__main__":
    main()
