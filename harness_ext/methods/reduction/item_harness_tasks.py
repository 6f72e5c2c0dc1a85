"""Item-table tasks declared to be lm-eval tasks: ``items: harness_tasks:`` in a table's sidecar.

An item-response table names its tasks as its source does (the Open LLM Leaderboard v2 tables' ``ifeval``), which is
not the name of the lm-eval task a new model runs (``leaderboard_ifeval``). The table's sidecar may declare it
(:func:`harness_ext.store.item_format.harness_task_block`; ``ingest`` stores it with the table's sources). Then
``reduce --items`` keeps the table's name for the task in the manifest and records the lm-eval name beside it
(``tasks[t]["harness_task"]``): the lm-eval group lists the lm-eval task, the ``--samples`` file keys its drawn items
by it, and ``predict`` (and the group's estimate inside lm-eval) reads that task's ``samples_<task>_<date>.jsonl``
logs as the manifest task's. Nothing else is guessed: the table's item ids are handed to lm-eval as its document
numbers (``doc_id``), which they are only if the table numbers its items as lm-eval does, and ``reduce`` says so.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...errors import HarnessExtError
from ...report import listed
from ...safe_output import harness_task_problem, quoted
from ...store.lm_eval_tasks import defines_group
from ...store.tables import table_columns

_METRIC_LINE = re.compile(r"^\s*-?\s*metric:\s*['\"]?([A-Za-z0-9_]+)", re.MULTILINE)
_INCLUDE_LINE = re.compile(r"^include:\s*['\"]?([A-Za-z0-9_][A-Za-z0-9_.-]*)['\"]?\s*$", re.MULTILINE)


def declared_harness_tasks(store, pairs) -> dict:
    """``{task: (lm-eval task, [sidecar-declaring files])}`` for the ``(benchmark, task)`` ``pairs`` whose item tables
    declared one. Two files of one task declaring different lm-eval tasks raise one error naming both."""
    cols = table_columns(store.con, "sample_sources")
    if "harness_task" not in cols or not pairs:  # a store made before the declaration existed
        return {}
    found = store.con.execute(
        "SELECT benchmark, task, harness_task, list(DISTINCT path ORDER BY path) FROM sample_sources "
        "WHERE coalesce(harness_task, '') <> '' GROUP BY ALL ORDER BY ALL").fetchall()
    wanted, out = set(pairs), {}
    for bench, task, harness, paths in found:
        if (bench, task) not in wanted:
            continue
        if task in out and out[task][0] != harness:
            raise HarnessExtError(
                f"task {quoted(task)} of benchmark {quoted(bench)} is declared to be lm-eval's {out[task][0]} (by "
                f"{out[task][1][0]}) and {harness} (by {paths[0]}): correct one sidecar's items: harness_tasks and "
                "ingest it again")
        out[task] = (harness, list(paths))
    return out


def harness_task_metrics(path: Path) -> list:
    """The metric names an lm-eval task YAML lists (its ``metric_list``, and that of a YAML it includes from its own
    folder), read as text; empty when none is found."""
    text = path.read_text(encoding="utf-8", errors="replace")
    more = _INCLUDE_LINE.search(text)
    if more and (path.parent / more.group(1)).is_file():
        text += "\n" + (path.parent / more.group(1)).read_text(encoding="utf-8", errors="replace")
    return sorted(set(_METRIC_LINE.findall(text)))


def attach_harness_tasks(manifest: dict, declared: dict) -> dict:
    """Record each declared task's lm-eval name in ``manifest["tasks"]`` and return its ``lm_eval_tasks`` entries;
    ``manifest["warnings"]`` gets what the user must know (the ids taken as document numbers, a metric lm-eval
    does not log, a name the installed lm-eval lacks)."""
    from ...store.lm_eval_tasks import builtin_task_index, lm_eval_tasks_dir

    tasks = manifest["tasks"]
    declared = {t: v for t, v in declared.items() if t in tasks}
    if not declared:
        return {}
    names = {t: h for t, (h, _) in declared.items()}
    clash = sorted(set(names.values()) & (set(tasks) - set(names)))
    if clash:
        raise HarnessExtError(f"lm-eval's {clash[0]} is a task of this reduction and also declared (items: "
                              f"harness_tasks) to be the table task {[t for t, h in names.items() if h == clash[0]][0]}: "
                              "reduce one of them (--datasets), or correct the sidecar")
    twice = sorted({h for h in names.values() if list(names.values()).count(h) > 1})
    if twice:
        raise HarnessExtError(f"tasks {', '.join(t for t, h in names.items() if h == twice[0])} are all declared to "
                              f"be lm-eval's {twice[0]}: each lm-eval task can be one table task only")
    root = lm_eval_tasks_dir()
    index = builtin_task_index(root) if root is not None else {}
    out, warnings = {}, []
    for task, (harness, paths) in declared.items():
        tasks[task]["harness_task"] = harness
        by = f"declared by the sidecar of {Path(paths[0]).name}" + (f" and {len(paths) - 1} more" if len(paths) > 1 else "")
        entry = {"origin": "lm_eval", "harness_task": harness, "declared_by": paths[0]}
        if root is None:
            entry = dict(entry, origin="declared", reason="lm-eval is not installed, so the name was not looked up")
        elif harness not in index:
            entry = dict(entry, origin="unknown", reason=f"declared to be lm-eval's {harness}, which the installed "
                                                         "lm-eval does not have: add its task YAML to the folder")
            warnings.append(f"{task}: {by} to be lm-eval's {harness}, a task the installed lm-eval does not have; "
                            "the group lists it, so add its YAML to the folder")
        elif defines_group(index[harness], harness):  # a group of a later lm-eval than the shipped list
            raise HarnessExtError(f"{task} is declared ({by}) to be lm-eval's {harness}, a group of tasks in the "
                                  f"installed lm-eval ({index[harness].relative_to(root).as_posix()}): --samples lists "
                                  "each task's documents, so a table task can be one lm-eval task only; split the "
                                  "table by task, declare each, and ingest it again")
        else:
            entry["path"] = index[harness].relative_to(root).as_posix()
            logged = harness_task_metrics(index[harness])
            if logged and tasks[task]["metric"] not in logged:
                warnings.append(f"{task}: scored as {tasks[task]['metric']} in its table, but lm-eval's {harness} "
                                f"logs {', '.join(logged)}: predict would find no log of {tasks[task]['metric']}; "
                                "name the table's metric (metric: in its sidecar) and ingest it again")
        out[task] = entry
    listed_ids = [t for t in declared if tasks[t].get("item_ids")]
    warnings.append(
        f"{listed(sorted(declared), 5)} run{'s' if len(declared) == 1 else ''} as lm-eval's "
        f"{listed([names[t] for t in sorted(declared)], 5)} (items: harness_tasks in the tables' sidecars): the "
        "--samples file gives lm-eval the tables' item ids as its document numbers (doc_id), which are the same "
        "documents only if the tables number their items as lm-eval does; a table numbering them by position in "
        "another order pairs each answer with another document"
        + (f" ({listed(listed_ids, 5)}: ids that are not numbers, listed by their text, so certainly not "
           "lm-eval's numbers)" if listed_ids else ""))
    manifest["warnings"] += warnings
    return out


def check_harness_task_field(block: dict) -> str:
    """Why a manifest task's ``harness_task`` cannot be used (empty if absent or usable): a hand-edited manifest
    must not make the written group YAML or ``--samples`` file name a path or YAML."""
    if "harness_task" not in block:
        return ""
    why = harness_task_problem(block["harness_task"])
    return f"harness_task: {why}" if why else ""


def harness_names(manifest: dict, checked: bool = False) -> dict:
    """``{manifest task: the lm-eval task it runs as}``: its declared ``harness_task``, else its own name. ``checked``:
    raise :class:`HarnessExtError` on a ``harness_task`` that is no plain lm-eval task name (the writers check the
    manifest they are handed, which may be edited by hand)."""
    if checked:
        for t, b in manifest["tasks"].items():
            why = check_harness_task_field(b)
            if why:
                raise HarnessExtError(f"task {quoted(t)}: {why}")
    return {t: b.get("harness_task") or t for t, b in manifest["tasks"].items()}


def declared_note(runs_as: dict) -> list:
    """The group header's comment on the declared tasks of ``runs_as`` (:func:`harness_names`), or none."""
    from ...safe_output import comment

    declared = [t for t, h in runs_as.items() if h != t]
    if not declared:
        return []
    return [comment(f"Declared lm-eval tasks (items: harness_tasks): "
                    f"{listed((f'{t} runs as {runs_as[t]}' for t in declared), 10)}; --samples gives them the tables' "
                    "item ids as document numbers (doc_id)")]


