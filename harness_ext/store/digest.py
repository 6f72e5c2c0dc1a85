"""The matrix fingerprint: SHA-256 of the labels and of the values rounded to 12 digits.

:func:`fingerprint_arrays` hashes a finished matrix; :class:`RowHasher` computes the same digest a row
range at a time in a thread of its own, so that :mod:`harness_ext.store.pivot` can hash the rows of a
matrix already filled while the store is still being read (hashlib and numpy's rounding release the GIL).

Target: store to matrix within 2x of reading the same matrix from Parquet (``benchmarks/bench_matrix.py`` measures it).
"""

from __future__ import annotations

import hashlib
import queue
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

import numpy as np

from ..arrays import pooled_array

#: Bytes of values rounded per block (a block and its buffer stay in cache).
BLOCK_BYTES = 1 << 19


def _header(index, columns, h=None):
    """``h`` (default a new SHA-256) fed the labels: each list joined by ``\x1f``, ended by ``\x1e``."""
    h = hashlib.sha256() if h is None else h
    for labels in (index, columns):
        h.update(_joined(labels))
        h.update(b"\x1e")
    return h


def _joined(labels):
    """``"\x1f".join(labels)`` in UTF-8: a pyarrow string array (or an Index over one), as the store's row labels
    come, joined in Arrow (the same bytes, no Python string per label)."""
    if not isinstance(labels, list):
        arr = _arrow_strings(labels)
        if arr is not None:
            import pyarrow as pa
            import pyarrow.compute as pc

            whole = pa.ListArray.from_arrays(pa.array([0, len(arr)], type=pa.int32()), arr)
            return pc.binary_join(whole, pa.scalar("\x1f", type=arr.type))[0].as_buffer() or b""
    try:  # str labels join as they are: 5x faster than through str()
        return "\x1f".join(labels).encode()
    except TypeError:
        return "\x1f".join(map(str, labels)).encode()


def _arrow_strings(labels):
    """``labels`` as a pyarrow string array without nulls, or None (not Arrow-backed strings)."""
    import sys

    pa = sys.modules.get("pyarrow")  # labels can only be Arrow's if pyarrow is loaded
    if pa is None:
        return None
    if not isinstance(labels, (pa.Array, pa.ChunkedArray)):
        if str(getattr(getattr(labels, "dtype", None), "storage", "")) != "pyarrow":
            return None
        labels = pa.array(labels)  # an Index over an Arrow string array: no copy
    if isinstance(labels, pa.ChunkedArray):
        labels = labels.combine_chunks()
    if getattr(pa.types, "is_string_view", lambda t: False)(labels.type):
        labels = labels.cast(pa.large_string())
    if labels.null_count or not (pa.types.is_string(labels.type) or pa.types.is_large_string(labels.type)):
        return None
    return labels


