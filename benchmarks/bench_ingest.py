"""Ingest throughput on a 10,000-file directory of lm-eval v0.4 results, against one transaction per file.

Generates ``--files`` synthetic ``results_<date>.json`` files in the real lm-eval v0.4 layout
(``<org>__<model>/results_<date>.json`` with results/groups/group_subtasks/n-shot/n-samples/
higher_is_better/config: 57 MMLU subjects, 4 other tasks (acc_norm on 3) and the mmlu group row, which is skipped: 64 records per file)
into a temporary folder, then:

1. ``harness-ext``'s ingest path (``ingest_paths``: format detection, read, validate, batched
   writes of ``BATCH_FILES`` sources per DuckDB transaction) on all of them, with the progress bar
   on stderr, into a fresh store file; prints files/s and records/s;
2. the straightforward reference on a subset: the same code with one transaction per file
   (``BATCH_FILES = 1``), which is what a file-at-a-time loop over ``Store.ingest_source`` does;
3. a re-ingest of everything (all unchanged: the content-hash check only).

Prints the rates and the speed ratio batched / per-file. Usage::

    python benchmarks/bench_ingest.py            # 10,000 files (reference on 1,000)
    python benchmarks/bench_ingest.py --quick    # 1,000 files (reference on 250)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from harness_ext.store import ingest as ingest_mod
from harness_ext.benchmarks import MMLU_SUBJECTS
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.db import Store

OTHER = ("arc_easy", "arc_challenge", "hellaswag", "lambada_openai")


def result_doc(i: int, rng: np.random.Generator) -> dict:
    tasks = [f"mmlu_{s}" for s in MMLU_SUBJECTS] + list(OTHER)
    results = {}
    for t in tasks:
        acc = float(rng.uniform(0.2, 0.9))
        results[t] = {"alias": t, "acc,none": acc, "acc_stderr,none": float(rng.uniform(0.01, 0.05))}
        if t in ("arc_easy", "arc_challenge", "hellaswag"):
            results[t]["acc_norm,none"] = acc + 0.02
    results["mmlu"] = {"alias": "mmlu", "acc,none": 0.5, "acc_stderr,none": 0.004}
    model = f"synthetic-org/model-{i // 4:05d}"
    return {
        "results": results,
        "groups": {"mmlu": results["mmlu"]},
        "group_subtasks": {"mmlu": [f"mmlu_{s}" for s in MMLU_SUBJECTS], **{t: [] for t in tasks}},
        "configs": {}, "versions": {t: 1.0 for t in tasks}, "n-shot": {t: (0, 5)[i % 2] for t in tasks},
        "higher_is_better": {t: {"acc": True} for t in tasks},
        "n-samples": {t: {"original": 100, "effective": 100} for t in tasks},
        "config": {"model": "hf", "model_args": f"pretrained={model},revision=step{1000 * (i % 4)}",
                   "batch_size": "auto", "device": "cuda:0", "limit": None},
        "git_hash": "deadbee", "date": 1700000000.0 + i, "model_name": model,
        "model_name_sanitized": model.replace("/", "__"),
    }


def generate(root: Path, n: int) -> float:
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for i in range(n):
        d = root / f"synthetic-org__model-{i // 4:05d}" / f"run{i % 4}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"results_2024-01-01T00-00-{i:06d}.json").write_text(json.dumps(result_doc(i, rng)))
    return time.perf_counter() - t0


def timed_ingest(db: Path, paths, show_progress: bool):
    t0 = time.perf_counter()
    with Store.open(db) as store:
        report = ingest_paths(store, paths, show_progress=show_progress)
        counts = store.counts()
    return time.perf_counter() - t0, report, counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1,000 files instead of 10,000")
    ap.add_argument("--files", type=int, default=None)
    ap.add_argument("--reference-files", type=int, default=None, help="files for the per-file reference run")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    n = args.files or (1000 if args.quick else 10_000)
    n_ref = min(n, args.reference_files or max(250, n // 10))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "results"
        gen = generate(root, n)
        print(f"generated {n} lm-eval v0.4 result files ({n * 64} records) in {gen:.1f} s")

        dt, report, counts = timed_ingest(Path(tmp) / "batched.duckdb", [root], not args.no_progress)
        assert len(report.by_status("ingested")) == n, report.summary()
        print(f"batched ingest ({ingest_mod.BATCH_FILES} files per transaction): {dt:.1f} s, "
              f"{n / dt:,.0f} files/s, {report.n_results / dt:,.0f} records/s  "
              f"[{counts['models']} models, {counts['datasets']} datasets, {counts['results']} results]")

        dt2, report2, _ = timed_ingest(Path(tmp) / "batched.duckdb", [root], False)
        assert len(report2.by_status("unchanged")) == n
        print(f"re-ingest, everything unchanged: {dt2:.1f} s, {n / dt2:,.0f} files/s")

        subset = sorted(root.iterdir())[: max(1, n_ref // 4)]
        m = sum(1 for d in subset for _ in d.rglob("results_*.json"))
        t_b, rep_b, _ = timed_ingest(Path(tmp) / "subset_batched.duckdb", subset, False)
        saved = ingest_mod.BATCH_FILES
        ingest_mod.BATCH_FILES = 1  # the reference: one DuckDB transaction per file
        try:
            t_r, rep_r, _ = timed_ingest(Path(tmp) / "subset_perfile.duckdb", subset, False)
        finally:
            ingest_mod.BATCH_FILES = saved
        assert rep_b.n_results == rep_r.n_results
        print(f"on {m} files: batched {m / t_b:,.0f} files/s, one transaction per file {m / t_r:,.0f} files/s")
        print(f"speed ratio batched / per-file: {t_r / t_b:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
