"""Run every benchmark and print one summary of speed-up ratios, times, peak memory and targets.

Each ``benchmarks/bench_*.py`` runs in its own subprocess (``--quick`` passed
through), one after another so they do not compete for the cores. Their
output is shown as it comes. Benchmarks write result rows to
``$HARNESS_EXT_BENCH_JSON`` (through ``_common.emit_json``) and are summarised
from those rows; for any that do not, the printed ratios are picked up from
their output (``ratio 12x`` phrases and tables with a ``ratio`` column).

The summary keeps two ratios apart: the headline, against what a user would
otherwise run (the library routine, the plain json.load/read_csv + bulk-insert
script, Parquet, PyMC, a bare interpreter start; rows with ``ref_kind="user"``),
and, as a second column, against a deliberately naive loop. It ends with the
issue-17 targets table (target, measured, PASS/FAIL, source benchmark),
followed by every other row that carries its own ``target_met``.

Usage::

    python benchmarks/run.py --quick          # every benchmark in quick mode (a few minutes on 2 busy cores)
    python benchmarks/run.py                  # full runs, 10,000 x 1,000 reduce included (about 20 minutes on 2 quiet cores)
    python benchmarks/run.py --quick --full cli,matrix,bpmf_pymc   # quick, but these in full mode
    python benchmarks/run.py --quick --full ingest --args ingest=--real-only   # extra arguments for one benchmark
    python benchmarks/run.py --only reduce,scale --markdown speed.md

Exit status 1 if a benchmark fails or times out, or if no ratio was found at
all; ``--strict`` also fails on a target missed or not measured.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
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
    load = _load()
    t = time.perf_counter()
    chunks = []
    rc = 0
    try:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        # A watchdog, not a check per output line: a benchmark that prints nothing must time out too.
        fired = threading.Event()
        watchdog = threading.Timer(timeout, lambda: (fired.set(), proc.kill()))
        watchdog.start()
        try:
            for line in proc.stdout:  # stream while it runs
                sys.stdout.write(line)
                chunks.append(line)
            rc = proc.wait()
        finally:
            watchdog.cancel()
        if fired.is_set():
            rc = "timeout"
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
    return {"name": path.stem, "rc": rc, "seconds": secs, "output": output, "rows": rows, "load": (load, _load())}


def _load() -> float:
    """1-minute load average (NaN where the platform has none): other jobs on the machine inflate every time."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return float("nan")


def _fmt(v, spec):
    return "" if v is None or (isinstance(v, float) and v != v) else format(v, spec)


#: What each benchmark's ``ref_s`` is when its rows do not say (``ref_kind``): "user" = what a user
#: would otherwise run (a library routine, a plain script, a bare interpreter start), the headline;
#: "naive" = a deliberately straightforward loop, shown as the second column only.
DEFAULT_REF_KIND = {"similarity_libs": "user", "ingest": "user", "matrix": "user", "cli": "user",
                    "bpmf_pymc": "user", "scale": "naive"}


def ref_kind(res_name: str, r: dict) -> str:
    """"user", "naive", or "target" (bench_matrix's pipeline total: its ``ref_s`` is the 300 s target)."""
    if r.get("bench") == "matrix" and _is_pipeline_total(r):
        return "target"
    return r.get("ref_kind") or DEFAULT_REF_KIND.get(r.get("bench", res_name.replace("bench_", "")), "naive")


def _ratio(num, den):
    return None if num is None or den is None or not den > 0 or num != num else num / den


def summary_rows(results: list) -> list:
    """One dict of strings per result row: headline ratio (vs what a user would run) and loop ratio apart."""
    recs = []
    for res in results:
        for r in res["rows"]:
            if r.get("case", "").startswith("exponent:"):
                continue
            kind = ref_kind(res["name"], r)
            head = r.get("ratio") if kind == "user" else None
            loop = r.get("ratio") if kind == "naive" else _ratio(r.get("loop_s"), r.get("time_s"))
            case = r["case"] if len(r["case"]) <= 72 else r["case"][:69] + "..."
            recs.append({
                "bench": r.get("bench", res["name"]), "case": case, "size": r.get("size", ""),
                "ours s": _fmt(r.get("time_s"), ",.3f"),
                "reference": (r.get("ref_name") or {"naive": "naive loop", "target": "target"}.get(kind, "")
                              if r.get("ref_s") else r.get("ref_name") or "")[:40],
                "reference s": _fmt(r.get("ref_s") if kind == "user" else r.get("ref_s") or r.get("loop_s"), ",.3f"),
                "ratio vs user ref": "" if head is None else f"{head:,.1f}x",
                "ratio vs naive loop": "" if loop is None else f"{loop:,.1f}x",
                "peak MB": _fmt(r.get("peak_mb"), ",.0f"), "note": r.get("note", ""),
            })
    return recs


