"""A dataset's metadata completed by the files stored after the one that made it.

A dataset row keeps the metadata of the first file that named it (its direction, chance level and descriptions come
from there too). A few keys are properties of the task or group that a first file may not give and a later one
does: a task's full number of documents (:data:`~harness_ext.store.lm_eval_tasks.N_DOCUMENTS`, which an lm-eval
``--limit`` run writes and a file of lm-eval 0.4.0-0.4.2 has no ``n-samples`` for) and a group's direct members
(:data:`~harness_ext.store.lm_eval_tasks.MEMBERS`, from ``group_subtasks``), and the groups without a row a dataset is
a member of (:data:`~harness_ext.store.lm_eval_tasks.IN_GROUPS`, ``{group: members}``). A later file's value of such
a key fills it where the stored row has none (of ``in_groups``: each group it lacks); a stored value is never changed
(the first file's stays, as a result's does).

A group's member list a later file gives that differs from the one kept (lm-eval's releases change some groups'
members) is kept beside it (:data:`~harness_ext.store.lm_eval_tasks.OTHER_MEMBERS`, each distinct list once) and
said in that file's notes (:func:`conflict_note`), as a conflicting value is: ``reduce --items`` takes the union.
"""

from __future__ import annotations

import json

import numpy as np

from .lm_eval_tasks import IN_GROUPS, MEMBERS, N_DOCUMENTS, OTHER_MEMBERS

#: The metadata keys a later file fills where a dataset's row has none.
FILLED_KEYS = (N_DOCUMENTS, MEMBERS, IN_GROUPS)
#: The key of :func:`later_keys`' values holding ``{(group, list): the first row that gave it}`` (not stored).
ROWS = "\0rows"
#: The most member lists kept beside a group's first (lm-eval has changed a group's members a few times; more is a
#: file made to fill the store): a list beyond them is said and not kept.
MAX_LISTS = 50


def later_keys(dmetas: list, row_dataset: np.ndarray, group_of=None) -> dict:
    """``{dataset code: {key: value}}``: the first value in row order of each :data:`FILLED_KEYS` key the rows'
    metadata dicts ``dmetas`` give, per dataset (``row_dataset``: each row's dataset code).

    Adapters share one dict among rows, so the dicts are looked at once each (by identity) and the rows holding
    a key are found in one numpy pass; a batch without such keys costs those two passes. A later row's member list
    that differs from the first (:func:`other_lists`; ``group_of``: a dataset code's group name, for its own
    ``members``) goes under :data:`OTHER_MEMBERS` (:func:`filled` keeps and says them), and the first row giving
    each list under :data:`ROWS`.
    """
    by_id = dict(zip(map(id, dmetas), dmetas))
    wanted = [i for i, d in by_id.items() if d and any(k in d for k in FILLED_KEYS)]
    if not wanted:
        return {}
    ids = np.fromiter(map(id, dmetas), dtype=np.uint64, count=len(dmetas))
    out: dict = {}
    seen: set = set()  # (dict id, dataset): a dict shared by rows is compared once per dataset
    for row in np.flatnonzero(np.isin(ids, np.array(wanted, dtype=np.uint64))).tolist():
        code = int(row_dataset[row])
        d, keys = dmetas[row], out.setdefault(code, {})
        if (id(d), code) in seen:
            continue
        seen.add((id(d), code))
        group = group_of(code) if group_of and MEMBERS in d else None
        rows = keys.setdefault(ROWS, {})  # each (group, list) -> the first row giving it: the file a conflict is said of
        if _names(d.get(MEMBERS)) and group is not None:
            rows.setdefault((group, tuple(d[MEMBERS])), row)
        for g, v in (d.get(IN_GROUPS) or {}).items() if isinstance(d.get(IN_GROUPS), dict) else ():
            if _names(v):
                rows.setdefault((g, tuple(v)), row)
        for g, (_, other) in other_lists(keys, d, group).items():
            lists = keys.setdefault(OTHER_MEMBERS, {}).setdefault(g, [])
            if other not in lists:
                lists.append(other)
        for k in FILLED_KEYS:
            if k in d and k not in keys:
                keys[k] = d[k]
            elif k == IN_GROUPS and k in d and isinstance(d[k], dict) and isinstance(keys[k], dict):
                keys[k] = {**d[k], **keys[k]}  # each group once, the first row's members
    return out


