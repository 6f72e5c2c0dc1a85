"""The ``info`` command: what the store holds (counts, benchmarks, benchmark groups, conflicting cells), item-level
results included."""

from __future__ import annotations

from ..report import Result, format_table, plural

#: Format of the conflicting values: up to 12 significant digits, so that two values that differ never print alike.
CONFLICT_FORMAT = "{:.12g}"
#: The most characters of a benchmark's metric names the table prints (lm-eval's results hold dozens): the rest are
#: counted, and ``--json`` lists them all.
METRICS_WIDTH = 100


class StoreInfo(Result):
    """A summary of a store: ``summary()`` has its path and counts; the tables are the benchmarks,
    the benchmark groups and (when asked for) the cells whose value differs between source files."""
    command = "info"

    def __init__(self, path: str, counts: dict, benchmarks, groups, conflicts=None, item_benchmarks=None,
                 item_conflicts=None, item_notes=None, dataset_links=None):
        import pandas as pd

        self.dataset_links = dataset_links if dataset_links is not None else pd.DataFrame()
        self.path = str(path)
        self.counts = dict(counts)
        self.benchmarks = benchmarks
        self.groups = groups
        self.conflicts = conflicts
        self.item_benchmarks = item_benchmarks if item_benchmarks is not None else pd.DataFrame()
        self.item_conflicts = item_conflicts
        self.item_notes = list(item_notes or [])

    def summary(self) -> dict:
        out = {"store": self.path, "counts": self.counts}
        if self.item_notes:  # how item ids were numbered: said only of a store where it matters
            out["item_notes"] = self.item_notes
        return out

    def tables(self) -> dict:
        out = {"benchmarks": self.benchmarks, "benchmark_groups": self.groups}
        if len(self.item_benchmarks):
            out["item_benchmarks"] = self.item_benchmarks
        if len(self.dataset_links):
            out["dataset_links"] = self.dataset_links
        if self.conflicts is not None:
            out["conflicts"] = self.conflicts
        if self.item_conflicts is not None:
            out["item_conflicts"] = self.item_conflicts
        return out

    def render(self) -> str:
        from ..store.item_info import COUNT_KEYS

        cells = {k: v for k, v in self.counts.items() if k not in COUNT_KEYS and k != "model_ids"
                 and (k not in _CONFLICT_DETAIL or self.counts.get("conflicts"))}
        # Cells, not values: ingest counts each file's values that disagree with those stored, so one cell
        # written by three files is two conflicting values there and one conflicting cell here.
        labels = {"conflicts": "cells with conflicting values"}
        ids = self.counts.get("model_ids")
        if ids is not None and ids < self.counts.get("models", 0):
            # As matrix and reduce count rows: the names of one model (aliases, case) are one row there.
            labels["models"] = (f"model names ({plural(ids, 'model')} once the names of one model merge: 'harness-ext "
                                "models --merged' lists them)")
        parts = [_count(v, labels.get(k, k)) for k, v in cells.items() if k not in _CONFLICT_DETAIL + (ROUNDED,)]
        if "conflicts_by_documents" in cells:
            parts.append(f"{cells['conflicts_by_documents']:,} of them decided by document count")
        if cells.get("conflicts_listed_twice"):
            parts.append(_listed_twice(cells["conflicts_listed_twice"], cells.get("conflicts_later_more_documents", 0)))
        if cells.get(ROUNDED):  # not conflicts: said once, whether or not the store has any
            from ..store.rounding import agreed_note

            parts.append(agreed_note(cells[ROUNDED]))
        lines = [f"store: {self.path}", ", ".join(parts)]
        if self.counts.get("item_sources"):  # a store of results alone says nothing of items
            lines.append("item level: " + ", ".join(_count(self.counts[k], k.replace('_', ' ')) for k in COUNT_KEYS))
        if len(self.benchmarks):
            b = self.benchmarks
            if "metrics" in b:
                b = b.assign(metrics=[short_list(m) for m in b["metrics"]])
            lines += ["", format_table(b, index=False)]
        if len(self.item_benchmarks):
            b = self.item_benchmarks
            lines += ["", "item-level results:", format_table(b.assign(metrics=[short_list(m) for m in b["metrics"]]),
                                                              index=False)]
            lines += [f"note: {n}" for n in self.item_notes]
        if len(self.groups):
            g = self.groups.assign(members=[short_list(m, 80) for m in self.groups["members"]])
            lines += ["", "benchmark groups (query one with --benchmark GROUP):", format_table(g, index=False)]
        if len(self.dataset_links):
            lines += ["", "datasets under two names (the matrix merges the first into the second; --no-aliases keeps them "
                          "apart; 'info --dataset-aliases FILE' declares or separates names):",
                      format_table(self.dataset_links, index=False)]
        n = self.counts.get("conflicts", 0)
        if self.conflicts is not None and n:
            # Every digit the values differ in: at the tables' 3 decimals, 0.937722 and 0.937556 both read 0.938.
            lines += ["", format_table(self.conflicts, floatfmt=CONFLICT_FORMAT, index=False)]
        elif n:
            docs, one = self.counts.get("conflicts_by_documents", 0), self.counts.get("conflicts_one_file", 0)
            twice = self.counts.get("conflicts_listed_twice", 0)
            lines += ["", f"{plural(n, 'cell has', 'cells have')} values that disagree between source files"
                          f"{' or within one' if twice else ''}: {docs:,} take the value measured "
                          f"on the most documents, {n - docs - one:,} the first-ingested (their document counts unknown "
                          f"or equal)" + (f", {one:,} their file's first listing (all their values in one file)"
                                          if one else "")
                          + (f"; {_listed_twice(twice, self.counts.get('conflicts_later_more_documents', 0))}"
                             if twice else "") + "; see 'harness-ext info --conflicts'"]
        n = self.counts.get("item_conflicts", 0)
        if self.item_conflicts is not None and n:
            lines += ["", "item scores that disagree between source files (the first stored is used):",
                      format_table(self.item_conflicts, floatfmt=CONFLICT_FORMAT, index=False)]
        elif n:
            lines += ["", f"{plural(n, 'item score disagrees', 'item scores disagree')} between source files (the first stored is used); "
                          "see 'harness-ext info --conflicts'"]
        return "\n".join(lines)


