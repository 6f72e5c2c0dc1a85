"""How much of the training models' spread on the full-benchmark score the subset predicts, out of sample.

A reduction fitted on models that differ little beyond sampling noise predicts every new model near their mean: the
subset shows nothing the fit could carry to a stronger model. The bundled Pythia checkpoints' weakest half is such a
population (MMLU near chance: 96% of their spread on the chosen subset is binomial sampling noise), and its frontier
folds, drawn from the same models, cannot show it. The share is one minus the expected (cross-validated, nested)
squared error over the variance of the training models' full-benchmark score, both on the manifest's weights and
its normalised scale.

References
----------
Hastie, Tibshirani and Friedman (2009), *The Elements of Statistical Learning*, §7.10 (cross-validated error); the
share is the cross-validated R squared of the full-benchmark score.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ...flat import flat_slices
from ..engine.frontier_unidentified import LOW_SHARE
from .predict import embedded_values

#: Fewer complete training models than this: no share (the spread itself is not measured well enough).
MIN_MODELS = 10


def explained_share(manifest: dict) -> Optional[float]:
    """The share of the training models' spread on the normalised full-benchmark score that the subset predicts out
    of sample: ``1 - expected_error.aggregate_rmse ** 2 / var``, ``var`` the training models' variance of the
    manifest-weighted score over the models with every dataset. None without an embedded training matrix, with fewer
    than :data:`MIN_MODELS` complete models, or without spread; can be negative (the subset predicts worse than the
    training models' mean).

    Examples
    --------
    >>> explained_share({"training_matrix": {"values": [[0.1 * i, 0.1 * i] for i in range(12)]},
    ...                  "datasets": [{"weight": 0.5}, {"weight": 0.5}],
    ...                  "prediction": {"expected_error": {"aggregate_rmse": 0.1}}})  # doctest: +ELLIPSIS
    0.9...
    """
    tm = manifest.get("training_matrix")
    rmse = ((manifest.get("prediction") or {}).get("expected_error") or {}).get("aggregate_rmse")
    if not tm or rmse is None or not np.isfinite(rmse):
        return None
    values = embedded_values(tm)
    w = np.array([d["weight"] for d in manifest["datasets"]], dtype=float)
    complete = values[~np.isnan(values).any(axis=1)]
    if complete.shape[0] < MIN_MODELS:
        return None
    agg = complete @ w
    # Aggregates all equal have a variance of rounding (1e-32), not spread: no share, not one of -1e30.
    var = 0.0 if flat_slices(agg)[0] else float(np.var(agg, ddof=1))
    return 1.0 - float(rmse) ** 2 / var if var > 0 else None


def low_share_text(share: Optional[float]) -> str:
    """What a low :func:`explained_share` means for a stronger model, or "" when it is not low."""
    if share is None or share >= LOW_SHARE:
        return ""
    return (f"the subset predicts only {max(share, 0.0):.0%} of the training models' spread on the full-benchmark "
            "score (cross-validated): they differ little beyond what their subset cells show by chance, so a model "
            "stronger than all of them is predicted near their mean; predict measures the share again on its own "
            "model folds (the subset as chosen, so it can read a little higher) and, when it is below one half there "
            "too, widens such a model's intervals to hold the reading that does not shrink toward them as well")
