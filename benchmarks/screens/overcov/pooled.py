"""``crosstask``'s coverage per shared table and protocol over four blocks of 20 seeds already run (no new runs):
seeds 0-19 (this session's headline, main), 240-259 (fix-smallcov's main), 260-279 (fix-gvf's variant, main since),
280-299 (fix-dcarry's variant, main since). ``python benchmarks/screens/overcov/pooled.py``"""
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
CSV = {"240-259": ROOT / "smallcov/main_shared_240.csv", "260-279": ROOT / "gvf/var_c2.csv", "280-299": ROOT / "dcarry/var_c2.csv"}
HEAD = Path(__file__).resolve().parent / "headline_0_19.txt"


def block(df):
    df = df[df.estimator == "crosstask"]
    return df.groupby(["table", "protocol"]).apply(lambda g: (g.coverage * g.n_targets).sum() / g.n_targets.sum(),
                                                   include_groups=False)


cols = {}
rows = [r.split(" | ") for r in HEAD.read_text().splitlines()[1:]]
cols["0-19"] = pd.Series({(r[0], r[1]): float(r[6]) for r in rows if r[3] == "crosstask"})
for k, f in CSV.items():
    cols[k] = block(pd.read_csv(f))
t = pd.DataFrame(cols)
t["mean"] = t.mean(axis=1)
t["blocks outside 0.88-0.92"] = ((t[list(cols)] < 0.88) | (t[list(cols)] > 0.92)).sum(axis=1)
print(t.round(3).to_markdown())
for p in ("interpolation", "extrapolation"):
    for src in ("helm_lite", "open_llm_v2"):
        sel = [i for i in t.index if i[1] == p and i[0].startswith(src)]
        print(f"{src} {p}: mean over tables and blocks {t.loc[sel, 'mean'].mean():.3f}")
