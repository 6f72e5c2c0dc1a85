"""Diagnose the frontier split's acc interval: which part of the union sets each bound (product vs --floored)."""
import sys, json
import numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
import quality_round_trip as qrt
from harness_ext.methods.engine import newmodel_intervals as ni, frontier as fr
from harness_ext.methods.engine.conformal import cv_plus_bounds

REC = {}

def inst_extra(est, cal, X_new, z, O, W_extra):
    if X_new.shape[0] < 2:
        return ORIG_EXTRA(est, cal, X_new, z, O, W_extra)
    level = float(est.level)
    row, ex = np.atleast_2d(W_extra)[0], cal["extra"][0]
    _, _, aggs = ni._fold_predictions(est, cal, z, X_new, O, np.broadcast_to(row, X_new.shape))
    parts = {}
    parts["scaled"] = cv_plus_bounds(aggs[0], aggs[1], ex["agg_scores"], ex["agg_folds"], level)
    r, k = ex["residuals"], ex["residual_folds"]
    tail = (1 + level) / 2
    for name, (scale, s) in (("plain", (np.ones_like(aggs[1]), r)), ("dist", ni._distance_scaled(est, cal, z, O, r, ex))):
        parts[name + "_abs"] = cv_plus_bounds(aggs[0], scale, np.abs(s), k, level)
        parts[name + "_signed"] = (cv_plus_bounds(aggs[0], scale, -s, k, tail)[0], cv_plus_bounds(aggs[0], scale, s, k, tail)[1])
        if name == "dist":
            REC["d_new"] = scale - 1.0
    REC["parts"] = parts
    REC["centre_cv"] = aggs[0].mean(0)
    REC["res"] = r; REC["res_dist"] = ex["residual_distances"]
    REC["n_res"] = r.size
    out = ORIG_EXTRA(est, cal, X_new, z, O, W_extra)
    REC["union"] = (out[0][:, 0].copy(), out[1][:, 0].copy())
    return out

def inst_widen_extra(est, fi, pattern, direction, rows, o, m_eng, out, W_extra, ramp, records, eng, truth=None):
    if out["ex"].shape[0] < 2:
        return ORIG_WIDEN(est, fi, pattern, direction, rows, o, m_eng, out, W_extra, ramp, records, eng, truth)
    REC["before_widen"] = (rows.copy(), out["ex"][rows, 0].copy(), out["ex_lo"][rows, 0].copy(), out["ex_hi"][rows, 0].copy())
    REC["ramp"] = ramp.copy()
    res = ORIG_WIDEN(est, fi, pattern, direction, rows, o, m_eng, out, W_extra, ramp, records, eng, truth)
    u = np.atleast_2d(W_extra)[0]
    cal = fr.calibrate_frontier(est, pattern, u, direction, truth=truth, records=records)
    REC["fcal_extra"] = cal
    REC["after_widen"] = (out["ex"][rows, 0].copy(), out["ex_lo"][rows, 0].copy(), out["ex_hi"][rows, 0].copy())
    return res

def inst_apply(est, fit, fi, mz, z, X_new, O, W, w_cal, out, W_extra=None, extra_truth=None):
    if W_extra is None or X_new.shape[0] < 2:
        return ORIG_APPLY(est, fit, fi, mz, z, X_new, O, W, w_cal, out, W_extra, extra_truth)
    REC["agg_before"] = (out["agg"].copy(), out["agg_lo"].copy(), out["agg_hi"].copy())
    REC["ex_before_frontier"] = (out["ex"][:, 0].copy(), out["ex_lo"][:, 0].copy(), out["ex_hi"][:, 0].copy())
    res = ORIG_APPLY(est, fit, fi, mz, z, X_new, O, W, w_cal, out, W_extra, extra_truth)
    REC["dist"], REC["cals"] = res
    REC["agg_after"] = (out["agg"].copy(), out["agg_lo"].copy(), out["agg_hi"].copy())
    REC["ex_after_frontier"] = (out["ex"][:, 0].copy(), out["ex_lo"][:, 0].copy(), out["ex_hi"][:, 0].copy())
    return res

def inst_prior(est, O, W, out, dist, u, cals, W_extra):
    if W_extra is None or O.shape[0] < 2:
        return ORIG_PRIOR(est, O, W, out, dist, u, cals, W_extra)
    REC["ex_before_prior"] = (out["ex_lo"][:, 0].copy(), out["ex_hi"][:, 0].copy())
    REC["agg_before_prior"] = (out["agg_lo"].copy(), out["agg_hi"].copy())
    r = ORIG_PRIOR(est, O, W, out, dist, u, cals, W_extra)
    REC["ex_after_prior"] = (out["ex_lo"][:, 0].copy(), out["ex_hi"][:, 0].copy())
    return r

