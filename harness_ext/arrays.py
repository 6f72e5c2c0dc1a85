"""Large numpy arrays whose memory comes from Arrow's pool, for the store's matrices and the kernels' temporaries.

glibc maps every large numpy array afresh and returns it to the system on free, so a process that
builds such arrays again and again pays the kernel for zeroing each page on first touch (about 2 us a
4 kB page on the 2-core VM). Arrow's pool (mimalloc; pyarrow is a dependency) keeps freed pages mapped,
as the arrays ``pandas.read_parquet`` returns are. Only the memory's origin differs: the values do not.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np


def pooled_array(shape: tuple, dtype=np.float64, fill: Optional[float] = None) -> np.ndarray:
    """An array of ``shape`` and ``dtype`` in Arrow's memory pool: uninitialised, or filled with ``fill``."""
    import pyarrow as pa

    n = math.prod(shape)
    A = np.frombuffer(pa.allocate_buffer(n * np.dtype(dtype).itemsize), dtype=dtype, count=n).reshape(shape)
    if fill is not None:
        A.fill(fill)
    return A
