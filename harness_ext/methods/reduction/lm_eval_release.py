"""The lm-eval release a written folder needs, recorded in its manifest and checked against the runs ``predict`` reads.

A reduced folder needs lm-eval :data:`~.harness_names.LM_EVAL_MIN` or later for the group's estimate, and
:data:`~.harness_names.LM_EVAL_SAMPLES_MIN` or later for ``--samples`` and for a task defined in the folder under the
name of one of lm-eval's own (older releases run their own task instead, without a word). The manifest records the
highest of those that apply, with the reason for each (``lm_eval_release``, :func:`folder_needs`). lm-eval 0.4.9 and
later record their release in every results file (``lm_eval_version``); 0.4.8 and older record none, and then
nothing is said. A results file from an older release than the folder needs gets one warning naming the file, the
release and the consequence (:func:`release_warnings`); a task it ran under lm-eval's own name is left out, unless the
file's own task configuration shows the folder's data was read.

A folder written before its ``harness_ext_estimate.py`` answered lm-eval 0.4.4-0.4.10's call of a group's
aggregation stops those releases at the end of the run: :func:`old_estimate_note` tells it by the file's content.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Optional

from ...errors import HarnessExtError
from ...report import listed
from ...safe_output import quoted
from .harness_names import LM_EVAL_MIN, LM_EVAL_OVERRIDE_MIN, LM_EVAL_SAMPLES_MIN, lm_eval_metric, lm_eval_task_list

#: The manifest field.
FIELD = "lm_eval_release"
#: The key of an lm-eval results file that names the release that wrote it (lm-eval 0.4.9 and later).
RESULTS_KEY = "lm_eval_version"
#: Results files larger than this are not read again for their release (a results file is a few megabytes at most).
MAX_RESULTS_BYTES = 64 * 2**20
#: What each need is for, and why (``tasks`` are named beside the third).
REASONS = {
    "group": (LM_EVAL_MIN, "the group's aggregate_metric_list, which makes its row the estimate: lm-eval 0.4.3 "
                           "and older refuse the key"),
    "samples": (LM_EVAL_SAMPLES_MIN, "--samples, which runs only the drawn items: lm-eval 0.4.8 and older have no "
                                     "such option"),
    "own_name": (LM_EVAL_OVERRIDE_MIN, "tasks defined here under the names of lm-eval's own: lm-eval 0.4.9 and older "
                                       "run their own task instead, without a word"),
}
#: Text every ``harness_ext_estimate.py`` has had since it answers lm-eval 0.4.4-0.4.10's ``(values, sizes, weight)``
#: call (the wrapper of their group consolidation); a file without it stops those releases at the end of the run.
ESTIMATE_MARK = "_install_consolidate"
ESTIMATE_FILE = "harness_ext_estimate.py"


def release_key(text) -> Optional[tuple]:
    """A sortable key of an lm-eval release (``"0.4.9.2"``, ``"0.4.10.dev0"``), or None if ``text`` names none (the
    error text lm-eval writes when it cannot read its own version). A pre-release sorts just below its release."""
    if not isinstance(text, str):
        return None
    m = re.fullmatch(r"\s*v?(\d+(?:\.\d+)*)(?:[.-]?(dev|a|b|rc|alpha|beta)\d*)?(?:\.post\d+)?(?:\+[\w.]+)?\s*", text)
    if not m:
        return None
    nums = tuple(int(p) for p in m.group(1).split("."))
    return nums + (0,) * (6 - len(nums)), 0 if m.group(2) else 1


def older(found: str, needed: str) -> bool:
    """Whether release ``found`` is older than ``needed`` (False when ``found`` names no release)."""
    a, b = release_key(found), release_key(needed)
    return a is not None and b is not None and a < b


def release_needs(sources: dict, tasks: list, samples: bool, estimated: bool) -> list:
    """What the lm-eval group of ``tasks`` needs: ``[{"release", "for", "reason"[, "tasks"]}]``, one per need that
    applies: the estimate's ``aggregate_metric_list`` (``estimated``), ``--samples`` (``samples``), and the tasks
    defined in the folder under the names of lm-eval's own (``sources``: the manifest's ``lm_eval_tasks``)."""
    out = []
    if estimated:
        out.append({"release": REASONS["group"][0], "for": "group", "reason": REASONS["group"][1]})
    if samples:
        out.append({"release": REASONS["samples"][0], "for": "samples", "reason": REASONS["samples"][1]})
    own = [t for t in tasks if (sources.get(t) or {}).get("other_data") and (sources.get(t) or {}).get("origin") == "results"]
    if own:
        out.append({"release": REASONS["own_name"][0], "for": "own_name", "reason": REASONS["own_name"][1],
                    "tasks": own})
    return out


def group_plan(manifest: dict) -> tuple:
    """``(tasks, samples, estimated)`` of the lm-eval group written from ``manifest``: the task names it runs (empty:
    no group), whether it runs with ``--samples`` and whether its row is the estimate (as the writers decide)."""
    from .inspect_samples import inspect_only
    from .item_harness_tasks import harness_names, items_group_tasks

    if manifest.get("kind") == "items":
        if inspect_only(manifest):
            return [], False, False
        listed_tasks = items_group_tasks(manifest)[0]
        runs_as = harness_names(manifest)
        metrics = [b.get("metric") for b in manifest["tasks"].values()]
        return [runs_as[t] for t in listed_tasks], True, all(isinstance(m, str) and m for m in metrics)
    entries = [e for e in manifest.get("subset") or [] if lm_eval_task_list(e)]
    metrics = {lm_eval_metric(e) for e in entries}
    tasks = [n for e in entries for n in lm_eval_task_list(e)]
    return tasks, bool((manifest.get("items") or {}).get("tasks")), len(metrics) == 1 and None not in metrics


def folder_needs(manifest: dict) -> Optional[dict]:
    """The manifest's ``lm_eval_release``: the oldest lm-eval release that runs the folder written from it
    (``minimum``, the highest of its needs) and each need with its reason, or None when no lm-eval group is written."""
    tasks, samples, estimated = group_plan(manifest)
    if not tasks:
        return None
    needs = release_needs(manifest.get("lm_eval_tasks") or {}, tasks, samples, estimated)
    if not needs:
        return None
    return {"minimum": max((n["release"] for n in needs), key=release_key), "needs": needs}


def attach_release(manifest: dict) -> dict:
    """Record :func:`folder_needs` in ``manifest`` (nothing when no lm-eval group is written); returns it."""
    need = folder_needs(manifest)
    if need is not None:
        manifest[FIELD] = need
    return manifest


def check_release_field(manifest: dict, path, what: str = "manifest") -> None:
    """Raise :class:`HarnessExtError` naming ``path`` when the manifest's ``lm_eval_release`` is not what
    :func:`folder_needs` writes (a manifest written before the field has none, and is read as it is)."""
    field = manifest.get(FIELD)
    if field is None:
        return

    def bad(msg):
        raise HarnessExtError(f"{path} is not a valid harness-ext {what}: {FIELD}: {msg}")

    if not isinstance(field, dict) or release_key(field.get("minimum")) is None:
        bad("must be an object whose 'minimum' names an lm-eval release")
    needs = field.get("needs")
    if not isinstance(needs, list) or not needs:
        bad("'needs' must be a non-empty list")
    for n in needs:
        if not isinstance(n, dict) or release_key(n.get("release")) is None or n.get("for") not in REASONS:
            bad(f"each need names a release and what it is for ({', '.join(REASONS)})")
        if "tasks" in n and not (isinstance(n["tasks"], list) and all(isinstance(t, str) for t in n["tasks"])):
            bad("a need's 'tasks' must be a list of task names")
    if release_key(field["minimum"]) != max(release_key(n["release"]) for n in needs):
        bad(f"minimum {field['minimum']!r} is not the highest of its needs' releases")


def manifest_needs(manifest: dict) -> list:
    """The needs recorded in the manifest, or those of the folder it describes for a manifest written before them.

    A recorded need is checked against the release known now to meet it (:data:`REASONS`): which release has
    ``--samples``, or runs the folder's task under lm-eval's own name, is a fact of lm-eval, not of the folder, so a
    folder written when an older release had not yet been seen to run it is not held to the release it recorded."""
    field = manifest.get(FIELD)
    if isinstance(field, dict):
        return [{**n, "release": REASONS[n["for"]][0]} if isinstance(n, dict) and n.get("for") in REASONS else n
                for n in field.get("needs") or []]
    return (folder_needs(manifest) or {}).get("needs") or []


def results_document(path) -> Optional[dict]:
    """An lm-eval results file's JSON object, or None (not a file, too large, or not a JSON object: the adapters
    already said what they could not read)."""
    try:
        p = Path(path)
        if not p.is_file() or p.stat().st_size > MAX_RESULTS_BYTES:
            return None
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def _data_of(config) -> Optional[tuple]:
    """``(dataset_path, dataset_name)`` of a task configuration, or None without a path."""
    if not isinstance(config, dict) or not isinstance(config.get("dataset_path"), str):
        return None
    name = config.get("dataset_name")
    return config["dataset_path"], name if isinstance(name, str) else None


def _read_folders_data(task: str, doc: dict, sources: dict) -> bool:
    """Whether the run's own configuration of ``task`` (its results' ``configs``) reads the data the folder's
    definition reads, not lm-eval's own task's."""
    recorded = ((sources.get(task) or {}).get("other_data") or [None])[0]
    ran = _data_of((doc.get("configs") or {}).get(task) if isinstance(doc.get("configs"), dict) else None)
    return ran is not None and recorded is not None and ran == (recorded[0], recorded[1] if len(recorded) > 1 else None)


def release_warnings(manifest: dict, files: dict) -> tuple:
    """``(warnings, refused)`` for the lm-eval results files ``files`` (``{model: [paths]}``) written by a release
    older than the folder needs: one warning per file, naming it, the release found and needed, and the consequence.

    ``refused``: ``{(model, task)}`` of the tasks defined in the folder under lm-eval's own names that such a run
    scored: those releases run lm-eval's own task, on other documents than the population's, so the score is not the
    manifest's task's and is left out (the task is then predicted from the others), unless the file's own
    configuration of the task reads the folder's data. A file that names no release gets nothing, and the need of
    those tasks says nothing for a file that scored none of them.
    """
    needs = manifest_needs(manifest)
    if not needs:
        return [], set()
    sources = manifest.get("lm_eval_tasks") or {}
    warnings, refused = [], set()
    for model, paths in files.items():
        for path in dict.fromkeys(paths):
            doc = results_document(path)
            found = None if doc is None else doc.get(RESULTS_KEY)
            unmet = [n for n in needs if older(found, n["release"])]
            if not unmet:
                continue
            said, why = [], []
            for n in unmet:
                if n["for"] == "own_name":
                    ran = [t for t in n.get("tasks") or () if isinstance((doc.get("results") or {}).get(t), dict)]
                    if not ran:  # the run scored none of them (a copy of the group without them): nothing to say
                        continue
                    kept = [t for t in ran if _read_folders_data(t, doc, sources)]
                    gone = [t for t in ran if t not in kept]
                    refused |= {(model, t) for t in gone}
                    said.append(_own_name_said(n, gone, kept, manifest.get("kind") == "items"))
                elif n["for"] == "samples":
                    said.append(f"--samples needs {n['release']} (0.4.8 and older have no such option): only the "
                                "manifest's items found in the run's logs are read")
                else:
                    said.append(f"the group's estimate needs {n['release']} (0.4.3 and older refuse its aggregate_metric_list): "
                                "the scores are read as the run wrote them")
                why.append(n["release"])
            if not said:
                continue
            need = max(why, key=release_key)
            warnings.append(f"{path}: written by lm-eval {found}, older than the {need} this folder needs: "
                            + "; ".join(said))
    return warnings, refused


def _own_name_said(need: dict, gone: list, kept: list, items: bool) -> str:
    """The consequence, in :func:`release_warnings`, of a run older than ``need`` (the folder's tasks named as
    lm-eval's own) on the tasks whose score is left out (``gone``) and kept (``kept``)."""
    names = need.get("tasks") or []
    said = (f"{listed(map(quoted, names), 5)}, defined here under lm-eval's own name{'s' * (len(names) != 1)}, "
            f"need{'s' * (len(names) == 1)} {need['release']} (0.4.9 and older run lm-eval's own task instead, "
            "without a word)")
    if gone:
        said += (f"; {listed(map(quoted, gone), 5)} left out, another task's scores on other documents than the "
                 + ("manifest's items: no benchmark estimate without them" if items else
                    "population's: predicted from the other subset datasets"))
    if kept:
        said += f"; {listed(map(quoted, kept), 5)} kept: the run's own configuration reads the folder's data"
    return said


def samples_results(sample_files) -> dict:
    """``{samples file: results file}`` for lm-eval ``samples_<task>_<date>.jsonl`` files (named as the store reads
    them, :data:`~harness_ext.store.sample_logs.SAMPLES_FILE_RE`): the ``results_<date>.json`` of the same run (same
    folder, same date), where there is one."""
    from ...store.sample_logs import SAMPLES_FILE_RE

    out = {}
    for f in sample_files:
        p = Path(f)
        m = SAMPLES_FILE_RE.match(p.name)
        if m and (p.parent / f"results_{m.group('date')}.json").is_file():
            out[str(p)] = str(p.parent / f"results_{m.group('date')}.json")
    return out


def older_release_logs(manifest: dict, long, sources: dict, warnings: list):
    """``long`` (per-item logs: model, task, doc_id, ...) without the logs of tasks that a run from an older lm-eval
    than the folder needs ran under lm-eval's own name (:func:`release_warnings`, on the results file beside each
    model's ``samples_*.jsonl``); the warnings go into ``warnings``."""
    beside = samples_results(p for paths in sources.values() for p in paths)
    files = {m: [beside[str(p)] for p in paths if str(p) in beside] for m, paths in sources.items()}
    notes, refused = release_warnings(manifest, {m: f for m, f in files.items() if f})
    warnings += notes
    if not refused or long.empty:
        return long
    keep = [(m, t) not in refused for m, t in zip(long["model"], long["task"])]
    out = long[keep]
    out.attrs.update(long.attrs)
    return out


def old_estimate_note(manifest_path) -> Optional[str]:
    """Why the folder of ``manifest_path`` should be written again, when its ``harness_ext_estimate.py`` predates the
    answer to lm-eval 0.4.4-0.4.10's ``(values, sizes, weight_by_size)`` call; else None."""
    if manifest_path is None:
        return None
    folder = Path(manifest_path)
    folder = folder if folder.is_dir() else folder.parent
    est = folder / ESTIMATE_FILE
    try:
        text = est.read_text(encoding="utf-8") if est.is_file() else None
    except (OSError, UnicodeDecodeError):
        return None
    if text is None or ESTIMATE_MARK in text:
        return None
    return (f"{est} was written before it answered lm-eval 0.4.4-0.4.10's call of the group's aggregation: those "
            "releases stop at the end of the run with 'TypeError: estimate() missing 1 required positional argument', "
            "after every request, and save no results (0.4.11 and later run it); write the folder again with "
            "'harness-ext reduce'")
