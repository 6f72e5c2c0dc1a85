"""What an lm-eval wheel says about the folder's needs, read from its source (no lm-eval installed).

Usage: python wheel_facts.py WHEEL...   (wheels from `pip download --no-deps lm_eval==X -d DIR`)

Prints per wheel: whether its results files record `lm_eval_version` (loggers/utils.py add_env_info), whether its
command line has `--samples`, and which side wins when a task name is both lm-eval's own and in --include_path
(lm_eval/tasks/__init__.py initialize_tasks: `{**tasks, **task_index}` keeps the first path, lm-eval's own folder;
`{**task_index, **tasks}` the last, the included folder).
"""
import re
import sys
import zipfile

for wheel in sys.argv[1:]:
    z = zipfile.ZipFile(wheel)
    names = set(z.namelist())
    read = lambda n: z.read(n).decode("utf-8") if n in names else ""  # noqa: E731
    utils = read("lm_eval/loggers/utils.py") + read("lm_eval/utils.py")
    main = read("lm_eval/__main__.py") + "".join(read(n) for n in names if n.startswith("lm_eval/_cli/"))
    tasks = read("lm_eval/tasks/__init__.py") + read("lm_eval/tasks/manager.py")
    merge = re.findall(r"task_index = \{\*\*(\w+), \*\*(\w+)\}", tasks)
    wins = {("tasks", "task_index"): "lm-eval's own", ("task_index", "tasks"): "the included folder's"}
    recorded, samples = '"lm_eval_version"' in utils, '"--samples"' in main
    runs = ", ".join(wins.get(m, str(m)) for m in merge) or "unknown"
    print(f"{wheel.rsplit('/', 1)[-1]}: lm_eval_version recorded: {recorded}; --samples: {samples}; "
          f"a task named as lm-eval's own runs: {runs}")
