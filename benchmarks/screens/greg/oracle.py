"""Diagnosis (debug seeds): the design part's mean |error| (points) with the slope ``b`` estimated as ``GregAIPW``
does, and with each target's population slope ``cov_N(y, f) / var_N(f)`` over all the task's items (``f`` the folds'
mean working model; unclipped and clipped to [0, 1]): whether any slope could have helped, or only its estimate
failed. Not an estimator (the population slope needs every answer). Draws as ``benchmarks/quality_items.py``'s.

    HARNESS_EXT_SHARED_DATA=/work/shared/data nice -n 10 python benchmarks/screens/greg/oracle.py \
        helm_lite/commonsense extrapolation 0 20
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
print("seed | population b: q10 / median / q90 | design err: b=1 (main) | estimated b | population b | "
      "population b clipped to [0, 1]")
acc = []
for seed in range(first, first + n_seeds):
    d = q.draw(scores, protocol, 50, seed, others, 1.0, strength)
    S, T, truth, items, fit_o, pred_o = d["S"], d["T"], d["truth"], d["items"], d["fit_o"], d["pred_o"]
    design = greg.GregAIPW().fit(S, items, others=fit_o)
    err = lambda d: 100 * np.mean(np.abs(d.estimate - truth))  # noqa: E731
    main = err(ict.DifficultyAIPW().fit(S, items, others=fit_o).predict(T[:, items], others=pred_o))
    est = err(design.predict(T[:, items], others=pred_o))
    b_pop = greg.greg_slope(T, design.working_all_.T, clip=False)
    row = [main, est]
    for b in (b_pop, np.clip(b_pop, 0.0, 1.0)):
        design.slope_override = b
        row.append(err(design.predict(T[:, items], others=pred_o)))
    design.slope_override = None
    acc.append(row)
    q10, q50, q90 = np.quantile(b_pop, [0.1, 0.5, 0.9])
    print(f"{seed} | {q10:.2f} / {q50:.2f} / {q90:.2f} | " + " | ".join(f"{v:.2f}" for v in row), flush=True)
print("mean | | " + " | ".join(f"{v:.3f}" for v in np.mean(acc, axis=0)))
