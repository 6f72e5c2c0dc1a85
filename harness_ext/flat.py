"""Slices whose observed values are all equal: no spread, exactly, whatever a sum's rounding says.

A mean taken as ``sum / n`` of ``n`` copies of a value such as 0.1 or 0.7 is that value give or take a
unit of rounding, and then so is every deviation from it: numpy gives the standard deviation of a
constant column as about 1e-16 for most values and column lengths, and as 0 for others, depending
on the order the sum ran in (which follows the array's memory layout, C or Fortran, so a pandas
release that hands the same matrix over in the other layout changes it). A test ``sd > 0`` then takes
rounding for spread, and a division by that sd turns a difference of one unit of rounding into a
z-score of order 1 and any real difference into one of order 1e16. The comparisons of observed values
here are exact (no sum), so a constant slice is found in either layout.
"""

from __future__ import annotations

import numpy as np


def flat_slices(X, axis: int = 0) -> tuple:
    """Which slices of ``X`` along ``axis`` have at least one observed (non-NaN) value and all of them equal.

    Parameters
    ----------
    X : array_like
        Scores; NaN marks a missing cell. A 1-D array with ``axis=0`` is one slice.
    axis : int
        The axis reduced over (0: one answer per column).

    Returns
    -------
    (flat, value)
        Boolean array (a numpy bool for a 1-D ``X``): the slice's observed values are all equal; and that
        value where ``flat`` (elsewhere the slice's largest observed value, ``-inf`` for one with none).
        Use ``np.where(flat, 0.0, sd)`` for the spread and ``np.where(flat, value, mean)`` for the centre,
        so a constant slice's own deviations are exactly 0.
    """
    X = np.asarray(X, dtype=float)
    obs = ~np.isnan(X)
    lo = np.min(np.where(obs, X, np.inf), axis=axis)
    hi = np.max(np.where(obs, X, -np.inf), axis=axis)
    return (obs.sum(axis=axis) > 0) & (lo == hi), hi
