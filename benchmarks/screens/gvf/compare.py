"""Every clause of the lead's criterion for the smoothed-variance weight, from ``quality_items.py --per-draw`` CSVs.

    python benchmarks/screens/gvf/compare.py c1 MAIN_C1.csv VARIANT_C1.csv
    python benchmarks/screens/gvf/compare.py c2 MAIN_C2.csv VARIANT_C2.csv

MAIN holds the baselines and main's ``crosstask``; VARIANT the variant's ``crosstask`` on the same seeds (its
baselines, if present, are ignored: the baselines' code is unchanged). C1: HumanEval+ interpolation coverage up by
at least 0.01, neither EvalPlus task's interpolation mean |error| worse by more than 1%. C2: the mean over tables of
crosstask / best baseline (interpolation) and crosstask / aipw_paper (extrapolation) no more than main's + 0.002;
no table's mean |error| worse by more than 1%; no more catastrophic draws (error > 2 x aipw_paper's on the same
draw) than main. C3 (both runs): a coverage main has inside 0.88-0.92 stays inside; one outside moves no further
away than 0.005. The reader is ``rangeclip/tail.py``'s.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rangeclip"))
from tail import BASELINES, per_cell, read  # noqa: E402

LO, HI = 0.88, 0.92


def dist(c):
    return max(LO - c, c - HI, 0.0)


def c3(cells_m, cells_v) -> bool:
    ok_all = True
    print("\n## C3 coverage band\n\n| protocol | table | main | variant | held |\n|---|---|---|---|---|")
    for cell in sorted(cells_m):
        c0, c1 = cells_m[cell]["crosstask"][1], cells_v[cell]["crosstask"][1]
        ok = (LO <= c1 <= HI) if LO <= c0 <= HI else dist(c1) <= dist(c0) + 0.005
        ok_all &= ok
        print(f"| {cell[0]} | {cell[1]} | {c0:.3f} | {c1:.3f} | {'yes' if ok else 'NO'} |")
    return ok_all


def errors(cells_m, cells_v, protocols=None) -> bool:
    ok_all = True
    print("\n| protocol | table | mean abs error main / variant (ratio) | within 1% |\n|---|---|---|---|")
    for cell in sorted(cells_m):
        e0, e1 = cells_m[cell]["crosstask"][0], cells_v[cell]["crosstask"][0]
        ok = e1 <= 1.01 * e0
        if protocols is None or cell[0] in protocols:
            ok_all &= ok
        print(f"| {cell[0]} | {cell[1]} | {e0:.3f} / {e1:.3f} ({e1 / e0:.4f}) | {'yes' if ok else 'NO'} |")
    return ok_all


def c1(cells_m, cells_v) -> bool:
    key = ("interpolation", "evalplus/humaneval_plus")
    c0, c1_ = cells_m[key]["crosstask"][1], cells_v[key]["crosstask"][1]
    rise = c1_ - c0 >= 0.01
    print(f"## C1\n\nHumanEval+ interpolation coverage {c0:.3f} -> {c1_:.3f} ({c1_ - c0:+.3f}): "
          f"{'holds' if rise else 'FAILS'}")
    err = errors(cells_m, cells_v, protocols=("interpolation",))
    print(f"\ninterpolation errors within 1%: {'holds' if err else 'FAILS'}")
    return rise and err


def c2(draws_m, draws_v, cells_m, cells_v) -> bool:
    print("## C2\n")
    ok_all = True
    for proto, ref in (("interpolation", None), ("extrapolation", "aipw_paper")):
        tabs = sorted(t for p, t in cells_m if p == proto)
        r = {}
        for name, cells in (("main", cells_m), ("variant", cells_v)):
            rs = []
            for t in tabs:
                base = (cells_m[(proto, t)][ref][0] if ref else
                        min(cells_m[(proto, t)][b][0] for b in BASELINES if b in cells_m[(proto, t)]))
                rs.append(cells[(proto, t)]["crosstask"][0] / base)
            r[name] = sum(rs) / len(rs)
        ok = r["variant"] <= r["main"] + 0.002
        ok_all &= ok
        print(f"{proto}: mean over {len(tabs)} tables of crosstask / {ref or 'best baseline'}: main {r['main']:.4f}, "
              f"variant {r['variant']:.4f} ({r['variant'] - r['main']:+.4f}): {'holds' if ok else 'FAILS'}")
    err = errors(cells_m, cells_v)
    print(f"\nevery table's mean |error| within 1%: {'holds' if err else 'FAILS'}")
    cat = {"main": 0, "variant": 0}
    for key, d in draws_m.items():
        ref = d["aipw_paper"][0]
        cat["main"] += d["crosstask"][0] > 2 * ref
        cat["variant"] += draws_v[key]["crosstask"][0] > 2 * ref
    ok = cat["variant"] <= cat["main"]
    print(f"\ncatastrophic draws (error > 2 x aipw_paper's) over {len(draws_m)} draws: main {cat['main']}, "
          f"variant {cat['variant']}: {'holds' if ok else 'FAILS'}")
    return ok_all and err and ok


def main():
    which, pm, pv = sys.argv[1:4]
    dm, dv = read([pm]), read([pv])
    cm, cv = per_cell(dm), per_cell(dv)
    ok = (c1(cm, cv) if which == "c1" else c2(dm, dv, cm, cv))
    ok3 = c3(cm, cv)
    print(f"\n{which.upper()}: {'holds' if ok else 'FAILS'}; C3 on this run: {'holds' if ok3 else 'FAILS'}")


if __name__ == "__main__":
    main()
