"""Speed of ``reduce --items N`` on lm-eval output, from results files alone and with per-sample logs, and of ``predict``.

Two synthetic stores, built from seeded low-rank scores (:func:`_common.low_rank_matrix`, as the other benchmarks
build their matrices) and written as lm-eval 0.4.13 writes them:

* results files alone (``results_<date>.json`` with each task's ``n-samples``; task sizes drawn between 100 and
  3,000 documents, each score a whole number of correct documents): ``reduce --items 50`` takes the design-only path
  (random documents of every task, the sample mean);
* results files with per-sample logs (``samples_<task>_<date>.jsonl``, one 0/1 ``acc`` per document drawn from the
  model's task score): ``reduce --items 50`` draws from the population's answers.

Each command runs as a user runs it (``python -m harness_ext`` in its own process, :func:`_common.run_cli`: wall
and CPU seconds, the process's own peak resident memory). The reference in the same run is what a user of the same
store would otherwise run: the dataset-level ``reduce`` with its defaults (``ref_kind="user"``); the note adds a plain
pandas groupby of the same rows (the store's results or item rows read by DuckDB, the per-task mean and spread), the
least any reduction must do. ``predict`` is timed on a new model's results file (the dataset-level manifest), and on
its folder of per-sample logs (the design-only manifest and the item-level one), against ``ingest`` of the same
files into a new store (reading them is most of either).

Usage::

    python benchmarks/bench_reduce_items.py                 # 400 models x 300 tasks; logs 100 models x 30 tasks
    python benchmarks/bench_reduce_items.py --quick         # 40 x 20; logs 12 x 3 (benchmarks/run.py --quick)
    python benchmarks/bench_reduce_items.py --logs-only --log-tasks 57   # MMLU's task count from logs (~10 min)
    python benchmarks/bench_reduce_items.py --shared        # also every shared lm-eval results file, ingested together
    python benchmarks/bench_reduce_items.py --keep DIR      # keep the stores and folders in DIR (for profiling)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import SHARED_DATA, emit_json, low_rank_matrix, print_rows, row, run_cli  # noqa: E402

BENCH = "reduce_items"
DATE = "2026-01-01T00-00-00.000000"
#: lm-eval's results trees under the shared data (0.3 files have no n-samples: ingested, not drawn from).
SHARED_LM_EVAL = ("lm-eval-harness", "pythia-evals")


def _env() -> dict:
    env = dict(os.environ, HARNESS_EXT_NO_PROGRESS="1", HARNESS_EXT_LOAD_PLUGINS="")
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return env


def _load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


def _task_config(task: str) -> dict:
    return {"task": task, "dataset_path": "synthetic", "test_split": "test", "output_type": "multiple_choice",
            "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}]}


def write_runs(root: Path, n_models: int, n_tasks: int, logs: bool, seed: int = 0, first: int = 0,
               largest: int = 3000) -> list:
    """lm-eval 0.4.13 output of ``n_models`` synthetic models on ``n_tasks`` tasks under ``root`` (one folder each).

    Scores come from :func:`_common.low_rank_matrix` (models ``first`` on of a ``first + n_models`` matrix, so a
    new model is drawn from the population's own scores, its tasks of the same sizes: the same ``seed`` and
    ``largest``); with ``logs`` every document's 0/1 answer is written too (``round(score * size)`` of them correct,
    at random), so the task score is the logs' mean exactly. Task sizes are drawn between 100 and ``largest``.
    """
    rng = np.random.default_rng(seed)
    sizes = rng.integers(100, largest + 1, n_tasks)
    scores = low_rank_matrix(first + n_models, n_tasks, seed=seed).to_numpy()[first:]
    tasks = [f"synth_task_{j:03d}" for j in range(n_tasks)]
    folders = []
    for i in range(n_models):
        name = f"synth/model-{first + i:04d}"
        folder = root / name.replace("/", "__")
        folder.mkdir(parents=True)
        correct = np.rint(scores[i] * sizes).astype(int)
        results = {t: {"alias": t, "acc,none": float(c / n), "acc_stderr,none": "N/A"}
                   for t, c, n in zip(tasks, correct, sizes)}
        doc = {"results": results, "group_subtasks": {}, "configs": {t: _task_config(t) for t in tasks},
               "versions": {t: 1.0 for t in tasks}, "n-shot": {t: 0 for t in tasks},
               "higher_is_better": {t: {"acc": True} for t in tasks},
               "n-samples": {t: {"original": int(n), "effective": int(n)} for t, n in zip(tasks, sizes)},
               "config": {"model": "hf", "model_args": f"pretrained={name}", "limit": None},
               "lm_eval_version": "0.4.13", "model_name": name, "model_name_sanitized": folder.name}
        (folder / f"results_{DATE}.json").write_text(json.dumps(doc))
        if logs:
            for t, c, n in zip(tasks, correct, sizes):
                right = np.zeros(n)
                right[rng.choice(n, c, replace=False)] = 1.0
                with open(folder / f"samples_{t}_{DATE}.jsonl", "w") as fh:
                    fh.writelines(f'{{"doc_id": {d}, "filter": "none", "metrics": ["acc"], "doc_hash": "d{d}", '
                                  f'"prompt_hash": "p{d}", "acc": {v}}}\n' for d, v in enumerate(right))
        folders.append(folder)
    return folders


def _groupby_s(db: Path, table: str) -> float:
    """A plain pandas groupby of the store's rows: per-task (and per-document, for item rows) mean and spread."""
    import duckdb

    t0 = time.perf_counter()
    con = duckdb.connect(str(db), read_only=True)
    if table == "samples":
        df = con.execute("SELECT task, doc_id, model, value FROM samples").df()
        df.groupby(["task", "doc_id"])["value"].agg(["mean", "std"])
    else:
        df = con.execute("SELECT dataset_id, model_id, value FROM results").df()
        df.groupby("dataset_id")["value"].agg(["mean", "std"])
    con.close()
    return time.perf_counter() - t0


