"""Store to matrix against reading the same matrix from Parquet, and the 40M-result pipeline through the CLI.

Two speed targets of the matrix pipeline, in one run:

1. **Store to matrix** at 50,000 x 200 (10M results): a store filled with
   ``models x datasets`` synthetic results (one source file per
   ``--models-per-source`` models, DuckDB bulk inserts: this measures reading,
   ingest has its own benchmark), then, interleaved ``--repeat`` times in one
   process, ``load_matrix`` (DuckDB selects, de-duplicates and codes the
   results; scattered into one float matrix; normalisation and metadata
   included) against the reference a user would run with the matrix already
   exported, ``pandas.read_parquet`` of the same raw matrix (written once, not
   timed). ``load_matrix`` is timed twice a round: without the fingerprint
   (``fingerprint=False``: what ``matrix``, ``stalk``, ``prowl``, ``weights``,
   ``compare`` and ``pounce`` pay) and with it (what ``reduce``, ``predict``
   and the Python API's ``load_matrix`` pay: SHA-256 of the raw values, one
   sequential stream hashed beside the scan). The first is the target row
   (Parquet's read computes no digest either); the second is printed beside
   it with its own ratio. Best of the repeats for each (the mean beside it);
   ratio = Parquet / ours (target >= 0.5x, within 2x). Peak memory of each is
   its own (``VmHWM`` reset before each block). Two rows say where the floor
   is: DuckDB's scan of the three columns to Arrow alone (same rounds), and
   the fingerprint's CPU next to other hashlib digests of the same bytes.
2. **The 40M pipeline**: a wide CSV of 20,000 models x 2,000 datasets
   (low-rank scores plus noise, 4 decimals, 5% of the cells empty) ingested
   and reduced through the CLI with default settings, each command in its own
   process: ``harness-ext ingest --db STORE FILE`` then ``harness-ext reduce
   -vv --db STORE --out DIR``. Wall time and peak resident memory per command
   (the child's own ``VmHWM``, read every 50 ms: see ``_common.run_cli``), and
   per reduce stage: the command logs each stage's start at ``-vv``, and this
   script samples the child's resident set every 50 ms. Target: both commands
   together under 5 minutes and each under 4 GB on 2 cores.

The machine is often shared: the ratios come from the same run, and the
load average is printed with them. Usage::

    python benchmarks/bench_matrix.py                 # both targets (about 10 minutes)
    python benchmarks/bench_matrix.py --no-pipeline   # 50,000 x 200 only
    python benchmarks/bench_matrix.py --no-pipeline --decimals 4   # the same with 4-decimal scores
    python benchmarks/bench_matrix.py --no-pipeline --order datasets   # results stored a dataset at a time
    python benchmarks/bench_matrix.py --pipeline-only --pipeline-models 20000 --pipeline-datasets 2000
    python benchmarks/bench_matrix.py --quick         # 5,000 x 100 and a 300 x 30 pipeline
    python benchmarks/bench_matrix.py --pipeline-only --pipeline-models 300 --pipeline-datasets 1000 \
        --tmp /tmp/wide --reuse-store                 # a kept store: later runs time the reduce alone
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Optional

import numpy as np

import _common
from _common import PeakMemory, emit_json, fmt_size, print_rows, row, run_cli

#: The pipeline's targets.
PIPELINE_SECONDS = 300.0
PIPELINE_MB = 4096.0


def fill_store(db: Path, m: int, d: int, missing: float, per_source: int, seed: int = 0,
               decimals: Optional[int] = None, order: str = "models") -> int:
    """A store with m x d results in bulk (ids as Store assigns them); returns the number of results.

    Scores are uniform in [0, 1), at full precision or rounded to ``decimals`` (as leaderboards report them).
    ``order``: results stored model by model (as per-model result files are ingested) or dataset by dataset
    (as a wide leaderboard CSV is ingested, a column at a time).
    """
    import duckdb

    from harness_ext.store.db import Store

    with Store.open(db):
        pass  # creates the schema
    rng = np.random.default_rng(seed)
    con = duckdb.connect(str(db))
    n_src = (m + per_source - 1) // per_source
    con.execute("""INSERT INTO sources (source_id, path, sha256, adapter, ingested_at, n_results) SELECT i, 'synthetic/run_' || i || '.csv', 'sha' || i, 'csv', now()::TIMESTAMP, 0
                   FROM range(1, ? + 1) t(i)""", [n_src])
    con.execute("INSERT INTO models (model_id, name, metadata) SELECT i, 'org/model-' || lpad(i::VARCHAR, 6, '0'), '{}' FROM range(1, ? + 1) t(i)", [m])
    con.execute("""INSERT INTO datasets (dataset_id, benchmark, name, metric, higher_is_better, random_baseline,
                   baseline_source, min_score, max_score, is_primary, task, metadata) SELECT i, 'synthetic', 'task_' || lpad(i::VARCHAR, 5, '0'), 'acc', true,
                   0.25, 'synthetic', NULL, NULL, true, NULL, '{}' FROM range(1, ? + 1) t(i)""", [d])
    total = 0
    outer, inner = (m, d) if order == "models" else (d, m)
    step = max(1, 5_000_000 // inner)
    for start in range(0, outer, step):
        rows = np.arange(start, min(outer, start + step))
        a = np.repeat(rows + 1, inner).astype(np.int32)
        b = np.tile(np.arange(1, inner + 1, dtype=np.int32), len(rows))
        mid, did = (a, b) if order == "models" else (b, a)
        val = rng.random(len(mid))
        if decimals is not None:
            val = np.round(val, decimals)
        keep = rng.random(len(mid)) >= missing
        batch = {"model_id": mid[keep], "dataset_id": did[keep], "value": val[keep],
                 "source_id": (mid[keep] - 1) // per_source + 1}
        con.register("_b", batch)
        con.execute("""INSERT INTO results (model_id, dataset_id, num_fewshot, value, stderr, n_samples, source_id)
                       SELECT model_id, dataset_id, 0, value, NULL, NULL, source_id::INTEGER FROM _b""")
        con.unregister("_b")
        total += int(keep.sum())
    con.close()
    return total


def load_average() -> str:
    try:
        return "load average " + " ".join(f"{v:.1f}" for v in os.getloadavg()) + f" on {os.cpu_count()} cores"
    except OSError:
        return "load average unknown"


# ----------------------------------------------------------------------------- store -> matrix


def matrix_rows(tmp: Path, m: int, d: int, missing: float, per_source: int, repeat: int,
                decimals: Optional[int] = None, order: str = "models") -> list:
    """load_matrix without and with the fingerprint against pandas.read_parquet of the same matrix, interleaved,
    best (and mean) of ``repeat``."""
    import pandas as pd

    from harness_ext.store.db import Store
    from harness_ext.store.matrix import MatrixQuery, load_matrix
    from harness_ext.store.scan import arrow_table

    db = tmp / "store.duckdb"
    t0 = time.perf_counter()
    n = fill_store(db, m, d, missing, per_source, decimals=decimals, order=order)
    scores = ("full-precision scores" if decimals is None else f"scores with {decimals} decimals") + (
        "" if order == "models" else ", stored dataset by dataset")
    print(f"store with {n:,} results ({fmt_size((m, d))}, {scores}) filled in {time.perf_counter() - t0:.1f} s",
          flush=True)
    pq = tmp / "matrix.parquet"
    # Per variant ("nofp": fingerprint=False, the target; "fp": with it): wall, CPU, peak, peak above the start.
    runs = {k: {"wall": [], "cpu": [], "mb": [], "above": []} for k in ("nofp", "fp")}
    ref, ref_mb, ref_cpu, scan, scan_cpu = [], [], [], [], []
    with Store.open(db, read_only=True) as store:
        for i in range(repeat):
            for kind in ("nofp", "fp") if i % 2 == 0 else ("fp", "nofp"):  # neither always first
                r = runs[kind]
                with PeakMemory() as pm:
                    start_mb = _common._vm_hwm_mb()  # the resident set at the start (the mark was just reset to it)
                    t0, c0 = time.perf_counter(), time.process_time()
                    df = load_matrix(store, MatrixQuery(normalise="none"), fingerprint=kind == "fp")
                    r["wall"].append(time.perf_counter() - t0)
                    r["cpu"].append(time.process_time() - c0)
                r["mb"].append(pm.mb)
                r["above"].append(pm.mb - start_mb if start_mb is not None else float("nan"))
                assert df.shape == (m, d), df.shape
                if i == 0 and kind == "nofp":
                    df.to_parquet(pq)
                    mat_mb = df.to_numpy().nbytes / 2**20
                    plain = df
                elif i == 0:
                    same = _same_as_general_path(store, df) and _same_but_fingerprint(plain, df)
                    del plain
                del df
            with PeakMemory() as pr:
                t0, c0 = time.perf_counter(), time.process_time()
                back = pd.read_parquet(pq)
                ref.append(time.perf_counter() - t0)
                ref_cpu.append(time.process_time() - c0)
            ref_mb.append(pr.mb)
            del back
            # The floor of any store -> matrix from this layout: DuckDB's scan of the three columns to Arrow.
            t0, c0 = time.perf_counter(), time.process_time()
            cells = arrow_table(store.con, "SELECT model_id, dataset_id, value FROM results")
            scan.append(time.perf_counter() - t0)
            scan_cpu.append(time.process_time() - c0)
            del cells
            print(f"  round {i + 1}: load_matrix {runs['nofp']['wall'][-1]:.3f} s ({runs['nofp']['cpu'][-1]:.2f} s "
                  f"CPU), with fingerprint {runs['fp']['wall'][-1]:.3f} s ({runs['fp']['cpu'][-1]:.2f} s CPU), "
                  f"read_parquet {ref[-1]:.3f} s ({ref_cpu[-1]:.2f} s CPU), DuckDB scan alone {scan[-1]:.3f} s "
                  f"({scan_cpu[-1]:.2f} s CPU) ({load_average()})", flush=True)
    t_ref, c_ref, m_ref = min(ref), min(ref_cpu), float(np.mean(ref))
    suffix = "" if decimals is None and order == "models" else f" ({scores})"

    def ours_row(kind: str, case: str, why: str, target: bool) -> dict:
        r = runs[kind]
        t, c, mean = min(r["wall"]), min(r["cpu"]), float(np.mean(r["wall"]))
        met = t_ref / t >= 0.5
        return row("matrix", case + suffix, fmt_size((m, d)), t, t_ref, min(r["mb"]),
                   note=f"{why}; best of {repeat}, interleaved; mean {mean:.3f} s vs {m_ref:.3f} s, ratio "
                        f"{m_ref / mean:.2f}x; CPU (all threads) {c:.2f} s vs {c_ref:.2f} s, ratio {c_ref / c:.2f}x; "
                        f"matrix {mat_mb:,.0f} MB, load_matrix's peak {max(0.0, min(r['above'])):,.0f} MB above its "
                        f"start (first round {r['above'][0]:,.0f} MB: later rounds reuse pages Arrow's pool kept); "
                        f"Parquet read peak {min(ref_mb):,.0f} MB; same matrix and attrs as the general path, and "
                        f"without the fingerprint as with it: {same}; ratio >= 0.5x: {'met' if met else 'MISSED'}"
                        f"{'' if target else ' (not the target row)'}; {load_average()}",
                   target_met=bool(met and same) if target else None)

    return [ours_row("nofp", "store -> matrix (load_matrix, no fingerprint) vs pandas.read_parquet",
                     "TARGET ROW: what matrix, stalk, prowl, weights, compare and pounce run; Parquet's read "
                     "computes no digest either", True),
            ours_row("fp", "store -> matrix with fingerprint (load_matrix as reduce/predict run it) vs "
                     "pandas.read_parquet", "what reduce, predict and the Python API's load_matrix run: the "
                     "SHA-256 fingerprint the manifest records, one sequential stream beside the scan (its CPU "
                     "alone: the fingerprint row below)", False),
            row("matrix", "  DuckDB's scan alone (model_id, dataset_id, value to Arrow) vs pandas.read_parquet",
                fmt_size((m, d)), min(scan), t_ref,
                note=f"best of {repeat}, same rounds; CPU {min(scan_cpu):.2f} s vs {c_ref:.2f} s: what reading this "
                     f"store layout costs before any scatter, fingerprint or metadata; {load_average()}"),
            hash_row(m, d, repeat)]


def hash_row(m: int, d: int, repeat: int) -> dict:
    """The fingerprint's cost, and what other hashlib digests would cost, on a matrix of this size (CPU, best of
    ``repeat``): SHA-256 of the values rounded to 12 digits is the fingerprint's definition."""
    import hashlib

    from harness_ext.store.digest import fingerprint_arrays

    X = np.random.default_rng(1).random((m, d))
    data = X.tobytes()
    cpu = {}
    for name in ("sha256", "sha1", "blake2b", "md5"):
        best = float("inf")
        for _ in range(repeat):
            c0 = time.process_time()
            hashlib.new(name, data).hexdigest()
            best = min(best, time.process_time() - c0)
        cpu[name] = best
    best = float("inf")
    for _ in range(repeat):
        c0 = time.process_time()
        fingerprint_arrays(X, [], [])
        best = min(best, time.process_time() - c0)
    return row("matrix", "  fingerprint (SHA-256 of the values rounded to 12 digits) vs hashlib digests of the bytes",
               fmt_size((m, d)), best, None,
               note=f"CPU s, best of {repeat}: fingerprint {best:.3f}; " + ", ".join(
                   f"{k} {v:.3f}" for k, v in cpu.items()) + f" ({X.nbytes / 2**20:,.0f} MB); {load_average()}")


