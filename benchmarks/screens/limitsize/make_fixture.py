"""Make tests/fixtures/lm_eval_limit_items: real lm-eval output of ``--limit`` runs, with their per-sample logs.

Three stand-in models (``tests/lm_eval_standin.py``, seeds 1-3) run 2 local 24-document tasks with ``limit=8`` (as
``lm_eval --limit 8`` does: each task's first 8 documents), ``--log_samples``; a fourth (seed 99) runs both whole,
as the new model. Run with lm-eval installed (the ``lmeval`` extra)::

    python benchmarks/screens/limitsize/make_fixture.py OUT

then copy ``OUT/population`` and ``OUT/new_model`` into the fixture folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests"))

import lm_eval_standin  # noqa: E402

N_DOCS, LIMIT, SEEDS, NEW = 24, 8, (1, 2, 3), 99


def run(tasks_dir: Path, out: Path, seed: int, tasks: list, limit) -> None:
    """One stand-in model through lm-eval's ``simple_evaluate`` and ``EvaluationTracker``, as the command line runs
    them (``limit`` None: every document)."""
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    lm_eval_standin.register()
    tm = TaskManager(include_path=str(tasks_dir), include_defaults=False)
    tracker = EvaluationTracker(output_path=str(out))
    results = simple_evaluate(model="standin", model_args=f"pretrained=standin/m{seed:02d},seed={seed}",
                              tasks=list(tasks), task_manager=tm, log_samples=True, limit=limit,
                              evaluation_tracker=tracker, random_seed=0, numpy_random_seed=1234,
                              torch_random_seed=1234, fewshot_random_seed=1234)
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    for task_name in results["configs"]:
        tracker.save_results_samples(task_name=task_name, samples=samples[task_name])


def main(out: str) -> None:
    root = Path(out)
    tasks = lm_eval_standin.write_tasks(root / "tasks", n_tasks=2, n_items=N_DOCS)
    for seed in SEEDS:
        run(root / "tasks", root / "population", seed, tasks, LIMIT)
    run(root / "tasks", root / "new_model", NEW, tasks, None)


if __name__ == "__main__":
    main(sys.argv[1])
