"""``quality_holdout.py --fit store`` (the default): the predictor fitted on the scores ``reduce`` fits it on.

With ``--fit raw`` the benchmark fits the predictor under test on the raw matrix, where it detects each column's
scale itself. ``reduce`` fits it on the store's normalised scores instead (:func:`harness_ext.store.matrix.load_matrix`,
``--normalise chance``): each column on its known scale, chance-corrected, not floored at chance (below chance is
negative: :mod:`harness_ext.store.floor`); a column without a known scale min-max over the training models, and
marked ``standardise`` for a predictor that takes ``scale_meta``
(:func:`harness_ext.methods.reduction.manifest_steps.unbounded_scale_meta`). ``predict`` normalises a new model's
cells with the same parameters and keeps a bounded column's prediction and interval inside its scale's ends. This
module does the same on each split's training models and maps the predictions back to raw units, where the
benchmark scores every predictor alike. Only linear scales map back to raw units affinely, so a matrix with an Elo,
perplexity or log-likelihood column, or without the store's records of its columns (benchbench's cross-leaderboard
pivot), keeps the raw fit and says so.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Optional

import numpy as np


def store_records(meta) -> Optional[list]:
    """The store's record of each column (``meta[j]["store"]``, :func:`_holdout_matrices.column_meta`), or None."""
    recs = [m.get("store") for m in meta or ()]
    return recs if recs and all(r is not None for r in recs) else None


class StoreFit:
    """The store's normalisation of ``X_train`` (``records``: each column's store metadata) and its affine inverse.

    ``raw = alpha + beta * normalised`` per column; ``ends``: where ``predict`` keeps each column's prediction.
    ``ok`` is False (with ``why``) where a column's transform is not linear.
    """

    def __init__(self, X_train, records, clip: bool = False):
        import pandas as pd

        from harness_ext.methods.reduction.benchmark_score import affine_inverse
        from harness_ext.store.floor import normalised_bounds
        from harness_ext.store.matrix import normalisation_params

        self.params = normalisation_params(np.asarray(X_train, float), pd.DataFrame(records))
        # raw = alpha + beta * normalised, as the benchmark score maps a column back (None: a non-linear scale)
        maps = [affine_inverse(rec) for rec in self.params.to_dict("records")]
        self.ok = all(m is not None for m in maps)
        self.why = None if self.ok else f"{sum(m is None for m in maps)} column(s) on a non-linear scale"
        self.alpha, self.beta = (np.array(v, float) for v in zip(*((0.0, 1.0) if m is None else m for m in maps)))
        # clip=True ("store-floored"): the scores floored at chance, as reduce fitted before it fitted before the
        # floor (prediction.floor_at_chance), predictions kept in [0, 1]
        self.clip = clip
        self.ends = normalised_bounds(self.params, clip)
        self.scales = self.params["scale"].tolist()

    def normalise(self, X):
        """``X`` as ``reduce`` and ``predict`` see it (floored at chance only for ``store-floored``)."""
        from harness_ext.store.matrix import apply_normalisation

        return apply_normalisation(np.asarray(X, float), self.params, clip=self.clip)

    def to_raw(self, Z):
        return self.alpha + self.beta * Z

    def predictor(self, name: str, seed: int):
        """The unfitted predictor ``name`` with ``reduce``'s ``scale_meta`` for the columns without a known scale."""
        from harness_ext.methods.pounce import make_predictor
        from harness_ext.methods.reduction.manifest_steps import unbounded_scale_meta
        from harness_ext.plugin_manager import get_registration

        params = unbounded_scale_meta(get_registration("predictors", name), self.scales, None) or {}
        return make_predictor(name, random_state=seed, **params)

    def predict(self, name: str, seed: int, X_train, X_new, W, reselect=None):
        """The prediction of ``X_new``'s hidden cells in raw units, with cell and aggregate intervals.

        ``W``: each new model's aggregate weights on raw units (its aggregate is ``(raw * W).sum(1)``); the
        aggregate interval is returned on that scale.
        """
        est = self.predictor(name, seed).fit(self.normalise(X_train))
        Wn = np.asarray(W, float) * self.beta
        p = est.predict_new_models(self.normalise(X_new), weights=Wn, reselect=reselect)
        # predict keeps a bounded column's hidden cells and their interval inside its scale's ends
        mean, lo, hi = (np.clip(v, *self.ends) for v in (p.mean, p.lower, p.upper))
        r_lo, r_hi = self.to_raw(lo), self.to_raw(hi)
        offset = (np.asarray(W, float) * self.alpha).sum(1)
        agg_lo = None if p.aggregate_lower is None else p.aggregate_lower + offset
        agg_hi = None if p.aggregate_upper is None else p.aggregate_upper + offset
        return SimpleNamespace(mean=self.to_raw(mean), lower=np.minimum(r_lo, r_hi), upper=np.maximum(r_lo, r_hi),
                               aggregate_lower=agg_lo, aggregate_upper=agg_hi, frontier=getattr(p, "frontier", None))


_SAID: set = set()


def store_fit(X_train, meta, fit: str) -> Optional[StoreFit]:
    """The split's :class:`StoreFit` when ``fit`` is "store" (or "store-floored") and the columns allow it, else None
    (the raw fit; the reason said once)."""
    if fit not in ("store", "store-floored"):
        return None
    recs = store_records(meta)
    sf = StoreFit(X_train, recs, clip=fit == "store-floored") if recs else None
    if sf is None or not sf.ok:
        why = "no store record of its columns" if sf is None else sf.why
        if why not in _SAID:
            _SAID.add(why)
            print(f"    --fit store: {why}; the predictor is fitted on the raw matrix", file=sys.stderr)
        return None
    return sf
