"""Which term of the regression's error variance ``inside = max(v_m, local, (m - a)^2 - V_a + 2C)`` is the largest,
for the targets and for the calibration models, and the factor each group needs: ``python terms.py X.pkl [...]``."""
import sys

import numpy as np

from look import SHARE, load, needed_k

for path in sys.argv[1:]:
    d, cal, rows = load(path)
    rho = np.repeat([r["rho"] for r in rows], [len(r["w"]) for r in rows])
    rho_c = np.repeat([r["rho"] for r in rows], [len(r["cal"]["w"]) for r in rows])
    out = []
    for name, D, sd, r in (("targets", d, d["se_a"], rho), ("calibration", cal, cal["sd_a"], rho_c)):
        c = r * np.sqrt(sd ** 2 * D["v_m"])
        dis = (D["m"] - D["a"]) ** 2 - sd ** 2 + 2 * c
        which = np.argmax(np.vstack([D["v_m"], D["local"], dis]), axis=0)
        A, B, C = D["scaled"], D["cross"], D["fixed"]
        keep = A >= SHARE * (A + np.abs(B) + C)
        k = needed_k(D["truth"] - D["centre"], A, B, C)
        parts = []
        for j, lab in enumerate(("v_m", "local", "disagree")):
            g = keep & (which == j)
            parts.append(f"{lab} {g.mean():.2f} q90k {np.quantile(k[g], 0.9) if g.sum() > 5 else np.nan:.2f}")
        out.append(f"{name}: " + ", ".join(parts) + f"; median local/v_m {np.median(D['local'] / D['v_m']):.2f}")
    print(path.split("/")[-1], " || ".join(out))