def logs_as_manifest_tasks(manifest: dict, long):
    """``long`` (per-item logs: model, task, doc_id, metric, value, ...) with the logs of a declared lm-eval task
    named as the manifest task it is (``leaderboard_ifeval`` -> ``ifeval``); unchanged when none is declared."""
    back = {h: t for t, h in harness_names(manifest).items() if h != t}
    if not back or long.empty or not long["task"].isin(list(back)).any():
        return long
    return long.assign(task=long["task"].astype(str).replace(back))


def items_group_tasks(manifest: dict) -> tuple:
    """``(listed, clash, pathy)``: an item manifest's tasks the lm-eval group runs, and those it leaves out because
    lm-eval has a task or group of the same name (``clash``) or because the name holds a '/' or '\\' (``pathy``)."""
    tasks, sources = manifest["tasks"], manifest.get("lm_eval_tasks") or {}
    # A task named like one of lm-eval's own (HELM Lite's "mmlu") would run lm-eval's, whole: left out, with why.
    clash = [t for t in tasks if (sources.get(t) or {}).get("builtin")]
    # A table's task named with a '/' or '\\': lm-eval's --log_samples would write its log through folders.
    pathy = [t for t in tasks if (sources.get(t) or {}).get("path_like")]
    return [t for t in tasks if t not in clash and t not in pathy], clash, pathy


def where_left_out_tasks_run(manifest: dict, left: list) -> str:
    """Where the drawn items of the tasks the HELM conf leaves out (``left``) can run: the lm-eval group, for the
    tasks it lists; a task it leaves out too (HELM Lite's ``mmlu``, named like lm-eval's 57-subject group) only where
    it came from."""
    from .inspect_samples import inspect_only

    tasks = manifest["tasks"]
    grouped = set(items_group_tasks(manifest)[0]) if not inspect_only(manifest) else set()
    runs = [t for t in left if t in grouped]
    elsewhere = [t for t in left if t not in grouped]
    n = lambda names: sum(int(tasks[t]["n_run"]) for t in names)  # noqa: E731
    said = []
    if runs:
        which = "" if not elsewhere else f" of {', '.join(map(quoted, runs))}"
        said.append(f"Run {'the' if which else 'their'} {n(runs):,} drawn items{which} with the lm-eval group and "
                    "its --samples file.")
    if elsewhere:
        its = "its" if len(elsewhere) == 1 else "their"
        said.append(f"The lm-eval group leaves out {', '.join(map(quoted, elsewhere))} too: run {its} {n(elsewhere):,} "
                    "drawn items (manifest.json lists them) where they came from and give them to predict as an "
                    "item-response table.")
    return " ".join(said)
