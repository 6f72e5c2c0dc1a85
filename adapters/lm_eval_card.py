"""lm-eval's details dataset cards: the ``results`` block a card quotes, read as the run's results file is.

``lm_eval --hf_hub_log_args push_results_to_hub=True,...`` pushes a details dataset whose card (``README.md``, front
matter ``pretty_name: Evaluation run of <model>``) quotes the latest run's ``results`` block under "## Latest
results", as ``{"all": <results>, <the same tasks again>}``; the Open LLM Leaderboard v2's details repositories
(``open-llm-leaderboard/<org>__<model>-details``) carry such cards. The card gives each task's ``metric,filter``
values, their standard errors (``<metric>_stderr,<filter>``) and lm-eval's ``alias``; it leaves out the rest of the
results file: ``groups``, ``group_subtasks``, ``n-shot``, ``n-samples``, ``versions``, ``higher_is_better``,
``configs`` and the run's ``config`` (model arguments). Read as the lm-eval adapter reads a v0.4 results file
(:func:`harness_ext.adapters.lm_eval.read_v04`), with what the card lacks inferred where it can be and said in notes:

* **The model**: the card's title (``Evaluation run of <model>``), the name lm-eval was given.
* **Groups**: lm-eval writes a task's place in its group into its alias (``" - leaderboard_bbh"``, then
  ``"  - leaderboard_bbh_boolean_expressions"``) and lists a group just before its tasks. A row the aliases nest
  tasks under is a group over them when each metric it shares with them lies between their values (as a mean of
  them does; lm-eval's groups are means weighted by size); one whose values do not is stored as a task. A row
  named as one of lm-eval's own groups (``harness_ext/data/lm_eval_groups.txt``) whose tasks the card does not
  list is stored as a group too.
* **Shots**: lm-eval's ``leaderboard_*`` tasks (the Open LLM Leaderboard v2's) take the shot counts of their YAMLs
  (BBH 3, GPQA 0, IFEval 0, MATH Level 5 4, MMLU-Pro 5, MuSR 0: a run that overrode ``--num_fewshot`` is not
  told apart); a group takes its tasks' count when they share one, as lm-eval's results files give it. Any other
  task has none (unknown).
* Sizes, versions and configurations are not stored (None); chance levels come from harness-ext's table, not from
  the task's answer choices; lower-is-better from lm-eval's metric names.
"""

from __future__ import annotations

import re

from harness_ext.errors import IngestError
from harness_ext.report import listed, plural
from harness_ext.types import SourceFile

#: lm-eval's leaderboard tasks by name prefix -> the shot count of their YAMLs (lm-eval 0.4's tasks/leaderboard).
LEADERBOARD_SHOTS = (("leaderboard_bbh", 3), ("leaderboard_gpqa", 0), ("leaderboard_ifeval", 0),
                     ("leaderboard_math_", 4), ("leaderboard_mmlu_pro", 5), ("leaderboard_musr", 0))
#: The indentation lm-eval writes before a task's alias: one space per level, then "- ".
_ALIAS_DEPTH = re.compile(r"^( +)- ")
#: A task name no lm-eval task has: a path separator, a control character.
_BAD_NAME = re.compile(r"[/\\\x00-\x1f\x7f]")
_MAX_NAME = 300


def is_lm_eval_block(block: dict) -> bool:
    """Whether a card's quoted block is lm-eval 0.4's (``metric,filter`` keys in its task objects)."""
    tasks = block.get("all") if isinstance(block.get("all"), dict) else block
    return any(isinstance(v, dict) and any(isinstance(k, str) and "," in k for k in v) for v in tasks.values())


def _results(block: dict, src: SourceFile) -> dict:
    """The run's results: lm-eval writes them under ``all`` and again beside it; the two must agree."""
    beside = {k: v for k, v in block.items() if k != "all"}
    results = block.get("all", beside)
    if not isinstance(results, dict):
        raise IngestError(src.path, "the results this details card quotes have an 'all' entry that is not an object "
                                    "of tasks")
    if "all" in block and beside and beside != results:
        differ = sorted(set(beside) ^ set(results)) or sorted(k for k in beside if beside[k] != results[k])
        raise IngestError(src.path, "the results this details card quotes differ between its 'all' copy and the "
                                    f"tasks listed beside it ({listed(map(str, differ), 4)}): not read")
    if not results:
        raise IngestError(src.path, "the results this details card quotes list no task")
    for task, metrics in results.items():
        if not isinstance(task, str) or not task.strip() or len(task) > _MAX_NAME or _BAD_NAME.search(task):
            raise IngestError(src.path, f"the details card names a task {str(task)[:80]!r}, which is no lm-eval task "
                                        "name (empty, too long, or with a path separator or control character)")
        if not isinstance(metrics, dict):
            raise IngestError(src.path, f"the details card's task {task!r} is {type(metrics).__name__}, expected an "
                                        "object of metrics")
        for k, v in metrics.items():
            if isinstance(v, (dict, list)):
                raise IngestError(src.path, f"the details card's task {task!r} has {k!r} = a nested "
                                            f"{type(v).__name__}, not a value")
    return results


def _depth(metrics: dict) -> int:
    alias = metrics.get("alias")
    m = _ALIAS_DEPTH.match(alias) if isinstance(alias, str) else None
    return len(m.group(1)) if m else 0