def summary_frame(results: list):
    import pandas as pd

    return pd.DataFrame(summary_rows(results))


def exponent_frame(results: list):
    import pandas as pd

    recs = [{"phase": r["phase"], "b models": f"{r['b_models']:.2f}", "b datasets": f"{r['b_datasets']:.2f}",
             "predicted s at 10,000 x 1,000": _fmt(r.get("predicted_10k"), ",.1f")}
            for res in results for r in res["rows"] if r.get("case", "").startswith("exponent:")]
    return pd.DataFrame(recs)


# ------------------------------------------------------------------------------- targets


def _rows(results, bench, case=None, size=None):
    """Rows of one benchmark whose case starts with ``case`` and whose size starts with ``size``."""
    return [r for res in results for r in res["rows"]
            if r.get("bench", res["name"].replace("bench_", "")) == bench
            and (case is None or r.get("case", "").strip().lower().startswith(case.lower()))
            and (size is None or str(r.get("size", "")).startswith(size))]


def _verdict(ok):
    return "n/a" if ok is None else ("PASS" if ok else "FAIL")


def _cli(results, argv, limit, where):
    """bench_cli's row for one command in one installation (size ``plain venv``: a user's install; ``here``)."""
    rows = [r for r in _rows(results, "cli", f"harness-ext {argv}", where) if r["case"].strip() == f"harness-ext {argv}"]
    if not rows:
        return None
    r = rows[0]
    cpu = f"; CPU {r['cpu_s']:.3f} s vs {r['ref_cpu_s']:.3f} s" if r.get("cpu_s") is not None else ""
    return (f"{r['time_s']:.3f} s (bare python {r['ref_s']:.3f} s{cpu})", r["time_s"] < limit)


def _store_matrix(results):
    """bench_matrix's target row (load_matrix without the fingerprint: Parquet's read computes no digest either),
    with the fingerprinted load reduce and predict run beside it (its own ratio, not the target)."""
    rows = _rows(results, "matrix", "store -> matrix", "50,000 x 200")
    target = [r for r in rows if "with fingerprint" not in r["case"]]
    if not target:
        return None
    r = target[0]
    fp = [f for f in rows if "with fingerprint" in f["case"]]
    beside = (f"; with fingerprint (reduce, predict) {fp[0]['ratio']:.2f}x ({fp[0]['time_s']:.3f} s)" if fp else "")
    return (f"{r['ratio']:.2f}x without fingerprint ({r['time_s']:.3f} s vs {r['ref_s']:.3f} s; peak "
            f"{r['peak_mb'] or float('nan'):,.0f} MB){beside}", r["ratio"] >= 0.5)


def _forty_million(results):
    rows = [r for b in ("scale", "matrix") for r in _rows(results, b, size="20,000 x 2,000")
            if _is_pipeline_total(r)]
    if not rows:
        return None
    r = rows[0]
    peak = r.get("peak_mb")
    ok = r["time_s"] < 300 and peak is not None and peak < 4096
    return (f"{r['time_s']:.0f} s, peak " + ("?" if peak is None else f"{peak / 1024:.2f} GB") + f" ({r['bench']}: {r['case'].strip()})", ok)


def _is_pipeline_total(r) -> bool:
    """bench_matrix's ingest + reduce total (its ingest and reduce rows alone are stages of it)."""
    case = r.get("case", "").lower()
    return "ingest" in case and "reduce" in case


def _ingest(results, name):
    rows = _rows(results, "ingest", name)
    if not rows:
        return None
    whole = [r for r in rows if not r.get("subset")]
    r = (whole or rows)[0]
    text = f"{r['ratio']:.2f}x ({r['time_s']:.1f} s vs {r['ref_s']:.1f} s; {r['size']})"
    if not whole:  # --quick's first files: the store's fixed costs weigh more there, so the target is not judged
        return text + ", a quick subset: the target is for the whole set", None
    return text, r["ratio"] >= 0.67


def _csv(results, layout):
    rows = _rows(results, "ingest", f"{layout} CSV", "50,000 x 200")
    if not rows:
        return None
    r = rows[0]

    def gb(mb):
        return "?" if mb is None else f"{mb / 1024:.2f} GB"

    inside = f"{r['time_s']:.1f} s, peak {gb(r.get('peak_mb'))} inside the benchmark's process"
    if r.get("cli_s") is None:  # rows of a benchmark before the command was timed in its own process
        t, peak, text = r["time_s"], r.get("peak_mb"), inside
    else:  # judged on `harness-ext ingest` in a process of its own, what a user runs
        t, peak = r["cli_s"], r.get("cli_peak_mb")
        text = f"harness-ext ingest {t:.1f} s, peak {gb(peak)} (its own process); {inside}"
    return text, t < 20 and peak is not None and peak < 1536


