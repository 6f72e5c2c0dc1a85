"""The sources an ingest reads: the walk that finds them, the adapter that claims each, its content hash and its
validated records.

Everything here happens before the store is touched, one source at a time: each file (or directory-unit, such as a
HELM run directory) is offered to every adapter's ``can_handle``, exactly one must claim it, and its records are read
and validated completely, so a bad file fails alone with its reason. :mod:`harness_ext.store.ingest` runs the sources
through it and writes the valid ones in batches.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import json
import operator
import os
from pathlib import Path
from typing import Iterable, Iterator

from ..errors import IngestError
from ..safe_input import read_bytes
from ..types import _NAMES_OK, SourceFile
from .ingest_checks import _all_plain, _check_text_of, _may_hold_surrogates, _plain
from .ingest_files import check_path, is_hidden
from .ingest_read import PAGE_SUFFIXES, _bytes_alone, page_file, unclaimed_reason

#: Files with these suffixes are offered to adapters when walking a directory;
#: others (README.md, LICENSE, ...) are passed over silently.
CANDIDATE_SUFFIXES = (".json", ".jsonl", ".csv", ".tsv", ".eval", ".parquet")


def sha256_of(src: SourceFile, adapter) -> str:
    """Content hash of a source; for directory adapters, of its files' names and bytes."""
    d = src.__dict__
    if _bytes_alone(src):
        # The common case, on the bytes read once for sniffing and parsing (ingest reads small files whole).
        h = hashlib.sha256(d["bytes"])
        h.update(_adapter_tag(adapter.name))
        return h.hexdigest()
    h = hashlib.sha256()
    if src.is_dir:
        for p in sorted(q for q in src.path.rglob("*") if q.is_file()):
            h.update(str(p.relative_to(src.path)).encode())
            h.update(b"\0")
            h.update(p.read_bytes())
    elif "bytes" in d or not os.path.isfile(src.pathname):
        h.update(src.bytes)
    else:  # a large file, streamed (the same hash)
        with open(src.pathname, "rb") as fh:
            for block in iter(lambda: fh.read(16 << 20), b""):
                h.update(block)
    if not src.is_dir:
        # A sidecar describing the file's columns and the reading options change what the file means.
        for side in src.sidecars():
            h.update(b"\0sidecar\0" + read_bytes(side, "column metadata", error=IngestError))
    if src.options:
        h.update(b"\0options=" + json.dumps(src.options, sort_keys=True, default=str).encode())
        if src.options.get("column_meta"):
            h.update(read_bytes(src.options["column_meta"], "column metadata", error=IngestError))
    h.update(_adapter_tag(adapter.name))
    return h.hexdigest()


@functools.lru_cache(maxsize=256)
def _adapter_tag(name: str) -> bytes:
    """What ends every content hash: the adapter that read the source."""
    return f"\0adapter={name}".encode()


def detect_adapter(src: SourceFile, adapters: dict):
    """The one adapter that claims ``src``.

    Raises
    ------
    IngestError
        If no adapter or several adapters claim it.
    """
    claims = [a for a in adapters.values() if a.directory == src.is_dir and _safe_can_handle(a, src)]
    if not claims:
        kind = "directory" if src.is_dir else "file"
        raise IngestError(src.path, f"not a recognised result {kind}{unclaimed_reason(src)} (no adapter claims it; tried "
                                    f"{', '.join(adapters)})")
    if len(claims) > 1:
        names = ", ".join(a.name for a in claims)
        # A third-party adapter claiming too much makes every file it claims ambiguous: say where it comes from.
        whose = "".join(f"; {a.name} comes from the plugin {a.source} (--disable-plugin {a.distribution} switches "
                        "it off)" for a in claims if getattr(a, "_builtin", True) is False)
        raise IngestError(src.path, f"ambiguous format: adapters {names} all claim it; choose one with --adapter{whose}")
    return claims[0]


def _detect(src: SourceFile, root, adapters: dict, established: dict):
    """:func:`detect_adapter`, once per format in a directory walk.

    A walked directory is one collection: the first file of each suffix is offered to every
    adapter (exactly one must claim it), later ones first to the adapter that claimed it, whose
    own ``can_handle`` verifies each file (a file it declines goes through full detection). Offering
    each of 4,574 leaderboard files to a dozen adapters cost more than reading them. Explicitly
    named files are always fully detected.
    """
    if root is None:
        return detect_adapter(src, adapters)
    key = (root, src.suffix, src.is_dir)
    prev = established.get(key)
    if prev is not None and _safe_can_handle(prev, src):
        return prev
    chosen = established[key] = detect_adapter(src, adapters)
    return chosen


