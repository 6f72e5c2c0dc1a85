"""lm-eval's groups as the lm-eval adapter stores them: the user's own groups, the groups lm-eval names for their
place inside another group, their member lists, and the groups without a row whose members carry them."""

from __future__ import annotations

from harness_ext.report import listed


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


#: The most direct members a group's list may hold to be kept (lm-eval's largest groups list a few hundred).
MAX_MEMBERS = 5_000
#: The longest member name kept (lm-eval's task names are a few dozen characters).
MAX_NAME = 300


def group_members(group_subtasks) -> tuple:
    """``({group: [direct members]}, [what was not kept])`` of a v0.4 file's ``group_subtasks``.

    A group's members are kept when its list is a list of distinct non-empty names (strings) of at most
    :data:`MAX_NAME` characters, at most :data:`MAX_MEMBERS` of them, and the group does not reach itself through
    its members (a cycle, which lm-eval cannot write: its groups form a tree). A task's own entry (an empty list)
    names no group. Anything else is said (``"mmlu (a member is a dict)"``) and not kept: the file is a third
    party's and the store keeps only what is a group's membership.
    """
    if not isinstance(group_subtasks, dict):
        return {}, []
    kept, bad = {}, []
    for g, v in group_subtasks.items():
        if not isinstance(v, list) or not v:
            if v not in ([], None):
                bad.append(f"{g} ({type(v).__name__}, not a list)")
            continue
        why = _bad_members(v)
        if why:
            bad.append(f"{g} ({why})")
        else:
            kept[g] = list(v)
    cyclic = _on_cycles(kept)
    for g in sorted(cyclic):
        del kept[g]
        bad.append(f"{g} (reaches itself through its members)")
    return kept, bad


def _bad_members(v: list) -> str:
    """Why a member list is not kept (``""``: it is)."""
    if len(v) > MAX_MEMBERS:
        return f"{len(v):,} members, more than {MAX_MEMBERS:,}"
    odd = next((m for m in v if m.__class__ is not str), None)
    if odd is not None or any(m.__class__ is not str for m in v):
        return f"a member is a {type(odd).__name__}"
    if any(not m.strip() or len(m) > MAX_NAME for m in v):
        return f"a member's name is empty or longer than {MAX_NAME} characters"
    if len(set(v)) != len(v):
        return "a member listed twice"
    return ""


def _on_cycles(members: dict) -> set:
    """The groups of ``members`` that reach themselves through their members (iteratively: no recursion limit)."""
    state: dict = {}  # 1: on the path, 2: done
    cyclic: set = set()
    for root in members:
        if root in state:
            continue
        path, stack = [], [(root, iter(members[root]))]
        state[root] = 1
        path.append(root)
        while stack:
            g, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                path.pop()
                state[g] = 2
                continue
            if nxt not in members:
                continue
            if state.get(nxt) == 1:  # every group on the path from nxt back to here is on the cycle
                cyclic.update(path[path.index(nxt):])
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(members[nxt])))
    return cyclic


