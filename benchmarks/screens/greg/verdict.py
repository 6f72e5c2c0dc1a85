"""Every clause of CRITERION.md from ``quality_items.py --per-draw`` CSVs: main's ``crosstask`` against
``crosstask_greg``. Reads the draws with ``benchmarks/screens/rangeclip/tail.py``'s ``read`` and ``per_cell``.

    python benchmarks/screens/greg/verdict.py benchmarks/screens/greg/criterion_draws.csv \
        > benchmarks/screens/greg/verdict.md

A draw is one (table, protocol, seed); its error is the mean |error| over that seed's targets, in points. A table's
ratio is its mean error over the best (lowest mean error) of the four baselines on that table and protocol; a
protocol's mean ratio averages the tables'. A draw is catastrophic for an estimator when its error exceeds twice
``aipw_paper``'s on the same draw. Figures come from the CSVs' unrounded values.
"""
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rangeclip"))
from tail import BASELINES, REFERENCE, per_cell, read  # noqa: E402

MAIN, VARIANT = "crosstask", "crosstask_greg"
EXTRAP_GAIN, MEAN_TOL, RATIO_TOL, COVER_TOL = 0.005, 0.01, 0.002, 0.005


def verdict(ok):
    return "**passes**" if ok else "**fails**"


def table_rows(cells):
    """Per (protocol, table): main's and the variant's errors, coverages and ratios; per protocol the mean ratios."""
    print("| protocol | table | seeds | best baseline (err) | crosstask err (cov) | crosstask_greg err (cov) | "
          "error change | coverage change | ratio main -> greg |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios = defaultdict(lambda: ([], []))
    for (p, t) in sorted(cells):
        d = cells[(p, t)]
        (em, cm, n), (ev, cv, _) = d[MAIN], d[VARIANT]
        best = min((k for k in BASELINES if k in d), key=lambda k: d[k][0])
        rm, rv = em / d[best][0], ev / d[best][0]
        ratios[p][0].append(rm)
        ratios[p][1].append(rv)
        print(f"| {p} | {t} | {n} | {best} ({d[best][0]:.3f}) | {em:.3f} ({cm:.4f}) | {ev:.3f} ({cv:.4f}) | "
              f"{100 * (ev / em - 1):+.2f}% | {cv - cm:+.4f} | {rm:.4f} -> {rv:.4f} |")
    print()
    return {p: (sum(a) / len(a), sum(b) / len(b)) for p, (a, b) in ratios.items()}


def main(paths) -> int:
    draws = read(paths)
    cells = per_cell(draws)
    protocols = sorted({p for p, _ in cells})
    print(f"# CRITERION.md's clauses: {MAIN} against {VARIANT}\n")
    print(f"From {', '.join(paths)}: {len(draws)} draws (table, protocol, seed); protocols {', '.join(protocols)}.\n")
    means = table_rows(cells)
    print("Mean ratio to the best of the four baselines (per table, then averaged over tables):\n")
    for p, (m, v) in sorted(means.items()):
        print(f"* {p}: {m:.4f} -> {v:.4f} ({v - m:+.4f})")
    print()
    m, v = means["extrapolation"]
    ok1 = v - m <= -EXTRAP_GAIN
    print(f"(1) extrapolation mean ratio falls by at least {EXTRAP_GAIN}: {m:.4f} -> {v:.4f} ({v - m:+.4f}): "
          f"{verdict(ok1)}\n")
    worst = max(((cells[c][VARIANT][0] / cells[c][MAIN][0] - 1, c) for c in cells))
    ok2 = worst[0] <= MEAN_TOL
    print(f"(2) no table's mean |error| up by more than {100 * MEAN_TOL:.0f}% in any protocol: largest change "
          f"{100 * worst[0]:+.2f}% ({' '.join(worst[1])}): {verdict(ok2)}\n")
    ups = {p: means[p][1] - means[p][0] for p in ("interpolation", "benchmark-frontier") if p in means}
    ok3 = all(u <= RATIO_TOL for u in ups.values())
    print(f"(3) interpolation and benchmark-frontier mean ratios up by at most {RATIO_TOL}: "
          f"{'; '.join(f'{p} {u:+.4f}' for p, u in ups.items())}: {verdict(ok3)}\n")
    drop = max(((cells[c][MAIN][1] - cells[c][VARIANT][1], c) for c in cells))
    ok4 = drop[0] <= COVER_TOL
    print(f"(4) no table's 90% coverage down by more than {COVER_TOL} in any protocol: largest drop {drop[0]:+.4f} "
          f"({' '.join(drop[1])}): {verdict(ok4)}\n")
    counts = {}
    for p in protocols:
        ds = [d for (pp, _, _), d in draws.items() if pp == p]
        counts[p] = tuple(sum(d[k][0] > 2 * d[REFERENCE][0] for d in ds) for k in (MAIN, VARIANT))
    ok5 = all(v <= m for m, v in counts.values())
    print(f"(5) no protocol with more catastrophic draws (error > 2 x {REFERENCE}'s) than main's: "
          f"{'; '.join(f'{p} {m} -> {v}' for p, (m, v) in counts.items())}: {verdict(ok5)}\n")
    oks = (ok1, ok2, ok3, ok4, ok5)
    print("Verdict: " + ", ".join(f"({i + 1}) {'pass' if ok else 'fail'}" for i, ok in enumerate(oks))
          + f": **{'ship' if all(oks) else 'do not ship'}**")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
