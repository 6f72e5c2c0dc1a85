"""The drawn items of tasks whose items came from Inspect AI logs, named as Inspect names them.

``reduce --items`` records in each such task's block (benchmark ``inspect``) an ``inspect`` field: the task as
the logs name it (``eval.task``, with the ``inspect_evals/`` prefix the store drops) and the drawn samples' ids
exactly as the logs give them (a whole number as a number, text as its text: ``"17.0"``, ``"007"``, from the
store's id map), in the draw's order. The item writer writes them to ``inspect_sample_ids.json`` (Inspect task -> ids), a data file only: no
command is built from names or ids that come from result files.

Inspect's ``inspect eval --sample-id`` takes one comma-separated list, strips the blanks around each id, reads
an id of digits as a number and matches each id as a glob pattern (``fnmatch``). So an id with a comma or blanks
at either end cannot be given there, a negative whole number read back as text matches no whole-number id, an id
with ``*``, ``?`` or ``[`` may run other samples too, and an id (or task name) with characters a shell reads
needs quoting: each is still listed, and counted in a warning naming the task.

``inspect eval`` reads a task named ``file.py@task``, a file or a folder as code to import and run (Inspect's
"Tasks" guide: ``inspect eval arc.py@arc_easy``): a log may name its task anything, so a task whose name reads as a
file (``@``, a path of more than ``package/task``, ``.``, ``..`` or a leading ``~``, a ``.py``, ``.ipynb`` or YAML
file), or
holds a glob character (Inspect matches a name its registry lacks as a path pattern from the folder it runs in), is
refused before anything is written, naming the task; so is a name that is a file or folder where ``reduce`` runs or
beside the task's logs (``pkg/x`` beside a shipped ``pkg/x/``). A registry name (``inspect_evals/gpqa_diamond``) is
kept.
"""

from __future__ import annotations

import json
import ntpath
import re

from ...safe_output import quoted, short_name
from ...store.globs import is_glob

#: The benchmark the Inspect item reader stores its tasks under (:mod:`harness_ext.adapters.inspect_ai`).
BENCHMARK = "inspect"
#: The file the item writer writes the Inspect tasks' drawn sample ids to.
FILE_NAME = "inspect_sample_ids.json"
#: The longest list (or task name) given as one command-line argument: below Linux's 128 KiB limit on one argument.
MAX_ARG_CHARS = 100_000
#: What a plain name or id is made of: nothing a shell reads, no blank, no control character.
_PLAIN = re.compile(r"[\w.:/@+=-]+")
_WHOLE = re.compile(r"-?\d{1,19}")
#: File names ``inspect eval`` loads tasks from.
_TASK_FILE = re.compile(r"\.(py|ipynb|ya?ml)$", re.I)


def task_file_problem(name: str):
    """Why ``inspect eval`` would read the Inspect task ``name`` as a file or folder of code, or None. A registry
    name (``task`` or ``package/task``) is none; characters a shell reads are only warned about
    (:func:`unsafe_warnings`): quoted, ``inspect eval`` looks such a name up in its registry."""
    if "@" in name:
        return "an '@', which inspect eval reads as FILE@TASK (it imports FILE)"
    parts = name.split("/")
    if (len(parts) > 2 or name.startswith("~") or "\\" in name or ntpath.splitdrive(name)[0]
            or any(p in ("", ".", "..") for p in parts)):
        return "a path (more than package/task, a leading '/' or '~', '.', '..' or '\\'), which inspect eval loads"
    if any(_TASK_FILE.search(p.strip()) for p in parts):
        return "a file name inspect eval imports (.py, .ipynb, .yaml)"
    if is_glob(name):
        return ("a glob character (* ? [), which inspect eval matches against the files where it runs (a name not "
                "in its registry is a pattern there), importing and running each .py file it matches that defines a task")
    return None


def local_task_problem(name: str, folders) -> str:
    """Why ``inspect eval NAME`` would import code from one of ``folders`` (where it may run: the current folder,
    the folders of the task's logs), or empty. A name Inspect's registry does not hold is matched as a path from
    the folder it runs in (Inspect's ``create_tasks``): a folder of that name has every ``.py`` file in it imported,
    so a log naming its task ``pkg/x`` or ``x`` beside a shipped folder ``pkg/x/`` or ``x/`` runs that folder's code."""
    from pathlib import Path

    for folder in dict.fromkeys(Path(f) for f in folders):
        try:
            there = (folder / name).exists() or (folder / name).is_symlink()
        except (OSError, ValueError):  # a name the file system cannot hold is no file there
            there = False
        if there:
            return (f"a {'folder' if (folder / name).is_dir() else 'file'} of that name in {folder}, which inspect "
                    "eval imports when it runs there and its registry does not hold the name")
    return ""


