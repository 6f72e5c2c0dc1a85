"""Save the inputs of ``reduce --items``'s first ``CrossTask.fit`` calls, then stop: a fixed workload for micro.py.

Usage: python benchmarks/screens/xscale43/capture.py OUT.pkl N_CALLS reduce --db STORE --items 50 --out DIR -q
"""
import pickle
import sys

import numpy as np

import harness_ext.methods.engine.item_crosstask as crosstask
from harness_ext.cli import main

out, n_calls = sys.argv[1], int(sys.argv[2])
saved, fit = [], crosstask.CrossTask.fit


def capture(self, source, items, others=()):
    others = list(others)
    if others:
        saved.append((np.asarray(source, dtype=float), np.asarray(items), [(np.asarray(S, dtype=float),
                                                                             np.asarray(it)) for S, it in others]))
    if len(saved) >= n_calls:
        with open(out, "wb") as fh:
            pickle.dump(saved, fh)
        sys.exit(0)
    return fit(self, source, items, others)


crosstask.CrossTask.fit = capture
sys.exit(main(sys.argv[3:]))
