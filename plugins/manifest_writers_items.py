"""The built-in writers' output for an item-level manifest (``reduce --items N``): lm-eval and HELM files.

lm-eval runs a list of items per task with ``--samples FILE`` (lm-eval 0.4: a JSON object, task name ->
list of document indices; incompatible with ``--limit``). The group lists every task of the manifest
and the samples file the drawn items; ``--log_samples`` writes the per-item logs ``predict`` reads.

HELM cannot run a list of instances: ``--max-eval-instances N`` runs HELM's own seeded draw of ``N``
instances. The conf lists the tasks' run entries with that note; ``predict`` estimates only from logs
whose items are the manifest's.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness_ext.methods.reduction.item_manifest import decode_ids
from harness_ext.safe_output import comment, quoted, yaml_text

from .manifest_writers import _stem, task_file_notes, write_task_file


#: What the HELM conf of an item-level reduction says about the items (:func:`write_helm_conf` adds it).
HELM_ITEMS_NOTE = ["# HELM cannot run a list of items: --max-eval-instances runs HELM's own seeded draw of that many",
                   "# instances, not the manifest's. Use the lm-eval group and its --samples file to run the drawn items."]


def write_items_lm_eval_yaml(manifest: dict, out_dir) -> list:
    """``<group>.yaml`` (every task of the manifest) and ``<group>_samples.json`` (the drawn items per task)."""
    shown = getattr(out_dir, "shown", out_dir)
    out_dir = Path(out_dir)
    group = _stem(manifest)
    tasks = manifest["tasks"]
    samples = out_dir / f"{group}_samples.json"
    samples.write_text(json.dumps({t: decode_ids(b["sample"]).tolist() for t, b in tasks.items()}) + "\n",
                       encoding="utf-8")
    cost = manifest["cost"]
    foreign = sorted(t for t, b in tasks.items() if b.get("benchmark") not in (None, "", "lm_eval"))
    header = [comment(f"Reduced benchmark (items) written by harness-ext {manifest.get('tool', {}).get('version', '')}."),
              comment(f"Run: lm_eval --model hf --model_args pretrained=MODEL --include_path {shown} --tasks {group} "
                      f"--samples {shown}/{samples.name} --log_samples --output_path results/"),
              comment(f"then: harness-ext predict -m {shown} results/  ({cost['items_run']:,} of {cost['items_full']:,} "
                      f"items, drawn at random; the group's own row is the plain mean of the items run, not the estimate)")]
    if foreign:
        header.append(comment(f"Item ids of {', '.join(map(quoted, foreign[:10]))} are positions in the order of the "
                              "source they were ingested from, not necessarily lm-eval document indices: run these "
                              "tasks only with a task definition whose documents are in that order"))
    # Task definitions kept from the ingested results are written beside the group (lm-eval takes one --include_path).
    written, unknown, taken = [], [], {group}
    for t in tasks:
        write_task_file(t, manifest.get("lm_eval_tasks") or {}, out_dir, shown, taken, written, unknown)
    header += task_file_notes(written, unknown)
    doc = {"group": group, "group_alias": f"{manifest.get('benchmark') or group} ({cost['items_run']} of "
                                          f"{cost['items_full']} items)",
           "task": list(tasks), "metadata": {"version": 1.0}}
    path = out_dir / f"{group}.yaml"
    path.write_text("\n".join(header) + "\n" + yaml_text(doc), encoding="utf-8")
    return [path, samples] + written
