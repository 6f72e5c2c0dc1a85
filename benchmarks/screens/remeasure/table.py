"""Per-board table of the remeasure runs: store (a,f) and raw (f) from out/NAME_{store,raw}.json."""
import json, sys, os, math
O = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")
names = sys.argv[1:]
def load(n, fit):
    p = os.path.join(O, f"{n}_{fit}.json")
    return json.load(open(p)) if os.path.exists(p) else None
def f_(x, d=2):
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{d}f}"
print("| board | shape | (a) store: aggMAE / aggCov (p05) | (f) store: MAE / bias / aggCov / width / cellCov | claimed (store) | ratio | (f) raw: MAE / bias / aggCov / width / cellCov | claimed (raw) | ratio |")
print("|---|---|---|---|---|---|---|---|---|")
for n in names:
    s, r = load(n, "store"), load(n, "raw")
    for i, m in enumerate(s or []):
        rr = (r or [None] * (i + 1))[i] if r else None
        def frow(x):
            if x is None: return "-", "-", "-"
            p = "f_frontier_"
            mae, cl = x.get(p + "lowrank_agg_mae"), x.get(p + "claimed_agg_mae")
            row = " / ".join([f_(mae), f"{x.get(p+'lowrank_agg_bias'):+.2f}", f_(x.get(p+'lowrank_agg_cov'), 3),
                              f_(x.get(p+'lowrank_agg_width'), 1), f_(x.get(p+'lowrank_cell_cov'), 3)])
            ratio = mae / cl if cl and not math.isnan(cl) else float("nan")
            return row, f"{f_(cl)} ({f_(x.get(p+'claimed_agg_cov'))}, n {x.get(p+'claimed_held_out')})", f_(ratio, 1)
        fs, fr = frow(m), frow(rr)
        a = f"{f_(m.get('a_agg_mae'))} / {f_(m.get('a_agg_cov'),3)} ({f_(m.get('a_agg_cov_p05'))})"
        print(f"| {n}:{m['matrix']} | {m['shape']} | {a} | {fs[0]} | {fs[1]} | {fs[2]} | {fr[0]} | {fr[1]} | {fr[2]} |")