def _safe_can_handle(adapter, src) -> bool:
    try:
        return bool(adapter.can_handle(src))
    except Exception:  # noqa: BLE001 - can_handle must not raise; a faulty sniff means "not mine"
        return False


def iter_sources(paths: Iterable, adapters: dict) -> Iterator[tuple]:
    """Yield ``(SourceFile, explicit)`` for every candidate under ``paths``.

    A directory that a directory adapter claims is one source; otherwise it is
    walked in sorted order (so ingestion order, and thus which of two
    conflicting values is used, is deterministic).
    """
    for src, explicit, _root in _walk(paths, adapters):
        yield src, explicit


def _walk(paths: Iterable, adapters: dict) -> Iterator[tuple]:
    """:func:`iter_sources` with the walk each source came from: ``(SourceFile, explicit, root)``.

    One ``os.scandir`` per directory serves the walk, the directory adapters' checks (they see the
    listing as ``SourceFile.children``) and the sidecar look-ups (``siblings``): no stat per file.
    ``root`` is the directory argument the file was found under (None for a file named explicitly).
    """
    dir_adapters = [a for a in adapters.values() if a.directory]
    for raw in paths:
        path = Path(raw)
        if check_path(path, True) is not None or not path.is_dir():
            yield SourceFile(path), True, None  # the ingest loop reports why it cannot be read
            continue
        root = os.fspath(path)
        stack = [root]
        while stack:
            d = stack.pop()
            try:
                with os.scandir(d) as it:
                    entries = sorted(it, key=_entry_name)
            except OSError:
                yield SourceFile(d), True, None
                continue
            subdirs, files, regular = [], [], []
            for e in entries:
                name = e.name
                if name[0] == "." and is_hidden(name):
                    continue
                if e.is_dir(follow_symlinks=False):
                    subdirs.append(e.path)
                elif e.is_file(follow_symlinks=False):  # the listing's file type: no stat
                    files.append(e)
                    regular.append(True)
                elif not _is_dir(e):
                    files.append(e)
                    regular.append(False)
            names = frozenset(map(_entry_name, entries))
            if dir_adapters:
                src = SourceFile.listed(d, children=frozenset(map(_entry_name, files)))
                claimed = False
                for a in dir_adapters:
                    if _safe_can_handle(a, src):
                        claimed = True
                        break
                if claimed:
                    yield src, d == root, root
                    continue
            if not files:
                stack.extend(reversed(subdirs))
                continue
            # No sidecar (``<name>.meta.yaml``) in the directory: none to look up per file (see sha256_of).
            no_sidecars = not any(map(_is_sidecar_name, names))
            for e, reg in zip(files, regular):
                name = e.name
                i = name.rfind(".")
                if i <= 0:
                    continue
                suffix = name[i:].lower() if name[0] != "." else os.path.splitext(name)[1].lower()  # os.path's rule
                # A .md or .html file only when it holds a table to read: README.md, notes and pages stay passed over.
                if suffix in CANDIDATE_SUFFIXES or (suffix in PAGE_SUFFIXES and reg and page_file(suffix, e)):
                    # Files, and also FIFOs, sockets and broken links with a result-file name: those
                    # are reported as skipped with their reason rather than passed over in silence.
                    src = SourceFile.listed(e.path, suffix, names)  # suffix: pathlib's, lower-cased (SourceFile.suffix)
                    sd = src.__dict__
                    if no_sidecars:
                        sd["_no_sidecars"] = True
                    if reg:
                        sd["_regular"] = True  # a regular file by the listing: no stat (see _read_walked)
                    yield src, False, root
            stack.extend(reversed(subdirs))


_is_sidecar_name = operator.methodcaller("endswith", (".meta.yaml", ".meta.yml"))


def read_source(src: SourceFile, adapter) -> list:
    """Read and validate every record of one source; raise IngestError on any problem.

    Whatever an adapter does wrong (raises any exception, yields something that is not a
    ResultRecord, runs out of memory) fails only this source, with the adapter named. Text the
    store cannot keep (a lone surrogate from a ``"\\ud800"`` escape) in any name, metadata value
    or task configuration fails it too, before anything of it is written
    (:func:`harness_ext.store.ingest_checks._check_text_of`).
    """
    records = _read_validated(src, adapter)
    data = src.__dict__.get("bytes")
    if data is None or _may_hold_surrogates(data) or not _bytes_alone(src):  # see _check_text_of
        _check_text_of(src, records)
    return records


