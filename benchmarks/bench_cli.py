"""CLI start-up: ``harness-ext --version``, ``--help``, ``reduce --help`` and ``plugins`` against a bare Python start.

Each command runs in a fresh interpreter (best of ``--repeat``), as a shell
pays for it; the reference is ``python -c pass`` in the same run, so the
ratio (ours / bare start) does not depend on how busy the machine is.
Targets (issue 17): --help/--version under 0.15 s and plugins under 0.5 s on
a quiet machine, where a bare start takes about 0.02-0.08 s. Usage::

    python benchmarks/bench_cli.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import _common  # noqa: F401  (sets HARNESS_EXT_LOAD_PLUGINS and friends)
from _common import emit_json, print_rows, row


def _best(cmd: list, repeat: int) -> float:
    env = {**os.environ, "HARNESS_EXT_LOAD_PLUGINS": ""}
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 runs each instead of 7")
    ap.add_argument("--repeat", type=int, default=None)
    args = ap.parse_args(argv)
    repeat = args.repeat or (3 if args.quick else 7)
    bare = _best([sys.executable, "-c", "pass"], repeat)
    rows = []
    for argv_ in (["--version"], ["--help"], ["reduce", "--help"], ["plugins"]):
        t = _best([sys.executable, "-m", "harness_ext", *argv_], repeat)
        target = 0.5 if argv_ == ["plugins"] else 0.15
        rows.append(row("cli", f"harness-ext {' '.join(argv_)}", "-", t, bare,
                        note=f"reference: bare python start {bare:.3f} s; target {target} s (quiet machine)"))
    print_rows(rows, "CLI start-up (ratio = bare interpreter start / ours; 1x would be free):")
    emit_json(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
