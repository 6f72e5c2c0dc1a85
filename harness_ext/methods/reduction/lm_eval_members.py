"""lm-eval groups by the members ``ingest`` keeps with them: a group named in ``reduce --items``'s query takes its
tasks, and a reduction of exactly one group's tasks is that group.

lm-eval's results files list each group's direct members (``group_subtasks``: tasks and subgroups, nested: the Open
LLM Leaderboard's ``leaderboard`` holds ``leaderboard_bbh``, which holds its 24 ``leaderboard_bbh_*`` tasks); the
lm-eval adapter keeps them in the group's dataset metadata (:data:`~harness_ext.store.lm_eval_tasks.MEMBERS`).
``reduce --items`` draws documents of tasks, so a group named in ``--datasets`` or ``--benchmark`` (what
``lm_eval --tasks`` takes) stands for its leaf tasks (:func:`take_group_tasks`), and a reduction whose tasks are
exactly one group's leaves is named after that group (:func:`member_group`). A store read before the members were
kept has none: the query is left as it was, and ``reduce`` says that ``ingest --reread`` would add them.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ...errors import HarnessExtError
from ...report import listed, plural
from ...store.globs import as_globs, is_glob, matches
from ...store.lm_eval_tasks import IN_GROUPS, MEMBERS, OTHER_MEMBERS

#: The harness of the lm-eval adapter's datasets (their metadata's ``harness``).
LM_EVAL = "lm-evaluation-harness"
#: What a store read before the members were kept is told.
REREAD = ("the store keeps no member list for {what} (its results files were read by an older harness-ext, or "
          "name none: lm-eval writes group_subtasks from 0.4.2 on); 'harness-ext ingest --reread PATHS' reads them "
          "again and keeps it")


def stored_groups(store) -> dict:
    """``{name: {"benchmark", "dataset", "members", "scored", "n_lists"}}`` of the lm-eval groups the store holds
    (aggregate datasets), under both their task name (``stem``) and their dataset name (``mmlu_redux_generative
    (stem)``); ``members`` is None where the store keeps none (a store read before, a file without
    ``group_subtasks``). A group without a row (no score: ``leaderboard``), whose members carry its member list, is
    there too, with ``scored`` False and ``benchmark`` None.

    A group whose files list different members (lm-eval's releases change some groups) has the union of its lists,
    the first file's members first (``n_lists``: how many distinct lists; the later ones are kept beside the first,
    :data:`~harness_ext.store.lm_eval_tasks.OTHER_MEMBERS`): every task a file counts in the group is taken, and the
    reduction says so."""
    rows = store.con.execute(
        f"""SELECT benchmark, name, task, json_extract(metadata, '$.{MEMBERS}') AS members,
                   json_extract(metadata, '$.{OTHER_MEMBERS}') AS others FROM datasets
            WHERE kind = 'aggregate' AND json_extract_string(metadata, '$.harness') = '{LM_EVAL}'
            ORDER BY dataset_id""").fetchall()
    out: dict = {}
    for bench, name, task, members, others in rows:
        kept, n_lists = _union(_member_list(members), _other_lists(others, task or name))
        for key in dict.fromkeys(k for k in (task, name) if k):
            have = out.get(key)
            if have is None or (have["members"] is None and kept is not None):
                out[key] = {"benchmark": bench, "dataset": name, "members": kept, "scored": True, "n_lists": n_lists}
    for group, members, n_lists in _rowless(store):
        if out.get(group) is None or out[group]["members"] is None:
            out[group] = {"benchmark": None, "dataset": group, "members": members, "scored": False,
                          "n_lists": n_lists}
    return out


def _other_lists(text, group) -> list:
    """The member lists of ``group`` kept beside its first (:data:`OTHER_MEMBERS` as stored), each a list of names."""
    try:
        v = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return []
    lists = v.get(group) if isinstance(v, dict) else None
    return [m for x in (lists if isinstance(lists, list) else ()) if (m := _member_list(x)) is not None]


def _union(first, others: list) -> tuple:
    """``(members, number of distinct lists)``: ``first`` then each other list's members it lacks."""
    if first is None:
        return None, 0
    lists = [first, *(o for o in others if o != first)]
    return list(dict.fromkeys(m for x in lists for m in x)), len({tuple(x) for x in lists})


