"""The item tables of a store filled with ``harness-ext ingest`` (``quality_items.py --store DB``).

One table per (benchmark, task), named ``benchmark/task``: the tasks ``reduce --items`` would reduce, their per-item
metric picked as it picks it (:func:`~harness_ext.methods.reduction.item_reduce.pick_metrics`) and their populations
read as it reads them (:func:`~harness_ext.methods.reduction.item_reduce.read_populations`: models in the store's
order, by name; items by their ids; a model's item from two files the one stored first; a model missing more than
half of the items left out and the other gaps filled with the item's mean, each counted). A benchmark's tasks are each
other's siblings (the other tasks the cross-task estimators see, rows matched by model name), as the tables of one
folder are for ``--items-dir``.
"""

from __future__ import annotations

from pathlib import Path

from harness_ext.methods.reduction.item_others import align_rows


def _unprefixed(note: str, task: str) -> str:
    """A note of ``reduce --items`` (``task: ...``) without its task, to be printed after the table's name."""
    return note[len(task) + 2:] if note.startswith(task + ": ") else note


class StoreTables:
    """The item tables of the store at ``db`` (opened read-only; close it with :meth:`close` or ``with``).

    Parameters
    ----------
    db : path-like
        A store filled with ``harness-ext ingest``.
    benchmarks : sequence of str
        Keep these benchmarks (names or globs, as ``reduce --items --benchmark`` takes them); default every one.
    metric : str, optional
        The per-item metric (``reduce --items --metric``); default per task, as ``reduce --items`` picks it.

    Attributes
    ----------
    tables : list of str
        ``benchmark/task``, sorted as ``--items-dir`` sorts a folder's tables.
    notes : list of str
        ``benchmark/task: note`` of each task left out because it lacks ``metric``.
    """

    def __init__(self, db, benchmarks=(), metric=None):
        from harness_ext.errors import HarnessExtError
        from harness_ext.methods.reduction.item_reduce import item_catalogue, pick_metrics
        from harness_ext.store.db import Store

        if not Path(db).exists():
            raise SystemExit(f"quality_items: --store: no such store file: {db}")
        self.store = Store.open(str(db), read_only=True)
        try:
            cat = item_catalogue(self.store, list(benchmarks) or None)
        except HarnessExtError as exc:  # an empty store, a benchmark it lacks: reduce --items's own message
            self.close()
            raise SystemExit(f"quality_items: {exc}") from None
        self._chosen, self.notes, self._picked, self._read = {}, [], {}, {}
        for (bench, task), g in cat.groupby(["benchmark", "task"], sort=True):
            rows, picked = pick_metrics(g, metric)  # per table, so each note names its benchmark
            said = [_unprefixed(w, task) for w in picked]
            if not rows:  # --metric it lacks: said before the tables
                self.notes += [f"{bench}/{task}: {w}" for w in said]
            for b, t, met in rows:
                self._chosen[f"{b}/{t}"] = (b, t, met)
                self._picked[f"{b}/{t}"] = said
        self.tables = sorted(self._chosen)

    def close(self) -> None:
        self.store.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _population(self, table: str) -> tuple:
        """``(answers, models, notes)`` of ``table``, read once; answers None for a task ``reduce --items`` leaves
        out (fewer than 2 population models), its notes saying so."""
        from harness_ext.errors import HarnessExtError
        from harness_ext.methods.reduction.item_reduce import read_populations

        if table not in self._read:
            bench, task, met = self._chosen[table]
            left_out = []
            try:
                got = read_populations(self.store, [(bench, task, met)], None, left_out)
            except HarnessExtError as exc:  # scores outside [0, 1]: reduce --items's own message
                raise SystemExit(f"quality_items: {exc}") from None
            if task in got:
                _, _, _, M, names, notes, _ = got[task]
                self._read[table] = (M, list(names), list(notes))
            else:
                self._read[table] = (None, [], [_unprefixed(w, task) for w in left_out])
        return self._read[table]

    def load(self, table: str, notes=None) -> tuple:
        """``(answers, models)`` of ``table`` (answers None when it is left out); its notes (the metric picked, then
        the population's) appended to ``notes``."""
        M, names, said = self._population(table)
        if notes is not None:
            notes += self._picked[table] + said
        return M, names

    def siblings(self, table: str, models) -> list:
        """The other tasks of ``table``'s benchmark (each read as :meth:`load` reads it), rows aligned to ``models``;
        a task left out (fewer than 2 models) is not among them."""
        bench = self._chosen[table][0]
        out = []
        for t in self.tables:
            if t != table and self._chosen[t][0] == bench:
                M, own, _ = self._population(t)
                if M is not None:
                    out.append(align_rows(M, own, models))
        return out
