"""Per-dataset transforms into the space where a low-rank model is fitted, and back.

Real matrices mix scales: accuracies in [0, 1], percentages in [0, 100], Elo
ratings around 1,200, 0-10 judge scores, negative BARTScores. A factor model
fitted on raw values lets the widest scale dominate, and one fitted on
proportions treats 0.50 -> 0.55 like 0.94 -> 0.99, although the second step is
much harder. So each dataset gets its own transform:

* ``logit`` for bounded scores (proportions, percentages, anything with
  declared bounds): ``p = (x - lo) / (hi - lo)``, floored at chance when the
  chance level is known (a score below chance is noise around chance, and its
  logit would otherwise dominate the fit), clipped to ``[eps, 1 - eps]``, then
  ``z = log(p / (1 - p))``.
* ``standardise`` for unbounded scores (Elo, judge scores on 0-10, BARTScore):
  ``z = (x - mean) / sd`` over the observed cells.
* ``identity`` when asked for.

The inverse is exact wherever the forward transform did not clip (values in
``[max(floor, eps), 1 - eps]`` of a bounded column; everything of an unbounded
one), so predictions and interval ends computed in the transformed space come
back on each dataset's own scale; being monotone, the inverse maps an interval
to an interval.

Detection (``kind="auto"``), per column, first match wins:

1. a per-column override (``kinds={"col": "standardise"}`` or a list);
2. declared bounds in the metadata (``min_score``/``max_score``) -> logit on them;
3. every observed value in ``[0, 1]`` -> logit on ``[0, 1]`` (proportions);
4. every observed value in ``[0, 100]`` and the largest above 10 -> logit on
   ``[0, 100]`` (percentages; a 0-10 judge score never exceeds 10, and a
   percentage column whose best model is below 10% is treated as unbounded,
   which is the safe side);
5. otherwise standardise (Elo, BARTScore, judge scores).

A column rules 2-4 give the logit is standardised instead when more than half
of its observed cells (:data:`CLIPPED_SHARE`) sit at or beyond the logit's clip
(at or below ``max(chance, eps)`` or at or above ``1 - eps`` as proportions of
its bounds): the logit maps every clipped cell to one value, so it would keep
the order of fewer than half of the column's models. Long-context scores at
128k tokens are such a column among weak models (HELMET's citation and
re-ranking scores: 59% and 69% of the weaker half's cells at or below 1%);
so are time-series accuracies at 99-100%. Its reason says so.

The chance level comes from the metadata (``random_baseline`` in the column's
own units) when present, else none.

``eps`` defaults to 0.01: on a percentage scale this is one point, below the
run-to-run noise of most benchmarks, and it bounds ``|z|`` by 4.6 so a single
0% or 100% cell cannot dominate a least-squares fit.

References
----------
Zeng & Papailiopoulos, "You Don't Need to Run Every Eval" (arXiv 2606.24020),
§3: completion in logit space; SimBA §2 for chance-level normalisation.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence, Union

import numpy as np

from ...errors import MethodError
from ...flat import flat_slices

LOGIT = "logit"
STANDARDISE = "standardise"
IDENTITY = "identity"
KINDS = (LOGIT, STANDARDISE, IDENTITY)
#: Clip of proportions before the logit (documented above).
DEFAULT_EPS = 0.01
#: Largest value of a column treated as a 0-10 judge score rather than a percentage.
JUDGE_MAX = 10.0
#: Share of a column's observed cells at or beyond the logit's clip above which the column is standardised instead
#: (module docstring): a majority, fixed before it was measured (``benchmarks/HISTORY.md``).
CLIPPED_SHARE = 0.5

__all__ = ["ScaleTransform", "detect_scales", "LOGIT", "STANDARDISE", "IDENTITY", "DEFAULT_EPS"]


def _meta_value(meta, j, key):
    if meta is None:
        return None
    row = meta[j]
    if row is None:
        return None
    v = row.get(key) if isinstance(row, Mapping) else getattr(row, key, None)
    if v is None:
        return None
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if np.isfinite(v) else None


def _clipped_share(x, lo: float, hi: float, chance, eps: float) -> float:
    """Share of the observed cells ``x`` the logit on ``[lo, hi]`` clips: at or below ``max(chance, eps)`` or at or
    above ``1 - eps`` as proportions (0 without cells)."""
    x = x[~np.isnan(x)]
    if x.size == 0:
        return 0.0
    p = (x - lo) / (hi - lo)
    floor = 0.0 if chance is None else (chance - lo) / (hi - lo)
    return float(np.mean((p <= max(floor, eps)) | (p >= 1.0 - eps)))


def detect_scales(X, meta: Optional[Sequence] = None, kinds=None, eps: float = DEFAULT_EPS) -> list:
    """Per-column scale description for :class:`ScaleTransform` (see the module docstring for the rules).

    Parameters
    ----------
    X : array-like, (n_models, n_datasets)
        Raw scores, NaN where missing.
    meta : sequence of dict, optional
        One dict per column with any of ``min_score``, ``max_score``,
        ``random_baseline`` (chance, in the column's units) and ``scale``
        (``"logit"``/``"standardise"``/``"identity"``, an override).
    kinds : str, sequence or dict, optional
        Overrides: one kind for every column, one per column (``None`` or
        ``"auto"`` entries detect), or ``{column_index: kind}``.
    eps : float
        The logit's clip, for the rule on clipped columns (module docstring).

    Returns
    -------
    list of dict
        ``{"kind", "lo", "hi", "chance", "reason"}`` per column (``lo``/``hi``
        only for logit columns; ``chance`` in raw units or None).
    """
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    if meta is not None and len(meta) != d:
        raise MethodError(f"scale metadata has {len(meta)} entries for {d} datasets")
    if kinds is None or isinstance(kinds, str):
        override = [kinds] * d
    elif isinstance(kinds, Mapping):
        override = [kinds.get(j) for j in range(d)]
    else:
        override = list(kinds)
        if len(override) != d:
            raise MethodError(f"{len(override)} scale kinds given for {d} datasets")
    obs = ~np.isnan(X)
    with np.errstate(invalid="ignore"):
        cmin = np.where(obs.any(0), np.nanmin(np.where(obs, X, np.inf), axis=0), np.nan)
        cmax = np.where(obs.any(0), np.nanmax(np.where(obs, X, -np.inf), axis=0), np.nan)
    out = []
    for j in range(d):  # a loop over columns building small dicts, not over cells
        kind = override[j]
        if kind in (None, "auto"):
            kind = (meta[j].get("scale") if meta is not None and isinstance(meta[j], Mapping) else None) or "auto"
        if kind not in KINDS + ("auto",):
            raise MethodError(f"unknown scale kind {kind!r} for dataset {j}; use one of {', '.join(KINDS)} or auto")
        lo_m, hi_m = _meta_value(meta, j, "min_score"), _meta_value(meta, j, "max_score")
        chance = _meta_value(meta, j, "random_baseline")
        declared = lo_m is not None and hi_m is not None and hi_m > lo_m
        entry = {"kind": kind, "lo": None, "hi": None, "chance": chance, "reason": "given"}
        if kind in ("auto", LOGIT):
            if declared:
                entry.update(lo=lo_m, hi=hi_m, reason="declared bounds")
            elif cmin[j] >= 0 and cmax[j] <= 1:
                entry.update(lo=0.0, hi=1.0, reason="values in [0, 1]")
            elif cmin[j] >= 0 and cmax[j] <= 100 and cmax[j] > JUDGE_MAX:
                entry.update(lo=0.0, hi=100.0, reason="values in [0, 100], percentages")
            elif kind == LOGIT:
                lo = 0.0 if cmin[j] >= 0 else float(cmin[j])
                entry.update(lo=lo, hi=float(cmax[j]) if cmax[j] > lo else lo + 1.0, reason="given; observed range")
            else:
                entry.update(kind=STANDARDISE, reason="unbounded values (outside [0, 1] and not percentages)")
            if entry["kind"] == "auto":
                entry["kind"] = LOGIT
                share = _clipped_share(X[:, j], entry["lo"], entry["hi"], chance, eps)
                if share > CLIPPED_SHARE:  # the logit would tie most of the column's cells
                    entry.update(kind=STANDARDISE, lo=None, hi=None,
                                 reason=f"{entry['reason']}, but {share:.0%} of the cells at the logit's clip")
        out.append(entry)
    return out


class ScaleTransform:
    """Fitted per-dataset transform with an exact inverse (module docstring).

    Parameters
    ----------
    kinds : str, sequence or dict, optional
        Overrides passed to :func:`detect_scales`; ``None`` detects every column.
    eps : float
        Clip of proportions before the logit.
    meta : sequence of dict, optional
        Per-column metadata for :func:`detect_scales`.

    Attributes
    ----------
    columns_ : list of dict
        Per column: ``kind``, ``lo``, ``hi``, ``floor`` (proportion units),
        ``mu``, ``sd``, ``chance``, ``reason``. JSON-serialisable; see
        :meth:`to_dict` / :meth:`from_dict`.
    """

    def __init__(self, kinds=None, eps: float = DEFAULT_EPS, meta: Optional[Sequence] = None):
        self.kinds = kinds
        self.eps = eps
        self.meta = meta

    # -- fitting and (de)serialisation ---------------------------------------------------
    def fit(self, X) -> "ScaleTransform":
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise MethodError(f"X must be 2-D, got shape {X.shape}")
        if not 0 < float(self.eps) < 0.5:
            raise MethodError(f"eps must be in (0, 0.5), got {self.eps!r}")
        cols = detect_scales(X, self.meta, self.kinds, self.eps)
        obs = ~np.isnan(X)
        with np.errstate(invalid="ignore", divide="ignore"):
            n = obs.sum(0)
            mu = np.where(n > 0, np.nansum(X, 0) / np.maximum(n, 1), 0.0)
            var = np.where(n > 1, np.nansum((X - mu) ** 2, 0) / np.maximum(n - 1, 1), 0.0)
            # A column whose observed values are all equal has no spread, exactly: its mean as summed is the value
            # give or take a rounding error, which left an sd of 1e-17 (treated as spread: a new value's z-score
            # of 1e16) or 0 depending on the order the sum ran in (the array's memory layout, the library release).
            flat, value = flat_slices(X, 0)
            mu = np.where(flat, value, mu)
        sd = np.where(flat, 0.0, np.sqrt(var))
        # A standardised column with no spread (every model at the same score, e.g. all clipped to chance, or a
        # single model) takes the median spread of the other standardised columns, not 1: its z-scores are
        # predicted like any column's, and on a unit sd one z of a 0-1 score was a prediction of 100%.
        spread = sd[(sd > 0) & np.array([c["kind"] == STANDARDISE for c in cols], dtype=bool)]
        flat_sd = float(np.median(spread)) if spread.size else 1.0
        for j, c in enumerate(cols):
            c["mu"], c["sd"] = float(mu[j]), float(sd[j]) if sd[j] > 0 else flat_sd
            if c["kind"] == LOGIT and c["chance"] is not None:
                c["floor"] = float(np.clip((c["chance"] - c["lo"]) / (c["hi"] - c["lo"]), 0.0, 1.0 - 2 * self.eps))
            else:
                c["floor"] = 0.0
        self.columns_ = cols
        self._arrays()
        return self

    def _arrays(self):
        cols = self.columns_
        self._kind = np.array([KINDS.index(c["kind"]) for c in cols])
        self._lo = np.array([c["lo"] if c["lo"] is not None else 0.0 for c in cols], dtype=float)
        self._span = np.array([(c["hi"] - c["lo"]) if c["lo"] is not None else 1.0 for c in cols], dtype=float)
        self._floor = np.array([c.get("floor", 0.0) for c in cols], dtype=float)
        self._mu = np.array([c["mu"] for c in cols], dtype=float)
        self._sd = np.array([c["sd"] for c in cols], dtype=float)

    def to_dict(self) -> dict:
        """JSON-ready description (goes into manifests; :meth:`from_dict` rebuilds the transform)."""
        return {"eps": float(self.eps), "columns": [dict(c) for c in self.columns_]}

    @classmethod
    def from_dict(cls, d: dict) -> "ScaleTransform":
        t = cls(eps=d["eps"])
        t.columns_ = [dict(c) for c in d["columns"]]
        t._arrays()
        return t

    @property
    def n_columns(self) -> int:
        return len(self.columns_)

    def kinds_(self) -> list:
        return [c["kind"] for c in self.columns_]

    # -- the maps ------------------------------------------------------------------------
    def _check(self, A):
        A = np.asarray(A, dtype=float)
        if A.shape[-1] != self.n_columns:
            raise MethodError(f"got {A.shape[-1]} datasets, the transform was fitted on {self.n_columns}")
        return A

    def transform(self, X) -> np.ndarray:
        """Raw scores -> transformed space (NaN stays NaN)."""
        X = self._check(X)
        eps = float(self.eps)
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.clip(np.maximum((X - self._lo) / self._span, self._floor), eps, 1.0 - eps)
            logit = np.log(p) - np.log1p(-p)
            std = (X - self._mu) / self._sd
        return np.where(self._kind == 0, logit, np.where(self._kind == 1, std, X))

    def inverse_transform(self, Z) -> np.ndarray:
        """Transformed space -> raw scores (exact inverse of :meth:`transform` where it did not clip)."""
        Z = self._check(Z)
        with np.errstate(over="ignore"):
            sig = 1.0 / (1.0 + np.exp(-Z))
        return np.where(self._kind == 0, self._lo + self._span * sig,
                        np.where(self._kind == 1, self._mu + self._sd * Z, Z))

    def inverse_interval(self, Z_lo, Z_hi) -> tuple:
        """Raw-scale ``(lower, upper)`` of transformed intervals ``[Z_lo, Z_hi]``.

        The preimage of an interval reaching a clip point of a logit column
        includes everything the transform clipped there: an upper end at or
        above ``logit(1 - eps)`` becomes the column's upper bound (a score of
        100% is inside), a lower end at or below ``logit(max(floor, eps))`` its
        lower bound (scores at or below chance are inside).
        """
        Z_lo, Z_hi = self._check(Z_lo), self._check(Z_hi)
        eps = float(self.eps)
        lower, upper = self.inverse_transform(Z_lo), self.inverse_transform(Z_hi)
        logit_col = self._kind == 0
        p_lo = np.maximum(self._floor, eps)
        z_lo_clip = np.log(p_lo) - np.log1p(-p_lo)
        z_hi_clip = np.log(1 - eps) - np.log(eps)
        lower = np.where(logit_col & (Z_lo <= z_lo_clip + 1e-12), self._lo, lower)
        upper = np.where(logit_col & (Z_hi >= z_hi_clip - 1e-12), self._lo + self._span, upper)
        return lower, upper

    def derivative(self, Z) -> np.ndarray:
        """``d raw / d z`` at ``Z`` (for delta-method standard deviations on the raw scale)."""
        Z = self._check(Z)
        with np.errstate(over="ignore"):
            sig = 1.0 / (1.0 + np.exp(-Z))
        return np.where(self._kind == 0, self._span * sig * (1 - sig),
                        np.where(self._kind == 1, self._sd * np.ones_like(Z), np.ones_like(Z)))

    def points(self) -> np.ndarray:
        """Per-column factor turning raw units into "points": 100 for [0, 1] proportions, else 1."""
        return np.where((self._kind == 0) & (self._lo == 0) & (self._span == 1.0), 100.0, 1.0)

    def __repr__(self):
        if not hasattr(self, "columns_"):
            return f"ScaleTransform(kinds={self.kinds!r}, eps={self.eps!r})"
        counts = {k: self.kinds_().count(k) for k in KINDS if k in self.kinds_()}
        return f"ScaleTransform({', '.join(f'{k}={v}' for k, v in counts.items())}, eps={self.eps})"


def as_transform(spec: Union[None, str, dict, ScaleTransform], X, meta=None, eps: float = DEFAULT_EPS) -> ScaleTransform:
    """A fitted :class:`ScaleTransform` from a predictor's ``scales`` parameter.

    ``None``/``"auto"`` detects from ``X`` (and ``meta``); a kind name applies it to every
    column; a dict from :meth:`ScaleTransform.to_dict` is used as stored; a list or
    ``{index: kind}`` gives per-column overrides.
    """
    if isinstance(spec, ScaleTransform):
        return spec if hasattr(spec, "columns_") else spec.fit(X)
    if isinstance(spec, Mapping) and "columns" in spec:
        t = ScaleTransform.from_dict(spec)
        if t.n_columns != np.shape(X)[1]:
            raise MethodError(f"stored scales describe {t.n_columns} datasets, the matrix has {np.shape(X)[1]}")
        return t
    return ScaleTransform(kinds=None if spec == "auto" else spec, eps=eps, meta=meta).fit(X)


class ColumnScaled:
    """A fitted transform followed by a per-column z-score of its output (same interface)."""

    def __init__(self, inner, X):
        self.inner = inner
        Z = inner.transform(X)
        obs = ~np.isnan(Z)
        n = np.maximum(obs.sum(0), 1)
        self.mu = np.where(obs.any(0), np.nansum(Z, 0) / n, 0.0)
        sd = np.sqrt(np.nansum((Z - self.mu) ** 2, 0) / n)
        self.sd = np.where(sd > 1e-8, sd, 1.0)

    def transform(self, X):
        return (self.inner.transform(X) - self.mu) / self.sd

    def inverse_transform(self, Z):
        return self.inner.inverse_transform(np.asarray(Z) * self.sd + self.mu)

    def derivative(self, Z):
        return self.inner.derivative(np.asarray(Z) * self.sd + self.mu) * self.sd

    def inverse_interval(self, Z_lo, Z_hi):
        return self.inner.inverse_interval(np.asarray(Z_lo) * self.sd + self.mu, np.asarray(Z_hi) * self.sd + self.mu)

    def points(self):
        return self.inner.points()

    def to_dict(self):
        return {**self.inner.to_dict(), "column_mean": self.mu.tolist(), "column_sd": self.sd.tolist()}
