"""Input checks of the item estimators (:mod:`harness_ext.methods.engine.item_estimators`).

scikit-learn's rule: ``__init__`` stores its parameters unchanged, and ``fit``/``predict`` check them and
their inputs, raising a :class:`ValueError` that says what is wrong. Without these checks a level given as
a percentage gave NaN or inverted bounds, an item index past the task's end was accepted by ``fit`` and
failed in ``predict`` as a raw ``IndexError``, and answers of the wrong width failed deep in the algebra.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["check_level", "check_source_items", "check_targets", "percentage_hint"]


def percentage_hint(value: float) -> str:
    """`` (a percentage? use 0.9)`` for a level that reads as a percentage (90), else ``""``.

    Only from 50 up: a level of 1.5 is no percentage anyone means (a 1.5% interval), so telling its user to
    write 0.015 was nonsense.
    """
    return f" (a percentage? use {value / 100:g})" if 50.0 <= value < 100.0 else ""


def check_level(level, owner: str) -> float:
    """``level`` as a float in (0, 1), or a ValueError (with a hint when it looks like a percentage)."""
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not np.isfinite(level):
        raise ValueError(f"{owner}: level must be a number in (0, 1), e.g. 0.9; got {level!r}")
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"{owner}: level must be in (0, 1), e.g. 0.9; got {level!r}{percentage_hint(float(level))}")
    return float(level)


def check_source_items(source, items, owner: str) -> tuple:
    """``(source, items)`` as a float matrix (models x items) and integer item indices into its columns.

    Raises
    ------
    ValueError
        If ``source`` is not a non-empty 2-D numeric array, or ``items`` is not a non-empty 1-D array of
        distinct integer indices in ``[0, n_items)`` (a sample is drawn without replacement).
    """
    try:
        S = np.asarray(source, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{owner}.fit: source must be a numeric array (models x items)") from None
    if S.ndim != 2 or S.shape[0] < 1 or S.shape[1] < 1:
        raise ValueError(f"{owner}.fit: source must be a 2-D array (models x items) with at least one of each; "
                         f"got shape {S.shape}")
    idx = np.asarray(items)
    if idx.ndim != 1 or idx.size == 0:
        raise ValueError(f"{owner}.fit: items must be a non-empty 1-D array of item indices; got shape {idx.shape}")
    if idx.dtype.kind == "f" and np.all(np.isfinite(idx)) and np.all(idx == np.round(idx)):
        idx = idx.astype(np.int64)  # 3.0 is item 3 (e.g. indices read back from JSON as floats)
    if idx.dtype.kind not in "iu":
        raise ValueError(f"{owner}.fit: items must be integer item indices (column positions of source), "
                         f"not {idx.dtype} values" + (" (a boolean mask? use np.flatnonzero(mask))"
                                                     if idx.dtype.kind == "b" else ""))
    bad = idx[(idx < 0) | (idx >= S.shape[1])]
    if bad.size:
        raise ValueError(f"{owner}.fit: {bad.size} item index(es) outside the task's {S.shape[1]} items "
                         f"(valid 0..{S.shape[1] - 1}): {', '.join(str(int(i)) for i in bad[:5])}"
                         f"{' ...' if bad.size > 5 else ''}")
    if np.unique(idx).size != idx.size:
        raise ValueError(f"{owner}.fit: items repeat an index ({idx.size - np.unique(idx).size} repeat(s)); "
                         "a sample of items is drawn without replacement")
    return S, idx


def check_targets(Y, n_sampled: int, owner: str) -> None:
    """Check the targets' answers ``Y`` (targets x sampled items, or one target's 1-D answers)."""
    try:
        arr = np.asarray(Y, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{owner}.predict: Y must be numeric answers (targets x sampled items)") from None
    if arr.ndim not in (1, 2):
        raise ValueError(f"{owner}.predict: Y must be 1-D (one target) or 2-D (targets x sampled items); "
                         f"got shape {arr.shape}")
    if arr.shape[-1] != n_sampled:
        raise ValueError(f"{owner}.predict: Y has {arr.shape[-1]} answers per target, but the estimator was fitted "
                         f"with {n_sampled} sampled items: give each target's answers to those items, in their order")
