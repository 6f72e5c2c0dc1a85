"""Per-seed and pooled BenchPress / default ratios from ``quality_benchpress.py --save-errors`` files.

Usage: python benchmarks/screens/figcheck3/perseed.py FILE.npz ...   (files of one matrix over disjoint seeds pool)
Each seed is 3 consecutive folds (BenchPress's per-model folds); ratio = BenchPress MedAE / default MedAE.
"""
import sys

import numpy as np


def main(paths):
    bp, lr, seeds = [], [], []
    for path in paths:
        z = np.load(path)
        sizes = z["fold_sizes"]
        ends = np.cumsum(sizes)
        starts = ends - sizes
        for s in range(0, len(sizes), 3):
            a, b = starts[s], ends[min(s + 2, len(sizes) - 1)]
            seeds.append(np.median(z["benchpress"][a:b]) / np.median(z["lowrank"][a:b]))
        bp.append(z["benchpress"])
        lr.append(z["lowrank"])
    bp, lr = np.concatenate(bp), np.concatenate(lr)
    print(f"{len(seeds)} seeds, {bp.size} cells: BenchPress {np.median(bp):.3f}, default {np.median(lr):.3f}, "
          f"ratio {np.median(bp) / np.median(lr):.3f}; per seed {min(seeds):.3f}-{max(seeds):.3f} "
          f"({', '.join(f'{r:.3f}' for r in seeds)})")


if __name__ == "__main__":
    main(sys.argv[1:])