def rowless_groups(out, members: dict) -> tuple:
    """Give the members of each group of ``members`` (:func:`group_members`' kept lists) that has no row in ``out``
    its membership; returns ``(those groups' names, the names of such groups not kept: longer than
    :data:`MAX_NAME` characters or blank, {group: number of its tasks} of those kept nowhere: none of its tasks has a
    row in the file)``.

    lm-eval writes a group without a score of its own as ``{" ": " ", "alias": ...}``; the reader makes it one from
    its tasks when they share a metric, else the group has no row (the Open LLM Leaderboard's ``leaderboard`` of
    lm-eval 0.4.7: ``leaderboard_bbh``'s ``acc_norm``, ``leaderboard_math_hard``'s ``exact_match``, IFEval's
    ``prompt_level_strict_acc``, MMLU-Pro's ``acc``). The results table holds scores only, so such a group's kept
    member list (:func:`group_members`) goes into the dataset metadata of each of its direct members that has a row
    (:data:`~harness_ext.store.lm_eval_tasks.IN_GROUPS`, ``{group: members}``); a member that is itself a group
    without a row passes it on to its own members. ``reduce --items --benchmark leaderboard`` then finds it.

    A group none of whose tasks has a row (lm-eval gave none of them a score: a run whose tasks all failed, or whose
    values are all missing marks) has nothing to carry its list. The store keeps no table of groups beside their
    rows, and a list no task carries could not be found by ``reduce`` (which draws documents of tasks with scores),
    so it is not kept; the count of such groups, each with its number of tasks, is returned for the file's notes.
    A later file that scores its tasks with it keeps it.
    """
    from harness_ext.store.lm_eval_tasks import IN_GROUPS

    if not members:
        return [], [], {}
    rowed = {k.task for k in out.kinds}
    odd = [g for g in members if g not in rowed and (len(g) > MAX_NAME or not g.strip())]
    rowless = [g for g in members if g not in rowed and g not in odd]
    if not rowless:
        return [], odd, {}
    carry: dict = {}  # task with a row -> {rowless group: its members}
    reached = _rows_reached(members, rowed)
    for g in rowless:
        for m in reached[g]:
            carry.setdefault(m, {})[g] = members[g]
    carried = {g for c in carry.values() for g in c}
    nowhere = [g for g in rowless if g not in carried]
    if nowhere:  # each such group's number of tasks: the members that are no group it reaches, each worked out once
        leaves = _rows_reached(members, {m for ms in members.values() for m in ms if m not in members})
        nowhere = {g: len(leaves.get(g, ())) for g in nowhere}
    else:
        nowhere = {}
    if not carry:
        return [], odd, nowhere
    made: dict = {}  # one new metadata dict per (shared dict, task): rows of one task keep sharing theirs
    md_col = out.dataset_metadata
    for i, k in enumerate(out.kinds):
        groups = carry.get(k.task)
        if groups:
            key = (id(md_col[i]), k.task)
            if key not in made:
                made[key] = {**(md_col[i] or {}), IN_GROUPS: groups}
            md_col[i] = made[key]
    out._records = None
    return [g for g in rowless if g in carried], odd, nowhere



def note_nowhere(nowhere: dict, src) -> None:
    """Note (``src.note``) the groups without a row whose member lists are kept nowhere (:func:`rowless_groups`)."""
    if nowhere:
        one = len(nowhere) == 1
        src.note(f"{len(nowhere)} group{'' if one else 's'} without a score none of whose tasks has a score in the "
                 f"file: {'its' if one else 'their'} member list{'' if one else 's'} kept nowhere (no task to carry "
                 f"{'it' if one else 'them'}), so reduce --items cannot take {'its' if one else 'their'} tasks by "
                 f"{'its' if one else 'their'} name; a later file scoring {'its' if one else 'their'} tasks with "
                 f"{'it keeps it' if one else 'them keeps them'}: "
                 + listed((f"{g} ({n} task{'s' * (n != 1)})" for g, n in nowhere.items()), 8))


def _rows_reached(members: dict, rowed: set) -> dict:
    """``{group: the members with a row it reaches}`` of each group of ``members`` without a row: its direct members
    with a row, and those its members without a row reach (a member with a row is not looked into); each group worked
    out once (:func:`~harness_ext.store.lm_eval_tasks.fold_nested`)."""
    from harness_ext.store.lm_eval_tasks import fold_nested

    def expand(g):
        return [m for m in members[g] if m not in rowed and m in members], [m for m in members[g] if m in rowed], False

    return {g: items for g, (items, _) in fold_nested((g for g in members if g not in rowed), expand).items()}


def note_members(doc: dict, src, dropped: list) -> None:
    """Note (``src.note``) the groups whose member lists (``group_subtasks``) are not kept (``dropped``: the second
    part of :func:`group_members`)."""
    subs = doc.get("group_subtasks")
    if subs is not None and not isinstance(subs, dict):
        src.note(f"group_subtasks is a {type(subs).__name__}, not an object of groups: no group's members kept")
    bad = dropped
    if bad:
        src.note(f"{len(bad)} group{'s' * (len(bad) != 1)} of group_subtasks whose member list is not kept (reduce "
                 "--items cannot take its tasks by its name): " + listed(bad, 8))


def note_inline(doc: dict, src) -> None:
    """Note (``src.note``) the groups stored under their parent's name (:func:`inline_groups`), with the names they
    are stored as."""
    inline = inline_groups(doc.get("group_subtasks"))
    if inline:
        src.note(f"{len(inline)} group{'s' * (len(inline) != 1)} lm-eval names for {'its' if len(inline) == 1 else 'their'} "
                 "place in another group stored under that group's name: "
                 + listed((f"{g} as {inline_dataset(p, g)!r}" for g, p in inline.items()), 8))
