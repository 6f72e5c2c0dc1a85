"""CLI start-up: ``harness-ext --version``, ``--help``, ``reduce --help`` and ``plugins`` against a bare Python start.

Each command runs in a fresh interpreter through the ``harness-ext`` console script, as a shell pays
for it. Two installations are timed, each next to a bare ``python -c pass`` of the same interpreter:

* ``here``: the interpreter running this script (the worktree's venv: ``--system-site-packages``, an
  editable install). Its site-packages run ``.pth`` start-up hooks (setuptools' editable finder, a
  CA-certificate injector) in every Python process, harness-ext or not; ``python -S -c pass`` (no
  site processing) is given for comparison.
* ``plain venv``: what a user's ``pip install harness-ext`` looks like. A venv without
  ``--system-site-packages`` (cached under ``$XDG_CACHE_HOME/harness-ext-bench``, built once) with
  harness-ext installed from a wheel of this checkout (rebuilt when a packaged file changes). Its
  dependencies are not downloaded again: one ``.pth`` line puts the folders that hold them on
  ``sys.path`` (a path line runs no code, so the other ``.pth`` hooks of those folders stay out), so
  they are the very files a user's venv would import. The ``harness_ext`` entry-point discovery
  still sees every distribution of those folders (160 here, more than a user's venv holds).

Next to ``--help`` and ``--version`` the note gives the floor of any argparse command line: a
one-option ``argparse`` script printing its help, in the same interpreter.

The commands and the bare start are interleaved (one round runs each once) and each keeps its best of
``--repeat`` rounds, so a busy moment hits all of them alike. ``HARNESS_EXT_LOAD_PLUGINS`` is unset
(a user's default: installed plugins are looked for). The ratio is bare start / ours (1x would mean
harness-ext costs nothing on top of Python).

Bytecode: the runs use a private ``PYTHONPYCACHEPREFIX`` and drop ``PYTHONDONTWRITEBYTECODE``, and one
untimed warm-up run per command fills the cache, so the timed runs load compiled modules as an
installed package does (pip byte-compiles on install). Without this every run recompiles every module
it imports, which is not what a user pays.

Targets: ``--help``/``--version`` under 0.15 s and ``plugins`` under 0.5 s (absolute wall
time, interpreter start included), reported for both installations. Usage::

    python benchmarks/bench_cli.py [--quick] [--repeat N] [--no-venv]

(``--quick``: 3 rounds, this interpreter only; ``python benchmarks/run.py --quick --full cli`` runs it in full.)
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  (sets HARNESS_EXT_LOAD_PLUGINS and friends)
from _common import REPO, emit_json, print_rows, row

COMMANDS = (("--version",), ("--help",), ("reduce", "--help"), ("plugins",))
#: The speed targets: seconds per command (``reduce --help`` has no target of its own).
TARGETS = {("--version",): 0.15, ("--help",): 0.15, ("plugins",): 0.5}
#: Top-level modules of harness-ext's dependencies (pyproject ``dependencies``), located for the plain venv.
DEPENDENCIES = ("pluggy", "duckdb", "numpy", "scipy", "sklearn", "pandas", "tqdm", "joblib", "yaml", "jsonschema")
#: The sources a wheel of harness-ext is built from (pyproject's package-dir).
PACKAGED = ("pyproject.toml", "README.md", "harness_ext", "plugins", "adapters")
INSTALLATIONS = ("here", "plain venv")
#: The floor of any argparse command line: a one-option parser printing its help (shown next to --help/--version).
ARGPARSE_HELP = "import argparse; p = argparse.ArgumentParser(prog='x'); p.add_argument('--x'); p.parse_args(['--help'])"


def _env(cache: str) -> dict:
    drop = {"PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "HARNESS_EXT_LOAD_PLUGINS", "PYTHONHOME"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(PYTHONPYCACHEPREFIX=cache)
    return env


def _run(cmd: list, env: dict, cwd: str) -> tuple:
    """``(wall seconds, CPU seconds)`` of one run; CPU (user + system, from the child's rusage) is what a
    loaded machine inflates least."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=env, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, cmd)
    return wall, usage.ru_utime + usage.ru_stime


def _script(python: Path) -> list:
    """The ``harness-ext`` console script next to ``python`` (what a user types), else ``python -m harness_ext``."""
    script = python.parent / "harness-ext"
    return [str(script)] if script.exists() else [str(python), "-m", "harness_ext"]


# ------------------------------------------------------------------------------- the plain venv


def _source_hash() -> str:
    h = hashlib.sha256()
    for top in PACKAGED:
        p = REPO / top
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
        for f in files:
            h.update(str(f.relative_to(REPO)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def _dependency_dirs() -> list:
    """The folders on this interpreter's path that hold harness-ext's dependencies."""
    import importlib.util

    dirs = []
    for name in DEPENDENCIES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin:
            continue
        top = Path(spec.origin).parent
        d = str(top.parent if spec.submodule_search_locations else top)
        if d not in dirs:
            dirs.append(d)
    return dirs


def plain_venv(root: Path, log=print) -> Path:
    """The python of a venv without system site-packages holding a wheel install of this checkout."""
    venv = root / f"plain-venv-py{sys.version_info[0]}{sys.version_info[1]}"
    python = venv / "bin" / "python"
    if not python.exists():
        log(f"creating {venv} (once) ...")
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", "--clear", str(venv)], check=True)
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "_harness_ext_bench_dependencies.pth").write_text("\n".join(_dependency_dirs()) + "\n")
    marker = venv / "harness-ext-source.sha256"
    digest = _source_hash()
    if not marker.exists() or marker.read_text() != digest:
        log(f"installing this checkout into {venv} (pip, from a wheel) ...")
        with tempfile.TemporaryDirectory(prefix="bench_cli_src_") as tmp:
            for top in PACKAGED:  # a copy: building in place would leave build/ in the checkout
                src, dst = REPO / top, Path(tmp) / top
                if src.is_file():
                    shutil.copy2(src, dst)
                else:
                    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
            subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", tmp],
                           check=True, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
        marker.write_text(digest)
    return python


# ------------------------------------------------------------------------------- timing


def measure(pythons: dict, repeat: int) -> dict:
    """Best ``(wall, CPU)`` seconds per (installation, command), each its own best; command ``()`` is the bare
    interpreter, ``("-S",)`` the bare interpreter without site processing."""
    cmds = {}
    for where, python in pythons.items():
        cmds[(where, ())] = [str(python), "-c", "pass"]
        cmds[(where, ("argparse",))] = [str(python), "-c", ARGPARSE_HELP]
        if where == "here":
            cmds[(where, ("-S",))] = [str(python), "-S", "-c", "pass"]
        cmds.update({(where, argv): [*_script(python), *argv] for argv in COMMANDS})
    with tempfile.TemporaryDirectory(prefix="bench_cli_pycache_") as cache:
        env = _env(cache)
        for cmd in cmds.values():  # warm-up: writes the bytecode cache
            _run(cmd, env, cache)
        best = {k: (float("inf"), float("inf")) for k in cmds}
        for _ in range(repeat):
            for key, cmd in cmds.items():
                wall, cpu = _run(cmd, env, cache)
                best[key] = (min(best[key][0], wall), min(best[key][1], cpu))
    return best


def _load() -> str:
    try:
        return "load average %.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        return "load average n/a"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 rounds instead of 7, and no plain venv (it may need pip "
                                                         "to fetch setuptools once to build the wheel)")
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--no-venv", action="store_true", help="time this interpreter only (no plain venv)")
    ap.add_argument("--cache", default=None,
                    help="folder of the plain venv (default $XDG_CACHE_HOME/harness-ext-bench or ~/.cache/...)")
    args = ap.parse_args(argv)
    pythons = {"here": Path(sys.executable)}
    if not (args.no_venv or args.quick):
        root = Path(args.cache or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "harness-ext-bench")
        try:
            root.mkdir(parents=True, exist_ok=True)
            pythons["plain venv"] = plain_venv(root)
        except (OSError, subprocess.CalledProcessError) as exc:  # no network for pip's build, a read-only home
            print(f"plain venv unavailable ({type(exc).__name__}: {exc}); timing this interpreter only", flush=True)
    load_before = _load()
    best = measure(pythons, args.repeat or (3 if args.quick else 7))
    load = f"{load_before} at start, {_load()} at end; {os.cpu_count()} cores"
    rows = []
    for where in pythons:
        bare, bare_cpu = best[(where, ())]
        extra = f" (-S: {best[(where, ('-S',))][0]:.3f} s)" if (where, ("-S",)) in best else ""
        floor, floor_cpu = best[(where, ("argparse",))]
        for argv_ in COMMANDS:
            t, cpu = best[(where, argv_)]
            target = TARGETS.get(argv_)
            verdict = "" if target is None else f"; target < {target:g} s: {'met' if t < target else 'MISSED'}"
            if argv_ != ("plugins",):
                verdict += f"; a one-option argparse script's --help: {floor:.3f} s, CPU {floor_cpu:.3f} s"
            rows.append(row("cli", f"harness-ext {' '.join(argv_)}", where, t, bare, ref_name="python -c pass",
                            ref_kind="user", installation=where, cpu_s=cpu, ref_cpu_s=bare_cpu,
                            note=f"bare python start {bare:.3f} s{extra}; {t - bare:+.3f} s on top of it{verdict}; "
                                 f"CPU {cpu:.3f} s vs bare {bare_cpu:.3f} s; {load}",
                            target=None if target is None else f"< {target:g} s",
                            target_met=None if target is None else bool(t < target)))
    print_rows(rows, f"CLI start-up, best of {args.repeat or (3 if args.quick else 7)} interleaved rounds "
                     f"(ratio = bare interpreter start / ours; 1x would be free; {load}):")
    emit_json(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
