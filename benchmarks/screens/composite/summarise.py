"""Markdown tables of a screen.py --out JSON: per-task rows (mean |error|, 90% coverage, median width, in points)
of sample_mean against each composite variant, and the benchmark row, per table, documents per task and protocol;
then the ship criteria's verdict per variant (cut >= 15% and coverage 0.87-0.95 on every table and protocol)."""
import json
import sys


def main(path):
    doc = json.load(open(path))
    d = doc["results"]
    tables = list(d)
    ns = list(next(iter(d.values())))
    variants = [v for v in next(iter(next(iter(d.values())).values()))["inside"] if v != "sample_mean"]
    print(f"Seeds {doc['seeds']}, {doc['draws']} draws per target per seed. Per-task rows pooled over tasks, targets "
          "and draws: mean |error| / coverage / median width, in points (coverage as a share); `cut` = 1 - mae / "
          "sample_mean's mae.\n")
    head = "| table | n | split | sample_mean | " + " | ".join(variants) + " | bench: sample_mean | bench: " + \
        " | bench: ".join(v for v in variants if "+lt" not in v) + " |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for t in tables:
        for n in ns:
            for p in ("inside", "frontier"):
                r = d[t][n][p]
                sm = r["sample_mean"]
                cells = [f"{sm['task_mae']*100:.1f} / {sm['task_cov']:.2f} / {sm['task_width_med']*100:.0f}"]
                cells += [f"{r[v]['task_mae']*100:.1f} ({r[v]['cut']:+.0%}) / {r[v]['task_cov']:.2f} / "
                          f"{r[v]['task_width_med']*100:.0f}" for v in variants]
                cells += [f"{sm['bench_mae']*100:.2f} / {sm['bench_cov']:.2f} / {sm['bench_width_med']*100:.1f}"]
                cells += [f"{r[v]['bench_mae']*100:.2f} / {r[v]['bench_cov']:.2f} / {r[v]['bench_width_med']*100:.1f}"
                          for v in variants if "+lt" not in v]
                print(f"| {t} | {n} | {p} | " + " | ".join(cells) + " |")
    print("\nShip criteria per variant (every table, n and split): cells failing (cut < 15% or coverage outside "
          "0.87-0.95):\n")
    for v in variants:
        bad = []
        for t in tables:
            for n in ns:
                for p in ("inside", "frontier"):
                    r = d[t][n][p][v]
                    if r["cut"] < 0.15 or not 0.87 <= r["task_cov"] <= 0.95:
                        bad.append(f"{t} n={n} {p} ({r['cut']:+.0%}, {r['task_cov']:.2f})")
        total = len(tables) * len(ns) * 2
        print(f"- `{v}`: {len(bad)} of {total} fail" + (": " + "; ".join(bad) if bad else " (PASS)"))


if __name__ == "__main__":
    main(sys.argv[1])
