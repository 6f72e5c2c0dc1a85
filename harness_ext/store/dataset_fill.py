"""A dataset's metadata completed by the files stored after the one that made it.

A dataset row keeps the metadata of the first file that named it (its direction, chance level and descriptions come
from there too). A few keys are properties of the task or group that a first file may not give and a later one
does: a task's full number of documents (:data:`~harness_ext.store.lm_eval_tasks.N_DOCUMENTS`, which an lm-eval
``--limit`` run writes and a file of lm-eval 0.4.0-0.4.2 has no ``n-samples`` for) and a group's direct members
(:data:`~harness_ext.store.lm_eval_tasks.MEMBERS`, from ``group_subtasks``), and the groups without a row a dataset is
a member of (:data:`~harness_ext.store.lm_eval_tasks.IN_GROUPS`, ``{group: members}``). A later file's value of such
a key fills it where the stored row has none (of ``in_groups``: each group it lacks); a stored value is never changed
(the first file's stays, as a result's does).
"""

from __future__ import annotations

import json

import numpy as np

from .lm_eval_tasks import IN_GROUPS, MEMBERS, N_DOCUMENTS

#: The metadata keys a later file fills where a dataset's row has none.
FILLED_KEYS = (N_DOCUMENTS, MEMBERS, IN_GROUPS)


def later_keys(dmetas: list, row_dataset: np.ndarray) -> dict:
    """``{dataset code: {key: value}}``: the first value in row order of each :data:`FILLED_KEYS` key the rows'
    metadata dicts ``dmetas`` give, per dataset (``row_dataset``: each row's dataset code).

    Adapters share one dict among rows, so the dicts are looked at once each (by identity) and the rows holding
    a key are found in one numpy pass; a batch without such keys costs those two passes.
    """
    by_id = dict(zip(map(id, dmetas), dmetas))
    wanted = [i for i, d in by_id.items() if d and any(k in d for k in FILLED_KEYS)]
    if not wanted:
        return {}
    ids = np.fromiter(map(id, dmetas), dtype=np.uint64, count=len(dmetas))
    out: dict = {}
    for row in np.flatnonzero(np.isin(ids, np.array(wanted, dtype=np.uint64))).tolist():
        d, keys = dmetas[row], out.setdefault(int(row_dataset[row]), {})
        for k in FILLED_KEYS:
            if k in d and k not in keys:
                keys[k] = d[k]
            elif k == IN_GROUPS and k in d and isinstance(d[k], dict) and isinstance(keys[k], dict):
                keys[k] = {**d[k], **keys[k]}  # each group once, the first row's members
    return out


def filled(metadata_json: str, keys: dict) -> str:
    """``metadata_json`` (a dataset's metadata as JSON) with the ``keys`` it lacks added (unchanged otherwise)."""
    try:
        md = json.loads(metadata_json or "{}")
    except ValueError:
        return metadata_json
    if not isinstance(md, dict):
        return metadata_json
    extra = {k: v for k, v in keys.items() if k not in md}
    have, got = md.get(IN_GROUPS), keys.get(IN_GROUPS)
    if isinstance(have, dict) and isinstance(got, dict) and not set(got) <= set(have):
        extra[IN_GROUPS] = {**got, **have}  # the groups it lacks added; a stored group's members kept
    return json.dumps({**md, **extra}, default=str) if extra else metadata_json


def fill_stored(con, keys: dict) -> int:
    """Give the stored datasets of ``keys`` (``{dataset_id: {key: value}}``) the keys their metadata lacks, inside
    the caller's transaction; returns how many rows changed."""
    if not keys:
        return 0
    ids = sorted(keys)
    rows = con.execute("SELECT dataset_id, metadata FROM datasets WHERE list_contains(?, dataset_id)", [ids]).fetchall()
    changed = [(did, new) for did, old in rows if (new := filled(old, keys[did])) != old]
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
