"""Shared pieces of the benchmarks: timing, peak memory, test matrices, exponent fits, result rows.

Run a benchmark as ``python benchmarks/bench_<area>.py``: the script's folder
is then on ``sys.path``, so ``import _common`` works (``benchmarks/`` is not a
package).

* Timing: :func:`timed` is ``bench_prowl._time`` (best of ``repeat`` wall-clock
  runs). It lives in bench_prowl, whose owner is still editing it, so it is
  imported from there rather than copied; move it here once that file settles.
  The low-rank synthetic generator is likewise ``bench_prowl.make_matrix``.
* Peak memory: :class:`PeakMemory` reads the kernel's resident-set high-water
  mark (``VmHWM``), resetting it first through ``/proc/self/clear_refs`` so
  each measured block gets its own peak inside one process. Where that reset
  is unavailable (not Linux) it falls back to ``getrusage`` (the process
  peak so far, an upper bound). Cases whose peak must be their own (the
  10,000 x 1,000 reduce) also run in a subprocess.
* Results: every benchmark row is a dict (case, size, time_s, ref_s, ratio,
  peak_mb, note, and optionally ref_name, ref_kind, loop_s, target,
  target_met); :func:`emit_json` appends them to the file named by
  ``$HARNESS_EXT_BENCH_JSON`` so ``benchmarks/run.py`` can collect them.
  ``ref_kind="user"`` marks ``ref_s`` as what a user would otherwise run (a
  library routine, a plain script: the headline ratio); ``"naive"`` as a
  straightforward loop (second column only); ``loop_s`` is a naive loop's
  time next to a user reference.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_prowl import _time as timed  # noqa: E402  (see the module docstring)
from bench_prowl import make_matrix as _low_rank  # noqa: E402

os.environ.setdefault("HARNESS_EXT_NO_PROGRESS", "1")
os.environ.setdefault("HARNESS_EXT_LOAD_PLUGINS", "")

REPO = HERE.parent


def _check_checkout() -> None:
    # The benchmarks import the installed harness_ext: a checkout without its own (editable) install
    # would silently time another copy's code, so say which one is measured.
    from importlib.util import find_spec

    spec = find_spec("harness_ext")
    origin = Path(spec.origin).resolve() if spec is not None and spec.origin else None
    if origin is not None and origin.parent.parent != REPO.resolve():
        print(f"note: benchmarking harness_ext from {origin.parent}, not this checkout ({REPO}); "
              "install it with `pip install -e .` to measure this one", file=sys.stderr)


_check_checkout()
SHARED_DATA = Path(os.environ.get("HARNESS_EXT_SHARED_DATA", REPO.parent / "shared" / "data"))
EEE = SHARED_DATA / "every_eval_ever" / "data"
HELM_CLASSIC = EEE / "helm_classic"
OPEN_LLM_V2 = EEE / "hfopenllm_v2"
PYTHIA = SHARED_DATA / "pythia-evals" / "evals"
CROSSPRED = SHARED_DATA / "crosspred-lvlm" / "data" / "result_summary.json"
JSON_ENV = "HARNESS_EXT_BENCH_JSON"

__all__ = ["timed", "low_rank_matrix", "PeakMemory", "peak_rss_mb", "real_matrices", "fit_exponent", "row",
           "emit_json", "fmt_size", "SHARED_DATA", "OPEN_LLM_V2"]


def low_rank_matrix(m: int, d: int, seed: int = 0):
    """Seeded rank-3-plus-noise scores in [0, 1], as a DataFrame with string labels."""
    import pandas as pd

    X = _low_rank(m, d, seed=seed)
    return pd.DataFrame(X, index=[f"m{i}" for i in range(m)], columns=[f"d{j}" for j in range(d)])


# ------------------------------------------------------------------------------- memory


def _vm_hwm_mb() -> Optional[float]:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def peak_rss_mb() -> float:
    """Peak resident set of this process so far, in MB (``getrusage``; KB on Linux)."""
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024.0 if sys.platform != "darwin" else kb / 1024.0 / 1024.0


class PeakMemory:
    """Context manager measuring the peak resident set (MB) reached inside the block.

    ``mb`` is the process's high-water mark during the block (including what
    was resident before it: the interpreter, numpy, the input matrix);
    ``own`` is ``True`` when the mark could be reset at entry, so the number
    belongs to this block and not to something earlier in the process.
    """

    def __enter__(self):
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")  # reset VmHWM to the current RSS
            self.own = _vm_hwm_mb() is not None
        except OSError:
            self.own = False
        self.mb = float("nan")
        return self

    def __exit__(self, *exc):
        hwm = _vm_hwm_mb() if self.own else None
        self.mb = hwm if hwm is not None else peak_rss_mb()
        return False



_STAGE = re.compile(r"reduce stage: (?P<name>.+)$")


def run_cli(args: list, env: dict, timeout: Optional[float] = None) -> dict:
    """Run ``python -m harness_ext ARGS``: wall time, peak RSS and per-stage time and peak RSS.

    The peak is the command's own high-water mark (``VmHWM`` of its process,
    read every 50 ms until it exits), not ``wait4``'s ``ru_maxrss``: Linux
    carries the spawning process's high-water mark into the child's
    ``ru_maxrss`` at ``exec``, so a benchmark that had built a large matrix
    before spawning saw its own peak reported as the command's (a bare
    ``python -c pass`` spawned after a 1.2 GB array was freed reports
    1,172 MB). Only a rise in the last 50 ms before exit could be missed.
    Stages are the ``reduce stage: NAME`` lines the command logs at ``-vv``; each
    stage's peak is the largest resident set sampled (every 50 ms) while it ran.
    After ``timeout`` seconds the command is stopped and reported unfinished
    (``finished`` False), with the stages it reached.
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "harness_ext", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    marks, samples, tail, hwm = [("start", t0)], [], [], []

    def read_stderr():
        for line in proc.stderr:
            hit = _STAGE.search(line.rstrip())
            if hit:
                marks.append((hit["name"], time.perf_counter()))
            else:
                tail.append(line)

    done = threading.Event()

    def sample():
        # Not proc.poll(): it reaps the child, and the os.wait4 below (for its rusage) then fails with
        # ChildProcessError when this thread got there first (an intermittent failure of the quick suite).
        status, execd = f"/proc/{proc.pid}/status", False
        while not done.is_set():
            try:
                if not execd:  # before its exec the child still has this process's memory (and its mark)
                    with open(f"/proc/{proc.pid}/cmdline", "rb") as fh:
                        execd = b"\0harness_ext\0" in fh.read()
                with open(status) as fh:
                    fields = {x.split(":")[0]: int(x.split()[1]) for x in fh if x.startswith(("VmRSS:", "VmHWM:"))}
                if execd and "VmRSS" in fields:
                    samples.append((time.perf_counter(), fields["VmRSS"] / 1024))
                    hwm.append(fields.get("VmHWM", fields["VmRSS"]) / 1024)
            except (OSError, ValueError, IndexError):
                pass
            time.sleep(0.05)

    threads = [threading.Thread(target=read_stderr, daemon=True), threading.Thread(target=sample, daemon=True)]
    for th in threads:
        th.start()
    watchdog = threading.Timer(timeout, proc.kill) if timeout else None
    if watchdog:
        watchdog.start()
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    done.set()
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    finished = not (watchdog and not watchdog.is_alive() and proc.returncode < 0)
    if watchdog:
        watchdog.cancel()
    for th in threads:
        th.join(timeout=5)
    if proc.returncode and finished:
        raise RuntimeError(f"harness-ext {' '.join(args)} failed ({proc.returncode}):\n{''.join(tail[-30:])}\n{out}")
    # No sample (a command shorter than one step): ru_maxrss, an upper bound (see above).
    peak = max(hwm) if hwm else usage.ru_maxrss / 1024.0
    stages = []
    ends = [t for _, t in marks[1:]] + [t0 + wall]
    for (name, start), end in zip(marks, ends):
        # A stage shorter than the sampling step has no sample of its own: the last one before it ends stands in.
        inside = [mb for t, mb in samples if start <= t <= end] or [mb for t, mb in samples if t <= end][-1:]
        stages.append({"stage": name, "seconds": end - start, "peak_mb": max(inside) if inside else float("nan")})
    if not finished:
        stages[-1]["stage"] += " (stopped: unfinished)"
    return {"seconds": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": peak, "stages": stages, "stdout": out,
            "finished": finished}


