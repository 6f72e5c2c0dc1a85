"""Profile bench_reduce's full reduce (build_manifest greedy_coverage + ridge) on the Pythia MMLU matrix, 838 x 57.

Usage: python benchmarks/screens/perf42/pythia_full_reduce.py [--profile OUT.prof] [--manifest OUT.json]
Prints wall and CPU seconds and the peak resident set of the build_manifest call.
"""
import argparse
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from _common import PeakMemory, real_matrices  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", default=None)
    ap.add_argument("--manifest", default=None)
    ap.add_argument("--matrix", default="pythia_mmlu")
    args = ap.parse_args()
    from harness_ext.methods.reduction.manifest import build_manifest
    from harness_ext.methods.similarity.measures import PAPER_MEASURES

    df = next(iter(real_matrices((args.matrix,)).values()))
    call = lambda: build_manifest(df, selector="greedy_coverage", predictor="ridge", similarity=PAPER_MEASURES[0],  # noqa: E731
                                  n_random=100, random_state=0)
    t0, c0 = time.perf_counter(), time.process_time()
    with PeakMemory() as pk:
        if args.profile:
            import cProfile
            prof = cProfile.Profile()
            m = prof.runcall(call)
            prof.dump_stats(args.profile)
        else:
            m = call()
    print(f"{args.matrix} {df.shape}: build_manifest {time.perf_counter() - t0:.2f} s wall, "
          f"{time.process_time() - c0:.2f} s CPU, peak {pk.mb:,.0f} MB")
    if args.manifest:
        Path(args.manifest).write_text(json.dumps(m, sort_keys=True, default=str))


if __name__ == "__main__":
    main()
