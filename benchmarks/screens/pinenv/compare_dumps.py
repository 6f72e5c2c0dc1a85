"""Compare two dumps of dump_folds.py array by array: max |difference| of each (first differing ones first)."""
import sys
import numpy as np

a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
for k in a.files:
    x, y = a[k], b[k]
    if x.shape != y.shape:
        print(f"{k:40s} shape {x.shape} vs {y.shape}")
        continue
    if x.dtype.kind in "fc":
        d = np.nanmax(np.abs(x - y)) if x.size else 0.0
        nanmis = int((np.isnan(x) != np.isnan(y)).sum())
        print(f"{k:40s} max|diff| {d:.3g}" + (f" nan-mismatch {nanmis}" if nanmis else ""))
    else:
        print(f"{k:40s} equal {np.array_equal(x, y)}")
