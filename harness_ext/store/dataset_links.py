"""Dataset identity: one dataset under the names two harnesses' files give it.

An Inspect AI log names its dataset by the task (``simpleqa_verified``); the Every Eval Ever record converted from
the same log names it by the Hugging Face dataset (``SimpleQA-Verified``, ``source_data.dataset_name``) and keeps the
scorer (``simpleqa_scorer``) as the evaluation's name. Stored as read, one run is two matrix columns. Two ways make
them one column (the alias, merged into the canonical):

* **Built in: the same run's own fields** (:func:`run_links`). A record converted from Inspect names the task itself
  in newer converters (``evaluation_name`` ``"<task> - <scorer>"``); else its ``source_data`` says which dataset and
  how many samples (``hf_repo``, ``samples_number``) and its ``evaluation_name`` the scorer, which an Inspect log's
  header gives as ``eval.dataset.location``, ``eval.dataset.samples`` and its scores' names. A record whose three
  agree with the logs of exactly one task in the same benchmark is that task's dataset; one that agrees with several
  (Inspect's ``arc_easy`` and ``arc_challenge`` both read ``allenai/ai2_arc``: the size tells them apart, unless it
  is unknown) is not merged and is reported. Names are never compared: ``ai2_arc`` is no spelling of either task.
* **Declared by the user** (``harness-ext info --dataset-aliases FILE``, :func:`add_dataset_alias_file`): the file
  ``models --aliases`` takes, with dataset names (``benchmark/name`` where a name is in several benchmarks);
  ``separate: [names]`` keeps a built-in link apart.

The matrix (:func:`apply_links`) merges an alias's column into its canonical one cell by cell and counts what it did:
a cell only the alias has moves; the same value in both (one run read from two files) is one cell; values that
differ keep the canonical dataset's and are counted and listed as conflicts. ``--no-aliases`` keeps every name apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import numpy as np

from .tables import CONFLICT_TOLERANCE, has_table

#: The table of user-declared dataset aliases (made by the first ``info --dataset-aliases``).
TABLE = "dataset_aliases"
#: ``origin`` of a link made from the same run's fields.
RUN = "same run"
#: How many conflicting cells a link's report lists by name.
LISTED = 5
#: :func:`_column` of a plain name that several benchmarks of the matrix have.
AMBIGUOUS = object()


def _inspect_task(name: str) -> str:
    """An Inspect task name as the Inspect AI adapter stores it (an ``inspect_evals/`` prefix dropped)."""
    return name.split("/", 1)[-1] if name.startswith("inspect_evals/") else name


#: The fields of a dataset's stored metadata the built-in links compare: an Inspect AI task's (``harness``,
#: ``dataset_location``, ``dataset_samples``, ``scorers``) and an Every Eval Ever record's (``scorer``, ``hf_repo``,
#: ``samples_number``). A manifest keeps them per dataset, so ``predict`` links a new model's files the same way.
LINK_FIELDS = ("harness", "dataset_location", "dataset_samples", "scorers", "scorer", "hf_repo", "samples_number")


def link_fields(meta: dict) -> dict:
    """The :data:`LINK_FIELDS` of a dataset's metadata (empty for a dataset no built-in link can involve)."""
    if meta.get("harness") != "inspect_ai" and not isinstance(meta.get("scorer"), str):
        return {}
    return {k: meta[k] for k in LINK_FIELDS if meta.get(k) is not None}


def stored_link_fields(store) -> dict:
    """``{(benchmark, name): link_fields}`` of the store's datasets an Inspect task or an evaluation-run record."""
    rows = store.con.execute(
        "SELECT DISTINCT benchmark, name, metadata FROM datasets WHERE metadata IS NOT NULL AND "
        "(json_extract_string(metadata, '$.harness') = 'inspect_ai' OR "
        "json_extract_string(metadata, '$.scorer') IS NOT NULL)").fetchall()
    out = {}
    for bench, name, meta in rows:
        try:
            m = json.loads(meta) if isinstance(meta, str) else dict(meta or {})
        except ValueError:
            continue
        if fields := link_fields(m):
            out[(bench, name)] = fields
    return out


def run_links(store) -> tuple:
    """``(links, unresolved)`` between Every Eval Ever evaluation-run datasets and Inspect AI tasks (module docstring).

    ``links``: dicts ``{"alias": (benchmark, name), "canonical": (benchmark, name), "origin", "why"}``;
    ``unresolved``: dicts ``{"dataset": (benchmark, name), "candidates": [names], "why"}`` not merged.
    """
    return match_runs(stored_link_fields(store))


