"""Choosing a :class:`~harness_ext.methods.engine.completion.LowRankCompleter`'s settings by cross-validation.

The transform per dataset (the detected one or a z-score of every column), the rank and penalty, the cell blend
weight and the rank ensemble, each chosen on held-out observed cells of the matrix given to ``fit``
(:func:`choose_scales`), within two flops budgets: the direct regression of every row's cells
(:data:`~harness_ext.methods.engine.direct_ridge.CELL_FLOPS_BUDGET`) and the rank/penalty search
(:data:`SETTINGS_FLOPS_BUDGET`), past which the search runs once on a seeded sample of models and the choice
records why (``info["settings_rule"]``). The functions take the estimator, whose parameters they read.
"""

from __future__ import annotations

from copy import deepcopy

import numpy as np

from ...base import check_matrix, limit_threads
from .cell_cv import _cell_cv_error
from .direct_ridge import BLEND_GRID, CELL_FLOPS_BUDGET, cell_regression_flops
from .lowrank import MAX_CV_ROWS, select_rank_lam

#: Transforms compared by ``scales="cv"``: the detected ones (logit for bounded scores) and a z-score of every column.
SCALE_CANDIDATES = ("auto", "standardise")
#: Flops the rank/penalty search may spend (:func:`settings_search_flops`: every transform, fold, rank and penalty,
#: counted at the search's sweep limit). Past it (wide matrices: a 1,000 x 2,000 sample takes 9e11) the grid is
#: searched once, for the first transform, on a seeded sample of models. About half a minute of one core; no real
#: matrix of the repository's data comes near it (the largest, Pythia MMLU's 838 x 57, takes 2e10).
SETTINGS_FLOPS_BUDGET = 1e11
#: Models the rank/penalty and transform cross-validation keeps past :data:`SETTINGS_FLOPS_BUDGET`, at least.
MIN_SETTINGS_ROWS = 200
#: ALS sweep limit of :func:`~harness_ext.methods.engine.lowrank.select_rank_lam` (the flops estimate counts it).
SEARCH_SWEEPS = 60


def fixed_settings(est, X):
    """A clone of ``est`` with the settings :func:`choose_scales` chooses on ``X`` fixed
    (:meth:`~harness_ext.methods.engine.completion.LowRankCompleter.with_fixed_settings`)."""
    from ...base import clone

    copy = clone(est)
    if est.rank == "auto" or est.lam == "auto" or est.scales == "cv" or est.cell_blend == "auto":
        with limit_threads():
            X = check_matrix(X)
            spec, info, cv = choose_scales(est, X)
        copy.set_params(scales=spec, cell_blend=info["cell_blend"])
        if "cell_blend_rule" in info and est.blend == "auto":  # wide: the copy folds in only (see choose_scales)
            copy.set_params(blend=0.0)
        if cv is not None:
            copy.set_params(rank=int(cv["rank"]), lam=float(cv["lam"]))
        # What the flops budget cut from the search, for the manifest (None: nothing).
        copy.settings_rule_ = info.get("settings_rule")
        # The whole choice, for the manifest: predict fits on the same matrix and reuses it (settings_record).
        copy.settings_chosen_ = (spec, info, cv)
    return copy


def settings_record(chosen) -> dict:
    """``choose_scales``' ``(spec, info, rank_cv)`` as plain JSON (:func:`settings_from_record` reads it back), or
    None when the transform spec is not a name (a list or mapping given as ``scales``: left to be chosen again)."""
    spec, info, cv = chosen
    if not isinstance(spec, str):
        return None
    rank_cv = None
    if cv is not None:
        # The grid's errors only describe the search (describe()); rounded as info["error"] is (8 digits).
        rank_cv = {"rank": int(cv["rank"]), "lam": float(cv["lam"]), "n_folds": int(cv["n_folds"]),
                   "cv_mse": [[int(r), float(lam), round(float(v), 8)] for (r, lam), v in cv["cv_mse"].items()]}
    return {"scales": spec, "info": info, "rank_cv": rank_cv}


