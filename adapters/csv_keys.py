"""Wide CSV rows keyed by more than the model: a task column, an entrant column, and columns that never vary.

Leaderboards are not all one row per model:

* **A task column.** A board with one row per model and task (``Model, F1 Score, Exact Match Score, Task,
  Description``: an aviation NLP board) names the task in a text column. Read as model metadata, each model's rows
  collapsed onto two datasets (``F1 Score``, ``Exact Match Score``) and the other tasks' values were reported as
  conflicts. A column named as a task (:data:`TASK_HEADERS`) keys the rows: its cell is the row's dataset and each
  score column one of its metrics (:func:`task_column`); a text column that describes the task (the same cell for
  every row of a task, varying within a model) is stored with the dataset, not the model (:func:`task_metadata`).
* **An entrant column.** A competition board names each row by its team and gives the base model most teams
  share (``rank, team, ..., score, ..., model``: 48 teams, 34 of them on one model). Read by the ``model``
  column, the teams on one base model collapsed onto it. When the model column repeats and a column named as the
  entrant (:data:`ENTRANT_HEADERS`) holds a different name on every row, that column names the rows
  (:func:`entrant_column`) and the model column is kept as their metadata.
* **Interval bounds.** A column named ``<name>_lo`` or ``_hi`` (``_low``, ``_upper``, ...) beside a column named
  ``<name>`` is that score's interval bound, model metadata (:func:`bound_columns`).
* **Columns that never vary.** A pairwise-rating board repeats its fitted model's parameter on every row
  (``thurstone_sigma``: 1.50126700954137 for all 47 models), which scores none of them. A numeric column with one
  value on every one of at least :data:`CONSTANT_MIN_ROWS` rows, in a table whose other score columns vary, is model
  metadata (:func:`constant_columns`), unless that value is 0 or full marks (1, 100): a task every model fails, or
  every model passes, is a score.

Every such reading is noted with its counts and how to override it.
"""

from __future__ import annotations

import re

from harness_ext.errors import IngestError
from harness_ext.report import listed

#: Column names that name the task a row scores (a text column, or numbers used as task ids).
TASK_HEADERS = ("task", "tasks", "task name", "task_name", "subtask", "sub-task", "scenario", "subset", "dataset",
                "dataset name", "dataset_name")
#: Column names that name a row's entrant when the model column names the base model several entrants share.
ENTRANT_HEADERS = ("team", "team name", "team_name", "entrant", "participant", "submission", "submission name",
                   "submission_name", "submitter", "agent", "system", "system name", "system_name")
#: Column names of the way a model was run when a board lists one model several times (``zero-shot``, ``SFT``).
VARIANT_HEADERS = ("method", "methods", "setting", "settings", "variant", "mode", "prompting", "prompt", "approach",
                   "strategy", "configuration", "config", "precision", "dtype", "weight type", "weight_type",
                   "quantization")
#: Rows a column must fill with one value to be read as a setting rather than a score.
CONSTANT_MIN_ROWS = 5
#: Values every model may really score: nothing, or full marks as a proportion or a percentage.
FLOOR_OR_FULL = (0.0, 1.0, 100.0)


def task_column(lower, skip, specs, declared_meta, header):
    """Index of the column naming each row's task (:data:`TASK_HEADERS`), or None. A column the sidecar or
    ``--meta-columns`` declares (metadata, or a score) is what it declares, not a key; ``skip``: the model and
    benchmark columns."""
    for j, h in enumerate(lower):
        if h in TASK_HEADERS and j not in skip and h not in declared_meta and not specs.get(header[j], {}).get("kind"):
            return j
    return None


def entrant_column(src, header, lower, mc, cells_of):
    """The column that names the rows when the model column (``mc``) repeats and an entrant column
    (:data:`ENTRANT_HEADERS`) holds a different, non-empty name on every row; else ``mc``. ``cells_of(j)``: column
    ``j``'s cells. Noted with the counts: the model column is then the rows' metadata."""
    if mc is None:
        return mc
    models = [c.strip() for c in cells_of(mc)]
    if len(set(models)) == len(models):
        return mc
    for j, h in enumerate(lower):
        if h not in ENTRANT_HEADERS or j == mc:
            continue
        names = [c.strip() for c in cells_of(j)]
        if all(names) and len(set(names)) == len(names):
            top = max(set(models), key=models.count)
            src.note(f"column {header[mc]!r} repeats ({top!r} on {models.count(top)} of {len(models)} rows) while "
                     f"{header[j]!r} names every row differently: the rows are stored as their {header[j]!r} "
                     f"({len(names)} models), {header[mc]!r} as each one's metadata (a board of entrants sharing "
                     "base models)")
            return j
    return mc


