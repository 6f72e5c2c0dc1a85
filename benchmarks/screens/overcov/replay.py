"""Replay the interval's last two steps (the edge hull, the beyond-sources widening) on ``dump.py`` pickles under
variants of the hull: ``python replay.py X.pkl [...]``. Per pickle: coverage and median width of main (the product's,
checked against the dump), and of each variant."""
import sys

import numpy as np

from look import load

Z = 1.6448536269514722
REACH = 2.0  # GAP_LOWER_Z


def hull(d, inner_lo, inner_hi):
    a, s = d["a"], d["se_a"]
    above = (a > d["rhi"]) & (a - d["rhi"] < REACH * s)
    below = (a < d["rlo"]) & (d["rlo"] - a < REACH * s)
    lo = np.where(above, np.minimum(d["lo0"], inner_lo), d["lo0"])
    hi = np.where(below, np.maximum(d["hi0"], inner_hi), d["hi0"])
    flag = d["beyond"].astype(bool)
    return np.where(flag, np.minimum(lo, d["al"]), lo), np.where(flag, np.maximum(hi, d["au"]), hi), above | below


def variants(d):
    r = Z * d["k"] * np.sqrt(np.maximum(d["v_m"], d["local"]))
    m = d["m"]
    return {"main": hull(d, m - r, m + r), "to m": hull(d, m, m), "none": hull(d, np.inf, -np.inf)}


if __name__ == "__main__":
    for path in sys.argv[1:]:
        d, _, _ = load(path)
        t = d["truth"]
        row = []
        for name, (lo, hi, grp) in variants(d).items():
            if name == "main":
                assert np.allclose(lo, d["lo"]) and np.allclose(hi, d["hi"]), path
            c = (lo <= t) & (t <= hi)
            row.append(f"{name} {c.mean():.3f} w {np.median(hi - lo) * 100:.2f} grp({grp.sum()}) {c[grp].mean() if grp.any() else np.nan:.3f}")
        print(f"{path.split('/')[-1]:28s} " + " | ".join(row))
