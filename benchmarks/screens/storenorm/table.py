"""Product vs candidate per board (out/NAME_{prod,clip}.json) and the criterion's verdict per board.

    python benchmarks/screens/storenorm/table.py NAME ...
A board whose clip run's log says the rule never fired is unchanged by construction (no prod run needed).
"""
import json
import math
import os
import re
import sys

O = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")


def load(n, arm):
    p = os.path.join(O, f"{n}_{arm}.json")
    return json.load(open(p)) if os.path.exists(p) else None


def fired(n):
    """How often the rule fired on board ``n``'s clip run: its .out file, else the LOG line (the .out files are not
    committed)."""
    p = os.path.join(O, f"{n}_clip.out")
    m = re.search(r"rule fired on (\d+)", open(p).read()) if os.path.exists(p) else None
    if m is None:
        m = re.search(rf"^{re.escape(n)} clip .*rule fired on (\d+)", open(os.path.join(O, "LOG")).read(), re.M)
    return None if m is None else int(m.group(1))


F = "f_frontier_lowrank_"
KEYS = [("a_agg_mae", 2), ("a_agg_cov", 3), ("a_cell_mae", 2), (F + "agg_mae", 2), (F + "agg_bias", 2),
        (F + "agg_cov", 3), (F + "agg_width", 1), (F + "cell_cov", 3)]


def fmt(m):
    return " / ".join("nan" if m.get(k) is None or (isinstance(m.get(k), float) and math.isnan(m[k])) else
                      f"{m[k]:.{d}f}" for k, d in KEYS)


print("| board | fired | product (5 splits): (a) aggMAE / aggCov / cellMAE; (f) MAE / bias / aggCov / width / "
      "cellCov | candidate, same | verdict |")
print("|---|---|---|---|---|")
for n in sys.argv[1:]:
    c, p, k = load(n, "clip"), load(n, "prod"), fired(n)
    for i, mc in enumerate(c or []):
        if k == 0:
            print(f"| {n}:{mc['matrix']} | 0 | = | {fmt(mc)} | unchanged by construction |")
            continue
        mp = (p or [None] * (i + 1))[i]
        if mp is None:
            print(f"| {n}:{mc['matrix']} | {k} | (not run) | {fmt(mc)} | ? |")
            continue
        why = []
        g = lambda m, key: m.get(key, float("nan"))  # noqa: E731
        if n == "helmet":
            if not (g(mc, F + "agg_cov") >= 0.60 and g(mc, F + "agg_mae") <= g(mp, F + "agg_mae")):
                why.append("P1")
        else:
            if g(mc, F + "agg_cov") < g(mp, F + "agg_cov") - 0.05:
                why.append("P2 cov")
            if g(mc, F + "agg_mae") > g(mp, F + "agg_mae") + max(0.1 * g(mp, F + "agg_mae"), 0.2):
                why.append("P2 MAE")
        if g(mc, "a_agg_mae") > 1.05 * g(mp, "a_agg_mae"):
            why.append("P3 aggMAE")
        if g(mc, "a_agg_cov") < g(mp, "a_agg_cov") - 0.02:
            why.append("P3 aggCov")
        if g(mc, "a_cell_mae") > 1.05 * g(mp, "a_cell_mae"):
            why.append("P3 cellMAE")
        print(f"| {n}:{mc['matrix']} | {k} | {fmt(mp)} | {fmt(mc)} | {'fails ' + ', '.join(why) if why else 'passes'} |")
