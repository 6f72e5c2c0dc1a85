"""Growth of each reduce phase (and of ingestion) with the number of models and of datasets.

Each phase is timed over a geometric grid of ``m`` (models, ``d`` fixed) and
of ``d`` (datasets, ``m`` fixed) on seeded low-rank synthetic matrices, and
the growth exponent ``b`` is the slope of ``log(time) = a + b log(size)``:

* similarity: ``methods.prowl.coverage_search.coverage_matrix`` for each of the nine SimBA
  measures (also reported one by one: Kendall's tau is the one quadratic in
  models);
* selection: ``methods.prowl.coverage_search.greedy_coverage_order`` on the nine matrices;
* random baseline: ``prowl.random_baseline`` (``--runs`` runs; the cost is
  linear in runs, so fewer runs do not change the exponents);
* prediction/CV: ``pounce.cross_validated_error`` with ridge, 10 folds, a
  subset of 10% of the datasets;
* ingestion: ``ingest.ingest_paths`` of synthetic Every Eval Ever files (one
  file per model, one evaluation result per dataset) into a fresh DuckDB file.

The fits use the largest ``FIT_POINTS`` (3) sizes of each grid, and predict
each phase's time at 10,000 x 1,000 from the largest grid point,
``t(m0, d0) (m / m0)^b_m (d / d0)^b_d``, to set against the measured big case
of bench_reduce.py. Kendall's tau changes regime inside the models grid (exact
below about 1,400 models at d = 100, a fixed-size sample of row pairs above),
so its models exponent is a mix. Quick mode times two small sizes per axis
(so CI runs the code) and reports no exponents: at those sizes fixed overheads
dominate and the fitted slopes are noise.

Ingestion target: the Open LLM Leaderboard v2 set (4,574 Every Eval Ever
files) into a fresh file store under 30 s. Its reference is the same ingestion
with one transaction per file (``Store.ingest_source``), what ingestion did
before it wrote in batches.

Usage::

    python benchmarks/bench_scale.py            # full grids, 1000 random runs, all 4,574 leaderboard files (a few minutes)
    python benchmarks/bench_scale.py --quick    # 2 sizes per axis, no exponents, 100 runs, 400 leaderboard files (< ~15 s)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

BENCH = "scale"
EXPECTED = {
    "similarity (9)": ("m d^2 (Kendall: m^2 d^2 exact, m^0 d^2 sampled)", "d^2"),
    "selection (9)": ("m^0", "d^2 to d^3 (lazy greedy: d^2 while few bounds are re-evaluated)"),
    "random baseline": ("m d^2 once + runs d^2 (complete data)", "d^2"),
    "prediction/CV": ("m d^2 (ridge Gram per fold)", "m d^2"),
    "ingestion": ("files", "results"),
}
#: Exponents are fitted on the largest points of each grid (the asymptotic regime, not fixed overheads).
FIT_POINTS = 3


# ----------------------------------------------------------------------------------- phases


def time_phases(X, n_runs: int, repeat_small: bool = True) -> dict:
    """Seconds per phase (and per similarity measure) on one matrix."""
    from harness_ext.methods.prowl.coverage_search import coverage_matrix, greedy_coverage_order
    from harness_ext.methods.similarity.measures import PAPER_MEASURES
    from harness_ext.methods.pounce import cross_validated_error, make_predictor
    from harness_ext.methods.prowl import random_baseline

    def t(fn):
        secs, out = C.timed(fn, 1)
        if repeat_small and secs < 0.2:
            secs2, out = C.timed(fn, 3)
            secs = min(secs, secs2)
        return secs, out

    out = {}
    mats = []
    for s in PAPER_MEASURES:
        secs, Cm = t(lambda s=s: coverage_matrix(X, s))
        out[f"  {s}"] = secs
        mats.append(Cm)
    out["similarity (9)"] = sum(out[f"  {s}"] for s in PAPER_MEASURES)
    out["selection (9)"] = sum(t(lambda Cm=Cm: greedy_coverage_order(Cm))[0] for Cm in mats)
    out["random baseline"] = t(lambda: random_baseline(X, n_runs=n_runs, random_state=0))[0]
    subset = np.arange(max(1, X.shape[1] // 10))
    out["prediction/CV"] = t(lambda: cross_validated_error(X, subset, make_predictor("ridge"), n_splits=10))[0]
    return out


def write_eee_files(folder: Path, n_models: int, n_datasets: int, seed: int = 0) -> Path:
    """Synthetic Every Eval Ever files: one per model, ``n_datasets`` results each (scores from a low-rank matrix)."""
    X = C.low_rank_matrix(n_models, n_datasets, seed=seed).to_numpy()
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n_models):
        doc = {
            "schema_version": "0.2.0",
            "source_metadata": {"source_name": "Bench Synthetic"},
            "model_info": {"name": f"model-{i}", "id": f"bench/model-{i}"},
            "evaluation_results": [
                {"evaluation_name": f"task{j}",
                 "metric_config": {"evaluation_description": f"Accuracy on task{j}", "lower_is_better": False,
                                   "min_score": 0.0, "max_score": 1.0},
                 "score_details": {"score": round(float(X[i, j]), 6)}}
                for j in range(n_datasets)
            ],
        }
        (folder / f"model-{i:05d}.json").write_text(json.dumps(doc))
    return folder


def time_ingest(paths, per_file: bool = False) -> tuple:
    """Seconds to ingest ``paths`` into a fresh DuckDB file, and the report (batched, or one transaction per file)."""
    from harness_ext.store.db import Store

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        with Store.open(db) as store:
            t = time.perf_counter()
            report = ingest_per_file(store, paths) if per_file else _ingest(store, paths)
            secs = time.perf_counter() - t
    return secs, report


def _ingest(store, paths):
    from harness_ext.store.ingest import ingest_paths

    return ingest_paths(store, paths, show_progress=False)


def ingest_per_file(store, paths):
    """Reference: detect, hash, read and write each file in its own transaction (no batching)."""
    from harness_ext.errors import IngestError
    from harness_ext.store.ingest import FileReport, IngestReport, detect_adapter, iter_sources, read_source, sha256_of
    from harness_ext.plugin_manager import get_registrations

    adapters = get_registrations("adapters")
    report = IngestReport()
    for src, _ in iter_sources(paths, adapters):
        try:
            adapter = detect_adapter(src, adapters)
            sha = sha256_of(src, adapter)
            if store.has_source(sha):
                report.files.append(FileReport(str(src.path), "unchanged", adapter.name))
                continue
            out = store.ingest_source(str(src.path), sha, adapter.name, read_source(src, adapter))
            report.files.append(FileReport(str(src.path), out.status, adapter.name, out.n_new))
        except IngestError as exc:
            report.files.append(FileReport(str(src.path), "skipped", reason=exc.reason))
    return report


def leaderboard_files(limit=None) -> list:
    files = sorted(C.OPEN_LLM_V2.rglob("*.json")) if C.OPEN_LLM_V2.exists() else []
    return files[:limit] if limit else files


def exponents(timings: dict, runs: int) -> list:
    """Per phase: growth exponents over models and datasets (largest FIT_POINTS sizes), predicted 10,000 x 1,000 s."""
    phases = list(next(iter(timings["models"].values())).keys()) + ["ingestion"]
    exp_rows = []
    for ph in phases:
        b = {}
        for axis, idx in (("models", 0), ("datasets", 1)):
            pts = sorted((k[idx], v[ph]) for k, v in timings[axis].items() if ph in v)[-FIT_POINTS:]
            b[axis] = C.fit_exponent([p[0] for p in pts], [p[1] for p in pts])
        pred = np.nan
        if ph != "ingestion":
            mk = max(k for k in timings["models"] if ph in timings["models"][k])
            t_m = timings["models"][mk][ph]
            # Anchor on the largest models-grid point, then grow d from its d to 1000 with b_datasets.
            pred = t_m * (10000 / mk[0]) ** b["models"] * (1000 / mk[1]) ** b["datasets"]
            if ph == "random baseline":
                pred *= 1000 / runs
        exp_rows.append({"phase": ph, "b models": b["models"], "b datasets": b["datasets"],
                         "expected": " / ".join(EXPECTED.get(ph.strip(), ("", ""))) if ph.strip() in EXPECTED else "",
                         "predicted s at 10,000 x 1,000": pred})
    return exp_rows


def print_exponents(exp_rows, m_grid, d_fix, d_grid, m_fix, f_grid, r_fix, r_grid, f_fix) -> None:
    import pandas as pd

    from harness_ext.report import format_table

    print(f"\ngrowth exponents b (time ~ size^b, fitted on the largest {FIT_POINTS} sizes); grids m = {m_grid} at "
          f"d = {d_fix}, d = {d_grid} at m = {m_fix}; ingestion files = {f_grid} at {r_fix} results, "
          f"results = {r_grid} at {f_fix} files")
    print(format_table(pd.DataFrame(exp_rows), floatfmt="{:.2f}", index=False))


# ----------------------------------------------------------------------------------- driver


def grid(start: int, n: int) -> list:
    return [start * 2**i for i in range(n)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 sizes per axis (no exponents), 100 random runs, 400 leaderboard files")
    ap.add_argument("--runs", type=int, default=None, help="random-baseline runs (default 1000; quick 100)")
    ap.add_argument("--ref-files", type=int, default=None,
                    help="leaderboard files ingested by the per-file reference (default 1000; quick 40), scaled to all")
    args = ap.parse_args(argv)
    quick = args.quick
    runs = args.runs or (100 if quick else 1000)
    if quick:
        m_grid, d_fix, d_grid, m_fix = grid(200, 2), 40, grid(20, 2), 400
        f_grid, r_fix, r_grid, f_fix = grid(50, 2), 10, grid(5, 2), 100
    else:
        m_grid, d_fix, d_grid, m_fix = grid(500, 5), 100, grid(50, 5), 1000
        f_grid, r_fix, r_grid, f_fix = grid(250, 5), 10, grid(5, 5), 500
    rows, timings = [], {"models": {}, "datasets": {}}

    print(f"phase times over models (d = {d_fix}) and datasets (m = {m_fix}); random baseline {runs} runs")
    for axis, pts in (("models", [(m, d_fix) for m in m_grid]), ("datasets", [(m_fix, d) for d in d_grid])):
        for m, d in pts:
            X = C.low_rank_matrix(m, d, seed=0).to_numpy()
            with C.PeakMemory() as mem:
                ph = time_phases(X, runs)
            timings[axis][(m, d)] = ph
            main_ph = [k for k in ph if not k.startswith("  ")]
            print(f"  {axis:8s} {C.fmt_size((m, d)):>14s}: " + ", ".join(f"{k} {ph[k]:.3f} s" for k in main_ph)
                  + f"; peak {mem.mb:,.0f} MB", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        for axis, pts in (("models", [(f, r_fix) for f in f_grid]), ("datasets", [(f_fix, r) for r in r_grid])):
            for m, d in pts:
                folder = write_eee_files(Path(tmp) / f"eee_{m}_{d}", m, d)
                secs, rep = time_ingest([folder])
                assert len(rep.by_status("ingested")) == m, rep.summary()
                timings[axis].setdefault((m, d), {})["ingestion"] = secs
                print(f"  ingest   {axis:8s} {m:,} files x {d} results: {secs:.3f} s", flush=True)

    if quick:
        print("\ngrowth exponents: full mode only (python benchmarks/bench_scale.py); the quick sizes are overhead-dominated")
        exp_rows = []
    else:
        exp_rows = exponents(timings, runs)
        print_exponents(exp_rows, m_grid, d_fix, d_grid, m_fix, f_grid, r_fix, r_grid, f_fix)
    for r in exp_rows:
        rows.append(C.row(BENCH, f"exponent: {r['phase'].strip()}", "grid", float("nan"), None, None,
                          note=f"b_models {r['b models']:.2f}, b_datasets {r['b datasets']:.2f}",
                          phase=r["phase"].strip(), b_models=r["b models"], b_datasets=r["b datasets"],
                          predicted_10k=None if not np.isfinite(r["predicted s at 10,000 x 1,000"]) else
                          r["predicted s at 10,000 x 1,000"]))

    # real ingestion: Open LLM Leaderboard v2 into a fresh file store
    files = leaderboard_files(400 if quick else None)
    if files:
        n_all = len(leaderboard_files())
        with C.PeakMemory() as mem:
            secs, rep = time_ingest(files)
        n_ref = min(len(files), args.ref_files or (40 if quick else 1000))
        ref_secs, ref_rep = time_ingest(files[:n_ref], per_file=True)
        ref_scaled = ref_secs * len(files) / n_ref
        target = "" if len(files) < n_all else (f"target 30 s: {'met' if secs < 30 else 'MISSED'}")
        note = "; ".join(p for p in (
            rep.summary().split(",")[0],
            f"reference: one transaction per file, {n_ref} files" + (" scaled to all" if n_ref < len(files) else ""),
            target) if p)
        r = C.row(BENCH, "ingest Open LLM v2 (fresh file store)", f"{len(files):,} files", secs, ref_scaled, mem.mb,
                  note=note, target_met=None if not target else secs < 30, phase="ingestion")
        rows.append(r)
        print()
        C.print_rows([r], title="real ingestion:")
    C.emit_json(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
