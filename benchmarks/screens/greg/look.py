"""In-sample look (debug seeds): per seed, the design part's slopes ``b`` over the targets and the mean |error|
(points) of main's and the GREG design part and composite, on one table and protocol. Draws as
``benchmarks/quality_items.py``'s.

    HARNESS_EXT_SHARED_DATA=/work/shared/data nice -n 10 python benchmarks/screens/greg/look.py \
        open_llm_v2/musr extrapolation 0 20
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import quality_items as q  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import greg  # noqa: E402
from harness_ext.methods.engine import item_crosstask as ict  # noqa: E402

table, protocol, first, n_seeds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
scores, models, others, strength = q.load_task(table)
print("seed | targets | b: q10 / median / q90 | b=0 | b=1 | unclipped b: median, share > 1 | design err main -> greg | design 90% cov main -> greg | "
      "crosstask err main -> greg")
acc = []
for seed in range(first, first + n_seeds):
    d = q.draw(scores, protocol, 50, seed, others, 1.0, strength)
    S, T, truth, items, fit_o, pred_o = d["S"], d["T"], d["truth"], d["items"], d["fit_o"], d["pred_o"]
    row = []
    for cls in (ict.CrossTask, greg.CrossTaskGreg):
        ct = cls().fit(S, items, others=fit_o)
        a = ct.design_.predict(T[:, items], others=pred_o)
        est = ct.predict(T[:, items], others=pred_o).estimate
        row.append((100 * np.mean(np.abs(a.estimate - truth)), np.mean((a.lower <= truth) & (truth <= a.upper)),
                    100 * np.mean(np.abs(est - truth))))
        b, raw = getattr(ct.design_, "slope_", None), getattr(ct.design_, "raw_slope_", None)
    (da, ca, ea), (dg, cg, eg) = row
    acc.append((da, dg, ca, cg, ea, eg, np.median(b)))
    q10, q50, q90 = np.quantile(b, [0.1, 0.5, 0.9])
    print(f"{seed} | {len(b)} | {q10:.2f} / {q50:.2f} / {q90:.2f} | {np.mean(b == 0):.2f} | {np.mean(b == 1):.2f} | "
          f"{np.median(raw):.2f}, {np.mean(raw > 1):.2f} | "
          f"{da:.2f} -> {dg:.2f} | {ca:.3f} -> {cg:.3f} | {ea:.2f} -> {eg:.2f}", flush=True)
m = np.mean(acc, axis=0)
print(f"mean | | median of medians {np.median([r[6] for r in acc]):.2f} | | | | {m[0]:.3f} -> {m[1]:.3f} | "
      f"{m[2]:.3f} -> {m[3]:.3f} | {m[4]:.3f} -> {m[5]:.3f}")
