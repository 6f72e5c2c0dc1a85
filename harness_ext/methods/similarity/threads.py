"""The worker thread, BLAS thread control and pooled scratch arrays shared by the similarity kernels.

Kernels split their work into tasks that write disjoint parts of the result, so
the schedule (one thread or two, which thread runs which task) never changes an
answer; these helpers decide the schedule and keep BLAS from oversubscribing
the cores beneath two Python threads. :func:`_pooled` gives the kernels' large
temporaries pages that are already mapped.
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np

from harness_ext.arrays import pooled_array

_POOL = None
_POOL_LOCK = None


def _each_task(k: int, fn, threaded: bool) -> None:
    """``fn(t)`` for ``t`` in ``range(k)``, with the module's worker thread helping when ``threaded``.

    The calling thread and one worker pull tasks in order from a shared
    counter until none is left. The caller never just waits: on a busy
    machine, where the worker may not be scheduled for milliseconds, the
    caller runs every task itself, and then only waits for the one task the
    worker has started, if any (a worker that has not started is cancelled).
    On an idle machine both cores work. Each task writes its own part of the
    result, so the schedule cannot change the answer. Exceptions propagate
    (the other thread stops pulling). The worker is created once per process
    (a fresh pool per call costs about 0.5 ms, as much as a whole 838 x 57 L1
    matrix) and again after a fork, whose child has no worker threads.
    """
    import os
    import threading

    if not threaded or _cores() < 2 or k < 2:
        for t in range(k):
            fn(t)
        return
    global _POOL, _POOL_LOCK
    if _POOL_LOCK is None:
        _POOL_LOCK = threading.Lock()
    with _POOL_LOCK:
        if _POOL is None or _POOL[0] != os.getpid():
            from concurrent.futures import ThreadPoolExecutor

            _POOL = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="harness-ext-similarity"))
        pool = _POOL[1]
    lock = threading.Lock()
    nxt = [0]

    def drain() -> None:
        while True:
            with lock:
                t = nxt[0]
                nxt[0] = t + 1
            if t >= k:
                return
            fn(t)

    helper = pool.submit(drain)
    try:
        drain()
    finally:
        with lock:
            nxt[0] = k  # after an error here: the worker takes nothing more
        if not helper.cancel():
            helper.result()


@functools.lru_cache(maxsize=None)
def _cores() -> int:
    """``os.cpu_count()``, looked up once (a call costs about 25 us, a tenth of an 838 x 57 Pearson matrix)."""
    import os

    return os.cpu_count() or 1


def _idle_core() -> bool:
    """Whether the machine seems to have a core to spare: 1-minute load average below ``cores - 0.5``.

    For kernels of a few milliseconds, a second thread pays only when it is
    scheduled at once: at load 7 on the 2-core machine, splitting a 1,000 x 200
    Gram matrix over two threads took 2.9 ms (best of 40) against 1.6 ms on
    one, as the hand-offs wait for a time slice. Long kernels thread
    regardless (two runnable threads also get two shares of a busy
    machine). Only the schedule depends on this, never the result.
    """
    import os

    cores = _cores()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average (Windows): assume a busy machine, one thread
        return False
    return cores >= 2 and load < cores - 0.5


_BLAS_LIBRARIES = None


def _blas_libraries() -> list:
    """threadpoolctl's controllers of the BLAS libraries loaded in this process (looked up once: about 5 ms)."""
    global _BLAS_LIBRARIES
    if _BLAS_LIBRARIES is None:
        from threadpoolctl import ThreadpoolController

        _BLAS_LIBRARIES = ThreadpoolController().select(user_api="blas").lib_controllers
    return _BLAS_LIBRARIES


def _set_blas_threads(libs: list, counts: list, to=None) -> None:
    """Each library of ``libs`` whose count in ``counts`` is not 1 set to ``to`` threads (``None``: back to its
    count). Libraries already on one thread are left alone, both ways: one ``set_num_threads`` call costs a
    few microseconds, and a library on one thread needs none."""
    for lib, k in zip(libs, counts):
        if k != 1:
            lib.set_num_threads(k if to is None else to)


class _OneBlasThread:
    """Context manager: the BLAS libraries on one thread, their thread counts restored on exit (even on error).

    Setting the libraries' counts directly costs about 10 us a call where
    :func:`harness_ext.base.limit_threads` (threadpoolctl's limiter object) costs 20-50 us, a quarter of an
    838 x 57 Pearson matrix. Used around small products and around BLAS calls made from the worker threads
    of :func:`_each_task` (two BLAS threads under each of two workers would oversubscribe the two cores).
    """

    #: The libraries' thread counts outside the outermost active section (``None`` outside any): what
    #: :func:`_outer_blas_threads` gives back to one call inside it.
    outer = None

    def __enter__(self):
        self.libs = _blas_libraries()
        self.before = [lib.get_num_threads() for lib in self.libs]
        self.outermost = _OneBlasThread.outer is None
        if self.outermost:
            _OneBlasThread.outer = self.before
        _set_blas_threads(self.libs, self.before, 1)
        return self

    def __exit__(self, *exc):
        _set_blas_threads(self.libs, self.before)
        if self.outermost:
            _OneBlasThread.outer = None
        return False


@contextlib.contextmanager
def _outer_blas_threads():
    """Inside a :class:`_OneBlasThread` section, the BLAS libraries back on the thread counts they had outside
    it until the block ends (then one thread again); outside any section, nothing changes."""
    outer = _OneBlasThread.outer
    if outer is None:
        yield
        return
    libs = _blas_libraries()
    _set_blas_threads(libs, outer)
    try:
        yield
    finally:
        _set_blas_threads(libs, outer, 1)


#: Scratch arrays of at least this many bytes come from Arrow's memory pool (:func:`_pooled`).
_POOL_BYTES = 1 << 17


def _pooled(shape, dtype=float):
    """An uninitialised array for a kernel's large temporary: from Arrow's memory pool from ``_POOL_BYTES`` on.

    When a kernel holds several large numpy arrays at once, glibc maps each afresh and returns it to the
    system on free, and the kernel zeroes every page on first touch: about 2 us a 4 kB page on the 2-core
    VM, 0.9 ms for one 1,000 x 200 float64 array, as long as the product it feeds (masked cosine at
    1,000 x 200 took 974 page faults a call). Arrow's pool (mimalloc; pyarrow is a dependency, and pandas
    has imported it) keeps freed pages mapped, as the store's matrices do: both come from
    :func:`harness_ext.arrays.pooled_array`. Only the memory's origin differs: the values are the same.
    """
    if math.prod(shape) * np.dtype(dtype).itemsize < _POOL_BYTES:
        return np.empty(shape, dtype)
    return pooled_array(shape, dtype)


_SYRK_INVARIANT = []


def _syrk_thread_invariant() -> bool:
    """Whether the BLAS in use sums a symmetric update the same way on one thread and on its own threads, checked
    once per process on the shapes where it differed elsewhere: if not, :func:`_syrk` stays on one thread, so the
    answer never follows the load (some OpenBLAS builds split the sum differently on two threads)."""
    if not _SYRK_INVARIANT:
        rng = np.random.default_rng(5)
        same = True
        with _OneBlasThread():
            for n, q in ((838, 57), (1000, 200), (777, 333), (150, 13)):
                A = rng.random((n, q)) * 10 - 3
                one = A.T @ A
                with _outer_blas_threads():
                    two = A.T @ A
                same = same and bool(np.array_equal(one, two))
        _SYRK_INVARIANT.append(same)
    return _SYRK_INVARIANT[0]
