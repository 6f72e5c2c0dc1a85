"""Per-seed mean |error| (points) of main's ``crosstask`` and ``crosstask_rangeclip`` on one table and protocol, with
the regression's weight on the targets whose design estimate is above the sources' top, and the chosen clip.
Draws as ``benchmarks/quality_items.py``'s (via ``benchmarks/screens/musr/diagnose.py``'s split).

    HARNESS_EXT_SHARED_DATA=/work/shared/data nice -n 10 python benchmarks/screens/rangeclip/perseed.py \
        open_llm_v2/ifeval extrapolation 80 20 [VARIANT]

VARIANT (default ``crosstask_rangeclip``) is any name registered in ``ict.ESTIMATORS`` (``lcbgap.py`` registers
``crosstask_lcbgap``).
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "musr"))
import screen as s  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lcbgap  # noqa: E402,F401  (registers crosstask_lcbgap)

q = s.q


table, protocol, first, n_seeds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
variant = s.ict.ESTIMATORS[sys.argv[5] if len(sys.argv) > 5 else "crosstask_rangeclip"]
scores, models, others, strength = q.load_task(table)
print("seed | main err | variant err | main clip | variant clip | targets a>hi | main w there | variant w there")
for seed in range(first, first + n_seeds):
    d = q.draw(scores, protocol, 50, seed, others, 1.0, strength)
    S, T, truth, items, fit_o, pred_o = d["S"], d["T"], d["truth"], d["items"], d["fit_o"], d["pred_o"]
    row = []
    for cls in (s.ict.CrossTask, variant):
        ct = cls().fit(S, items, others=fit_o)
        est = ct.predict(T[:, items], others=pred_o).estimate
        a = ct.design_.predict(T[:, items], others=pred_o).estimate
        above = a > ct.range_[1]
        row.append((100 * np.mean(np.abs(est - truth)), ct.gap_clip_, above,
                    float(np.mean(np.asarray(ct.weight_)[above])) if above.any() else np.nan))
    (e0, c0, ab, w0), (e1, c1, _, w1) = row
    print(f"{seed} | {e0:.2f} | {e1:.2f} | {c0} | {c1} | {ab.sum()}/{len(ab)} | {w0:.2f} | {w1:.2f}", flush=True)
