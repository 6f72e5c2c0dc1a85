"""Every clause of CRITERION3.md from ``quality_items.py --per-draw`` CSVs: main's ``crosstask`` against
``crosstask_lcbgap`` on the tail (catastrophic draws, each table's worst draw), on the mean and on coverage.

    python benchmarks/screens/rangeclip/tail.py benchmarks/screens/rangeclip/fresh120_A_draws.csv \
        benchmarks/screens/rangeclip/fresh120_B_draws.csv > benchmarks/screens/rangeclip/fresh120_tail.md

A draw is one (table, seed) of a protocol; its error is the mean |error| over that seed's targets, in points. A
draw is catastrophic for an estimator when its error exceeds twice ``aipw_paper``'s on the same draw. Clause (1)
is judged on the extrapolation protocol (run A); (2) and (3) on every protocol present. Figures are computed from
the CSVs' unrounded values; a table's mean |error| and coverage reproduce quality_items.py's printed ones.
"""
import csv
import sys
from collections import defaultdict

MAIN, VARIANT, REFERENCE = "crosstask", "crosstask_lcbgap", "aipw_paper"
BASELINES = ("sample_mean", "random_learn", "aipw_paper", "anchor_weighted")
TAIL_PROTOCOL = "extrapolation"
WORST_TOL, MEAN_TOL, RATIO_TOL, COVER_TOL = 0.02, 0.01, 0.003, 0.005


def read(paths):
    """``{(protocol, table, seed): {estimator: (error, coverage or None, n_targets)}}`` over the random design."""
    draws = defaultdict(dict)
    for path in paths:
        with open(path, newline="") as fh:
            for r in csv.DictReader(fh):
                if r["design"] != "random":
                    continue
                cov = float(r["coverage"]) if r["coverage"] else None
                key = (r["protocol"], r["table"], int(r["seed"]))
                if r["estimator"] in draws[key]:
                    raise SystemExit(f"{path}: draw {key} of {r['estimator']} appears twice")
                draws[key][r["estimator"]] = (float(r["mean_abs_err_pts"]), cov, int(r["n_targets"]))
    return draws


def per_cell(draws):
    """``{(protocol, table): {estimator: (mean error, coverage over targets x seeds, seeds)}}``."""
    acc = defaultdict(lambda: defaultdict(list))
    for (p, t, _), d in draws.items():
        for k, v in d.items():
            acc[(p, t)][k].append(v)
    out = {}
    for cell, d in acc.items():
        out[cell] = {}
        for k, vs in d.items():
            err = sum(e for e, _, _ in vs) / len(vs)
            covered = [(c, n) for _, c, n in vs if c is not None]
            cov = sum(c * n for c, n in covered) / sum(n for _, n in covered) if covered else None
            out[cell][k] = (err, cov, len(vs))
    return out


def clause1(draws) -> bool:
    print(f"## (1) Tail, {TAIL_PROTOCOL}: catastrophic draws (error > 2 x {REFERENCE}'s on the same draw)\n")
    print(f"| table | draws | catastrophic {MAIN} | catastrophic {VARIANT} | worst {MAIN} (seed) | "
          f"worst {VARIANT} (seed) | worst change |")
    print("|---|---|---|---|---|---|---|")
    tables = sorted({t for p, t, _ in draws if p == TAIL_PROTOCOL})
    tot = {MAIN: 0, VARIANT: 0}
    n_draws, ok_worst, listed = 0, True, []
    for t in tables:
        ds = {s: d for (p, tt, s), d in draws.items() if p == TAIL_PROTOCOL and tt == t}
        n_draws += len(ds)
        cat = {k: [s for s, d in ds.items() if d[k][0] > 2 * d[REFERENCE][0]] for k in (MAIN, VARIANT)}
        for k in tot:
            tot[k] += len(cat[k])
        for s in sorted(set(cat[MAIN]) | set(cat[VARIANT])):
            listed.append((t, s, ds[s][REFERENCE][0], ds[s][MAIN][0], ds[s][VARIANT][0]))
        w = {k: max(ds, key=lambda s: ds[s][k][0]) for k in (MAIN, VARIANT)}
        wm, wv = ds[w[MAIN]][MAIN][0], ds[w[VARIANT]][VARIANT][0]
        ok_worst &= wv <= wm * (1 + WORST_TOL)
        print(f"| {t} | {len(ds)} | {len(cat[MAIN])} | {len(cat[VARIANT])} | {wm:.2f} ({w[MAIN]}) | "
              f"{wv:.2f} ({w[VARIANT]}) | {100 * (wv / wm - 1):+.2f}% |")
    print(f"| all | {n_draws} | {tot[MAIN]} | {tot[VARIANT]} | | | |\n")
    if listed:
        print(f"Catastrophic draws: table, seed, {REFERENCE}, {MAIN}, {VARIANT} (points)\n")
        for t, s, a, m, v in listed:
            print(f"* {t} seed {s}: {a:.2f}, {m:.2f}, {v:.2f}")
        print()
    for p in sorted({p for p, _, _ in draws} - {TAIL_PROTOCOL}):  # not judged by the clause; shown for the record
        ds = [d for (pp, _, _), d in draws.items() if pp == p]
        n = {k: sum(d[k][0] > 2 * d[REFERENCE][0] for d in ds) for k in (MAIN, VARIANT)}
        print(f"{p} (not judged by clause (1)): {len(ds)} draws, catastrophic {MAIN} {n[MAIN]}, {VARIANT} {n[VARIANT]}\n")
    ok = tot[MAIN] > 0 and tot[VARIANT] < tot[MAIN] and ok_worst
    why = "no catastrophic draw of main's: the benefit is not shown; " if tot[MAIN] == 0 else ""
    print(f"Clause (1): {why}counts {tot[MAIN]} -> {tot[VARIANT]} (strictly fewer: {tot[VARIANT] < tot[MAIN]}); "
          f"every table's worst draw within +{100 * WORST_TOL:.0f}%: {ok_worst}. **{'passes' if ok else 'fails'}**\n")
    return ok


