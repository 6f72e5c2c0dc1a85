"""For targets whose design estimate a is above the sources' top hi: median (a - hi) / sd_a, median m - hi (points),
share with m < hi, under main's ``crosstask`` (one table, protocol, seed each).

    HARNESS_EXT_SHARED_DATA=/work/shared/data python benchmarks/screens/rangeclip/edge_look.py T P SEED [T P SEED ...]
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "musr"))
import screen as s  # noqa: E402
from harness_ext.methods.engine.item_estimators import random_items  # noqa: E402

q = s.q
args = sys.argv[1:]
for table, protocol, seed in zip(args[::3], args[1::3], map(int, args[2::3])):
    scores, models = q.load_named(q.ITEMS / f"{table}.parquet")
    others = q.sibling_tables(table, models)
    sources, targets = q.split(scores, protocol, seed, 1.0, q.benchmark_strength(scores, others))
    S, T = scores[sources], scores[targets]
    other_items = [random_items(o.shape[1], 50, 10_000 * (k + 1) + seed) for k, o in enumerate(others)]
    items = random_items(scores.shape[1], 50, seed)
    ct = s.ict.CrossTask().fit(S, items, others=[(o[sources], it) for o, it in zip(others, other_items)])
    pred_o = [o[targets][:, it] for o, it in zip(others, other_items)]
    d = ct.design_.predict(T[:, items], others=pred_o)
    m = ct.learn_.predict(T[:, items], others=pred_o).estimate
    hi, up = ct.range_[1], d.estimate > ct.range_[1]
    z = (d.estimate - hi)[up] / d.se[up]
    print(f"{table} {protocol} seed {seed}: {up.sum()}/{len(up)} above hi={hi:.3f}; median (a-hi)/sd_a {np.median(z):.2f}; "
          f"median m-hi {100 * np.median((m - hi)[up]):+.1f} pts; m<hi {np.mean(m[up] < hi):.2f}; "
          f"median truth-hi {100 * np.median((T.mean(axis=1) - hi)[up]):+.1f} pts")
