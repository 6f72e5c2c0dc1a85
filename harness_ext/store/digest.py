"""The matrix fingerprint: SHA-256 of the labels and of the values rounded to 12 digits.

:func:`fingerprint_arrays` hashes a finished matrix; :class:`RowHasher` computes the same digest a row
range at a time in a thread of its own, so that :mod:`harness_ext.store.pivot` can hash the rows of a
matrix already filled while the store is still being read (hashlib and numpy's rounding release the GIL).

References
----------
Issue 17 item 2 (store to matrix within 2x of reading the same matrix from Parquet).
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

import numpy as np

#: Bytes of values rounded per block (a block and its buffer stay in cache).
BLOCK_BYTES = 1 << 19


def _header(index, columns):
    h = hashlib.sha256()
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


def _update(h, X: np.ndarray, start: int, stop: int, buf: np.ndarray) -> None:
    """Feed rows ``[start, stop)`` of ``X`` to ``h``, rounded a block of ``len(buf)`` rows at a time into ``buf``
    by the operations ``np.round(B, 12)`` performs (multiply by 1e12, rint, divide): ``np.round``'s bytes."""
    step = max(1, len(buf))  # an empty matrix has an empty buffer
    with np.errstate(over="ignore"):  # |x| > 1.8e296 rounds to inf, as np.round does (without its warning)
        for s in range(start, stop, step):
            B = X[s:min(s + step, stop)]
            out = buf[:len(B)]
            np.multiply(B, 1e12, out=out)
            np.rint(out, out=out)
            np.divide(out, 1e12, out=out)
            h.update(out)


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

    The digest is the same bytes whatever the ranges handed over. A caller that finds it wrote a row already
    handed over calls :meth:`cancel` (the digest would be of stale values).

    Example
    -------
    >>> h = RowHasher(X, index, columns)
    >>> h.advance(1000)        # rows 0..999 are final
    >>> h.result()             # the remaining rows, then the hex digest
    """

    def __init__(self, X: np.ndarray, index: list, columns: list, block_bytes: int = BLOCK_BYTES):
        self.X, self.done = X, 0
        self._h = _header(index, columns)
        self._buf = _buffer(X, block_bytes)
        self._pool: Optional[ThreadPoolExecutor] = ThreadPoolExecutor(1, thread_name_prefix="harness-ext-hash")
        self._last = None

    def advance(self, rows: int) -> None:
        """Rows below ``rows`` are final: hash them (in order, after the rows handed over before)."""
        rows = min(int(rows), self.X.shape[0])
        if self._pool is not None and rows > self.done:
            # One worker runs its queue in order, so the ranges reach the hash in row order.
            self._last = self._pool.submit(_update, self._h, self.X, self.done, rows, self._buf)
            self.done = rows

    def result(self) -> str:
        """The digest, once every row is hashed (waits for the worker)."""
        self.advance(self.X.shape[0])
        self._pool.shutdown(wait=True)
        self._pool = None
        if self._last is not None:
            self._last.result()  # re-raises the worker's error, if any
        return self._h.hexdigest()

    def cancel(self) -> None:
        """Stop: rows not started are dropped, the one being hashed is waited for (it reads ``X``)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