def clauses23(cells) -> tuple:
    print(f"## (2) Mean |error| and (3) 90% coverage per table and protocol\n")
    print(f"| protocol | table | seeds | {MAIN} err (cov) | {VARIANT} err (cov) | error change | coverage change | "
          f"ratio to best baseline (which) {MAIN} -> {VARIANT} |")
    print("|---|---|---|---|---|---|---|---|")
    ok2, ok3 = True, True
    ratios = defaultdict(lambda: ([], []))
    worst_err, worst_cov = (-1.0, None), (-1.0, None)
    for (p, t) in sorted(cells):
        d = cells[(p, t)]
        (em, cm, n), (ev, cv, _) = d[MAIN], d[VARIANT]
        best = min((k for k in BASELINES if k in d), key=lambda k: d[k][0])
        rm, rv = em / d[best][0], ev / d[best][0]
        ratios[p][0].append(rm)
        ratios[p][1].append(rv)
        ch = ev / em - 1
        dc = cv - cm
        ok2 &= ch <= MEAN_TOL
        ok3 &= dc >= -COVER_TOL
        worst_err = max(worst_err, (ch, (p, t)))
        worst_cov = max(worst_cov, (-dc, (p, t)))
        print(f"| {p} | {t} | {n} | {em:.3f} ({cm:.4f}) | {ev:.3f} ({cv:.4f}) | {100 * ch:+.2f}% | {dc:+.4f} | "
              f"{rm:.4f} -> {rv:.4f} ({best}) |")
    print(f"\nMean ratio to the best of the four baselines (per table, then averaged over tables):\n")
    for p, (rm, rv) in sorted(ratios.items()):
        m, v = sum(rm) / len(rm), sum(rv) / len(rv)
        good = v - m <= RATIO_TOL
        ok2 &= good
        print(f"* {p}: {m:.4f} -> {v:.4f} ({v - m:+.4f}; at most +{RATIO_TOL}: {good})")
    print(f"\nLargest error change {100 * worst_err[0]:+.2f}% ({' '.join(worst_err[1])}); largest coverage drop "
          f"{worst_cov[0]:.4f} ({' '.join(worst_cov[1])}).\n")
    print(f"Clause (2): every table within +{100 * MEAN_TOL:.0f}% and every mean ratio within +{RATIO_TOL}: "
          f"**{'passes' if ok2 else 'fails'}**\n")
    print(f"Clause (3): no coverage down by more than {COVER_TOL}: **{'passes' if ok3 else 'fails'}**\n")
    return ok2, ok3


def main(paths) -> int:
    draws = read(paths)
    print(f"# CRITERION3.md's clauses: {MAIN} against {VARIANT}\n")
    print(f"From {', '.join(paths)}: {len(draws)} draws (table, protocol, seed).\n")
    ok1 = clause1(draws)
    ok2, ok3 = clauses23(per_cell(draws))
    print(f"Verdict: (1) {'pass' if ok1 else 'fail'}, (2) {'pass' if ok2 else 'fail'}, (3) {'pass' if ok3 else 'fail'}:"
          f" **{'ship' if ok1 and ok2 and ok3 else 'do not ship'}**")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
