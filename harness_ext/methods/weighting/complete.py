"""A sparse matrix completed by the product's default predictor, so that every weighting analysis runs on it.

Clustering, the permutation and silhouette tests, the most-informative order and the per-draw reference
need every cell; a renormalised mean over whatever each model ran ranks a model with one good score
first. Rather than cut the matrix to a dense block, ``harness-ext weights`` fills the missing cells with
the predictor ``reduce`` and ``predict`` use (:data:`~harness_ext.methods.reduction.rules.DEFAULT_PREDICTOR`),
under the same rules: at least :data:`~harness_ext.methods.reduction.rules.MIN_MODELS` models, at least one
dataset with results from two models, and datasets with fewer are kept and predicted (said in ``notes``). Columns
that no model links to the others (:func:`linked_column_groups`: two leaderboards with no model in common) are refused,
as nothing observed relates them.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np
import pandas as pd

from ...errors import MethodError


#: Share of predicted cells past which the completed matrix is said to be mostly predictions.
MOSTLY_PREDICTED = 0.5


def linked_column_groups(observed: np.ndarray) -> np.ndarray:
    """The group of each column of a models x columns mask of observed cells: two columns are in one group when a
    chain of models, each with results on two of its columns, links them (the connected components of the columns'
    co-observation graph; groups numbered in the order of their first column).

    A predictor learns how one column relates to another only from models that ran both (or a chain of them):
    between two groups nothing is observed, so a prediction there is each column's level and no more (two
    leaderboards whose model names share nothing are two groups). Not :func:`~harness_ext.methods.pounce.masked.column_groups`,
    which labels columns by metric."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    obs = csr_matrix(np.asarray(observed, dtype=np.int64))
    return connected_components(obs.T @ obs, directed=False)[1]


class Completion(NamedTuple):
    """A completed matrix and what was predicted in it."""

    #: models x columns, observed cells unchanged, missing cells predicted.
    frame: pd.DataFrame
    #: Registered name of the predictor that filled the cells.
    predictor: str
    n_predicted: int
    n_cells: int
    #: What the caller should say besides the count (thin datasets).
    notes: tuple

    @property
    def message(self) -> str:
        """``"N of M cells predicted by <predictor>"``."""
        return f"{self.n_predicted} of {self.n_cells} cells predicted by {self.predictor}"

    def summary(self) -> dict:
        """The ``completion`` entry of ``summary.json``."""
        return {"predictor": self.predictor, "n_predicted": self.n_predicted, "n_cells": self.n_cells,
                "notes": list(self.notes)}


def complete_matrix(df: pd.DataFrame, predictor: Optional[str] = None, random_state: int = 0) -> Completion:
    """Fill the missing cells of ``df`` with a registered predictor (default: ``reduce``'s).

    Parameters
    ----------
    df : pandas.DataFrame
        models x columns with NaN for cells not run.
    predictor : str, optional
        Registered predictor name; ``None`` is :data:`~harness_ext.methods.reduction.rules.DEFAULT_PREDICTOR`.
    random_state : int
        Seed of the predictor (its cross-validation folds and sampler), so the same matrix and
        seed give the same completed matrix.

    Returns
    -------
    Completion
        With ``n_predicted == 0`` (and ``df`` itself) when nothing is missing.

    Raises
    ------
    MethodError
        Fewer models than ``reduce`` needs to predict, no dataset with results from two models, or columns in
        groups no model links (:func:`linked_column_groups`); the message gives the matrix's counts and what is needed.

    References
    ----------
    Ailem et al. §3.3, §5 (the analyses that need every cell); the completion is ``reduce``'s own
    (:mod:`harness_ext.methods.engine.completion`), so a sparse matrix is never cut silently to a dense block.
    """
    from ...plugin_manager import get_registration
    from ..reduction.rules import DEFAULT_PREDICTOR, MIN_MODELS, thin_columns
    from ..pounce import make_predictor

    name = get_registration("predictors", predictor or DEFAULT_PREDICTOR).name
    X = df.to_numpy(dtype=float)
    missing = np.isnan(X)
    n_missing = int(missing.sum())
    if not n_missing:
        return Completion(df, name, 0, X.size, ())
    m, k = X.shape
    # One line with the counts a user needs to see how far the matrix is from what the predictor needs.
    shape = (f"{m} model{'' if m == 1 else 's'} x {k} column{'' if k == 1 else 's'}, {X.size - n_missing} of "
             f"{X.size} cells observed")
    if m < MIN_MODELS:
        raise MethodError(f"the matrix has {shape}: at least {MIN_MODELS} models are needed to predict its "
                          f"{n_missing} missing cells")
    thin, thin_note = thin_columns(df.columns, (~missing).sum(axis=0), "columns")
    if len(thin) == X.shape[1]:
        raise MethodError(f"the matrix has {shape}, and no column has results from two models: at least one is "
                          f"needed to predict its {n_missing} missing cells")
    groups = linked_column_groups(~missing)
    if groups.max() > 0:
        sizes = np.bincount(groups)
        raise MethodError(f"the matrix has {shape}, and its columns fall into {len(sizes)} groups that no model links "
                          f"(of {', '.join(map(str, sizes[:6]))}{' ...' if len(sizes) > 6 else ''} columns; no model "
                          "has results in two of them): a score in another group than the model's cannot be predicted "
                          "without models that ran columns of both (select columns the same models ran)")
    est = make_predictor(name)
    if "random_state" in est.get_params():
        est.set_params(random_state=int(random_state))
    filled = np.asarray(est.fit(X).mean_, dtype=float)
    if np.isnan(filled[missing]).any():
        raise MethodError(f"{name} left {int(np.isnan(filled[missing]).sum())} missing cells unpredicted")
    # Observed cells keep their exact values whatever the predictor passes through.
    frame = pd.DataFrame(np.where(missing, filled, X), index=df.index, columns=df.columns)
    frame.attrs = dict(df.attrs)
    notes = (thin_note,) if thin_note else ()  # reduce's rule: kept and predicted, and said
    if n_missing > MOSTLY_PREDICTED * X.size:
        notes += (f"{n_missing / X.size:.0%} of the cells are predicted, not observed: the analyses describe "
                  f"{name}'s predictions more than the scores run (--dense, --models or --datasets narrow the matrix "
                  "to what was run; --no-complete keeps the missing cells missing)",)
    return Completion(frame, name, n_missing, int(X.size), notes)
