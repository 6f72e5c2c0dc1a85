"""Offline replays of interval rules for the design-carried targets on ``dump.py`` pickles.

    python benchmarks/screens/dcarry/variants.py X.pkl [...]

main: the product's interval. hull: the hull with the regression's own interval ``m -/+ z k sqrt(inside)`` where
``w < 0.5``. inner: that hull on the range's side only, for targets whose design estimate lies beyond the range.
inner2: ``inner`` only while the design estimate is within GAP_LOWER_Z (2) standard errors of the edge.
inner3: ``inner2`` only where the regression's estimate lies inside the range. inner4: ``inner2`` with the
regression's interval from its own error variance (``max(v_m, local)``, without the disagreement term).
inner5: ``inner2`` except for targets beyond the sources on the other tasks. inner6: ``inner2`` with the
regression's bound kept within the scores' range [0, 1]. inner7: ``inner4`` so kept. gvf: the
design variance in the interval floored at the smoothed one where ``w < 0.5``. t49: Student's t on 49 df for the
design part where ``w < 0.5``.
"""
import sys

import numpy as np

from look import load

Z = 1.6448536269514722


def variants(d):
    t, w, a, s = d["truth"], d["w"], d["a"], d["se_a"]
    lo, hi = d["lo"].copy(), d["hi"].copy()
    c = d["rho"] * np.sqrt(s ** 2 * d["v_m"])
    inside = np.maximum(d["v_m"], np.maximum(d["local"], (d["m"] - a) ** 2 - s ** 2 + 2 * c))
    rl, ru = d["m"] - Z * d["k"] * np.sqrt(inside), d["m"] + Z * d["k"] * np.sqrt(inside)
    g = w < 0.5
    out = {"main": (lo, hi)}
    out["hull"] = (np.where(g, np.minimum(lo, rl), lo), np.where(g, np.maximum(hi, ru), hi))
    above, below = a > d["rhi"], a < d["rlo"]
    out["inner"] = (np.where(above, np.minimum(lo, rl), lo), np.where(below, np.maximum(hi, ru), hi))
    near_a, near_b = above & (a - d["rhi"] < 2 * s), below & (d["rlo"] - a < 2 * s)
    out["inner2"] = (np.where(near_a, np.minimum(lo, rl), lo), np.where(near_b, np.maximum(hi, ru), hi))
    m_in = (d["m"] <= d["rhi"]) & (d["m"] >= d["rlo"])
    out["inner3"] = (np.where(near_a & m_in, np.minimum(lo, rl), lo), np.where(near_b & m_in, np.maximum(hi, ru), hi))
    own = np.sqrt(np.maximum(d["v_m"], d["local"]))
    rl4, ru4 = d["m"] - Z * d["k"] * own, d["m"] + Z * d["k"] * own
    out["inner4"] = (np.where(near_a, np.minimum(lo, rl4), lo), np.where(near_b, np.maximum(hi, ru4), hi))
    nb = ~d["beyond"]
    out["inner5"] = (np.where(near_a & nb, np.minimum(lo, rl), lo), np.where(near_b & nb, np.maximum(hi, ru), hi))
    rl6, ru6 = np.maximum(rl, 0.0), np.minimum(ru, 1.0)
    out["inner6"] = (np.where(near_a, np.minimum(lo, rl6), lo), np.where(near_b, np.maximum(hi, ru6), hi))
    out["inner7"] = (np.where(near_a, np.minimum(lo, np.maximum(rl4, 0.0)), lo),
                     np.where(near_b, np.maximum(hi, np.minimum(ru4, 1.0)), hi))
    k = d["k"]
    var = k * k * d["scaled"] + k * d["cross"] + d["fixed"]
    var_g = var + (1 - w) ** 2 * np.maximum(d["v_s"] - s ** 2, 0)
    h = Z * np.sqrt(np.where(g, var_g, var))
    out["gvf"] = (np.where(g, d["centre"] - h, lo), np.where(g, d["centre"] + h, hi))
    h = np.sqrt(var) * np.where(g, 1.6765508, Z)
    out["t49"] = (np.where(g, d["centre"] - h, lo), np.where(g, d["centre"] + h, hi))
    # widen_beyond_sources already hulls the flagged targets with the design interval: keep it
    for key, (l, u) in out.items():
        fl = d["beyond"]
        out[key] = (np.where(fl, np.minimum(l, d["al"]), l), np.where(fl, np.maximum(u, d["au"]), u))
    return out


def summary(paths):
    """Per variant and protocol: the mean over tables of the median width against main's, and the coverages."""
    by = {}
    for path in paths:
        d = load(path)
        prot = "ext" if path.endswith("_ext.pkl") else "int"
        for key, (l, u) in variants(d).items():
            by.setdefault((key, prot), []).append((np.median(u - l), np.mean((l <= d["truth"]) & (d["truth"] <= u))))
    for (key, prot), vals in sorted(by.items()):
        base = by[("main", prot)]
        ratio = sum(v[0] for v in vals) / sum(v[0] for v in base)
        print(f"{key:7s} {prot}: mean of median widths x{ratio:.4f}; coverage "
              + " ".join(f"{v[1]:.3f}" for v in vals))


if __name__ == "__main__":
    if sys.argv[1] == "--summary":
        summary(sys.argv[2:])
        sys.exit()
    print(f"{'table':34s} {'variant':7s} {'cover':>6s} {'w<.5':>6s} {'n<.5':>5s} {'medW':>6s} {'dW%':>6s}")
    for path in sys.argv[1:]:
        d = load(path)
        t, g = d["truth"], d["w"] < 0.5
        v = variants(d)
        base_w = np.median(v["main"][1] - v["main"][0])
        for key, (l, u) in v.items():
            cov = (l <= t) & (t <= u)
            mw = np.median(u - l)
            print(f"{path.split('/')[-1][:-4]:34s} {key:7s} {cov.mean():6.3f} {cov[g].mean() if g.any() else np.nan:6.3f} "
                  f"{g.sum():5d} {mw * 100:6.2f} {100 * (mw / base_w - 1):+6.2f}")
