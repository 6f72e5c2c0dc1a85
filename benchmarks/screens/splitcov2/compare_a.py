"""Protocol (a)'s aggregate coverage, pooled / 5th percentile over splits / mean of the per-split median width, side
by side over JSONs (the default predictor, as the criterion reads them).

    python benchmarks/screens/splitcov2/compare_a.py off_a.json mondrian-runs_a.json
"""
import json
import sys

import numpy as np

runs = [{r["matrix"]: r for r in json.load(open(p))} for p in sys.argv[1:]]
print("matrix (splits) | " + " | ".join(p.rsplit("/", 1)[-1] for p in sys.argv[1:]))
for mat in runs[0]:
    cells = []
    for r in runs:
        x = r.get(mat)
        if x is None:
            cells.append("-")
            continue
        s = np.asarray(x["a_agg_cov_splits"])
        assert abs(np.percentile(s, 5) - x["a_agg_cov_p05"]) < 1e-12
        cells.append(f"{x['a_agg_cov']:.3f} / {x['a_agg_cov_p05']:.3f} / {x['a_agg_width']:.2f}")
    print(f"{mat} ({len(runs[0][mat]['a_agg_cov_splits'])}) | " + " | ".join(cells))
