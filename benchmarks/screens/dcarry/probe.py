"""The design-carried targets beyond the range: how far beyond (in design standard errors), their cover, the regression's."""
import sys

import numpy as np

from look import load

for path in sys.argv[1:]:
    d = load(path)
    t, w, a, s = d["truth"], d["w"], d["a"], d["se_a"]
    cover = (d["lo"] <= t) & (t <= d["hi"])
    c = d["rho"] * np.sqrt(s ** 2 * d["v_m"])
    inside = np.maximum(d["v_m"], np.maximum(d["local"], (d["m"] - a) ** 2 - s ** 2 + 2 * c))
    rl, ru = d["m"] - 1.645 * d["k"] * np.sqrt(inside), d["m"] + 1.645 * d["k"] * np.sqrt(inside)
    rcov = (rl <= t) & (t <= ru)
    za = np.where(a > d["rhi"], (a - d["rhi"]) / s, np.where(a < d["rlo"], (a - d["rlo"]) / s, 0.0))
    print(path)
    for lo_, hi_ in ((-99, -2), (-2, -1), (-1, -1e-9), (0, 0), (1e-9, 1), (1, 2), (2, 3), (3, 99)):
        sel = (w < 0.5) & (((za >= lo_) & (za < hi_)) if lo_ != hi_ else (za == 0))
        if sel.sum():
            print(f"  w<0.5, (a - edge)/se in [{lo_},{hi_}): {sel.sum():4d} cover {cover[sel].mean():.3f} reg cover "
                  f"{rcov[sel].mean():.3f} truth beyond {np.mean((t[sel] > d['rhi'][sel]) | (t[sel] < d['rlo'][sel])):.2f} "
                  f"mean (a-t)/se {np.mean((a[sel]-t[sel])/s[sel]):+.2f} (m-t)/se {np.mean((d['m'][sel]-t[sel])/s[sel]):+.2f} "
                  f"median w {np.median(w[sel]):.2f}")
