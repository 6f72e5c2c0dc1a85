"""A cross-benchmark shift of the frontier *point* prediction, screened leave one benchmark out (not in the product).

Run (the records of ``quality_frontier_prior.py``, then the screen on them)::

    HARNESS_EXT_SHARED_DATA=/work/shared/data python benchmarks/quality_frontier_prior.py --random-splits 3 \\
        --random-benchmarks helm_classic,tsc_bakeoff,crosspred,benchbench,pythia_mmlu,livebench,hydrox,opencompass,rewardbench,rewardbench_2 \\
        --levels 0.9 --json /tmp/records.json
    python benchmarks/quality_frontier_shift.py /tmp/records.json

The records hold, per test model of each frontier split and random split, the truth, the engine's aggregate and its
interval with the cross-benchmark allowance off, the design sd and the allowance's share (``frontier_prior.share``).
The allowance's scores ``(truth - prediction) / design sd`` (test models with the full share) are mostly positive: the
frontier's predictions are too low. The screen moves a model's aggregate to ``prediction + share x c x design sd``
with ``c`` a pooled robust centre of those scores, each benchmark weighing the same, computed without the benchmark
and the benchmarks sharing its data (``FAMILIES``: leave one benchmark out), and recomputes the allowance's quantile
on the shifted scores with the same exclusion, so point and interval are learnt together. Since every full-share
score moves by the same ``c``, the recomputed quantile is the old one minus ``c`` and the upper bound of a model is
unchanged; the lower bound is not moved and stays below the shifted point (``c >= 0``).

Variants: ``median`` (the weighted median), ``half`` (half of it), ``bmed`` (the median of the benchmarks' medians);
``--full-only`` shifts only the models predicted stronger than every training model (share 1), where ``c`` is learnt.
Reported: each frontier row's aggregate MAE, bias (prediction - truth), 90% coverage and median width before/after;
each random-split benchmark's aggregate MAE and median width (mean over its splits) before/after; and the acceptance
rule (a majority of the 12 frontier rows and their mean MAE lower; every random-split MAE and width within +5%; no
fewer frontier rows with coverage in 0.85-0.95).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import quality_frontier_prior as qfp  # noqa: E402 - the allowance's pooled quantile, families and figures

LEVEL = 0.9
VARIANTS = ("median", "half", "bmed")


def centre(front, exclude, how):
    """The pooled centre ``c`` (>= 0) of the frontier scores of the benchmarks not in ``exclude``."""
    if how in ("median", "half"):
        c = qfp.pooled_quantile(front, exclude, 0.5)
        c = None if c is None else c * (0.5 if how == "half" else 1.0)
    else:  # the median of each benchmark's own (variant-weighted) median
        meds = [qfp.pooled_quantile({k: r for k, r in front.items() if k[0] == n}, (), 0.5)
                for n in sorted({n for n, _ in front} - set(exclude))]
        meds = [m for m in meds if m is not None]
        c = float(np.median(meds)) if meds else None
    return max(c or 0.0, 0.0)


def shifted(rec, c, full_only=False):
    """``rec`` with its aggregate moved up by ``share x c x design sd``."""
    r = dict(rec)
    m = np.isfinite(rec["sd"]) & ((rec["share"] >= 1.0) if full_only else True)
    r["pred"] = rec["pred"].copy()
    r["pred"][m] += rec["share"][m] * c * rec["sd"][m]
    return r


def figs(rec, q):
    """Aggregate MAE, bias (prediction - truth), coverage and median width of the usable test models."""
    cov, wid = qfp.figures(rec, q)
    u = rec["usable"]
    err = (rec["pred"] - rec["truth"])[u]
    return dict(mae=float(np.abs(err).mean()), bias=float(err.mean()), cov=cov, wid=wid,
                lower_ok=bool((rec["lo"][u] <= rec["pred"][u] + 1e-9).all()))


def constants(front, name, how, full_only):
    """``(q now, c, q on the shifted scores)`` without ``name`` and its family."""
    ex = {name} | qfp.FAMILIES.get(name, set())
    c = centre(front, ex, how)
    q1 = qfp.pooled_quantile({k: shifted(r, c, full_only) for k, r in front.items()}, ex, LEVEL)
    return qfp.pooled_quantile(front, ex, LEVEL), c, q1


def evaluate(records, how, full_only=False):
    """Frontier rows ``[(key, c, before, after)]`` and random-split rows ``{name: (c, [before], [after])}``."""
    front = {k: r for k, r in records.items() if not k[1].startswith("a")}
    rows = []
    for key, rec in front.items():
        q0, c, q1 = constants(front, key[0], how, full_only)
        rows.append((key, c, figs(rec, q0), figs(shifted(rec, c, full_only), q1)))
    rnd = {}
    for name in sorted({n for n, v in records if v.startswith("a")}):
        q0, c, q1 = constants(front, name, how, full_only)
        recs = [r for (n, v), r in records.items() if n == name and v.startswith("a")]
        rnd[name] = (c, [figs(r, q0) for r in recs], [figs(shifted(r, c, full_only), q1) for r in recs])
    return rows, rnd


def verdict(rows, rnd):
    """The acceptance rule's parts (module docstring)."""
    lower = sum(a["mae"] < b["mae"] - 1e-12 for _, _, b, a in rows)
    mb, ma = (float(np.mean([r[i]["mae"] for r in rows])) for i in (2, 3))
    band = (sum(0.85 <= r[3]["cov"] <= 0.95 for r in rows), sum(0.85 <= r[2]["cov"] <= 0.95 for r in rows))
    worst_mae = max(np.mean([x["mae"] for x in a]) / np.mean([x["mae"] for x in b]) - 1 for _, b, a in rnd.values())
    worst_wid = max(np.mean([x["wid"] for x in a]) / np.mean([x["wid"] for x in b]) - 1 for _, b, a in rnd.values())
    ok = lower > len(rows) / 2 and ma < mb and worst_mae <= 0.05 and worst_wid <= 0.05 and band[0] >= band[1]
    return (f"lower MAE on {lower}/{len(rows)} frontier rows; mean MAE {mb:.3f} -> {ma:.3f}; in band {band[1]} -> "
            f"{band[0]}; worst random-split MAE {worst_mae:+.1%}, width {worst_wid:+.1%}: "
            f"{'PASSES' if ok else 'fails'}")


