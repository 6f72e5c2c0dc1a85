"""The screened candidate (benchmarks/screens/storenorm/CRITERION.md): detect_scales standardises a column the logit
would take when more than half of its observed cells sit at or beyond the logit's clip. quality_holdout.main patched.

    python benchmarks/screens/storenorm/screen.py prod|clip -- QUALITY_HOLDOUT_ARGS
Prints to stderr how often the rule fired (detections, columns) and on which columns (by index).
"""
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import quality_holdout as qh  # noqa: E402
from harness_ext.methods.engine import transforms as tf  # noqa: E402

arm = sys.argv[1]
rest = sys.argv[sys.argv.index("--") + 1:]
FIRED = Counter()
CALLS = [0]
orig = tf.detect_scales


def detect(X, meta=None, kinds=None):
    out = orig(X, meta, kinds)
    CALLS[0] += 1
    if arm != "clip":
        return out
    X = np.asarray(X, float)
    for j, e in enumerate(out):
        if e["kind"] != tf.LOGIT or e["reason"] == "given":  # only what detection chose, not an override
            continue
        x = X[:, j][~np.isnan(X[:, j])]
        if x.size == 0:
            continue
        span = e["hi"] - e["lo"]
        p = (x - e["lo"]) / span
        floor = 0.0 if e["chance"] is None else (e["chance"] - e["lo"]) / span
        low = max(floor, tf.DEFAULT_EPS)
        clipped = np.mean((p <= low) | (p >= 1 - tf.DEFAULT_EPS))
        if clipped > 0.5:
            e.update(kind=tf.STANDARDISE, lo=None, hi=None, reason=f"{clipped:.0%} of the cells at the logit's clip")
            FIRED[j] += 1
    return out


tf.detect_scales = detect
rc = qh.main(rest)
print(f"[screen {arm}] detect_scales calls {CALLS[0]}, rule fired on {sum(FIRED.values())} column detections: "
      f"{dict(sorted(FIRED.items()))}", file=sys.stderr)
sys.exit(rc)
