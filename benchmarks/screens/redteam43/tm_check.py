"""lm-eval's own TaskManager indexing a written folder, and its YAML loader reading the group file (run with an
lm-eval venv's python): python tm_check.py FOLDER [FOLDER ...]. Prints the group's alias and task list as lm-eval
reads them; no dataset is downloaded."""
import sys

from lm_eval.tasks import TaskManager
from lm_eval import utils

for folder in sys.argv[1:]:
    try:
        tm = TaskManager(include_path=folder, include_defaults=False)
        idx = {k: v for k, v in tm.task_index.items()}
        path = f"{folder}/harness_ext_reduced.yaml"
        if hasattr(utils, "load_yaml_config"):  # up to 0.4.9
            cfg = utils.load_yaml_config(path, mode="full")
        else:  # 0.4.10 on
            from lm_eval.tasks._yaml_loader import load_yaml
            cfg = load_yaml(path, resolve_func=True)
        print(f"{folder}: indexed {sorted(idx)[:6]} ({len(idx)}); group {cfg.get('group')!r}; alias "
              f"{cfg.get('group_alias')!r}; tasks {[t if isinstance(t, str) else t.get('task') for t in cfg['task']]}; "
              f"keys {sorted(cfg)}")
    except Exception as e:  # noqa: BLE001
        print(f"{folder}: {type(e).__name__}: {e}")
