"""Coverage and error of ``crosstask`` by the regression's weight, from ``smallcov/diag.py --save`` pickles.

    python benchmarks/screens/gvf/groups.py MAIN.pkl VARIANT.pkl
"""
import pickle
import sys

import numpy as np

for path in sys.argv[1:]:
    rows = pickle.loads(open(path, "rb").read())
    w = np.concatenate([r["w"] for r in rows])
    cover = np.concatenate([r["cover"] for r in rows])
    err = np.abs(np.concatenate([r["err"] for r in rows])) * 100
    print(path)
    for name, g in (("w < 0.5", w < 0.5), ("0.5 <= w < 1", (w >= 0.5) & (w < 0.999)), ("w = 1", w >= 0.999),
                    ("all", np.ones_like(w, bool))):
        print(f"  {name:14s} share {g.mean():.3f}  cover {cover[g].mean():.3f}  mean |error| {err[g].mean():.2f}")
