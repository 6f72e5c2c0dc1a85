"""What ``predict`` says when a new model's files disagree: result cells and anchored item scores.

Result cells follow the store's one rule (:mod:`harness_ext.store.cell_choice`); each conflicting cell is counted
once, in one warning: with the files that give another value when another file disagrees with the value used (and
whether a file also lists the cell again), else with the file that lists it twice. Item scores (the per-sample logs
an anchored item manifest reads) take the first stored score, as ``info --conflicts`` says of a store.
"""

from __future__ import annotations

import pandas as pd

from ...report import listed, plural

_KEYS = ["model", "benchmark", "dataset", "metric", "num_fewshot"]


def conflict_cells(conflicts: pd.DataFrame) -> list:
    """One tuple per conflicting cell of a :meth:`~harness_ext.store.db.Store.conflicts` table (the new model's files):
    ``(model, dataset, file used, files disagreeing, by documents, files listing it again)``.

    Parameters
    ----------
    conflicts : pandas.DataFrame
        Columns :data:`~harness_ext.store.cell_choice.CONFLICT_COLUMNS`.

    Returns
    -------
    list of tuple
        ``files disagreeing``: the other files whose first listing differs from the value used (by more than the
        store's conflict tolerance), in ingest order; ``by documents``: whether the document counts chose the value;
        ``files listing it again``: the files that list the cell a second time with another value (never used).
    """
    from ...store.cell_choice import LATER_LISTING, USED_BY_DOCUMENTS
    from ...store.tables import CONFLICT_TOLERANCE

    if conflicts.empty:
        return []
    c = conflicts.assign(num_fewshot=conflicts["num_fewshot"].astype("Float64").fillna(-1))
    out = []
    for key, cell in c.groupby(_KEYS, sort=False, dropna=False):
        used = cell[cell["used"] != ""]
        if used.empty:
            continue
        source, value, why = used["source"].iloc[0], float(used["value"].iloc[0]), used["used"].iloc[0]
        first = cell[cell["listing"] != LATER_LISTING]
        # A file agreeing with the value used is no conflict of its own, even where another file's repeat is.
        differ = first[(first["source"] != source) & ((first["value"] - value).abs() > CONFLICT_TOLERANCE)]
        again = cell.loc[cell["listing"] == LATER_LISTING, "source"]
        out.append((key[0], key[2], source, tuple(dict.fromkeys(differ["source"])), why == USED_BY_DOCUMENTS,
                    tuple(dict.fromkeys(again))))
    return out


def conflict_warnings(cells: list) -> list:
    """A warning per model whose new results' files give a cell more than one value (:func:`conflict_cells`), and one
    whose cells a file lists twice, differently, where no other file disagrees: each cell in one warning only.

    A score is a cell: a task and metric (at a shot count)."""
    by_model: dict = {}
    n_again: dict = {}  # per model: its disagreeing cells that a file also lists again
    within: dict = {}  # a file listing a cell twice, differently: its first listing is its value, whatever the order
    for model, dataset, used, others, docs, again in cells:
        if not others:
            entry = within.setdefault(model, ({}, []))
            entry[0].update(dict.fromkeys(again or (used,)))
            entry[1].append(dataset)
            continue
        entry = by_model.setdefault(model, ({}, {}, {}, []))
        entry[1 if docs else 0][used] = None
        entry[2].update(dict.fromkeys(others))
        entry[3].append((dataset, docs))
        n_again[model] = n_again.get(model, 0) + bool(again)
    out = []
    for model, (first, most, other, sets) in by_model.items():
        names = [d for d, _ in sets]
        n_docs = sum(docs for _, docs in sets)
        read_first = f"the file read first, in path order ({', '.join(first)})"
        if not n_docs:
            how = f"each is taken from {read_first}, not from {', '.join(other)} (their document counts unknown or equal)"
        else:
            how = (f"{n_docs} {'is' if n_docs == 1 else 'are'} taken from the run measured on the most documents "
                   f"({', '.join(most)})" + (f", {len(sets) - n_docs} from {read_first} (their document counts "
                                             "unknown or equal)" if n_docs < len(sets) else "")
                   + f", not from {', '.join(other)}")
        again = n_again[model]
        also = (f"; {again} of them {'is' if again == 1 else 'are'} also listed again in one file with another "
                "value (a file's first listing is its value)") if again else ""
        out.append(f"reading the new results: {plural(len(sets), 'score')} of {model} on "
                   f"{plural(len(set(names)), 'task')} {'differs' if len(sets) == 1 else 'differ'} between its files (a rerun beside an "
                   f"earlier run?): {listed(dict.fromkeys(names), 4)}; {how}{also}. Pass only the run to use")
    for model, (paths, names) in within.items():
        out.append(f"reading the new results: {', '.join(paths)} list{'s' * (len(paths) == 1)} "
                   f"{plural(len(names), 'score')} of {model} on {plural(len(set(names)), 'task')} twice, differently: "
                   f"{listed(dict.fromkeys(names), 4)}; the file's first listing {'is' if len(names) == 1 else 'of each is'}"
                   " used")
    return out


def item_conflict_warnings(conflicts: list) -> list:
    """A warning per model and anchored task whose item scores the new model's files give differently
    (:func:`harness_ext.methods.reduction.items.anchor_conflicts`), with the counts and the file whose scores are
    used."""
    out = []
    for model, task, n, anchors, used, others in conflicts:
        out.append(f"reading the new results: {plural(n, 'item score')} of {model} on {task} "
                   f"{'differs' if n == 1 else 'differ'} between its files ({anchors:,} of them "
                   f"among the anchors the task's estimate reads); the score of the file "
                   f"read first, in path order, is used ({', '.join(used)}), not {', '.join(others)}. Pass only the run "
                   "to use")
    return out
