"""The allowance screen of CRITERION.md, offline, on one run's records of ``quality_frontier_prior.py --json``.

    python benchmarks/screens/allowance/screen.py RECORDS.json [--level 0.9]

Prints, per frontier split: coverage (median width) with the shipped constant, with candidate (i) (pooled over the
eleven calibration benchmarks, leave one benchmark out) and (ii) (the eleven + the unseen boards, leave one out);
the random splits' cost; and the criterion's verdict per candidate.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
import quality_frontier_prior as qfp  # noqa: E402

ELEVEN = ("helm_classic", "open_llm_v2", "crosspred", "pythia_mmlu", "tsc_bakeoff", "benchbench", *qfp.EXTRA)
SHIPPED = {0.8: 0.842, 0.9: 1.229, 0.95: 1.663}
BAND = 0.05  # the band: level +- 0.05 (0.85-0.95 at 0.9, the criterion's level)


def dist(c, level=0.9):
    return max(0.0, level - BAND - c, c - level - BAND)


def constant(frontier, name, pool, level):
    """The candidate's constant for ``name``: pooled over ``pool`` without ``name`` and its family."""
    out = {n for n, _ in frontier} - set(pool)
    return qfp.pooled_quantile(frontier, {name} | qfp.FAMILIES.get(name, set()) | out, level)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("records")
    ap.add_argument("--level", type=float, default=0.9)
    args = ap.parse_args(argv)
    lv = args.level
    recs = qfp.load_records([args.records])
    frontier = {k: r for k, r in recs.items() if not k[1].startswith("a")}
    names = sorted({n for n, _ in frontier}, key=lambda n: (n not in ELEVEN, n))
    pools = {"i": [n for n in names if n in ELEVEN], "ii": names}
    for c, pool in pools.items():
        out = {n for n, _ in frontier} - set(pool)
        print(f"candidate ({c}) in-sample constant at {lv}: {qfp.pooled_quantile(frontier, out, lv):.3f} "
              f"over {len(pool)} benchmarks")
    print(f"\nlevel {lv}: coverage (median width); off | shipped {SHIPPED[lv]} | (i) LOBO q | (ii) LOBO q")
    verdict = {c: dict(toward=0, away=0, left=[], inband_before=0, inband_after=0) for c in pools}
    for key in sorted(frontier, key=lambda k: (k[0] not in ELEVEN, k)):
        rec = frontier[key]
        off, base = qfp.figures(rec, None), qfp.figures(rec, SHIPPED[lv])
        row = f"{key[0]:<13}{key[1]:<9}{int(rec['usable'].sum()):>5}  {off[0]:.3f} ({off[1]:6.2f}) | {base[0]:.3f} ({base[1]:6.2f})"
        for c, pool in pools.items():
            q = constant(frontier, key[0], pool, lv)
            cov, w = qfp.figures(rec, q)
            v = verdict[c]
            v["toward"] += dist(cov, lv) < dist(base[0], lv) - 1e-12
            v["away"] += dist(cov, lv) > dist(base[0], lv) + 1e-12
            v["inband_before"] += dist(base[0], lv) == 0
            v["inband_after"] += dist(cov, lv) == 0
            if dist(base[0], lv) == 0 and dist(cov, lv) > 0:
                v["left"].append("/".join(key))
            row += f" | {q:.3f} {cov:.3f} ({w:6.2f})"
        print(row)
    print("\nrandom splits: mean median width, off -> shipped -> (i) -> (ii) (change over off)")
    worst = {c: -np.inf for c in pools}
    for name in sorted({n for n, v in recs if v.startswith("a")}, key=lambda n: (n not in ELEVEN, n)):
        rs = [r for (n, v), r in recs.items() if n == name and v.startswith("a")]
        w0 = np.mean([qfp.figures(r, None)[1] for r in rs])
        ws = np.mean([qfp.figures(r, SHIPPED[lv])[1] for r in rs])
        row = f"  {name:<13}{len(rs):>2} splits  {w0:7.2f} -> {ws:7.2f} ({ws / w0 - 1:+.1%})"
        for c, pool in pools.items():
            q = constant(frontier, name, pool, lv)
            wc = np.mean([qfp.figures(r, q)[1] for r in rs])
            worst[c] = max(worst[c], wc / w0 - 1)
            cv = np.mean([qfp.figures(r, q)[0] for r in rs])
            row += f" -> {wc:7.2f} ({wc / w0 - 1:+.1%}, cov {cv:.3f})"
        print(row)
    print()
    for c, v in verdict.items():
        ok = v["toward"] > v["away"] and not v["left"] and worst[c] <= 0.10
        print(f"({c}): toward {v['toward']}, away {v['away']}, in band {v['inband_before']} -> {v['inband_after']}, "
              f"left the band {v['left'] or 'none'}, worst random-split cost {worst[c]:+.1%}: "
              f"{'PASSES' if ok else 'fails'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
