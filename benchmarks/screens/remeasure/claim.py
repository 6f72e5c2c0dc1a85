"""The frontier claim's ratios (real / claimed aggregate MAE) over the boards, on --fit store and --fit raw."""
import json, statistics, os
O = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")
SHARED_STORE = {"HELM Classic": (6.23, 1.11), "Open LLM v2": (2.27, 1.25), "CrossPred": (2.33, 1.69),
                "Pythia strongest": (1.62, 0.55), "Pythia newest": (0.71, 0.87), "TSC bake-off": (1.03, 0.50),
                "benchbench": (10.59, 4.62)}
SHARED_RAW = {"HELM Classic": (6.30, 1.01), "Open LLM v2": (2.62, 1.43), "CrossPred": (2.33, 1.69),
              "Pythia strongest": (1.77, 0.56), "Pythia newest": (0.78, 0.96), "TSC bake-off": (1.03, 0.50),
              "benchbench": (10.59, 4.62)}
EXACT = ["sts", "icelandic", "nlu", "proteingym", "evoeval", "mmmu", "parsebench", "openasr", "helmet", "chinese", "nejumi", "mtebfr"]
def board(n, fit):
    m = json.load(open(f"{O}/{n}_{fit}.json"))[0]
    return m["f_frontier_lowrank_agg_mae"], m["f_frontier_claimed_agg_mae"]
for fit, shared in (("store", SHARED_STORE), ("raw", SHARED_RAW)):
    r = {k: a / c for k, (a, c) in shared.items()}
    r.update({n: a / c for n in EXACT for a, c in [board(n, fit)]})
    for label, extra in (("18 boards (7 shared + 11 rebuilt)", {}),
                         ("+ clustering ranks 1-54 (19)", {"clustering": (lambda a, c: a / c)(*board("clustering", fit))})):
        v = {**r, **extra}
        top = max(v, key=v.get)
        print(f"{fit:5s} {label:36s} n={len(v)} median {statistics.median(v.values()):.2f} max {v[top]:.2f} ({top}) "
              f"min {min(v.values()):.2f}; >1.3 on {sum(x > 1.3 for x in v.values())}")
    print("   ", ", ".join(f"{k} {x:.2f}" for k, x in sorted(r.items(), key=lambda kv: -kv[1])))
