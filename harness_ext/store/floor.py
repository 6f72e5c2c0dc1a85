"""Normalised scores without the floor at chance: what ``reduce`` fits and ``predict`` predicts.

:func:`harness_ext.store.matrix.load_matrix` floors a chance-corrected score below chance at 0 and
records the cells it floored (``attrs["clipped"]``). For seeing datasets side by side that floor is
harmless, but a predictor fitted on floored scores never predicts below chance, and near chance
(early checkpoints, small models, hard datasets) it predicts too high: on held-out Pythia checkpoints
the floored fit's MMLU aggregate was 2.1 points high and its interval covered 12% of them; fitted
before the floor, 0.6 points and 94% (``benchmarks/quality_holdout.py --fit store-floored`` against
``--fit store``). So a reduction fits on the scores before the floor, and a new model's scores are
normalised the same way.

On a dataset with a known scale the normalised score then lies in ``[-r / (1 - r), 1]`` (``r``: the
chance level as a fraction of the scale), the image of the scale's own ends: below 0 is below
chance. :func:`normalised_bounds` gives those ends, where ``predict`` keeps a prediction and its
interval.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

__all__ = ["normalised_bounds", "unfloored"]


def unfloored(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` (a normalised matrix from :func:`~harness_ext.store.matrix.load_matrix`) with the scores its
    normalisation floored at chance (or capped at 1) restored to their values before, and ``attrs["clipped"]``
    dropped; ``df`` itself when it records none.

    Examples
    --------
    >>> import pandas as pd
    >>> unfloored(pd.DataFrame({"a": [0.5]})).iloc[0, 0]
    0.5
    """
    from .matrix import unpack_clipped

    text = df.attrs.get("clipped")
    if not text:
        return df
    rows, cols, values = unpack_clipped(text, df.index, df.columns)
    X = df.to_numpy(dtype=float, copy=True)
    X[rows, cols] = values
    out = pd.DataFrame(X, index=df.index, columns=df.columns)
    out.attrs.update({k: v for k, v in df.attrs.items() if k != "clipped"})
    return out


def normalised_bounds(params: pd.DataFrame, floored: bool, weights: Optional[np.ndarray] = None) -> tuple:
    """The ends of each dataset's normalised scale, ``(lower, upper)`` arrays (infinite for a dataset without a
    known scale); with ``weights`` (none negative), the ends of their weighted sum instead.

    ``floored``: scores floored at chance (a manifest written before fitting before the floor), so ``[0, 1]``;
    otherwise the images of the scale's ends, ``[-r / (1 - r), 1]`` for a chance level ``r``.
    """
    bounded = params["clip"].to_numpy(dtype=bool)
    r = params["chance"].to_numpy(dtype=float)
    floor = np.zeros(r.shape) if floored else 0.0 - r / (1.0 - r)  # 0.0 -: chance 0 gives 0, not -0 (printed -0.000)
    lo = np.where(bounded, floor, -np.inf)
    hi = np.where(bounded, 1.0, np.inf)
    if weights is None:
        return lo, hi
    w = np.asarray(weights, dtype=float)  # the aggregate's weights: none negative
    on = w != 0
    if not bounded[on].all():
        return -np.inf, np.inf
    return float(lo[on] @ w[on]), float(hi[on] @ w[on])