def _cli(args, label, rows, size, ref=None, note="", ref_name=None, target=None):
    got = run_cli(args, _env())
    extra = {}
    if ref is not None:
        extra = {"ref_name": ref_name, "ref_kind": "user"}
    if target is not None:
        extra.update(target=f"< {target:g} s", target_met=bool(got["seconds"] < target))
    rows.append(row(BENCH, label, size, got["seconds"], None if ref is None else ref["seconds"], got["peak_mb"],
                    f"{got['cpu_s']:.1f} s CPU{note}; load {_load()}", **extra))
    return got


def _store(tmp: Path, name: str, folders, rows, size) -> Path:
    db = tmp / f"{name}.duckdb"
    _cli(["ingest", "--db", str(db), "-q", *map(str, folders)], f"{name}: ingest", rows, size)
    return db


def case_results_only(tmp: Path, n_models: int, n_tasks: int, rows: list) -> None:
    """``reduce --items 50`` from results files alone, the dataset-level ``reduce``, ``predict`` of a new model."""
    size = f"{n_models:,} models x {n_tasks:,} tasks"
    folders = write_runs(tmp / "results", n_models, n_tasks, logs=False)
    db = _store(tmp, "results", folders, rows, size)
    ref = run_cli(["reduce", "--db", str(db), "--out", str(tmp / "red_dataset"), "--no-plot", "-q"], _env())
    rows.append(row(BENCH, "results: reduce (dataset level, defaults)", size, ref["seconds"], None, ref["peak_mb"],
                    f"{ref['cpu_s']:.1f} s CPU; load {_load()}", target="< 30 s", target_met=ref["seconds"] < 30))
    _cli(["reduce", "--db", str(db), "--items", "50", "--out", str(tmp / "red_design"), "--no-plot", "-q"],
         "results: reduce --items 50 (design only)", rows, size, ref,
         f"; pandas groupby of the results {_groupby_s(db, 'results'):.2f} s", "reduce, dataset level")
    new = write_runs(tmp / "new_results", 1, n_tasks, logs=True, first=n_models)[0]
    ing = run_cli(["ingest", "--db", str(tmp / "new_results.duckdb"), "-q", str(new)], _env())
    _cli(["predict", "--manifest", str(tmp / "red_dataset"), str(new / f"results_{DATE}.json")],
         "results: predict a new model's results file (dataset manifest)", rows, "1 model",
         run_cli(["ingest", "--db", str(tmp / "new_one.duckdb"), "-q", str(new / f"results_{DATE}.json")], _env()),
         ref_name="ingest of the same file")
    _cli(["predict", "--manifest", str(tmp / "red_design"), str(new)],
         "results: predict a new model's per-sample logs (design-only manifest)", rows, f"1 model x {n_tasks} tasks",
         ing, ref_name="ingest of the same folder")


