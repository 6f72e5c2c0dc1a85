"""Where the design-carried targets' (``w < 0.5``) intervals miss: ``python look.py X.pkl [...]`` (``dump.py`` pickles)."""
import pickle
import sys

import numpy as np


def cat(rows, key):
    return np.concatenate([np.atleast_1d(r[key]) for r in rows])


def load(path):
    rows = pickle.loads(open(path, "rb").read())
    out = {k: cat(rows, k) for k in ("truth", "w", "a", "se_a", "al", "au", "v_s", "s2_raw", "m3", "ybar", "m", "v_m", "local", "local",
                                     "centre", "scaled", "cross", "fixed", "lo", "hi", "est", "beyond")}
    sizes = [len(r["w"]) for r in rows]
    for k in ("k", "n", "N", "rho"):
        out[k] = np.repeat([r[k] for r in rows], sizes)
    out["rlo"] = np.repeat([r["range"][0] for r in rows], sizes)
    out["rhi"] = np.repeat([r["range"][1] for r in rows], sizes)
    return out


if __name__ == "__main__":
    for path in sys.argv[1:]:
        d = load(path)
        t, w = d["truth"], d["w"]
        cover = (d["lo"] <= t) & (t <= d["hi"])
        g = w < 0.5
        print(path, f"n={len(w)} cover {cover.mean():.3f}; w<0.5: {g.sum()} cover {cover[g].mean():.3f}")
        floor = 2 / (d["n"] + 4) * (1 - 2 / (d["n"] + 4))
        za = (d["a"] - t) / d["se_a"]
        zs = (d["a"] - t) / np.sqrt(d["v_s"])
        half = (d["hi"] - d["lo"]) / 2
        for name, sel in (("w<0.5", g), ("w>=0.5", ~g)):
            s = sel
            print(f"  {name}: n {s.sum()}  cover {cover[s].mean():.3f}  miss high (truth>hi) {np.mean(t[s] > d['hi'][s]):.3f}"
                  f" low {np.mean(t[s] < d['lo'][s]):.3f}; design-alone cover {np.mean((d['al'][s] <= t[s]) & (t[s] <= d['au'][s])):.3f}")
            print(f"    sd z_a(own) {za[s].std():.2f}  sd z_a(gvf) {zs[s].std():.2f}  mean z_a {za[s].mean():+.2f}; "
                  f"median se_a {np.median(d['se_a'][s])*100:.2f} sqrt v_s {np.median(np.sqrt(d['v_s'][s]))*100:.2f}; "
                  f"rmse a {np.sqrt(np.mean((d['a'][s]-t[s])**2))*100:.2f} composite {np.sqrt(np.mean((d['est'][s]-t[s])**2))*100:.2f}")
            print(f"    floor active {np.mean(d['s2_raw'][s] < floor[s]):.3f}; median ybar {np.median(d['ybar'][s]):.2f}; "
                  f"a outside range {np.mean((d['a'][s] > d['rhi'][s]) | (d['a'][s] < d['rlo'][s])):.3f}; "
                  f"truth outside range {np.mean((t[s] > d['rhi'][s]) | (t[s] < d['rlo'][s])):.3f}; beyond flag {np.mean(d['beyond'][s]):.3f}")
            print(f"    median half-width {np.median(half[s])*100:.2f} vs z*se_a {np.median(1.645*d['se_a'][s])*100:.2f}; "
                  f"|err|/half q90 {np.quantile(np.abs(d['est'][s]-t[s])/half[s], 0.9):.2f}")
        # the group by position
        gg = g
        pos = np.where(d["a"] > d["rhi"], "above", np.where(d["a"] < d["rlo"], "below", "inside"))
        for p in ("inside", "above", "below"):
            s = gg & (pos == p)
            if s.sum():
                print(f"  w<0.5 & a {p}: {s.sum()} cover {cover[s].mean():.3f} sd z_a {za[s].std():.2f} "
                      f"mean z_a {za[s].mean():+.2f} truth beyond top {np.mean(t[s] > d['rhi'][s]):.2f} "
                      f"floor active {np.mean(d['s2_raw'][s] < floor[s]):.2f} median a {np.median(d['a'][s]):.2f} "
                      f"miss hi {np.mean(t[s] > d['hi'][s]):.3f} lo {np.mean(t[s] < d['lo'][s]):.3f}")
        # by p(1-p) / se bins
        for lo_, hi_ in ((0, 0.1), (0.1, 0.2), (0.2, 0.8), (0.8, 0.9), (0.9, 1.01)):
            s = g & (d["a"] >= lo_) & (d["a"] < hi_)
            if s.sum():
                print(f"  w<0.5 & a in [{lo_},{hi_}): {s.sum()} cover {cover[s].mean():.3f} sd z_a {za[s].std():.2f} "
                      f"sd z_s {zs[s].std():.2f} se_a/sqrt(v_s) median {np.median(d['se_a'][s]/np.sqrt(d['v_s'][s])):.2f}")