def _rowless(store) -> list:
    """``[(group, members, number of lists)]`` of the lm-eval groups without a row that the store's datasets are
    members of (:data:`~harness_ext.store.lm_eval_tasks.IN_GROUPS`: lm-eval gave them no score and their tasks share
    no metric), each group once: its first dataset's list, with the other lists any of them keeps (:func:`_union`)."""
    rows = store.con.execute(
        f"""SELECT g, o FROM (SELECT CAST(json_extract(metadata, '$.{IN_GROUPS}') AS VARCHAR) AS g,
                                     CAST(json_extract(metadata, '$.{OTHER_MEMBERS}') AS VARCHAR) AS o,
                                     min(dataset_id) AS first FROM datasets
                              WHERE json_extract_string(metadata, '$.harness') = '{LM_EVAL}'
                                AND json_extract(metadata, '$.{IN_GROUPS}') IS NOT NULL GROUP BY g, o)
            ORDER BY first""").fetchall()
    out: dict = {}
    others: dict = {}
    for text, other in rows:
        try:
            groups = json.loads(text)
        except ValueError:
            continue
        for g, members in (groups.items() if isinstance(groups, dict) else ()):
            kept = _member_list(members)
            if isinstance(g, str) and kept is not None:
                out.setdefault(g, kept)
                others.setdefault(g, []).extend(_other_lists(other, g) + ([kept] if kept != out[g] else []))
    return [(g, *_union(first, others.get(g, []))) for g, first in out.items()]


def _member_list(text):
    """A stored member list, or None (none kept, or not a list of names: a store edited by hand)."""
    try:
        v = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return None
    return v if isinstance(v, list) and v and all(isinstance(m, str) for m in v) else None


def leaf_tasks(groups: dict, name: str) -> tuple:
    """``(leaf task names in order, subgroups without a member list)`` of group ``name``: its members, each subgroup
    replaced by its own leaves (a group lm-eval names for its place in ``name``, ``stem``, is looked up as
    ``name (stem)`` first). Each group is expanded once, so a cycle (which a hand-made store could hold) ends."""
    leaves, unknown, seen = [], [], set()
    todo = [(name, None)]
    while todo:
        g, parent = todo.pop()
        info = (groups.get(f"{parent} ({g})") if parent else None) or groups.get(g)
        key = info["dataset"] if info else g
        if key in seen:
            continue
        seen.add(key)
        if info is None or info["members"] is None:
            if info is not None and parent is not None:
                unknown.append(g)
            elif parent is not None:
                leaves.append(g)
            continue
        todo.extend((m, g) for m in reversed(info["members"]))
    return list(dict.fromkeys(leaves)), unknown


def take_group_tasks(store, benchmarks, datasets) -> dict:
    """The query with each lm-eval group it names replaced by the group's leaf tasks.

    A plain name (no glob) in ``datasets`` that is a group the store keeps members for, and no task, becomes its
    leaf tasks; a name in ``benchmarks`` that is no stored benchmark but such a group does too (its tasks then
    filtered by ``datasets``, when given). Returns ``{"benchmarks", "datasets", "taken": [(group, n tasks)], "notes":
    [...]}``; ``notes`` say what was taken and, for a group the store keeps no members for, that ``ingest --reread``
    would add them (the query is then as given).

    Raises
    ------
    HarnessExtError
        A group named in ``--benchmark`` and ``--datasets`` that select none of its tasks.
    """
    out = {"benchmarks": benchmarks, "datasets": datasets, "taken": [], "notes": []}
    names = [*as_globs(datasets), *(benchmarks or ())]
    if not any(not is_glob(n) for n in names):
        return out
    groups = stored_groups(store)
    if not groups or not any(n in groups for n in names):
        return out
    held = store.con.execute(
        f"""SELECT DISTINCT benchmark, name, task, coalesce(kind, 'dataset') FROM datasets
            WHERE json_extract_string(metadata, '$.harness') = '{LM_EVAL}'""").fetchall()
    tasks = {x for _, n, t, k in held if k != "aggregate" for x in (n, t) if x}
    benches = {b for b, *_ in store.con.execute("SELECT DISTINCT benchmark FROM datasets").fetchall()}
    name_of = {t: n for _, n, t, k in held if k != "aggregate" and t}
    globs, new_benches, picked = [], [], []
    for n in as_globs(datasets):
        got = _leaves(groups, n, tasks, out) if not is_glob(n) and n not in tasks else None
        globs += got if got is not None else [n]
    for b in benchmarks or ():
        got = _leaves(groups, b, tasks, out) if not is_glob(b) and b not in benches else None
        if got is None:
            new_benches.append(b)
        else:
            picked += got
    if picked:  # a group named in --benchmark: its tasks, as far as --datasets keeps them
        if datasets:
            picked = [t for t in picked if matches(t, globs) or matches(name_of.get(t, t), globs)]
            if not picked:
                raise HarnessExtError(f"--benchmark {', '.join(g for g, _ in out['taken'])} (lm-eval group) and "
                                      f"--datasets {' '.join(as_globs(datasets))} select none of its tasks")
        globs = picked
    if not out["taken"]:  # nothing taken: the query as given
        return out
    out["benchmarks"] = new_benches or None
    out["datasets"] = tuple(dict.fromkeys(globs)) if globs else datasets
    return out


