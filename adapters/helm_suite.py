"""helm-summarize's suite-level files that hold no scores of their own, beside a suite's run folders
(``benchmark_output/runs/<suite>/``): recognised so that ingesting a whole suite folder does not warn about them.

- ``runs_to_run_suites.json`` (``runs_to_runsuites.json`` before HELM 0.3): run name -> suite.
- ``summary.json``: the suite's name and date.
- ``run_specs.json``: every run's ``run_spec.json``, in one list.
- ``runs.json``: every run's ``run_spec`` and ``stats``, in one list. Its scores are those of the run folders, which
  are read instead: skipped without a warning when every run it lists has its folder beside it, else skipped with
  a warning naming the runs whose folders are missing (their scores are in no file that is read).
- ``groups.json``: helm-summarize's list of run groups (tables without a metric column).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from harness_ext.errors import IngestError, NotResults
from harness_ext.report import listed
from harness_ext.types import SourceFile

#: helm-summarize's map of run names to their suite (``runs_to_runsuites.json`` before HELM 0.3).
RUN_SUITES_FILES = ("runs_to_run_suites.json", "runs_to_runsuites.json")


def _is_list_of(doc, *keys) -> bool:
    return isinstance(doc, list) and bool(doc) and all(isinstance(x, dict) and all(k in x for k in keys) for x in doc)


def suite_file_kind(src: SourceFile):
    """``"run_suites"``, ``"summary"``, ``"run_specs"``, ``"runs"`` or ``"group_list"`` for helm-summarize's suite
    files, else None."""
    name = src.path.name
    if name not in RUN_SUITES_FILES + ("summary.json", "run_specs.json", "runs.json", "groups.json"):
        return None
    doc = src.try_json()
    if name == "groups.json":  # the run-group list: tables none of whose columns names a metric
        ok = _is_list_of(doc, "header", "rows") and not any(
            isinstance(h, dict) and isinstance(h.get("metadata"), dict) and h["metadata"].get("metric")
            for t in doc for h in (t["header"] if isinstance(t["header"], list) else ()))
        return "group_list" if ok else None
    if name in RUN_SUITES_FILES:
        ok = isinstance(doc, dict) and bool(doc) and all(isinstance(v, str) and "model=" in k for k, v in doc.items())
        return "run_suites" if ok else None
    if name == "summary.json":
        return "summary" if isinstance(doc, dict) and isinstance(doc.get("suite"), str) and "date" in doc else None
    if name == "run_specs.json":
        return "run_specs" if _is_list_of(doc, "name", "adapter_spec") else None
    return "runs" if _is_list_of(doc, "run_spec", "stats") else None


def refuse_suite_file(src: SourceFile) -> None:
    """Raise the skip of a suite file (:func:`suite_file_kind`); return for any other file."""
    kind = suite_file_kind(src)
    if kind is None:
        return
    if kind == "runs":
        names = [x["run_spec"].get("name") if isinstance(x["run_spec"], dict) else None for x in src.try_json()]
        missing = [str(n) for n in names if not (isinstance(n, str) and os.path.isdir(src.path.parent / n))]
        if missing:
            raise IngestError(src.path, f"HELM's list of the suite's runs with their stats (helm-summarize) is not "
                                        f"read; {len(missing)} of its {len(names)} runs have no run folder beside it "
                                        f"({listed(missing, 3)}): ingest those folders for their scores")
    what = {"run_suites": "map of run names to their suite", "summary": "suite summary (its name and date)",
            "run_specs": "list of the suite's run specs", "runs": "list of the suite's runs with their stats",
            "group_list": "list of run groups (their scores are in groups/*.json)"}[kind]
    raise NotResults(src.path, f"HELM's {what} (helm-summarize): no scores of its own; the runs are read from "
                               "their folders")


#: HELM Classic's folder: the public bucket's own ``benchmark_output`` (``crfm-helm-public/benchmark_output/releases/
#: v0.4.0/``, as Every Eval Ever's helm_classic records cite it), or a user's ``classic/benchmark_output``.
CLASSIC_FOLDERS = frozenset({"crfm-helm-public", "classic"})
#: Folders of crfm-helm's public bucket that hold one HELM project's ``benchmark_output`` (``capabilities/
#: benchmark_output/releases/v1.12.0/``, as Every Eval Ever's helm_capabilities records cite it). A folder not listed
#: names no project: a user's own folder above ``benchmark_output`` (``~/data/benchmark_output``) is not one.
HELM_PROJECTS = CLASSIC_FOLDERS | frozenset({
    "lite", "capabilities", "safety", "mmlu", "air-bench", "instruct", "heim", "vhelm", "image2struct",
    "medhelm", "thaiexam", "ewok", "cleva", "audio", "long-context", "torr", "finance", "call-center", "tables",
    "seahelm", "decodingtrust", "enterprise", "speech"})


#: helm-summarize groups that several HELM projects have, each its own leaderboard: HELM Classic's and HELM
#: Capabilities' ``core_scenarios`` (their schema_classic.yaml and schema_capabilities.yaml). A file of such a group
#: whose project is not told is noted.
SHARED_GROUPS = frozenset({"core_scenarios"})


def _project_before_output(parts) -> Optional[str]:
    """The known HELM project folder (:data:`HELM_PROJECTS`) just above a ``benchmark_output`` in ``parts``, else None."""
    for above, here in zip(parts, parts[1:]):
        if here == "benchmark_output" and above.lower() in HELM_PROJECTS:
            return "classic" if above.lower() in CLASSIC_FOLDERS else above.lower()
    return None


def helm_project(path, tables) -> tuple:
    """``(project, how)``: the HELM project a helm-summarize table file belongs to, and what told it, else
    ``(None, None)``.

    HELM Classic's and HELM Capabilities' leaderboards are both group ``core_scenarios``; the file itself names its
    project only in where it lies. Asked in order: the file's path (``capabilities/benchmark_output/releases/...``),
    then the links helm-summarize writes into each table (``{"text": "JSON", "href":
    ".../benchmark_output/releases/v1.12.0/groups/json/core_scenarios_accuracy.json"}``), which carry the output
    path helm-summarize was given. Only a folder of :data:`HELM_PROJECTS` counts.
    """
    found = _project_before_output(Path(str(path)).parts)
    if found:
        return found, f"its path's HELM project folder ({found}/benchmark_output)"
    for table in tables or ():
        for link in (table.get("links") or ()) if isinstance(table, dict) else ():
            href = link.get("href") if isinstance(link, dict) else None
            found = _project_before_output(href.split("/")) if isinstance(href, str) else None
            if found:
                return found, f"the links helm-summarize wrote into it ({found}/benchmark_output)"
    return None, None
