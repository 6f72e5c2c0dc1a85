"""Deterministic stand-in models for lm-evaluation-harness, and a small local benchmark (no torch, no downloads).

``standin`` is an ``lm_eval.api.model.LM`` registered in lm-eval's model registry.
It answers multiple-choice ``loglikelihood`` requests (and ``generate_until`` ones with the chosen option's
text) from a seeded ability profile: model ``seed`` has a two-dimensional ability ``z`` (drawn from the
seed), each task has loadings ``a`` and an offset ``c`` and each item a
difficulty ``b`` (all in the task's JSON lines), and the model answers an item
correctly with probability ``sigmoid(z . a + c - b)``, decided by a hash of
(seed, task, item), so every run of a model gives the same answers. A wrong
answer is a hashed choice among the other options. Scores therefore have the
low-rank structure of real benchmarks plus item-level noise.

Run as a script it is lm-eval's own command line with the stand-in registered::

    python tests/lm_eval_standin.py cli --model standin --model_args pretrained=standin/m99,seed=99 \
        --include_path reduced --tasks harness_ext_reduced --output_path out --log_samples

and ``population`` runs several models through lm-eval's ``simple_evaluate`` and
``EvaluationTracker`` (what the command line calls) in one process, because
building lm-eval's task index takes about 15 s per command.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path

N_CHOICES = 4
_REGISTERED = None


def _u(*parts) -> float:
    h = hashlib.sha256("\0".join(map(str, parts)).encode()).digest()
    return int.from_bytes(h[:8], "little") / 2**64


def ability(seed: int) -> tuple:
    """The model's two ability coordinates, a pure function of its seed."""
    # Box-Muller from hashed uniforms: no global RNG, same values everywhere.
    u1, u2, u3 = (max(_u("ability", seed, k), 1e-12) for k in range(3))
    r = math.sqrt(-2 * math.log(u1))
    return 1.2 * r * math.cos(2 * math.pi * u2), 0.8 * r * math.sin(2 * math.pi * u2) + 0.2 * (u3 - 0.5)


def p_correct(seed: int, doc: dict) -> float:
    z1, z2 = ability(seed)
    x = z1 * float(doc["a1"]) + z2 * float(doc["a2"]) + float(doc["c"]) - float(doc["difficulty"])
    return 1 / (1 + math.exp(-x))


def answer(seed: int, task: str, doc_id: int, doc: dict) -> int:
    """The choice the stand-in model picks for one item."""
    target = int(doc["answer"])
    if _u(seed, task, doc_id) < p_correct(seed, doc):
        return target
    return (target + 1 + int(_u(seed, task, doc_id, "wrong") * (N_CHOICES - 1))) % N_CHOICES


def typical_seed(population, start: int = 100) -> int:
    """The first seed from ``start`` whose ability lies inside the population's range on both coordinates.

    A new checkpoint like the ones a manifest was built from; outside that range predict
    extrapolates and says so.
    """
    z = [ability(s) for s in population]
    lo = [min(v[k] for v in z) for k in (0, 1)]
    hi = [max(v[k] for v in z) for k in (0, 1)]
    seed = start
    while not all(lo[k] < ability(seed)[k] < hi[k] for k in (0, 1)):
        seed += 1
    return seed


