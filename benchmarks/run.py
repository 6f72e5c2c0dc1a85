"""Run every benchmark and print one summary of speed-up ratios, times, peak memory and targets.

Each ``benchmarks/bench_*.py`` runs in its own subprocess (``--quick`` passed
through), one after another so they do not compete for the cores. Their
output is shown as it comes. Benchmarks that write result rows to
``$HARNESS_EXT_BENCH_JSON`` (bench_reduce, bench_scale, through ``_common``)
are summarised from those rows; for the others the printed ratios are picked
up from their output (``ratio 12x`` phrases and tables with a ``ratio``
column).

Usage::

    python benchmarks/run.py --quick          # every benchmark in quick mode (< 1 minute on 2 cores)
    python benchmarks/run.py                  # full runs, 10,000 x 1,000 reduce included (tens of minutes)
    python benchmarks/run.py --only reduce,scale --markdown speed.md

Exit status 1 if a benchmark fails or times out, or if no ratio was found at
all; ``--strict`` also fails on a missed target.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
JSON_ENV = "HARNESS_EXT_BENCH_JSON"
#: Run these first (cheap), then the rest alphabetically; reduce and scale are the long ones.
LAST = ("bench_reduce", "bench_scale")
#: Extra arguments in quick mode, so that the whole suite stays under a minute on 2 quiet cores
#: (bench_ingest's own --quick writes 1,000 files, half of the suite's time on its own).
QUICK_ARGS = {"bench_ingest": ("--files", "250", "--reference-files", "60", "--no-progress")}

_INLINE = re.compile(r"\bratio\b[^0-9\n]{0,40}?(?P<v>[0-9][0-9,]*(?:\.[0-9]+)?)\s*x\b", re.IGNORECASE)
_NUM = re.compile(r"^-?[0-9][0-9,]*(?:\.[0-9]+)?(?:e[-+]?\d+)?x?$", re.IGNORECASE)


def discover(only=None) -> list:
    files = sorted(HERE.glob("bench_*.py"))
    files.sort(key=lambda p: (p.stem in LAST, LAST.index(p.stem) if p.stem in LAST else 0, p.stem))
    if only:
        want = {w if w.startswith("bench_") else f"bench_{w}" for w in only}
        files = [f for f in files if f.stem in want]
    return files


def _fields(header: str) -> list:
    """(text, start, end) of the columns of a header whose columns are separated by 2+ spaces."""
    return [(m.group(0), m.start(), m.end()) for m in re.finditer(r"\S+(?: \S+)*", header)]


def parse_ratios(text: str) -> list:
    """Ratios printed by a benchmark: ``[{"case": ..., "ratio": float}]``.

    Two forms are recognised: ``... ratio 12.5x ...`` anywhere in a line (the
    case is the line, prefixed with the last unindented heading ending in ":"
    or the last unindented line), and a table whose header has a ``ratio``
    column (the value is the token under that header; the case is the row's
    text under the first column).
    """
    out = []
    lines = text.splitlines()
    heading = ""
    table = None  # (first column end, ratio span, first column name)
    for line in lines:
        if not line.strip():
            table = None
            continue
        fields = _fields(line)
        names = [f[0].lower() for f in fields]
        if "ratio" in names and len(fields) >= 3 and not _INLINE.search(line):
            i = names.index("ratio")
            table = (fields[1][1], (fields[i][1], fields[i][2]), fields[0][0])
            continue
        if table is not None:
            first_end, (rs, re_), col0 = table
            tokens = [(m.group(0), m.start(), m.end()) for m in re.finditer(r"\S+", line)]
            hit = [t for t in tokens if t[1] < re_ + 1 and t[2] > rs - 1 and _NUM.match(t[0])]
            if hit:
                try:
                    val = float(hit[-1][0].rstrip("xX").replace(",", ""))
                except ValueError:
                    val = None
                if val is not None:
                    case = line[:first_end].strip()
                    out.append({"case": f"{col0}: {case}" if col0.lower() not in case.lower() else case, "ratio": val})
                    continue
            table = None
        m = _INLINE.search(line)
        if m:
            body = line.strip()
            label = line[m.start():m.start("v")].strip(" ,;:=")
            label = "" if label.lower() == "ratio" else label
            case = re.sub(r"\s+", " ", f"{line[: m.start()]} {label}").strip(" ,;:->")
            if line[:1].isspace() and heading:
                case = f"{heading.rstrip(':')}: {case}" if case else heading.rstrip(":")
            out.append({"case": case or body[:60], "ratio": float(m.group("v").replace(",", ""))})
        if not line[:1].isspace():
            heading = line.strip()
    return out


def run_one(path: Path, quick: bool, timeout: float, extra=()) -> dict:
    """Run one benchmark file; returns {name, rc, seconds, output, rows}."""
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False) as fh:
        jpath = fh.name
    env = dict(os.environ, **{JSON_ENV: jpath, "HARNESS_EXT_NO_PROGRESS": "1"})
    cmd = [sys.executable, str(path)] + (["--quick"] if quick else []) + list(extra)
    print(f"\n=== {path.name} {'--quick' if quick else ''} {' '.join(extra)} ===".rstrip(), flush=True)
    t = time.perf_counter()
    chunks = []
    rc = 0
    try:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        deadline = t + timeout
        for line in proc.stdout:  # stream while it runs
            sys.stdout.write(line)
            chunks.append(line)
            if time.perf_counter() > deadline:
                proc.kill()
                rc = "timeout"
                break
        rc = rc or proc.wait()
    finally:
        secs = time.perf_counter() - t
        rows = [json.loads(x) for x in Path(jpath).read_text().splitlines() if x.strip()]
        os.unlink(jpath)
    output = "".join(chunks)
    if not rows:
        rows = [{"bench": path.stem.replace("bench_", ""), "case": r["case"], "size": "", "time_s": None,
                 "ref_s": None, "ratio": r["ratio"], "peak_mb": None, "note": "parsed from output"}
                for r in parse_ratios(output)]
    print(f"=== {path.name}: exit {rc}, {secs:.1f} s, {sum(r.get('ratio') is not None for r in rows)} ratios ===",
          flush=True)
    return {"name": path.stem, "rc": rc, "seconds": secs, "output": output, "rows": rows}


def _fmt(v, spec):
    return "" if v is None or (isinstance(v, float) and v != v) else format(v, spec)


def summary_frame(results: list):
    import pandas as pd

    recs = []
    for res in results:
        for r in res["rows"]:
            if r.get("case", "").startswith("exponent:"):
                continue
            case = r["case"] if len(r["case"]) <= 72 else r["case"][:69] + "..."
            recs.append({
                "bench": r.get("bench", res["name"]), "case": case, "size": r.get("size", ""),
                "ours s": _fmt(r.get("time_s"), ",.3f"), "reference s": _fmt(r.get("ref_s"), ",.3f"),
                "ratio": "" if r.get("ratio") is None else f"{r['ratio']:,.1f}x",
                "peak MB": _fmt(r.get("peak_mb"), ",.0f"), "note": r.get("note", ""),
            })
    return pd.DataFrame(recs)


def exponent_frame(results: list):
    import pandas as pd

    recs = [{"phase": r["phase"], "b models": f"{r['b_models']:.2f}", "b datasets": f"{r['b_datasets']:.2f}",
             "predicted s at 10,000 x 1,000": _fmt(r.get("predicted_10k"), ",.1f")}
            for res in results for r in res["rows"] if r.get("case", "").startswith("exponent:")]
    return pd.DataFrame(recs)


def to_markdown(frame) -> str:
    cols = list(frame.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, r in frame.iterrows():
        lines.append("| " + " | ".join(str(r[c]).replace("|", "\\|").strip() for c in cols) + " |")
    return "\n".join(lines)


def describe_machine() -> str:
    """Commit, CPU count and Python, for the record next to the numbers."""
    import platform

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                                timeout=10).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        commit = "?"
    return f"commit {commit}, {os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.machine()}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="pass --quick to every benchmark")
    ap.add_argument("--only", default=None, help="comma-separated benchmarks (prowl,pounce,reduce,...)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per benchmark (default 600 quick, 7200 full)")
    ap.add_argument("--markdown", default=None, metavar="FILE", help="also write the summary tables as Markdown")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args(argv)
    from harness_ext.report import format_table

    timeout = args.timeout or (600 if args.quick else 7200)
    files = discover(args.only.split(",") if args.only else None)
    if not files:
        print("no benchmarks found", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    results = [run_one(f, args.quick, timeout, QUICK_ARGS.get(f.stem, ()) if args.quick else ()) for f in files]
    total = time.perf_counter() - t0

    print(f"\n{'=' * 30} summary ({'quick' if args.quick else 'full'}, {total:.1f} s) {'=' * 30}")
    print(f"  {describe_machine()}")
    for res in results:
        print(f"  {res['name']:<18} exit {res['rc']!s:<8} {res['seconds']:7.1f} s  "
              f"{sum(r.get('ratio') is not None for r in res['rows'])} ratios")
    frame = summary_frame(results)
    if not frame.empty:
        print()
        print(format_table(frame, index=False))
    exps = exponent_frame(results)
    if not exps.empty:
        print("\ngrowth exponents (time ~ size^b; bench_scale):")
        print(format_table(exps, index=False))
    targets = [(res["name"], r) for res in results for r in res["rows"] if r.get("target_met") is not None]
    if targets:
        print("\ntargets:")
        for name, r in targets:
            print(f"  {r['case'].strip()} ({r['size']}): {r['time_s']:.2f} s"
                  + (f", peak {r['peak_mb']:,.0f} MB" if r.get("peak_mb") else "")
                  + f" -> {'met' if r['target_met'] else 'MISSED'}")
    if args.markdown:
        text = (f"{describe_machine()}, {'quick' if args.quick else 'full'} run, {total:.0f} s\n\n" + to_markdown(frame)
                + ("\n\n" + to_markdown(exps) if not exps.empty else "") + "\n")
        Path(args.markdown).write_text(text)
        print(f"\nwrote {args.markdown}")

    failed = [r["name"] for r in results if r["rc"] != 0]
    n_ratios = sum(r.get("ratio") is not None for res in results for r in res["rows"])
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
    if n_ratios == 0:
        print("no ratios found in any benchmark's output", file=sys.stderr)
    missed = [r for _, r in targets if not r["target_met"]]
    return 1 if failed or n_ratios == 0 or (args.strict and missed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