def _same_but_fingerprint(plain, df) -> bool:
    """``plain`` (load_matrix without the fingerprint) is ``df`` (with it) but for ``attrs["fingerprint"]``, None."""
    attrs = dict(df.attrs, fingerprint=None)
    return bool(plain.attrs == attrs and plain.index.equals(df.index) and plain.columns.equals(df.columns)
                and plain.to_numpy().tobytes() == df.to_numpy().tobytes() and df.attrs["fingerprint"])


def _same_as_general_path(store, df) -> bool:
    """load_matrix's one-scan path gave what the general (ranking) path gives: values, labels and attrs."""
    from unittest import mock

    from harness_ext.store import pivot
    from harness_ext.store.matrix import MatrixQuery, load_matrix

    with mock.patch.object(pivot, "_one_setting_arrays", lambda *a, **k: None):
        general = load_matrix(store, MatrixQuery(normalise="none"))
    return bool(general.index.equals(df.index) and general.columns.equals(df.columns) and general.attrs == df.attrs
                and general.to_numpy().tobytes() == df.to_numpy().tobytes())


# ----------------------------------------------------------------------------- the 40M pipeline


def write_wide_csv(path: Path, m: int, d: int, missing: float = 0.05, seed: int = 0, block: int = 2_000) -> int:
    """A wide leaderboard CSV (``model`` then ``d`` score columns), written in row blocks; returns the cells written.

    Scores are rank 3 plus noise in [0, 1] (a benchmark's shape, so the reduce is not fitting noise).
    """
    rng = np.random.default_rng(seed)
    A, B = rng.random((m, 3)), rng.random((3, d))
    n_cells = 0
    with open(path, "w") as fh:
        fh.write("model," + ",".join(f"task_{j:05d}" for j in range(d)) + "\n")
        for s in range(0, m, block):
            e = min(m, s + block)
            X = np.clip(A[s:e] @ B / 3 + 0.05 * rng.standard_normal((e - s, d)), 0, 1)
            cells = np.char.mod("%.4f", X)
            cells[rng.random(X.shape) < missing] = ""
            n_cells += int((cells != "").sum())
            fh.writelines(f"org/model-{s + i:06d}," + ",".join(r) + "\n" for i, r in enumerate(cells.tolist()))
    return n_cells