#: The lm-eval 0.4 reader's revision from which the members of a group without a row are kept (``in_groups``).
ROWLESS_FROM = 7


def rowless_hint(store, names) -> str:
    """What a query that matched nothing is told when a plain name in it is one of lm-eval's group names the store
    keeps no members for (``""`` otherwise). When some lm-eval 0.4 results were read before :data:`ROWLESS_FROM`:
    such a group lm-eval wrote without a score (``leaderboard`` in 0.4.7) has no row, and only later reads keep its
    members with its tasks. Else no file gave the group with a score of one of its tasks (a group none of whose tasks
    has one keeps its list nowhere, which its file's notes said)."""
    from ...store.lm_eval_tasks import shipped_group_names

    plain = [n for n in names if n and not is_glob(n)]
    if not plain:
        return ""
    known, held = shipped_group_names(), stored_groups(store)
    missing = [n for n in plain if n in known and n not in held]
    if not missing:
        return ""
    old = store.con.execute(
        "SELECT count(*) FROM sources WHERE adapter = 'lm_eval_v04' AND TRY_CAST(reader AS INTEGER) < ?",
        [ROWLESS_FROM]).fetchall()[0][0]
    one = len(missing) == 1
    if not old:  # read by today's reader: no file gave the group with a score of one of its tasks
        return (f". {listed(missing, 3)} {'is one of lm-eval' if one else 'are lm-eval'}'s group names the store keeps "
                f"no member list for: a results file keeps a group's list when it gives the group with a score of one "
                f"of its tasks at least (ingest notes a group whose tasks have none, its list kept nowhere); name its "
                f"tasks instead, or ingest a file that scores them")
    return (f". {listed(missing, 3)} {'is an lm-eval group' if one else 'are lm-eval groups'} the store keeps no "
            f"member list for: a group lm-eval writes without a score (leaderboard in lm-eval 0.4.7) whose tasks share "
            f"no metric has no row, and its members are kept with its tasks only by a later reader than the one "
            f"{plural(old, 'results file')} {'was' if old == 1 else 'were'} read with; 'harness-ext ingest --reread "
            f"PATHS' reads them again and keeps {'it' if one else 'them'}")


def _leaves(groups: dict, name: str, tasks: set, out: dict):
    """Group ``name``'s leaf tasks (:func:`leaf_tasks`), said in ``out["notes"]``; None when ``name`` is no group the
    store keeps members for (said too, for a stored group without them)."""
    info = groups.get(name)
    if info is None:
        return None
    if info["members"] is None:
        out["notes"].append(f"{name} is an lm-eval group, but " + REREAD.format(what="it"))
        return None
    leaves, unknown = leaf_tasks(groups, name)
    # A member named as a pattern ('leaderboard_*') is no task lm-eval could have run under that name (its --tasks
    # expands patterns); taken as a glob it would draw from every task it matches, so it is left out and said.
    patterns = [t for t in leaves if is_glob(t)]
    leaves = [t for t in leaves if not is_glob(t)]
    if not leaves:
        raise HarnessExtError(
            f"{name} is an lm-eval group whose member list kept at ingest names no task to draw documents from"
            + (f" ({plural(len(patterns), 'member')} named as a pattern: {listed(patterns, 3)})" if patterns else "")
            + (f" ({plural(len(unknown), 'subgroup')} without a member list: {listed(unknown, 3)})" if unknown else "")
            + "; name its tasks in --datasets")
    have = [t for t in leaves if t in tasks]
    out["taken"].append((name, len(leaves)))
    note = (f"{name}: its {plural(len(leaves), 'task')} (lm-eval group, members kept at ingest" if info["scored"] else
            f"{name}: its {plural(len(leaves), 'task')} (lm-eval group without a score of its own, members kept with "
            "its tasks at ingest")
    if info.get("n_lists", 1) > 1:  # files of lm-eval releases that list other members
        note += (f"; the union of the {info['n_lists']} member lists the store's files give it, "
                 f"{len(info['members'])} direct members in all: a file's group score is over its own list")
    note += ")"
    if len(have) < len(leaves):
        note += f", {len(have)} of them with scores in the store"
    if patterns:
        note += (f"; {plural(len(patterns), 'member')} named as a pattern, not a task, left out ({listed(patterns, 3)}:"
                 " a results file's group lists the tasks it ran)")
    if unknown:
        note += (f"; {plural(len(unknown), 'subgroup')} without a member list left out ({listed(unknown, 3)}: "
                 + REREAD.format(what="them") + ")")
    out["notes"].append(note)
    return leaves


