"""Every clause of the lead's criterion for the edge hull, from ``quality_items.py --per-draw`` CSVs and printed tables.

    python benchmarks/screens/dcarry/compare.py DIR [GROUPS_MAIN.pkl GROUPS_VAR.pkl ...]

DIR holds ``{main,var}_c{1,2,3}.csv`` and ``.txt`` (``crosstask`` only, same seeds). The optional pickles
(``dump.py`` on C1's seeds, main's then the variant's, per EvalPlus task) give the design-carried group (``w < 0.5``).
C1: HumanEval+ interpolation coverage up >= 0.01, the group's up >= 0.03, no EvalPlus cell above 0.93, each
task's mean |error| within 0.5% of main's. C2: a coverage main has inside 0.88-0.92 stays inside, one outside moves
no further than 0.005; the mean over tables of the median width (printed) up <= 3%; each table's mean |error| within
0.5%. C3: no benchmark-frontier coverage drops by more than 0.01.
"""
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rangeclip"))
from tail import per_cell, read  # noqa: E402

LO, HI = 0.88, 0.92


def widths(path):
    """``{(protocol, table): median width}`` from quality_items.py's printed table."""
    out = {}
    for line in Path(path).read_text().splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) == 10 and f[3] == "crosstask":
            out[(f[1], f[0])] = float(f[9])
    return out


def cells(d, tag):
    return per_cell(read([Path(d) / f"{tag}.csv"]))


def err_clause(cm, cv, tol=0.005):
    ok = True
    for cell in sorted(cm):
        e0, e1 = cm[cell]["crosstask"][0], cv[cell]["crosstask"][0]
        good = abs(e1 / e0 - 1) <= tol
        ok &= good
        print(f"| {cell[0]} | {cell[1]} | {e0:.3f} / {e1:.3f} ({e1 / e0:.4f}) | {'yes' if good else 'NO'} |")
    return ok


def main(d, pkls):
    verdict = {}
    cm, cv = cells(d, "main_c1"), cells(d, "var_c1")
    print("## C1 (EvalPlus, seeds 200-259)\n\n| protocol | table | coverage main / variant | width main / variant |\n|---|---|---|---|")
    wm, wv = widths(Path(d) / "main_c1.txt"), widths(Path(d) / "var_c1.txt")
    for cell in sorted(cm):
        print(f"| {cell[0]} | {cell[1]} | {cm[cell]['crosstask'][1]:.3f} / {cv[cell]['crosstask'][1]:.3f} | "
              f"{wm[cell]:.2f} / {wv[cell]:.2f} |")
    key = ("interpolation", "evalplus/humaneval_plus")
    rise = cv[key]["crosstask"][1] - cm[key]["crosstask"][1]
    cap = max(v["crosstask"][1] for v in cv.values())
    print(f"\nHumanEval+ interpolation coverage {rise:+.3f} (>= 0.01: {'holds' if rise >= 0.01 else 'FAILS'}); "
          f"highest EvalPlus coverage {cap:.3f} (<= 0.93: {'holds' if cap <= 0.93 else 'FAILS'})")
    ok = rise >= 0.01 and cap <= 0.93
    for a, b in zip(pkls[::2], pkls[1::2]):
        g = []
        for p in (a, b):
            rows = pickle.loads(Path(p).read_bytes())
            w = np.concatenate([r["w"] for r in rows])
            c = np.concatenate([(r["lo"] <= r["truth"]) & (r["truth"] <= r["hi"]) for r in rows])
            g.append((c[w < 0.5].mean(), (w < 0.5).sum(), c[w >= 0.5].mean(), c.mean()))
        print(f"{Path(a).name}: w < 0.5 ({g[0][1]} targets) cover {g[0][0]:.3f} -> {g[1][0]:.3f} ({g[1][0] - g[0][0]:+.3f}); "
              f"w >= 0.5 {g[0][2]:.3f} -> {g[1][2]:.3f}; all {g[0][3]:.3f} -> {g[1][3]:.3f}")
        if "humaneval" in Path(a).name:
            ok &= g[1][0] - g[0][0] >= 0.03
            print(f"  the group's rise >= 0.03: {'holds' if g[1][0] - g[0][0] >= 0.03 else 'FAILS'}")
    print("\n| protocol | table | mean abs error main / variant (ratio) | within 0.5% |\n|---|---|---|---|")
    ok &= err_clause(cm, cv)
    verdict["C1"] = ok

    cm, cv = cells(d, "main_c2"), cells(d, "var_c2")
    wm, wv = widths(Path(d) / "main_c2.txt"), widths(Path(d) / "var_c2.txt")
    print("\n## C2 (8 shared tables, seeds 280-299)\n\n| protocol | table | coverage main / variant | band | width main / "
          "variant |\n|---|---|---|---|---|")
    ok = True
    dist = lambda c: max(LO - c, c - HI, 0.0)  # noqa: E731
    for cell in sorted(cm):
        c0, c1 = cm[cell]["crosstask"][1], cv[cell]["crosstask"][1]
        good = (LO <= c1 <= HI) if LO <= c0 <= HI else dist(c1) <= dist(c0) + 0.005
        ok &= good
        print(f"| {cell[0]} | {cell[1]} | {c0:.3f} / {c1:.3f} | {'yes' if good else 'NO'} | {wm[cell]:.2f} / {wv[cell]:.2f} |")
    for proto in ("interpolation", "extrapolation", None):
        ks = [k for k in wm if proto in (None, k[0])]
        r = np.mean([wv[k] for k in ks]) / np.mean([wm[k] for k in ks])
        good = r <= 1.03
        ok &= good
        print(f"mean over tables of the median width, {proto or 'both protocols'}: x{r:.4f} ({'holds' if good else 'FAILS'})")
    print("\n| protocol | table | mean abs error main / variant (ratio) | within 0.5% |\n|---|---|---|---|")
    ok &= err_clause(cm, cv)
    verdict["C2"] = ok

    cm, cv = cells(d, "main_c3"), cells(d, "var_c3")
    print("\n## C3 (benchmark-frontier, seeds 280-289)\n\n| table | coverage main / variant | drop <= 0.01 |\n|---|---|---|")
    ok = True
    for cell in sorted(cm):
        c0, c1 = cm[cell]["crosstask"][1], cv[cell]["crosstask"][1]
        good = c1 >= c0 - 0.01
        ok &= good
        print(f"| {cell[1]} | {c0:.3f} / {c1:.3f} | {'yes' if good else 'NO'} |")
    verdict["C3"] = ok
    print("\n" + ", ".join(f"{k} {'holds' if v else 'FAILS'}" for k, v in verdict.items()))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
