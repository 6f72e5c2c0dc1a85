"""The frontier claim's ratios (real / claimed aggregate MAE, store fit) with the logit-clip rule: the remeasure pass's
figures (benchmarks/screens/remeasure/claim.py) with each board the rule fires on replaced by its (f) figures from
out/NAME_clip.json ((f) is one split, seed 0, the same with any --splits)."""
import json
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "remeasure"))
import claim as rc  # noqa: E402  (prints the remeasure pass's table first)

O = os.path.join(HERE, "out")
SHARED_NAMES = {"TSC bake-off": "tsc_bakeoff", "benchbench": "benchbench", "CrossPred": "crosspred",
                "HELM Classic": "helm_classic", "Open LLM v2": "open_llm_v2"}


def fired(n):
    p = os.path.join(O, f"{n}_clip.out")
    m = re.search(r"rule fired on (\d+)", open(p).read()) if os.path.exists(p) else None
    return None if m is None else int(m.group(1))


def fig(n):
    m = json.load(open(os.path.join(O, f"{n}_clip.json")))[0]
    return m["f_frontier_lowrank_agg_mae"], m["f_frontier_claimed_agg_mae"]


r = {k: a / c for k, (a, c) in rc.SHARED_STORE.items()}
r.update({n: a / c for n in rc.EXACT + ["clustering"] for a, c in [rc.board(n, "store")]})
changed = {}
for k in list(r):
    n = SHARED_NAMES.get(k, k)
    if fired(n):
        a, c = fig(n)
        changed[k] = (r[k], a / c)
        r[k] = a / c
print("\nwith the rule (store fit):", ", ".join(f"{k} {o:.2f} -> {v:.2f}" for k, (o, v) in changed.items()))
for label, keys in (("19 (without clustering)", [k for k in r if k != "clustering"]), ("20", list(r))):
    v = {k: r[k] for k in keys}
    top = max(v, key=v.get)
    print(f"  {label}: median {statistics.median(v.values()):.2f} max {v[top]:.2f} ({top}) min {min(v.values()):.2f}; "
          f">1.3 on {sum(x > 1.3 for x in v.values())}")
print("   ", ", ".join(f"{k} {x:.2f}" for k, x in sorted(r.items(), key=lambda kv: -kv[1])))