def _budget_rules(manifest) -> str:
    """What the selection's flops budgets cut on this matrix, from the manifest (empty when nothing was)."""
    import json

    try:
        m = json.loads(Path(manifest).read_text())
    except (OSError, ValueError):
        return ""
    parts = []
    for kind, rule in ((m.get("selection") or {}).get("budget_rules") or {}).items():
        parts.append(f"{kind} steps cut by the flops budget ({', '.join(f'{k}={v}' for k, v in rule.items() if k != 'reason')})")
    rows = (m.get("evidence") or {}).get("scoring_rows")
    if rows:
        parts.append(f"subsets scored on {rows['rows']} of {rows['of']} held-out models (flops {rows['flops']:.3g} > "
                     f"budget {rows['budget']:.3g})")
    runs = ((m.get("selection") or {}).get("random_baseline") or {}).get("budget_rule")
    if runs:
        parts.append(f"coverage baseline: {runs['n_runs']} of {runs['of']} random orders (cells {runs['cells']:.3g} > "
                     f"budget {runs['budget']:.3g})")
    settings = (m.get("prediction") or {}).get("settings_rule")
    if settings:
        parts.append(f"rank/penalty searched once on {settings['rows']} of {settings['of']} models (flops "
                     f"{settings['flops']:.3g} > budget {settings['budget']:.3g})")
    counts = (m.get("evidence") or {}).get("subset_counts")
    if counts:
        parts.append(f"evidence: {counts['n_draws']} of {counts['of_draws']} random subsets, "
                     f"{counts['n_random_per_size']} of {counts['of_random_per_size']} per budget-curve size (flops "
                     f"{counts['flops']:.3g} > budget {counts['budget']:.3g})")
    k = (m.get("selection") or {}).get("subset_size")
    return "; ".join(([f"subset of {k} datasets"] if k else []) + parts)


