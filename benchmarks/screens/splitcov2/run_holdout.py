"""quality_holdout.main with the first round's Mondrian neighbour-distance rule, new models measured to another run.

    python benchmarks/screens/splitcov2/run_holdout.py off|mondrian|mondrian-runs --protocols f --extra-predictors "" --json F

``off``: the product as it is; ``mondrian``: the first round's rule (two bins at the calibration scores' median
neighbour distance, each new model's distance to its nearest training row); ``mondrian-runs``: the same, but a new
model's distance skips the training rows of its own run (``newmodel_intervals.run_groups``) where the matrix has run
groups. The calibration folds already hold out whole runs, so the calibration scores' distances are to other runs
already; only the new models' side changes. Everything is monkeypatched (neighbour_rule.py; the product module keeps no flag).
"""
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, HERE.parents[1].as_posix())
sys.path.insert(0, HERE.as_posix())
import quality_holdout as qh  # noqa: E402
import neighbour_rule as nr  # noqa: E402

_orig_eval = qh.evaluate_split


def _eval(X, tr, te, s, k, selector, default, a_sc, c_sc, P, runs, *a, **kw):
    # the runs of the training rows (the fit's row order) and of the new models (the test rows, in order)
    nr.RUNS = None if runs is None or MODE != "mondrian-runs" else (np.asarray(runs)[tr], np.asarray(runs)[te])
    try:
        return _orig_eval(X, tr, te, s, k, selector, default, a_sc, c_sc, P, runs, *a, **kw)
    finally:
        nr.RUNS = None


if __name__ == "__main__":
    MODE = sys.argv[1]
    assert MODE in ("off", "mondrian", "mondrian-runs"), MODE
    if MODE != "off":
        nr.install()
    qh.evaluate_split = _eval
    rc = qh.main(sys.argv[2:])
    print(f"screen: {nr.STATS}", file=sys.stderr)  # new models measured to another run; of them, in the far bin
    sys.exit(rc)
