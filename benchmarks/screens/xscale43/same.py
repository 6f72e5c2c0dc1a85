"""Compare two micro.py dumps: ``same.py A.pkl B.pkl`` prints IDENTICAL or the largest difference per field."""
import pickle
import sys

import numpy as np

a, b = (pickle.load(open(f, "rb")) for f in sys.argv[1:3])
worst = {}
for x, y in zip(a, b):
    for k in x:
        u, v = np.asarray(x[k], dtype=float), np.asarray(y[k], dtype=float)
        if u.tobytes() != v.tobytes():
            worst[k] = max(worst.get(k, 0.0), float(np.nanmax(np.abs(u - v))))
print("IDENTICAL" if not worst and len(a) == len(b) else f"DIFFERENT {worst}")