def settings_from_record(rec: dict) -> tuple:
    """``(spec, info, rank_cv)`` from :func:`settings_record`'s dict, as :meth:`LowRankCompleter.fit` takes it."""
    cv = rec.get("rank_cv")
    if cv is not None:
        cv = {"rank": int(cv["rank"]), "lam": float(cv["lam"]), "n_folds": int(cv["n_folds"]),
              "cv_mse": {(int(r), float(lam)): float(v) for r, lam, v in cv["cv_mse"]}}
    # A copy: the fitted estimator's record is its own, not the manifest's (which predict's JSON still writes).
    return rec["scales"], deepcopy(rec["info"]), cv


def choose_scales(est, X):
    """``(spec, info, rank_cv)``: the transform spec, the CV behind it and the cell blend, the rank/lam CV.

    Every candidate transform (``SCALE_CANDIDATES`` with ``scales="cv"``, else the
    one given) gets its own rank/penalty search; then ``cv_folds`` folds of
    held-out observed cells at that setting are scored on the datasets' own
    scales (median over the held-out cells of the absolute error over each
    column's sd, so scales weigh alike and a few broken runs do not decide;
    :func:`~harness_ext.methods.engine.cell_cv._cell_cv_error`) for every cell blend weight (``BLEND_GRID``
    with ``cell_blend="auto"``). Candidates giving the same transform are tried
    once. ``rank_cv`` is None when rank and penalty are given. The transform is
    the single setting's best; at that transform, with ALS and a searched rank, the
    average of every rank's fit (:class:`~harness_ext.methods.engine.lowrank.RankEnsemble`)
    competes with the single fit for the cells (``info["ensemble"]``; new models
    still fold into the single fit).

    With ``cell_blend="auto"``, when one direct regression of every row's
    cells (the calibration's: all rows, a ``1/calibration_folds`` fold held
    out; :func:`~harness_ext.methods.engine.direct_ridge.cell_regression_flops`)
    would exceed :data:`~harness_ext.methods.engine.direct_ridge.CELL_FLOPS_BUDGET`
    flops (wide matrices: a pattern costs ``O(k^3)`` in its observed cells),
    the cell blend is 0 (low-rank only) and ``info["cell_blend_rule"]`` says so;
    so is the uncalibrated new-model blend of selection
    (:meth:`~harness_ext.methods.engine.completion.LowRankCompleter._uncalibrated_blend`).
    The calibrated new-model blend (``predict_new_models``) is still chosen by CV.

    When the rank/penalty search would exceed :data:`SETTINGS_FLOPS_BUDGET`
    flops (:func:`settings_search_flops`), the grid is searched once, for
    the first candidate transform, and every later candidate is compared at
    its rank and penalty; that search and the transform's held-out cells use
    a seeded sample of models (as many as the budget pays for, at least
    :data:`MIN_SETTINGS_ROWS`); ``info["settings_rule"]`` says so.
    """
    auto = est.rank == "auto" or est.lam == "auto"
    specs = SCALE_CANDIDATES if est.scales == "cv" else (est.scales,)
    rows, settings_rule = settings_rows(est, X.shape, len(specs)) if auto else (None, None)
    blends = BLEND_GRID if est.cell_blend == "auto" else (est._fixed_blend(est.cell_blend),)
    rule = None
    if est.cell_blend == "auto":
        flops = cell_regression_flops(~np.isnan(X), 1.0 / max(int(est.calibration_folds), 2))
        if flops > CELL_FLOPS_BUDGET:
            blends = (0.0,)
            rule = {"reason": "direct regression of every row's cells over the flops budget: low-rank only",
                    "flops": float(f"{flops:.3g}"), "budget": float(CELL_FLOPS_BUDGET)}
    seen, err, cvs, members = set(), {}, {}, {}
    for spec in specs:
        t, tt = est._transform_for(spec, X)
        kinds = tuple(t.kinds_())
        if kinds in seen:
            continue
        seen.add(kinds)
        Z = tt.transform(X)
        Xs, Zs = (X, Z) if rows is None else (X[rows], Z[rows])
        if not auto:
            cvs[spec] = {"rank": int(est.rank), "lam": float(est.lam)}
        else:  # past the budget, later transforms take the first one's search
            cvs[spec] = cvs[next(iter(cvs))] if settings_rule and cvs else search_rank_lam(est, Zs)
        # ALS with a searched rank: the average of every rank's fit at the chosen penalty is a candidate too.
        ens = ([r for r in sorted({int(r) for r in est.ranks}) if r < min(Z.shape)]
               if est.method == "als" and est.rank == "auto" else [])
        members[spec] = {"ranks": ens, "lam": float(cvs[spec]["lam"])} if len(ens) > 1 else None
        if len(specs) == 1 and len(blends) == 1 and members[spec] is None:
            err[(spec, blends[0], False)] = float("nan")
            break
        e = _cell_cv_error(Xs, Zs, tt, int(cvs[spec]["rank"]), float(cvs[spec]["lam"]), est, blends, members[spec])
        err.update({(spec, a[1], True) if isinstance(a, tuple) else (spec, a, False): v for a, v in e.items()})
    # The transform by the single setting (new models fold into it), then blend and ensemble at that transform.
    spec = min((k for k in err if not k[2]), key=lambda k: (round(err[k], 12), specs.index(k[0]), k[1]))[0]
    best = min((k for k in err if k[0] == spec), key=lambda k: (round(err[k], 12), k[1], k[2]))
    info = {"chosen": best[0], "cell_blend": float(best[1]), "n_folds": int(est.cv_folds),
            "ensemble": members.get(best[0]) if best[2] else None,
            "error": [{"scales": sp, "cell_blend": a, **({"ensemble": True} if en else {}), "error": round(float(v), 8)}
                      for (sp, a, en), v in err.items()]}
    if rule is not None:
        info["cell_blend_rule"] = rule
    if settings_rule is not None:
        info["settings_rule"] = settings_rule
    return best[0], info, (cvs[best[0]] if auto else None)