def _measure(results, name):
    rows = [r for r in _rows(results, "similarity_libs", name) if r.get("case", "").strip() == name and r.get("ratio")]
    if not rows:
        return None
    worst = min(rows, key=lambda r: r["ratio"])
    sizes = sorted({r["size"].replace(", 20% missing", "") for r in rows},
                   key=lambda s: int(s.split(" x ")[0].replace(",", "")))
    return (f"min {worst['ratio']:.2f}x at {worst['size']} vs {worst.get('note', '').split(' (')[0]} "
            f"({len(rows)} cases: {', '.join(sizes)})", worst["ratio"] >= 1.0)


def _nine(results):
    rows = _rows(results, "similarity_libs", size="10,000 x 1,000, 20% missing")
    if len({r["case"] for r in rows}) < 9:
        return None
    total = sum(r["time_s"] for r in rows)
    return (f"{total:.0f} s", total < 180)


def _pymc(results):
    rows = _rows(results, "bpmf_pymc")
    if not rows:
        return None
    r = rows[0]
    ok = r["ratio"] >= 1 and r["rmse_ours"] <= 1.05 * r["rmse_ref"]
    return (f"{r['ratio']:.1f}x faster; RMSE ours {r['rmse_ours']:.4f} vs PyMC {r['rmse_ref']:.4f} ({r['size']})", ok)


MEASURES = ("pearson", "spearman", "kendall_tau", "cosine", "manhattan", "euclidean", "minkowski", "wasserstein",
            "jensen_shannon")

#: (issue item, target, source benchmark, check(results) -> (measured text, passed) or None when not measured)
TARGETS = [
    *[("1", f"harness-ext {argv} < {limit:g} s, {where}", "bench_cli",
       lambda res, argv=argv, limit=limit, where=where: _cli(res, argv, limit, where))
      for where in ("plain venv", "here") for argv, limit in (("--version", 0.15), ("--help", 0.15), ("plugins", 0.5))],
    ("2", "store -> matrix >= 0.5x pandas.read_parquet, 50,000 x 200 (load_matrix without the fingerprint: "
          "Parquet's read computes no digest either; with it, as reduce/predict run it, beside)", "bench_matrix",
     _store_matrix),
    ("2", "40M results (20,000 x 2,000): CSV ingest + CLI reduce < 5 min and < 4 GB", "bench_scale/bench_matrix",
     _forty_million),
    ("3", "ingest Open LLM v2 >= 0.67x json.load + bulk insert", "bench_ingest", lambda res: _ingest(res, "Open LLM v2")),
    ("3", "ingest pythia-evals >= 0.67x json.load + bulk insert", "bench_ingest", lambda res: _ingest(res, "pythia-evals")),
    ("3", "wide CSV, 10M results (50,000 x 200) < 20 s and < 1.5 GB", "bench_ingest", lambda res: _csv(res, "wide")),
    ("3", "long CSV, 10M results (50,000 x 200) < 20 s and < 1.5 GB", "bench_ingest", lambda res: _csv(res, "long")),
] + [("4", f"{m} >= 1x best library routine (every size, complete and 20% missing)", "bench_similarity_libs",
      lambda res, m=m: _measure(res, m)) for m in MEASURES] + [
    ("4", "nine measures, 10,000 x 1,000, 20% missing < 180 s", "bench_similarity_libs", _nine),
    ("5", "BPMF vs PyMC NUTS (rank 10, alpha 2, 500+100, same masks): faster, RMSE <= 1.05x PyMC's",
     "bench_bpmf_pymc", _pymc),
]


def targets_rows(results: list, ran: set) -> list:
    """The issue-17 targets table plus every other row that carries ``target_met``."""
    out = []
    for item, target, source, check in TARGETS:
        try:
            got = check(results)
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:  # a row without the expected fields
            got = (f"row unreadable ({type(exc).__name__}: {exc})", None)
        if got is None:
            names = {s.strip() for s in source.split("/")}
            why = "not run" if not names & ran else "not measured in this run (size not run, or skipped)"
            got = (why, None)
        out.append({"item": item, "target": target, "measured": got[0], "pass": _verdict(got[1]), "source": source})
    for res in results:
        for r in res["rows"]:
            if r.get("target_met") is None or r.get("bench") == "cli" or _in_targets(r):
                continue  # already in the issue-17 rows above
            peak = f", peak {r['peak_mb']:,.0f} MB" if r.get("peak_mb") else ""
            label = f"{r['case'].strip()} ({r.get('size', '')})"
            out.append({"item": "-", "target": f"{label}: {r['target']}" if r.get("target") else label,
                        "measured": f"{r['time_s']:.2f} s{peak}", "pass": _verdict(r["target_met"]),
                        "source": res["name"]})
    return out


