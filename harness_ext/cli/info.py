"""The ``info`` command: what the store holds (counts, benchmarks, benchmark groups, conflicting cells)."""

from __future__ import annotations

from ..report import Result, format_table


class StoreInfo(Result):
    """A summary of a store: ``summary()`` has its path and counts; the tables are the benchmarks,
    the benchmark groups and (when asked for) the cells whose value differs between source files."""

    def __init__(self, path: str, counts: dict, benchmarks, groups, conflicts=None):
        self.path = str(path)
        self.counts = dict(counts)
        self.benchmarks = benchmarks
        self.groups = groups
        self.conflicts = conflicts

    def summary(self) -> dict:
        return {"store": self.path, "counts": self.counts}

    def tables(self) -> dict:
        out = {"benchmarks": self.benchmarks, "benchmark_groups": self.groups}
        if self.conflicts is not None:
            out["conflicts"] = self.conflicts
        return out

    def render(self) -> str:
        lines = [f"store: {self.path}", ", ".join(f"{v} {k}" for k, v in self.counts.items())]
        if len(self.benchmarks):
            lines += ["", format_table(self.benchmarks, index=False)]
        if len(self.groups):
            g = self.groups.assign(members=self.groups["members"].str.slice(0, 80))
            lines += ["", "benchmark groups (query one with --benchmark GROUP):", format_table(g, index=False)]
        n = self.counts.get("conflicts", 0)
        if self.conflicts is not None and n:
            lines += ["", format_table(self.conflicts, index=False)]
        elif n:
            lines += ["", f"{n} cells have values that disagree between source files (the first-ingested is used); "
                          "see 'harness-ext info --conflicts'"]
        return "\n".join(lines)


def store_info(store, conflicts: bool = False) -> StoreInfo:
    """The :class:`StoreInfo` of an open :class:`~harness_ext.store.db.Store`."""
    counts = store.counts()
    return StoreInfo(store.path, counts, store.benchmarks(), store.benchmark_groups(),
                     store.conflicts() if conflicts else None)


def run(args) -> int:
    from ..store.db import Store
    from .output import emit

    with Store.open(args.db, read_only=True) as store:
        emit(args, store_info(store, conflicts=args.conflicts))
    return 0
