"""What every ingest path shares about one file: the report of what happened to it, the checks made before it is
read (special files, broken links, names that are not UTF-8, the size limit), hidden names a walk passes over,
and the reason a file is reported skipped.

Results (:mod:`.ingest`), per-sample logs (:mod:`.samples`) and item-response tables (:mod:`.item_tables`)
are ingested by their own loops; they report and refuse files the same way from here.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..errors import IngestError, NotResults
from ..report import plural
from ..safe_input import file_kind
from .rounding import agreed_note

#: Adapter name reported for item-response tables and HELM runs' per-instance scores (:mod:`.item_tables`).
ITEMS_ADAPTER = "item_table"
#: Adapter name reported for lm-eval per-sample logs (stored by :func:`harness_ext.store.samples.ingest_samples`).
SAMPLES_ADAPTER = "lm_eval_samples"
#: What the reason of a file read again (``--reread``) but not stored adds: its older reading stays.
KEPT_REASON = "; what an older reader stored from it is kept as it was"
#: What the reason of an edited file not stored adds: its earlier reading stays.
EDITED_KEPT_REASON = "; what its earlier content stored is kept as it was"


def reading_options(meta_columns=None, column_meta=None, mteb_split: Optional[str] = None,
                    mteb_languages=None, keep_reference_rows: bool = False, models_as_columns: bool = False) -> dict:
    """The reading options adapters take (``ingest --meta-columns`` ...), as ``ingest_paths(options=...)`` reads them.

    Parameters
    ----------
    meta_columns : str or sequence of str, optional
        CSV columns stored as model metadata, never scores (a string is split at commas).
    column_meta : path-like, optional
        A sidecar YAML for every CSV (:mod:`harness_ext.adapters.csv_rules`): read once here, so a bad file is
        refused before any CSV is read.
    mteb_split : str, optional
        The MTEB split to read instead of the first of test, dev, validation.
    mteb_languages : str or sequence of str, optional
        MTEB subsets (languages) to average over.
    keep_reference_rows : bool, default False
        Store a CSV's reference rows ("Random", "Human", "Oracle"), wide or long, as models, not as the dataset's
        chance level and reference scores, and an item table's as a model's item scores, not left out
        (:mod:`harness_ext.adapters.csv_reference`).
    models_as_columns : bool, default False
        Read every CSV/TSV as one row per dataset and one column per model
        (:mod:`harness_ext.adapters.csv_transposed`), as a file's sidecar says with ``models: columns``.

    Returns
    -------
    dict
        Only the options given (an empty dict reads every file as without options).
    """
    def names(value):
        value = value.split(",") if isinstance(value, str) else list(value)
        return [str(c).strip() for c in value if str(c).strip()]

    options: dict = {}
    if meta_columns:
        options["meta_columns"] = names(meta_columns)
    if keep_reference_rows:
        options["keep_reference_rows"] = True
    if models_as_columns:
        options["models_as_columns"] = True
    if mteb_split:
        options["mteb_split"] = str(mteb_split)
    if mteb_languages:
        options["mteb_languages"] = names(mteb_languages)
    if column_meta:
        from harness_ext.adapters.csv_rules import read_sidecar

        read_sidecar(column_meta)
        options["column_meta"] = str(Path(column_meta).resolve())
    return options


def replaced_results(earlier: list, n: int) -> dict:
    """What a result file edited since it was stored replaced (:attr:`FileReport.replaced`): its stored versions
    ``(sha256, n_results, ingested_at)`` (:func:`harness_ext.store.reread.earlier_readings`), and ``n`` results
    now."""
    return {"versions": len(earlier), "sha256": [v[0] for v in earlier], "ingested_at": str(earlier[0][2])[:19],
            "n_results": sum(v[1] for v in earlier), "n_results_now": n}


def _shown(path) -> str:
    """A path for reports: undecodable bytes of a non-UTF-8 name shown as escapes."""
    text = str(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = os.fsencode(path).decode("utf-8", "backslashreplace")
    return text


def replaced_note(replaced: dict) -> str:
    """The note of a file edited since it was stored, whose new reading replaced the earlier one(s)
    (:attr:`FileReport.replaced`)."""
    what = "results" if "n_results" in replaced else "item scores"
    before, after = ((replaced["n_results"], replaced["n_results_now"]) if what == "results" else
                     (replaced["n_samples"], replaced["n_samples_now"]))
    sha = f"sha256 {replaced['sha256'][0][:12]}, " if len(replaced["sha256"]) == 1 else ""
    earlier = (f"{n} earlier versions stored from this path (the first ingested {replaced['ingested_at']})"
               if (n := replaced["versions"]) > 1 else
               f"the earlier version stored from this path ({sha}ingested {replaced['ingested_at']})")
    return f"replaced: the file changed since it was stored; {earlier} replaced ({before} {what} before, {after} now)"


@dataclass
class FileReport:
    path: str
    status: str  # ingested | unchanged | skipped
    adapter: Optional[str] = None
    n_results: int = 0
    reason: str = ""
    conflicts: list = field(default_factory=list)
    #: Cells another file gives with a value agreeing to the decimals the less precise gives (no conflict).
    n_rounded: int = 0
    n_samples: int = 0  # per-sample scores, for an lm-eval samples_<task>_<date>.jsonl log or an item table
    #: Item scores this file gives with another value than a file stored before (both kept; the first is used).
    item_conflicts: int = 0
    #: A skipped file its adapter knows holds no results (:class:`~harness_ext.errors.NotResults`): no warning.
    quiet: bool = False
    #: What the quietly skipped file is (:attr:`~harness_ext.errors.NotResults.what`), for the summary's count.
    quiet_kind: str = ""
    #: What the adapter's heuristics did to the file's data (:meth:`harness_ext.types.SourceFile.note`): columns
    #: stored as aggregates or model metadata, cells left out, each with counts and names.
    notes: list = field(default_factory=list)
    #: Unchanged, but stored by an older revision of its adapter than this one (``ingest --reread`` reads it again).
    older_reader: bool = False
    #: Ingested by ``--reread``: what an older reader stored from it was replaced.
    reread: bool = False
    #: Ingested over an earlier reading of the same path with other content (the file edited since), which it
    #: replaced: ``versions`` (how many were stored), ``sha256`` (their hashes), ``ingested_at`` (the first's),
    #: ``n_results``/``n_samples`` before and ``n_results_now``/``n_samples_now``. None otherwise.
    replaced: Optional[dict] = None


@dataclass
class IngestReport:
    files: list = field(default_factory=list)
    #: ``(group name, benchmarks added to it)`` when ingesting with a group.
    group: Optional[tuple] = None
    #: ``{plain name: [stored names]}`` of the store's models kept apart per precision (see identity.resolve).
    variants: dict = field(default_factory=dict)
    #: ``(clashing, all, merged)``: pairs of the store's names that differ only by case (identity.case_pairs) and how
    #: many of them merged.
    case_names: tuple = ((), (), 0)

    def by_status(self, status: str) -> list:
        return [f for f in self.files if f.status == status]

    @property
    def n_results(self) -> int:
        return sum(f.n_results for f in self.files)

    @property
    def conflicts(self) -> list:
        return [c for f in self.files for c in f.conflicts]

    @property
    def n_item_conflicts(self) -> int:
        """Item scores that differ from another file's score of the same item (both kept; the first is used)."""
        return sum(f.item_conflicts for f in self.files)

    def summary(self) -> str:
        # Files, not readings: an Inspect log is read for its results and for its items, one file all the same.
        ing_p = {f.path for f in self.by_status("ingested")}
        unch_p = {f.path for f in self.by_status("unchanged")} - ing_p
        skip_p = {f.path for f in self.by_status("skipped")} - ing_p - unch_p
        ing, unch, skip = len(ing_p), len(unch_p), len(skip_p)
        logs = [f for f in self.by_status("ingested") if f.adapter == SAMPLES_ADAPTER]
        samples = (f", {plural(sum(f.n_samples for f in logs), 'per-sample score')} from {plural(len(logs), 'sample log')}"
                   if logs else "")
        items = [f for f in self.by_status("ingested") if f.adapter == ITEMS_ADAPTER]
        samples += (f", {plural(sum(f.n_samples for f in items), 'item score')} from {plural(len(items), 'item file')}"
                    if items else "")
        kinds: dict = {}
        for f in self.by_status("skipped"):
            if f.quiet and f.path in skip_p:
                kind = f.quiet_kind or NotResults.what
                kinds[kind] = kinds.get(kind, 0) + 1
        known = f" ({', '.join(f'{n} of them {k}' for k, n in kinds.items())})" if kinds else ""
        # Item scores are counted apart from result cells: a file's item conflicts are in its notes as well.
        item_conflicts = f" and {plural(n, 'conflicting item score')}" if (n := self.n_item_conflicts) else ""
        rounded = f"; {agreed_note(n)}" if (n := sum(f.n_rounded for f in self.files)) else ""
        notes = f"; {plural(n, 'note')} on how files were read" if (n := sum(len(f.notes) for f in self.files)) else ""
        reread = f"; {n} of them read again, replacing what an older reader stored" if (n := self.n_reread) else ""
        reread += (f"; {n} of them changed since stored, replacing their earlier reading" if (n := self.n_replaced)
                   else "")
        older = (f"; {n} of them stored by an older reader: 'harness-ext ingest --reread' reads them again"
                 if (n := self.n_older_reader) else "")
        return (f"{plural(ing, 'file')} ingested ({plural(self.n_results, 'result')}{samples}{reread}), {unch} unchanged "
                f"(already in the store{older}), {skip} skipped{known}, {plural(len(self.conflicts), 'conflicting value')}"
                f"{self._conflict_cells()}{item_conflicts}{rounded}{notes}")

    def _conflict_cells(self) -> str:
        """`` in N cells`` when a cell has several conflicting values (a model listed three times in one file), so
        the count matches the cells ``info`` counts; else ``""``."""
        conflicts = self.conflicts
        cells = len({(c.model, c.dataset, c.metric, c.num_fewshot) for c in conflicts})
        return f" in {plural(cells, 'cell')}" if cells != len(conflicts) else ""

    @property
    def n_older_reader(self) -> int:
        """Files left unchanged that an older revision of their adapter stored (``ingest --reread`` reads them)."""
        return sum(f.older_reader for f in self.files)

    @property
    def n_replaced(self) -> int:
        """Files edited since they were stored, whose new reading replaced the earlier one."""
        return sum(f.replaced is not None for f in self.files if f.status == "ingested")

    @property
    def n_reread(self) -> int:
        """Files read again by ``ingest --reread``, replacing what an older reader stored from them."""
        return sum(f.reread for f in self.files if f.status == "ingested")

    def note_lines(self, limit: int = 50) -> list:
        """The files' notes as lines ``path: note``; a note several files share is one line naming how many.

        A folder of thousands of leaderboard records repeats one note ("2 scores outside [0, 1] left out")
        per file: one line each would bury the rest. At most ``limit`` lines, then how many were left out.
        """
        by_text: dict = {}
        for f in self.files:
            for text in f.notes:
                by_text.setdefault(text, []).append(f.path)
        lines = [f"{paths[0]}: {text}" if len(paths) == 1 else f"{text} ({len(paths)} files, e.g. {paths[0]})"
                 for text, paths in by_text.items()] + ([variant_note(self.variants)] if self.variants else []) + (
                     [case_note(*self.case_names)] if self.case_names[1] else [])
        if len(lines) > limit:
            lines = lines[:limit] + [f"... and {len(lines) - limit} more notes (harness-ext ingest --json lists them all)"]
        return lines

    def skipped_lines(self) -> list:
        """``skipped PATH: reason`` per skipped file (but one its adapter knows holds no results). A file read for its
        results and for its item scores (an Inspect log, a HELM run) whose item scores were refused keeps its stored
        results, so its line says what was skipped: ``skipped the item scores of PATH (its results were stored)``."""
        stored = {f.path for f in self.files if f.status in ("ingested", "unchanged")}
        return [f"skipped the item scores of {f.path} (its results were stored): {f.reason}"
                if f.adapter == ITEMS_ADAPTER and f.path in stored else f"skipped {f.path}: {f.reason}"
                for f in self.by_status("skipped") if not f.quiet]

    def warning_lines(self) -> list:
        """What ``harness-ext ingest`` logs as warnings: each skipped file (but one its adapter knows holds no
        results) with its reason, each conflicting value naming its file, then the readers' notes."""
        return (self.skipped_lines()
                + [f"conflict in {f.path}: {c.text(f.path)}" for f in self.files for c in f.conflicts]
                + self.note_lines())

    def to_dict(self) -> dict:
        """The ``harness-ext ingest --json`` document's ``title``, ``summary`` and ``tables`` (``files``: one
        record per file, as :meth:`to_frame`)."""
        counts = {status: len(self.by_status(status)) for status in ("ingested", "unchanged", "skipped")}
        return {"title": "ingest", "summary": {"text": self.summary(), "n_results": self.n_results, "files": counts,
                                               "n_item_conflicts": self.n_item_conflicts,
                                               "older_reader": self.n_older_reader, "reread": self.n_reread,
                                               "replaced": self.n_replaced, "models_by_precision": self.variants,
                                               "names_differing_by_case": {
                                                   "pairs": len(self.case_names[1]),
                                                   "kept_apart": sorted(map(sorted, self.case_names[0]))}},
                "tables": {"files": self._file_records()}}

    def _file_records(self) -> list:
        """One record per file, as the JSON document's ``files`` table and :meth:`to_frame` give them."""
        return [{"path": f.path, "status": f.status, "adapter": f.adapter, "n_results": f.n_results,
                 "n_samples": f.n_samples, "reason": f.reason, "notes": list(f.notes),
                 "item_conflicts": f.item_conflicts, "older_reader": f.older_reader, "reread": f.reread,
                 "replaced": f.replaced, "conflicts": [str(c) for c in f.conflicts]} for f in self.files]

    def to_frame(self):
        """One row per file: its path, status (ingested, unchanged, skipped), adapter, counts, reason and notes."""
        import pandas as pd

        columns = ["path", "status", "adapter", "n_results", "n_samples", "reason", "notes", "item_conflicts",
                   "older_reader", "reread", "replaced", "conflicts"]
        return pd.DataFrame(self._file_records(), columns=columns)

    def to_json(self, path=None, indent: Optional[int] = 2) -> str:
        """The ``harness-ext ingest --json`` document (``{"command", "title", "summary", "tables", "warnings"}``);
        with ``path``, also written there."""
        from ..report import dumps, envelope

        text = dumps(envelope("ingest", self.to_dict(), self.warning_lines()), indent=indent)
        if path is not None:
            from ..safe_output import write_file

            write_file(path, text)
        return text

    def __str__(self) -> str:
        # print(report): the lines 'harness-ext ingest' prints, not the dataclass repr of every file.
        return "\n".join([self.summary()] + [f"note: {line}" for line in self.note_lines()])


