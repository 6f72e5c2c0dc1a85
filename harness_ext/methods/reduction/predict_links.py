"""One dataset under two names, at ``predict``: a new model's files read under the manifest's name.

The store links an Every Eval Ever record of an Inspect AI run and the Inspect task's log into one column
(:mod:`harness_ext.store.dataset_links`). A manifest keeps what those links compare for each of its datasets (the
dataset's repository, size and scorer: ``link_fields``) and the names merged into it in its training matrix
(``aliases``: built-in links and the user's ``info --dataset-aliases``; ``separate``: the names the user kept
apart). ``predict`` then reads a new model's record
of a dataset the manifest names by its Inspect task (or its log of a dataset the manifest names by the record's name)
under the manifest's name, with the same rules (:func:`~harness_ext.store.dataset_links.match_runs`), and says what it
linked with counts; a file that fits several of the manifest's datasets is read under none of them, and said.
"""

from __future__ import annotations

from typing import Optional

import pandas as pd

from ...store.dataset_links import link_fields, match_runs, stored_link_fields, user_links

#: The manifest dataset fields :func:`column_links` adds.
FIELDS = ("link_fields", "aliases", "separate")


def column_links(df: pd.DataFrame, db) -> dict:
    """``{column: {"link_fields": {...}, "aliases": [names]}}`` for a manifest's datasets section: the fields the
    built-in links compare (from the store ``db``; none without one) and the datasets merged into each column of the
    matrix ``df`` (its ``attrs["dataset_links"]``)."""
    from pathlib import Path

    out: dict = {}
    for m in ((df.attrs.get("dataset_links") or {}).get("merged") or []):
        out.setdefault(m["into"], {}).setdefault("aliases", []).append(str(m["dataset"]))
    meta = df.attrs.get("datasets") or {}
    if db in (None, ":memory:") or not Path(db).exists() or not meta:
        return out
    from ...store.db import Store

    with Store.open(db, read_only=True) as store:
        stored = stored_link_fields(store)
        declared, separate = user_links(store)
    for c, md in meta.items():
        bench, name = md.get("benchmark"), md.get("dataset")
        if fields := stored.get((bench, name)):
            out.setdefault(c, {})["link_fields"] = fields
            if separate:  # the user's names kept apart from the built-in links stay apart at predict too
                out[c]["separate"] = sorted(separate)
        for link in declared:  # declared even where the training store has no dataset of that name
            if link["canonical"] in (name, f"{bench}/{name}", c):
                aliases = out.setdefault(c, {}).setdefault("aliases", [])
                if link["alias"] not in aliases:
                    aliases.append(link["alias"])
    return out


def manifest_datasets(manifest: dict) -> list:
    """The manifest's datasets, with the ``link_fields`` of its source store where the manifest (written before it
    kept them) has none and the store is still there."""
    datasets = manifest["datasets"]
    store_path = (manifest.get("source") or {}).get("store")
    if any("link_fields" in d for d in datasets) or not store_path:
        return datasets
    from pathlib import Path

    from ...store.db import Store

    if not Path(store_path).is_file():
        return datasets
    try:
        with Store.open(store_path, read_only=True) as store:
            stored = stored_link_fields(store)
    except Exception:  # noqa: BLE001 - a store that cannot be read now only loses the links, as before
        return datasets
    keys = [(d.get("benchmark"), dataset_short_name(d)) for d in datasets]
    return [{**d, "link_fields": stored[k]} if k in stored else d for d, k in zip(datasets, keys)]


def dataset_short_name(d: dict) -> str:
    """A manifest dataset's name without its ``benchmark/`` prefix: its name in the store and in result files."""
    b = d.get("benchmark") or ""
    return d["name"][len(b) + 1:] if b and d["name"].startswith(b + "/") else d["name"]


def new_result_links(datasets: list, store) -> tuple:
    """``(renames, notes)``: the new results' datasets (in ``store``) to read under a manifest dataset's name.

    ``renames``: ``{(benchmark, name): (manifest benchmark, manifest dataset name, why)}``; ``notes``: the datasets
    left unread because they fit several of the manifest's datasets (or several new datasets fit one), each with
    its candidates. A new dataset the manifest names itself is never renamed.
    """
    own = {(d.get("benchmark"), dataset_short_name(d)): d for d in datasets}
    new = {k: v for k, v in stored_link_fields(store).items() if k not in own}
    names = {(b, n) for b, n in store.con.execute("SELECT DISTINCT benchmark, name FROM datasets").fetchall()}
    return match_new(own, new, names)


