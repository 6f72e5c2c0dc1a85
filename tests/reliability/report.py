"""Print cases tried/passed/failed per reliability family (issue 19 item 8; samples, archives and side files: issue 38).

Usage: ``python tests/reliability/report.py`` (quick tier) or ``--full`` (the slow tier's sizes).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("HARNESS_EXT_LOAD_PLUGINS", "")
os.environ.setdefault("HARNESS_EXT_NO_PROGRESS", "1")

from reliability_lib import run_cli_corpus, run_concurrency, run_fuzz, run_kills  # noqa: E402
from reliability_surfaces import run_archives, run_samples, run_sidefiles  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--full", action="store_true", help="the full tier (20 kills, 6 writers + 3 readers, 2 files per adapter "
                    "x 5 per mutation kind; samples files, .eval archives and side files x 5 per mutation kind)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.full:
        plan = [lambda: run_fuzz(n_per_kind=5, per_adapter=2, seed=args.seed), lambda: run_kills(20, seed=args.seed),
                lambda: run_concurrency(6, 3, seed=args.seed), run_cli_corpus,
                lambda: run_samples(5, seed=args.seed), lambda: run_archives(5, seed=args.seed),
                lambda: run_sidefiles(5, seed=args.seed)]
    else:
        plan = [lambda: run_fuzz(1, 1, seed=args.seed), lambda: run_kills(2, seed=args.seed, n_csv=120),
                lambda: run_concurrency(2, 1, seed=args.seed, n_csv=60), run_cli_corpus,
                lambda: run_samples(1, seed=args.seed), lambda: run_archives(1, seed=args.seed),
                lambda: run_sidefiles(1, seed=args.seed)]
    failed = 0
    for step in plan:
        t = time.perf_counter()
        fam = step()
        print(f"{fam.line()}  ({time.perf_counter() - t:.0f} s)", flush=True)
        for f in fam.failures[:10]:
            print(f"    FAIL {f}")
        for g in getattr(fam, "guarded", [])[:20]:
            print(f"    guarded (no traceback, but an unanticipated error) {g}")
        failed += fam.failed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
