"""The ``harness-ext`` command line.

Each subcommand's options are declared in :mod:`harness_ext.cli.options` (argparse
only, so ``--help`` is instant) and its ``run(args) -> int`` lives in the module
of its phase, imported only when the command runs; this file only wires them
up, so adding a command never means editing a long dispatcher. Every error a
user can cause is a :class:`~harness_ext.errors.HarnessExtError`, printed as
one line with a non-zero exit.
"""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from .options import COMMANDS, FOLDER_COMMANDS, SIBLING_OPTIONS, ListAppend, default_out, resolve_run
from ..errors import HarnessExtError


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, sized as argparse sizes it, without importing shutil (and with it zlib, bz2 and
    lzma: 17% of what ``--help`` imports) for ``shutil.get_terminal_size``."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None, **kwargs):
        if width is None:
            width = _terminal_columns() - 2  # as HelpFormatter does with shutil's columns
        super().__init__(prog, indent_increment, max_help_position, width, **kwargs)


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: $COLUMNS, else stdout's terminal, else 80."""
    import os

    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def build_parser(only=None) -> argparse.ArgumentParser:
    """The parser. Only argparse runs here: each command's numerics are imported when it runs.

    ``only``: build the options of these commands alone; the others are listed with their help line
    (:func:`main` passes the words of its command line, so ``--help`` builds no command's options and
    ``reduce --help`` only reduce's). Default: every command's options.
    """
    parser = argparse.ArgumentParser(
        prog="harness-ext", formatter_class=_Formatter,
        description="Cheaper, still trustworthy LLM evaluation: reduce a benchmark, run the subset, predict the rest.",
    )
    parser.add_argument("--version", action="version", version=f"harness-ext {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more detail; with an error, its traceback")
    parser.add_argument("--disable-plugin", action=ListAppend, default=[], metavar="NAME",
                        help="switch a plugin off (entry-point, distribution or module name; repeatable or "
                             "comma-separated); "
                             "also $HARNESS_EXT_DISABLE_PLUGINS=a,b")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    parser.commands = {}  # name -> its parser: a bad option is reported with the command's own usage (main)
    for name, command in COMMANDS.items():
        p = sub.add_parser(name, help=command.help, description=command.help, formatter_class=_Formatter)
        parser.commands[name] = p
        p.set_defaults(_run=command.run)
        if only is not None and name not in only:
            continue
        # its own dest: argparse copies a subcommand's namespace over the main one, which would drop
        # the names given before the command (merged in main())
        p.add_argument("--disable-plugin", dest="disable_plugin_after", action=ListAppend, default=[], help=argparse.SUPPRESS)
        command.options(p)
        add_common_options(p)
    return parser


def add_common_options(parser: argparse.ArgumentParser) -> None:
    """What every command accepts: ``-v``/``-q`` (messages go to stderr through :mod:`logging`), ``--json``, and
    an underscore spelling of every dashed option (``--num_fewshot``, as lm-eval spells its flags)."""
    have = {o for a in parser._actions for o in a.option_strings}
    g = parser.add_argument_group("output")
    if "-v" not in have:
        # No default of its own: a subcommand's default would replace the top-level ``harness-ext -v COMMAND``'s count.
        g.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                       help="more messages on stderr (-vv: debug)")
    if "-q" not in have:
        g.add_argument("-q", "--quiet", action="count", default=0,
                       help="only errors on stderr, no progress bars; with --json, no text either")
    if "--json" not in have:
        g.add_argument("--json", dest="json_out", nargs="?", const="-", default=None, metavar="FILE",
                       help="also write the result as JSON to FILE ('-' or no FILE: stdout, with the text on stderr), "
                            "with the warnings logged")
    for action in list(parser._actions):
        for opt in list(action.option_strings):
            alias = opt.replace("-", "_")
            if opt.startswith("--") and "-" in opt[2:] and ("--" + alias[2:]) not in parser._option_string_actions:
                # Parsed, not shown: --help lists each option once.
                parser._option_string_actions["--" + alias[2:]] = action


def _show_lock_wait(event: str, path: str, waited: float, timeout: float) -> None:
    """The store's lock waits on stderr: one line when the wait starts, a dot every 10 s, then done."""
    if event == "wait":
        print(f"store {path} is locked by another process; waiting up to {timeout:g} s (--lock-timeout) ...",
              file=sys.stderr, end="", flush=True)
    elif event == "tick":
        print(".", file=sys.stderr, end="", flush=True)
    else:
        print(" done" if event == "done" else "", file=sys.stderr, flush=True)


