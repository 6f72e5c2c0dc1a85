"""The held-out source models' mean |error| of every (lam, clip) candidate crosstask chooses among, per group
(the interleaved folds, the sources' own frontier fold), averaged over seeds; run from the repository root:

    python benchmarks/screens/small25/folds.py tests/fixtures/items_unseen evalplus/humaneval_plus extrapolation 25 0 20 [frontier_share]
"""
import sys, numpy as np
sys.path.insert(0, 'benchmarks'); sys.path.insert(0, 'benchmarks/screens/small25')
import quality_items as q
from pathlib import Path
from harness_ext.methods.engine.item_crosstask import CrossTask
q.ITEMS = Path(sys.argv[1]); t = sys.argv[2]; proto = sys.argv[3]; n = int(sys.argv[4]); s0, s1 = int(sys.argv[5]), int(sys.argv[6])
scores, models = q.load_named(q.ITEMS / f"{t}.parquet"); others = q.sibling_tables(t, models); strength = q.benchmark_strength(scores, others)
rec = {}
class Spy(CrossTask):
    def _scored_choice(self, held):
        groups = [g for g in (~held["frontier"], held["frontier"]) if g.any()]
        for lam in self.variance_scales:
            for clip in self.gap_clips:
                w = self._scaled_weight(held["v_s"], held["a"], held["v_m"], lam, (held["lo"], held["hi"]), m=held["m"], clip=clip)
                err = np.abs(w * held["e_m"] + (1 - w) * held["e_a"])
                rec.setdefault((lam, clip), []).append([err[g].mean() for g in groups])
        return super()._scored_choice(held)
for seed in range(s0, s1):
    d = q.draw(scores, proto, n, seed, others, 1.0, strength)
    Spy(frontier_share=float(sys.argv[7]) if len(sys.argv) > 7 else 0.3).fit(d["S"], d["items"], others=d["fit_o"])
for k, v in rec.items():
    v = np.array(v) * 100
    print(k, "interleaved %.3f frontier %.3f mean %.3f" % (v[:, 0].mean(), v[:, 1].mean(), v.mean()))
