"""Saturation demotion: choose the subset for models stronger than the ones it is chosen on.

A dataset whose scores sit near a known ceiling among the training models separates those
models, but it cannot register how much better a stronger model is: its score stops at the
ceiling. Selection on the training models (:mod:`harness_ext.methods.prowl.predictive`) does
not see that, so the subset it chooses can rest on datasets a stronger model saturates.
With ``demote_saturated=True`` the selector ``prediction_greedy`` chooses such a dataset only
after every other: a dataset is *saturated* when its ceiling is known and the training
models leave it a headroom

    (ceiling - q90) / (q90 - q10) < headroom          (default 0.25)

with ``q10``, ``q90`` the 10th and 90th percentiles of its observed scores (the room above the
strong models, in units of the models' spread). When fewer datasets than the subset needs
are left unsaturated, nothing is demoted and every dataset competes. Every demotion is
recorded with the dataset's headroom (:func:`saturation_plan`; the manifest's
``selection.saturation`` and the ``reduce`` summary).

It is a trade, not a free gain (benchmarks/HISTORY.md, 2026-11-30; docs/frontier.md): on
the shared matrices it predicted the models stronger than every training model better (the
frontier protocol of Zhang, Dorner & Hardt 2025, section 4) and the models like the training
ones worse (a saturated dataset still separates the weaker training models). So it is off by
default.

The ceiling is known when the dataset's scale has fixed bounds (a proportion, a percentage or
a declared range: :data:`harness_ext.store.scales.FIXED_BOUNDS`, read from the matrix's
normalisation records by :func:`dataset_ceilings`); min-max, Elo and other unbounded scales
have none and are never demoted. A floor (every model near chance) is not demoted: a stronger
model's gain still registers there.

References
----------
Zhang, Dorner & Hardt (2025), "How Benchmark Prediction from Fewer Data Misses the Mark", section 4
(the frontier: predicting models stronger than the training models).
"""

from __future__ import annotations

import warnings
from typing import Optional

import numpy as np

from ...errors import MethodError

__all__ = ["HEADROOM", "dataset_ceilings", "headroom", "saturated", "saturation_plan", "saturation_summary",
           "near_ceiling", "selection_record", "subset_saturation", "subset_saturation_warning", "unit_ceilings"]

#: Default headroom below which a dataset with a known ceiling is demoted; fixed before it was measured (never tuned).
HEADROOM = 0.25
#: The rule in words, for the records.
RULE = ("a dataset with a known ceiling whose training models leave it headroom (ceiling - q90) / (q90 - q10) below "
        "{h:g} (q10, q90: percentiles of its scores) is chosen only after every other dataset; with fewer others "
        "than the subset needs, nothing is demoted")


def _ceiling_array(ceilings, d: int) -> np.ndarray:
    """``ceilings`` as ``d`` floats (NaN: unknown), or a clear error."""
    c = np.array([np.nan if v is None else v for v in ceilings], dtype=float) if ceilings is not None else None
    if c is None or c.shape != (d,):
        raise MethodError(f"ceilings must give one value (or None) per dataset: {d} expected, "
                          f"got {None if c is None else c.size}")
    return c


def unit_ceilings(X) -> list:
    """1.0 for each dataset whose observed scores all lie in [0, 1] (a proportion), None elsewhere: the ceilings
    assumed when none are given."""
    X = np.asarray(X, dtype=float)
    obs = np.isfinite(X)
    inside = (np.where(obs, X, 0.5) >= 0).all(0) & (np.where(obs, X, 0.5) <= 1).all(0) & obs.any(0)
    return [1.0 if ok else None for ok in inside]