def other_lists(have: dict, got: dict, group=None) -> dict:
    """``{group: (kept list, other list)}`` of the member lists metadata ``got`` gives that differ from those
    metadata ``have`` keeps: its own (:data:`MEMBERS`, of group ``group``; None: not compared) and those of the groups
    without a row it is a member of (:data:`IN_GROUPS`). Lists of names only (a hand-edited value is no list)."""
    out: dict = {}
    if group is not None and _names(have.get(MEMBERS)) and _names(got.get(MEMBERS)) and have[MEMBERS] != got[MEMBERS]:
        out[group] = (have[MEMBERS], got[MEMBERS])
    mine, theirs = have.get(IN_GROUPS), got.get(IN_GROUPS)
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for g, v in theirs.items():
            if _names(mine.get(g)) and _names(v) and mine[g] != v:
                out[g] = (mine[g], v)
    return out


def _names(v) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(m, str) for m in v)


def conflict_note(group: str, kept: list, other: list, stored: bool = True) -> str:
    """A file's note on a member list of ``group`` other than the one the store keeps, with the counts (``stored``
    False: not kept, :data:`MAX_LISTS` others held already)."""
    gone, new = len(set(kept) - set(other)), len(set(other) - set(kept))
    how = ("both lists kept, reduce --items takes the union" if stored else
           f"this list not kept: the store holds {MAX_LISTS} other lists of the group already, reduce --items takes "
           "the union of those it holds")
    return (f"lm-eval group {group}: this file lists {len(other)} members, the store kept {len(kept)} from an earlier "
            f"file ({gone} of them not here, {new} here not there); {how}")


def filled(metadata_json: str, keys: dict, group=None, conflicts: list = None) -> str:
    """``metadata_json`` (a dataset's metadata as JSON) with the ``keys`` it lacks added (unchanged otherwise); a
    member list ``keys`` gives that differs from the stored one (:func:`other_lists`; ``group``: the dataset's group
    name for its own ``members``) added under :data:`OTHER_MEMBERS` (at most :data:`MAX_LISTS` per group), and
    ``(row, group, kept, other, kept too)`` into ``conflicts`` (``row``: the batch's first row that gave it,
    :data:`ROWS`, None if unknown)."""
    try:
        md = json.loads(metadata_json or "{}")
    except ValueError:
        return metadata_json
    if not isinstance(md, dict):
        return metadata_json
    extra = {k: v for k, v in keys.items() if k not in md and k not in (OTHER_MEMBERS, ROWS)}
    have, got = md.get(IN_GROUPS), keys.get(IN_GROUPS)
    if isinstance(have, dict) and isinstance(got, dict) and not set(got) <= set(have):
        extra[IN_GROUPS] = {**got, **have}  # the groups it lacks added; a stored group's members kept
    stored = md.get(OTHER_MEMBERS) if isinstance(md.get(OTHER_MEMBERS), dict) else {}
    new = {g: list(v) for g, v in stored.items() if isinstance(v, list)}
    firsts = other_lists(md, keys, group)  # the batch's first list against the stored one
    later = [(g, o) for g, v in (keys.get(OTHER_MEMBERS) or {}).items() if isinstance(v, list) for o in v]
    rows = keys.get(ROWS) or {}
    for g, o in [(g, pair[1]) for g, pair in firsts.items()] + later:
        kept = md.get(MEMBERS) if g == group and _names(md.get(MEMBERS)) else (have or {}).get(g)
        lists = new.setdefault(g, [])
        if _names(o) and _names(kept) and o != kept and o not in lists:
            room = len(lists) < MAX_LISTS
            if room:
                lists.append(o)
            if conflicts is not None:
                conflicts.append((rows.get((g, tuple(o))), g, kept, o, room))
    new = {g: v for g, v in new.items() if v}
    if new != stored:
        extra[OTHER_MEMBERS] = new
    return json.dumps({**md, **extra}, default=str) if extra else metadata_json


def fill_stored(con, keys: dict, conflicts: list = None) -> int:
    """Give the stored datasets of ``keys`` (``{dataset_id: {key: value}}``) the keys their metadata lacks, inside
    the caller's transaction; returns how many rows changed. Member lists other than the stored ones go into
    ``conflicts`` (:func:`filled`)."""
    if not keys:
        return 0
    ids = sorted(keys)
    rows = con.execute("SELECT dataset_id, coalesce(task, name), metadata FROM datasets "
                       "WHERE list_contains(?, dataset_id)", [ids]).fetchall()
    changed = [(did, new) for did, group, old in rows if (new := filled(old, keys[did], group, conflicts)) != old]
    if changed:
        import pyarrow as pa

        table = pa.table({"dataset_id": pa.array([c[0] for c in changed], pa.int64()),
                          "metadata": pa.array([c[1] for c in changed], pa.string())})
        con.register("_filled_metadata", table)
        try:
            con.execute("UPDATE datasets SET metadata = f.metadata FROM _filled_metadata f "
                        "WHERE datasets.dataset_id = f.dataset_id")
        finally:
            con.unregister("_filled_metadata")
    return len(changed)
