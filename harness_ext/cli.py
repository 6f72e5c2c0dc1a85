"""The ``harness-ext`` command line.

Each subcommand's options are declared in :mod:`harness_ext.commands` (argparse
only, so ``--help`` is instant) and its ``run(args) -> int`` lives in the module
of its phase, imported only when the command runs; this file only wires them
up, so adding a command never means editing a long dispatcher. Every error a
user can cause is a :class:`~harness_ext.errors.HarnessExtError`, printed as
one line with a non-zero exit.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from . import __version__
from .commands import COMMANDS, resolve_run
from .errors import HarnessExtError


def build_parser() -> argparse.ArgumentParser:
    """The full parser. Only argparse runs here: each command's numerics are imported when it runs."""
    parser = argparse.ArgumentParser(
        prog="harness-ext",
        description="Cheaper, still trustworthy LLM evaluation: reduce a benchmark, run the subset, predict the rest.",
    )
    parser.add_argument("--version", action="version", version=f"harness-ext {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, command in COMMANDS.items():
        p = sub.add_parser(name, help=command.help, description=command.help)
        command.options(p)
        p.set_defaults(_run=command.run)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(resolve_run(args._run)(args) or 0)
    except HarnessExtError as exc:
        print(f"harness-ext {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # output piped into head & co.: not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:  # pragma: no cover
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