def inspect_field(store, benchmark: str, task: str, drawn, warnings: list) -> dict:
    """``{"inspect": {"task", "sample_ids"}}`` for a task from Inspect logs, ``{}`` for any other.

    Parameters
    ----------
    store : harness_ext.store.db.Store
    benchmark, task : str
        The task as the store keeps it.
    drawn : array-like of int
        The drawn items' numbers, in the draw's order.
    warnings : list
        Extended with what cannot be passed to ``inspect eval`` as it is (counts, naming the task).
    """
    if benchmark != BENCHMARK:
        return {}
    from ...store.item_ids import item_id_map, logged_ids

    ids = item_id_map(store, BENCHMARK, task)
    names = dict(zip(ids["doc_id"].astype("int64").tolist(), ids["item"].astype(str).tolist()))
    logged = logged_ids(store, BENCHMARK, task)
    unmapped = sum(int(d) not in names for d in drawn)
    # Only a whole number's text was rewritten before the map kept ids as logged: other text is as logged.
    unlogged = sum(int(d) in names and logged.get(int(d)) is None and bool(_WHOLE.fullmatch(names[int(d)]))
                   for d in drawn)
    sample_ids = [logged[int(d)] if logged.get(int(d)) is not None else _as_logged(names[int(d)]) if int(d) in names
                  else int(d) for d in drawn]
    name = _logged_task(store, task, warnings)
    _refuse_local_task(store, task, name)
    if unmapped:
        warnings.append(f"{task}: {unmapped} drawn items have no Inspect sample id in the store (stored before it kept "
                        f"ids): {FILE_NAME} lists their numbers")
    if unlogged:
        warnings.append(f"{task}: {unlogged} drawn sample ids are whole numbers stored by a version that kept any "
                        "whole number's text as the number (\"17.0\" or \"007\" as 17 or 7): "
                        f"{FILE_NAME} lists them so, which Inspect may not match; ingest the task's logs into a new "
                        "store to list them as logged")
    warnings += unsafe_warnings(name, sample_ids)
    return {"inspect": {"task": name, "sample_ids": sample_ids}}


def _as_logged(item: str):
    """A sample id stored before the map kept ids as logged: it kept a whole number as its decimal text."""
    return int(item) if _WHOLE.fullmatch(item) and -2**63 <= int(item) < 2**63 else item


def _logged_task(store, task: str, warnings: list) -> str:
    """The task as the Inspect logs name it: the name the store keeps beside the header's results."""
    rows = [r[0] for r in store.con.execute(
        "SELECT DISTINCT task FROM datasets WHERE benchmark = ? AND name = ? AND task IS NOT NULL ORDER BY task",
        [BENCHMARK, task]).fetchall()]
    if not rows:
        warnings.append(f"{task}: the store holds no header score of its Inspect logs, so not their own task name: "
                        f"{FILE_NAME} lists it as {task!r} (add an inspect_evals/ prefix if its logs had one)")
        return task
    if len(rows) > 1:
        warnings.append(f"{task}: its Inspect logs name it {len(rows)} ways ({', '.join(map(repr, rows[:3]))}); "
                        f"{FILE_NAME} lists it as {rows[0]!r}")
    return rows[0]


def _refuse_local_task(store, task: str, name: str) -> None:
    """Refuse, naming a log, an Inspect task whose name is a file or folder where ``reduce`` runs or beside its logs
    (:func:`local_task_problem`): ``inspect eval NAME`` run there would import it."""
    from pathlib import Path

    from ...errors import HarnessExtError

    paths = [r[0] for r in store.con.execute("SELECT DISTINCT path FROM sample_sources WHERE benchmark = ? AND "
                                             "task = ? ORDER BY path", [BENCHMARK, task]).fetchall()]
    why = local_task_problem(name, [Path.cwd(), *(Path(p).parent for p in paths)])
    if why:
        log = f" (from {paths[0]})" if paths else ""
        raise HarnessExtError(f"Inspect task {quoted(short_name(name))}{log}: its logs name it as {why}: running it "
                              "would run code outside the reduced folder; leave it out (reduce --datasets GLOB), "
                              "rename the folder or fix its logs")


