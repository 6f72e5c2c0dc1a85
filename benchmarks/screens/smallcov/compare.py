"""The lead's criterion (C1-C4) from two ``quality_items.py`` outputs, main's and the variant's, on the same seeds.

    python benchmarks/screens/smallcov/compare.py MAIN.txt VARIANT.txt [--band 0.88 0.92]
"""
import sys


def rows(path):
    out = {}
    for line in open(path):
        f = [x.strip() for x in line.split("|")]
        if len(f) == 10 and f[3] == "crosstask":
            out[(f[0], f[1])] = (float(f[4]), float(f[6]), float(f[9]))
    return out


def main():
    a, b = rows(sys.argv[1]), rows(sys.argv[2])
    lo, hi = 0.88, 0.92
    print("| table | protocol | mean abs error main / variant | coverage main / variant | C2 | width main / variant (ratio) |")
    print("|---|---|---|---|---|---|")
    for key in a:
        (e0, c0, w0), (e1, c1, w1) = a[key], b[key]
        inside = lo <= c0 <= hi
        dist = lambda c: max(lo - c, c - hi, 0.0)  # noqa: E731
        ok = (lo <= c1 <= hi) if inside else dist(c1) <= dist(c0) + 0.005
        print(f"| {key[0]} | {key[1]} | {e0:.2f} / {e1:.2f} | {c0:.3f} / {c1:.3f} | {'held' if ok else 'FAILS'} | "
              f"{w0:.2f} / {w1:.2f} ({w1 / w0:.3f}) |")


if __name__ == "__main__":
    main()
