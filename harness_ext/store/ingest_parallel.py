"""Reading a large walk's JSON files in two processes: half of them in a forked worker.

Reading, parsing, hashing and turning a small result file into rows is about two thirds of an
ingest of thousands of files, and Python runs it on one core (``json.loads`` holds the GIL). For a
walk of at least :data:`MIN_FILES` JSON files, :func:`start` forks one worker that prepares the
second half of the sources -- the checks and one read of :func:`~harness_ext.store.ingest._read_walked`,
format detection, content hash, :func:`~harness_ext.store.ingest.read_source` (validation included) --
while this process prepares the first half as before; the worker sends its results back pickled
(shared row descriptions once per batch) and this process writes everything, in walk order.

The outcome is the serial one, file by file: :meth:`Ahead.take` hands a prepared file to the ingest
loop only when the serial loop would have read it the same way, and otherwise (an ambiguous format,
a file the serial detection would have offered to another adapter first, anything unusual, a worker
that failed) the loop reads the file itself. Content already in the store when the worker started is
hashed but not read again. Linux only (``fork``), and only when a core is free (the one-minute load
average at most the cores less one); ``HARNESS_EXT_INGEST_WORKERS=1`` turns it off, ``=2`` on whatever
the load.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from typing import Optional

from ..errors import IngestError

#: Fewer JSON files than this are read in this process alone (a fork and the pickles cost more).
MIN_FILES = 512

#: Workers started by this process (benchmarks report whether an ingest had one).
started = 0

#: How the worker chose a file's adapter: the walk's established one, full detection, or ``--adapter``.
_PREV, _FULL, _FORCED, _SKIP = range(4)


def _enabled(n_json: int) -> bool:
    workers = (os.environ.get("HARNESS_EXT_INGEST_WORKERS") or "").strip()
    if workers in ("0", "1"):
        return False
    if not sys.platform.startswith("linux") or n_json < MIN_FILES:
        return False
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    # A second core that is busy anyway buys nothing: measured at a load of 7 on 2 cores, the worker
    # made the ingest slower (its pickles and copy-on-write faults cost CPU that no idle core absorbs).
    return cores >= 2 and (bool(workers) or os.getloadavg()[0] <= cores - 1)


def _eligible(src) -> bool:
    """A regular JSON file the walk listed (the worker reads nothing else: no CSV through pyarrow after a fork)."""
    d = src.__dict__
    return "_regular" in d and d.get("suffix") == ".json" and not src.options


def start(sources: list, adapters: dict, forced, known_shas, limit: int) -> Optional["Ahead"]:
    """Fork a worker preparing the second half of ``sources`` (see the module docstring), or None."""
    idx = [i for i, (src, _, _) in enumerate(sources) if _eligible(src)]
    if not _enabled(len(idx)):
        return None
    share = idx[len(idx) // 2:]
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        return None
    if pid == 0:  # the worker: prepare its share, send it, and leave without running any exit handler
        code = 1
        try:
            os.close(r)
            out = [_prepare(sources[i][0], sources[i][2], adapters, forced, known_shas, limit, est)
                   for est in ({},) for i in share]
            data = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(w, "wb") as fh:
                fh.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    global started
    started += 1
    return Ahead(pid, r, share)


def _prepare(src, root, adapters: dict, forced, known_shas, limit: int, established: dict):
    """One file's ``(how, adapter name, sha256, records, task configs, reason)``, or None (left to the loop)."""
    try:
        return _prepare_read(src, root, adapters, forced, known_shas, limit, established)
    finally:
        _free(src)


def _prepare_read(src, root, adapters, forced, known_shas, limit, established):
    from .ingest import _claims, _read_walked, _records_of, _skip_reason, detect_adapter, sha256_of

    try:
        if not _read_walked(src, limit):
            return None
        if forced is not None:
            how, chosen = _FORCED, forced
        else:
            key = (root, src.suffix, src.is_dir)
            prev = established.get(key) if root is not None else None
            if prev is not None and _safe(prev, src):
                how, chosen = _PREV, prev
            else:
                claims = _claims(src, adapters)
                if len(claims) > 1 and root is not None:
                    return None  # ambiguous: the serial loop's choice depends on files the worker has not seen
                how, chosen = _FULL, detect_adapter(src, adapters) if len(claims) != 1 else claims[0]
                if root is not None:
                    established[key] = chosen
    except (IngestError, OSError, MemoryError) as exc:
        return _SKIP, None, None, None, None, _skip_reason(exc)
    try:
        sha = sha256_of(src, chosen)
    except (IngestError, OSError, MemoryError) as exc:  # a sidecar it could not read: detected, not hashed
        return how, chosen.name, None, None, None, _skip_reason(exc)
    if sha in known_shas:
        return how, chosen.name, sha, None, None, None
    try:
        records, configs = _records_of(src, chosen)
    except (IngestError, OSError, MemoryError) as exc:
        return how, chosen.name, sha, None, None, _skip_reason(exc)
    return how, chosen.name, sha, records, configs, None


def _free(src) -> None:
    """Drop what ``src`` read (its bytes and parsed document): the next file reuses the memory."""
    from .ingest import _READ_CACHE

    d = src.__dict__
    for k in _READ_CACHE:
        d.pop(k, None)


def _safe(adapter, src) -> bool:
    from .ingest import _safe_can_handle

    return _safe_can_handle(adapter, src)


class Ahead:
    """The worker's results, handed to the ingest loop file by file (:meth:`take`)."""

    def __init__(self, pid: int, fd: int, share: list):
        self.pid, self.fd = pid, fd
        self.first = share[0] if share else None
        self.share = share
        self.got: Optional[dict] = None

    def _receive(self) -> dict:
        out: dict = {}
        try:
            with os.fdopen(self.fd, "rb") as fh:
                self.fd = None
                data = fh.read()
            _, status = os.waitpid(self.pid, 0)
            self.pid = None
            if status == 0 and data:
                out = dict(zip(self.share, pickle.loads(data)))
        except Exception:  # noqa: BLE001 - whatever went wrong in the worker, the loop reads its files itself
            out = {}
        return out

    def take(self, i: int, src, root, adapters: dict, forced, established: dict):
        """``(adapter, sha256, records, task configs, reason)`` of source ``i`` as the serial loop would have
        read it, or None when the loop is to read it itself; raises the IngestError of a file it cannot read."""
        if self.first is None or i < self.first:
            return None
        if self.got is None:
            self.got = self._receive()
        e = self.got.pop(i, None)
        if e is None:
            return None
        how, name, sha, records, configs, reason = e
        if how == _SKIP:
            raise IngestError(src.path, reason)
        chosen = forced if how == _FORCED else adapters.get(name)
        if chosen is None or chosen.name != name:
            return None
        if how != _FORCED and root is not None:
            key = (root, src.suffix, src.is_dir)
            if how == _PREV and established.get(key) is not chosen:
                return None  # the serial loop would have offered it to another adapter first
            established[key] = chosen  # as the serial detection leaves it (the only claimant)
        if sha is None:
            raise IngestError(src.path, reason)
        return chosen, sha, records, configs, reason

    def close(self) -> None:
        """Stop the worker if it is still running (an ingest that ended early) and reap it."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except OSError:
                pass
            self.pid = None
