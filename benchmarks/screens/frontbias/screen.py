"""Screen of the distance-grown blend weight (CRITERION.md), patched into ``apply_frontier`` in this process only.

    HARNESS_EXT_NO_PROGRESS=1 nice -n 10 python benchmarks/screens/frontbias/screen.py [--off] -- QUALITY_HOLDOUT_ARGS
    HARNESS_EXT_NO_PROGRESS=1 nice -n 10 python benchmarks/screens/frontbias/screen.py --diagnose -- NAME=FILE ...

``--off`` runs the product unpatched through the same path (the baseline); ``--diagnose``: diagnose.py with the rule.
"""

from __future__ import annotations

import inspect
import sys
import textwrap
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

from harness_ext.methods.engine import frontier as F  # noqa: E402

OLD = "a = cal.weight * ramp[:, None]"
NEW = "a = _frontbias_weight(cal, ramp, direction * dist[rows], records)[:, None]"


def _frontbias_weight(cal, ramp, d, records):
    """``max(w_f ramp, d^2 / (d^2 + d_f^2 (1 - w_f) / w_f))`` beyond the folds' RMS held-out distance ``d_f``."""
    w_f = float(cal.weight)
    base = w_f * ramp
    if w_f <= 0 or w_f >= 1 or not records:
        return base
    dd = np.concatenate([r["dist"] for r in records])
    d_f = float(np.sqrt(np.mean(dd ** 2)))
    c = d_f ** 2 * (1 - w_f) / w_f
    w = np.where(d > d_f, d ** 2 / np.maximum(d ** 2 + c, 1e-12), 0.0)
    STATS.append((int((w > base).sum()), len(d), d_f, w_f))
    return np.maximum(base, w)


STATS: list = []


def patch():
    src = textwrap.dedent(inspect.getsource(F.apply_frontier))
    assert src.count(OLD) == 1, "apply_frontier's blend line changed"
    ns = F.__dict__
    ns["_frontbias_weight"] = _frontbias_weight
    exec(compile(src.replace(OLD, NEW), F.__file__, "exec"), ns)


def main(argv):
    off = "--off" in argv
    diag = "--diagnose" in argv
    rest = argv[argv.index("--") + 1:] if "--" in argv else []
    if not off:
        patch()
    if diag:
        import diagnose  # imported after the patch: its capture wraps the patched function
        diagnose.main(rest)
    else:
        import quality_holdout as qh
        qh.main(rest)
    if STATS:
        raised = sum(s[0] for s in STATS)
        print(f"frontbias rule: {raised} flagged model(s) raised over {len(STATS)} calibrated call(s); "
              f"d_f {sorted({round(s[2], 2) for s in STATS})}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
