"""Time (or profile) ``CrossTask.fit`` on inputs saved by capture.py; write its fitted state for comparison.

Usage: python benchmarks/screens/xscale43/micro.py CAPTURE.pkl [--profile] [--dump OUT.pkl]
(run with PYTHONPATH set to another checkout to time that code on the same inputs).
"""
import argparse
import cProfile
import pickle
import pstats
import time

import numpy as np
import scipy.stats  # noqa: F401  (imported before the clock starts, as in a reduce)

from harness_ext.methods.engine.item_crosstask import CrossTask

ap = argparse.ArgumentParser()
ap.add_argument("capture")
ap.add_argument("--profile", action="store_true")
ap.add_argument("--dump")
args = ap.parse_args()
with open(args.capture, "rb") as fh:
    calls = pickle.load(fh)
prof = cProfile.Profile() if args.profile else None
states, t0, c0 = [], time.perf_counter(), time.process_time()
for source, items, others in calls:
    if prof:
        prof.enable()
    est = CrossTask().fit(source, items, others=others)
    if prof:
        prof.disable()
    p = est.predict(source[:7][:, items], others=[S[:7][:, it] for S, it in others])
    states.append({"estimate": p.estimate, "lower": p.lower, "upper": p.upper, "share": est.learn_.share_,
                   "corr": est.error_correlation_, "scale": est.interval_scale_, "lam": est.variance_scale_,
                   "loo": est.learn_.loo_residuals_})
print(f"{len(calls)} fits: {time.perf_counter() - t0:.2f} s wall, {time.process_time() - c0:.2f} s CPU "
      f"({source.shape[0]} models, {len(others) + 1} tasks)")
if prof:
    pstats.Stats(prof).sort_stats("cumulative").print_stats(45)
if args.dump:
    with open(args.dump, "wb") as fh:
        pickle.dump(states, fh)