def _in_targets(r) -> bool:
    """Whether a bench_matrix row is one the issue-17 rows report (the 40M pipeline, store -> matrix)."""
    if r.get("bench") != "matrix":
        return False
    size = r.get("size", "")
    return ((_is_pipeline_total(r) and size.startswith("20,000 x 2,000"))
            or (r.get("case", "").startswith("store -> matrix") and size.startswith("50,000 x 200")))


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
    return (f"commit {commit}, {os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.machine()}, "
            f"{_cpu_model() or platform.processor() or platform.platform(terse=True)}, load average now {_load():.1f}")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            return next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), "")
    except OSError:
        return ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="pass --quick to every benchmark (but those in --full)")
    ap.add_argument("--full", default=None, metavar="LIST",
                    help="with --quick: comma-separated benchmarks to run in full mode anyway (cli,matrix,...)")
    ap.add_argument("--only", default=None, help="comma-separated benchmarks (prowl,pounce,reduce,...)")
    ap.add_argument("--args", action="append", default=[], metavar="NAME=ARGS",
                    help="extra arguments for one benchmark, e.g. --args ingest=--real-only; given twice for the same "
                         "benchmark, it runs twice, once with each")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per benchmark (default 600 quick, 7200 full)")
    ap.add_argument("--markdown", default=None, metavar="FILE", help="also write the summary tables as Markdown")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed or not measured")
    args = ap.parse_args(argv)
    from harness_ext.report import format_table

    files = discover(args.only.split(",") if args.only else None)
    if not files:
        print("no benchmarks found", file=sys.stderr)
        return 1
    def stem(w):
        return w if w.startswith("bench_") else f"bench_{w}"

    full = {stem(w) for w in (args.full.split(",") if args.full else ())}
    extra = {}
    for spec in args.args:
        name, _, rest = spec.partition("=")
        extra.setdefault(stem(name.strip()), []).append(tuple(rest.split()))
    t0 = time.perf_counter()
    results = []
    for f in files:
        quick = args.quick and f.stem not in full
        timeout = args.timeout or (600 if quick else 7200)
        for more in extra.get(f.stem, [()]):
            argv_ = (QUICK_ARGS.get(f.stem, ()) if quick else ()) + more
            results.append(run_one(f, quick, timeout, argv_))
            results[-1].update(quick=quick, args=" ".join(argv_))
    total = time.perf_counter() - t0
    mode = "full" if not args.quick else ("quick" + (f", full: {','.join(sorted(full))}" if full else ""))

    print(f"\n{'=' * 30} summary ({mode}, {total:.1f} s) {'=' * 30}")
    print(f"  {describe_machine()}")
    for res in results:
        print(f"  {res['name']:<22} {'quick' if res['quick'] else 'full ':<5} exit {res['rc']!s:<8} {res['seconds']:7.1f} s  "
              f"load {res['load'][0]:4.1f} -> {res['load'][1]:4.1f}  "
              f"{sum(r.get('ratio') is not None for r in res['rows'])} ratios  {res['args']}".rstrip())
    recs = summary_rows(results)
    if recs:
        print("\nratio = reference time / ours (above 1x we are faster). 'vs user ref': against what a user would "
              "otherwise run (library routine, plain script, bare interpreter), the headline; 'vs naive loop': "
              "against a straightforward loop, second column only.")
        print(format_table(recs))
    exps = exponent_frame(results)
    if not exps.empty:
        print("\ngrowth exponents (time ~ size^b; bench_scale):")
        print(format_table(exps, index=False))
    targets = targets_rows(results, {res["name"] for res in results})
    print("\ntargets (PASS/FAIL from this run's rows; n/a = not measured in this run):")
    print(format_table(targets))
    if args.markdown:
        import pandas as pd

        text = (f"{describe_machine()}, {mode} run, {total:.0f} s\n\n" + to_markdown(pd.DataFrame(recs))
                + ("\n\n" + to_markdown(exps) if not exps.empty else "")
                + "\n\n" + to_markdown(pd.DataFrame(targets)) + "\n")
        Path(args.markdown).write_text(text)
        print(f"\nwrote {args.markdown}")

    failed = [r["name"] for r in results if r["rc"] != 0]
    n_ratios = sum(r.get("ratio") is not None for res in results for r in res["rows"])
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
    if n_ratios == 0:
        print("no ratios found in any benchmark's output", file=sys.stderr)
    missed = [t for t in targets if t["pass"] != "PASS"]
    return 1 if failed or n_ratios == 0 or (args.strict and missed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