def is_hidden(name: str) -> bool:
    """Whether a directory walk passes over this entry (``.git``, ``.ipynb_checkpoints``, ...).

    Names starting with ``..`` are not hidden: lm-eval writes a run of ``--model_args
    pretrained=../ckpt`` to a directory named ``..__ckpt`` (its sanitised model path).
    """
    return name.startswith(".") and not name.startswith("..")


#: Files larger than this are not read (override with $HARNESS_EXT_MAX_FILE_BYTES).
MAX_FILE_BYTES = 2 * 1024**3


def walk_files(paths, keep, keep_given: bool = False) -> list:
    """The files among ``paths`` whose name ``keep`` (a predicate on a path) accepts, folders walked in sorted order
    with hidden ones passed over; a file given is listed as it is, or only when ``keep`` accepts it (``keep_given``)."""
    out = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not is_hidden(d))
                base = Path(root)
                out.extend(f for f in (base / name for name in sorted(files)) if keep(f))  # each path built once
        elif not keep_given or keep(p):
            out.append(p)
    return out


def file_hash(path: Path):
    """A sha256 object fed the file's bytes in 1 MiB blocks (the digest of reading it whole, without holding it)."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from None
    return h


def check_path(path: Path, explicit: bool) -> Optional[str]:
    """Why ``path`` cannot be read as a source (None if it can): checked before any read.

    Special files (FIFOs, devices, sockets) would block or never end, even when named
    explicitly; symlink loops and dangling links have no content; a name that is not
    valid UTF-8 cannot be recorded as the source; an oversized file would not fit in memory.
    """
    return _check(path)[0]


def _check(path) -> tuple:
    """``(check_path's reason or None, size in bytes or None)`` from one stat."""
    import errno
    import stat

    p = os.fspath(path)
    try:
        (os.fsdecode(p) if isinstance(p, bytes) else p).encode("utf-8")  # str paths carry bad bytes as surrogates
    except UnicodeError:
        return "file name is not valid UTF-8", None
    try:
        st = os.stat(p)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink loop", None
        if exc.errno == errno.ENOENT:
            return ("broken symlink" if os.path.islink(p) else "no such file or directory"), None
        return f"cannot read: {exc.strerror or exc}", None
    mode = st.st_mode
    if stat.S_ISREG(mode):
        limit = _max_file_bytes()
        if st.st_size > limit:
            return f"file is {st.st_size:,} bytes, above the {limit:,}-byte limit ($HARNESS_EXT_MAX_FILE_BYTES)", None
        return None, st.st_size
    if stat.S_ISDIR(mode):
        return None, None
    return f"not a regular file ({file_kind(mode)}): not read", None


def _max_file_bytes() -> int:
    return int(os.environ.get("HARNESS_EXT_MAX_FILE_BYTES") or MAX_FILE_BYTES)


def _skip_reason(exc: BaseException) -> str:
    """The reason a file is reported skipped, for the errors the ingest loop reports per file."""
    if isinstance(exc, IngestError):
        return exc.reason
    if isinstance(exc, MemoryError):
        return "too large to read in memory"
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    if isinstance(exc, OSError):
        return f"cannot read: {exc.strerror or exc}"
    return f"cannot read: {type(exc).__name__}: {exc}"


def variant_note(variants: dict) -> str:
    """The ingest note on the models stored at more than one variant (``{plain name: [stored names]}``): precisions,
    and the records of a truncated id (:func:`harness_ext.types.is_truncated_id`) apart, each counted."""
    from ..types import is_truncated_id

    cut = {p: ns for p, ns in variants.items() if is_truncated_id(p)}
    parts = []
    if len(cut) < len(variants):
        n = len(variants) - len(cut)
        plain, names = next((p, ns) for p, ns in variants.items() if p not in cut)
        parts.append(f"{n} model{'s' * (n != 1)} in the store {'have' if n != 1 else 'has'} results at more than one "
                     f"variant (a precision or a way of running it that their records name): each variant is its own "
                     f"model, e.g. {plain} as {' and '.join(names)}; a model stored at one variant keeps its plain name")
    if cut:
        n, k = len(cut), sum(map(len, cut.values()))
        plain, names = next(iter(cut.items()))
        parts.append(f"{n} model id{'s' * (n != 1)} cut short by {'their' if n != 1 else 'its'} leaderboard "
                     f"({', '.join(cut)}) {'have' if n != 1 else 'has'} records with different scores: each "
                     f"is its own model ({k} in all), named by a digest of its scores, e.g. {' and '.join(names[:2])}")
    return "; ".join(parts)


def case_note(clashing: set, every: set, merged: int) -> str:
    """The ingest note on the store's model names that differ only by case (``every``, pairs): how many of them
    ``merged`` as one model (a hub id ignores case), how many were kept apart because their scores for one result
    differ (``clashing``), and how many for another reason (one source lists both; a user alias file)."""
    n, k = len(every), len(clashing)
    parts = [f"{merged} merged as one model (a hub id ignores case)"] if merged else []
    if clashing:
        a, b = sorted(sorted(p) for p in clashing)[0]
        parts.append(f"{k} kept apart as two models because their scores for one result differ (two submissions), "
                     f"e.g. {a} and {b}; 'harness-ext models --unmatched' lists them for review")
    if n - merged - k > 0:
        parts.append(f"{n - merged - k} kept apart because one source lists both or an alias file says so")
    return f"{n} pair{'s' * (n != 1)} of model names differ only by case: {', '.join(parts)}"
