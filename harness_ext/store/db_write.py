"""Writing a batch of sources' results into the store: the ingestion half of :class:`harness_ext.store.db.Store`.

:class:`_BatchWrites` holds :meth:`~harness_ext.store.db.Store.ingest_batch` and the steps under it; ``Store``
inherits them, and they use what ``Store`` sets up (its connection, :meth:`~harness_ext.store.db.Store.transaction`
and :meth:`~harness_ext.store.db.Store.registered`, the id caches :meth:`~harness_ext.store.db.Store._load_caches`
reads). :class:`Conflict` and :class:`SourceOutcome`, what a write reports, are importable from
:mod:`harness_ext.store.db` as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import repeat
from typing import Callable, Optional

import duckdb
import numpy as np
import pandas as pd

from ..errors import StoreError
from .dataset_fill import conflict_note, fill_stored, filled, later_keys
from .batch import _KIND_NAMES, _Cells, _columns, _float_column, _Frame, _int_column, _metadata
from .rounding import agree
from .tables import _DATASET_COLUMNS, _PAIR_COLUMNS, AGGREGATE, CONFLICT_TOLERANCE, DATASET, UNKNOWN_SHOTS


@dataclass
class Conflict:
    model: str
    dataset: str
    metric: str
    num_fewshot: Optional[int]
    stored_value: float
    new_value: float
    stored_source: str

    def __str__(self):
        return self.text()

    def text(self, path: Optional[str] = None) -> str:
        """The conflict as said of the file at ``path``: a value that file gave already is one it lists twice."""
        shots = "" if self.num_fewshot is None else f", {self.num_fewshot}-shot"
        head = f"{self.model} on {self.dataset} ({self.metric}{shots})"
        if path is not None and self.stored_source == path:
            return (f"{head}: listed twice in this file, {self.stored_value:.6g} then {self.new_value:.6g} "
                    "(both kept; the first is used)")
        return (f"{head}: stored {self.stored_value:.6g} from {self.stored_source}, this file says "
                f"{self.new_value:.6g} (both kept; 'harness-ext info --conflicts' says which is used)")


@dataclass
class SourceOutcome:
    """What ingesting one source did."""

    status: str  # "ingested" | "unchanged" | "skipped" (the store refused it; see reason)
    n_new: int = 0
    n_duplicate: int = 0
    conflicts: list = field(default_factory=list)
    reason: str = ""
    #: Cells another file gives with a value that agrees to the decimals the less precise gives (no conflict).
    n_rounded: int = 0
    #: What the file's notes gain from storing it (an lm-eval group's member list other than the one kept).
    notes: list = field(default_factory=list)


def _note_lists(outcomes: list, lists: list, item_of_row: np.ndarray) -> list:
    """``outcomes``, each source's with the notes of the member lists it gave that differ from those kept
    (``lists``: ``(row, group, kept, other, kept too)``; ``item_of_row``: each row's source, from 0), each group and
    list once."""
    said: set = set()
    for row, group, kept, other, stored in lists:
        if row is None:
            continue
        k = int(item_of_row[row])
        if (k, group, tuple(other)) not in said and outcomes[k].status == "ingested":
            said.add((k, group, tuple(other)))
            outcomes[k].notes.append(conflict_note(group, kept, other, stored))
    return outcomes


class _BatchWrites:
    """The write path of :class:`harness_ext.store.db.Store` (its base class; see the module's docstring)."""

    def ingest_batch(self, items: list, before_commit: Optional[Callable[[], None]] = None) -> list:
        """Store several sources, each all-or-nothing, in one transaction.

        ``items`` are ``(path, sha256, adapter, records)`` with validated
        records. Batching matters: DuckDB's per-statement cost, not the data,
        dominates a file-at-a-time ingest of thousands of small files. If the
        batch transaction fails, it is rolled back and each source is retried
        in its own transaction, so one bad source never takes others with it
        and never leaves part of itself behind.

        ``before_commit``, if given, writes what goes with the batch (ingest's alias refresh) inside its
        transaction, just before the commit: one commit and one checkpoint instead of two. Without a batch
        transaction (nothing new, or the batch refused and its sources written one at a time) it runs
        after the writes, in a transaction of its own. Either way its writes are committed once.

        Returns
        -------
        list of SourceOutcome
            One per item, in order; a source whose own transaction fails is
            ``skipped`` with the database's reason and leaves nothing behind.
        """
        if self.read_only:
            raise StoreError(f"store {self.path} was opened read-only")
        fresh, seen = [], set()
        outcomes: list = [None] * len(items)
        for i, (path, sha, adapter, records) in enumerate(items):
            if sha in self._shas or sha in seen:
                outcomes[i] = SourceOutcome("unchanged")
            else:
                seen.add(sha)
                fresh.append(i)
        done = []
        if fresh:
            try:
                done = self._write_batch([items[i] for i in fresh], before_commit)
                before_commit = None  # committed with the batch
            except duckdb.Error:
                # Retry one source per transaction; a source that still fails is reported, not raised,
                # so it cannot take the sources after it down (each failed write was rolled back).
                done = []
                for i in fresh:
                    try:
                        done.append(self._write_batch([items[i]])[0])
                    except duckdb.Error as exc:
                        done.append(SourceOutcome("skipped", reason=f"the store refused it: {str(exc).splitlines()[0]}"))
        if before_commit is not None:
            with self.transaction():
                before_commit()
        for i, o in zip(fresh, done):
            outcomes[i] = o
        return outcomes

    def _write_batch(self, items: list, before_commit: Optional[Callable[[], None]] = None) -> list:
        new_models: dict = {}
        new_datasets: dict = {}
        new_primary: set = set()
        next_model = max(self._model_ids.values(), default=0) + 1
        next_dataset = max(self._dataset_ids.values(), default=0) + 1
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        first_source = self._next_source
        paths, shas, adapters, recs = zip(*items)
        lens = list(map(len, recs))
        source_id = np.repeat(np.arange(first_source, first_source + len(items)), lens)
        # The rows' fields as columns, models and descriptions as codes in order of first appearance: a
        # ResultRows source costs a few C-level passes, its model and its kinds (shared descriptions) named once.
        # ``descs[k]`` describes code k's rows: the record itself, or a ResultRows kind.
        c = _columns(items)
        n = len(c.values)
        # Model ids in order of first appearance, as ids are given: the known ones looked up in one C-level pass.
        found = list(map(self._model_ids.get, c.models))
        new_codes = [code for code, mid in enumerate(found) if mid is None]
        for code, mid in zip(new_codes, range(next_model, next_model + len(new_codes))):
            found[code] = mid
            new_models[c.models[code]] = [mid, "{}"]
        m_ids = np.array(found, dtype=np.int64)
        model_id = m_ids[c.model_codes]
        # Adapters share one metadata dict per model: each (model, source, dict) is serialised once, and a new
        # model's metadata (its first row's dict) from the same values.
        new_mds = {code: c.model_metas[code] for code in new_codes if c.model_metas[code]}
        meta_rows, model_json = _metadata(c.source_metas, m_ids, first_source, new_mds)
        for code, text in model_json.items():
            new_models[c.models[code]][1] = text
        # Datasets by (benchmark, name, metric) of each distinct description, numbered in order of first appearance.
        d_of: dict = {}
        d_first = []
        desc_d = np.empty(len(c.descs), dtype=np.int64)
        for j, key in enumerate(map(_KIND_NAMES, c.descs)):
            code = d_of.get(key)
            if code is None:
                code = d_of[key] = len(d_first)
                d_first.append(j)
            desc_d[j] = code
        d_ids = np.empty(len(d_first), dtype=np.int64)
        for code, j in enumerate(d_first):
            rec = c.descs[j]
            dkey = (rec.benchmark, rec.dataset, rec.metric)
            did = self._dataset_ids.get(dkey)
            if did is None:
                did = next_dataset
                next_dataset += 1
                # One primary metric per dataset: a second metric a later file calls primary is not.
                pkey = (rec.benchmark, rec.dataset)
                primary = bool(rec.primary) and pkey not in self._primary and pkey not in new_primary
                if primary:
                    new_primary.add(pkey)
                new_datasets[dkey] = (
                    did, rec.benchmark, rec.dataset, rec.metric, rec.higher_is_better, _f(rec.random_baseline),
                    rec.baseline_source, _f(rec.min_score), _f(rec.max_score), primary, rec.task,
                    json.dumps(c.dmetas[c.desc_first[j]] or {}, default=str),
                    AGGREGATE if rec.aggregate else DATASET, rec.scale,
                )
            d_ids[code] = did
        fill, lists = self._later_keys(c, desc_d, d_ids, d_first, new_datasets)  # lists: other member lists
        stderr = _float_column(c.stderrs)  # None -> NaN
        n_samples, no_samples = _int_column(c.n_samples)
        value = np.fromiter(c.values, float, n)  # validated floats: no None to look for
        frame = _Frame({"model_id": model_id, "dataset_id": d_ids[desc_d][c.desc_codes],
                        "num_fewshot": _int_column(c.shots, UNKNOWN_SHOTS)[0], "value": value,
                        "stderr": stderr, "n_samples": n_samples, "source_id": source_id},
                       {"stderr": np.isnan(stderr), "n_samples": no_samples})
        cells = _Cells(frame, first_source, len(items))
        # The source rows, built by C-level passes (a tuple per source made in Python cost a microsecond each).
        sources = list(zip(range(first_source, first_source + len(items)), map(str, paths), shas, adapters,
                           repeat(now), cells.n_kept.tolist()))
        with self.transaction():
            self._append_new(sources, new_models, new_datasets, meta_rows)
            fill_stored(self.con, fill, lists)
            outcomes = _note_lists(self._insert_results(frame, items, cells), lists, source_id - first_source)
            if before_commit is not None:
                before_commit()
        self._remember(new_models, new_datasets, new_primary, list(shas))
        return outcomes

    def _later_keys(self, c, desc_d: np.ndarray, d_ids: np.ndarray, d_first: list, new_datasets: dict) -> tuple:
        """The :data:`~.dataset_fill.FILLED_KEYS` a batch's later rows give datasets whose first row lacks them: put
        into the new datasets' metadata here, returned ``{dataset_id: {key: value}}`` for the stored ones
        (:func:`~.dataset_fill.fill_stored` writes them), with the list of ``(row, group, kept, other, kept too)``
        member lists that differ from those kept (new datasets' filled here, stored ones' by ``fill_stored``)."""
        lists: list = []
        keys = later_keys(c.dmetas, desc_d[c.desc_codes],
                          lambda code: c.descs[d_first[code]].task or c.descs[d_first[code]].dataset)
        if not keys:
            return {}, lists
        out = {}
        for code, got in keys.items():
            rec = c.descs[d_first[code]]
            dkey = (rec.benchmark, rec.dataset, rec.metric)
            new = new_datasets.get(dkey)
            if new is None:
                out[int(d_ids[code])] = got
            else:
                new_datasets[dkey] = (*new[:11], filled(new[11], got, rec.task or rec.dataset, lists), *new[12:])
        return out, lists

    def _remember(self, new_models: dict, new_datasets: dict, new_primary: set, shas: list) -> None:
        """Add what a committed write created to the id caches."""
        self._model_ids.update({n: i for n, (i, _) in new_models.items()})
        self._dataset_ids.update({k: v[0] for k, v in new_datasets.items()})
        self._primary |= new_primary
        self._next_source += len(shas)
        self._shas.update(shas)

    def _append_new(self, sources: list, new_models: dict, new_datasets: dict, meta_rows: dict) -> None:
        """Insert a batch's source rows, new models and datasets and model metadata (columns: ``model_id, source_id,
        key, value``; see :func:`_first_per_key`), inside its transaction."""
        cols = dict(zip(["source_id", "path", "sha256", "adapter", "ingested_at", "n_results"], zip(*sources)))
        times = cols["ingested_at"]
        if times.count(times[0]) == len(times) and times[0].tzinfo is None:
            # A batch's one time as a numpy column: Arrow converts datetime objects one by one (50 ms a 5,000).
            cols["ingested_at"] = np.full(len(times), np.datetime64(times[0], "us"))
        cols["reader"] = [self.readers.get(a) for a in cols["adapter"]]
        cols["options"] = [self.read_options] * len(times)
        tables = {"sources": cols}
        if new_models:
            ids, mds = zip(*new_models.values())
            tables["models"] = {"model_id": ids, "name": list(new_models), "metadata": mds}
        if new_datasets:
            tables["datasets"] = dict(zip(_DATASET_COLUMNS, map(list, zip(*new_datasets.values()))))
        if meta_rows["key"]:
            tables["model_metadata"] = meta_rows
        self._append_columns(tables)

    def _append_columns(self, tables: dict) -> None:
        """Insert columns of plain values (ints, strings, datetimes) into each table of ``{table: {column:
        values}}`` through Arrow, in one ``execute``: converted a column at a time in C, where a pandas frame of row
        tuples cost more than the insert on a 4,574-file batch."""
        import pyarrow as pa

        frames = {}
        for table, columns in tables.items():
            try:
                frames["_" + table] = pa.table({name: pa.array(col) for name, col in columns.items()})
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                # Values of mixed or unstorable types (an adapter's own higher_is_better, say): the store refuses
                # them as DuckDB would, so ingest_batch retries the batch a source at a time and reports the one at
                # fault.
                raise duckdb.ConversionException(f"{table}: {exc}") from exc
        with self.registered(**frames) as con:
            con.execute(";".join(f"INSERT INTO {table} BY NAME SELECT * FROM _{table}" for table in tables))

    def _append(self, table: str, frame) -> None:
        with self.registered(_frame=frame) as con:
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _frame")

    def _insert_results(self, frame: "_Frame", items: list, cells: "_Cells") -> list:
        n_items = len(items)
        key = ("model_id", "dataset_id", "num_fewshot")
        first_id = self._next_source  # _write_batch numbered the batch's sources from here
        # A file repeating a key: keep its first value; disagreement is a conflict like any other.
        dup = cells.repeat
        rows = frame.arrow(np.flatnonzero(~dup) if dup.any() else None)
        with self.registered(_incoming=rows):
            # Against what was stored before this batch ... (columns as numpy arrays: no frame for a few rows)
            clash = self.con.execute(
                """SELECT i.model_id, i.dataset_id, i.num_fewshot, i.source_id, i.value, r.value AS value_stored,
                          r.source_id AS source_id_stored
                   FROM _incoming i JOIN results r USING (model_id, dataset_id, num_fewshot)
                   QUALIFY row_number() OVER (PARTITION BY i.model_id, i.dataset_id, i.num_fewshot, i.source_id
                                              ORDER BY r.source_id) = 1"""
            ).fetchnumpy()
            self.con.execute("INSERT INTO results BY NAME SELECT * FROM _incoming")
        # ... and against earlier files of this batch (the earliest source is the stored value): rows of a cell
        # after its first, in row order (sources are numbered in row order).
        value, source = frame.cols["value"], frame.cols["source_id"]
        later = np.flatnonzero(~dup & ~cells.first)
        n_clash = len(clash["value"])
        if n_clash and len(later):
            stored = pd.MultiIndex.from_arrays([np.asarray(clash[k]) for k in key])
            later = later[~pd.MultiIndex.from_arrays([frame.cols[k][later] for k in key]).isin(stored)]
        within = np.flatnonzero(dup)
        parts = [{k: np.asarray(clash[k]) for k in _PAIR_COLUMNS}] if n_clash else []
        for idx, first in ((later, cells.first_of_cell), (within, cells.first_of_key)):
            if len(idx):
                ref = first[idx]
                part = {k: frame.cols[k][idx] for k in _PAIR_COLUMNS[:5]}
                parts.append({**part, "value_stored": value[ref], "source_id_stored": source[ref]})
        if len(within):
            differ = np.abs(value[within] - value[cells.first_of_key[within]]) > CONFLICT_TOLERANCE
            if differ.any():
                self._append("result_repeats", frame.arrow(within[differ]))
        # Every (incoming row, stored value) pair, as columns: the same value is a duplicate, another a conflict.
        pairs = {k: np.concatenate([p[k] for p in parts]) if parts else np.empty(0) for k in _PAIR_COLUMNS}
        same = np.abs(pairs["value"] - pairs["value_stored"]) <= CONFLICT_TOLERANCE
        other = pairs["source_id"] != pairs["source_id_stored"]
        n_dup = np.bincount(pairs["source_id"].astype(np.int64)[same & other] - first_id, minlength=n_items)
        # Another file's value that agrees to the decimals the less precise gives is no conflict (rounding.py).
        rounded = other & ~same & agree(pairs["value"], pairs["value_stored"])
        n_rounded = np.bincount(pairs["source_id"].astype(np.int64)[rounded] - first_id, minlength=n_items).tolist()
        differs = {k: v[~same & ~rounded].tolist() for k, v in pairs.items()}
        described = self._describe_conflicts(differs) if differs["value"] else []
        by_source: dict = {}
        for sid, c in zip(differs["source_id"], described):
            by_source.setdefault(int(sid), []).append(c)
        kept, dups = cells.n_kept.tolist(), n_dup.tolist()  # Python ints, no numpy scalar per source
        return [SourceOutcome("ingested", n_new=kept[k], n_duplicate=dups[k],
                              conflicts=by_source.get(first_id + k, []), n_rounded=n_rounded[k])
                for k in range(n_items)]

    def _describe_conflicts(self, differs: dict) -> list:
        """Conflict objects of pairs given as lists (columns :data:`_PAIR_COLUMNS`), the names of only the models,
        datasets and sources they involve read from the store (inside the write's transaction)."""
        # One query for the three look-ups (a statement costs about half a millisecond whatever it reads).
        rows = self.con.execute(
            """SELECT 0, model_id, name, NULL FROM models WHERE list_contains(?, model_id) UNION ALL
               SELECT 1, dataset_id, name, metric FROM datasets WHERE list_contains(?, dataset_id) UNION ALL
               SELECT 2, source_id, path, NULL FROM sources WHERE list_contains(?, source_id)""",
            [sorted(set(differs[k])) for k in ("model_id", "dataset_id", "source_id_stored")]).fetchall()
        names, dsets, paths = {}, {}, {}
        for kind, i, name, metric in rows:
            if kind == 0:
                names[i] = (name,)
            elif kind == 1:
                dsets[i] = (name, metric)
            else:
                paths[i] = (name,)
        out = []
        for mid, did, shots, value, stored, sid_stored in zip(
                differs["model_id"], differs["dataset_id"], differs["num_fewshot"], differs["value"],
                differs["value_stored"], differs["source_id_stored"]):
            dname, metric = dsets[int(did)]
            out.append(Conflict(names[int(mid)][0], dname, metric, None if shots == UNKNOWN_SHOTS else int(shots),
                                float(stored), float(value), paths.get(int(sid_stored), ("?",))[0]))
        return out



def _f(v) -> Optional[float]:
    return None if v is None else float(v)