def variant_column(src, header, lower, mc, cells_of, skip):
    """The column naming the way each row's model was run (:data:`VARIANT_HEADERS`) when the model column repeats and
    the model with that column names every row differently (a board listing one model zero-shot, with SFT and with
    GRPO), else None; noted. ``skip``: the columns that key the rows otherwise (a task column)."""
    from collections import Counter

    models = [c.strip() for c in cells_of(mc)]
    count = Counter(models)
    if len(count) == len(models):
        return None
    for j, h in enumerate(lower):
        if h not in VARIANT_HEADERS or j == mc or j in skip:
            continue
        values = [c.strip() for c in cells_of(j)]
        pairs = list(zip(models, values))
        if len(set(pairs)) == len(pairs) and all(v for m, v in pairs if count[m] > 1):
            repeated = [m for m, n in count.items() if n > 1]
            src.note(f"{len(repeated)} model{'s' * (len(repeated) != 1)} listed on several rows that {header[j]!r} "
                     f"tells apart ({listed(repeated, 4)}): each row stored as the model at its {header[j]!r}, "
                     f"'<model> (<{header[j]}>)', a variant of the model")
            return j
    return None


def task_metadata(header, meta_cols, models, tasks, cell) -> list:
    """The metadata columns that describe the task rather than the model: one non-empty cell per task wherever
    given, and more than one for some model (a task's description). ``cell(i, j)``: row ``i``'s parsed cell of
    column ``j`` (None: empty)."""
    out = []
    for j in meta_cols:
        per_task, per_model = {}, {}
        for i, (m, t) in enumerate(zip(models, tasks)):
            v = cell(i, j)
            if v is not None:
                per_task.setdefault(t, set()).add(repr(v))
                per_model.setdefault(m, set()).add(repr(v))
        if per_task and all(len(s) == 1 for s in per_task.values()) and any(len(s) > 1 for s in per_model.values()):
            out.append(j)
    return out


def row_tasks(src, rows, task_col, header) -> list:
    """Each ``(line number, row)``'s task (its cell in ``task_col``); a row without one is an error naming it."""
    tasks = []
    for n, row in rows:
        t = row[task_col].strip()
        if not t:
            raise IngestError(src.path, f"row {n} has no task in column {header[task_col]!r} (its scores are read as "
                                        "that task's metrics)")
        tasks.append(t)
    return tasks


def task_metrics(header, score_cols, specs, tasks, vals_of) -> dict:
    """``(task, column) -> primary`` for a task-keyed table: each task's primary metric is the first score column
    (file order) with a value in one of its rows. ``vals_of(j)``: column ``j``'s values (None: missing)."""
    first: dict = {}
    for j in score_cols:
        vals = vals_of(j)
        for i, t in enumerate(tasks):
            if vals[i] is not None:
                first.setdefault(t, j)
    return {(t, j): first.get(t) == j for t in dict.fromkeys(tasks) for j in score_cols}


def note_task_column(src, header, task_col, tasks, score_cols, described) -> None:
    """Say that the rows are read per model and task."""
    names = list(dict.fromkeys(tasks))
    src.note(f"column {header[task_col]!r} names each row's task: its {len(names)} value{'s' * (len(names) != 1)} "
             f"({listed(names, 4)}) are the datasets, the score columns ({listed([header[j] for j in score_cols], 6)}) "
             "their metrics" + (f"; {listed([header[j] for j in described], 6)} describe{'s' * (len(described) == 1)} "
                                "the task, stored with its dataset" if described else "")
             + "; declare the column with --meta-columns to read the rows per model instead")


def constant_columns(header, score_cols, specs, vals_of) -> list:
    """The score columns with one value on every one of at least :data:`CONSTANT_MIN_ROWS` rows, in a table where
    some other score column varies, that value not a floor or full marks (:data:`FLOOR_OR_FULL`); a column the
    sidecar declares is never one. ``vals_of(j)``: its values (None or
    NaN: missing)."""
    import numpy as np

    const, varying = [], False
    for j in score_cols:
        vals = np.asarray(vals_of(j), dtype=float)
        vals = vals[~np.isnan(vals)]
        if vals.size >= CONSTANT_MIN_ROWS and vals.min() == vals.max():
            if not specs.get(header[j], {}).get("kind") and vals[0] not in FLOOR_OR_FULL:
                const.append(j)
        elif vals.size and vals.min() != vals.max():
            varying = True
    return const if varying else []


#: Suffixes of a column holding a bound of another column's interval (``cat_satisfaction_lo`` beside
#: ``cat_satisfaction``).
_BOUND = re.compile(r"^(?P<base>.+?)[ _-]+(?:lo|hi|low|high|lower|upper|lb|ub)$", re.I)


def bound_columns(header, score_cols, specs) -> list:
    """The score columns named as a bound of another column's interval: ``<name>_lo`` / ``_hi`` (``_low``, ``_high``,
    ``_lower``, ``_upper``, ``_lb``, ``_ub``) beside a column named ``<name>``; a column the sidecar declares is never
    one. Read as scores, a board's confidence bounds were datasets beside their score."""
    names = {header[j].strip().lower() for j in score_cols}
    out = []
    for j in score_cols:
        m = _BOUND.match(header[j].strip())
        if m and m.group("base").lower() in names and not specs.get(header[j], {}).get("kind"):
            out.append(j)
    return out