def _id_problem(v):
    """Why ``inspect eval --sample-id`` cannot take the sample id ``v`` as it is, or None."""
    if isinstance(v, int):
        return "negative whole numbers, which --sample-id reads as text" if v < 0 else None
    if "," in v:
        return "a comma, where --sample-id splits its list"
    if v != v.strip() or not v:
        return "blanks at either end, which --sample-id strips"
    if is_glob(v):
        return "a glob character (* ? [), which Inspect matches as a pattern"
    return None if _PLAIN.fullmatch(v) else "characters a shell reads (blanks, quotes, ;, $, control characters)"


def unsafe_warnings(name: str, sample_ids: list) -> list:
    """The warnings on an Inspect task whose name or drawn ids cannot be passed to ``inspect eval`` as they are."""
    out, shown = [], quoted(short_name(name))
    if not _PLAIN.fullmatch(name) or name.startswith("-") or len(name) > MAX_ARG_CHARS:
        out.append(f"Inspect task {shown}: its name is not a plain word a command line takes as it is (a "
                   f"leading '-', blanks, quotes, ;, $, control characters or over {MAX_ARG_CHARS:,} characters); "
                   f"{FILE_NAME} lists it as data: quote it when you run it")
    why = {}
    for v in sample_ids:
        p = _id_problem(v)
        if p:
            why[p] = why.get(p, 0) + 1
    if why:
        n = sum(why.values())
        out.append(f"Inspect task {shown}: {n} of its {len(sample_ids)} drawn sample ids cannot be given to "
                   f"inspect eval --sample-id as they are ({'; '.join(f'{k} {p}' for p, k in sorted(why.items()))}); "
                   f"{FILE_NAME} lists them all: pass the list to Inspect's Python eval(..., sample_id=[...])")
    if len(",".join(map(str, sample_ids))) > MAX_ARG_CHARS:
        out.append(f"Inspect task {shown}: its {len(sample_ids):,} drawn sample ids are over {MAX_ARG_CHARS:,} "
                   "characters, more than one command-line argument takes: pass them to Inspect's Python eval()")
    return out


def inspect_task_count(manifest: dict) -> int:
    """How many of an item manifest's tasks came from Inspect logs (those with an ``inspect`` field)."""
    return sum("inspect" in b for b in manifest["tasks"].values())


def inspect_only(manifest: dict) -> bool:
    """Whether every task of an item manifest came from Inspect logs: its reduced folder is then for Inspect alone
    (``inspect_sample_ids.json`` and ``manifest.json``), no lm-eval group, HELM conf or task list, which no task of
    it could run."""
    tasks = manifest.get("tasks") or {}
    return manifest.get("kind") == "items" and bool(tasks) and inspect_task_count(manifest) == len(tasks)


def inspect_sample_ids(manifest: dict) -> dict:
    """``{Inspect task: [sample ids]}`` of an item manifest's tasks from Inspect logs (``{}`` without any).

    Raises
    ------
    harness_ext.errors.HarnessExtError
        When a task's ``inspect`` field is not a task name and a list of whole numbers and text.
    """
    from ...errors import HarnessExtError

    out = {}
    for task, b in (manifest.get("tasks") or {}).items():
        got = b.get("inspect") if isinstance(b, dict) else None
        if got is None:
            continue
        ids = got.get("sample_ids") if isinstance(got, dict) else None
        if not (isinstance(got.get("task") if isinstance(got, dict) else None, str) and isinstance(ids, list)
                and all(isinstance(v, (int, str)) and not isinstance(v, bool) for v in ids)):
            raise HarnessExtError(f"manifest task {quoted(short_name(task))}: its inspect field is not a task name "
                                  "and a list of sample ids (whole numbers or text)")
        why = task_file_problem(got["task"])
        if why:
            raise HarnessExtError(f"manifest task {quoted(short_name(task))}: its Inspect logs name the task "
                                  f"{quoted(short_name(got['task']))}, with {why}: running it would run code outside "
                                  "the reduced folder; leave it out (reduce --datasets GLOB) or fix its logs")
        if got["task"] in out:
            raise HarnessExtError(f"manifest tasks name the Inspect task {quoted(short_name(got['task']))} twice")
        out[got["task"]] = ids
    return out


def write_inspect_sample_ids(manifest: dict, out_dir) -> list:
    """``inspect_sample_ids.json`` in ``out_dir`` when the manifest has tasks from Inspect logs: a JSON object,
    Inspect task -> its drawn sample ids, keys sorted, ASCII only (a name's control characters escaped), so the
    same manifest gives the same bytes. Returns the files written (none without such tasks)."""
    from pathlib import Path

    data = inspect_sample_ids(manifest)
    if not data:
        return []
    path = Path(out_dir) / FILE_NAME
    path.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=True) + "\n", encoding="utf-8")
    return [path]
