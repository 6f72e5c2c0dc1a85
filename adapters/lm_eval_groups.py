"""lm-eval's groups as the lm-eval adapter stores them: the user's own groups and the groups lm-eval names for their
place inside another group."""

from __future__ import annotations


def own_groups(group_subtasks) -> dict:
    """``{task: group}`` for the tasks (and subgroups) of each top-level group that is not one of lm-eval's own
    (:func:`harness_ext.store.lm_eval_tasks.shipped_group_names`): the user's group, whose results are stored under a benchmark of its name
    (``toybench``), so ``--benchmark toybench`` finds them. lm-eval's groups keep benchmark ``lm_eval``."""
    if not isinstance(group_subtasks, dict):
        return {}
    subs = {g: [t for t in v if isinstance(t, str)] for g, v in group_subtasks.items()
            if isinstance(g, str) and isinstance(v, list) and v}
    inner = {t for v in subs.values() for t in v}
    from harness_ext.store.lm_eval_tasks import shipped_group_names

    known = shipped_group_names()
    out: dict = {}
    for top in subs:
        if top in inner or top in known:
            continue
        todo, seen = [top], set()
        while todo:
            g = todo.pop()
            if g in seen:
                continue
            seen.add(g)
            out.setdefault(g, top)
            todo.extend(subs.get(g, ()))
    return out


def inline_groups(group_subtasks) -> dict:
    """``{group: parent}`` for the groups an lm-eval group defines inside its own YAML (``- group: stem``).

    lm-eval names such groups for their place in their parent only: ``stem``, ``humanities``, ``other`` and
    ``social sciences`` are the subgroups of ``mmlu_redux_generative``, ``mmlu_continuation``,
    ``mmlu_generative`` and five more of lm-eval's groups, each over other tasks. Stored under their own
    names, two families' ``stem`` of one model would meet in one cell as a conflict; so a group that is not one
    of lm-eval's own group names (:func:`harness_ext.store.lm_eval_tasks.shipped_group_names`) inside one that
    is keeps its parent's name in its dataset (:func:`inline_dataset`). A user's own group is its own benchmark
    (:func:`own_groups`), which keeps its subgroups apart already.
    """
    if not isinstance(group_subtasks, dict):
        return {}
    from harness_ext.store.lm_eval_tasks import shipped_group_names

    known = shipped_group_names()
    out: dict = {}
    for parent, subs in group_subtasks.items():
        if parent.__class__ is not str or parent not in known or not isinstance(subs, list):
            continue
        for g in subs:
            if g.__class__ is str and g not in known and group_subtasks.get(g):  # a group (it lists tasks)
                out.setdefault(g, parent)
    return out


def inline_dataset(parent: str, group: str) -> str:
    """The dataset name of group ``group`` defined inside lm-eval group ``parent``: ``mmlu_redux_generative (stem)``."""
    return f"{parent} ({group})"