def _leaf_sets(groups: dict) -> dict:
    """``{(name, dataset): (frozenset of leaf tasks, whether a subgroup has no member list)}`` of every group of
    ``groups`` with members, as :func:`leaf_tasks` finds them (a subgroup looked up under its parent first), each
    subgroup worked out once (:func:`~harness_ext.store.lm_eval_tasks.fold_nested`): :func:`leaf_tasks` per group walks
    every nested group again, which a results file of thousands of groups nested in a chain made take minutes."""
    from ...store.lm_eval_tasks import fold_nested

    info_of: dict = {}

    def expand(node):
        reach, _ = node
        out, leaves, unknown = [], [], False
        for m in info_of[node]["members"]:
            sub = groups.get(f"{reach} ({m})") or groups.get(m)
            if sub is None:
                leaves.append(m)
            elif sub["members"] is None:
                unknown = True
            else:
                info_of.setdefault((m, sub["dataset"]), sub)
                out.append((m, sub["dataset"]))
        return out, leaves, unknown

    def roots():
        for name, info in groups.items():
            if info["members"] is not None:
                info_of.setdefault((name, info["dataset"]), info)
                yield name, info["dataset"]

    return {node: (frozenset(leaves), unknown) for node, (leaves, unknown) in fold_nested(roots(), expand).items()}


def member_group(store, tasks) -> dict:
    """The lm-eval group whose leaf tasks are exactly ``tasks`` (lm-eval task names), by the members the store keeps:
    ``{"name", "n_tasks"}`` (and ``"scored": False`` for a group lm-eval gives no score, which has no row), or ``{}``.
    Of nested groups with the same leaves (a group of one subgroup), the innermost is taken."""
    want = set(tasks)
    if len(want) < 2:
        return {}
    groups = stored_groups(store)
    sets = _leaf_sets(groups)
    best = {}
    for name, info in groups.items():
        if info["members"] is None:
            continue
        leaves, unknown = sets[(name, info["dataset"])]
        if not unknown and leaves == want and (not best or len(info["members"]) > best["n_members"]):
            best = {"name": name, "n_tasks": len(leaves), "n_members": len(info["members"]),
                    **({} if info["scored"] else {"scored": False})}
    return {k: v for k, v in best.items() if k != "n_members"}


#: How close a group's stored score and its tasks' weighted mean are when it is that mean (float rounding only).
SAME = 1e-9


