"""BenchPress's completion of a new model's row, as a point candidate at the frontier.

BenchPress (Zeng & Papailiopoulos, 2026) predicts a new model by adding its row to the matrix and completing the
matrix again (:func:`~harness_ext.methods.engine.benchpress.complete_units`: a per-column logit, z-scores, a rank-2
model with a bias per model and per dataset, one small ridge penalty on every coefficient). Its model bias is
nearly unpenalised, so a model whose subset cells lie above every fitted model's is placed above them rather than
drawn toward their mean, and on the shared matrices' frontier splits its completion predicts the strongest models'
aggregate better than the engine on some matrices and worse on others. As a candidate of the frontier folds
(:mod:`~harness_ext.methods.engine.frontier`; listed in its ``OPTIONAL_CANDIDATES``, off by default) it is blended
with the engine's prediction at the weight their held-out aggregate error chooses, when it is the candidate they
choose: on the shared matrices' frontier splits the folds ranked it behind another candidate on every matrix
(``docs/frontier.md``).

Only the point completion runs (one ensemble of bias ALS fits per frontier fold; no risk model, no holdout folds):
its cost is that of one BenchPress completion of the training matrix per fold.

References
----------
Zeng & Papailiopoulos, "You Don't Need to Run Every Eval", arXiv 2606.24020 (2026), §4.2 (logit bias ALS; a new
model added as a row, ``predict.py --add-model``).
"""

from __future__ import annotations

import numpy as np

from . import benchpress as bp

__all__ = ["SCALE", "benchpress_fill"]

#: Whose cells standardise each dataset before the completion: ``"fit"``, the fitted models' only, or ``"all"``, the
#: fitted and the new models' together (BenchPress's ``--add-model``, which refits its z-scores on the grown matrix).
SCALE = "fit"


def benchpress_fill(X_fit, X_in, scale=None) -> np.ndarray:
    """BenchPress's completion of the rows ``X_in`` (n, d) added to the fitted models' ``X_fit`` (m, d).

    Both in the project's units (proportions stay proportions), NaN where not run. The rows are added together and
    the whole matrix completed with BenchPress's published settings (fixed seeds: the same inputs give the same
    completion). ``scale`` (default :data:`SCALE`): ``"fit"`` z-scores each dataset on the fitted models' cells
    alone. With ``"all"`` (BenchPress's own), frontier models' subset cells widen their datasets' spread and not the
    others' (they have no cells there), so in z-scores their strength on the subset looks smaller than the same
    strength on the datasets they did not run, and the completion shrinks toward the fitted models. Returns the rows'
    completion (n, d), every cell, observed ones as the fit reproduces them.
    """
    X_fit = np.asarray(X_fit, dtype=float)
    X_in = np.atleast_2d(np.asarray(X_in, dtype=float))
    if X_in.shape[0] == 0:
        return X_in.copy()
    S = np.vstack([X_fit, X_in])
    factor = bp.points_factor(S)
    t = bp.Transform.fit((X_fit if (SCALE if scale is None else scale) == "fit" else S) * factor)
    return (t.inverse(bp.bias_als(t.transform(S * factor))) / factor)[X_fit.shape[0]:]
