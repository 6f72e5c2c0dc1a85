"""Dump the pinned reduction's frontier folds (refits, predictions, candidates) to an .npz, to compare releases.

Usage: python dump_folds.py OUT.npz   (run with each environment's python; the manifest's sha256 is printed)
"""
import sys
import tempfile
import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

import harness_ext.methods.engine.frontier as fr
import harness_ext.methods.engine.frontier_calibration as fc

dump = {}
real = fc.frontier_folds


def spy(est, pattern, direction=1):
    recs = real(est, pattern, direction)
    k = len([key for key in dump if key.startswith("call")])
    tag = f"call{k}_d{direction}"
    dump[tag] = np.array([1])
    dump[f"{tag}_Z"] = est.Z_
    dump[f"{tag}_X"] = est.X_
    dump[f"{tag}_pattern"] = pattern
    for f, r in enumerate(recs):
        for name in ("Zt", "rows", "held", "eng", "Z_fit", "z_in", "ramp"):
            dump[f"{tag}_f{f}_{name}"] = np.asarray(r[name])
        dump[f"{tag}_f{f}_fi_mean"] = np.asarray(r["fi"].mean)
        dump[f"{tag}_f{f}_fi_sd"] = np.asarray(r["fi"].sd)
        for c, v in r["cands"].items():
            dump[f"{tag}_f{f}_cand_{c}"] = np.asarray(v)
        for a in ("U", "V", "mu", "row_mean", "col_mean", "Zhat", "fitted"):
            if hasattr(r["fit"], a):
                dump[f"{tag}_f{f}_fit_{a}"] = np.asarray(getattr(r["fit"], a))
    return recs


fc.frontier_folds = spy
fr.frontier_folds = spy

spec = importlib.util.spec_from_file_location("pin", Path(__file__).parents[3] / "tests" / "test_manifest_pinned.py")
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
with tempfile.TemporaryDirectory() as d:
    digest, data = m.pinned_manifest(Path(d))
np.savez(sys.argv[1], **dump)
Path(sys.argv[1]).with_suffix(".json").write_bytes(data)
print(np.__version__, pd.__version__, digest, len(dump))
