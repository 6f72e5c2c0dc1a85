"""Why nested new-model intervals over- or under-cover: calibration modes on the same splits.

Run::

    python benchmarks/quality_calibration_gap.py --matrices crosspred --splits 10 --modes plain,design,same

Protocol (a) of ``quality_holdout.py`` (seeded 80/20 model splits, the subset
chosen as ``reduce`` chooses it, test models predicted from their subset cells),
with only the default predictor, calibrated in every ``--modes`` on the same
split and subset: ``plain`` (calibration models observed on the subset they chose),
``design`` / ``same`` (nested: each fold's models observed on the subset re-selected
without them, by ``prediction_greedy``'s design criterion or by the exact greedy).
``same:n_candidates=4`` (any ``name=int`` pairs after the colon) passes selector
parameters to the in-fold run only: a cheaper exact greedy, for experiments.
``--folds K``: K calibration folds instead of ``reduce``'s (``newmodel_intervals.CALIBRATION_FOLDS``;
more folds: each fold's selection runs on a larger share of the training models).

A nested mode may end in ``-nested`` (its scores only) or ``-pooled`` (each fold's models scored
on the test models' subset as well, both kept: ``newmodel_intervals.POOL_PLAIN_SCORES``, off by
default); bare, the library's default decides.

Per mode: cell and aggregate coverage (mean over splits, as ``quality_holdout.py``
reports it) with the aggregate's bootstrap standard error over the splits (``se``,
``quality_holdout.split_bootstrap``), the aggregate conformal multiplier ``q_agg``, and a less noisy view of
the same question than coverage, which moves in steps of one test model: each test
model's normalised aggregate score (``|truth - prediction| / sd``, the median over the
CV+ fold fits) and its rank ``u`` among the calibration's scores. Calibrated
intervals give ``u`` about uniform: mean about 0.5, and the 90% quantile of the test
scores (``test q90``) close to the calibration's (``cal q90``); ``cal q90 > test q90``
means the calibration scores are too large (over-coverage). Also the CPU seconds of
the fold reselection and how many of the fold subsets' datasets are in the subset
the test models ran (the overlap).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import quality_holdout as Q  # noqa: E402 - shares the protocol's matrices, subsets and reselection


def parse_mode(mode: str):
    """``"same:n_candidates=4"`` -> ``("same", {"n_candidates": 4})``."""
    name, _, rest = mode.partition(":")
    return name, Q.parse_selector_params(rest)


def test_scores(est, Xin, W, agg_true_raw):
    """Each test model's normalised aggregate score: median over the CV+ fold fits of ``|truth - pred| / sd``."""
    from harness_ext.methods.engine.newmodel_intervals import _fold_predictions

    cal = est._cal_cache[1][6]  # the calibration predict_new_models just ran (its per-pattern cache)
    O = ~np.isnan(Xin)
    _, _, (agg, agg_sd) = _fold_predictions(est, cal, est.transform_.transform(Xin), Xin, O, W)
    return np.median(np.abs(agg_true_raw - agg) / agg_sd, 0), cal["agg_scores"]


def run(raw, meta, n_splits, modes, n_folds=None):
    from harness_ext.methods.pounce import make_predictor, split_models

    X = raw.to_numpy(dtype=float)
    m, d = X.shape
    k = max(2, int(round(0.1 * d)))
    a_sc, c_sc = Q.aggregate_scale(X, meta)
    res = {v: {"cell": [], "agg": [], "q_agg": [], "cpu": [], "overlap": [], "u": [], "t": [], "cal_q90": []}
           for v in modes}
    for s in range(n_splits):
        tr, te = split_models(m, 0.2, random_state=s)
        Xtr, Xte = X[tr], X[te]
        subset, _ = Q.choose_subset(Xtr, k, s, Q.DEFAULT_SELECTOR, "lowrank", a_sc, c_sc)
        _, Xin, _, usable, target, W, C, agg_true = Q.test_targets(Xte, subset, a_sc, c_sc)
        for v in modes:
            name, extra = parse_mode(v)
            t0 = time.process_time()
            rs = None if name == "plain" else Q.product_reselect(Xtr, k, s, Q.DEFAULT_SELECTOR, "lowrank", a_sc, c_sc,
                                                                  name, extra, n_folds)
            r = res[v]
            r["cpu"].append(time.process_time() - t0)
            if rs is not None:
                r["overlap"].append(np.mean([len(set(sub) & set(subset)) / k for sub in rs.subsets]))
            est = make_predictor("lowrank", random_state=s).fit(Xtr)
            p = est.predict_new_models(Xin, weights=W, reselect=rs)
            r["cell"].append(float(((Xte >= p.lower) & (Xte <= p.upper))[target].mean()))
            r["agg"].append(float(((agg_true >= p.aggregate_lower + C) & (agg_true <= p.aggregate_upper + C))[usable].mean()))
            r["q_agg"].append(float(p.q_aggregate))
            t, cal = test_scores(est, Xin, W, agg_true - C)
            t = t[usable]
            r["t"].extend(t)
            r["u"].extend((cal[None, :] < t[:, None]).mean(1))
            r["cal_q90"].append(float(np.quantile(cal, 0.9)))
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matrices", default="crosspred")
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--modes", default="plain,design,same", help="';'-separated when a mode has parameters")
    ap.add_argument("--folds", type=int, default=None,
                    help="calibration folds of the nested modes (default reduce's, newmodel_intervals.CALIBRATION_FOLDS)")
    ap.add_argument("--db", default=None, help="reuse DuckDB stores (as quality_holdout.py --db)")
    ap.add_argument("--json", default=None, help="write every mode's per-split coverages to this JSON file")
    args = ap.parse_args(argv)
    modes = args.modes.split(";") if ";" in args.modes or ":" in args.modes else args.modes.split(",")
    print(f"{'matrix':<14}{'mode':<22}{'cell cov':>9}{'agg cov':>9}{'se':>7}{'p05':>6}{'q_agg':>7}{'mean u':>8}"
          f"{'cal q90':>8}{'test q90':>9}{'overlap':>9}{'cpu s':>7}")
    out = {}
    for name, (raw, meta) in Q.load_matrices(args.matrices.split(","), db=args.db).items():
        res = run(raw, meta, args.splits, modes, args.folds)
        for v, r in res.items():
            ov = f"{np.mean(r['overlap']):.2f}" if r["overlap"] else "-"
            se = Q.split_bootstrap(r["agg"])[0]
            print(f"{name:<14}{v:<22}{np.mean(r['cell']):>9.3f}{np.mean(r['agg']):>9.3f}{se:>7.3f}"
                  f"{np.percentile(r['agg'], 5):>6.2f}{np.mean(r['q_agg']):>7.3f}{np.mean(r['u']):>8.3f}"
                  f"{np.mean(r['cal_q90']):>8.3f}{np.quantile(r['t'], 0.9):>9.3f}{ov:>9}{np.mean(r['cpu']):>7.1f}", flush=True)
        out[name] = {v: {key: [float(x) for x in r[key]] for key in ("cell", "agg", "cal_q90", "u", "t")}
                     for v, r in res.items()}
        if args.json:  # partial results survive an interrupted long run
            Path(args.json).write_text(json.dumps(out) + "\n")
    from harness_ext.methods.engine.newmodel_intervals import CALIBRATION_FOLDS

    print(f"\n{args.splits} splits (a), {args.folds or CALIBRATION_FOLDS} calibration folds, default predictor only; "
          f"se: bootstrap standard error over the splits of the aggregate coverage")
    return 0


if __name__ == "__main__":
    sys.exit(main())