#: The counts that qualify the conflicting cells, said only beside them.
_CONFLICT_DETAIL = ("conflicts_by_documents", "conflicts_listed_twice", "conflicts_one_file",
                    "conflicts_later_more_documents")
#: The count of cells whose values agree to the decimals the less precise gives (no conflict).
ROUNDED = "cells_agreeing_to_rounding"


def short_list(names, width: int = METRICS_WIDTH) -> str:
    """A list of names joined with ``", "`` and cut to the whole names that fit in about ``width`` characters, the
    rest counted (``acc, acc_norm, ... (12 more: --json lists them)``); a list that fits is joined whole."""
    parts = [str(n) for n in names] if isinstance(names, (list, tuple)) else [] if names is None else [str(names)]
    if len(", ".join(parts)) <= width:
        return ", ".join(parts)
    kept, used = [], 0
    for p in parts:
        if kept and used + len(p) + 2 > width:
            break
        kept.append(p)
        used += len(p) + 2
    return f"{', '.join(kept)} ({len(parts) - len(kept)} more: --json lists them)"


def _listed_twice(n: int, more: int) -> str:
    """The clause of the cells a file lists twice with different values: the file's first listing is its value."""
    return (f"{n:,} listed again in one file with another value (the file's first listing is its value"
            + (f"; {more:,} of them on more documents in a later listing, never used" if more else "") + ")")


def _count(n: int, label: str) -> str:
    """``n`` and a count's plural ``label`` of the store's counts (``cells with conflicting values``), singular at 1."""
    head, _, rest = label.partition(" with ")
    return plural(n, head[:-1] + (f" with {rest}" if rest else ""), label)


def store_info(store, conflicts: bool = False) -> StoreInfo:
    """The :class:`StoreInfo` of an open :class:`~harness_ext.store.db.Store`."""
    from ..store.item_info import assumed_metric_notes, item_benchmarks, item_conflicts, item_counts, item_id_notes

    from ..store.cell_choice import conflict_counts, listed_twice
    from ..store.rounding import agreed_count

    counts = {**store.counts(), **item_counts(store)}
    counts["model_ids"] = _model_ids(store, counts["models"])
    table = store.conflicts() if conflicts or counts.get("conflicts") else None
    counts["conflicts_by_documents"] = conflict_counts(table)[1]
    counts[ROUNDED] = agreed_count(store.con)
    twice = listed_twice(table)
    counts["conflicts_listed_twice"], counts["conflicts_one_file"], counts["conflicts_later_more_documents"] = twice
    return StoreInfo(store.path, counts, store.benchmarks(), store.benchmark_groups(),
                     table if conflicts else None, item_benchmarks(store),
                     item_conflicts(store) if conflicts else None, item_id_notes(store) + assumed_metric_notes(store),
                     dataset_links_table(store))


def _model_ids(store, names: int) -> int:
    """How many models the store's ``names`` model names are once aliases merge them (``model_aliases``)."""
    if not getattr(store, "_has_table", lambda t: False)("model_aliases"):
        return names
    return store.con.execute("SELECT count(DISTINCT coalesce(a.canonical, m.name)) FROM models m "
                             "LEFT JOIN model_aliases a ON a.alias = m.name").fetchall()[0][0]


def dataset_links_table(store):
    """One row per dataset the matrix merges into another under its name (built in from the same run's fields, or
    declared) and per one it cannot tell (``into`` empty): ``dataset, into, origin, why``."""
    import pandas as pd

    from ..store.dataset_links import run_links, user_links

    built, unresolved = run_links(store)
    declared, separate = user_links(store)
    rows = [("/".join(b["alias"]), "/".join(b["canonical"]), b["origin"], b["why"]) for b in built
            if "/".join(b["alias"]) not in separate and b["alias"][1] not in separate]
    rows += [(d["alias"], d["canonical"], "user", d["why"]) for d in declared]
    rows += [("/".join(u["dataset"]), "", "not merged", f"{u['why']}: {', '.join(u['candidates'])}")
             for u in unresolved]
    return pd.DataFrame(rows, columns=["dataset", "into", "origin", "why"])


def run(args) -> int:
    from ..store.db import Store
    from .output import emit

    if getattr(args, "dataset_aliases", None):
        from ..store.dataset_links import add_dataset_alias_file

        with Store.open(args.db) as store:
            n = add_dataset_alias_file(store, args.dataset_aliases)
        print(f"stored {plural(n, 'dataset alias entry', 'dataset alias entries')} from {args.dataset_aliases}")
    with Store.open(args.db, read_only=True) as store:
        emit(args, store_info(store, conflicts=args.conflicts))
    return 0
