"""Where the width of ``crosstask``'s interval comes from, by weight group and flag, and the factor ``k`` the targets
need against the one the calibration sources gave: ``python look.py X.pkl [...]`` (``dump.py`` pickles)."""
import pickle
import sys

import numpy as np

Z = 1.6448536269514722
SHARE = 0.1  # item_composite.MIN_SCALED_SHARE


def cat(rows, key):
    return np.concatenate([np.atleast_1d(r[key]) for r in rows])


def needed_k(resid, A, B, C):
    """Per model, the smallest k >= 0 whose interval covers (item_composite.coverage_scale's quadratic)."""
    C = C - (resid / Z) ** 2
    disc = np.maximum(B * B - 4 * A * C, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.where(A > 0, (-B + np.sqrt(disc)) / (2 * A), np.where(B > 0, -C / B, np.inf))
    return np.where(C >= 0, 0.0, root)


def load(path):
    rows = pickle.loads(open(path, "rb").read())
    keys = ("truth", "w", "a", "se_a", "al", "au", "m", "v_m", "local", "centre", "scaled", "cross", "fixed",
            "lo0", "hi0", "lo1", "hi1", "lo", "hi", "est", "beyond")
    d = {k: cat(rows, k) for k in keys}
    sizes = [len(r["w"]) for r in rows]
    for k in ("k", "seed", "lam", "clip"):
        d[k] = np.repeat([r[k] for r in rows], sizes)
    d["rlo"] = np.repeat([r["range"][0] for r in rows], sizes)
    d["rhi"] = np.repeat([r["range"][1] for r in rows], sizes)
    cal = {k: cat([r["cal"] for r in rows], k) for k in rows[0]["cal"]}
    cal["k"] = np.repeat([r["k"] for r in rows], [len(r["cal"]["w"]) for r in rows])
    return d, cal, rows


def cover(d, lo="lo", hi="hi"):
    return (d[lo] <= d["truth"]) & (d["truth"] <= d[hi])


def report(path):
    d, cal, rows = load(path)
    t, w, k = d["truth"], d["w"], d["k"]
    c0, c1, c = cover(d, "lo0", "hi0"), cover(d, "lo1", "hi1"), cover(d)
    width, w0 = d["hi"] - d["lo"], d["hi0"] - d["lo0"]
    hull = (d["lo1"] != d["lo0"]) | (d["hi1"] != d["hi0"])
    widen = (d["lo"] != d["lo1"]) | (d["hi"] != d["hi1"])
    out_a = (d["a"] > d["rhi"]) | (d["a"] < d["rlo"])
    var = k ** 2 * d["scaled"] + k * d["cross"] + d["fixed"]
    sshare = k ** 2 * d["scaled"] / np.maximum(var, 1e-300)
    print(f"{path}: n {len(t)}; cover final {c.mean():.3f} pre-hull {c0.mean():.3f} post-hull {c1.mean():.3f}; "
          f"median width {np.median(width)*100:.2f} (pre-hull {np.median(w0)*100:.2f}); k median {np.median([r['k'] for r in rows]):.2f} "
          f"lam=0 share {np.mean([r['lam'] == 0 for r in rows]):.2f}")
    groups = [("w<0.5", w < 0.5), ("0.5<=w<1", (w >= 0.5) & (w < 0.999)), ("w=1", w >= 0.999)]
    for name, g in groups + [("hull", hull), ("widened(beyond)", widen), ("a out of range", out_a)]:
        if not g.sum():
            continue
        print(f"  {name:16s} {g.sum():4d} ({g.mean():.2f}) cover {c[g].mean():.3f} (pre-hull {c0[g].mean():.3f}); "
              f"med width {np.median(width[g])*100:5.2f}; scaled share {np.median(sshare[g]):.2f}; "
              f"|err|/half q90 {np.quantile(np.abs(d['est'][g]-t[g])/(width[g]/2), 0.9):.2f}; "
              f"widened by hull/beyond x{np.median(width[g]/w0[g]):.3f}")
    # The factor the targets need (those the factor governs) against the one learnt
    A, B, C = d["scaled"], d["cross"], d["fixed"]
    resid = t - d["centre"]
    keep = A >= SHARE * (A + np.abs(B) + C)
    kt = needed_k(resid, A, B, C)
    Ac, Bc, Cc = cal["scaled"], cal["cross"], cal["fixed"]
    keepc = Ac >= SHARE * (Ac + np.abs(Bc) + Cc)
    kc = needed_k(cal["truth"] - cal["centre"], Ac, Bc, Cc)
    per_seed_t = [np.quantile(kt[(d["seed"] == s) & keep], 0.9) for s in np.unique(d["seed"]) if ((d["seed"] == s) & keep).sum() >= 5]
    print(f"  factor: learnt k median {np.median([r['k'] for r in rows]):.2f} (range {min(r['k'] for r in rows):.2f}-{max(r['k'] for r in rows):.2f}); "
          f"targets kept {keep.mean():.2f}, their k<=learnt {np.mean(kt[keep] <= k[keep]):.3f}, pooled q90 of needed k {np.quantile(kt[keep], 0.9):.2f}; "
          f"calibration models kept {keepc.mean():.2f}, pooled q90 {np.quantile(kc[keepc], 0.9):.2f}")
    # standardised regression errors: |m - t| / sqrt(inside) on targets vs calibration sources
    def ratio(D):
        v_a = D["sd_a"] ** 2 if "sd_a" in D else D["se_a"] ** 2
        inside = np.maximum(D["v_m"], np.maximum(D["local"], (D["m"] - D["a"]) ** 2 - v_a))
        return (D["m"] - D["truth"]) / np.sqrt(inside), (D["m"] - D["truth"]) / np.sqrt(D["v_m"])
    if not (w >= 0.999).sum():
        return d, cal
    rt, rtv = ratio(d)
    rc, rcv = ratio(cal)
    g1 = w >= 0.999
    print(f"  regression error / sqrt(inside): targets w=1 rms {np.sqrt(np.mean(rt[g1]**2)):.2f} q90|.| {np.quantile(np.abs(rt[g1]),0.9):.2f}; "
          f"calibration rms {np.sqrt(np.mean(rc[keepc]**2)):.2f} q90|.| {np.quantile(np.abs(rc[keepc]),0.9):.2f} | "
          f"/ sqrt(v_m): targets {np.sqrt(np.mean(rtv[g1]**2)):.2f} cal {np.sqrt(np.mean(rcv[keepc]**2)):.2f}; "
          f"rms |m-t| pts targets {np.sqrt(np.mean((d['m'][g1]-t[g1])**2))*100:.2f} cal {np.sqrt(np.mean((cal['m'][keepc]-cal['truth'][keepc])**2))*100:.2f}; "
          f"median sqrt(inside) pts targets {np.median(np.sqrt(np.maximum(d['v_m'], d['local'])[g1]))*100:.2f}")
    return d, cal


if __name__ == "__main__":
    for p in sys.argv[1:]:
        report(p)


def design(path):
    """The design part alone: its interval's coverage and the sd of its standardised error, targets vs calibration."""
    d, cal, rows = load(path)
    t = d["truth"]
    za = (d["a"] - t) / d["se_a"]
    zc = (cal["a"] - cal["truth"]) / cal["sd_a"]
    dc = (d["al"] <= t) & (t <= d["au"])
    hi = d["a"] > np.quantile(d["a"], 0.5)
    print(f"  design part: targets cover {dc.mean():.3f} sd z {za.std():.2f} mean z {za.mean():+.2f} "
          f"(upper half of a: cover {dc[hi].mean():.3f} sd z {za[hi].std():.2f}); median a {np.median(d['a']):.2f} se {np.median(d['se_a'])*100:.2f}; "
          f"calibration sources sd z {zc.std():.2f} median a {np.median(cal['a']):.2f}")
    g = d["w"] < 0.5
    if g.sum():
        k, w = d["k"], d["w"]
        var = k ** 2 * d["scaled"] + k * d["cross"] + d["fixed"]
        own = (1 - w) ** 2 * d["se_a"] ** 2
        half, dhalf = (d["hi"] - d["lo"]) / 2, (d["au"] - d["al"]) / 2
        print(f"  w<0.5 ({g.sum()}): composite / design half-width median x{np.median(half[g] / dhalf[g]):.3f}; "
              f"variance shares median: design (1-w)^2 V_a {np.median(own[g] / var[g]):.2f}, beyond w^2 B "
              f"{np.median((d['fixed'][g] - own[g]) / var[g]):.2f}, cross {np.median(k[g] * d['cross'][g] / var[g]):.2f}, "
              f"scaled {np.median(k[g] ** 2 * d['scaled'][g] / var[g]):.2f}; median w {np.median(w[g]):.3f}; "
              f"design cover {dc[g].mean():.3f} composite {((d['lo'] <= t) & (t <= d['hi']))[g].mean():.3f}")
