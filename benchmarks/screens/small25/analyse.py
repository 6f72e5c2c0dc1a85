"""Split crosstask's mean |error| against aipw_paper's into (a) the design part, (b) the regression's share, (c)
the flag/agreement rule, per table (diagnose.py's CSV), with standard errors over seeds; then (b) by weight group.

    python benchmarks/screens/small25/analyse.py ep25.csv
"""
import sys

import numpy as np
import pandas as pd


def se(x):
    x = np.asarray(x, dtype=float)
    return x.std(ddof=1) / np.sqrt(len(x))


def main(path):
    df = pd.read_csv(path)
    for c in ("paper", "design", "composite", "final"):
        df["e_" + c] = (df[c] - df["truth"]).abs() * 100
    for (t, p), g in df.groupby(["table", "protocol"]):
        s = g.groupby("seed")[["e_paper", "e_design", "e_composite", "e_final"]].mean()
        pa, de, co, fi = (s[c].mean() for c in s.columns)
        print(f"\n== {t} {p} n={g['n'].iloc[0]} seeds={len(s)} targets/seed={len(g) // len(s)} "
              f"sources={g['n_src'].iloc[0]}")
        print(f"|err| paper {pa:.3f}  design {de:.3f} ({de / pa:.3f})  composite {co:.3f}  final {fi:.3f} ({fi / pa:.3f})")
        print(f"(a) design-paper {de - pa:+.3f} ± {se(s.e_design - s.e_paper):.3f}   "
              f"(b) composite-design {co - de:+.3f} ± {se(s.e_composite - s.e_design):.3f}   "
              f"(c) final-composite {fi - co:+.3f} ± {se(s.e_final - s.e_composite):.3f}")
        cov = ((g.lower <= g.truth) & (g.truth <= g.upper)).mean()
        pcov = ((g.paper_lo <= g.truth) & (g.truth <= g.paper_hi)).mean()
        dcov = ((g.design_lo <= g.truth) & (g.truth <= g.design_hi)).mean()
        print(f"coverage crosstask {cov:.3f}  design {dcov:.3f}  paper {pcov:.3f}; mean w {g.w.mean():.3f}; "
              f"flag share {g.flag.mean():.3f}; agree {g.agree.mean():.3f}; lam {g.lam.mean():.2f}; "
              f"clip dist {g.groupby('seed').clip.first().value_counts().to_dict()}")
        print(f"bias (pts): paper {100 * (g.paper - g.truth).mean():+.2f} design {100 * (g.design - g.truth).mean():+.2f} "
              f"reg {100 * (g.reg - g.truth).mean():+.2f} final {100 * (g.final - g.truth).mean():+.2f}; "
              f"sd: paper {100 * (g.paper - g.truth).std():.2f} design {100 * (g.design - g.truth).std():.2f} "
              f"reg {100 * (g.reg - g.truth).std():.2f}; truth beyond top {(g.truth > g.range_hi).mean():.2f}")
        n_seeds = g.seed.nunique()
        for lo, hi in ((0, 0.01), (0.01, 0.2), (0.2, 0.5), (0.5, 0.999), (0.999, 1.01)):
            k = (g.w >= lo) & (g.w < hi)
            if k.any():
                h = g[k]
                print(f"  w in [{lo}, {hi}): share {k.mean():.2f}  (b) contrib {(h.e_composite - h.e_design).sum() / len(g):+.3f}"
                      f"  reg bias {100 * (h.reg - h.truth).mean():+.2f}  design bias {100 * (h.design - h.truth).mean():+.2f}"
                      f"  |e_reg| {100 * (h.reg - h.truth).abs().mean():.2f} |e_design| {h.e_design.mean():.2f}"
                      f"  a>hi {(h.design > h.range_hi).mean():.2f} truth>hi {(h.truth > h.range_hi).mean():.2f}")
        fl = g[g.flag]
        if len(fl):
            print(f"  flagged: share {len(fl) / len(g):.2f} (c) contrib {(fl.e_final - fl.e_composite).sum() / len(g):+.3f}"
                  f"  e_final {fl.e_final.mean():.2f} e_comp {fl.e_composite.mean():.2f} e_design {fl.e_design.mean():.2f}")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)