def _no_results(src: SourceFile, adapter) -> str:
    """The reason a file read to nothing is skipped, with what the adapter noted it left out (the notes of a
    skipped file are not printed: the reason is)."""
    notes = src.__dict__.get("notes") or []
    return f"no results found (read as {adapter.name})" + "".join(f"; {n}" for n in notes)


def _read_validated(src: SourceFile, adapter):
    """:func:`read_source` but the metadata text check."""
    ColumnarResults, ResultRecord, ColumnarCells, ResultRows = _read_types()
    try:
        records = adapter.read(src)
        if records.__class__ is ResultRows:  # columns with shared kinds (store.rows): checked a column at a time
            if not len(records):
                raise IngestError(src.path, _no_results(src, adapter))
            rows = records.validate(src.pathname)
            if rows is None:
                return records
            records = rows  # something the per-record checks must see (or mend): as records
        if isinstance(records, (ColumnarResults, ColumnarCells)):  # a large table as arrays (store.columnar)
            if not len(records):
                raise IngestError(src.path, _no_results(src, adapter))
            records.validate(src.path)
            return records
        records = list(records)
    except IngestError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, UnicodeDecodeError, ArithmeticError,
            RecursionError, csv.Error) as exc:  # float(10**400), deeply nested JSON, a stray \r in a CSV field
        raise IngestError(src.path, f"cannot read as {adapter.name}: {type(exc).__name__}: {exc}") from exc
    except OSError as exc:
        raise IngestError(src.path, f"cannot read: {exc.strerror or exc}") from exc
    except MemoryError:
        raise IngestError(src.path, f"too large to read in memory (adapter {adapter.name})") from None
    except Exception as exc:  # noqa: BLE001 - a faulty adapter plugin fails its own file only
        raise IngestError(src.path, f"adapter {_where(adapter)} failed: {type(exc).__name__}: {exc}") from exc
    if not records:
        raise IngestError(src.path, _no_results(src, adapter))
    if len(records) >= 64 and _all_plain(records):  # below that, the per-record loop costs less
        return records
    ok = _NAMES_OK
    for rec in records:
        if rec.__class__ is not ResultRecord:
            if not isinstance(rec, ResultRecord):
                raise IngestError(src.path, f"adapter {_where(adapter)} yielded {type(rec).__name__}, not ResultRecord")
        # What ResultRecord.validate accepts without a change, tested in one expression: names checked
        # before, a finite float score, plain optional numbers. Anything else gets the full check.
        elif ((m := rec.model).__class__ is str and m in ok and (b := rec.benchmark).__class__ is str and b in ok
              and (d := rec.dataset).__class__ is str and d in ok and (mt := rec.metric).__class__ is str and mt in ok
              and (v := rec.value).__class__ is float and v - v == 0.0
              and ((t := rec.task) is None or t.__class__ is str and t in ok)
              and ((bs := rec.baseline_source) is None or bs.__class__ is str and bs in ok)
              and ((k := rec.num_fewshot) is None or k.__class__ is int and 0 <= k < 2**31)
              and ((n := rec.n_samples) is None or n.__class__ is int and 0 <= n < 2**63)
              and _plain(rec.stderr) and _plain(rec.random_baseline) and _plain(rec.min_score)
              and _plain(rec.max_score)):
            continue
        rec.validate(src.path)
    return records


def _where(adapter) -> str:
    """An adapter as error messages name it: its name, and the plugin it came from."""
    return f"{adapter.name} [{adapter.source}]" if getattr(adapter, "source", None) else adapter.name


@functools.lru_cache(maxsize=None)
def _read_types() -> tuple:
    """The result containers read_source tells apart, imported on first use (once, not per file)."""
    from ..types import ColumnarResults, ResultRecord
    from .columnar import ColumnarCells
    from .rows import ResultRows

    return ColumnarResults, ResultRecord, ColumnarCells, ResultRows


#: A scandir entry's name (attrgetter: no Python step per entry).
_entry_name = operator.attrgetter("name")


def _is_dir(entry) -> bool:
    try:
        return entry.is_dir()
    except OSError:  # a symlink loop: check_path gives the reason
        return False