def headroom(X, ceilings) -> np.ndarray:
    """Each dataset's headroom ``(ceiling - q90) / (q90 - q10)`` over the rows of ``X`` (NaN where the ceiling is
    unknown, or no spread)."""
    X = np.asarray(X, dtype=float)
    c = _ceiling_array(ceilings, X.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an unobserved column: NaN percentiles, no headroom
        q10, q90 = np.nanpercentile(X, [10, 90], axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        room = np.where(np.isfinite(c) & (q90 > q10), (c - q90) / (q90 - q10), np.nan)
    # Rounded: scores are discrete, so a headroom exactly at the threshold occurs, and the rounding of the scale
    # (points or fractions) must not decide which side it falls on.
    return np.round(room, 9)


def saturated(X, ceilings, threshold: float = HEADROOM) -> tuple:
    """``(mask, room)``: the datasets whose headroom (:func:`headroom`) is below ``threshold``, and every headroom."""
    room = headroom(X, ceilings)
    return np.isfinite(room) & (room < float(threshold)), room


def saturation_plan(X, ceilings=None, threshold: float = HEADROOM, k: Optional[int] = None) -> tuple:
    """``(allowed, record)`` for a selection of ``k`` datasets (None: an order with no size) on ``X``.

    ``allowed``: the datasets the search takes first (None: no demotion, every dataset competes: nothing
    saturated, or fewer than ``k`` others). ``ceilings``: one per dataset on ``X``'s scale (None: unknown);
    default :func:`unit_ceilings`. ``record``: what was demoted and why, by column index (``describe()``).
    """
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    try:
        threshold = float(threshold)
    except (TypeError, ValueError):
        threshold = float("nan")
    if not np.isfinite(threshold) or threshold <= 0:
        raise MethodError(f"headroom must be a positive number, got {threshold!r}")
    ceilings = unit_ceilings(X) if ceilings is None else ceilings
    sat, room = saturated(X, ceilings, threshold)
    n_left = int(d - sat.sum())
    fallback = k is not None and sat.any() and n_left < int(k)
    allowed = ~sat if sat.any() and not fallback else None
    demoted = np.flatnonzero(sat)
    record = {"rule": RULE.format(h=threshold), "headroom": threshold, "k": None if k is None else int(k),
              "n_datasets": int(d), "n_known_ceiling": int(np.isfinite(_ceiling_array(ceilings, d)).sum()),
              "n_saturated": int(demoted.size), "saturated": demoted.tolist(),
              "saturated_headroom": [round(float(room[j]), 4) for j in demoted], "applied": allowed is not None,
              "note": (f"only {n_left} of {d} datasets are not saturated, fewer than the {int(k)} the subset needs: "
                       "nothing demoted, every dataset competed") if fallback else None}
    return allowed, record


def dataset_ceilings(normalisations, X) -> list:
    """Each dataset's ceiling on the matrix's scale, from its normalisation record (None: no known ceiling).

    A normalised dataset whose scale has fixed bounds (:data:`harness_ext.store.scales.FIXED_BOUNDS`) has its
    ceiling at 1; a ``raw`` one (a DataFrame built by hand) at the top of the scale inferred from its values
    (:func:`harness_ext.store.scales.raw_scale`); min-max, Elo and other unbounded scales have none.
    """
    from ...store.scales import FIXED_BOUNDS, raw_scale

    X = np.asarray(X, dtype=float)
    out = []
    for j, norm in enumerate(normalisations):
        kind, _, hi = raw_scale(norm, X[:, j])
        if kind not in FIXED_BOUNDS or hi is None:
            out.append(None)
        else:
            out.append(float(hi) if str(norm.get("description") or "").startswith("raw") else 1.0)
    return out


def selection_record(details: Optional[dict], columns, subset_idx) -> Optional[dict]:
    """The manifest's ``selection.saturation`` from a selector's ``describe()``, dataset names for its column
    indices (None when the selector was not asked to demote saturated datasets)."""
    sat = (details or {}).get("saturation")
    if not sat:
        return None
    names = [columns[j] for j in sat["saturated"]]
    in_subset = set(int(j) for j in subset_idx)
    return {"rule": sat["rule"], "headroom": sat["headroom"], "n_datasets": sat["n_datasets"],
            "n_known_ceiling": sat["n_known_ceiling"], "applied": sat["applied"],
            "saturated": [{"name": n, "headroom": r} for n, r in zip(names, sat["saturated_headroom"])],
            "n_in_subset": int(sum(j in in_subset for j in sat["saturated"])),
            **({"note": sat["note"]} if sat.get("note") else {})}


def saturation_summary(record: dict) -> str:
    """One line for the ``reduce`` summary: what the saturation rule demoted, with each headroom."""
    n = len(record["saturated"])
    shown = ", ".join(f"{s['name']} {s['headroom']:.2f}" for s in record["saturated"][:8])
    more = f" and {n - 8} more" if n > 8 else ""
    head = (f"saturation (--demote-saturated): {n} of the {record['n_known_ceiling']} datasets with a known ceiling "
            f"{'has' if n == 1 else 'have'} headroom below {record['headroom']:g}")
    if not n:
        return head + ": nothing demoted"
    what = (f"{'it is' if n == 1 else 'they are'} chosen only after every other" if record["applied"]
            else record.get("note") or "not demoted")
    return f"{head} ({shown}{more}); {what}; {record['n_in_subset']} in the subset"


def subset_saturation(X, ceilings, subset_idx, columns, threshold: float = HEADROOM) -> Optional[dict]:
    """The datasets of a subset chosen without demotion that the saturation rule calls saturated (None: none).

    For a selection that did not demote (the default): which of its datasets sit near their ceiling among the
    models of ``X``, with each one's :func:`headroom`, so the summary can say that a stronger model cannot show
    its strength there. ``ceilings`` as :func:`saturation_plan`'s (None: unknown).
    """
    X = np.asarray(X, dtype=float)
    sat, room = saturated(X, ceilings, threshold)
    hits = [int(j) for j in subset_idx if sat[int(j)]]
    if not hits:
        return None
    c = _ceiling_array(ceilings, X.shape[1])
    q10, q90 = np.nanpercentile(X[:, hits], [10, 90], axis=0)
    # "near" for a new model: within the rule's headroom of the ceiling, in units of the models' spread.
    return {"rule": RULE.format(h=float(threshold)), "headroom": float(threshold), "applied": False,
            "n_datasets": int(X.shape[1]), "n_known_ceiling": int(np.isfinite(c).sum()), "n_saturated": int(sat.sum()),
            "in_subset": [{"name": columns[j], "headroom": round(float(room[j]), 4), "ceiling": float(c[j]),
                           "near_from": round(float(c[j] - threshold * (hi - lo)), 6)}
                          for j, lo, hi in zip(hits, q10, q90)]}


def near_ceiling(record: Optional[dict], Z, columns) -> dict:
    """Per dataset of :func:`subset_saturation`'s ``record`` that ``columns`` names: which rows of ``Z`` (models x
    ``columns``, on the record's scale) lie near its ceiling (at or above its ``near_from``)."""
    Z = np.asarray(Z, dtype=float)
    out = {}
    for rec in (record or {}).get("in_subset", []):
        if rec["name"] in columns and rec.get("near_from") is not None:
            v = Z[:, list(columns).index(rec["name"])]
            out[rec["name"]] = np.isfinite(v) & (v >= rec["near_from"])
    return out


def subset_saturation_warning(record: dict) -> str:
    """The ``reduce`` warning for :func:`subset_saturation`'s record: what a stronger model meets there, and the option."""
    hits = record["in_subset"]
    names = ", ".join(f"{h['name']} (headroom {h['headroom']:.2f})" for h in hits[:8]) + (
        f" and {len(hits) - 8} more" if len(hits) > 8 else "")
    one = len(hits) == 1
    return (f"the subset holds {len(hits)} {'dataset' if one else 'datasets'} near {'its' if one else 'their'} "
            f"ceiling among these models: {names}; headroom is (ceiling - q90) / (q90 - q10) of the models' scores, "
            f"below {record['headroom']:g} here. A model stronger than every one of them scores near the ceiling "
            f"there however strong it is, so its other datasets may be predicted too low, by more than the frontier "
            f"folds measure, and its intervals may be too narrow. If the models you will evaluate are stronger than "
            f"these, --demote-saturated (demote_saturated=True) chooses the subset around such datasets: a trade, "
            f"better for stronger models and worse for models like these on some benchmarks (docs: 'Choosing the "
            f"subset for stronger models')")
