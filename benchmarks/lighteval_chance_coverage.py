"""How many lighteval multiple-choice tasks get a chance level from their names alone, before and after lighteval's
names were mapped to lm-eval's (no details files beside the results).

The tasks are those of lighteval's GLUE and SuperGLUE task file (``src/lighteval/tasks/tasks/glue.py``, every one
scored by ``Metrics.loglikelihood_acc``), RACE-high, and the Open LLM Leaderboard v1 tasks of lighteval's
``leaderboard`` suite. "Before" is the adapter's earlier rule (the dataset name as the adapter writes it, looked up in
``harness_ext.benchmarks.CHOICES``); "after" is the adapter's reading of one results file holding them all.

Usage: ``python benchmarks/lighteval_chance_coverage.py``
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

GLUE = ["glue:cola", "glue:mnli", "glue:mnli_mismatched", "glue:mrpc", "glue:qnli", "glue:qqp", "glue:rte",
        "glue:sst2", "glue:stsb", "glue:wnli", "super_glue:boolq", "super_glue:cb", "super_glue:copa",
        "super_glue:rte", "super_glue:multirc", "super_glue:wic", "super_glue:wsc", "race:high"]
LEADERBOARD = ["arc:challenge|25", "hellaswag|10", "winogrande|5", "mmlu:anatomy|5", "truthfulqa:mc|0"]


def main() -> int:
    from harness_ext.adapters.lighteval import _dataset
    from harness_ext.benchmarks import MMLU_BENCHMARK, chance_baseline
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths
    from harness_ext.store.matrix import MatrixQuery, query_results

    keys = {f"lighteval|{t}|0": "acc" for t in GLUE}
    keys.update({f"leaderboard|{t}": ("mc1" if "truthfulqa" in t else "acc") for t in LEADERBOARD})
    before = {}
    for key, metric in keys.items():
        suite, task, _ = key.split("|")
        benchmark, dataset, _ = _dataset(suite, task)
        before[key] = chance_baseline(f"mmlu_{dataset}" if benchmark == MMLU_BENCHMARK else dataset, metric)[0]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "results" / "m" / "results_2024-01-01T00-00-00.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"config_general": {"model_name": "m"},
                                    "results": {k: {m: 0.5} for k, m in keys.items()}}))
        with Store.open(":memory:") as s:
            report = ingest_paths(s, [path], show_progress=False)
            long = query_results(s, MatrixQuery(aggregates=True), all_metrics=True)
    after = {t: rb for t, rb in zip(long.task, long.random_baseline) if rb == rb and rb is not None}
    print(f"{'task key':<34} {'before':>8} {'after':>8}")
    for key in keys:
        b, a = before[key], after.get(key)
        print(f"{key:<34} {'-' if b is None else f'{b:.4f}':>8} {'-' if a is None else f'{a:.4f}':>8}")
    print(f"with a chance level: before {sum(v is not None for v in before.values())} of {len(keys)}, "
          f"after {len(after)} of {len(keys)}")
    for note in report.files[0].notes:
        print("note:", note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
