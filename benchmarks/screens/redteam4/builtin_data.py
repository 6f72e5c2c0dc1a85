"""How often a real lm-eval results file's recorded dataset differs from the installed lm-eval's own task of that name.

python builtin_data.py FOLDER...: every results*.json under FOLDER, each recorded task config that lm-eval has built in."""
import json, sys
from collections import Counter
from pathlib import Path

from harness_ext.store.lm_eval_tasks import (builtin_dataset, builtin_task_index, lm_eval_tasks_dir,
                                           other_data_than_builtin)


def main(*folders):
    root = lm_eval_tasks_dir()
    index = builtin_task_index(root)
    same, differ, files = Counter(), Counter(), 0
    for folder in folders:
        for p in Path(folder).rglob("results*.json"):
            try:
                configs = json.loads(p.read_text()).get("configs") or {}
            except (ValueError, OSError, AttributeError):
                continue
            files += 1
            for t, c in configs.items():
                if t not in index or not isinstance(c, dict):
                    continue
                b = builtin_dataset(t)
                other = other_data_than_builtin(t, c)
                rec = (c.get("dataset_path"), c.get("dataset_name"))
                (same if other is None else differ)[(t, rec, b)] += 1
    print(f"{files} results files; {sum(same.values())} recorded configs of built-in tasks read as lm-eval's "
          f"own task, {sum(differ.values())} as other (local) data")
    for (t, rec, b), n in differ.most_common(40):
        print(f"  {n:4d} {t}: recorded {rec}, installed {b}")


if __name__ == "__main__":
    main(*sys.argv[1:])