# ------------------------------------------------------------------------------- data


def real_matrices(names=("helm_classic", "open_llm_v2", "pythia_mmlu", "crosspred")) -> dict:
    """Real normalised matrices built through the store, as the product builds them.

    Returns ``{label: DataFrame}`` for the sources present under
    ``../shared/data`` (missing ones are left out): HELM Classic (the complete
    30 x 14 block), Open LLM Leaderboard v2 (dense, ~4,500 x 6), Pythia MMLU
    (one row per run, 838 x 57), CrossPred (dense, 108 x 176).
    """
    from harness_ext.store.ingest import ingest_paths
    from harness_ext.store.matrix import MatrixQuery, load_matrix
    from harness_ext.store.db import Store

    spec = {
        "helm_classic": (HELM_CLASSIC, MatrixQuery(benchmarks=("helm_classic",), dense="models"), "HELM Classic"),
        "open_llm_v2": (OPEN_LLM_V2, MatrixQuery(benchmarks=("hf_open_llm_v2",), dense="auto"), "Open LLM v2"),
        "pythia_mmlu": (PYTHIA, MatrixQuery(benchmarks=("mmlu",), rows="run"), "Pythia MMLU"),
        "crosspred": (CROSSPRED.parent, MatrixQuery(benchmarks=("crosspred",), dense="auto"), "CrossPred"),
    }
    out = {}
    with Store.open(":memory:") as store:
        for name in names:
            path, query, label = spec[name]
            if not path.exists():
                continue
            ingest_paths(store, [path], show_progress=False)
            out[label] = load_matrix(store, query)
    return out


