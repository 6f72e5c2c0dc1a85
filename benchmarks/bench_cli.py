"""CLI start-up: ``harness-ext --version``, ``--help``, ``reduce --help`` and ``plugins`` against a bare Python start.

Each command runs in a fresh interpreter, as a shell pays for it. The
reference is ``python -c pass`` in the same run; the commands and the
reference are interleaved (one round runs each once) and each keeps its best
of ``--repeat`` rounds, so a busy moment hits all of them alike. The ratio is
bare start / ours (1x would mean harness-ext costs nothing on top of Python).

Bytecode: the runs use a private ``PYTHONPYCACHEPREFIX`` and drop
``PYTHONDONTWRITEBYTECODE``, and one untimed warm-up run per command fills the
cache, so the timed runs load compiled modules as an installed package does
(pip byte-compiles on install). Without this every run recompiles every
module it imports, which is not what a user pays.

Targets (issue 17): ``--help``/``--version`` under 0.15 s and ``plugins``
under 0.5 s (absolute wall time, interpreter start included). The note also
gives ``python -S -c pass`` (no site-packages processing): the gap between the
two bare starts is what the environment's ``.pth`` start-up hooks cost every
Python process, harness-ext or not. Usage::

    python benchmarks/bench_cli.py [--quick] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import _common  # noqa: F401  (sets HARNESS_EXT_LOAD_PLUGINS and friends)
from _common import emit_json, print_rows, row

COMMANDS = (("--version",), ("--help",), ("reduce", "--help"), ("plugins",))
#: Issue 17 item 1: seconds per command (``reduce --help`` has no target of its own).
TARGETS = {("--version",): 0.15, ("--help",): 0.15, ("plugins",): 0.5}


def _env(cache: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HARNESS_EXT_LOAD_PLUGINS="", PYTHONPYCACHEPREFIX=cache)
    return env


def _run(cmd: list, env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0


def measure(repeat: int) -> dict:
    """Best wall time per command (key ``()`` is the bare interpreter), interleaved rounds."""
    cmds = {(): [sys.executable, "-c", "pass"], ("-S",): [sys.executable, "-S", "-c", "pass"]}
    cmds.update({argv: [sys.executable, "-m", "harness_ext", *argv] for argv in COMMANDS})
    with tempfile.TemporaryDirectory(prefix="bench_cli_pycache_") as cache:
        env = _env(cache)
        for cmd in cmds.values():  # warm-up: writes the bytecode cache
            _run(cmd, env)
        best = {k: float("inf") for k in cmds}
        for _ in range(repeat):
            for key, cmd in cmds.items():
                best[key] = min(best[key], _run(cmd, env))
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 rounds instead of 7")
    ap.add_argument("--repeat", type=int, default=None)
    args = ap.parse_args(argv)
    best = measure(args.repeat or (3 if args.quick else 7))
    bare, bare_s = best[()], best[("-S",)]
    rows = []
    for argv_ in COMMANDS:
        t = best[argv_]
        target = TARGETS.get(argv_)
        verdict = "" if target is None else f"; target < {target:g} s: {'met' if t < target else 'MISSED'}"
        rows.append(row("cli", f"harness-ext {' '.join(argv_)}", "-", t, bare, ref_name="python -c pass", ref_kind="user",
                        note=f"reference: bare python start {bare:.3f} s (-S: {bare_s:.3f} s); {t - bare:+.3f} s on "
                             f"top of it{verdict}",
                        target=None if target is None else f"< {target:g} s",
                        target_met=None if target is None else bool(t < target)))
    print_rows(rows, "CLI start-up (ratio = bare interpreter start / ours; 1x would be free):")
    emit_json(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