ORIG_EXTRA, ORIG_WIDEN, ORIG_APPLY, ORIG_PRIOR = ni.cv_plus_extra_aggregates, fr._widen_extra, fr.apply_frontier, fr._prior_allowance
ni.cv_plus_extra_aggregates = inst_extra
fr._widen_extra = inst_widen_extra
fr.apply_frontier = inst_apply
fr._prior_allowance = inst_prior
from harness_ext.methods.engine import completion  # imports at call time from modules: patched names used

floored = "--floored" in sys.argv
orig_scores = qrt.scores
CAP = {}
def cap_scores(manifest, df, truth, pred):
    CAP["pred"] = pred
    return orig_scores(manifest, df, truth, pred)
qrt.scores = cap_scores
res = qrt.frontier(qrt.bundled_data_path(), "8", 200, 0, floored)
pred = CAP["pred"]
agg = pred.aggregate.reset_index(drop=True)
acc, lo, hi, actual = (agg[c].to_numpy(float) for c in ("aggregate", "lower", "upper", "actual"))
ex_f = REC["ex_after_frontier"][0]
c = float(np.median(acc - ex_f))
t = actual - c  # truth on the ex scale
print(f"floored={floored} n={len(t)} offset c={c:.4f}  acc cover {np.mean((lo<=actual)&(actual<=hi)):.3f} width {np.mean(hi-lo):.4f} bias {np.mean(acc-actual):+.4f}")
print("final acc vs ex_after_prior (max abs diff lo, hi):", np.abs(lo - c - REC["ex_after_prior"][0]).max(), np.abs(hi - c - REC["ex_after_prior"][1]).max())
def cov(l, h): return f"cover {np.mean((l<=t)&(t<=h)):.3f} width {np.mean(h-l):.4f} lo_miss {np.mean(t<l):.3f} hi_miss {np.mean(t>h):.3f}"
print("CV+ stage (centre = mean of fold predictions):")
for name, (l, h) in REC["parts"].items():
    print(f"  {name:12s} {cov(l, h)}")
ul, uh = REC["union"]
print(f"  {'union':12s} {cov(ul, uh)}")
names = list(REC["parts"])
L = np.stack([REC["parts"][n][0] for n in names]); H = np.stack([REC["parts"][n][1] for n in names])
print("  sets lower:", {n: int(v) for n, v in zip(names, np.bincount(L.argmin(0), minlength=len(names)))})
print("  sets upper:", {n: int(v) for n, v in zip(names, np.bincount(H.argmax(0), minlength=len(names)))})
exb = REC["ex_before_frontier"]
print("  before frontier (== union):", cov(exb[1], exb[2]), "centre mean", exb[0].mean().round(4), " truth mean", t.mean().round(4))
rows, e0, l0, h0 = REC["before_widen"]
e1, l1, h1 = REC["after_widen"]
print(f"frontier: flagged {rows.size}/{len(t)}; ramp median {np.median(REC['ramp']):.2f} (>=1: {np.mean(REC['ramp']>=1):.2f}); recentre shift mean {np.mean(e1-e0):+.4f}")
fc = REC["fcal_extra"]
print(f"  frontier cal (acc weights): cand {fc.candidate} w {fc.weight} q_agg {fc.q_aggregate} q_agg_eng {fc.q_aggregate_engine} n {fc.n_models} distinct {fc.n_distinct} cov {fc.aggregate_coverage} mae {fc.aggregate_mae:.4f} bias {fc.aggregate_bias:+.4f} max_dist {fc.max_distance:.2f}")
shifted_l, shifted_h = l0 + (e1 - e0), h0 + (e1 - e0)
print("  widened lower (of flagged):", int(np.sum(l1 < shifted_l - 1e-12)), " widened upper:", int(np.sum(h1 > shifted_h + 1e-12)))
exa = REC["ex_after_frontier"]
print("  after frontier:", cov(exa[1], exa[2]), "centre mean", exa[0].mean().round(4))
pl, ph = REC["ex_after_prior"]
print("  after prior allowance:", cov(pl, ph), " raised upper:", int(np.sum(ph > exa[2] + 1e-12)))
d = REC["dist"]; dn = REC["d_new"]
print(f"distances: frontier dist (predict) median {np.median(d):.2f} min {d.min():.2f} max {d.max():.2f}; per-fold d_new median {np.median(dn):.2f} max {dn.max():.2f}")
rd = REC["res_dist"]
print(f"calibration residuals: n {rd.size}, distance >0: {np.mean(rd>0):.3f}, median {np.median(rd):.3f}, q90 {np.quantile(rd,.9):.3f}, max {rd.max():.3f}")
r = REC["res"]
print(f"calibration residuals (acc units): |r| q90 {np.quantile(np.abs(r),.9):.4f}, signed q05 {np.quantile(r,.05):+.4f} q95 {np.quantile(r,.95):+.4f}; /(1+dist) |.| q90 {np.quantile(np.abs(r/(1+rd)),.9):.4f}")
print(f"truth - centre (after frontier) mean {np.mean(t-exa[0]):+.4f} median {np.median(t-exa[0]):+.4f} q90|.| {np.quantile(np.abs(t-exa[0]),.9):.4f}")
print("half-widths after frontier: lower median", np.median(exa[0]-exa[1]).round(4), " upper median", np.median(exa[2]-exa[0]).round(4))
ab, aa = REC["agg_before"], REC["agg_after"]
T = agg["normalised_actual"].to_numpy(float) if "normalised_actual" in agg else None
print("normalised aggregate columns:", [c for c in agg.columns])
cals = REC["cals"]
c1 = cals.get(1)
if c1 is not None:
    print(f"frontier cal (manifest weights): cand {c1.candidate} w {c1.weight} q_agg {c1.q_aggregate} q_eng {c1.q_aggregate_engine} cov {c1.aggregate_coverage} bias {c1.aggregate_bias}")