def match_runs(datasets: dict) -> tuple:
    """:func:`run_links` of ``{(benchmark, name): link_fields}`` (:func:`link_fields`), wherever they were read:
    the store's datasets, or a manifest's beside a new model's files (``predict``)."""
    tasks: dict = {}
    records = []
    for (bench, name), m in datasets.items():
        if m.get("harness") == "inspect_ai":
            tasks.setdefault(bench, {})[name] = m
        elif isinstance(m.get("scorer"), str):
            records.append((bench, name, m))
    links, unresolved = [], []
    for bench, name, m in records:
        here = tasks.get(bench, {})
        if name in here:
            continue
        scorer = m["scorer"]
        named, _, scorer_only = scorer.rpartition(" - ")
        if named and _inspect_task(named) in here:  # newer converters: "<task> - <scorer>"
            links.append({"alias": (bench, name), "canonical": (bench, _inspect_task(named)), "origin": RUN,
                          "why": f"the record names Inspect task {_inspect_task(named)}"})
            continue
        repo, size = m.get("hf_repo"), m.get("samples_number")
        if not repo:
            continue
        scorer = scorer_only if named else scorer
        same = sorted(t for t, tm in here.items() if tm.get("dataset_location") == repo
                      and scorer in (tm.get("scorers") or ()) and (size is None or tm.get("dataset_samples") == size))
        if len(same) == 1:
            links.append({"alias": (bench, name), "canonical": (bench, same[0]), "origin": RUN,
                          "why": f"the same dataset ({repo}, {size} samples) and scorer ({scorer}) as the logs of "
                                 f"Inspect task {same[0]}"})
        elif same:
            unresolved.append({"dataset": (bench, name), "candidates": same,
                               "why": f"its dataset ({repo}) and scorer ({scorer}) are those of several Inspect "
                                      "tasks"})
    return links, unresolved


def user_links(store) -> tuple:
    """``(links, separate)`` the user declared (``info --dataset-aliases``): alias/canonical names as written
    (``name`` or ``benchmark/name``), and the names kept apart from built-in links."""
    if not has_table(store.con, TABLE):
        return [], set()
    rows = store.con.execute(f"SELECT alias, canonical, origin FROM {TABLE}").fetchall()
    links = [{"alias": a, "canonical": c, "origin": o, "why": f"declared in {o.split(':', 1)[-1]}"}
             for a, c, o in rows if a != c]
    return links, {a for a, c, _ in rows if a == c}


def add_dataset_alias_file(store, path) -> int:
    """Store a user dataset alias file (the format ``models --aliases`` reads: ``aliases: {canonical: [names]}``,
    ``separate: [names]``, or a CSV ``alias,canonical``), replacing what an earlier load of the same file stored;
    returns its entries.

    Raises
    ------
    SideFileError
        Naming the file and what is wrong with it.
    """
    from .identity import read_alias_file

    aliases, separate = read_alias_file(path)
    origin = f"user:{Path(path).resolve()}"
    rows = [(a, c, origin) for a, c in aliases.items()] + [(n, n, origin) for n in separate]
    with store.transaction() as con:
        con.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (alias VARCHAR PRIMARY KEY, canonical VARCHAR NOT NULL, "
                    "origin VARCHAR NOT NULL)")
        con.execute(f"DELETE FROM {TABLE} WHERE origin = ? OR alias IN (SELECT unnest(?::VARCHAR[]))",
                    [origin, [r[0] for r in rows]])
        if rows:
            con.executemany(f"INSERT INTO {TABLE} VALUES (?, ?, ?)", rows)
    return len(rows)


def _column(meta, name) -> Optional[str]:
    """The matrix column of a dataset named ``(benchmark, name)`` or ``"benchmark/name"`` or ``"name"``; None when the
    matrix has none, :data:`AMBIGUOUS` when a plain name is in several of its benchmarks."""
    if isinstance(name, tuple):
        bench, plain = name
    else:
        bench, _, plain = name.rpartition("/")
        if bench and not ((meta["benchmark"] == bench) & (meta["dataset"] == plain)).any():
            bench, plain = "", name  # a dataset name with a slash in it
    hit = meta.index[(meta["dataset"] == plain) & ((meta["benchmark"] == bench) if bench else True)]
    return hit[0] if len(hit) == 1 else AMBIGUOUS if len(hit) else None


def _label(name) -> str:
    return "/".join(name) if isinstance(name, tuple) else str(name)


