"""Built-in manifest writers: JSON, lm-evaluation-harness group YAML, HELM run entries, task list.

Task naming: lm-eval files use the harness's own v0.4 task names (MMLU subjects
as ``mmlu_<subject>``, whatever harness produced the scores); HELM files use
run-entry descriptions (``mmlu:subject=<s>,model=text`` and the HELM Classic
core-scenario descriptions). The lm-eval group and the estimate shipped with it are
:mod:`harness_ext.methods.reduction.lm_eval_group`. A HELM scenario with an lm-eval equivalent
becomes those lm-eval tasks and an lm-eval task with a HELM equivalent those
run entries (:mod:`harness_ext.methods.reduction.harness_names`). A dataset a format cannot
express is listed in a comment naming it, never silently dropped, and a file
never holds an empty task list. HELM cannot run a list of instances:
the conf of an item-level manifest gives each task's entry ``max_eval_instances=N`` (HELM's own draw of ``N``,
numpy seed 0) and leaves out a task HELM runs as several entries, saying so with counts. An item-level manifest
whose tasks all came from Inspect AI logs gets no HELM conf, task list or lm-eval group: they run under Inspect,
from ``inspect_sample_ids.json``.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from harness_ext.methods.reduction.harness_names import with_max_eval_instances
from harness_ext.methods.reduction.helm_run_args import helm_shots_note
from harness_ext.methods.reduction.helm_run_args import checked_helm_entries
from harness_ext.methods.reduction.inspect_samples import inspect_only
from harness_ext.methods.reduction.item_design_plan import is_design_only
from harness_ext.methods.reduction.item_harness_tasks import where_left_out_tasks_run
from harness_ext.methods.reduction.lm_eval_group import (group_stem, task_list_lines,  # noqa: F401 - registered here
                                                         write_lm_eval_yaml)
from harness_ext.report import dumps
from harness_ext.safe_output import comment, hocon_string, list_line, quoted


def write_json(manifest: dict, out_dir: Path) -> list:
    path = Path(out_dir) / "manifest.json"
    # The project's one encoder: a figure that could not be computed is null, never a NaN predict would refuse.
    path.write_text(dumps(manifest), encoding="utf-8")
    return [path]


#: What the HELM conf of an item-level reduction says about the items (:func:`write_helm_conf` adds it).
HELM_ITEMS_NOTE = [
    "# HELM cannot run a list of items: an entry's max_eval_instances=N runs HELM's own draw of N of its",
    "# instances (numpy seed 0, fixed: the same N for every model and run; it outranks helm-run",
    "# --max-eval-instances), not the manifest's. Drawn without the model's answers, it is a random sample."]


def _helm_item_entries(manifest: dict, entry: dict, descs: list, plan: dict) -> list:
    """The run entry of one task of an item-level manifest, with the task's budget; records in ``plan`` (task ->
    ``(entries, instances, why left out)``) what the conf does with the task. A task HELM runs as several entries
    (HELM Lite's MATH, 7 subjects) is left out: HELM numbers each entry's instances from its own ``id0`` and names
    each run by its entry, so no run of it can be matched to the task's items (and each entry would run its own N)."""
    task = manifest["tasks"].get(entry["name"]) or {}
    if len(descs) > 1:
        plan[entry["name"]] = (len(descs), 0, True)
        return []
    plan[entry["name"]] = (1, int(task["n_run"]), False)
    return [with_max_eval_instances(descs[0], int(task["n_run"]))]


def _helm_items_plan(manifest: dict, plan: dict) -> list:
    """The conf's lines counting what HELM runs of an item-level manifest, task by task."""
    tasks, out = manifest["tasks"], []
    ran = [t for t, v in plan.items() if not v[2]]
    if ran:
        total = sum(plan[t][1] for t in ran)
        helm = sum(bool(tasks[t].get("helm_instances")) for t in ran)
        out.append(comment(f"HELM runs {total:,} instances: {len(ran)} task{'s' * (len(ran) != 1)}, one entry each, "
                           "the manifest's count of each. predict takes each task's HELM instances as its random "
                           "sample, matched to the population's items by instance number (idN is item N): "
                           f"{helm} of the {len(ran)} tasks came from HELM runs"
                           + ("" if helm == len(ran) else f"; the other {len(ran) - helm} from "
                              + ("lm-eval's results files (its documents' numbers), matched only if HELM numbers the "
                                 "task's instances as lm-eval its documents" if is_design_only(manifest) else
                                 "item tables, matched only if the table numbers its items as HELM does"))))
    left = [t for t, v in plan.items() if v[2]]
    if left:
        out.append(comment(f"Not in this conf: {len(left)} task{'s' * (len(left) != 1)} HELM runs as several entries "
                           f"({'; '.join(f'{quoted(t)}: {plan[t][0]}' for t in left)}), whose runs could not be "
                           "matched to the task's items (each entry numbers its instances from id0 and names its "
                           f"run by the entry). {where_left_out_tasks_run(manifest, left)}"))
    return out



def _conf_entries(manifest: dict, items: bool) -> tuple:
    """``(entry lines, datasets without a run entry, (description, why) refused, item plan)`` of the HELM conf."""
    lines, skipped, refused, plan = [], [], [], {}
    for entry in manifest["subset"]:
        # Shots are part of what was measured: the entry asks HELM for the population's, not its scenario's default.
        # Run names come from results anyone can write: an argument naming a file or code is left out, saying why.
        checked = checked_helm_entries(entry)
        if not checked:
            skipped.append(entry["name"])
            continue
        refused += [(desc, why) for desc, why in checked if why]
        descs = [desc for desc, why in checked if not why]
        if items and descs:
            descs = _helm_item_entries(manifest, entry, descs, plan)
        lines.extend(f"  {{description: {hocon_string(desc)}, priority: 1}}" for desc in descs)
    return lines, skipped, refused, plan


def helm_items_summary(manifest: dict) -> list:
    """What the HELM conf of an item-level manifest runs, counted (``reduce`` prints it beside the files)."""
    return [line.lstrip("# ") for line in _helm_items_plan(manifest, _conf_entries(manifest, True)[3])]


def write_helm_conf(manifest: dict, out_dir: Path) -> list:
    """``run_entries_<group>.conf`` for ``helm-run --conf-paths``."""
    if inspect_only(manifest):  # every task runs under Inspect: HELM runs none of them
        return []
    items = manifest.get("kind") == "items"  # an item-level reduction: HELM runs its own draw of instances
    lines, skipped, refused, plan = _conf_entries(manifest, items)
    name = f"run_entries_{group_stem(manifest)}.conf"
    # The path as the user named the folder (the final one, not the staging folder), as the lm-eval YAML's Run line.
    shown = Path(getattr(out_dir, "shown", out_dir)) / name
    head = [comment(f"Reduced benchmark written by harness-ext {manifest.get('tool', {}).get('version', '')}.")]
    if lines:  # no Run line for a conf with nothing to run, as the lm-eval YAML has none without a group
        # An item-level conf's entries carry their own max_eval_instances, so the command needs none.
        flag = "" if items else " --max-eval-instances 1000"
        head.append(comment(f"Run: helm-run --conf-paths {shlex.quote(str(shown))} --suite SUITE{flag} "
                            "--models-to-run MODEL"))
        head += [comment(line) for line in helm_shots_note(manifest)]
    if items:
        head += HELM_ITEMS_NOTE + _helm_items_plan(manifest, plan)
    if skipped:
        head.append(comment(f"No HELM run entry known for: {', '.join(map(quoted, skipped))}"))
    if refused:
        head.append(comment(f"Left out: {len(refused)} run entr{'y' if len(refused) == 1 else 'ies'} from the results "
                            "whose arguments could make helm-run read or import files outside this folder:"))
        head += [comment(f"  {quoted(desc)}: {why}") for desc, why in refused]
    # HELM's reader requires the entries field (a conf of comments alone stops helm-run with a traceback); an
    # empty list reads, and helm-run says it has no run specs and stops.
    none = ("No run entry of this subset is left to write (see above)" if refused or plan else
            f"No {'task' if items else 'dataset'} of this subset has a HELM run entry")
    body = ("entries: [\n" + ",\n".join(lines) + "\n]\n" if lines else
            f"# {none}, so there is nothing for helm-run to run.\nentries: []\n")
    path = Path(out_dir) / name
    path.write_text("\n".join(head) + "\n" + body, encoding="utf-8")
    return [path]


def write_task_list(manifest: dict, out_dir: Path) -> list:
    """``<group>_tasks.txt``: one line per selected dataset, in selection order, for ``lm_eval --tasks``.

    A dataset's line is its lm-eval tasks: those of lm-eval's own results, or those harness-ext's name table
    (:mod:`~harness_ext.methods.reduction.harness_names`) gives a HELM scenario or a leaderboard's column (several
    joined with commas, lm-eval's own list syntax: HELM's MATH is 7 tasks). A dataset with no known lm-eval task (a
    leaderboard's own column, ``bench_a``) is listed by its own name, unverified: ``lm_eval --tasks`` runs whatever
    lm-eval has of that name, and stops at a name it does not have; a line naming one of lm-eval's groups (a
    leaderboard's ``mmlu``) runs the whole group. ``reduce`` warns of both, with counts
    (:func:`~harness_ext.methods.reduction.lm_eval_group.task_list_warnings`).

    Left out, each counted in a warning (:func:`~harness_ext.methods.reduction.lm_eval_group.task_list_lines`): an
    lm-eval task named as a path (:func:`~harness_ext.methods.reduction.harness_names.path_like_task`), a name
    ``lm_eval --tasks`` would load as a file (:func:`~harness_ext.methods.reduction.harness_names.reads_as_file`),
    split at a comma that is not harness-ext's own join (a board's column ``arc_easy,piqa`` would run both of
    lm-eval's full tasks: :func:`~harness_ext.methods.reduction.harness_names.split_by_comma`), or match as a pattern
    against its own tasks (``*``, ``?``, ``[``: it would run every task it matches). For an item-level manifest, the
    tasks of its lm-eval group as the group runs them (the names its ``--samples`` file keys), never a full lm-eval
    task of another name; none when its tasks all run under Inspect (``inspect_sample_ids.json`` names them)."""
    if inspect_only(manifest):
        return []
    # An item manifest's lines are the group's own tasks, as lm-eval runs them (a declared harness_task), the names
    # --samples keys: a task mapped to lm-eval's full task of another name (HELM Lite's "commonsense" to openbookqa)
    # or one lm-eval already has (HELM Lite's "mmlu") would run all of that task, --samples matching none of its
    # documents. Those named as a file, with a comma or as a pattern are left out, as reduce's warnings say.
    kept, *left = task_list_lines(manifest)
    names = [list_line(n, "task name") for n in kept]
    for n in (n for out in left for n in out):  # a name no line can hold refuses the list, left out or not
        list_line(n, "task name")
    path = Path(out_dir) / f"{group_stem(manifest)}_tasks.txt"
    path.write_text("\n".join(names) + "\n", encoding="utf-8")
    return [path]