def configure_logging(verbose: int = 0, quiet: int = 0) -> None:
    """Route the ``harness_ext`` loggers (and Python warnings) to stderr as ``warning: message`` lines."""
    import logging  # here, not at the top: --help and --version never log

    from .logs import StderrHandler as _StderrHandler

    level = logging.ERROR if quiet else {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    logger = logging.getLogger("harness_ext")
    handler = next((h for h in logger.handlers if isinstance(h, _StderrHandler)), None)
    if handler is None:
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(levelname_lower)s: %(message)s"))
        handler.addFilter(_lower_level)
        logger.addHandler(handler)
        logger.propagate = False
    # -q quiets stderr, not what is logged: a --json document still gets the warnings (its collector reads the
    # logger), so the logger stays at WARNING and the stderr handler takes the level.
    handler.setLevel(level)
    logger.setLevel(min(level, logging.WARNING))
    import warnings

    # Python warnings (a broken or clashing plugin's) as one `warning: message` line each, no file:line of the
    # code that warned nor its source line, and silenced by -q like the rest: logging.captureWarnings would print
    # warnings.formatwarning's two lines, at the WARNING level whatever -q says.
    warnings.showwarning = _show_warning
    pw = logging.getLogger("py.warnings")
    pw.setLevel(min(level, logging.WARNING))
    if handler not in pw.handlers:
        pw.addHandler(handler)
        pw.propagate = False


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` of the command line: the warning's message, logged to ``py.warnings``."""
    import logging

    if file is not None:  # written to a file the caller chose: as Python would
        import warnings

        file.write(warnings.formatwarning(message, category, filename, lineno, line))
        return
    logging.getLogger("py.warnings").warning("%s", " ".join(str(message).split()) or category.__name__)


def _lower_level(record) -> bool:
    record.levelname_lower = record.levelname.lower()
    return True


def _shown(exc) -> str:
    from ..safe_output import shown_text

    return shown_text(exc)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser(only=set(argv))
        before_command(argv, parser)
        args, extra = parser.parse_known_args(argv)
        if extra:  # argparse would print the top-level usage: the command's own, with the options it meant
            where = parser.commands.get(getattr(args, "command", None) or "", parser)
            where.error(unrecognized_message(extra, where, argv))
    except HarnessExtError as exc:
        print(f"harness-ext: error: {_shown(exc)}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - the boundary guard, see _unexpected
        return _unexpected("harness-ext", argv, exc, "-v" in argv or "--verbose" in argv)
    configure_logging(getattr(args, "verbose", 0) or 0, getattr(args, "quiet", 0) or 0)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    if args.command in FOLDER_COMMANDS and getattr(args, "out", None) is None:
        args.out = default_out(args, args.command)
    try:
        if getattr(args, "lock_timeout", None) is not None:
            from ..store.db import set_lock_timeout

            set_lock_timeout(args.lock_timeout)
        args.disable_plugin = list(args.disable_plugin) + list(getattr(args, "disable_plugin_after", None) or [])
        if hasattr(args, "db"):
            from ..store.db import set_lock_listener

            set_lock_listener(_show_lock_wait)
        if args.disable_plugin:
            from ..plugin_manager import disable_plugins

            disable_plugins(args.disable_plugin)
        return _run_with_json(args)
    except HarnessExtError as exc:
        print(f"harness-ext {args.command}: error: {_shown(exc)}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # output piped into head & co.: not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:  # pragma: no cover
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the boundary guard, see _unexpected
        return _unexpected(f"harness-ext {args.command}", argv, exc, bool(getattr(args, "verbose", 0)))


def _is_option(word: str) -> bool:
    """Whether a command-line word is an option (``--db``, ``-q``), not a value (``-0.5``, ``-``)."""
    if not word.startswith("-") or word == "-":
        return False
    try:
        float(word)
    except ValueError:
        return True
    return False


def unrecognized_message(extra: list, parser: argparse.ArgumentParser, argv=()) -> str:
    """argparse's "unrecognized arguments" message, naming what was typed wrong, with the closest options of
    ``parser`` for each unknown one (``--budgt``: did you mean --budget?).

    argparse does not know an unknown option's value: it reads the word after it as a positional argument,
    which pushes a later, correct one out, and that one is what it lists (``predict --db S -m M results/``
    listed ``--db results/``). Here each unknown option is named with the word after it in ``argv`` (when that
    word is not an option), and the positional words such values pushed out are not named.
    """
    import difflib

    options = [o for o in parser._option_string_actions if o.startswith("--")]
    words = list(argv)
    parts, named, pushed = [], set(), 0
    for i, a in enumerate(extra):
        if not _is_option(a):
            continue
        name = a.split("=", 1)[0]
        close = difflib.get_close_matches(name, options, n=2, cutoff=0.7) if name.startswith("--") else []
        value = None
        if "=" not in a and a in words:
            after = words.index(a) + 1
            value = words[after] if after < len(words) and not _is_option(words[after]) else None
        if value is not None and i + 1 < len(extra) and extra[i + 1] == value:
            named.add(i + 1)  # argparse listed the value too
        elif value is not None:
            pushed += 1  # it was read as a positional argument
        hint = f"did you mean {' or '.join(close)}?" if close else _sibling_hint(name, parser)
        parts.append(a + (f" {value}" if value is not None else "") + (f" ({hint})" if hint else ""))
    rest = [a for i, a in enumerate(extra) if not _is_option(a) and i not in named]
    parts += rest[:max(0, len(rest) - pushed)]
    return "unrecognized arguments: " + " ".join(parts)


def _sibling_hint(option: str, parser: argparse.ArgumentParser) -> str:
    """What to give instead of ``option``, an option of another command (``prowl --budget``: prowl's
    ``--target``), from :data:`~harness_ext.cli.options.SIBLING_OPTIONS`, else the commands that have it; "" when
    none does. Only on the error path: it builds every command's options (argparse alone)."""
    command = parser.prog.split()[-1]
    if (command, option) in SIBLING_OPTIONS:
        return SIBLING_OPTIONS[command, option]
    if not option.startswith("--") or command not in COMMANDS:
        return ""
    everyone = build_parser().commands
    have = [name for name, p in everyone.items() if name != command and option in p._option_string_actions]
    if not have:
        return ""
    return f"an option of {', '.join(have[:-1]) + ' and ' if len(have) > 1 else ''}{have[-1]}, not of {command}"


def _known_option(word: str, parser: argparse.ArgumentParser):
    """The action of ``parser`` an option word names as argparse reads it (``-vv``, ``--verb`` for ``--verbose``,
    ``--opt=value``), or None."""
    actions = parser._option_string_actions
    name = word.split("=", 1)[0]
    if name in actions:
        return actions[name]
    if not name.startswith("--"):  # a cluster of short flags (-vv)
        return actions.get(name[:2])
    prefixed = [o for o in actions if o.startswith(name)]
    return actions[prefixed[0]] if len({actions[o] for o in prefixed}) == 1 else None


def before_command(argv: list, parser: argparse.ArgumentParser) -> None:
    """Refuse options of no ``harness-ext`` option before the command name (``harness-ext --db S predict``),
    naming them: argparse took the option's value for the command (``invalid choice: 'S'``), or listed an
    option of the command (``-q``) as unknown without saying it belongs after the command name.
    """
    wrong, command, i = [], None, 0
    while i < len(argv) and command is None:
        word, i = argv[i], i + 1
        known = _known_option(word, parser) if _is_option(word) else None
        if word in parser.commands:
            command = word
        elif known is not None:
            i += int(known.nargs != 0 and "=" not in word)  # its value
        elif _is_option(word):
            value = argv[i] if i < len(argv) and not _is_option(argv[i]) and argv[i] not in parser.commands else None
            wrong.append((word, value))
            i += value is not None
        else:  # a command name harness-ext does not have: argparse names it and lists the commands
            break
    if not wrong:
        return
    where = parser.commands.get(command, parser)
    own = where._option_string_actions if command else {}
    said = [f"{w}{' ' + v if v else ''} " + (f"(an option of {command}: give it after the command name)"
                                             if w.split("=", 1)[0] in own else
                                             f"({_sibling_hint(w.split('=', 1)[0], where) or command + ' has no such option'})"
                                             if command else "")
            for w, v in wrong]
    where.error("unrecognized arguments before the command name: " + "; ".join(s.strip() for s in said))


#: Longest rendering of the command's input in the guard's one line.
_INPUT_CHARS = 200


def _unexpected(command: str, argv: list, exc: BaseException, verbose: bool) -> int:
    """Print an exception that is not a HarnessExtError as one line (command, input, cause); exit 1.

    Such an exception is a bug or an input no check anticipated (a MemoryError on a huge
    file, a RecursionError); either way a user gets one readable line, and ``-v`` the traceback.
    One raised in a third-party plugin's code is reported with the plugin's name and distribution.
    """
    import traceback

    if verbose:
        traceback.print_exception(exc, file=sys.stderr)
    given = " ".join(repr(a) if (not a or any(c.isspace() or not c.isprintable() for c in a)) else a for a in argv)
    if len(given) > _INPUT_CHARS:
        given = given[: _INPUT_CHARS - 3] + "..."
    cause = " ".join(str(exc).split()) or "(no message)"
    if len(cause) > 300:
        cause = cause[:297] + "..."
    hint = "" if verbose else " (run with -v for the traceback)"
    plugin = _plugin_of(exc)
    if plugin is not None:  # a third-party plugin's bug: its authors are the ones to tell
        print(f"{command}: error: plugin {plugin.name!r} from {plugin.source!r} raised {type(exc).__name__} on input "
              f"[{given}]: {cause}{hint}", file=sys.stderr)
        return 1
    print(f"{command}: error: unexpected {type(exc).__name__} on input [{given}]: {cause}{hint}", file=sys.stderr)
    return 1


def _plugin_of(exc: BaseException):
    """The third-party plugin whose code raised ``exc`` (a :class:`~harness_ext.plugin_manager.PluginInfo`), or
    None; never fails (it runs while an error is reported)."""
    try:
        from ..plugin_manager import plugin_in_traceback

        return plugin_in_traceback(exc)
    except Exception:  # noqa: BLE001 - the report of the original error comes first
        return None


def _run_with_json(args) -> int:
    """Run the command; with ``--json`` also write its JSON result (``-``: on stdout, the text then on stderr).

    A command puts its result in ``args.json_payload`` (a :class:`~harness_ext.report.Result`, through
    :func:`harness_ext.cli.output.emit`); one that does not is described by the tables (CSV files) it
    wrote to its output folder.
    """
    import contextlib
    from pathlib import Path

    from ..report import dumps
    from ..safe_output import write_file

    target = getattr(args, "json_out", None)
    run = resolve_run(args._run)
    if target is None:
        return int(run(args) or 0)
    import logging

    from ..report import envelope
    if target != "-":
        # refused before the command runs, not after a long computation
        where = Path(target)
        if where.is_dir():
            raise HarnessExtError(f"--json {target}: a directory; name a file (or '-' for stdout)")
        if not where.parent.is_dir():
            raise HarnessExtError(f"--json {target}: the folder {where.parent} does not exist")
    real_stdout = sys.stdout
    quiet = bool(getattr(args, "quiet", 0))
    # The warnings logged while the command runs go into the document too (they are also on stderr, unless -q).
    caught = _Collect()
    logging.getLogger("harness_ext").addHandler(caught)
    logging.getLogger("py.warnings").addHandler(caught)
    import io

    # -q with --json: the JSON is the output; the text goes nowhere (with '-' it would go to stderr).
    sink = io.StringIO() if quiet else sys.stderr if target == "-" else None
    try:
        with contextlib.redirect_stdout(sink) if sink is not None else contextlib.nullcontext():
            rc = int(run(args) or 0)
    finally:
        logging.getLogger("harness_ext").removeHandler(caught)
        logging.getLogger("py.warnings").removeHandler(caught)
    payload = getattr(args, "json_payload", None)
    if payload is None:
        payload = _tables_json(args)
    text = dumps(envelope(args.command, payload, caught.messages))
    if target == "-":
        real_stdout.write(text)
        real_stdout.flush()
    else:
        try:
            write_file(target, text)
        except OSError as exc:
            raise HarnessExtError(f"cannot write --json {target}: {exc.strerror or exc}") from exc
        if not quiet:
            print(f"wrote {target}")
    return rc


class _Collect:
    """A logging handler keeping the messages of the warnings a command logs, for its ``--json`` document."""

    level = 30  # logging.WARNING, without importing logging at start-up

    def __init__(self):
        self.messages = []

    def handle(self, record) -> bool:
        if record.levelno >= self.level:
            self.messages.append(record.getMessage())
        return True


def _tables_json(args) -> dict:
    """The CSV tables a command wrote to ``args.out``, as records, for ``--json``."""
    from pathlib import Path

    out = getattr(args, "out", None)
    doc = {"title": args.command, "summary": {"out": out}, "tables": {}}
    if out and Path(out).is_dir():
        import pandas as pd

        for f in sorted(Path(out).rglob("*.csv")):
            doc["tables"][str(f.relative_to(out))] = pd.read_csv(f).to_dict(orient="records")
        for f in sorted(Path(out).rglob("*.json")):
            try:
                doc["tables"][str(f.relative_to(out))] = json_load(f)
            except ValueError:
                pass
    return doc


def json_load(path):
    import json

    return json.loads(path.read_text())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
