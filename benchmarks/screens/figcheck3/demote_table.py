"""Default -> `--demote-saturated` rows from two ``quality_holdout.py --json`` files of the same protocol.

Usage: python benchmarks/screens/figcheck3/demote_table.py DEFAULT.json[,DEFAULT2.json...] DEMOTE.json [f|a]
f: every frontier row (frontier, newest); a: protocol (a)'s random splits (means over the splits).
"""
import json
import sys


def rows(path, proto):
    out = {}
    for rec in json.load(open(path)):
        for key in rec:
            if proto == "f" and key.endswith("_lowrank_agg_mae") and key.startswith("f_"):
                split = key[2:-len("_lowrank_agg_mae")]
                pre = f"f_{split}_lowrank_"
                out[(rec["matrix"], split)] = (rec[pre + "agg_mae"], rec[pre + "agg_cov"], rec[pre + "agg_width"])
            elif proto == "a" and key == "a_agg_mae":
                out[(rec["matrix"], "random")] = (rec["a_agg_mae"], rec["a_agg_cov"], rec["a_agg_width"])
    return out


def main(default, demote, proto="f"):
    d, o = {}, rows(demote, proto)
    for path in default.split(","):  # several files of the default (one per matrix) may be given, comma-separated
        d.update(rows(path, proto))
    ratios = []
    print("| matrix | split | aggregate MAE | ratio | aggregate coverage | median width |")
    print("|---|---|---|---|---|---|")
    for key in o:
        (m0, c0, w0), (m1, c1, w1) = d[key], o[key]
        ratios.append(m1 / m0)
        print(f"| {key[0]} | {key[1]} | {m0:.2f} -> {m1:.2f} | {m1 / m0:.2f} | {c0:.3f} -> {c1:.3f} | "
              f"{w0:.2f} -> {w1:.2f} |")
    print(f"mean ratio {sum(ratios) / len(ratios):.3f} over {len(ratios)} rows; "
          f"better {sum(r < 0.995 for r in ratios)}, worse {sum(r > 1.005 for r in ratios)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
