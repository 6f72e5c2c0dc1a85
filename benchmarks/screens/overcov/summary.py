"""One row per table, protocol and seed block: which part sets the interval and who over-covers.
``python summary.py DIR`` reads DIR/{table}_{inter,extra}_{0,260}.pkl (``dump.py``)."""
import sys

import numpy as np

from look import SHARE, load, needed_k

D = sys.argv[1]
print("| table | protocol | seeds | cover | pre-hull | w=1: share, cover | 0.5<=w<1 | w<0.5 | design part alone | "
      "learnt k (median) | q90 of the k the targets need / the calibration models need |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for t in ("commonsense", "gsm", "med_qa", "mmlu", "math", "ifeval", "musr", "openllm_math"):
    for p in ("inter", "extra"):
        for s in (0, 260):
            d, cal, rows = load(f"{D}/{t}_{p}_{s}.pkl")
            tr, w = d["truth"], d["w"]
            c = (d["lo"] <= tr) & (tr <= d["hi"])
            c0 = (d["lo0"] <= tr) & (tr <= d["hi0"])
            dc = (d["al"] <= tr) & (tr <= d["au"])
            g = [w >= 0.999, (w >= 0.5) & (w < 0.999), w < 0.5]
            cells = [f"{x.mean():.2f}, {c[x].mean():.3f}" if x.sum() >= 10 else f"{x.mean():.2f}, -" for x in g]
            A, B, C = d["scaled"], d["cross"], d["fixed"]
            keep = A >= SHARE * (A + np.abs(B) + C)
            kt = needed_k(tr - d["centre"], A, B, C)
            Ac, Bc, Cc = cal["scaled"], cal["cross"], cal["fixed"]
            keepc = Ac >= SHARE * (Ac + np.abs(Bc) + Cc)
            kc = needed_k(cal["truth"] - cal["centre"], Ac, Bc, Cc)
            qt = f"{np.quantile(kt[keep], 0.9):.2f}" if keep.sum() >= 20 else "-"
            print(f"| {t} | {p}polation | {s}-{s + 19} | {c.mean():.3f} | {c0.mean():.3f} | " + " | ".join(cells)
                  + f" | {dc.mean():.3f} | {np.median([r['k'] for r in rows]):.2f} | {qt} / {np.quantile(kc[keepc], 0.9):.2f} |")
