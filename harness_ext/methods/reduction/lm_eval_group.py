"""The lm-evaluation-harness group of a reduced benchmark: ``<group>.yaml``, the task YAMLs it needs, and the
estimate that makes the group's row in lm-eval's table the full-benchmark estimate.

Task naming uses the harness's own v0.4 task names (MMLU subjects as ``mmlu_<subject>``, whatever harness
produced the scores, :mod:`harness_ext.methods.reduction.harness_names`). A dataset lm-eval cannot express
is listed in a comment naming it, never silently dropped, and a file never holds an empty task list. The
manifest writer ``lm_eval_yaml`` (:mod:`harness_ext.plugins.manifest_writers`) registers
:func:`write_lm_eval_yaml`.

An item-level manifest (``reduce --items N``) gets a group of every task and lm-eval's ``--samples``
file (a JSON object, task name -> list of document indices; incompatible with ``--limit``), and, when some
tasks' items came from Inspect AI logs, ``inspect_sample_ids.json`` (Inspect task -> drawn sample ids); when all
of them did, that file alone: lm-eval runs none of them.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from harness_ext.methods.reduction.harness_names import (glob_names_warning, lm_eval_metric, lm_eval_task_list,
                                                       metric_label, metric_parts, path_like_tasks, reads_as_file,
                                                       LM_EVAL_HARNESS, OWN_TASK_BENCHMARKS, reduced_name, run_share,
                                                       helm_only, split_by_comma, task_list_name)
from harness_ext.methods.reduction.inspect_samples import (FILE_NAME as INSPECT_FILE, inspect_only,
                                                          write_inspect_sample_ids)
from harness_ext.methods.reduction.item_harness_tasks import declared_note, harness_names, items_group_tasks
from harness_ext.methods.reduction.item_manifest import decode_ids
from harness_ext.methods.reduction.lm_eval_release import release_needs
from harness_ext.report import plural
from harness_ext.safe_output import check_group_name, comment, quoted, yaml_text
from harness_ext.store.globs import is_glob

#: The file, copied into the reduced folder, that makes the group's row the estimate (lm_eval_group_estimate.py here).
ESTIMATE_MODULE = "harness_ext_estimate"
ESTIMATE_REF = f"{ESTIMATE_MODULE}.estimate"


def group_stem(manifest) -> str:
    return check_group_name(manifest.get("group_name") or "harness_ext_reduced")


def check_members(group: str, names) -> None:
    """Refuse a task named as the group: lm-eval indexes one of the two (the other's file is skipped), and the group
    then lists itself or runs the task in its place."""
    from harness_ext.errors import HarnessExtError

    if group in set(names):
        raise HarnessExtError(f"a task of the subset is named {quoted(group)}, as the lm-eval group: lm-eval would "
                              "take one for the other; choose another group name (reduce --group-name NAME)")


def check_task_paths(names, sources: dict) -> None:
    """Refuse a task whose name lm-eval would read as a path: with ``--log_samples`` (the Run line asks for it) it
    writes ``samples_<task>_<date>.jsonl``, so a '/' (or a '\\', Windows' separator) names folders inside the
    output folder that do not exist: lm-eval logs that it could not save them, and the samples are lost."""
    from harness_ext.errors import HarnessExtError

    for name in dict.fromkeys(names):
        if "/" in name or "\\" in name:
            src = (sources.get(name) or {}).get("source")
            raise HarnessExtError(f"the subset task {quoted(name)}{f' (from {src})' if src else ''} has a '/' or '\\' "
                                  "in its name: lm-eval's --log_samples would write its samples to a path through "
                                  "folders that do not exist, and lose them; choose datasets without it "
                                  "(reduce --datasets GLOB) or rename it in its results file")


def _task_file_stem(task: str, taken: set) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", task).lstrip(".-")[:150] or "task"  # a safe file name (safe_output)
    # Compared without case: on macOS and Windows "MMLU.yaml" is "mmlu.yaml", and one task's file would replace another's.
    while stem.casefold() in taken:
        stem += "_"
    taken.add(stem.casefold())
    return stem


def write_task_file(name: str, sources: dict, out_dir: Path, shown, taken: set, written: list, unknown: list,
                    reserved=()) -> None:
    """``<task>.yaml`` beside the group for a task whose configuration came from the ingested results
    (appended to ``written``); a task with no known definition is appended to ``unknown``. ``reserved``: the names
    of the group and its tasks, which the task's tags may not take."""
    from harness_ext.store.task_yaml_safety import task_yaml_text

    src = sources.get(name) or {}
    if src.get("origin") == "results":
        path = out_dir / f"{_task_file_stem(name, taken)}.yaml"
        path.write_text(task_yaml_text(name, src, shown, reserved), encoding="utf-8")
        written.append(path)
    elif src.get("origin") == "unknown":
        unknown.append((name, src))


def task_file_notes(written: list, unknown: list) -> list:
    """The group header's lines on the task files written beside it and the tasks still missing."""
    header = []
    if written:
        header.append(comment(f"Task definitions in this folder (from the ingested results): {', '.join(p.name for p in written)}"))
    for name, src in unknown:
        where = f" It was defined in {src['config_source']}." if src.get("config_source") else ""
        header.append(comment(f"NOT SELF-CONTAINED: task {quoted(name)} is not defined here ({src.get('reason', 'unknown')}).{where}"))
        header.append("#   Copy its YAML (and any files it includes) into this folder: lm-eval takes one --include_path.")
    return header


def write_lm_eval_yaml(manifest: dict, out_dir: Path) -> list:
    """``<group>.yaml``, a group config ``lm_eval --include_path DIR --tasks <group>`` runs, and the task YAMLs it needs.

    A subset task built into lm-eval is named and lm-eval resolves it; one whose configuration
    ``reduce`` kept from the ingested results files is written as ``<task>.yaml`` beside the group
    (``manifest["lm_eval_tasks"]``); any other is listed in the group's header with what the folder still needs.
    """
    if manifest.get("kind") == "items":  # an item-level reduction: every task, with --samples
        return write_items_lm_eval_yaml(manifest, out_dir)
    shown = getattr(out_dir, "shown", out_dir)  # the final folder, when the core stages the files first
    cli_dir = shlex.quote(str(shown))  # the Run hints are copied into a shell: a folder with a space stays one word
    out_dir = Path(out_dir)
    sources = manifest.get("lm_eval_tasks") or {}
    group = group_stem(manifest)
    tasks, skipped, written, unknown, paths = [], [], [], [], []
    taken = {group.casefold()}
    members = [n for e in manifest["subset"] for n in lm_eval_task_list(e)]
    check_members(group, members)
    check_task_paths(members, sources)
    reserved = {group, *members}
    for entry in manifest["subset"]:
        names, as_paths = lm_eval_task_list(entry), path_like_tasks(entry)
        if as_paths:  # never written as a task: lm-eval would lose its samples (see the warning)
            paths.append(f"{entry['name']} ({entry.get('benchmark')}): {', '.join(map(quoted, as_paths))}")
        if not names:
            if not as_paths:
                skipped.append(f"{entry['name']} ({entry.get('benchmark')})")
            continue
        shots = entry.get("num_fewshot")
        # A shot count read from another harness (HELM's in-context examples) is kept: the same setting.
        for name in names:
            tasks.append({"task": name, "num_fewshot": int(shots)} if isinstance(shots, int) and shots >= 0 else name)
            write_task_file(name, sources, out_dir, shown, taken, written, unknown, reserved)
    doc = {"group": group, "group_alias": group_alias(manifest), "task": tasks}
    # lm-eval's metric, also for a subset chosen from HELM results (HELM's EM on MMLU is lm-eval's acc).
    metrics = {lm_eval_metric(e) for e in manifest["subset"] if lm_eval_task_list(e)}
    estimated = len(metrics) == 1 and None not in metrics
    item_files = []
    if estimated:
        # lm-eval can only aggregate a metric every subtask reports. The aggregation is the shipped estimate
        # (a !function tag, added to the dumped text below: yaml.safe_dump writes no tags).
        # A filtered metric ("exact_match,strict-match") names its filter.
        # A score that is the mean of several metrics (the leaderboard's IFEval) aggregates its first: see the notes.
        item_files.append(_estimate_aggregation(doc, metric_parts(next(iter(metrics)))[0], out_dir))
    doc["metadata"] = {"version": 1.0}
    # Names come from result files: comments escape them, the document goes through yaml.safe_dump.
    title = comment(f"Reduced benchmark written by harness-ext {manifest.get('tool', {}).get('version', '')}.")
    run = [comment(f"Run: lm_eval --model hf --model_args pretrained=MODEL --include_path {cli_dir} --tasks {group} --log_samples --output_path results/"),
           ("# The group's row in lm-eval's table is the full-benchmark estimate with its 90% interval, made by\n"
            f"# {ESTIMATE_MODULE}.py from the subset's scores and manifest.json (it needs harness-ext installed;"
            "\n# without it the row is the subset's plain mean, labelled so). 'harness-ext predict' gives every dataset."
            if estimated else "# The group's plain mean is not the full-benchmark estimate: use 'harness-ext predict'.")]
    items = (manifest.get("items") or {}).get("tasks") or {}
    if items:
        samples = out_dir / f"{group}_samples.json"
        samples.write_text(json.dumps({t: b["doc_ids"] for t, b in items.items()}) + "\n", encoding="utf-8")
        item_files.append(samples)
        run.append(comment(f"Item subset: add --samples {cli_dir}/{samples.name} to run only the anchor items of "
                           f"{', '.join(map(quoted, items))} (then 'harness-ext predict' weights them; use --log_samples)"))
    run += version_notes(sources, [t if isinstance(t, str) else t["task"] for t in tasks], bool(items), estimated)
    notes = task_file_notes(written, unknown) + _mean_metric_notes(manifest["subset"], estimated)
    if skipped:
        notes.append("# No lm-eval equivalent (run these in their own harness; see harness_ext.methods.reduction.harness_names):")
        notes += [comment(f"  {s}") for s in skipped]
    if paths:
        notes.append(comment(f"Left out of the group: {len(paths)} subset dataset{'s' * (len(paths) != 1)} whose lm-eval "
                             "task is named with a '/' or '\\', where --log_samples would lose the samples (rename "
                             "the task in its results file to run it):"))
        notes += [comment(f"  {s}") for s in paths]
    path = _group_file(out_dir / f"{group}.yaml", title, run, notes, doc if tasks else None,
                       "# No dataset of this subset has an lm-eval task, so there is no group to run.")
    return [path] + written + item_files


def _mean_metric_notes(subset: list, estimated: bool) -> list:
    """The group header's lines on subset datasets whose score is the mean of several lm-eval metrics, which a group
    YAML cannot name (its ``aggregate_metric_list`` aggregates each metric over the tasks, never two into one)."""
    means = [(e, lm_eval_metric(e)) for e in subset if lm_eval_task_list(e) and len(metric_parts(lm_eval_metric(e))) > 1]
    if not means:
        return []
    lines = [comment(f"{e['name']} ({', '.join(lm_eval_task_list(e))}) is scored as {metric_label(m)}, which lm-eval's "
                     "group YAML cannot express: lm-eval's table shows each metric, 'harness-ext predict' takes the mean")
             for e, m in means]
    if estimated:
        lines.append(comment(f"The group aggregates {metric_parts(means[0][1])[0]} only so that lm-eval calls "
                             f"{ESTIMATE_MODULE}.py, which reads each task's score as the manifest does; without "
                             "harness-ext the row is that one metric's plain mean, not the score"))
    return lines


def task_list_lines(manifest: dict) -> tuple:
    """``(kept, as_file, with_comma, globs)``: the lines ``<group>_tasks.txt`` lists, and those it leaves out, by why:
    named as a file (``~x``, ``x.yaml``: ``lm_eval --tasks`` loads a .yaml one, importing the code beside it), with a
    comma (where ``lm_eval --tasks`` splits its list: ``arc_easy,piqa`` would run both of lm-eval's full tasks) or as a
    glob pattern (it would run every task the pattern matches). The task list and its warnings both read it.

    An item-level manifest's lines are its group's tasks as lm-eval runs them (the names its ``--samples`` file
    keys). A dataset-level manifest's are its subset datasets' lines (:func:`~.harness_names.task_list_name`) but
    those whose lm-eval task is named as a path (:func:`~.harness_names.path_like_tasks`) and those only HELM runs
    (:func:`~.harness_names.helm_only`, warned by :func:`~.harness_names.no_equivalent_warnings`); a comma there is kept only
    as harness-ext's own join of a dataset's several lm-eval tasks (:func:`~.harness_names.split_by_comma`)."""
    if manifest.get("kind") == "items":
        runs_as = harness_names(manifest, checked=True)
        names = [runs_as[t] for t in items_group_tasks(manifest)[0]]
        comma = {t for t in names if "," in t}
    else:
        entries = _listed_datasets(manifest)
        names = [task_list_name(e) for e in entries]
        comma = {task_list_name(e) for e in entries if split_by_comma(e)}
    as_file = [t for t in names if reads_as_file(t)]
    with_comma = [t for t in names if not reads_as_file(t) and t in comma]
    globs = [t for t in names if not reads_as_file(t) and t not in comma and is_glob(t)]
    left = set(as_file) | set(with_comma) | set(globs)
    return [t for t in names if t not in left], as_file, with_comma, globs


def _listed_datasets(manifest: dict) -> list:
    """A dataset-level manifest's subset entries that may have a line in the task list: not those whose lm-eval task
    is named as a path, nor those only HELM runs (XSUM: its line would be helm-summarize's group, ``accuracy``)."""
    return [e for e in manifest["subset"] if not path_like_tasks(e) and not helm_only(e)]


def task_list_warnings(manifest: dict) -> list:
    """The warnings on the lines the task list leaves out (:func:`task_list_lines`; the glob patterns'
    :func:`~.harness_names.glob_names_warning`); for a dataset-level manifest, those with a comma (the names read as
    files and the patterns are :func:`~.harness_names.no_equivalent_warnings`'), and what the list names that is not
    known to be lm-eval's (:func:`_unverified_names_warnings`)."""
    if inspect_only(manifest):
        return []
    kept, as_file, with_comma, globs = task_list_lines(manifest)
    n, out = len(manifest.get("tasks") or manifest["subset"]), []
    if manifest.get("kind") != "items":
        if with_comma:
            one = len(with_comma) == 1
            out.append(f"{len(with_comma)} of the {n} subset datasets {'is' if one else 'are'} named with a comma "
                       f"({', '.join(map(quoted, with_comma[:6]))}{' ...' if len(with_comma) > 6 else ''}), where "
                       "lm_eval --tasks splits its list (each part it would run as its own task, all of it), so the "
                       f"task list leaves {'it' if one else 'them'} out; the manifest keeps {'it' if one else 'them'}")
        return out + _unverified_names_warnings(manifest, set(kept))
    for left, why in ((as_file, "named as a path or a YAML file, which lm_eval --tasks reads as a file (a .yaml one "
                       "it loads, importing the code beside it)"),
                      (with_comma, "named with a comma, where lm_eval --tasks splits its list (each part it would "
                       "run as its own task, all of it)")):
        if left:
            out.append(f"{plural(len(left), 'item task')} of {n} {'is' if len(left) == 1 else 'are'} {why} "
                       f"({', '.join(map(quoted, left[:6]))}{' ...' if len(left) > 6 else ''}), so the task list "
                       "leaves {0} out; the lm-eval group and the manifest keep {0}".format("it" if len(left) == 1 else "them"))
    return out + ([glob_names_warning(globs, n)] if globs else [])


def _unverified_names_warnings(manifest: dict, kept: set) -> list:
    """``reduce``'s warnings on a dataset-level task list's lines that are not known to be lm-eval's own names for
    what was measured: a subset dataset without a known lm-eval task (a leaderboard's column, a HELM scenario without
    an equivalent) is listed by its own name, unverified; a line naming one of lm-eval's own groups for a dataset
    that did not come from lm-eval results (a leaderboard's ``mmlu``) runs that whole group. ``kept``: the task list's
    lines (:func:`task_list_lines`)."""
    from harness_ext.store.lm_eval_tasks import own_lm_eval_names

    subset = [e for e in _listed_datasets(manifest) if task_list_name(e) in kept]
    own = [e for e in subset if not lm_eval_task_list(e)]
    # lm-eval's own results name lm-eval's tasks, and a benchmark known to have run lm-eval's tasks under titles of its
    # own (the Open LLM Leaderboard v2's) is mapped to them: a group there is the group that was run.
    other = [e for e in subset if e.get("benchmark") not in ("lm_eval", *OWN_TASK_BENCHMARKS)
             and e.get("harness") != LM_EVAL_HARNESS]
    if not other and not own:
        return []
    found, looked_up = own_lm_eval_names(p for e in other + own for p in task_list_name(e).split(","))
    out, n = [], len(manifest["subset"])
    if own:
        names = [task_list_name(e) for e in own]
        has = [t for t in dict.fromkeys(names) if t in found]
        lacks = [t for t in dict.fromkeys(names) if t not in found]
        # A dataset listed by its task (HELM's helm-summarize group "accuracy" for XSUM) is shown with its name.
        shown = [quoted(t) if t == e["name"] else f"{quoted(e['name'])} as {quoted(t)}" for e, t in zip(own, names)]
        one = len(own) == 1
        where = ", ".join(sorted({str(e.get("benchmark") or "other") for e in own}))
        out.append(f"the task list names {len(own)} of the {n} subset datasets as lm-eval tasks by the "
                   f"name{' it has' if one else 's they have'} in {where}'s results "
                   f"({', '.join(shown[:6])}{' ...' if len(names) > 6 else ''}), unverified: no lm-eval "
                   f"task is known to measure {'it' if one else 'them'}. lm_eval --tasks runs lm-eval's own task or group of such a name, "
                   "whatever the results measured under it"
                   + (f" ({len(has)} of them: {', '.join(map(quoted, has[:6]))})" if has else "")
                   + (f", and stops at a name it does not have ({len(lacks)}: {', '.join(map(quoted, lacks[:6]))}"
                      f"{' ...' if len(lacks) > 6 else ''})" if looked_up and lacks else
                      "" if looked_up else " (lm-eval is not installed: only its 0.4.13 group names were checked)")
                   + "; check each line against the results' own definition before running the list")
    groups = [p for e in other for p in task_list_name(e).split(",") if found.get(p) == "group"]
    if groups:
        one = len(groups) == 1
        out.append(f"{len(groups)} line{'' if one else 's'} of the task list name{'s' if one else ''} lm-eval's own "
                   f"group{'' if one else 's'} ({', '.join(map(quoted, groups[:6]))}{' ...' if len(groups) > 6 else ''}) "
                   f"for {'a subset dataset that' if one else 'subset datasets that'} did not come from lm-eval "
                   "results: lm_eval --tasks runs a group whole, every task in it" + (" (lm-eval's mmlu: its 57 subjects)" if "mmlu" in groups else "")
                   + ", which is the dataset only if the results measured that whole group")
    return out


def _items_said(tasks: dict, listed: list, cost: dict) -> str:
    """The Run hint's count of items: the group's, and the tasks left out of it when there are any."""
    if len(listed) == len(tasks):
        return f"({cost['items_run']:,} of {cost['items_full']:,} items, drawn at random; it gives every task's estimate)"
    here = sum(int(tasks[t].get("n_run") or 0) for t in listed)
    left = len(tasks) - len(listed)
    return (f"({here:,} items of {len(listed)} task{'s' * (len(listed) != 1)} here, drawn at random; for every task's "
            f"estimate, also the drawn items of the {left} task{'s' * (left != 1)} left out below, run in their own "
            f"harness: {cost['items_run']:,} of {cost['items_full']:,} items in all)")


def write_items_lm_eval_yaml(manifest: dict, out_dir) -> list:
    """``<group>.yaml`` (every task of the manifest) and ``<group>_samples.json`` (the drawn items per task); with
    tasks from Inspect logs, ``inspect_sample_ids.json`` too (:mod:`~.inspect_samples`), and that alone when every
    task is from Inspect logs (no lm-eval task to run)."""
    if inspect_only(manifest):
        return write_inspect_sample_ids(manifest, out_dir)
    shown = getattr(out_dir, "shown", out_dir)
    cli_dir = shlex.quote(str(shown))  # the Run hints are copied into a shell: a folder with a space stays one word
    out_dir = Path(out_dir)
    group = group_stem(manifest)
    tasks = manifest["tasks"]
    # A table task declared to be an lm-eval task (items: harness_tasks) runs, and is keyed in --samples, as that task.
    runs_as = harness_names(manifest, checked=True)
    check_members(group, runs_as.values())
    check_task_paths([t for t, b in tasks.items() if b.get("benchmark") in (None, "", "lm_eval")],
                     manifest.get("lm_eval_tasks") or {})
    samples = out_dir / f"{group}_samples.json"
    samples.write_text(json.dumps({runs_as[t]: decode_ids(b["sample"]).tolist() for t, b in tasks.items()}) + "\n",
                       encoding="utf-8")
    # Tasks from Inspect logs: their drawn sample ids as Inspect names them, for `inspect eval --sample-id`.
    inspect = write_inspect_sample_ids(manifest, out_dir)
    cost = manifest["cost"]
    sources = manifest.get("lm_eval_tasks") or {}
    foreign = sorted(t for t, b in tasks.items() if b.get("benchmark") not in (None, "", "lm_eval")
                     and not (sources.get(t) or {}).get("builtin") and not b.get("harness_task"))
    listed, clash, pathy = items_group_tasks(manifest)
    title = comment(f"Reduced benchmark (items) written by harness-ext {manifest.get('tool', {}).get('version', '')}.")
    run = [comment(f"Run: lm_eval --model hf --model_args pretrained=MODEL --include_path {cli_dir} --tasks {group} "
                      f"--samples {cli_dir}/{samples.name} --log_samples --output_path results/"),
              comment(f"then: harness-ext predict -m {cli_dir} results/  " + _items_said(tasks, listed, cost))]
    metrics = [b.get("metric") for b in tasks.values()]
    estimated = all(isinstance(m, str) and m for m in metrics)
    mixed = len(set(metrics)) > 1
    run.append("# The group's row in lm-eval's table is the full-benchmark estimate with its 90% interval, made by\n"
               f"# {ESTIMATE_MODULE}.py from the logged items and manifest.json (it needs harness-ext installed and\n"
               + ("# --log_samples). The tasks' metrics differ, so the row is their mean score (mean_score,estimate)\n"
                  "# and there is no row without the estimate." if mixed else
                  "# --log_samples; without them the row is the items' plain mean, labelled so).") if estimated else
               "# The tasks' metrics are not known, so the group has no row: use 'harness-ext predict'.")
    notes = [comment(f"Tasks from Inspect AI logs: inspect eval TASK --model MODEL --sample-id IDS, each TASK and its "
                     f"IDS (joined with commas) from {cli_dir}/{INSPECT_FILE}")] if inspect else []
    if foreign:
        notes.append(comment(f"Item ids of {', '.join(map(quoted, foreign[:10]))} are those of the table they were "
                             "ingested from (its own numbers, or positions in its order), not necessarily lm-eval "
                             "document indices: run these tasks only with a task definition whose documents are in "
                             "that order"))
    notes += declared_note(runs_as)
    if pathy:
        notes.append("# Left out of the group: named with a '/' or '\\', which lm-eval's --log_samples reads as "
                     "folders (its samples would be lost); rename them in their tables:")
        notes += [comment(f"  {quoted(t)}") for t in pathy]
    if clash:
        notes.append("# Left out of the group: lm-eval has a task or group of the same name that is another evaluation, "
                     "and would run it\n# (all of it: --samples matches none of its documents). Run these items in "
                     "their own harness:")
        notes += [comment(f"  {t}: {sources[t]['reason']}") for t in clash]
    # Task definitions kept from the ingested results are written beside the group (lm-eval takes one --include_path).
    written, unknown, taken = [], [], {group.casefold()}
    for t in listed:
        write_task_file(t, sources, out_dir, shown, taken, written, unknown, {group, *tasks, *runs_as.values()})
    notes += task_file_notes(written, unknown)
    none = "# No task of this reduction can run under lm-eval, so there is no group to run."
    if not listed:
        return [_group_file(out_dir / f"{group}.yaml", title, run, notes, None, none), samples] + inspect + written
    run += version_notes(sources, [runs_as[t] for t in listed], True, estimated)
    doc = {"group": group, "group_alias": f"{reduced_name(manifest) or group} ({'estimated from ' * estimated}"
                                          f"{run_share(manifest)})",
           "task": [runs_as[t] for t in listed]}
    files = [samples] + inspect
    if estimated:  # with mixed metrics, lm-eval needs one of them to call the aggregation; the row replaces it
        files.append(_estimate_aggregation(doc, metrics[0], out_dir))
    doc["metadata"] = {"version": 1.0}
    return [_group_file(out_dir / f"{group}.yaml", title, run, notes, doc, none), *files] + written


def version_notes(sources: dict, tasks: list, samples: bool, estimated: bool) -> list:
    """The group header's lines on the lm-eval releases the folder needs (run live on 0.4.2 to 0.4.13): the
    estimate's ``aggregate_metric_list``, ``--samples``, and a task defined here under the name of one of lm-eval's
    own (``sources``: the manifest's ``lm_eval_tasks``), which older releases replace by their own; the needs are
    those the manifest records (:func:`~.lm_eval_release.release_needs`)."""
    lines = []
    for need in release_needs(sources, tasks, samples, estimated):
        if need["for"] == "group":
            lines.append(comment(f"Needs lm-eval {need['release']} or later: 0.4.3 and older refuse the group's "
                                 "aggregate_metric_list."))
        elif need["for"] == "samples":
            lines.append(comment(f"--samples needs lm-eval {need['release']} or later: 0.4.8 and older stop at "
                                 "'unrecognized arguments: --samples'."))
        else:
            own = need["tasks"]
            lines.append(comment(f"{', '.join(map(quoted, own[:6]))}{' ...' if len(own) > 6 else ''}: defined here "
                                 f"under the name{'s' * (len(own) > 1)} of lm-eval's own; lm-eval 0.4.9 and older run "
                                 f"their own task instead, without a word: use lm-eval {need['release']} or later."))
    return lines


def _group_file(path: Path, title: str, run: list, notes: list, doc, none: str) -> Path:
    """Write ``<group>.yaml``: the title, how to run the group, the notes, then the group ``doc``; with no group
    (``doc`` None: no task lm-eval can run) the title, ``none`` and the notes, and no run line. Returns ``path``."""
    lines = [title, *(run if doc is not None else [none]), *notes]
    path.write_text("\n".join(lines) + "\n" + ("" if doc is None else _tagged(yaml_text(doc))), encoding="utf-8")
    return path


def _estimate_aggregation(doc: dict, metric: str, out_dir: Path) -> Path:
    """Make the shipped estimate ``doc``'s aggregation of ``metric`` (``acc`` or ``exact_match,strict-match``:
    a filtered metric names its filter) and copy its module beside the group; returns the module's path."""
    name, _, filt = metric.partition(",")
    doc["aggregate_metric_list"] = [{"metric": name, "aggregation": ESTIMATE_REF, "weight_by_size": False,
                                     **({"filter_list": filt} if filt else {})}]
    module = out_dir / f"{ESTIMATE_MODULE}.py"
    module.write_text(Path(__file__).with_name("lm_eval_group_estimate.py").read_text(encoding="utf-8"), encoding="utf-8")
    return module


def _tagged(text: str) -> str:
    """The dumped group YAML with the estimate's ``!function`` tag (``yaml.safe_dump`` writes no tags)."""
    return text.replace(f"aggregation: {ESTIMATE_REF}\n", f"aggregation: !function {ESTIMATE_REF}\n")


def group_alias(manifest: dict) -> str:
    """The name lm-eval's table shows for the reduced group: the benchmark's, ``mmlu (estimated from 8 of 57)``."""
    benchmarks = {d.get("benchmark") for d in manifest["datasets"]} - {None}
    name = benchmarks.pop() if len(benchmarks) == 1 else group_stem(manifest)
    return f"{name} (estimated from {run_share(manifest)})"