def write_tasks(folder: Path, n_tasks: int = 12, n_items: int = 100, seed: int = 0, metrics=("acc",)) -> list:
    """``n_tasks`` local JSON-lines multiple-choice tasks with their lm-eval YAMLs; returns the task names.

    Task ``t`` is scored by ``metrics[t % len(metrics)]`` (``acc`` or ``acc_norm``)."""
    import random

    rng = random.Random(seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for t in range(n_tasks):
        name = f"toy_task_{t:02d}"
        angle = rng.uniform(0, math.pi / 2)
        a1, a2, c = round(math.cos(angle), 4), round(math.sin(angle), 4), round(rng.uniform(-0.5, 1.0), 4)
        rows = [{"question": f"{name} question {i}", "choices": ["alpha", "beta", "gamma", "delta"],
                 "answer": rng.randrange(N_CHOICES), "difficulty": round(rng.gauss(0, 1), 4), "a1": a1, "a2": a2, "c": c}
                for i in range(n_items)]
        data = folder / f"{name}.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in rows))
        cfg = {"task": name, "dataset_path": "json", "dataset_kwargs": {"data_files": {"test": str(data.resolve())}},
               "test_split": "test", "output_type": "multiple_choice",
               # Column names, not Jinja templates: lm-eval compiles a template per document (3 ms each).
               "doc_to_text": "question", "doc_to_choice": "choices", "doc_to_target": "answer",
               "metric_list": [{"metric": metrics[t % len(metrics)], "aggregation": "mean", "higher_is_better": True}],
               "metadata": {"version": 1.0}}
        import yaml

        (folder / f"{name}.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
        names.append(name)
    return names


def register():
    """Register ``standin`` in lm-eval's model registry (idempotent)."""
    global _REGISTERED
    if _REGISTERED is not None:
        return _REGISTERED
    from lm_eval.api.model import LM
    from lm_eval.api.registry import register_model

    @register_model("standin")
    class StandIn(LM):
        def __init__(self, pretrained: str = "standin", seed: int = 0, **kwargs):
            super().__init__()
            self.pretrained, self.seed = str(pretrained), int(seed)

        @classmethod
        def create_from_arg_string(cls, arg_string, additional_config=None):
            from lm_eval.utils import simple_parse_args_string

            args = simple_parse_args_string(arg_string) if isinstance(arg_string, str) else dict(arg_string)
            return cls(**args)

        @classmethod
        def create_from_arg_obj(cls, arg_dict, additional_config=None):
            return cls(**dict(arg_dict))

        def loglikelihood(self, requests, disable_tqdm=False):
            out = []
            for r in requests:
                pick = answer(self.seed, r.task_name, r.doc_id, r.doc)
                out.append((0.0 if r.idx == pick else -5.0, r.idx == pick))
            return out

        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            raise NotImplementedError("the stand-in answers multiple-choice tasks only")

        def generate_until(self, requests, disable_tqdm=False):
            # The chosen option's text, as "The answer is X." on some items and "X" alone on others, so a strict
            # and a lenient filter of one task score differently (the document carries "choices" and "answer").
            out = []
            for r in requests:
                pick = answer(self.seed, r.task_name, r.doc_id, r.doc)
                text = r.doc["choices"][pick]
                out.append(f"The answer is {text}." if _u(self.seed, r.task_name, r.doc_id, "form") < 0.5 else text)
            return out

    _REGISTERED = StandIn
    return StandIn


def population(tasks_dir: str, out: str, seeds: list, tasks: list, log_samples: bool = True) -> None:
    """Evaluate one stand-in model per seed on ``tasks``, writing lm-eval's own results (and samples) files."""
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager
    from lm_eval.utils import handle_non_serializable  # noqa: F401 - as the CLI serialises

    register()
    # Only the local folder: lm-eval's own 14,000 task files take ~15 s to index and none is used here.
    tm = TaskManager(include_path=tasks_dir, include_defaults=False)
    for seed in seeds:
        tracker = EvaluationTracker(output_path=out)
        results = simple_evaluate(model="standin", model_args=f"pretrained=standin/m{seed:02d},seed={seed}",
                                  tasks=list(tasks), task_manager=tm, log_samples=log_samples,
                                  evaluation_tracker=tracker, random_seed=0, numpy_random_seed=1234,
                                  torch_random_seed=1234, fewshot_random_seed=1234)
        samples = results.pop("samples") if log_samples else None
        tracker.save_results_aggregated(results=results, samples=samples)
        if log_samples:
            for task_name in results["configs"]:
                tracker.save_results_samples(task_name=task_name, samples=samples[task_name])


def main(argv: list) -> int:
    if argv and argv[0] == "cli":
        register()
        from lm_eval.__main__ import cli_evaluate

        sys.argv = ["lm_eval"] + argv[1:]
        cli_evaluate()
        return 0
    if argv and argv[0] == "population":
        spec = json.loads(argv[1])
        population(spec["tasks_dir"], spec["out"], spec["seeds"], spec["tasks"], spec.get("log_samples", True))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