def match_new(own: dict, new: dict, names) -> tuple:
    """:func:`new_result_links` of the manifest's datasets ``own`` (``{(benchmark, name): manifest dataset}``) and the
    new results' ``new`` (``{(benchmark, name): link_fields}``; ``names``: every new ``(benchmark, name)``, for the
    manifest's aliases): the one rule, whether the new names are datasets of results files or tasks of per-item
    files (:mod:`.item_links`)."""
    renames, notes = {}, []
    # Names merged into a manifest column in its training matrix (built in or declared by the user).
    for (bench, short), d in own.items():
        for alias in d.get("aliases") or ():
            for key in ((bench, alias), (bench, alias.rpartition("/")[2])):
                if key in names and key not in own:
                    renames[key] = (bench, short, f"an alias of {d['name']} in the manifest's training store")
    fields = {k: link_fields(d.get("link_fields") or {}) for k, d in own.items()}
    links, unresolved = match_runs({**{k: f for k, f in fields.items() if f}, **new})
    apart = {n for d in own.values() for n in d.get("separate") or ()}
    targets: dict = {}
    for link in links:
        a, c = link["alias"], link["canonical"]
        if a[1] in apart or "/".join(a) in apart:  # 'separate:' in the user's dataset alias file
            continue
        if a in new and c in own:  # the new model's record of the manifest's Inspect task
            targets.setdefault(a, []).append((c, link["why"]))
        elif a in own and c in new:  # the new model's Inspect log of the manifest's record
            targets.setdefault(c, []).append((a, link["why"].replace("as the logs of Inspect task",
                                                                     "as the new results' logs of Inspect task")))
    for key, fits in targets.items():
        if len(fits) == 1 and key not in renames:
            (b, n), why = fits[0]
            renames[key] = (b, n, why)
    # Several new datasets onto one manifest dataset: which one is meant is not known.
    onto: dict = {}
    for key, (b, n, _) in renames.items():
        onto.setdefault((b, n), []).append(key)
    for (b, n), keys in onto.items():
        if len(keys) > 1:
            for key in keys:
                renames.pop(key)
            notes.append(f"datasets {', '.join(k[1] for k in sorted(keys))} of the new results all fit the "
                         f"manifest's {n}: read under none of them (which one is meant is not known; pass only one)")
    for u in unresolved:
        cands = [c for c in u["candidates"] if (u["dataset"][0], c) in own]
        if u["dataset"] in new and cands:
            notes.append(f"dataset {u['dataset'][1]} of the new results fits several of the manifest's datasets "
                         f"({', '.join(u['candidates'])}: {u['why']}): read under none of them")
        elif u["dataset"] in own and len(u["candidates"]) > len(cands):
            notes.append(f"the manifest's {u['dataset'][1]} fits several Inspect tasks of the new results "
                         f"({', '.join(u['candidates'])}: {u['why']}): none read under its name")
    return renames, notes


def relink_rows(long: pd.DataFrame, renames: dict, datasets: list) -> tuple:
    """``(long, notes)``: the new results' rows (:func:`~harness_ext.store.matrix.query_results`) of each renamed
    dataset under the manifest's name (its ``datasets``), with a note per link counting its cells: read under the
    manifest's name, or the same model's result there under both names (one run read from two files: the manifest's
    name kept, counted as the same value or as disagreeing), or on another metric than the manifest's (not read)."""
    if not renames or long.empty:
        return long, []
    from ...report import plural
    from ...store.tables import CONFLICT_TOLERANCE

    keys = list(zip(long["benchmark"], long["dataset"]))
    hit = pd.Series([k in renames for k in keys], index=long.index)
    if not hit.any():
        return long, []
    long = long.copy()
    key = ["model", "benchmark", "dataset", "metric", "num_fewshot"]
    direct = {tuple(r[:-1]): r[-1] for r in long.loc[~hit, key + ["value"]].itertuples(index=False)}
    metric = {(d.get("benchmark"), dataset_short_name(d)): d.get("metric") for d in datasets}
    notes, drop = [], []
    for old, (bench, name, why) in renames.items():
        want = metric.get((bench, name))
        rows = [i for i, k in zip(long.index, keys) if k == old]
        other = [i for i in rows if want is not None and long.at[i, "metric"] != want]
        rows = [i for i in rows if want is None or long.at[i, "metric"] == want]
        if other:
            notes.append(f"dataset {old[1]} of the new results fits the manifest's {name} ({why}), but "
                         f"{plural(len(other), 'result')} on another metric than its {want} "
                         f"({', '.join(sorted(set(map(str, long.loc[other, 'metric']))))}): not read as {name}")
        if not rows:
            continue
        long.loc[rows, ["benchmark", "dataset"]] = [bench, name]
        read = same = differ = 0
        for i in rows:
            there = direct.get(tuple(long.loc[i, key]))
            if there is None:
                read += 1
                continue
            drop.append(i)
            if abs(float(there) - float(long.at[i, "value"])) <= CONFLICT_TOLERANCE:
                same += 1
            else:
                differ += 1
        text = (f"dataset {old[1]} of the new results read as the manifest's {name} ({why}): "
                f"{plural(read, 'result')} read under {name}")
        if same or differ:
            text += (f", {plural(same + differ, 'result')} also there under {name} itself (kept: "
                     f"{same} with the same value, one run read from two files; {differ} that disagree)")
        notes.append(text)
    return long.drop(index=drop), notes


def link_notes(raw: Optional[pd.DataFrame]) -> list:
    """The lines ``predict`` prints for the datasets it read under another name (``raw.attrs``)."""
    return list(((raw.attrs if raw is not None else {}).get("dataset_links")) or [])
