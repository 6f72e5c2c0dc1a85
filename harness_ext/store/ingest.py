"""Ingesting result files: the run over the sources, the batched writes, per-file reporting.

The sources come from :mod:`harness_ext.store.ingest_sources`: the walk finds them, exactly one adapter claims
each, and its records are read and validated completely before anything is written, so a bad file is reported
with its reason and leaves the store as it was. Valid files are written in
batches, one transaction per batch, each file all-or-nothing
(:meth:`harness_ext.store.db.Store.ingest_batch`).

lm-eval per-sample logs (``samples_<task>_<date>.jsonl``, written by
``--log_samples`` beside ``results_<date>.json``) are not result files: they go
to the samples table (:func:`harness_ext.store.samples.ingest_samples`) and are
reported with adapter ``lm_eval_samples``; item-response tables, HELM runs' per-instance scores, Inspect logs'
samples and lighteval details too (:mod:`harness_ext.store.item_tables`, adapter ``item_table``).
"""

from __future__ import annotations

import functools
import gc
import itertools
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Optional

from ..errors import IngestError, NotResults
from ..plugin_manager import get_registration, get_registrations
from ..report import listed
from ..types import SourceFile
from .ingest_files import (EDITED_KEPT_REASON, KEPT_REASON, MAX_FILE_BYTES, SAMPLES_ADAPTER,  # noqa: F401
                           FileReport, IngestReport, _check, _max_file_bytes, _shown, _skip_reason, replaced_note,
                           replaced_results)
from .ingest_read import SMALL_FILE_BYTES, _read_walked
from .ingest_sources import (CANDIDATE_SUFFIXES, _detect, _read_types, _walk, detect_adapter,  # noqa: F401
                             iter_sources, read_source, sha256_of)
from .reread import (earlier_readings, is_older, kept_beside, options_text, other_reading_note, record_names,
                     replace_sources, stored_reads)

#: Suffixes of the files an item-response table may be (:mod:`.item_tables`).
_ITEM_SUFFIXES = (".parquet", ".csv", ".tsv")
#: Sources written per DuckDB transaction (each source stays all-or-nothing; see Store.ingest_batch).
#: Each batch costs a connect, a commit and a checkpoint (about 0.1 s), so batches are large; the lock is
#: held only while one is written (a second or two: files are read and parsed before), so readers still
#: get in between.
BATCH_FILES = int(os.environ.get("HARNESS_EXT_BATCH_FILES") or 8192)
BATCH_RECORDS = 500_000
#: Seconds of reading before the first batch after which the store is released so readers get in. A shorter read
#: keeps the connection: closing and reopening it (a checkpoint and a connect, about 0.05-0.1 s of CPU) cost a
#: 5,000-file ingest a tenth of its time, and a reader arriving meanwhile waits at most this long plus the write.
READ_HOLD_SECONDS = 5.0


def ingest_paths(store, paths: Iterable, adapter: Optional[str] = None, show_progress: bool = True,
                 options: Optional[dict] = None, group: Optional[str] = None, reread: bool = False) -> IngestReport:
    """Ingest files and directories into ``store``.

    Parameters
    ----------
    store : harness_ext.store.db.Store
    paths : iterable of path-like
        Files or directories (walked recursively).
    adapter : str, optional
        Force this adapter instead of detecting the format.
    options : dict, optional
        Reading options adapters may use (``meta_columns``: list of column names,
        ``column_meta``: a sidecar YAML for every CSV; see :mod:`harness_ext.adapters.csv_table`).
    group : str, optional
        Also make this a benchmark group of every benchmark these files hold
        (ingested now or before), so ``--benchmark GROUP`` queries them as one.
    reread : bool
        Read again the files stored by an older revision of their adapter (:class:`harness_ext.types.Adapter`
        ``revision``), replacing everything the older reading stored from them (all or nothing per file)
        (:func:`harness_ext.store.reread.replace_sources`). Without it they are left as stored and counted.

    Returns
    -------
    IngestReport
        One entry per candidate file: ingested, unchanged or skipped (with the reason).
        Per-sample logs are stored in the samples table unless ``adapter`` is forced. A file changed since it was
        stored (the same path, adapter and options; other content) replaces its earlier reading, all or nothing
        (``FileReport.replaced`` says what it replaced).

    Notes
    -----
    After ingesting, the model alias table is re-resolved (:func:`harness_ext.store.identity.refresh_aliases`).
    """
    with _gc_paused():
        return _ingest_paths(store, paths, adapter, show_progress, options, group, reread)


