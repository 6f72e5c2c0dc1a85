"""The completion's settings ``reduce`` chose, recorded in the manifest and reused by ``predict``.

A low-rank completer (``lowrank``, ``lowrank_bayes``) with settings left to cross-validation (transform per
dataset, rank and penalty, cell blend, rank ensemble: :func:`~harness_ext.methods.engine.completion_settings.choose_scales`)
chooses them on every training model once in ``reduce`` and holds them in every fold. ``predict`` fits the same
predictor on the same training matrix, so it would choose them again: on 400 models x 300 datasets that is 26 of
its 34 seconds. The manifest records the choice (``prediction.completion_settings``) with a digest of the training
matrix as ``predict`` reads it and of the predictor's parameters; ``predict`` reuses the choice when both digests
agree, and otherwise chooses again and says why.

The choice was made on the training matrix before its figures were rounded to the manifest's ten digits (the
embedded ``training_matrix``); a choice between settings whose held-out errors differ by less than that rounding
could differ from one made again on the rounded matrix. The record is the choice ``reduce``'s own cross-validation
and calibration used.
"""

from __future__ import annotations

import hashlib
import json
from typing import Optional

import numpy as np

__all__ = ["completion_record", "settings_digest", "stored_settings", "unreadable"]

#: Parameters that do not enter the choice (the intervals' level is set at predict time).
NOT_IN_CHOICE = ("level",)
#: What the record says it is, for a reader of the manifest.
DESCRIPTION = ("the completion's transform, rank, penalty, cell blend and rank ensemble, chosen by reduce's "
               "cross-validation on every training model; predict reuses them when the training matrix and the "
               "predictor's parameters have these digests, and chooses them again otherwise")


def settings_digest(X: np.ndarray, params: dict) -> str:
    """sha256 of the matrix (its shape, which cells are missing and the values of the others, as float64) and
    of the predictor's parameters that enter the choice (as JSON, keys sorted)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    miss = np.isnan(X)
    h = hashlib.sha256()
    h.update(json.dumps(list(X.shape)).encode())
    h.update(np.packbits(miss).tobytes())
    h.update(np.where(miss, 0.0, X).tobytes())
    kept = {k: v for k, v in params.items() if k not in NOT_IN_CHOICE}
    h.update(json.dumps(kept, sort_keys=True).encode())
    return h.hexdigest()


def completion_record(r, X: np.ndarray, params: dict) -> Optional[dict]:
    """``prediction.completion_settings`` of the reduction ``r``: the choice and the digest of ``X``, the training
    matrix as ``predict`` reads it back (the embedded one, or the store's when too large to embed), with the
    predictor's ``params`` as the manifest records them; None when there is no choice to record (a predictor without
    one, settings given, or a choice made on a sample of the models)."""
    from ..engine.completion_settings import settings_record

    fixed = r.cv.cache.get("settings")
    chosen = getattr(fixed, "settings_chosen_", None)
    if chosen is None or r.sel.sample is not None:  # a sample's choice is not the one the whole matrix gives
        return None
    rec = settings_record(chosen)
    if rec is None:
        return None
    return {"description": DESCRIPTION, "digest": settings_digest(X, params), **rec}


def stored_settings(manifest: dict, train_X: np.ndarray, est) -> tuple:
    """``(settings, warning)``: the manifest's recorded choice for ``est.fit(train_X, settings=...)``.

    ``(None, None)`` when the manifest records none (written by an older ``reduce``, or nothing to record) or the
    predictor takes none; ``(None, why)`` when the training matrix or the predictor's parameters are not those the
    choice was made for (the choice is then made again, as before the record existed).
    """
    import inspect

    from ..engine.completion_settings import settings_from_record

    rec = (manifest.get("prediction") or {}).get("completion_settings")
    if rec is None or "settings" not in inspect.signature(est.fit).parameters:
        return None, None
    if not isinstance(rec, dict):  # a manifest not validated (predict_from_manifest called on a hand-made dict)
        return None, f"prediction.completion_settings cannot be read (a {type(rec).__name__}, not an object): chosen again"
    params = manifest["prediction"]["predictor"].get("params", {})
    if rec.get("digest") != settings_digest(train_X, params):
        return None, ("the training matrix or the predictor's parameters differ from those reduce chose the "
                      "completion's settings on (prediction.completion_settings): chosen again")
    why = unreadable(rec, min(np.shape(train_X)))
    if why is not None:  # a hand-edited manifest: its digest can still match, what it records cannot be fitted
        return None, f"prediction.completion_settings cannot be read ({why}): chosen again"
    return settings_from_record(rec), None


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v)


def _penalty(v) -> bool:
    """A ridge penalty: finite and not negative (a negative one makes the ridge solve no minimisation)."""
    return _number(v) and v >= 0


def _ranks(v, top: int) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(r, int) and not isinstance(r, bool) and 1 <= r <= top
                                                    for r in v)


def unreadable(rec, top_rank: int) -> Optional[str]:
    """Why the record ``rec`` cannot be fitted (a rank above ``top_rank``, a blend outside [0, 1], a part missing or
    of another type), or None when it can. The digest covers the matrix and the parameters, not the record itself."""
    from ..engine.completion_settings import SCALE_CANDIDATES
    from ..engine.transforms import KINDS

    if not isinstance(rec, dict) or rec.get("scales") not in SCALE_CANDIDATES + KINDS:
        return "its scales are not a transform's name"
    info, cv = rec.get("info"), rec.get("rank_cv")
    if not isinstance(info, dict) or not _number(info.get("cell_blend")) or not 0 <= info["cell_blend"] <= 1:
        return "its cell blend is not a number from 0 to 1"
    ens = info.get("ensemble")
    if ens and not (isinstance(ens, dict) and _penalty(ens.get("lam")) and _ranks(ens.get("ranks"), top_rank)):
        return "its rank ensemble is not a penalty and ranks the matrix allows"
    if cv is not None:
        if not (isinstance(cv, dict) and _ranks([cv.get("rank")], top_rank) and _penalty(cv.get("lam"))
                and isinstance(cv.get("n_folds"), int) and cv["n_folds"] >= 2 and isinstance(cv.get("cv_mse"), list)
                and all(isinstance(t, list) and len(t) == 3 and all(map(_number, t)) for t in cv["cv_mse"])):
            return "its rank search is not a rank the matrix allows, a penalty and its grid"
    return None
