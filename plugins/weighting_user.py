"""The ``user`` weighting scheme: weights read from a JSON or CSV file, renormalised.

The file is read by :func:`harness_ext.methods.weighting.schemes.read_weight_file`.

References
----------
Ailem et al. §3.3 (weighting the columns of a benchmark).
"""

from __future__ import annotations

import json
from typing import Optional, Sequence

from harness_ext.base import BaseWeighting, check_matrix
from harness_ext.errors import MethodError


class UserWeights(BaseWeighting):
    """Weights given by the user in a file, renormalised to sum to 1.

    Parameters
    ----------
    path : str
        JSON ``{column: weight}`` (or the ``--emit-weights`` output) or a CSV
        with columns (name, weight); see :func:`harness_ext.methods.weighting.schemes.read_weight_file`.
    columns : list of str, optional
        Column names of the matrix, in order. Can instead be given to ``fit``
        as ``fit(X, columns=...)`` (which wins), or taken from ``X.columns``
        when ``X`` is a DataFrame.

    Attributes
    ----------
    weights_ : ndarray
    ignored_ : list of str
        Names in the file that are not columns of the matrix (not used).
    source_ : dict or None
        ``{"scheme", "params"}`` when the file was written by ``harness-ext
        weights --emit-weights``, so a manifest can say which scheme made them.

    Notes
    -----
    Every column of the matrix must appear in the file (a forgotten column
    should not silently get weight 0; give it 0 explicitly). Entries for other
    columns are ignored and listed in ``ignored_``.
    """

    def __init__(self, path: Optional[str] = None, columns: Optional[Sequence[str]] = None):
        self.path = path
        self.columns = columns

    @staticmethod
    def _contract_params() -> dict:
        """Parameters for harness_ext.testing's plugin contract, which fits a 24 x 8 array with no column names."""
        import tempfile

        names = [f"c{j}" for j in range(8)]
        fd, path = tempfile.mkstemp(suffix=".json", prefix="harness-ext-user-weights-")
        with open(fd, "w") as fh:
            json.dump({n: float(j + 1) for j, n in enumerate(names)}, fh)
        return {"path": path, "columns": names}

    def fit(self, X, columns: Optional[Sequence[str]] = None):
        if columns is None:
            columns = self.columns
        if columns is None and hasattr(X, "columns"):
            columns = list(X.columns)
        X = check_matrix(X)
        if self.path is None:
            raise MethodError("the 'user' weighting needs path=<weights .json or .csv>")
        if columns is None:
            raise MethodError("the 'user' weighting needs the column names: fit(X, columns=...) or columns=[...]")
        columns = [str(c) for c in columns]
        if len(columns) != X.shape[1]:
            raise MethodError(f"{len(columns)} column names for a matrix with {X.shape[1]} columns")
        from harness_ext.methods.weighting.schemes import read_weight_file, weights_for_columns

        given, self.source_ = read_weight_file(self.path)
        self.weights_, self.ignored_ = weights_for_columns(given, columns, self.path)
        return self
