"""Tabulate diagnose.py's per-target CSV: the loss of ``crosstask`` against ``aipw_paper`` split into its parts.

    python benchmarks/screens/musr/analyse.py benchmarks/screens/musr/diag.csv

Errors in points (x100), mean over seeds of the mean over targets (quality_items.py's figure). The decomposition of
``|final| - |paper|``: (a) ``|design| - |paper|`` (the design part against the paper's AIPW), (b) ``|composite| -
|design|`` (the regression's weight), (c) ``|final| - |composite|`` (the agreement rule on flagged targets).
"""
import sys

import numpy as np
import pandas as pd

d = pd.read_csv(sys.argv[1])
for c in ("paper", "design", "composite", "final", "reg", "own"):
    d["e_" + c] = (d[c] - d["truth"]).abs() * 100
d["inside"] = d["design"] <= d["range_hi"]
for (t, p), g in d.groupby(["table", "protocol"], sort=False):
    s = g.groupby("seed")[["e_paper", "e_design", "e_composite", "e_final", "e_reg"]].mean().mean()
    print(f"\n## {t} | {p} | {g.seed.nunique()} seeds, {len(g)} target-seeds")
    print(f"mean |err| pts: aipw_paper {s.e_paper:.3f}  design {s.e_design:.3f}  composite {s.e_composite:.3f}  "
          f"final(crosstask) {s.e_final:.3f}  regression {s.e_reg:.3f}")
    print(f"ratio crosstask / aipw_paper {s.e_final / s.e_paper:.4f}; design / paper {s.e_design / s.e_paper:.4f}")
    tot = s.e_final - s.e_paper
    print(f"decomposition of {tot:+.3f} pts: (a) design - paper {s.e_design - s.e_paper:+.3f}; (b) composite - design "
          f"{s.e_composite - s.e_design:+.3f}; (c) agreement rule {s.e_final - s.e_composite:+.3f}")
    print(f"truth beyond the sources' range: {np.mean(g.truth > g.range_hi):.3f}; flagged: {g.flag.mean():.3f}; "
          f"agreement rho {g.agree.mean():.3f}; lam chosen 0 in {np.mean(g.groupby('seed').lam.first() == 0):.2f} "
          f"of seeds; clip {g.groupby('seed').clip.first().value_counts().to_dict()}")
    print(f"signed error pts: paper {100 * (g.paper - g.truth).mean():+.2f}, design {100 * (g.design - g.truth).mean():+.2f}, "
          f"regression {100 * (g.reg - g.truth).mean():+.2f}, final {100 * (g.final - g.truth).mean():+.2f}")
    bins = [-0.001, 0.0, 0.05, 0.2, 0.5, 0.999, 1.0]
    g = g.assign(wbin=pd.cut(g.w, bins))
    print("w bin | share | design inside range | mean w | |design| | |composite| | |final| | |paper| | composite-design "
          "contribution (pts of the table mean)")
    for b, h in g.groupby("wbin", observed=True):
        share = len(h) / len(g)
        print(f"{b} | {share:.3f} | {h.inside.mean():.2f} | {h.w.mean():.3f} | {h.e_design.mean():.2f} | "
              f"{h.e_composite.mean():.2f} | {h.e_final.mean():.2f} | {h.e_paper.mean():.2f} | "
              f"{share * (h.e_composite.mean() - h.e_design.mean()):+.3f}")
    fl = g[g.flag]
    if len(fl):
        print(f"flagged targets ({len(fl)}): |composite| {fl.e_composite.mean():.2f}, |own| {fl.e_own.mean():.2f}, "
              f"|design| {fl.e_design.mean():.2f}, |final| {fl.e_final.mean():.2f}, |paper| {fl.e_paper.mean():.2f}")
    # what-ifs on these same seeds (in-sample: diagnosis only)
    alt = {"design alone": g.e_design, "paper": g.e_paper,
           "mean(design, paper)": (0.5 * (g.design + g.paper) - g.truth).abs() * 100}
    print("what-if (in-sample) ratio to paper: " + ", ".join(
        f"{k} {v.groupby(g.seed).mean().mean() / s.e_paper:.4f}" for k, v in alt.items()))
