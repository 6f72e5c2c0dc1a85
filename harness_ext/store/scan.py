"""A query's result as column arrays, a batch at a time, fetched by a thread of its own.

:func:`batches` feeds :mod:`harness_ext.store.pivot`'s scatter into the matrix: DuckDB's Arrow batches,
each column a numpy array, read ahead in a thread while the caller scatters the one before.

Target: store to matrix within 2x of reading the same matrix from Parquet (``benchmarks/bench_matrix.py`` measures it).
"""

from __future__ import annotations

from typing import Optional

import numpy as np


def relation(con, sql: str, params=None):
    """``con.sql(sql, params=params)``, after closing an earlier result of ``con`` left open, as ``execute`` does.

    DuckDB 2 refuses a relation (and ``register``) while a result of the connection is unfinished, and warns that
    Arrow from ``execute`` copies the rows once more; the relation streams them. Closing a read's result changes
    nothing stored.
    """
    if hasattr(con, "abort"):  # DuckDB >= 2; before, con.sql replaced an open result itself
        con.abort()
    return con.sql(sql, params=params)


def arrow_table(con, sql: str, params=None):
    """Every row of ``sql`` on ``con`` as one Arrow table (through :func:`relation`)."""
    rel = relation(con, sql, params)
    return rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()


def batches(con, sql: str, params: list, rows: int = 1 << 20, threads: Optional[int] = None):
    """Column arrays of a query's result, at most ``rows`` rows at a time when pyarrow is there (bounded memory).

    With pyarrow a thread fetches the next batches while the caller scatters this one (DuckDB and numpy's
    indexing release the GIL, so the two overlap). DuckDB hands over a row group (122,880 rows) at a
    time; eight may wait, about 16 MB for three columns. Reading in the caller's thread costs a little less
    CPU, but on a loaded machine more wall time: the fetching thread keeps the scan going while the caller
    waits for a core.

    ``threads``: the connection's thread count (``current_setting('threads')``), given to run the scan in
    DuckDB's calling thread alone (``SET threads = 1`` for the scan, then back to ``threads``; a setting of
    the database, so other connections to it in this process scan with one thread meanwhile). For a plain
    scan of a few columns DuckDB's parallel streaming costs more CPU than it saves: 10M results, same
    process, interleaved: 31 ms CPU in one thread with ``rows`` a row group, 50 ms with two (ordering the
    batches of two threads, their locks), and the caller and the fingerprint's hash thread want the other core.
    """
    try:
        import pyarrow  # noqa: F401

        arrow = True
    except ImportError:
        arrow = False
    reader = restore = None  # restore: the thread setting to put back, once it was changed
    if arrow:
        if threads is not None and threads != 1:
            con.execute("SET threads = 1")
            restore = int(threads)
        try:
            rel = relation(con, sql, params)
            # DuckDB >= 1.4 names it to_arrow_reader; before, fetch_record_batch.
            reader = rel.to_arrow_reader(rows) if hasattr(rel, "to_arrow_reader") else rel.fetch_record_batch(rows)
        except BaseException as e:
            if restore is not None:
                con.execute(f"SET threads = {restore}")
                restore = None
            if not isinstance(e, ImportError):  # DuckDB refusing pyarrow: the numpy batch below
                raise
    if reader is None:  # one batch of numpy arrays
        yield {k: np.asarray(v) for k, v in con.execute(sql, params).fetchnumpy().items()}
        return
    import queue
    import threading

    ahead: queue.Queue = queue.Queue(maxsize=8)
    stop = threading.Event()

    def fetch():
        try:
            for b in reader:
                if stop.is_set():
                    break
                ahead.put({name: b.column(i).to_numpy(zero_copy_only=False) for i, name in enumerate(b.schema.names)})
            ahead.put(None)
        except BaseException as e:  # re-raised in the caller's thread
            ahead.put(e)
        finally:
            if stop.is_set() and hasattr(reader, "close"):
                reader.close()

    thread = threading.Thread(target=fetch, name="harness-ext-fetch", daemon=True)
    thread.start()
    try:
        while (item := ahead.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:  # the caller stopped early or failed: let the fetcher see stop (it may wait on a full queue) and end
        stop.set()
        while thread.is_alive():
            try:
                ahead.get(timeout=0.05)
            except queue.Empty:
                pass
        thread.join()
        if restore is not None:
            con.execute(f"SET threads = {restore}")
