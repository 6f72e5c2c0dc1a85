"""How often BenchPress's risk model is fitted with a constant feature, and numpy's sd of it.

    python benchmarks/screens/flatsd/risk_features.py MATRICES [DB]

Runs quality_benchpress.py's protocol (1 seed) with RiskModel.fit wrapped: prints, per fit count, how many
fits had a constant feature column and how many of those columns had a computed sd other than 0.
"""
import runpy
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from harness_ext.flat import flat_slices
from harness_ext.methods.engine import benchpress as bp

seen = Counter()
fit = bp.RiskModel.fit


def counted(self, X, y):
    flat, _ = flat_slices(X, 0)
    seen["fits"] += 1
    seen["fits with a constant feature"] += bool(flat.any())
    seen["constant features"] += int(flat.sum())
    seen["... with sd != 0"] += int((flat & (X.std(0) != 0)).sum())
    return fit(self, X, y)


bp.RiskModel.fit = counted
here = Path(__file__).resolve().parents[2]
sys.argv = [str(here / "quality_benchpress.py"), "--matrices", sys.argv[1], "--seeds", "1"] + (
    ["--db", sys.argv[2]] if len(sys.argv) > 2 else [])
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
finally:
    print(dict(seen))