def _nesting(results: dict) -> dict:
    """``{row: [the rows the aliases nest directly under it]}`` for the rows that nest any."""
    children: dict = {}
    stack: list = []  # (depth, task) of the open rows
    for task, metrics in results.items():
        depth = _depth(metrics)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            children.setdefault(stack[-1][1], []).append(task)
        stack.append((depth, task))
    return children


def _values(metrics: dict) -> dict:
    """A row's numeric ``metric,filter`` values (not its standard errors or alias)."""
    return {k: v for k, v in metrics.items() if isinstance(k, str) and "," in k and "_stderr," not in k
            and isinstance(v, (int, float)) and not isinstance(v, bool)}


def _is_mean(row: dict, tasks: list) -> bool:
    """Whether each metric ``row`` shares with ``tasks`` lies between their values (any mean of them does), and
    it shares one at least; a row with no values at all (lm-eval's unscored group, ``{" ": " "}``) is a group."""
    own = _values(row)
    if not own:
        return True
    shared = False
    for k, v in own.items():
        vals = [x[k] for x in (_values(t) for t in tasks) if k in x]
        if vals:
            shared = True
            if not min(vals) - 1e-9 <= v <= max(vals) + 1e-9:
                return False
    return shared


def _leaderboard_shots(task: str):
    return next((n for prefix, n in LEADERBOARD_SHOTS if task.startswith(prefix)), None)


def card_doc(results: dict, src: SourceFile) -> dict:
    """The v0.4 results file the card's results stand for: ``results``, the groups the aliases give, the shot counts
    of lm-eval's leaderboard tasks; what was inferred said in ``src``'s notes."""
    from harness_ext.store.lm_eval_tasks import shipped_group_names

    nesting = _nesting(results)
    subtasks, not_means = {}, []
    for group, tasks in nesting.items():
        if _is_mean(results[group], [results[t] for t in tasks]):
            subtasks[group] = tasks
        else:
            not_means.append(group)
    known = shipped_group_names()
    named = {t: results[t] for t in results if t not in nesting and t in known}
    shots = {t: _leaderboard_shots(t) for t in results if t not in subtasks and t not in named}
    shots = {t: n for t, n in shots.items() if n is not None}
    for group in reversed(list(subtasks)):  # innermost first: lm-eval lists a group before its tasks
        counts = {shots.get(t) for t in subtasks[group]}
        if len(counts) == 1 and None not in counts:
            shots[group] = counts.pop()
    _notes(src, results, subtasks, not_means, named, shots)
    return {"results": results, "group_subtasks": subtasks, "groups": named, "n-shot": shots}


def _notes(src: SourceFile, results: dict, subtasks: dict, not_means: list, named: dict, shots: dict) -> None:
    n_groups = len(subtasks) + len(named)
    n_stderr = sum(1 for m in results.values() for k in m if isinstance(k, str) and "_stderr," in k)
    stderr = plural(n_stderr, "'_stderr' entry", "'_stderr' entries")
    src.note(f"lm-eval's results as this details dataset's card quotes them (its latest run): "
             f"{plural(len(results) - n_groups, 'task')} and {plural(n_groups, 'group')}, read as its results file is; "
             f"{stderr} read as the scores' standard errors. Not in the card, so not stored: the run's shot counts (but "
             "those below), task versions, sample counts, higher_is_better, task configurations (chance levels from "
             "harness-ext's table) and model arguments")
    if subtasks:
        src.note(f"{plural(len(subtasks), 'group')} inferred from the aliases' nesting, each score "
                 f"between its tasks' (as their mean is): {listed(sorted(subtasks), 8)}")
    if not_means:
        src.note(f"{plural(len(not_means), 'row')} the aliases nest tasks under but whose scores are "
                 f"not between theirs (so not their mean) stored as tasks: {listed(sorted(not_means), 8)}")
    if named:
        src.note(f"{len(named)} of lm-eval's group names without their tasks in the card stored as groups: "
                 f"{listed(sorted(named), 8)}")
    if shots:
        src.note(f"{plural(len(shots), 'row')} of lm-eval's leaderboard tasks (the Open LLM Leaderboard "
                 "v2's) given the shot counts of their YAMLs, which the card does not state (BBH 3, GPQA 0, IFEval 0, "
                 "MATH 4, MMLU-Pro 5, MuSR 0; groups their tasks' count)")
    unknown = len(results) - len(shots)
    if unknown:
        src.note(f"{plural(unknown, 'row')} without a shot count (the card gives none): "
                 f"{listed(sorted(t for t in results if t not in shots), 6)}")


def read_card(src: SourceFile, model: str, block: dict):
    """The rows of an lm-eval details card's quoted ``block`` (:func:`is_lm_eval_block`) for ``model``."""
    from harness_ext.adapters.lm_eval import _check_proportions, _rows, _unscored_groups
    from harness_ext.adapters.lm_eval_values import drop_missing

    if not model.strip() or len(model) > _MAX_NAME or re.search(r"[\x00-\x1f\x7f]", model):
        raise IngestError(src.path, f"the details card's title names no usable model ({model[:80]!r})")
    doc = card_doc(_results(block, src), src)
    rows = _rows(src.path, doc["results"], v04=True, model=model, model_meta=None, default_shots=None, doc=doc)
    return _check_proportions(_unscored_groups(drop_missing(rows, src), doc, src), src)