def report(records, how, full_only=False, file=None):
    rows, rnd = evaluate(records, how, full_only)
    print(f"\n### {how}{' (full share only)' if full_only else ''}\n", file=file)
    print("| benchmark | variant | test | c (LOBO) | MAE before | MAE after | bias before | bias after | coverage "
          "(width) before | after |\n|---|---|---|---|---|---|---|---|---|---|", file=file)
    for (name, variant), c, b, a in rows:
        print(f"| {name} | {variant} | {int(records[(name, variant)]['usable'].sum())} | {c:.3f} | {b['mae']:.2f} | "
              f"{a['mae']:.2f} | {b['bias']:+.2f} | {a['bias']:+.2f} | {b['cov']:.3f} ({b['wid']:.2f}) | "
              f"{a['cov']:.3f} ({a['wid']:.2f}){'' if a['lower_ok'] else ' lower bound above the point'} |", file=file)
    print("\n| random splits | splits | c (LOBO) | MAE before | MAE after | width before | width after |\n"
          "|---|---|---|---|---|---|---|", file=file)
    for name, (c, b, a) in rnd.items():
        mb, ma = np.mean([x["mae"] for x in b]), np.mean([x["mae"] for x in a])
        wb, wa = np.mean([x["wid"] for x in b]), np.mean([x["wid"] for x in a])
        print(f"| {name} | {len(b)} | {c:.3f} | {mb:.3f} | {ma:.3f} ({ma / mb - 1:+.1%}) | {wb:.2f} | {wa:.2f} "
              f"({wa / wb - 1:+.1%}) |", file=file)
    print(f"\nRule: {verdict(rows, rnd)}", file=file)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("records", help="the JSON written by quality_frontier_prior.py --json")
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated subset of {', '.join(VARIANTS)}")
    ap.add_argument("--full-only", action="store_true", help="shift only the models with the full share")
    args = ap.parse_args(argv)
    records = qfp.load_records([args.records])
    for how in args.variants.split(","):
        report(records, how, args.full_only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