# ------------------------------------------------------------------------------- results


def fit_exponent(sizes, times) -> float:
    """Slope ``b`` of the least-squares fit ``log(time) = a + b log(size)``."""
    s, t = np.asarray(sizes, dtype=float), np.asarray(times, dtype=float)
    ok = (s > 0) & (t > 0) & np.isfinite(t)
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(s[ok]), np.log(t[ok]), 1)[0])


def fmt_size(shape) -> str:
    return " x ".join(f"{int(v):,}" for v in shape)


def row(bench: str, case: str, size: str, time_s: float, ref_s: Optional[float] = None,
        peak_mb: Optional[float] = None, note: str = "", **extra) -> dict:
    """One result row (``ratio`` = reference time / our time)."""
    ratio = ref_s / time_s if ref_s is not None and time_s > 0 else None
    return {"bench": bench, "case": case, "size": size, "time_s": float(time_s),
            "ref_s": None if ref_s is None else float(ref_s), "ratio": ratio,
            "peak_mb": None if peak_mb is None or not np.isfinite(peak_mb) else float(peak_mb), "note": note, **extra}


def emit_json(rows: list, path: Optional[str] = None) -> None:
    """Append rows (JSON lines) to ``path`` or ``$HARNESS_EXT_BENCH_JSON`` when set."""
    path = path or os.environ.get(JSON_ENV)
    if not path:
        return
    with open(path, "a") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")


def print_rows(rows: list, title: str = "") -> None:
    """Print rows as the standard table: case, size, ours, reference (name, time, ratio), the naive loop's
    time and ratio when rows have one (``loop_s``), peak memory, note."""
    from harness_ext.report import format_table

    def num(v, spec):
        return "" if v is None or v != v else format(v, spec)

    loops = any(r.get("loop_s") is not None for r in rows)
    names = any(r.get("ref_name") for r in rows)
    out = []
    for r in rows:
        rec = {"case": r["case"], "size": r["size"], "ours s": num(r["time_s"], ",.3f")}
        if names:
            rec["reference"] = r.get("ref_name") or ""
        rec.update({"reference s": num(r["ref_s"], ",.3f"),
                    "ratio": "" if r["ratio"] is None else f"{r['ratio']:,.1f}x"})
        if loops:
            loop = r.get("loop_s")
            rec["loop s"] = num(loop, ",.3f")
            rec["loop ratio"] = "" if loop is None or not r["time_s"] > 0 else f"{loop / r['time_s']:,.1f}x"
        rec.update({"peak MB": num(r["peak_mb"], ",.0f"), "note": r["note"]})
        out.append(rec)
    if title:
        print(title)
    print(format_table(out))


def now() -> float:
    return time.perf_counter()


@contextmanager
def phase_timers(phases, listed=(), on_call=None):
    """Time the product's own functions while a benchmark runs: each call adds its wall time to its phase.

    ``phases``: ``(label, module, attribute)`` triples; ``attribute`` may be ``"Class.method"`` (class
    methods included). ``listed``: attributes that are generators, timed while they are listed whole
    (as their callers list them). A phase called inside another counts for the outer one only, so the
    phases never overlap and the total minus their sum is the rest. ``on_call(label, args, kwargs,
    seconds)``, if given, sees every outermost call. A phase whose function is gone (renamed by its owner)
    is skipped and its time counted in the rest.

    Yields ``(times, captured)``: seconds per label and the last return value per label. The original
    functions are restored on exit.
    """
    import importlib

    times = {label: 0.0 for label, _, _ in phases}
    captured = {}
    active = []
    saved = []

    def wrap(label, f, listed_whole):
        def wrapper(*a, **kw):
            if active:
                return f(*a, **kw)
            t = time.perf_counter()
            active.append(label)
            try:
                out = f(*a, **kw)
                if listed_whole:
                    out = iter(list(out))
            finally:
                active.pop()
                dt = time.perf_counter() - t
                times[label] += dt
                if on_call is not None:
                    on_call(label, a, kw, dt)
            captured[label] = out
            return out
        return wrapper

    for label, mod, attr in phases:
        owner = importlib.import_module(mod)
        name = attr
        if "." in attr:
            cls, name = attr.split(".")
            owner = getattr(owner, cls)
        f = owner.__dict__.get(name)
        if f is None:
            continue
        fn = f.__func__ if isinstance(f, classmethod) else f
        w = wrap(label, fn, name in listed)
        setattr(owner, name, classmethod(w) if isinstance(f, classmethod) else w)
        saved.append((owner, name, f))
    try:
        yield times, captured
    finally:
        for owner, name, f in saved:
            setattr(owner, name, f)
