"""Waiting for another process's lock on the store file (DuckDB allows one writer process).

:func:`_connect` retries ``duckdb.connect`` while the file is locked, telling a listener
(:func:`set_lock_listener`; the command line prints) and giving up after the timeout
(:func:`set_lock_timeout`, ``$HARNESS_EXT_LOCK_TIMEOUT``). Split out of :mod:`harness_ext.store.db`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Callable, Optional

import duckdb

from ..errors import StoreError, StoreLockedError

log = logging.getLogger("harness_ext.store.db")

#: Start of every error about a file that is not a store (tests and users grep for it).
NOT_A_STORE = "not a harness-ext store (or corrupt)"


#: Seconds a command waits for another process's lock on the store before failing.
DEFAULT_LOCK_TIMEOUT = 300.0
LOCK_TIMEOUT_ENV = "HARNESS_EXT_LOCK_TIMEOUT"
_lock_timeout_override: Optional[float] = None


def set_lock_timeout(seconds: Optional[float]) -> None:
    """Set the lock wait for this process (the CLI's ``--lock-timeout``)."""
    global _lock_timeout_override
    _lock_timeout_override = None if seconds is None else max(0.0, float(seconds))


def lock_timeout_default() -> float:
    if _lock_timeout_override is not None:
        return _lock_timeout_override
    try:
        return max(0.0, float(os.environ.get(LOCK_TIMEOUT_ENV, DEFAULT_LOCK_TIMEOUT)))
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT


#: Told about waits for another process's lock: ``listener(event, path, waited, timeout)`` with event
#: ``"wait"`` (once, first), ``"tick"`` (every 10 s), ``"done"`` (got the lock) or ``"timeout"``.
#: None: the wait is logged (``harness_ext.store.db``). The command line shows it on stderr.
_lock_listener: Optional[Callable[[str, str, float, float], None]] = None


def set_lock_listener(listener: Optional[Callable[[str, str, float, float], None]]) -> None:
    """Route lock-wait events to ``listener`` (None: to :mod:`logging`); the store itself never prints."""
    global _lock_listener
    _lock_listener = listener


def _lock_event(event: str, path: str, waited: float, timeout: float) -> None:
    if _lock_listener is not None:
        _lock_listener(event, path, waited, timeout)
    elif event == "wait":
        log.warning("store %s is locked by another process; waiting up to %g s (--lock-timeout) ...", path, timeout)
    elif event == "done":
        log.info("store %s: lock acquired after %.1f s", path, waited)


def _connect(path: str, read_only: bool, lock_timeout: Optional[float]) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect``, waiting (telling :func:`set_lock_listener`'s listener) while another process
    holds the file lock; errors that are not the lock are the file's."""
    import time

    timeout = lock_timeout_default() if lock_timeout is None else float(lock_timeout)
    start = time.monotonic()
    delay, told, last_tick = 0.05, False, start
    while True:
        try:
            con = duckdb.connect(path, read_only=read_only)
            if told:
                _lock_event("done", path, time.monotonic() - start, timeout)
            return con
        except duckdb.IOException as exc:
            msg = str(exc)
            if "lock" not in msg.lower():
                if any(w in msg.lower() for w in ("read-only file system", "permission denied")):
                    # The file or its folder cannot be opened as asked: not a corrupt store.
                    what = "read" if read_only else "write"
                    raise StoreError(f"cannot {what} the store at {path}: {msg.splitlines()[0]}") from exc
                raise StoreError(f"{NOT_A_STORE}: {path} ({msg.splitlines()[0]})") from exc
            waited = time.monotonic() - start
            if waited >= timeout:
                if told:
                    _lock_event("timeout", path, waited, timeout)
                raise StoreLockedError(
                    f"store {path} is locked by another process (another 'harness-ext' command is writing to it) "
                    f"and stayed locked for {waited:.0f} s (--lock-timeout {timeout:g}): nothing was written"
                ) from exc
            if not told:
                _lock_event("wait", path, waited, timeout)
                told = True
            elif time.monotonic() - last_tick >= 10:
                _lock_event("tick", path, waited, timeout)
                last_tick = time.monotonic()
            time.sleep(min(delay, max(0.0, timeout - waited)))
            delay = min(delay * 2, 1.0)
        except duckdb.Error as exc:
            raise StoreError(f"{NOT_A_STORE}: {path} ({str(exc).splitlines()[0]})") from exc


def _check_writable(p: Path) -> None:
    """Refuse, before DuckDB opens it, a store that could not be written: DuckDB would open it and fail at the first
    commit (its write-ahead log goes beside the file) with an error that invalidates the connection.

    Raises
    ------
    StoreError
        If the folder or the existing file is not writable (a read-only file system, permissions).
    """
    folder = p.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        raise StoreError(f"cannot write the store at {p}: read-only folder ({folder}); pass --db a path in a "
                         "writable folder")
    if os.path.lexists(p) and not os.access(p, os.W_OK):
        raise StoreError(f"cannot write the store at {p}: the file is read-only")