def group_score_test(store, found: dict, named=None) -> dict:
    """How the store's scores of an lm-eval group weight ``found``'s tasks: ``{"name", "weighted", "n_models"}``
    (``weighted`` True: by size, False: alike), or ``{}`` when no run tells.

    The group is ``named`` (by its kept members), else any group the store holds. lm-eval's groups mostly weight
    their tasks by size (``weight_by_size: true``: the ``mmlu``, ``bbh`` and Open LLM Leaderboard groups), some not,
    and a results file does not say which. A run (results file) tells when it gives the group's score and every one
    of these tasks' (on ``found``'s metric): by size when in every such run the group's score is the tasks' mean
    weighted by the documents that run scored (``n_samples``: a ``--limit`` run's, as lm-eval weights them) to 1e-9,
    and in one at least not their unweighted mean; alike, for a ``named`` group, the other way round. Runs are
    compared one by one: a model's runs may differ. Runs whose tasks are of one size tell neither.
    """
    metrics = {b["metric"] for b in found.values()}
    if len(found) < 2 or len(metrics) != 1:
        return {}
    key = {}  # a dataset or task name -> found's task
    for t, b in found.items():
        key.setdefault(str(b.get("name") or t), t)
        key.setdefault(t, t)
    names = sorted(key)
    marks = ", ".join("?" * len(names))
    rows = store.con.execute(
        f"""SELECT d.name, d.task, coalesce(d.kind, 'dataset') = 'aggregate' AS is_group, m.name AS model,
                   r.source_id, r.value, r.n_samples
            FROM results r JOIN datasets d USING (dataset_id) JOIN models m USING (model_id)
            WHERE d.metric = ? AND json_extract_string(d.metadata, '$.harness') = '{LM_EVAL}'
              AND (coalesce(d.kind, 'dataset') = 'aggregate' OR d.name IN ({marks}) OR d.task IN ({marks}))""",
        [metrics.pop(), *names, *names]).df()
    groups = rows[rows["is_group"]]
    if named is not None:
        groups = groups[(groups["name"] == named) | (groups["task"] == named)]
    if groups.empty:
        return {}
    parts = rows[~rows["is_group"]].assign(t=lambda f: [key.get(n, key.get(k)) for n, k in zip(f["name"], f["task"])])
    parts = parts.dropna(subset=["t"])
    runs = parts.pivot_table(index=["source_id", "model"], columns="t", values="value",
                             aggfunc="first").reindex(columns=list(found)).dropna()
    if runs.empty:
        return {}
    full = pd.Series({t: float(b["n_items"]) for t, b in found.items()})
    ran = parts.pivot_table(index=["source_id", "model"], columns="t", values="n_samples", aggfunc="first")
    sizes = ran.reindex(index=runs.index, columns=list(found)).astype(float)
    sizes = sizes.where(sizes > 0).fillna(full)  # a run without n-samples: the task's size
    w = sizes.to_numpy()
    weighted = pd.Series((runs.to_numpy() * w).sum(axis=1) / w.sum(axis=1), index=runs.index)
    plain = runs.mean(axis=1)
    for name, g in groups.groupby("name", sort=True):
        g = g.set_index(["source_id", "model"])["value"]
        both = g.index.intersection(runs.index)
        if both.empty:
            continue
        apart = ((weighted.loc[both] - plain.loc[both]).abs() > SAME).any()
        n = int(both.get_level_values("model").nunique())
        if ((g.loc[both] - weighted.loc[both]).abs() <= SAME).all() and apart:
            return {"name": str(name), "weighted": True, "n_models": n}
        if named is not None and ((g.loc[both] - plain.loc[both]).abs() <= SAME).all() and apart:
            return {"name": str(name), "weighted": False, "n_models": n}
    return {}


def group_weights(store, found: dict) -> tuple:
    """``(task -> weight, weighting, group)`` of the benchmark made of ``found``'s tasks (``task -> {metric, n_items,
    scores}``; lm-eval task names).

    The weights are :func:`~.item_benchmark.task_weights`' (MMLU's subjects by their questions), or, where those are
    the unweighted mean and the store's scores of an lm-eval group of exactly these tasks weight them by size
    (:func:`group_score_test`), the tasks' documents, so the benchmark row is that group's score as lm-eval makes it.
    The group is the one whose kept members are these tasks (:func:`member_group`), else one the score test finds.
    ``group``: ``{"name", "n_tasks", "members_kept", "weighted_by_size", "n_models"}`` for the manifest
    (``lm_eval_group``; ``weighted_by_size`` None: no run tells; ``"scored": False`` added for a group lm-eval gives
    no score, ``"mixed_metrics": True`` for one whose tasks are on several metrics, which lm-eval scores per metric
    over the tasks that have it: the benchmark row is neither's score), or ``{}``.
    """
    from .item_benchmark import UNIFORM, task_weights

    weights, weighting = task_weights({t: b["n_items"] for t, b in found.items()})
    by_members = member_group(store, found)
    if weighting != UNIFORM:  # MMLU's rule (its category groups weight their subjects by size too)
        if not by_members:
            return weights, weighting, {}
        return (weights, weighting.replace("lm-eval's mmlu group", f"lm-eval's {by_members['name']} group"),
                dict(by_members, members_kept=True, weighted_by_size=True))
    test = group_score_test(store, found, by_members.get("name"))
    if not by_members and not test:
        return weights, weighting, {}
    name = by_members.get("name") or test["name"]
    group = {"name": name, "n_tasks": len(found), "members_kept": bool(by_members),
             "weighted_by_size": test.get("weighted"), "n_models": test.get("n_models", 0),
             **({"scored": False} if by_members.get("scored") is False else
                {"mixed_metrics": True} if len({b["metric"] for b in found.values()}) > 1 else {})}
    if not test.get("weighted"):
        return weights, weighting, group
    kept = f"its {plural(len(found), 'task')}, kept with it at ingest; " if by_members else ""
    return ({t: float(b["n_items"]) for t, b in found.items()},
            f"tasks weighted by their documents, as lm-eval's {name} group ({kept}the store's {name} score is that "
            f"mean for {plural(test['n_models'], 'model')})", group)