print("cals keys", list(cals))
np.savez(f"diag_{'floored' if floored else 'prod'}.npz", t=t, d=d, dn=dn, rd=rd, r=r,
         ex_lo=pl, ex_hi=ph, ex=exa[0], agg_lo_b=ab[1], agg_hi_b=ab[2], agg_b=ab[0], agg_lo=aa[1], agg_hi=aa[2], agg_a=aa[0])
T = agg["normalised_actual"].to_numpy(float)
def covT(l, h): return f"cover {np.mean((l<=T)&(T<=h)):.3f} width {np.mean(h-l):.4f} lo_miss {np.mean(T<l):.3f} hi_miss {np.mean(T>h):.3f}"
print("normalised aggregate: CV+ (scaled only):", covT(ab[1], ab[2]), "centre bias", np.mean(ab[0]-T).round(4))
pa = REC["agg_before_prior"]
print("  after frontier folds (+hidden shift):", covT(pa[0], pa[1]), "centre bias", np.mean(aa[0]-T).round(4))
print("  after prior allowance:", covT(aa[1], aa[2]))
print("  final (predict, clipped):", covT(agg["normalised_lower"].to_numpy(float), agg["normalised_upper"].to_numpy(float)))
pr = cals.get("prior")
print("  prior:", pr)
rows, e0, l0, h0 = REC["before_widen"]
print("check: flagged rows at _widen_extra entry:", f"cover {np.mean((l0<=t[rows])&(t[rows]<=h0)):.3f}",
      "after:", f"{np.mean((l1<=t[rows])&(t[rows]<=h1)):.3f}", "; same rows before apply_frontier:",
      f"{np.mean((exb[1][rows]<=t[rows])&(t[rows]<=exb[2][rows])):.3f}", "upper widened by (median over widened)",
      np.median((h1-shifted_h)[h1>shifted_h+1e-12]) if np.any(h1>shifted_h+1e-12) else 0)
fl = d > 0
print("flagged", int(fl.sum()), "before apply_frontier cover (flagged)", np.mean(((exb[1]<=t)&(t<=exb[2]))[fl]).round(3),
      "after", np.mean(((exa[1]<=t)&(t<=exa[2]))[fl]).round(3), "| unflagged before", np.mean(((exb[1]<=t)&(t<=exb[2]))[~fl]).round(3),
      "after", np.mean(((exa[1]<=t)&(t<=exa[2]))[~fl]).round(3), "| rows at _widen_extra", rows.size, "ex max |diff| before_widen vs before apply", np.abs(l0-exb[1][rows]).max())
bl, bh = REC["ex_before_prior"]
print("prior allowance on acc: cover before", np.mean((bl<=t)&(t<=bh)).round(3), "after", np.mean((pl<=t)&(t<=ph)).round(3),
      "upper raised", int(np.sum(ph > bh + 1e-12)), "width before", np.mean(bh-bl).round(4), "after", np.mean(ph-pl).round(4))