def case_logs(tmp: Path, n_models: int, n_tasks: int, rows: list) -> None:
    """``reduce --items 50`` with the population's per-sample logs, and ``predict`` of a new model's logs."""
    size = f"{n_models:,} models x {n_tasks:,} tasks, logs"
    folders = write_runs(tmp / "logs", n_models, n_tasks, logs=True, seed=1, largest=1000)
    db = _store(tmp, "logs", folders, rows, size)
    ref = run_cli(["reduce", "--db", str(db), "--out", str(tmp / "red_logs_dataset"), "--no-plot", "-q"], _env())
    _cli(["reduce", "--db", str(db), "--items", "50", "--out", str(tmp / "red_logs"), "--no-plot", "-q"],
         "logs: reduce --items 50 (item level)", rows, size, ref,
         f"; dataset-level reduce {ref['seconds']:.1f} s; pandas groupby of the item rows "
         f"{_groupby_s(db, 'samples'):.2f} s", "reduce, dataset level", target=60)
    new = write_runs(tmp / "new_logs", 1, n_tasks, logs=True, seed=1, first=n_models, largest=1000)[0]
    ing = run_cli(["ingest", "--db", str(tmp / "new_logs.duckdb"), "-q", str(new)], _env())
    _cli(["predict", "--manifest", str(tmp / "red_logs"), str(new)],
         "logs: predict a new model's per-sample logs (item manifest)", rows, f"1 model x {n_tasks} tasks", ing,
         ref_name="ingest of the same folder")


def case_shared(tmp: Path, rows: list) -> None:
    """Every shared lm-eval results file ingested into one store, then ``reduce --items 50`` and dataset ``reduce``."""
    roots = [SHARED_DATA / r for r in SHARED_LM_EVAL if (SHARED_DATA / r).is_dir()]
    if not roots:
        print(f"skipped the shared lm-eval results: none under {SHARED_DATA}", file=sys.stderr)
        return
    size = "shared lm-eval results"
    db = _store(tmp, "shared", roots, rows, size)
    ref = run_cli(["reduce", "--db", str(db), "--benchmark", "mmlu", "--out", str(tmp / "sh_dataset"), "--no-plot",
                   "-q"], _env())
    _cli(["reduce", "--db", str(db), "--items", "50", "--out", str(tmp / "sh_design"), "--no-plot", "-q"],
         "shared: reduce --items 50 (design only, every task with n-samples)", rows, size, ref,
         f"; pandas groupby of the results {_groupby_s(db, 'results'):.2f} s", "reduce --benchmark mmlu")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=400)
    ap.add_argument("--tasks", type=int, default=300)
    ap.add_argument("--log-models", type=int, default=100)
    ap.add_argument("--log-tasks", type=int, default=30)
    ap.add_argument("--logs-only", action="store_true", help="only the per-sample logs case (not the results files' case)")
    ap.add_argument("--quick", action="store_true", help="40 x 20, logs 12 x 3 (benchmarks/run.py --quick)")
    ap.add_argument("--shared", action="store_true", help="also the shared lm-eval results files, ingested together")
    ap.add_argument("--keep", type=Path, default=None, help="build in this (new) folder and keep it")
    args = ap.parse_args(argv)
    if args.quick:
        args.models, args.tasks, args.log_models, args.log_tasks = 40, 20, 12, 3
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="bench_reduce_items_")) if args.keep is None else args.keep
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        print(f"load average {_load()} at start on {os.cpu_count()} cores")
        if not args.logs_only:
            case_results_only(tmp, args.models, args.tasks, rows)
        case_logs(tmp, args.log_models, args.log_tasks, rows)
        if args.shared:
            case_shared(tmp, rows)
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    print_rows(rows, f"reduce --items and predict on lm-eval output (ratio = reference / ours; load {_load()} at end):")
    emit_json(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
