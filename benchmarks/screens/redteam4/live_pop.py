"""A live lm-eval population whose task names are hostile (those lm-eval itself accepts), for the live run.

python live_pop.py ROOT [NAMES]: writes ROOT/tasks (stand-in tasks, renamed), ROOT/population (8 stand-in models' lm-eval
results and samples, written by lm-eval's own simple_evaluate, tests/lm_eval_standin.py)."""
import json, sys
from pathlib import Path

import yaml

TESTS = Path(__file__).resolve().parents[3] / "tests"
sys.path.insert(0, str(TESTS))
import lm_eval_standin as S  # noqa: E402

HOSTILE = ["{{ 7*7 }}", "key: value", "${HOME}", "&a [*a,*a]", "!function evil.fn", "arc_easy", "x*", "evil.yaml",
           "include", "plain_one"]


def main(root, names=None):
    root = Path(root)
    HOSTILE = names.split(",") if names else globals()["HOSTILE"]
    names = S.write_tasks(root / "tasks", n_tasks=len(HOSTILE), n_items=40)
    for old, new in zip(names, HOSTILE):
        p = root / "tasks" / f"{old}.yaml"
        cfg = yaml.safe_load(p.read_text())
        cfg["task"] = new
        p.write_text(yaml.safe_dump(cfg, sort_keys=False))
    S.population(str(root / "tasks"), str(root / "population"), list(range(1, 9)), HOSTILE)


if __name__ == "__main__":
    main(*sys.argv[1:3])  # ROOT [comma-separated task names]
