"""The screened aggregate-interval rules, installed by monkeypatching ``newmodel_intervals`` (the product keeps none).

Mondrian bins (Vovk et al. 2005) at the calibration scores' median neighbour distance: each held-out calibration
model's and each new model's distance to its nearest training model, the RMS gap over its observed cells in units of
each column's sd over the fit's training rows; the CV+ bounds (Barber et al. 2021) of a new model use only the scores
of its bin. With ``RUNS`` set, a new model's distance skips the training rows of its own run (``run_groups``); the
calibration folds hold out whole runs, so the calibration side needs no change.
"""
import numpy as np

from harness_ext.methods.engine import newmodel_intervals as ni

RUNS = None  # (runs of the fit's training rows, runs of the new models) for the split's next prediction, or None
STATS = {"models": 0, "far_new": 0, "calls": []}  # calls: (new models, in the far bin) of each call with > 1
_orig_add = ni._ScoreBook.add
_orig_result = ni._calibration_result
_orig_cv = ni.cv_plus_new_models


def neighbour_distances(z, seen, Z_fit, runs_new=None, runs_fit=None) -> np.ndarray:
    """Each row of ``z`` (``seen``: its observed cells) to its nearest row of ``Z_fit``: the root mean square over the
    row's observed cells of the gap in units of each column's sd over ``Z_fit``; with ``runs_new``/``runs_fit``, rows
    of one run are never neighbours. No shared cell (or no other run): 0."""
    z = np.where(seen, z, np.nan)
    sd = np.nanstd(Z_fit, axis=0)
    sd = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
    diff = (z[:, None, :] - Z_fit[None, :, :]) / sd
    ok = np.isfinite(diff)
    n = ok.sum(axis=2)
    msd = np.where(n > 0, np.where(ok, diff ** 2, 0.0).sum(axis=2) / np.maximum(n, 1), np.inf)
    if runs_new is not None:
        msd = np.where(np.asarray(runs_new)[:, None] == np.asarray(runs_fit)[None, :], np.inf, msd)
    out = np.sqrt(msd.min(axis=1)) if msd.shape[1] else np.zeros(len(z))
    return np.where(np.isfinite(out), out, 0.0)


def _add(self, est, t, g, mz, fi, seen):
    _orig_add(self, est, t, g, mz, fi, seen)
    if t.W_all is None:
        return
    target = t.have & ~seen
    ok = (t.tot[0, :, 0] != 0) & target.any(1) & (seen & t.have).any(1)  # the first aggregate's scores, as add's
    rows = self.fits[g[0]][-1][1]
    dists = self.__dict__.setdefault("screen_dists", {})
    dists.setdefault(g, []).append(neighbour_distances(t.Zt[ok], seen[ok], est.Z_[rows]))


def _result(est, book, d, W_all):
    out = _orig_result(est, book, d, W_all)
    cal, rank, blend = out[6], out[3], out[4]
    parts = [v for (r, a), v in getattr(book, "screen_dists", {}).items() if r == rank and float(a) == blend]
    cal["screen_dists"] = np.concatenate(parts[0]) if parts and parts[0] else np.array([])
    assert cal["screen_dists"].size == np.asarray(cal["agg_scores"]).size, "one distance per aggregate score"
    return out


def _cv(est, cal, X_new, z, O, W=None, mondrian=True):
    global RUNS
    lower, upper, agg_lo, agg_hi = _orig_cv(est, cal, X_new, z, O, W, mondrian)
    if agg_lo is None or not cal.get("screen_dists", np.array([])).size:
        return lower, upper, agg_lo, agg_hi
    runs = None
    # only the split's product prediction (its test models on its training fit): the claim's one pseudo-model
    # (frontier_report) has no run and keeps the nearest row
    if RUNS is not None and len(RUNS[0]) == len(est.Z_) and len(RUNS[1]) == len(z):
        runs, RUNS = RUNS, None
        STATS["models"] += len(z)
    _, _, (centres, scales) = ni._fold_predictions(est, cal, z, X_new, O, W)
    d_new = np.stack([neighbour_distances(z, O, est.Z_[rows], *(() if runs is None else (runs[1], runs[0][rows])))
                      for _, rows in cal["fits"]])
    cut = np.median(cal["screen_dists"])
    far_cal, far_new = cal["screen_dists"] > cut, d_new.mean(0) > cut
    if runs is not None:
        STATS["far_new"] += int(far_new.sum())
    if len(z) > 1:  # a split's test models (the claim's one pseudo-model left out)
        STATS["calls"].append((len(z), int(far_new.sum())))
    agg_lo, agg_hi = np.empty(len(z)), np.empty(len(z))
    for b in (False, True):
        i = far_new == b
        if i.any():
            agg_lo[i], agg_hi[i] = ni.cv_plus_bounds(centres[:, i], scales[:, i], np.asarray(cal["agg_scores"])[far_cal == b],
                                                     np.asarray(cal["agg_folds"])[far_cal == b], float(est.level))
    return lower, upper, agg_lo, agg_hi


def install():
    ni._ScoreBook.add = _add
    ni._calibration_result = _result
    ni.cv_plus_new_models = _cv
