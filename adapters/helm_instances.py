"""HELM per-instance scores: the item table of a run directory (``per_instance_stats.json``, else
``display_predictions.json`` with ``instances.json``), for the samples table.

The run's record (model, benchmark, dataset, main metric) comes from :mod:`harness_ext.adapters.helm`; this
module only reads the instances. Kept apart from the run and table adapters so each module stays small.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Optional

from harness_ext.adapters.helm import _load_json, _mean, _stat_table, main_metric, parse_run_name, records_for_run
from harness_ext.errors import IngestError

#: Files of a run directory with per-instance scores, in the order they are looked for.
PER_INSTANCE_FILES = ("per_instance_stats.json", "display_predictions.json")

#: The revision of this item reader, stored with every item source it reads (``sample_sources.reader``, see
#: :mod:`harness_ext.store.item_readers`): raise it when a change makes it store other item scores from the same
#: file, so ``ingest`` counts the sources an older reading left and ``ingest --reread`` reads them again.
REVISION = "3"


def read_run_instances(run_dir):
    """The per-instance scores of a run's main metric, as an item table for the samples table.

    ``per_instance_stats.json`` (written by ``helm-run``) is a list of ``{"instance_id",
    "train_trial_index", "perturbation"?, "stats": [{"name": {"name", "split", ...}, "mean", ...}]}``
    (HELM's ``PerInstanceStats``); the stat read is the run's main metric on its split, unperturbed, as
    :func:`records_for_run` picks it from ``stats.json``. Without it, ``display_predictions.json`` (written
    by ``helm-summarize``, and what HELM's public downloads hold) is read: ``{"instance_id",
    "train_trial_index", "perturbation"?, "stats": {name: mean}}`` per prediction, its split taken from
    ``instances.json``. An instance's score is its mean over train trials, so the mean over instances is
    the run's score when every instance ran in every trial. The item id is the instance id (``id1295`` ->
    1295). Model, benchmark, task and metric are those of the run's primary result.

    Returns
    -------
    harness_ext.store.item_tables.ItemTable

    Raises
    ------
    IngestError
        Naming the file and the reason.
    """
    import hashlib

    import numpy as np
    import pandas as pd

    from harness_ext.store.item_format import ItemTable
    from harness_ext.store.samples import doc_id

    run_dir = Path(run_dir)
    path = next((run_dir / n for n in PER_INSTANCE_FILES if os.path.isfile(run_dir / n)), run_dir / PER_INSTANCE_FILES[0])
    run_spec = _load_json(run_dir / "run_spec.json", path)
    stats = _load_json(run_dir / "stats.json", path)
    primary = next(r for r in records_for_run(run_spec, stats, path) if r.primary)
    run = parse_run_name(run_spec["name"])
    groups = run_spec.get("groups") if isinstance(run_spec.get("groups"), list) else []
    metric, split, _ = main_metric(run, groups, _stat_table(stats, path), path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from None
    doc = _load_json(path, path)
    if not isinstance(doc, list):
        raise IngestError(path, f"holds {type(doc).__name__}, expected a list of per-instance stats")
    splits = _instance_splits(run_dir, path)
    if path.name == PER_INSTANCE_FILES[1] and splits is None:
        raise IngestError(path, "display_predictions.json gives no splits: instances.json is needed beside it")
    ids, values, n_other = _instance_values(doc, metric, split, splits, path)
    if not values:
        raise IngestError(path, f"no per-instance {metric} on split {split!r}")
    notes = [f"{n_other} per-instance entries of other splits than {split} (or without {metric}) left out"] if n_other else []
    grouped = pd.DataFrame({"id": ids, "value": values}).groupby("id", sort=True)["value"]
    per = grouped.mean()
    trials = grouped.size()
    if int(trials.max()) > 1:
        # Said, as HELM's own stats.json averages the trials too: the stored item score is no single answer's.
        spread = (f"{int(trials.min())} to {int(trials.max())} train trials each (so their mean is not the run's "
                  "score, which weights every trial alike)" if trials.nunique() > 1 else f"{int(trials.max())} train trials each")
        notes.append(f"{len(values)} per-instance entries of {metric} on {split}: {len(per)} instances in {spread}, "
                     "each instance's item score the mean over its trials")
    if splits is not None:
        unknown = int((~per.index.isin(list(splits))).sum())
        if unknown:
            notes.append(f"{unknown} instance ids not listed in instances.json")
    doc_ids = np.fromiter((doc_id(i) for i in per.index), dtype=np.int64, count=len(per))
    if len(set(doc_ids.tolist())) < len(doc_ids):
        raise IngestError(path, "two instance ids map to the same item number")
    frame = pd.DataFrame({"model": primary.model, "task": primary.dataset, "doc_id": doc_ids,
                          "metric": primary.metric, "value": per.to_numpy(dtype=float)})
    sha = hashlib.sha256(raw + f"\0helm-run={run_spec['name']}".encode()).hexdigest()
    return ItemTable(path, primary.benchmark, frame, sha, notes)


def _instance_splits(run_dir: Path, path: Path) -> Optional[dict]:
    """``instance id -> split`` from ``instances.json``, or None when the run has none."""
    p = run_dir / "instances.json"
    if not os.path.isfile(p):
        return None
    inst = _load_json(p, path)
    if not isinstance(inst, list):
        raise IngestError(path, "instances.json is not a list of instances")
    return {str(x["id"]): x.get("split") for x in inst if isinstance(x, dict) and "id" in x}


def _instance_values(doc: list, metric: str, split: str, splits: Optional[dict], path: Path) -> tuple:
    """``(instance ids, values, n_other)`` of ``metric`` on ``split``, unperturbed, one per (instance, trial);
    ``n_other`` counts the unperturbed (instance, trial) pairs left out (another split, or no value of the metric).

    HELM writes one block per metric for the same (instance, trial) (the basic metrics in one, an annotator's
    scores in another): the blocks of a pair are read together, and a pair giving the metric twice is refused."""
    found: dict = {}  # (instance id, trial) -> value; None while only blocks without the metric were seen
    for i, block in enumerate(doc):
        if not isinstance(block, dict) or "instance_id" not in block:
            raise IngestError(path, f"entry {i} has no instance_id")
        if block.get("perturbation") is not None:
            continue  # robustness and fairness variants, left out as in stats.json
        raw = block["instance_id"]
        if isinstance(raw, bool) or not isinstance(raw, (str, int)):  # HELM writes "id123": no text to number
            raise IngestError(path, f"entry {i}: instance_id {json.dumps(raw)[:40]} is not text or a whole number")
        iid, st = str(raw), block.get("stats")
        key = (iid, str(block.get("train_trial_index")))
        if isinstance(st, dict):  # display_predictions.json: {name: mean}; the split from instances.json
            v = st.get(metric)
            v = None if splits is not None and splits.get(iid) != split else v
            v = None if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) else float(v)
        elif isinstance(st, list):
            v = next((_mean(x) for x in st if isinstance(x, dict) and isinstance(x.get("name"), dict)
                      and x["name"].get("name") == metric and x["name"].get("split") == split
                      and x["name"].get("perturbation") is None and x["name"].get("sub_split") is None), None)
        else:
            raise IngestError(path, f"entry {i} has no stats")
        if v is None:
            found.setdefault(key, None)
        elif found.get(key) is not None:  # it would be averaged in as one more trial
            raise IngestError(path, f"{path.name} entry {i}: instance {iid}, trial {block.get('train_trial_index')}: "
                                    f"its {metric} is listed twice")
        else:
            found[key] = v
    kept = [(k[0], v) for k, v in found.items() if v is not None]
    return [k for k, _ in kept], [v for _, v in kept], len(found) - len(kept)
