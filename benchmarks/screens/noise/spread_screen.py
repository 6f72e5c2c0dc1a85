"""CRITERION_spread.md's Q1 and Q2: synthetic populations whose training models differ by less than the cell noise,
and stronger new models; aggregate coverage of the new models with no join, the point joined (the thirty-fourth
session's rule), rule A (the reading's two-sided interval joined) and variant B (its one-sided level).

Usage: python benchmarks/screens/noise/spread_screen.py

The rules are not in the product (screened, not shipped: benchmarks/HISTORY.md). This script carries rule B's code,
`reading_spread` and the widening, and patches them in; A is B at the two-sided quantile.
"""
import sys
import warnings

import numpy as np

import harness_ext.methods.engine.frontier as fr
from harness_ext.methods.engine.completion import LowRankCompleter
from harness_ext.methods.engine.frontier_unidentified import LOW_SHARE, Unidentified, unshrunk_reading

POINT = fr.join_unshrunk  # the product's rule: the reading's point joined


# --- rule B as it stood in frontier_unidentified.py when screened (16:11 UTC) ---
def SPREAD_impl(X_fit, X_new, O, level: float):
    """Half-width factors of the unshrunk reading (module docstring): ``(t * sigma, n)`` per new row, with ``sigma``
    the sample sd of its observed shifts from the fitted models' means and ``t`` Student's *one-sided* ``level``
    quantile with ``n - 1`` degrees of freedom; 0 for a row with fewer than two observed datasets.

    One-sided because the reading is joined to an interval that lies on its other side: the union's miss on the
    reading's side is the reading's one tail alone (a two-sided 90% half-width covered 0.98 of the stronger models of
    ``benchmarks/screens/noise/spread_screen.py``)."""
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a dataset no fitted model has: no shift from it
        mu = np.nanmean(X_fit, 0)
        on = O & np.isfinite(mu)[None, :] & np.isfinite(X_new)
        s = np.where(on, X_new - mu[None, :], np.nan)
        n = on.sum(1)
        sd = np.where(n >= 2, np.nanstd(s, 1, ddof=1), 0.0)
    t = stats.t.ppf(float(level), np.maximum(n - 1, 1))
    return np.where(n >= 2, t * sd, 0.0), n


def _join(out, lo, hi, rows, centre, half):
    out[lo][rows] = np.fmin(out[lo][rows], centre - half)
    out[hi][rows] = np.fmax(out[hi][rows], centre + half)


def join_unshrunk(est, X_new, O, W, W_extra, out, dist, cals=None):
    """Widen (never narrow) the flagged-above rows' intervals in ``out`` to hold :func:`unshrunk_reading`'s interval
    (module docstring), when the calibration's explained share (``est.calibration_share_``) is below
    :data:`LOW_SHARE`; returns an :class:`Unidentified` record (also ``cals["unidentified"]``), or None when the rule
    does not apply."""
    share = getattr(est, "calibration_share_", None)
    rows = np.flatnonzero(np.asarray(dist) > 0)
    if share is None or share >= LOW_SHARE or rows.size == 0:
        return None
    o = O[rows]
    x = unshrunk_reading(est.X_, X_new[rows], o)
    ts, n = reading_spread(est.X_, X_new[rows], o, float(est.level))
    ok = np.isfinite(x) & ~o
    cell = ts[:, None] * np.sqrt(1.0 + 1.0 / np.maximum(n, 1))[:, None]
    out["lower"][rows] = np.where(ok, np.fmin(out["lower"][rows], x - cell), out["lower"][rows])
    out["upper"][rows] = np.where(ok, np.fmax(out["upper"][rows], x + cell), out["upper"][rows])
    filled = np.where(np.isfinite(x), x, out["mean"][rows])  # no reading of its own: the prediction stands in
    if W is not None and out.get("agg") is not None:
        _join(out, "agg_lo", "agg_hi", rows, (filled * W[rows]).sum(1), ts * _weight_root(W[rows], ok, n))
    if W_extra is not None and out.get("ex") is not None:
        We = np.atleast_2d(W_extra)
        half = np.stack([_weight_root(np.broadcast_to(w, o.shape), ok, n) for w in We], 1)
        _join(out, "ex_lo", "ex_hi", rows, filled @ We.T, ts[:, None] * half)
    rec = Unidentified(share=float(share), raised=rows.tolist())
    if cals is not None:
        cals["unidentified"] = rec
    return rec


def _weight_root(W, ok, n):
    """``sqrt(sum_h W_h^2 + (sum_h W_h)^2 / n)`` over each row's predicted datasets ``h`` (``ok``)."""
    Wh = np.where(ok, W, 0.0)
    return np.sqrt((Wh ** 2).sum(1) + Wh.sum(1) ** 2 / np.maximum(n, 1))


SPREAD = SPREAD_impl
reading_spread = SPREAD
JOIN = join_unshrunk
fu = sys.modules[__name__]  # set_rule swaps this module's reading_spread
GENERATORS = {  # (m, n, d, observed, train ability high, new ability low, high, noise)
    "Q1": (150, 100, 16, 5, 0.01, 0.05, 0.15, 0.03),
    "Q2": (150, 100, 30, 8, 0.01, 0.05, 0.20, 0.05),
}


def population(seed, m, n, d, a_train, lo, hi, noise):
    rng = np.random.default_rng(seed)
    ability = np.concatenate([rng.uniform(0, a_train, m), rng.uniform(lo, hi, n)])
    load = rng.uniform(0.5, 1.5, d)
    return ability[:, None] * load[None, :] + rng.normal(0, noise, (m + n, d))


def set_rule(rule):
    fr.join_unshrunk = {"none": lambda *a, **k: None, "point": POINT}.get(rule, JOIN)
    if rule == "point":
        return
    elif rule == "A":  # the two-sided quantile: one-sided at (1 + level) / 2
        fu.reading_spread = lambda X_fit, X_new, O, level: SPREAD(X_fit, X_new, O, (1 + level) / 2)
    else:  # B, the product
        fu.reading_spread = SPREAD


def run(gen, rule):
    set_rule(rule)
    m, n, d, k, a_train, lo, hi, noise = GENERATORS[gen]
    w = np.full(d, 1 / d)
    rows = []
    for seed in (1, 2, 3, 4):
        T = population(seed, m, n, d, a_train, lo, hi, noise)
        new = T[m:].copy()
        new[:, k:] = np.nan
        est = LowRankCompleter(random_state=0).fit(T[:m])
        p = est.predict_new_models(new, weights=w)
        truth = T[m:] @ w
        cov = float(((p.aggregate_lower <= truth) & (truth <= p.aggregate_upper)).mean())
        rows.append((cov, float((p.aggregate_upper - p.aggregate_lower).mean()), est.calibration_share_))
    return rows


if __name__ == "__main__":
    if sys.argv[1:2] == ["--round-trip"]:  # Q3: rule B in quality_round_trip.py, its other arguments passed on
        sys.path.insert(0, "benchmarks")
        import quality_round_trip

        set_rule("B")
        sys.argv = ["quality_round_trip.py"] + sys.argv[2:]
        quality_round_trip.main()
        sys.exit()
    for gen in GENERATORS:
        for rule in ("none", "point", "A", "B"):
            r = run(gen, rule)
            print(gen, f"{rule:6s}", "cover", [round(x[0], 3) for x in r], "mean", round(float(np.mean([x[0] for x in r])), 3),
                  "width", round(float(np.mean([x[1] for x in r])), 4), "share", [round(x[2], 3) for x in r])