#: How the benchmark row of a reduction of a group lm-eval gives no score is named (``leaderboard task mean``):
#: not the group's name alone, which would read as a score of lm-eval's or of a leaderboard.
TASK_MEAN = "{name} task mean"


def group_text(manifest: dict) -> str:
    """What ``reduce --items``'s summary says of the lm-eval group its tasks make (``""``: none), and, when the tasks'
    metrics differ, which metric how many tasks are on (:func:`metric_text`)."""
    g = manifest.get("lm_eval_group") or {}
    if g.get("scored") is False or g.get("mixed_metrics"):
        whose = ("which lm-eval gives no score (its tasks share no metric)" if g.get("scored") is False else
                 "which lm-eval scores per metric over the tasks that have it")
        return (f" The tasks are lm-eval's {g['name']} group ({plural(g['n_tasks'], 'task')}), {whose}: the benchmark "
                f"row, '{TASK_MEAN.format(name=g['name'])}', is harness-ext's mean of its tasks' scores, counted "
                f"alike, each on its own metric, not a figure lm-eval or a leaderboard reports.{metric_text(manifest)}")
    if not g or g.get("weighted_by_size"):  # the weighting's own text names it then
        return metric_text(manifest)
    how = {True: "", False: "; its score counts them alike, as does the benchmark's",
           None: untold_text(manifest)}[g.get("weighted_by_size")]
    return f" The tasks are lm-eval's {g['name']} group ({plural(g['n_tasks'], 'task')}){how}.{metric_text(manifest)}"


def untold_text(manifest: dict) -> str:
    """What the summary says when no run in the store tells how lm-eval weights the group's tasks, and what a user can
    do: a run giving the group's score and its tasks' on different numbers of documents tells; runs of ``--limit N``
    below every task's size score each on N documents, where the mean by size and the plain mean are one."""
    tasks = [b for b in (manifest.get("tasks") or {}).values() if isinstance(b, dict)]
    scored = {n for b in tasks for n in ((b.get("first_documents") or {}).get("documents_scored") or [None])}
    why = ("a run giving the group's score and its tasks' scores on different numbers of documents; "
           + (f"the store's runs scored each task on its first {scored.pop():,} documents (lm-eval --limit), where "
              "the mean by size and the plain mean are one" if len(scored) == 1 and None not in scored else
              "none does"))
    return (f"; no run in the store tells whether lm-eval weights them by size (that takes {why}), so they count "
            "alike. To tell, ingest one run of the group without --limit (any model; its score and its tasks') and "
            "reduce again; --weighting weights a dataset-level reduction's datasets, not these tasks")


def metric_text(manifest: dict) -> str:
    """``" Each task on its primary metric: 30 on acc_norm, 7 on exact_match, 1 on acc."`` when the manifest's
    tasks are on more than one metric (the most used first), else ``""``."""
    tasks = manifest.get("tasks") or {}
    metrics = pd.Series([b.get("metric") for b in tasks.values() if isinstance(b, dict) and b.get("metric")],
                        dtype=object)
    counts = metrics.value_counts(sort=False)
    if len(counts) < 2:
        return ""
    counts = counts.sort_index().sort_values(ascending=False, kind="stable")
    return (" Each task on its primary metric: "
            + ", ".join(f"{n} on {m}" for m, n in counts.items()) + ".")