@contextmanager
def _gc_paused():
    """Pause Python's cyclic garbage collector for the block (reference counting still frees everything).

    An ingest keeps a batch's parsed documents and records alive, hundreds of thousands of containers, and each
    generational collection walks all of them: a third of a 130,000-record ingest's time went there. Ingest
    makes no reference cycles worth collecting; the collector resumes after the block."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _ingest_paths(store, paths, adapter, show_progress, options, group, reread) -> IngestReport:
    from ..errors import StoreLockedError
    from ..report import progress

    adapters = get_registrations("adapters")
    forced = get_registration("adapters", adapter) if adapter else None
    sources = list(_walk(paths, adapters))
    options = {k: v for k, v in (options or {}).items() if v}
    for src, _, _ in sources:
        src.options = options
    store.readers = {a.name: str(a.revision) for a in [*adapters.values(), *([forced] if forced else [])]}
    store.read_options = options_text(options)
    stored_reads(store, load=True)  # which reader read each stored file, and with which options
    run = _IngestRun(store, forced, adapters, reread, bool(options.get("keep_reference_rows")))
    try:
        for src, _explicit, root in progress(sources, total=len(sources), desc="ingest", disable=None if show_progress else True):
            run.release_if_held_long()
            read = run.read(src, root)
            if read is not None:
                run.queue(src, *read)
        run.flush(final=True)
        store.acquire()
    except StoreLockedError as exc:
        raise run.locked_error(exc, sources) from None
    return run.finish(group)


class _IngestRun:
    """One ingest call: the report, the batch waiting to be written, and the files stored after the results
    (per-sample logs, item-response tables, HELM runs' per-instance scores)."""

    def __init__(self, store, forced, adapters, reread=False, keep_refs=False):  # keep_refs: --keep-reference-rows
        self.store, self.forced, self.adapters, self.reread, self.keep_refs = store, forced, adapters, reread, keep_refs
        self.replacing: set = set()  # report indexes of files read again (--reread): each replaces its stored source
        self.reread_paths: set = set()  # their paths, for the item scores stored after the results
        self._older = False  # the file being read is one an older reader stored (read again)
        self._earlier: list = []  # the stored versions of the file being read, edited since (replaced by it)
        self.edited: dict = {}  # report index -> the stored versions a file edited since replaces
        self.report = IngestReport()
        self.pending: list = []  # (report index, path, sha, adapter name, records), written in one transaction per batch
        self.task_configs: dict = {}  # path -> {task: (config, config_source)}, kept once the file's results are stored
        self.notes_of: dict = {}  # report index -> the notes its adapter made while reading (SourceFile.note)
        self.aliases_done = False  # the alias table was refreshed with the last batch (see flush)
        self.established: dict = {}  # (walk root, suffix) -> the adapter that claimed a file there (see _detect)
        self.batch_sha: set = set()
        self.n_pending = 0
        self.group_shas: list = []
        self.logs: list = []  # (report index, path) of lm-eval per-sample logs: to the samples table, not to adapters
        self.tables: list = []  # (report index, path, sidecar items block) of item-response tables: to the samples table too
        self.runs: list = []  # (report index, HELM run directory or Inspect log): their item scores, after the results
        self.details: list = []  # (report index, path) of lighteval details files: to the samples table too
        self.limit = min(SMALL_FILE_BYTES, _max_file_bytes())  # what _read_walked reads (larger: checked and read as before)
        # Held until the first batch is written, or released once reading has taken READ_HOLD_SECONDS.
        self.release_at = time.perf_counter() + READ_HOLD_SECONDS

    def release_if_held_long(self) -> None:
        if self.release_at and time.perf_counter() > self.release_at:
            self.store.release()
            self.release_at = 0.0

    def read(self, src, root):
        """``(sha, adapter, records, configs, notes)`` of a file to store, or None when the file is already
        accounted for (unchanged, skipped, or kept for after the results)."""
        from harness_ext.adapters.lighteval_details import details_kind

        from .item_table_read import item_table_spec
        from .samples import is_samples_file

        report, forced = self.report, self.forced
        self._older, self._earlier = False, []
        try:
            # A small regular file the walk listed is checked and read in one go (_read_walked).
            if not ("_regular" in src.__dict__ and ".jsonl" not in src.pathname and _read_walked(src, self.limit)):
                why, size = _check(src.pathname)
                if why is not None:
                    raise IngestError(src.path, why)
                if forced is None and ".jsonl" in src.pathname and not src.is_dir and is_samples_file(src.pathname):
                    report.files.append(None)
                    self.logs.append((len(report.files) - 1, src.path))
                    return None
                if size is not None and size <= SMALL_FILE_BYTES:
                    src.bytes  # one read of a small regular file (checked above) serves sniffing, parsing, hashing
            if forced is None and src.suffix == ".parquet" and not src.is_dir and details_kind(src.path):
                report.files.append(None)  # lighteval's details (or its results file's copy): after the results
                self.details.append((len(report.files) - 1, src.path))
                return None
            if forced is None and src.suffix in _ITEM_SUFFIXES and not src.is_dir:
                if (spec := item_table_spec(src)) is not None:  # an item-response table: stored after the results
                    report.files.append(None)
                    self.tables.append((len(report.files) - 1, src.path, spec or None))
                    return None
            chosen = forced if forced is not None else _detect(src, root, self.adapters, self.established)
            if chosen.name in ("helm_run", "inspect_ai"):  # its per-item scores, if it has them, after the results
                self.runs.append((len(report.files), src.path))  # the run's entry is the next one appended
            sha = sha256_of(src, chosen)
            self.group_shas.append(sha)
            notes = []
            if self.store.has_source(sha) or sha in self.batch_sha:
                older = sha not in self.batch_sha and is_older(self.store, sha, chosen.revision)
                if not (older and self.reread):
                    report.files.append(FileReport(src.pathname, "unchanged", chosen.name, older_reader=older))
                    return None
                self._older = True
            elif earlier := earlier_readings(self.store, src.pathname, chosen.name, src.options):
                self._earlier = earlier  # the file changed since it was stored: its new reading replaces the earlier
            elif note := other_reading_note(self.store, src.pathname, chosen.name, src.options):
                notes.append(note)
            records, configs = _records_of(src, chosen)
            if self._earlier and (note := kept_beside(self.store, self._earlier, records)):
                notes.append(note)  # another model's results written to a path used before: not a replacement
                self._earlier = []
            return sha, chosen, records, configs, src.take_notes() + notes
        except Exception as exc:  # noqa: BLE001 - whatever reading one file raises fails that file only
            report.files.append(FileReport(_shown(src.path), "skipped", reason=_skip_reason(exc) + self._kept(),
                                           quiet=isinstance(exc, NotResults),
                                           quiet_kind=exc.what if isinstance(exc, NotResults) else ""))
            return None
        finally:
            # The file's bytes and parsed document are not needed once its records are made: freed now,
            # their memory serves the next file (instead of a batch's worth of documents held to the end).
            sd = src.__dict__
            for k in _READ_CACHE:
                sd.pop(k, None)
            sd.pop("notes", None)  # a skipped file's notes: its reason says what matters

    def _kept(self) -> str:
        """What a reason for not storing a file read again adds: its stored rows stay."""
        return KEPT_REASON if self._older else EDITED_KEPT_REASON if self._earlier else ""

    def queue(self, src, sha, chosen, records, configs, notes) -> None:
        if configs:
            self.task_configs[src.pathname] = configs
        self.report.files.append(None)
        if self._older or self._earlier:
            self.replacing.add(len(self.report.files) - 1)
            self.reread_paths.add(str(src.path))
        if self._earlier:
            self.edited[len(self.report.files) - 1] = self._earlier
        if notes:
            self.notes_of[len(self.report.files) - 1] = notes
        self.pending.append((len(self.report.files) - 1, src.pathname, sha, chosen.name, records))
        self.batch_sha.add(sha)
        self.n_pending += len(records)
        # Outside the file's own errors: a batch that cannot be written (the store locked) is not this file's.
        if len(self.pending) >= BATCH_FILES or self.n_pending >= BATCH_RECORDS:
            self.flush()
            self.batch_sha.clear()
            self.n_pending = 0

    def flush(self, final: bool = False) -> None:
        from .columnar import write_columnar
        from .lm_eval_tasks import store_configs

        store, pending = self.store, self.pending
        if not pending:
            return
        # The lock is held only while a batch is written, so `info` and `matrix` get in between batches.
        store.acquire()
        first_id = store._next_source  # this flush's sources are numbered from here (committed_results)
        batched = [_batched(item[4]) and item[0] not in self.replacing for item in pending]
        rows = [item[1:] for item, b in zip(pending, batched) if b]
        # The last batch refreshes the alias table inside its own transaction (one commit and checkpoint,
        # not two) unless sources written after it (as arrays, each in its own transaction) add models.
        hook = _refresh_aliases(store) if final and rows and len(rows) == len(pending) else None
        done = iter(store.ingest_batch(rows, before_commit=hook) if rows else [])
        self.aliases_done = hook is not None
        # Files read again replace their stored sources, all in one transaction, or in halves if one fails
        # (store.reread). Sources given as arrays are written one per transaction (harness_ext.store.columnar).
        again = [(tuple(v[0] for v in self.edited[item[0]]) if item[0] in self.edited else item[2], item[1:],
                  record_names(item[4])) for item in pending if item[0] in self.replacing]
        replaced = iter(replace_sources(store, again, functools.partial(_write_many, store)) if again else [])
        outcomes = [next(done) if b else next(replaced) if item[0] in self.replacing
                    else write_columnar(store, *item[1:]) for item, b in zip(pending, batched)]
        committed = store.committed_results(first_id)
        if self.replacing:
            committed.update(store.con.execute("SELECT sha256, n_results FROM sources WHERE list_contains(?, sha256)",
                                               [[item[2] for item in pending if item[0] in self.replacing]]).fetchall())
        store_configs(store, self._report_written(outcomes, committed))
        pending.clear()
        self.release_at = 0.0  # later batches' reading: released after each write, as below
        if not final:  # the last batch keeps the connection for what follows (aliases, samples)
            store.release()

    def _report_written(self, outcomes, committed) -> list:
        """Fill the batch's report entries; returns the task configs of the files stored."""
        from .db import SourceOutcome

        kept = []
        # Counts come from the committed store, never from what was handed to it.
        for (idx, path, sha, name, _recs), outcome in zip(self.pending, outcomes):
            if outcome.status == "ingested" and sha not in committed:
                outcome = SourceOutcome("skipped", reason="the store did not keep it (not found after the commit)")
            n = committed.get(sha, 0) if outcome.status == "ingested" else 0
            again, earlier = idx in self.replacing, self.edited.pop(idx, None)
            stays = (EDITED_KEPT_REASON if earlier else KEPT_REASON) if again and outcome.status != "ingested" else ""
            replaced = replaced_results(earlier, n) if earlier and outcome.status == "ingested" else None
            self.report.files[idx] = FileReport(str(path), outcome.status, name, n, reason=outcome.reason + stays,
                                                conflicts=outcome.conflicts, n_rounded=outcome.n_rounded,
                                                notes=self.notes_of.pop(idx, []) + outcome.notes, replaced=replaced,
                                                reread=again and not earlier and outcome.status == "ingested")
            if replaced:
                self.report.files[idx].notes.append(replaced_note(replaced))
            configs = self.task_configs.pop(path, None)
            if configs and outcome.status == "ingested":
                kept.append((path, configs))
        return kept

    def locked_error(self, exc, sources):
        from ..errors import StoreLockedError

        report = self.report
        done = {f.path for f in report.files if f is not None and f.status != "skipped"} - {str(p[1]) for p in self.pending}
        left = [src.pathname for src, _, _ in sources if src.pathname not in done]
        shown = listed(left, 20)
        err = StoreLockedError(f"{exc}. Not ingested ({len(left)}; run again, stored files are recognised): {shown}")
        err.files_listed = True
        return err

    def finish(self, group) -> IngestReport:
        """Store what comes after the results (sample logs, item tables, HELM per-instance scores), the aliases
        and the benchmark group."""
        from .identity import case_pairs, split_variants, stored_non_default, stored_variants
        from .item_tables import ingest_walked
        from .samples import ingest_samples

        store, report = self.store, self.report
        if self.logs:
            # After the results, so a log's model is named from its sibling results_*.json as stored.
            done = ingest_samples(store, [p for _, p in self.logs], show_progress=False, reread=self.reread)
            for (idx, _), f in zip(self.logs, done.files):
                report.files[idx] = FileReport(f.path, f.status, SAMPLES_ADAPTER, reason=f.reason, n_samples=f.n_rows,
                                               notes=f.notes, older_reader=f.older_reader, reread=f.reread,
                                               replaced=f.replaced)
        if self.tables or self.runs or self.details:
            ingest_walked(store, report.files, self.tables, self.runs, self.details, reread=self.reread_paths,
                          reread_older=self.reread, keep_reference_rows=self.keep_refs)
        if not self.aliases_done and report.by_status("ingested"):
            _refresh_aliases(store)()
        if report.by_status("ingested"):
            # Precisions (and truncated ids' records); mteb experiments, non-default runs, have their own note.
            non_default = stored_non_default(store)
            report.variants = split_variants({n: p for n, p in stored_variants(store).items() if n not in non_default})
            clashing, every = case_pairs(store)
            if every:
                ids = dict(store.con.execute("SELECT alias, canonical FROM model_aliases").fetchall())
                merged = sum(ids.get(a, a) == ids.get(b, b) for a, b in map(sorted, every))
                report.case_names = (clashing, every, merged)
        if group:
            report.group = (group, store.add_benchmark_group(group, self.group_shas))
        return report


def _write_many(store, items: list) -> list:
    """Write sources ``(path, sha, adapter, records)`` as ingest writes them, numbered in order: those given as
    records in batches, those given as arrays one at a time (store.columnar); their outcomes."""
    from .columnar import write_columnar

    out: list = []
    for batched, group in itertools.groupby(items, key=lambda item: _batched(item[3])):
        group = list(group)
        out += store.ingest_batch(group) if batched else [write_columnar(store, *item) for item in group]
    return out


def _refresh_aliases(store):
    """:func:`harness_ext.store.identity.refresh_aliases` of ``store``, to call (after the results are written)."""
    from .identity import refresh_aliases

    return functools.partial(refresh_aliases, store)


def _records_of(src: SourceFile, chosen) -> tuple:
    """``(records, task configurations or None)`` of a source (:func:`read_source`; lm-eval v0.4 configs popped)."""
    records = read_source(src, chosen)
    if records.__class__ is _read_types()[3]:  # ResultRows
        return records, (_pop_configs()(records.task_metadata()) if records.has_configs else None)
    return records, (_pop_configs()(records) if isinstance(records, list) else None)


@functools.lru_cache(maxsize=None)
def _pop_configs():
    """:func:`harness_ext.store.lm_eval_tasks.pop_configs`, imported on first use (an import statement costs a
    microsecond per file)."""
    from .lm_eval_tasks import pop_configs

    return pop_configs


#: What a SourceFile keeps of a file it read (see SourceFile and the lm-eval adapter's version sniff).
_READ_CACHE = ("bytes", "text", "head", "_json", "_lm_eval_version")


def _batched(records) -> bool:
    """Whether a source's records go into the batch transaction (a list, or ResultRows), not store.columnar."""
    return records.__class__ is list or isinstance(records, (list, _read_types()[3]))


def bundled_data_path() -> Path:
    """The folder of real result files shipped with the package.

    Returns
    -------
    pathlib.Path
        The bundled lm-eval results of Pythia checkpoints (see ``harness_ext/data/PROVENANCE.md``),
        what ``harness-ext ingest --bundled`` reads.
    """
    from importlib.resources import files

    return Path(str(files("harness_ext") / "data" / "pythia-5shot"))