def _round(B: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``np.round(B, 12)`` into ``out`` by the operations it performs (multiply by 1e12, rint, divide): its bytes."""
    np.multiply(B, 1e12, out=out)
    np.rint(out, out=out)
    return np.divide(out, 1e12, out=out)


def _update(h, X: np.ndarray, start: int, stop: int, buf: np.ndarray) -> None:
    """Feed rows ``[start, stop)`` of ``X`` to ``h``, rounded (:func:`_round`) a block of ``len(buf)`` rows at a
    time into ``buf``."""
    step = max(1, len(buf))  # an empty matrix has an empty buffer
    with np.errstate(over="ignore"):  # |x| > 1.8e296 rounds to inf, as np.round does (without its warning)
        for s in range(start, stop, step):
            B = X[s:min(s + step, stop)]
            h.update(_round(B, buf[:len(B)]))


def _buffer(X: np.ndarray, block_bytes: int) -> np.ndarray:
    step = max(1, block_bytes // (8 * max(1, X.shape[1])))
    return np.empty((min(step, X.shape[0]), X.shape[1]))


def fingerprint_arrays(X: np.ndarray, index: list, columns: list, block_bytes: int = BLOCK_BYTES) -> str:
    """SHA-256 of a matrix ``X`` with sorted labels ``index`` and ``columns`` (its rows in order), values rounded
    to 12 digits: :func:`harness_ext.store.matrix.fingerprint` without the sorting."""
    h = _header(index, columns)
    X = np.ascontiguousarray(X, dtype=float)
    _update(h, X, 0, X.shape[0], _buffer(X, block_bytes))
    return h.hexdigest()


class RowHasher:
    """:func:`fingerprint_arrays` of ``X`` (C-contiguous float64) computed in a thread of its own while ``X`` is
    still being filled: :meth:`advance` hands over the rows below a bound once the caller will write them no more.

    The digest is the same bytes whatever the ranges handed over, and wherever they are rounded. A caller that
    finds it wrote a row already handed over calls :meth:`cancel` (the digest would be of stale values).

    SHA-256 is one sequential stream, so the hash thread is the critical path of a store -> matrix read:
    :meth:`advance` with ``here=True`` rounds the rows in the caller's thread (which is waiting on the store
    most of the time) into a few reused 1 MB buffers, and the hash thread only hashes them. The caller then waits
    while every buffer is still to hash: it can never run more than a few blocks ahead, so the read it does
    (and the store's threads) leave the hash a core.

    Example
    -------
    >>> h = RowHasher(X, index, columns)
    >>> h.advance(1000)        # rows 0..999 are final
    >>> h.result()             # the remaining rows, then the hex digest
    """

    #: Rounding buffers of ``advance(here=True)``: how far (in blocks of twice ``block_bytes``) the caller may
    #: run ahead of the hash.
    BUFFERS = 4

    def __init__(self, X: np.ndarray, index: list, columns: list, block_bytes: int = BLOCK_BYTES):
        self.X, self.done = X, 0
        self._h = hashlib.sha256()
        self._buf = _buffer(X, block_bytes)
        # A rounding block of the caller's is two of the thread's (1 MB: about a DuckDB batch of values, so one
        # hand-over per batch): same-process A/B at 50,000 x 200, 24 quiet rounds, best 78 -> 69 ms.
        self._block = max(1, 2 * block_bytes // 8)
        self._free: Optional[queue.SimpleQueue] = None  # the rounding buffers not being hashed (made when first used)
        self._error: Optional[BaseException] = None
        self._pool: Optional[ThreadPoolExecutor] = ThreadPoolExecutor(1, thread_name_prefix="harness-ext-hash")
        # The labels' bytes in the hash thread too: joining tens of thousands of them is a millisecond the
        # caller spends preparing the read instead.
        self._pool.submit(self._run, _header, index, columns, self._h)

    def _run(self, fn, *args) -> None:
        """``fn(*args)`` in the hash thread, unless an earlier task failed (its error is kept for :meth:`result`)."""
        if self._error is None:
            try:
                fn(*args)
            except BaseException as e:  # re-raised by result()
                self._error = e

    def _hash_block(self, buf: np.ndarray, n: int) -> None:
        try:
            self._run(self._h.update, buf[:n])
        finally:  # the buffer is free again whatever happened (the caller may be waiting for it)
            self._free.put(buf)

    def advance(self, rows: int, here: bool = False) -> None:
        """Rows below ``rows`` are final: hash them (in order, after the rows handed over before).

        ``here``: round them in this thread, a block at a time, waiting while every rounding buffer is still
        to hash; otherwise the hash thread rounds them (the caller goes on at once).
        """
        rows = min(int(rows), self.X.shape[0])
        if self._pool is None or rows <= self.done:
            return
        # One worker runs its queue in order, so the ranges reach the hash in row order.
        if not here:
            self._pool.submit(self._run, _update, self._h, self.X, self.done, rows, self._buf)
        else:
            if self._free is None:
                self._free = queue.SimpleQueue()
                for _ in range(self.BUFFERS):
                    self._free.put(pooled_array((self._block,)))
            flat, n_cols = self.X.reshape(-1), self.X.shape[1]
            stop = rows * n_cols
            with np.errstate(over="ignore"):  # as in _update
                for s in range(self.done * n_cols, stop, self._block):
                    buf = self._free.get()
                    B = flat[s:min(s + self._block, stop)]
                    _round(B, buf[:len(B)])
                    self._pool.submit(self._hash_block, buf, len(B))
        self.done = rows

    def result(self) -> str:
        """The digest, once every row is hashed (waits for the worker)."""
        self.advance(self.X.shape[0])
        self._pool.shutdown(wait=True)
        self._pool = None
        if self._error is not None:
            raise self._error
        return self._h.hexdigest()

    def cancel(self) -> None:
        """Stop: rows not started are dropped, the one being hashed is waited for (it reads ``X``)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