def apply_links(store, X: np.ndarray, index, columns: list, meta) -> tuple:
    """Merge each linked dataset's column into its canonical one (module docstring).

    Parameters
    ----------
    store : Store
        The open store (its datasets' metadata and the user's alias table).
    X : numpy.ndarray
        The raw matrix (rows ``index``, columns ``columns``); changed in place where cells move.
    index, columns : sequence
        Its labels.
    meta : pandas.DataFrame
        Per-column metadata (``benchmark``, ``dataset``, ``metric``), indexed by ``columns``.

    Returns
    -------
    (X, columns, meta, report)
        Without the merged columns; ``report`` is ``{"merged": [...], "not_merged": [...]}`` (empty when no link
        applies), each merge with its counts: ``moved`` (cells only the alias had), ``same`` (one value from two
        files), ``conflicts`` (values that differ: the canonical's kept) and ``conflicting`` (the first few).
    """
    built, unresolved = run_links(store)
    declared, separate = user_links(store)
    merged, not_merged, drop = [], [], []
    for link in declared + [b for b in built if _label(b["alias"]) not in separate
                            and b["alias"][1] not in separate]:
        a, c = _column(meta, link["alias"]), _column(meta, link["canonical"])
        if AMBIGUOUS in (a, c):
            not_merged.append({"dataset": _label(link["alias"]), "into": _label(link["canonical"]),
                               "why": f"{link['why']}, but a name is in several benchmarks of this matrix: write it "
                                      "as benchmark/name"})
            continue
        if a is None or a in drop or a == c:
            continue
        if c is None:
            continue  # the canonical dataset is not in this matrix: nothing to merge into
        if meta.at[a, "metric"] != meta.at[c, "metric"]:
            not_merged.append({"dataset": a, "into": c, "why": f"{link['why']}, but its metric "
                               f"{meta.at[a, 'metric']} is not {meta.at[c, 'metric']}"})
            continue
        ia, ic = columns.index(a), columns.index(c)
        va, vc = X[:, ia], X[:, ic]
        has_a, has_c = ~np.isnan(va), ~np.isnan(vc)
        both = has_a & has_c
        differ = both & ~(np.abs(va - vc) <= CONFLICT_TOLERANCE)
        moved = has_a & ~has_c
        vc[moved] = va[moved]
        rows = np.flatnonzero(differ)
        merged.append({"dataset": a, "into": c, "origin": link["origin"], "why": link["why"],
                       "moved": int(moved.sum()), "same": int((both & ~differ).sum()), "conflicts": len(rows),
                       "conflicting": [{"model": str(index[i]), "value": float(va[i]), "kept": float(vc[i])}
                                       for i in rows[:LISTED]]})
        drop.append(a)
    for u in unresolved:
        col = _column(meta, u["dataset"])
        if col not in (None, AMBIGUOUS) and col not in drop:
            not_merged.append({"dataset": col, "into": None, "why": f"{u['why']} ({', '.join(u['candidates'])}): "
                               "which one is not known; 'harness-ext info --dataset-aliases FILE' declares it"})
    if not drop:
        return X, columns, meta, ({"merged": [], "not_merged": not_merged} if not_merged else {})
    keep = [i for i, col in enumerate(columns) if col not in drop]
    return (np.ascontiguousarray(X[:, keep]), [columns[i] for i in keep], meta.drop(index=drop),
            {"merged": merged, "not_merged": not_merged})


def query_links(store, query, X: np.ndarray, index, columns: list, meta, extra: dict) -> tuple:
    """:func:`apply_links` when ``query.aliases`` (the matrix's ``--no-aliases`` keeps every name apart), else the
    matrix as it is and no report; a fingerprint the scan computed of the columns before a merge is dropped from
    ``extra`` (the matrix's is then computed of the merged columns)."""
    if not query.aliases:
        return X, columns, meta, {}
    X, columns, meta, report = apply_links(store, X, index, columns, meta)
    if report.get("merged"):
        extra.pop("fingerprint", None)
    return X, columns, meta, report


def links_note(attrs: dict) -> Optional[str]:
    """The line ``matrix`` and ``reduce`` print for the datasets merged under another name (and those not), or None."""
    from ..report import plural

    report = (attrs or {}).get("dataset_links") or {}
    parts = []
    for m in report.get("merged", []):
        text = (f"dataset {m['dataset']} merged into {m['into']} ({m['why']}): {plural(m['moved'], 'cell')} only "
                f"under {m['dataset']} moved, {plural(m['same'], 'cell')} with the same value under both names (one "
                "run read from two files) counted once")
        if m["conflicts"]:
            shown = ", ".join(f"{c['model']} {c['value']:g} vs {c['kept']:g}" for c in m["conflicting"])
            text += (f", {plural(m['conflicts'], 'cell')} with values that disagree, {m['into']}'s kept ({shown}"
                     f"{' ...' if m['conflicts'] > len(m['conflicting']) else ''})")
        parts.append(text)
    parts += [f"dataset {n['dataset']} not merged: {n['why']}" for n in report.get("not_merged", [])]
    if not parts:
        return None
    return "; ".join(parts) + " (--no-aliases keeps them apart)"