def settings_rows(est, shape, n_specs: int):
    """``(rows, rule)``: the seeded sample of models the settings search uses and why (``(None, None)``: all of
    them, within :data:`SETTINGS_FLOPS_BUDGET`; see :func:`choose_scales`)."""
    m, d = shape
    ranks = est.ranks if est.rank == "auto" else (int(est.rank),)
    n_lams = len(est.lams) if est.lam == "auto" else 1
    n = min(m, MAX_CV_ROWS)
    flops = settings_search_flops(n, d, ranks, n_lams, int(est.cv_folds), n_specs)
    if flops <= SETTINGS_FLOPS_BUDGET:
        return None, None
    per_row = settings_search_flops(1, d, ranks, n_lams, int(est.cv_folds), 1)
    keep = int(min(n, max(MIN_SETTINGS_ROWS, SETTINGS_FLOPS_BUDGET // per_row)))
    rows = np.sort(np.random.default_rng(est.random_state + 101).choice(m, keep, replace=False))
    return rows, {"reason": "rank/penalty search over the flops budget: one grid search (the first transform's) "
                            "on a seeded sample of models",
                  "rows": keep, "of": int(m), "transforms_searched": 1, "flops": float(f"{flops:.3g}"),
                  "budget": float(SETTINGS_FLOPS_BUDGET)}

def search_rank_lam(est, Z) -> dict:
    ranks = est.ranks if est.rank == "auto" else (int(est.rank),)
    lams = est.lams if est.lam == "auto" else (float(est.lam),)
    return select_rank_lam(Z, ranks=ranks, lams=lams, n_folds=est.cv_folds, random_state=est.random_state,
                           lam_bias=est.lam_bias)


def settings_search_flops(m: int, d: int, ranks, n_lams: int, n_folds: int, n_specs: int,
                          sweeps: int = SEARCH_SWEEPS) -> float:
    """Flops of the rank/penalty search on ``m`` x ``d``, every sweep run: an ALS sweep at rank ``r`` costs about
    ``(4 (r+1)^2 + 14) m d`` (two batched Gram products of ``(r+1)^2`` columns, right-hand sides and residuals)."""
    per_sweep = sum(4.0 * (int(r) + 1) ** 2 + 14.0 for r in ranks)
    return float(n_specs) * n_folds * n_lams * sweeps * per_sweep * m * d
