"""Protocol (f)'s aggregate coverage / median width of the default predictor, side by side over JSONs.

    python benchmarks/screens/splitcov2/compare_f.py off_f.json mondrian_f.json mondrian-runs_f.json
"""
import json
import sys

runs = [{r["matrix"]: r for r in json.load(open(p))} for p in sys.argv[1:]]
print("matrix/variant (n test) | " + " | ".join(p.rsplit("/", 1)[-1] for p in sys.argv[1:]))
for mat in runs[0]:
    for v in ("frontier", "newest"):
        key = f"f_{v}_lowrank_agg_cov"
        if key not in runs[0][mat]:
            continue
        n = runs[0][mat].get(f"f_{v}_n", ["?", "?"])[1]
        cells = [f"{r[mat][key]:.3f} / {r[mat][f'f_{v}_lowrank_agg_width']:.2f}" if mat in r and key in r[mat] else "-"
                 for r in runs]
        print(f"{mat} {v} ({n}) | " + " | ".join(cells))
