"""Where the allowance reaches on each frontier split: test models with a share, with the full share, the per-benchmark
0.9 quantile of the score, and the missed models' (truth above the upper bound) predicted-strength quantile u.

    python benchmarks/screens/allowance/reach.py RECORDS.json
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import quality_frontier_prior as qfp  # noqa: E402

recs = qfp.load_records([sys.argv[1]])
print(f"{'split':<24}{'n':>5}{'share>0':>8}{'full':>6}{'q90 own':>8}  missed above (of n): u of the missed")
for (n, v), r in sorted(recs.items()):
    if v.startswith("a"):
        continue
    u = r["usable"]
    s = qfp.scores(r)
    hi_miss = u & (r["truth"] > r["hi"])
    uu = r["u"][hi_miss] if r["u"].size == u.size else np.array([])
    q = f"{np.quantile(s, 0.9):8.2f}" if s.size else "       -"
    print(f"{n + '/' + v:<24}{int(u.sum()):>5}{int((u & (r['share'] > 0)).sum()):>8}{int((u & (r['share'] >= 1)).sum()):>6}{q}"
          f"  {int(hi_miss.sum()):>3}: {np.round(np.sort(uu), 2).tolist()[:12]}")
