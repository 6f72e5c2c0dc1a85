"""Screen C1 (fitted distance scale) / C2 (frontier-fold acc residuals pooled) on quality_round_trip.
usage: screen.py C1|C2 [quality_round_trip args]"""
import sys
import numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
from harness_ext.methods.engine import newmodel_intervals as ni, frontier as fr
from harness_ext.methods.engine.conformal import conformal_quantile
from harness_ext.methods.engine.frontier_aggregate import held_out_aggregate

CAND = sys.argv[1] if __name__ == "__main__" else None
LOG = {"kappa": [], "c2": []}

ORIG_DS = ni._distance_scaled
def c1_distance_scaled(est, cal, z, O, r, ex):
    scale, s = ORIG_DS(est, cal, z, O, r, ex)
    dist = ex.get("residual_distances")
    if dist is None or dist.size != r.size or dist.size < 3:
        return scale, s
    A = np.c_[np.ones_like(dist), dist]
    (a, b), *_ = np.linalg.lstsq(A, np.abs(r), rcond=None)
    kappa = b / a if a > 0 else 0.0
    LOG["kappa"].append(float(kappa))
    if kappa <= 0:
        return scale, s  # the residuals do not grow with the distance: the product's 1 + d
    return 1.0 + kappa * (scale - 1.0), r / (1.0 + kappa * dist)

ORIG_APPLY = fr.apply_frontier
def c2_apply(est, fit, fi, mz, z, X_new, O, W, w_cal, out, W_extra=None, extra_truth=None):
    dist, cals = ORIG_APPLY(est, fit, fi, mz, z, X_new, O, W, w_cal, out, W_extra, extra_truth)
    cache = getattr(est, "_cal_cache", None)
    if W_extra is None or out.get("ex") is None or extra_truth is None or cache is None:
        return dist, cals
    rows = np.flatnonzero(dist > 0)
    if rows.size == 0:
        return dist, cals
    pattern = O.any(0)
    records = fr.frontier_folds(est, pattern, 1)
    level = float(est.level)
    for k, u in enumerate(np.atleast_2d(W_extra)):
        ex = cache[1][-1]["extra"][k]
        r_m, d_m = ex.get("residuals"), ex.get("residual_distances")
        if r_m is None or not r_m.size:
            continue
        rf, df = [], []
        for rec in records:
            Tt = extra_truth[rec["held"]]
            a_true, a_pred, wt, ok = held_out_aggregate(est, Tt, rec["have"], rec["seen"], rec["eng"], u)
            tot = np.where(rec["have"], u[None, :], 0.0).sum(1)
            rf.append(((a_true - a_pred) * tot)[ok]); df.append(rec["dist"][ok])
        rf, df = np.concatenate(rf), np.concatenate(df)
        s = np.concatenate([r_m / (1 + d_m), rf / (1 + df)])
        tail = (1 + level) / 2
        q_abs = conformal_quantile(np.abs(s), level)
        q_lo, q_hi = -conformal_quantile(-s, tail), conformal_quantile(s, tail)
        sc = 1.0 + dist[rows]
        c = out["ex"][rows, k]
        lo = np.minimum(c - q_abs * sc, c + q_lo * sc); hi = np.maximum(c + q_abs * sc, c + q_hi * sc)
        LOG["c2"].append((int(rows.size), float(np.abs(rf).mean()), float(np.quantile(np.abs(rf / (1 + df)), 0.9)),
                          float(np.quantile(np.abs(r_m / (1 + d_m)), 0.9)), int(np.sum(lo < out["ex_lo"][rows, k])),
                          int(np.sum(hi > out["ex_hi"][rows, k]))))
        out["ex_lo"][rows, k] = np.minimum(out["ex_lo"][rows, k], lo)
        out["ex_hi"][rows, k] = np.maximum(out["ex_hi"][rows, k], hi)
    return dist, cals

def c3_apply(est, fit, fi, mz, z, X_new, O, W, w_cal, out, W_extra=None, extra_truth=None):
    dist, cals = ORIG_APPLY(est, fit, fi, mz, z, X_new, O, W, w_cal, out, W_extra, extra_truth)
    if W_extra is None or out.get("ex") is None:
        return dist, cals
    pattern = O.any(0)
    pos_train, pos_new = fr.positions(est.Z_, pattern), fr.positions(z, pattern)
    for direction in (1, -1):
        cal = cals.get(direction)
        rows = np.flatnonzero(direction * dist > 0)
        if cal is None or rows.size == 0 or cal.q_cell is None or fr.small_rule_replaces(cal, float(est.level)):
            continue
        records = fr.frontier_folds(est, pattern, direction)
        o = O[rows]
        ramp = fr.blend_ramp(pos_new[rows], pos_train, direction)
        for k, u in enumerate(np.atleast_2d(W_extra)):
            cu = fr.calibrate_frontier(est, pattern, u, direction, truth=extra_truth, records=records)
            if cu is None or (cu.candidate, cu.weight) == (cal.candidate, cal.weight):
                continue
            m_own = mz[rows]
            if cu.candidate is not None and cu.weight > 0:
                c = fr._candidate(est, cu.candidate, fit, est.Z_, pos_train, z[rows], np.where(o, X_new[rows], np.nan),
                                  o, X_fit=est.X_, w=u)
                a = cu.weight * ramp[:, None]
                m_own = (1 - a) * m_own + a * c
            new = (np.where(o, X_new[rows], est.transform_.inverse_transform(m_own)) * u).sum(1)
            shift = new - out["ex"][rows, k]
            LOG["c3"].append((cal.candidate, cal.weight, cu.candidate, cu.weight, int(rows.size), float(shift.mean())))
            for key in ("ex_lo", "ex_hi"):  # predict keeps the point at u . cells and reads half-widths from ex
                out[key][rows, k] += shift
    return dist, cals

LOG["c3"] = []
def apply(cand):
    if cand == "C1":
        ni._distance_scaled = c1_distance_scaled
    elif cand == "C2":
        fr.apply_frontier = c2_apply
    elif cand == "C3":
        fr.apply_frontier = c3_apply

def report():
    if LOG["c3"]:
        from collections import Counter
        print("C3:", Counter((a, b, c, d) for a, b, c, d, _, _ in LOG["c3"]).most_common(5),
              "calls", len(LOG["c3"]), "mean shift", np.mean([x[5] for x in LOG["c3"]]))

if __name__ != "__main__":
    CAND = None
else:
    apply(CAND)
    import quality_round_trip as qrt
    qrt.main(sys.argv[2:])
    report()
if __name__ == "__main__" and LOG["kappa"]:
    k = np.array(LOG["kappa"]); print(f"C1 kappa: n {k.size}, >0 {np.sum(k>0)}, median {np.median(k):.3f}, max {k.max():.3f}")
if __name__ == "__main__" and LOG["c2"]:
    a = np.array(LOG["c2"]); print(f"C2 calls {len(a)}: flagged {a[:,0].sum():.0f}, widened lo {a[:,4].sum():.0f} hi {a[:,5].sum():.0f}; "
                                   f"frontier-fold |r| mean median {np.median(a[:,1]):.4f}, q90 |r/(1+d)| frontier {np.median(a[:,2]):.4f} model folds {np.median(a[:,3]):.4f}")
