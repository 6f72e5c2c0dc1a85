"""Time or profile bench_reduce's full reduce (build_manifest greedy_coverage + ridge) on a shared matrix (default Pythia
MMLU, 838 x 57), or with --defaults reduce's defaults as bench_reduce_sparse times them.

Usage: python benchmarks/screens/perf42/pythia_full_reduce.py [--matrix crosspred|open_llm_v2|pythia_mmlu|benchbench]
       [--defaults] [--profile OUT.prof] [--manifest OUT.json]
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
    ap.add_argument("--defaults", action="store_true", help="reduce's defaults (as bench_reduce_sparse), not greedy_coverage + ridge")
    args = ap.parse_args()
    from harness_ext.methods.reduction.manifest import build_manifest
    from harness_ext.methods.similarity.measures import PAPER_MEASURES

    if args.defaults:  # bench_reduce_sparse's matrices (kept sparse)
        from bench_reduce_sparse import matrices

        label = {"crosspred": "CrossPred", "open_llm_v2": "Open LLM v2", "benchbench": "benchbench"}[args.matrix]
        df = next(m for n, m in matrices(quick=args.matrix == "crosspred").items() if n.startswith(label))
    else:
        df = next(iter(real_matrices((args.matrix,)).values()))
    if args.defaults:
        from harness_ext.cli import build_parser

        d = build_parser().parse_args(["reduce"])
        call = lambda: build_manifest(df, budget=d.budget, selector=d.selector, predictor=d.predictor,  # noqa: E731
                                      n_random=d.n_random)
    else:
        call = lambda: build_manifest(df, selector="greedy_coverage", predictor="ridge",  # noqa: E731
                                      similarity=PAPER_MEASURES[0], n_random=100, random_state=0)
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
