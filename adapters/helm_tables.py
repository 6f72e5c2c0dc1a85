"""HELM leaderboard tables written by ``helm-summarize`` (the ``helm-table`` adapter's reading).

A table file holds the scores HELM's website shows, one cell per model and run group; a run directory
(:mod:`harness_ext.adapters.helm`) holds one run's stats. The two share only the run names cells link to
(:mod:`harness_ext.adapters.helm_run_names`), so the table reading stands on its own.

Leaderboard tables
------------------
``helm-summarize`` writes ``groups/<group>.json`` (a list of tables) and
``groups/json/<group>_<table>.json`` (one table), each table
``{"title", "name", "header": [{"value", "lower_is_better", "metadata":
{"metric", "run_group", ["perturbation"]}}, ...], "rows": [[{"value",
"run_spec_names", ...}, ...]]}`` (``helm.benchmark.presentation.table``). The
``helm-table`` adapter reads the accuracy table of a group (one column per run
group) and per-scenario tables (first metric column = the main metric);
calibration, robustness, fairness, efficiency, bias, toxicity and
general-information tables are not capability scores and are passed over.
Aggregate columns ("Mean win rate", "Mean score") have no ``metadata.metric``:
they are stored as aggregates (``kind='aggregate'``, dataset and metric "Mean win
rate"), never subset members; perturbation columns are skipped. Benchmark ``helm_<project>_<group>``
(``helm_capabilities_core_scenarios``) when the file lies under a HELM project's folder
(``capabilities/benchmark_output/releases/...``) or its tables' links name one
(:func:`harness_ext.adapters.helm_suite.helm_project`): HELM Classic's and Capabilities' leaderboards are both group
``core_scenarios``. HELM Classic's (the public bucket's own ``benchmark_output``) keeps ``helm_<group>``
(``helm_core_scenarios``), and so does a file whose project is not told, which the ingest notes say. Dataset = the run group's display name ("BoolQ"),
metric = the header's metric ("EM"). A per-scenario table's dataset is its name,
``<group>_<arguments>`` (``bbq_subject:all``; ``simple_safety_tests`` for HELM's
``simple_safety_tests_``, a group without arguments). helm-summarize's suite files with no scores of their own
(``runs_to_run_suites.json``, ``summary.json``, ``run_specs.json``, ``runs.json``, the run-group list
``groups.json``; :mod:`harness_ext.adapters.helm_suite`) are skipped without a warning. The model comes from the
``run_spec_names`` the cells link to when they name one model, else the row's
display name. MMLU subject columns (run specs ``mmlu:subject=...``) go to
benchmark ``mmlu``, metric ``acc``.

References
----------
Liang et al., "Holistic Evaluation of Language Models" (2022); crfm-helm
``src/helm/benchmark/presentation/{summarize,table}.py`` (table format).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Optional

from harness_ext.adapters.helm_run_names import parse_run_name
from harness_ext.adapters.helm_suite import SHARED_GROUPS, helm_project, refuse_suite_file, suite_file_kind
from harness_ext.benchmarks import MMLU_BENCHMARK, MMLU_METRIC, MMLU_SUBJECTS, chance_baseline
from harness_ext.errors import IngestError
from harness_ext.report import listed
from harness_ext.types import ResultRecord, SourceFile

#: helm-summarize metric-group tables that are not capability scores.
NON_ACCURACY_TABLES = frozenset({"calibration", "calibration_detailed", "robustness", "robustness_detailed",
                                 "fairness", "fairness_detailed", "efficiency", "efficiency_detailed",
                                 "general_information", "bias", "toxicity", "summarization_metrics",
                                 "classification_metrics", "copyright_metrics", "disinformation_metrics",
                                 "bbq_metrics", "apps_metrics", "instruction_following_metrics"})
_NON_ACCURACY_TITLES = frozenset({"calibration", "robustness", "fairness", "efficiency", "general information",
                                  "bias", "toxicity", "summarization metrics"})
_SUBJECT_BY_TITLE = {s.replace("_", " "): s for s in MMLU_SUBJECTS}


def _is_table(t) -> bool:
    return isinstance(t, dict) and isinstance(t.get("header"), list) and isinstance(t.get("rows"), list)


def _tables(doc) -> Optional[list]:
    if _is_table(doc):
        return [doc]
    if isinstance(doc, list) and doc and all(_is_table(t) for t in doc):
        return doc
    return None


def can_handle_table(src: SourceFile) -> bool:
    if src.suffix != ".json":
        return False
    if b'"header"' not in src.head:
        return suite_file_kind(src) is not None
    return _tables(src.try_json()) is not None


def _group_name(path: Path, table: dict) -> str:
    stem = path.stem
    name = table.get("name")
    if path.parent.name == "json" and isinstance(name, str) and stem.endswith("_" + name) and len(stem) > len(name) + 1:
        stem = stem[: -len(name) - 1]
    return re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_") or "table"


def _run_models(names) -> set:
    out = set()
    for n in names or ():
        try:
            m = parse_run_name(n).model
        except (ValueError, TypeError, AttributeError):
            continue
        if m:
            out.add(m)
    return out


def _run_subjects(names) -> set:
    out = set()
    for n in names or ():
        try:
            out.add(parse_run_name(n).mmlu_subject)
        except (ValueError, TypeError, AttributeError):
            out.add(None)
    return out


def _cell_value(cell, src, where) -> Optional[float]:
    v = cell.get("value") if isinstance(cell, dict) else cell
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise IngestError(src, f"{where}: value {v!r} is not a number")
    return float(v) if math.isfinite(float(v)) else None


#: helm-summarize columns that aggregate the table's scenarios.
_AGGREGATE_COLUMNS = frozenset({"mean win rate", "mean score"})


def read_table(src: SourceFile):
    refuse_suite_file(src)
    tables = _tables(src.json())
    if tables is None:
        raise IngestError(src.path, "not a helm-summarize table (no header/rows)")
    names = [t.get("name") for t in tables if isinstance(t.get("name"), str)]
    project, told_by = helm_project(src.path, tables)  # Classic's and Capabilities' core_scenarios: two benchmarks
    prefix, project_md = _benchmark_prefix(project), ({"helm_project": project} if project else {})
    out, empty = [], []  # empty: cells with no value (HELM's "-", a model not run on the scenario), noted
    for ti, table in enumerate(tables):
        name = table.get("name") if isinstance(table.get("name"), str) else ""
        title = table.get("title") if isinstance(table.get("title"), str) else ""
        if name in NON_ACCURACY_TABLES or title.strip().lower() in _NON_ACCURACY_TITLES:
            continue
        # A scenario-table list starts with the aggregate over its scenarios (named like the
        # group, e.g. "mmlu" before "mmlu:subject=..."): the per-scenario tables carry the data.
        if name and ":" not in name and any(n.startswith(name + ":") for n in names):
            continue
        scenario_table = bool(name) and name != "accuracy" and title.strip().lower() != "accuracy"
        group = _group_name(src.path, table)
        header = table["header"]
        columns, seen_groups = [], set()
        for j, h in enumerate(header):
            md = h.get("metadata") if isinstance(h, dict) else None
            label = str(h.get("value") or "").strip() if isinstance(h, dict) else ""
            if j and label.lower() in _AGGREGATE_COLUMNS and not (isinstance(md, dict) and md.get("metric")):
                columns.append((j, h, label, True))  # "Mean win rate": an aggregate, a prediction target
                continue
            if j == 0 or not isinstance(md, dict) or not md.get("metric") or md.get("perturbation"):
                continue
            rg = str(md.get("run_group") or h.get("value"))
            if rg in seen_groups:  # the main metric is the first column of its run group
                continue
            seen_groups.add(rg)
            columns.append((j, h, rg, False))
        for ri, row in enumerate(table["rows"]):
            if not isinstance(row, list) or not row:
                raise IngestError(src.path, f"table {ti} row {ri} is not a list of cells")
            first = row[0] if isinstance(row[0], dict) else {"value": row[0]}
            linked = first.get("run_spec_names") or []
            for j, h, rg, aggregate in columns:
                if j >= len(row):
                    raise IngestError(src.path, f"table {ti} row {ri} has {len(row)} cells, header has {len(header)}")
                cell = row[j] if isinstance(row[j], dict) else {"value": row[j]}
                value = _cell_value(cell, src.path, f"table {ti} row {ri} column {h.get('value')!r}")
                if value is not None and not aggregate and h["metadata"]["metric"] == "EM" and not 0.0 <= value <= 1.0:
                    raise IngestError(src.path, f"table {ti} row {ri} column {h.get('value')!r}: EM {value:g} is outside [0, 1]")
                if value is None:
                    empty.append(f"{first.get('value')} on {h.get('value')}")
                    continue
                runs = list(cell.get("run_spec_names") or linked)
                models = _run_models(runs)
                display = first.get("value")
                model = next(iter(models)) if len(models) == 1 else display
                if not isinstance(model, str) or not model.strip():
                    raise IngestError(src.path, f"table {ti} row {ri}: no model name")
                subjects = _run_subjects(runs)
                subject = next(iter(subjects)) if len(subjects) == 1 else None
                if subject is None and not runs and group.startswith("mmlu"):
                    subject = _SUBJECT_BY_TITLE.get(rg.strip().lower())
                lower = h.get("lower_is_better")
                if subject:
                    benchmark, dataset = MMLU_BENCHMARK, subject
                    rb, rb_src = chance_baseline(f"mmlu:subject={subject}", "exact_match")
                else:
                    benchmark, dataset = f"{prefix}{group}", (name.rstrip("_") if scenario_table else rg)
                    rb, rb_src = None, None
                if aggregate:  # beside its scenarios: an MMLU table's win rate goes with the MMLU subjects
                    benchmark = MMLU_BENCHMARK if group.startswith("mmlu") else f"{prefix}{group}"
                    dataset, subject, rb, rb_src = rg, None, None, None
                out.append(ResultRecord(
                    model=model.strip(), benchmark=benchmark, dataset=dataset, aggregate=aggregate,
                    metric=rg.lower() if aggregate else MMLU_METRIC if subject else str(h["metadata"]["metric"]),
                    value=value, higher_is_better=None if lower is None else not bool(lower),
                    random_baseline=rb, baseline_source=rb_src, task=name or None,
                    model_metadata={"display_name": display} if isinstance(display, str) else {},
                    dataset_metadata={"harness": "helm", "table": name or title, "run_group": rg, **project_md},
                ))
    _note_table(src, out, project, told_by, empty)
    return out


def _benchmark_prefix(project) -> str:
    """``helm_<project>_`` before a table's group; ``helm_`` for HELM Classic, whose tables were always stored so
    (``helm_core_scenarios``), and for a file whose project is not told."""
    return f"helm_{re.sub(r'[^a-z0-9]+', '_', project)}_" if project not in (None, "classic") else "helm_"


def _note_table(src: SourceFile, records: list, project, told_by, empty: list) -> None:
    """Note a table file's empty cells (HELM's "-": a model not run on the scenario), and which HELM project named
    its benchmark, or that none did for a group several projects have
    (:data:`~harness_ext.adapters.helm_suite.SHARED_GROUPS`: the rows then share its name with another project's
    table of it), with the count of rows it names."""
    benches = sorted({r.benchmark for r in records if r.benchmark != MMLU_BENCHMARK})
    n = sum(r.benchmark != MMLU_BENCHMARK for r in records)
    if n and project:
        src.note(f"HELM project {project}, told by {told_by}: {n} row{'s' * (n != 1)} stored as {', '.join(benches)}")
    elif n and any(b[len("helm_"):] in SHARED_GROUPS for b in benches):
        src.note(f"HELM project not told by the file or its path (no known project folder above benchmark_output): "
                 f"{n} row{'s' * (n != 1)} stored as {', '.join(benches)}, the name another HELM project's table of "
                 "the same group (HELM Classic's and Capabilities' core_scenarios) would share; keep such files "
                 "under <project>/benchmark_output/ to keep them apart")
    if empty:
        src.note(f"{len(empty)} empty cell{'s' * (len(empty) != 1)} (not run) left out: {listed(empty, 5)}")
