"""BenchPress's completion of a new model's row as a point candidate of the frontier folds."""

from __future__ import annotations

import numpy as np

from harness_ext.methods.engine import benchpress as bp
from harness_ext.methods.engine import frontier, frontier_calibration
from harness_ext.methods.engine.completion import LowRankCompleter
from harness_ext.methods.engine.frontier_benchpress import benchpress_fill


def _bias_population(m=120, d=10, seed=0, level_sd=2.0, factor_sd=0.3, noise=0.1):
    """Proportions from BenchPress's own model on the logit scale: a level per model, a rank-2 interaction, noise;
    the level (``level_sd``) dominates, so the strongest models are the highest-level ones."""
    rng = np.random.default_rng(seed)
    level = rng.normal(0, level_sd, m)
    U, V = rng.normal(0, factor_sd, (m, 2)), rng.normal(0, factor_sd, (d, 2))
    logit = level[:, None] + rng.normal(0, 0.5, d) + U @ V.T + rng.normal(0, noise, (m, d))
    return 1 / (1 + np.exp(-logit)), level


def test_fill_scales_on_the_fitted_models_or_as_published():
    """``scale="all"`` is BenchPress's ``--add-model`` (the published completion of the grown matrix); ``"fit"``
    z-scores on the fitted models alone, so a stronger row's subset cells do not shrink its completion."""
    X, level = _bias_population(m=110, seed=1)
    order = np.argsort(level)
    keep = np.zeros(X.shape[1], bool)
    keep[:4] = True
    X_new = np.where(keep, X[order[-30:]], np.nan)
    published = bp.complete_units(np.vstack([X[order[:80]], X_new]))[80:]
    assert np.array_equal(benchpress_fill(X[order[:80]], X_new, scale="all"), published)
    fit = benchpress_fill(X[order[:80]], X_new, scale="fit")
    err = {k: float((v - X[order[-30:]])[:, ~keep].mean()) for k, v in (("fit", fit), ("all", published))}
    assert err["all"] < err["fit"] < 0  # both too low at the frontier; the published scaling more so
    assert benchpress_fill(X, X[:0]).shape == (0, X.shape[1])


def test_benchpress_candidate_is_computed_and_chosen_where_it_is_best(monkeypatch):
    """Off by default; added to the candidates, on a population drawn from BenchPress's own model (a dominant level
    per model), fitted on the weakest 80 of 120 and observed on 8 of 10 datasets, the completion is a candidate of
    every frontier fold, its held-out aggregate error is the lowest of the candidates', the folds choose it, and the
    flagged new models' prediction uses it (measured: fold loss 0.975 times the best other candidate's, chosen at
    weight 0.75)."""
    assert "benchpress" not in frontier.CANDIDATES and "benchpress" in frontier.OPTIONAL_CANDIDATES
    monkeypatch.setattr(frontier_calibration, "CANDIDATES", frontier.CANDIDATES + frontier.OPTIONAL_CANDIDATES)
    X, level = _bias_population()
    order = np.argsort(level)
    est = LowRankCompleter(random_state=0).fit(X[order[:80]])
    keep = np.zeros(X.shape[1], bool)
    keep[np.linspace(0, X.shape[1] - 1, 8).astype(int)] = True
    w = np.full(X.shape[1], 1.0 / X.shape[1])
    records = frontier.frontier_folds(est, keep, 1)
    assert records
    for rec in records:  # computed on each fold's own fitted models
        z = est.transform_.transform(benchpress_fill(rec["X_fit"], rec["x_in"]))
        assert np.allclose(rec["cands"]["benchpress"], z)
    weighted = frontier._weighted(est, records, w, None)
    loss = {c: min(sum(frontier._fold_loss(est, r, w, c, a) for r in weighted) for a in frontier.FRONTIER_WEIGHTS[1:])
            for c in frontier_calibration.CANDIDATES}
    assert min(loss, key=loss.get) == "benchpress"
    cal = frontier.calibrate_frontier(est, keep, w, 1, records=records)
    assert cal.candidate == "benchpress" and cal.weight > 0
    X_new = np.where(keep, X[order[-30:]], np.nan)
    p = est.predict_new_models(X_new, weights=w)
    assert est.frontier_[1].candidate == "benchpress" and (p.frontier > 0).any()
