"""A subset dataset that is the mean of the benchmark's other datasets: likely the benchmark's overall score.

A leaderboard's overall column that ingest could not name as an aggregate (a file saved under a name that does not
name the board, a column named for the board's release) is stored as a dataset, with a hint at ingest. ``reduce``
then often chooses it first, since it predicts the full-benchmark score best of all, and the reduced benchmark asks
for a run of everything. This check is the reduction's second look: on the matrix as ``reduce`` sees it
(normalised, so the ingest hint's rounding rule does not apply), a subset column whose values the plain mean of the
other columns explains all but exactly. Said, never acted on: the user declares the column an aggregate.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ...report import listed

__all__ = ["MEAN_LIKE_UNEXPLAINED", "mean_like_columns", "mean_like_note"]

#: ``1 - r**2`` of a column against the plain mean of the others at or below which it is said to be their mean.
#: LiveBench's overall score against its six categories: 5e-8; the most mean-like real dataset of the shared
#: leaderboards (AIR-Bench's categories, benchbench's LiveBench, HydroX, LVBench): 0.020.
MEAN_LIKE_UNEXPLAINED = 1e-4
#: Complete rows (models with every column) the check needs, and the other columns the mean is taken over.
MIN_ROWS, MIN_OTHERS = 10, 3


def mean_like_columns(X: np.ndarray, columns) -> list:
    """``[(column, unexplained, rows)]`` of ``columns`` (indices into ``X``'s columns) whose values the plain
    mean of all other columns explains all but exactly (``1 - r**2 <= MEAN_LIKE_UNEXPLAINED``) on the rows that
    have every column (at least :data:`MIN_ROWS`, at least :data:`MIN_OTHERS` other columns)."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] - 1 < MIN_OTHERS:
        return []
    rows = np.isfinite(X).all(axis=1)
    if rows.sum() < MIN_ROWS:
        return []
    D = X[rows]
    others = (D.sum(axis=1, keepdims=True) - D) / (D.shape[1] - 1)
    out = []
    for j in columns:
        a, b = D[:, j], others[:, j]
        if np.ptp(a) == 0 or np.ptp(b) == 0:
            continue
        r = np.corrcoef(a, b)[0, 1]
        if 1 - r * r <= MEAN_LIKE_UNEXPLAINED:
            out.append((j, float(1 - r * r), int(rows.sum())))
    return out


def mean_like_note(df, subset) -> Optional[str]:
    """The warning when a ``subset`` column of the matrix ``df`` is all but exactly the mean of its other columns
    (:func:`mean_like_columns`), else None."""
    names = list(df.columns)
    found = mean_like_columns(df.to_numpy(dtype=float), [names.index(c) for c in subset if c in names])
    if not found:
        return None
    cols = [str(names[j]) for j, _, _ in found]
    n = found[0][2]
    one = len(cols) == 1
    return (f"subset dataset{'' if one else 's'} {listed(cols, 5)} {'is' if one else 'are'} all but exactly the mean "
            f"of the other {len(names) - 1} datasets on the {n} models that have them all (1 - r^2 "
            f"{', '.join(f'{u:.1e}' for _, u, _ in found)}): likely the benchmark's overall score, which needs every "
            "dataset run; if so, declare it kind: aggregate (ingest --column-meta, or the sidecar) and reduce again")
