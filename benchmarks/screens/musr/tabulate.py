"""The criterion's table from a screen.py output: main's crosstask against a variant, per table and protocol.

    python benchmarks/screens/musr/tabulate.py benchmarks/screens/musr/fresh60_out.txt crosstask_shrink
"""
import sys

out, variant = sys.argv[1], sys.argv[2]
rows, ratio, avg = {}, {}, {}
section = "rows"
for line in open(out):
    parts = [p.strip() for p in line.split("|")]
    if line.startswith("ratios:"):
        section = "ratios"
    elif line.startswith("average over tables"):
        section = "avg"
    if section == "rows" and len(parts) == 10 and parts[2] == "50":
        rows[(parts[0], parts[1], parts[3])] = (float(parts[4]), parts[6])
    elif section == "ratios" and len(parts) == 9 and parts[2] == "50":
        ratio[(parts[0], parts[1], parts[3])] = float(parts[5].split()[0])
    elif section == "avg" and len(parts) == 8 and parts[1] == "50":
        avg[(parts[0], parts[2])] = float(parts[3])
print(f"| table | protocol | crosstask err (cov) | {variant} err (cov) | change | ratio to best baseline main -> variant |")
print("|---|---|---|---|---|---|")
worst, cov_drop = 0.0, 0.0
for (t, p, k), (e, c) in rows.items():
    if k != "crosstask" or (t, p, variant) not in rows:
        continue
    e2, c2 = rows[(t, p, variant)]
    ch = e2 / e - 1
    worst = max(worst, ch)
    if c != "n/a" and c2 != "n/a":
        cov_drop = max(cov_drop, float(c) - float(c2))
    print(f"| {t} | {p} | {e:.2f} ({c}) | {e2:.2f} ({c2}) | {100 * ch:+.1f}% | {ratio.get((t, p, k), float('nan')):.3f} -> "
          f"{ratio.get((t, p, variant), float('nan')):.3f} |")
for p in ("interpolation", "extrapolation", "benchmark-frontier"):
    if (p, "crosstask") in avg:
        print(f"mean ratio {p}: crosstask {avg[(p, 'crosstask')]:.4f} -> {variant} {avg.get((p, variant), float('nan')):.4f}")
print(f"largest error increase {100 * worst:+.2f}%; largest coverage drop {cov_drop:.3f}")
