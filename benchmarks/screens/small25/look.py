"""Quick look on debug seeds: crosstask variants (subclasses, nothing patched in the product) against aipw_paper,
per table: mean |error| ratio to aipw_paper, to main's crosstask, coverage and median width.

    python benchmarks/screens/small25/look.py --items-dir tests/fixtures/items_unseen --items 25 \
        --protocol extrapolation --seeds 0 40 --variants main clip2 clipinf
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import quality_items as q  # noqa: E402
from harness_ext.methods.engine.item_estimators import AIPWPaper  # noqa: E402
from variants import VARIANTS  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", nargs="*")
    ap.add_argument("--items-dir", type=Path)
    ap.add_argument("--protocol", default="extrapolation")
    ap.add_argument("--items", type=int, default=25)
    ap.add_argument("--seeds", type=int, nargs=2, default=[0, 40])
    ap.add_argument("--variants", nargs="+", default=["main"])
    args = ap.parse_args(argv)
    if args.items_dir is not None:
        q.ITEMS = args.items_dir
    tables = args.tables or sorted(str(p.relative_to(q.ITEMS).with_suffix("")) for p in q.ITEMS.glob("*/*.parquet"))
    print(f"{args.protocol}, {args.items} items, seeds {args.seeds[0]}-{args.seeds[1] - 1}")
    print("table | variant | |err| | / aipw_paper | / main | coverage | median width")
    for t in tables:
        scores, models = q.load_named(q.ITEMS / f"{t}.parquet")
        others = q.sibling_tables(t, models)
        strength = q.benchmark_strength(scores, others)
        acc = {v: ([], [], []) for v in ["aipw_paper"] + args.variants}
        for seed in range(*args.seeds):
            d = q.draw(scores, args.protocol, args.items, seed, others, 1.0, strength)
            S, T, it, truth = d["S"], d["T"], d["items"], d["truth"]
            for v in acc:
                if v == "aipw_paper":
                    r = AIPWPaper().fit(S, it).predict(T[:, it])
                else:
                    r = VARIANTS[v]().fit(S, it, others=d["fit_o"]).predict(T[:, it], others=d["pred_o"])
                acc[v][0].append(np.abs(r.estimate - truth).mean() * 100)
                acc[v][1].append(((r.lower <= truth) & (truth <= r.upper)).mean())
                acc[v][2].append(np.median(r.upper - r.lower) * 100)
        base = np.mean(acc["aipw_paper"][0])
        ref = np.mean(acc[args.variants[0]][0])
        for v, (e, c, w) in acc.items():
            print(f"{t} | {v} | {np.mean(e):.3f} | {np.mean(e) / base:.3f} | {np.mean(e) / ref:.4f} | "
                  f"{np.mean(c):.3f} | {np.median(w):.2f}", flush=True)


if __name__ == "__main__":
    main()
