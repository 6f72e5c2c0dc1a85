"""Main's ``crosstask`` against ``crosstask_agree`` from screen.py's stdout and stderr (the run's order: tables
sorted, protocols as given, seeds in order; one AGREE line per fit).

Run: python benchmarks/screens/itemagree/tabulate.py out.txt err.txt interpolation extrapolation benchmark-frontier
"""
import re
import sys

import numpy as np

BASE = ("sample_mean", "random_learn", "aipw_paper", "anchor_weighted")
out, err, protocols = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = {}
for line in open(out):
    p = [s.strip() for s in line.split("|")]
    if len(p) == 10 and p[2] == "50":
        rows[(p[0], p[1], p[3])] = (float(p[4]), p[6])
tables = sorted({k[0] for k in rows})
agree = [re.findall(r"(\w+)=([-\w.]+)", ln) for ln in open(err) if ln.startswith("AGREE")]
seeds = len(agree) // (len(tables) * len(protocols))
print(f"| table | protocol | rho (min-max) | switched fits | flagged/targets | outside | main | variant | change "
      f"| main / best | variant / best | cov main / variant |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
ratios = {}
i = 0
for t in tables:
    for pr in protocols:
        chunk = [dict(a) for a in agree[i:i + seeds]]
        i += seeds
        rho = [float(c["rho"]) for c in chunk]
        sw = sum(c["switched"] == "True" for c in chunk)
        fl = sum(int(c["flagged"]) for c in chunk)
        tg = sum(int(c["targets"]) for c in chunk)
        ou = sum(int(c["outside"]) for c in chunk)
        if (t, pr, "crosstask") not in rows:
            continue
        best = min(rows[(t, pr, b)][0] for b in BASE)
        m, cm = rows[(t, pr, "crosstask")]
        v, cv = rows[(t, pr, "crosstask_agree")]
        aipw = rows[(t, pr, "aipw_paper")][0]
        ratios.setdefault(pr, []).append((m / best, v / best, m / aipw, v / aipw))
        print(f"| {t} | {pr} | {min(rho):.3f}-{max(rho):.3f} | {sw}/{len(chunk)} | {fl}/{tg} | {ou} | {m:.2f} | {v:.2f} "
              f"| {100 * (v / m - 1):+.1f}% | {m / best:.3f} | {v / best:.3f} | {cm} / {cv} |")
for pr, r in ratios.items():
    r = np.array(r)
    print(f"{pr}: mean ratio to the best of the four baselines, main {r[:, 0].mean():.4f} -> variant {r[:, 1].mean():.4f}; "
          f"to aipw_paper {r[:, 2].mean():.4f} -> {r[:, 3].mean():.4f}")