def pipeline_rows(tmp: Path, m: int, d: int, timeout: Optional[float] = None, reuse: bool = False) -> list:
    """Wide CSV -> ``harness-ext ingest`` -> ``harness-ext reduce`` (defaults), each timed in its own process.

    With ``reuse`` and a store ``tmp/pipeline_MxD.duckdb`` left by an earlier run, the CSV and ingest are skipped
    (their row reports 0 s: time the reduce alone); the store is kept either way."""
    import pandas as pd

    from harness_ext.report import format_table

    csv = tmp / f"wide_{m}x{d}.csv"
    env = dict(os.environ, HARNESS_EXT_NO_PROGRESS="1")
    db, out = tmp / f"pipeline_{m}x{d}.duckdb", tmp / "reduced"
    ingest_cmd = ["ingest", "--db", str(db), "-q", str(csv)]
    reduce_cmd = ["reduce", "-vv", "--db", str(db), "--out", str(out)]
    if reuse and db.exists():
        n_cells = -1
        ing = {"seconds": 0.0, "cpu_s": 0.0, "peak_mb": 0.0, "stdout": f"reused {db}"}
    else:
        db.unlink(missing_ok=True)
        t0 = time.perf_counter()
        n_cells = write_wide_csv(csv, m, d)
        print(f"\nwrote {csv.name}: {fmt_size((m, d))} ({n_cells:,} results, {csv.stat().st_size / 2**20:,.0f} MB) in "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
        print(f"harness-ext {' '.join(ingest_cmd)}  ({load_average()})", flush=True)
        ing = run_cli(ingest_cmd, env)
        csv.unlink()  # hundreds of MB: gone before the reduce
    print(f"  {ing['seconds']:.1f} s ({ing['cpu_s']:.1f} s CPU), peak {ing['peak_mb']:,.0f} MB: "
          f"{ing['stdout'].strip().splitlines()[-1]}")
    print(f"harness-ext {' '.join(reduce_cmd)}  ({load_average()})", flush=True)
    red = run_cli(reduce_cmd, env, timeout)
    print(f"  {red['seconds']:.1f} s ({red['cpu_s']:.1f} s CPU){'' if red['finished'] else ' (STOPPED, unfinished)'}, peak "
          f"{red['peak_mb']:,.0f} MB ({load_average()})")
    print(format_table(pd.DataFrame(red["stages"]).rename(columns={"seconds": "s", "peak_mb": "peak MB"}),
                       floatfmt="{:,.1f}", index=False))
    rules = _budget_rules(out / "manifest.json") if red["finished"] else ""
    if rules:
        print(f"  {rules}")
    total = ing["seconds"] + red["seconds"]
    peak = max(ing["peak_mb"], red["peak_mb"])
    met = red["finished"] and total < PIPELINE_SECONDS and peak < PIPELINE_MB
    size = f"{fmt_size((m, d))} ({n_cells:,} results)" if n_cells >= 0 else f"{fmt_size((m, d))} (reused store)"
    return [
        row("matrix", "pipeline: harness-ext ingest (wide CSV)", size, ing["seconds"], None, ing["peak_mb"],
            note=f"own process; its VmHWM; {ing['cpu_s']:.1f} s CPU (user + system); {load_average()}"),
        row("matrix", "pipeline: harness-ext reduce (defaults)" + ("" if red["finished"] else " STOPPED unfinished"),
            size, red["seconds"], None, red["peak_mb"],
            note="; ".join([f"{s['stage']} {s['seconds']:.0f} s {s['peak_mb']:,.0f} MB" for s in red["stages"]]
                           + [f"{red['cpu_s']:.0f} s CPU"] + ([rules] if rules else [])),
            stages=red["stages"]),
        row("matrix", "pipeline: ingest + reduce vs the 5-minute target", size, total,
            PIPELINE_SECONDS if red["finished"] else None, peak,
            note=f"target < {PIPELINE_SECONDS:.0f} s and < {PIPELINE_MB:,.0f} MB peak: {'met' if met else 'MISSED'} "
                 f"(ratio = 300 s / ours); {load_average()}", target_met=met),
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5,000 x 100 and a 300 x 30 pipeline")
    ap.add_argument("--models", type=int, default=None, help="store -> matrix: models (default 50,000)")
    ap.add_argument("--datasets", type=int, default=None, help="store -> matrix: datasets (default 200)")
    ap.add_argument("--missing", type=float, default=0.0)
    ap.add_argument("--models-per-source", type=int, default=100)
    ap.add_argument("--decimals", type=int, default=None,
                    help="store -> matrix: scores rounded to this many decimals (default: full precision; DuckDB "
                         "compresses those with ALP-RD, rounded scores with ALP)")
    ap.add_argument("--order", choices=("models", "datasets"), default="models",
                    help="store -> matrix: results stored model by model (default, as result files are ingested) "
                         "or dataset by dataset (as a wide CSV is)")
    ap.add_argument("--repeat", type=int, default=None, help="interleaved rounds, best taken (default 3; quick 2)")
    ap.add_argument("--no-pipeline", action="store_true", help="only store -> matrix")
    ap.add_argument("--pipeline-only", action="store_true", help="only the CLI pipeline")
    ap.add_argument("--pipeline-models", type=int, default=None, help="pipeline models (default 20,000)")
    ap.add_argument("--pipeline-datasets", type=int, default=None, help="pipeline datasets (default 2,000)")
    ap.add_argument("--reduce-timeout", type=float, default=1800.0,
                    help="stop the pipeline's reduce after this many seconds and report it unfinished (default 1800)")
    ap.add_argument("--tmp", default=None, help="folder for the store and CSV (default: the system's temp folder)")
    ap.add_argument("--reuse-store", action="store_true",
                    help="pipeline in --tmp itself, kept: a store left there by an earlier run is reduced again "
                         "without writing the CSV or ingesting (time the reduce alone)")
    args = ap.parse_args(argv)
    if args.reuse_store and not args.tmp:
        ap.error("--reuse-store needs --tmp")
    m = args.models or (5_000 if args.quick else 50_000)
    d = args.datasets or (100 if args.quick else 200)
    repeat = args.repeat or (2 if args.quick else 3)
    pm = args.pipeline_models or (300 if args.quick else 20_000)
    pd_ = args.pipeline_datasets or (30 if args.quick else 2_000)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        print("pyarrow missing: no Parquet reference")
        return 0
    rows = []
    if not args.pipeline_only:
        with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
            rows += matrix_rows(Path(tmp), m, d, args.missing, args.models_per_source, repeat, args.decimals,
                                args.order)
        print_rows(rows, "store to matrix (ratio = Parquet read time / load_matrix time; >= 0.5x is within 2x; the "
                         "target row is load_matrix without the fingerprint, as Parquet's read computes none; with "
                         "it, as reduce and predict run it, beside):")
    if not args.no_pipeline:
        if args.reuse_store:
            prow = pipeline_rows(Path(args.tmp), pm, pd_, args.reduce_timeout, reuse=True)
        else:
            with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
                prow = pipeline_rows(Path(tmp), pm, pd_, args.reduce_timeout)
        print()
        print_rows(prow, "pipeline (wide CSV -> ingest -> reduce through the CLI, defaults):")
        rows += prow
    emit_json(rows)
    return 0


if __name__ == "__main__":
    _common  # noqa: B018  (sets the environment: no progress bars, no third-party plugins)
    raise SystemExit(main())
