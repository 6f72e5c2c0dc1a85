"""A completer of a third kind: the low-rank fill corrected by the residuals of the most similar models.

The low-rank fill (BenchPress's bias ALS at ranks 1-3 on its scale, the same fill the column ridge
regresses on; :mod:`~harness_ext.methods.engine.column_ridge`) explains every cell by a few shared factors.
What it misses on a model is often missed alike on models that behave alike: two fine-tunes of one base, one
vendor's releases. This completer measures how alike two models are by their residuals from the fill (mean
squared difference over the datasets both ran, at least :data:`MIN_SHARED` of them) and adds to a missing
cell's fill the weighted mean residual of the :data:`K_NEIGHBOURS` nearest models that ran that dataset
(weights ``1 / (distance + SOFTEN)``): a nearest-neighbour imputation of the fill's residuals (Troyanskaya
et al., 2001), not of the scores, so a neighbour's level never leaks in, only its departure from the low-rank
model. A cell whose model shares too little with any model that ran its dataset keeps the fill.

Its errors differ from both the ALS fits' and the column ridge's (a model's own neighbourhood against a
dataset's regression on the others), which is what a stacked average needs
(:mod:`~harness_ext.methods.engine.completion_mix`).

References
----------
Troyanskaya et al., "Missing value estimation methods for DNA microarrays", Bioinformatics 2001
(KNNimpute: weighted mean of the k most similar rows, weights by inverse distance); Zeng & Papailiopoulos,
arXiv 2606.24020 (2026), §4.2 (the logit bias ALS fill and its scale).
"""

from __future__ import annotations

import numpy as np

#: Neighbours averaged per cell (not tuned: a common KNNimpute choice, Troyanskaya et al. 2001 use 10-20).
K_NEIGHBOURS = 10
#: Fewest datasets two models must share for their distance to count.
MIN_SHARED = 3
#: Added to the distance (mean squared residual difference, z-score units) before inverting it, so a neighbour
#: at distance 0 does not take all the weight.
SOFTEN = 0.1
#: Models whose distances are computed at once (bounds memory at ``CHUNK x models`` floats per array).
CHUNK = 256


def _distances(R, Of, rows):
    """Mean squared difference of residuals ``R`` (0 where unobserved) between ``rows`` and every model, over
    the datasets both ran; ``inf`` where they share fewer than :data:`MIN_SHARED` or for a model itself."""
    n = Of[rows] @ Of.T
    R2 = R ** 2
    d2 = R2[rows] @ Of.T + Of[rows] @ R2.T - 2.0 * R[rows] @ R.T
    dist = np.where(n >= MIN_SHARED, np.maximum(d2, 0.0) / np.maximum(n, 1.0), np.inf)
    dist[np.arange(rows.size), rows] = np.inf
    return dist


def regress_neighbours(Z, fill, k: int = K_NEIGHBOURS) -> np.ndarray:
    """``Z`` (NaN missing) completed: each missing cell is ``fill`` plus the inverse-distance weighted mean residual
    ``Z - fill`` of its model's ``k`` nearest models that observe the cell's dataset; observed cells as given."""
    Z = np.asarray(Z, dtype=float)
    O = ~np.isnan(Z)
    Of = O.astype(float)
    R = np.where(O, Z - fill, 0.0)
    out = np.where(O, Z, fill)
    todo = np.flatnonzero(~O.all(axis=1))
    for start in range(0, todo.size, CHUNK):
        rows = todo[start:start + CHUNK]
        dist = _distances(R, Of, rows)
        for j in np.flatnonzero(~O[rows].all(axis=0)):
            local = np.flatnonzero(~O[rows, j])
            obs = np.flatnonzero(O[:, j])
            if obs.size == 0:
                continue
            D = dist[np.ix_(local, obs)]
            kk = min(int(k), obs.size)
            near = np.argpartition(D, kk - 1, axis=1)[:, :kk] if kk < obs.size else np.broadcast_to(
                np.arange(obs.size), (local.size, obs.size))
            Dn = np.take_along_axis(D, near, axis=1)
            w = np.where(np.isfinite(Dn), 1.0 / (Dn + SOFTEN), 0.0)
            total = w.sum(axis=1)
            shift = (w * R[obs[near], j]).sum(axis=1) / np.maximum(total, 1e-300)
            out[rows[local], j] += np.where(total > 0, shift, 0.0)
    return out
