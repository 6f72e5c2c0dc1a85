"""Extrapolation's targets are the same models on every seed: per model, the design part's coverage and rms
standardised error over the seeds. ``python permodel.py TABLE X.pkl [...]`` (``dump.py`` pickles, same protocol)."""
import sys

import numpy as np

from dump import qi
from look import load

table = sys.argv[1]
scores, models = qi.load_named(qi.ITEMS / f"{table}.parquet")
for path in sys.argv[2:]:
    d, _, rows = load(path)
    proto = "extrapolation" if "_extra_" in path else "interpolation"
    ids = np.concatenate([qi.split(scores, proto, r["seed"])[1] for r in rows])
    t, a, s = d["truth"], d["a"], d["se_a"]
    z = (a - t) / s
    c = (d["lo"] <= t) & (t <= d["hi"])
    u = np.unique(ids)
    per = [(models[i], t[ids == i][0], c[ids == i].mean(), np.sqrt(np.mean(z[ids == i] ** 2)), (ids == i).sum()) for i in u]
    full = sum(p[2] == 1.0 for p in per)
    exp_full = sum(0.9 ** p[4] for p in per)
    print(f"{path.split('/')[-1]}: {len(u)} models; covered on every seed {full} (expected {exp_full:.1f} at 90%); "
          f"median per-model rms z {np.median([p[3] for p in per]):.2f}; models with rms z < 0.8: {sum(p[3] < 0.8 for p in per)}")
    for name, tt, cc, rz, n in sorted(per, key=lambda p: -p[1])[:6]:
        print(f"    {str(name)[:40]:40s} truth {tt:.3f} cover {cc:.2f} rms z {rz:.2f} ({n} seeds)")
