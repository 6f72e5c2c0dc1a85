"""Built-in manifest writers: JSON, lm-evaluation-harness group YAML, HELM run entries, task list.

Task naming: lm-eval files use the harness's own v0.4 task names (MMLU subjects
as ``mmlu_<subject>``, whatever harness produced the scores); HELM files use
run-entry descriptions (``mmlu:subject=<s>,model=text`` and the HELM Classic
core-scenario descriptions). The lm-eval group and the estimate shipped with it are
:mod:`harness_ext.methods.reduction.lm_eval_group`. A HELM scenario with an lm-eval equivalent
becomes those lm-eval tasks and an lm-eval task with a HELM equivalent those
run entries (:mod:`harness_ext.methods.reduction.harness_names`). A dataset a format cannot
express is listed in a comment naming it, never silently dropped, and a file
never holds an empty task list. HELM cannot run a list of instances
(``--max-eval-instances N`` runs HELM's own seeded draw of ``N``): the conf of an item-level
manifest says so. An item-level manifest whose tasks all came from Inspect AI logs gets no HELM conf,
task list or lm-eval group: they run under Inspect, from ``inspect_sample_ids.json``.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from harness_ext.methods.reduction.harness_names import lm_eval_task_list, path_like_tasks
from harness_ext.methods.reduction.helm_run_args import helm_shots_note
from harness_ext.methods.reduction.helm_run_args import checked_helm_entries
from harness_ext.methods.reduction.inspect_samples import inspect_only
from harness_ext.methods.reduction.lm_eval_group import group_stem, write_lm_eval_yaml  # noqa: F401 - registered here
from harness_ext.report import dumps
from harness_ext.safe_output import comment, hocon_string, list_line, quoted


def write_json(manifest: dict, out_dir: Path) -> list:
    path = Path(out_dir) / "manifest.json"
    # The project's one encoder: a figure that could not be computed is null, never a NaN predict would refuse.
    path.write_text(dumps(manifest), encoding="utf-8")
    return [path]


#: What the HELM conf of an item-level reduction says about the items (:func:`write_helm_conf` adds it).
HELM_ITEMS_NOTE = ["# HELM cannot run a list of items: --max-eval-instances runs HELM's own seeded draw of that many",
                   "# instances, not the manifest's. Use the lm-eval group and its --samples file to run the drawn items."]


def _helm_instances(manifest: dict) -> int:
    """Instances per run of an item-level reduction: its per-task budget, else the most any task runs."""
    n = manifest["design"].get("n_per_task")
    return int(n) if n is not None else max(int(b["n_run"]) for b in manifest["tasks"].values())


def _helm_items_cost(manifest: dict, several: dict) -> list:
    """A comment when a task runs as several HELM run entries: each runs up to the per-run count, so HELM runs more
    instances of it than the manifest draws (``several``: task -> its number of run entries)."""
    if not several:
        return []
    n, tasks = _helm_instances(manifest), manifest["tasks"]
    upto = {t: min(int(tasks[t]["n_items"]), n * k) for t, k in several.items() if t in tasks}
    named = "; ".join(f"{quoted(t)}: {k} entries, up to {upto[t]:,} instances, the manifest draws {tasks[t]['n_run']:,}"
                      for t, k in several.items() if t in upto)
    return [comment(f"A task run as several entries takes up to {n} instances in each ({named}): the logs then hold "
                    f"more items than the {manifest['cost']['items_run']:,} of reduce's cost, and predict uses them all")]


def write_helm_conf(manifest: dict, out_dir: Path) -> list:
    """``run_entries_<group>.conf`` for ``helm-run --conf-paths``."""
    if inspect_only(manifest):  # every task runs under Inspect: HELM runs none of them
        return []
    items = manifest.get("kind") == "items"  # an item-level reduction: HELM runs its own draw of instances
    lines, skipped, several, refused = [], [], {}, []
    for entry in manifest["subset"]:
        # Shots are part of what was measured: the entry asks HELM for the population's, not its scenario's default.
        # Run names come from results anyone can write: an argument naming a file or code is left out, saying why.
        checked = checked_helm_entries(entry)
        if not checked:
            skipped.append(entry["name"])
            continue
        refused += [(desc, why) for desc, why in checked if why]
        descs = [desc for desc, why in checked if not why]
        lines.extend(f"  {{description: {hocon_string(desc)}, priority: 1}}" for desc in descs)
        if len(descs) > 1:
            several[entry["name"]] = len(descs)
    name = f"run_entries_{group_stem(manifest)}.conf"
    # The path as the user named the folder (the final one, not the staging folder), as the lm-eval YAML's Run line.
    shown = Path(getattr(out_dir, "shown", out_dir)) / name
    head = [comment(f"Reduced benchmark written by harness-ext {manifest.get('tool', {}).get('version', '')}.")]
    if lines:  # no Run line for a conf with nothing to run, as the lm-eval YAML has none without a group
        head.append(comment(f"Run: helm-run --conf-paths {shlex.quote(str(shown))} --suite SUITE --max-eval-instances "
                            f"{_helm_instances(manifest) if items else 1000} --models-to-run MODEL"))
        head += [comment(line) for line in helm_shots_note(manifest)]
    if items:
        head += HELM_ITEMS_NOTE + _helm_items_cost(manifest, several)
    if skipped:
        head.append(comment(f"No HELM run entry known for: {', '.join(map(quoted, skipped))}"))
    if refused:
        head.append(comment(f"Left out: {len(refused)} run entr{'y' if len(refused) == 1 else 'ies'} from the results "
                            "whose arguments could make helm-run read or import files outside this folder:"))
        head += [comment(f"  {quoted(desc)}: {why}") for desc, why in refused]
    # HELM's reader requires the entries field (a conf of comments alone stops helm-run with a traceback); an
    # empty list reads, and helm-run says it has no run specs and stops.
    none = ("No run entry of this subset is left to write (see above)" if refused else
            "No dataset of this subset has a HELM run entry")
    body = ("entries: [\n" + ",\n".join(lines) + "\n]\n" if lines else
            f"# {none}, so there is nothing for helm-run to run.\nentries: []\n")
    path = Path(out_dir) / name
    path.write_text("\n".join(head) + "\n" + body, encoding="utf-8")
    return [path]


def write_task_list(manifest: dict, out_dir: Path) -> list:
    """``<group>_tasks.txt``: one line per selected dataset, in selection order (harness task name when known), but
    an lm-eval task named as a path (:func:`~harness_ext.methods.reduction.harness_names.path_like_task`); none
    for an item-level manifest whose tasks all run under Inspect (``inspect_sample_ids.json`` names them)."""
    from harness_ext.methods.reduction.item_harness_tasks import harness_names

    if inspect_only(manifest):
        return []
    # A task lm-eval would read as a path is left out, as from the group (reduce's warning counts them).
    # An item table's task declared to be an lm-eval task (items: harness_tasks) is listed as that task.
    runs_as = harness_names(manifest, checked=True) if manifest.get("kind") == "items" else {}
    declared = {t: h for t, h in runs_as.items() if h != t}
    names = [list_line(declared.get(e["name"]) or ",".join(lm_eval_task_list(e)) or e.get("task") or e["name"],
                       "task name") for e in manifest["subset"] if not path_like_tasks(e)]
    path = Path(out_dir) / f"{group_stem(manifest)}_tasks.txt"
    path.write_text("\n".join(names) + "\n", encoding="utf-8")
    return [path]
