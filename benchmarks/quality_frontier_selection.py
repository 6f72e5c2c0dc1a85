"""Frontier-robust selection: does a selection rule aimed at stronger models predict the frontier better?

Run::

    HARNESS_EXT_SHARED_DATA=/work/shared/data nice -n 10 python benchmarks/quality_frontier_selection.py
    HARNESS_EXT_SHARED_DATA=/work/shared/data python benchmarks/quality_frontier_selection.py --matrices helm_classic

``prediction_greedy`` chooses the subset whose cross-validated error (shuffled model folds) is lowest on the training
models. On the frontier split of ``quality_holdout.py --protocols f`` (fit and select on the weakest 50% of the models
by full aggregate, predict the strongest 30%) that subset predicted no better than a random one of the same size. This
screen compares, on every frontier row the project measures (the six matrices of ``quality_holdout.py``, Pythia's
strongest and newest checkpoints, and the five more of ``quality_frontier_prior.py``) and on protocol (a)'s random
80/20 splits (the cost inside the population), four selection rules, all with the default predictor ``lowrank`` and
its point prediction (no calibration):

* ``V0``: the default objective (profile MSE + aggregate MSE over 5 shuffled model folds) with the product's search
  (every ``k``-subset when enumerable, else greedy on the design shortlist); ``same`` says whether it chose the
  subset ``quality_holdout.choose_subset`` chooses;
* ``V1``, saturation: a dataset whose ceiling is known (a declared range, or training scores inside [0, 1]) and whose
  training models leave it little headroom, ``(100 - q90) / (q90 - q10) < HEADROOM`` on chance-normalised points,
  is a candidate only when fewer than ``k`` other datasets remain (demotions counted per split);
* ``V2``, top fold: the objective is the mean of the default objective and the same objective on one fold holding out
  the strongest ``TOP_SHARE`` of the training models by full aggregate (fitted on the rest);
* ``V3``: both;
* ``V4``, tie-break (added after V1-V3 were measured): the default objective, but among the subsets (or a greedy
  step's candidates) within ``TIE_TOL`` of the best objective, the one with the fewest ``V1``-saturated datasets.
* ``V5``, chosen per split on the training models (added after V1-V4 were measured): ``V1``'s subset where it differs
  from ``V0``'s, its default objective (the 5 shuffled folds) is within ``V5_TOL`` of ``V0``'s (the squared 5% the
  issue allows inside the population), and its objective on the top fold (the strongest ``TOP_SHARE`` of the training
  models held out) is lower than ``V0``'s; else ``V0``'s.

Every setting is fixed before the run (nothing is tuned on the rows). The verdict applies the acceptance criterion
written before the first run (benchmarks/HISTORY.md, 2026-11-30): random-split aggregate MAE within +5% of V0's on every
matrix, the mean frontier ratio to V0 at most 0.95, no frontier row worse by more than 10%.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("HARNESS_EXT_NO_PROGRESS", "1")
os.environ.setdefault("HARNESS_EXT_LOAD_PLUGINS", "")
import quality_holdout as qh  # noqa: E402 - the protocols' matrices, splits and targets

#: Saturation: a known-ceiling dataset with (100 - q90) / (q90 - q10) below this on the training models is demoted.
HEADROOM = 0.25  # the product's default, harness_ext.methods.prowl.saturation.HEADROOM
#: Top fold: the strongest share of the training models by full aggregate, held out once.
TOP_SHARE = 0.3
#: Top fold's weight in V2's objective (the rest: the default objective).
TOP_WEIGHT = 0.5
#: V4 (added after V1-V3 were measured): among subsets within this share of the best objective, fewest saturated.
TIE_TOL = 0.10
#: V5 (added after V1-V4 were measured): V1 only when its shuffled-fold objective is within this factor of V0's.
V5_TOL = 1.05 ** 2
VARIANTS = ("V0", "V1", "V2", "V3", "V4", "V5")
MATRICES = ("helm_classic", "open_llm_v2", "crosspred", "pythia_mmlu", "tsc_bakeoff", "benchbench",
            "livebench", "hydrox", "opencompass", "rewardbench", "rewardbench_2")
#: The acceptance criterion, fixed before the first run.
MAX_RANDOM_COST, MAX_MEAN_RATIO, MAX_ROW_RATIO = 1.05, 0.95, 1.10


def saturated(X_train, a_sc, c_sc, meta):
    """Boolean mask of the datasets ``V1`` demotes, and each dataset's headroom (NaN where the ceiling is unknown):
    the product's rule (:func:`harness_ext.methods.prowl.saturation.saturated`, ``prediction_greedy``'s
    ``demote_saturated``) on the selector's scale, with the ceilings ``quality_holdout.py --selector-params``
    gives it."""
    from harness_ext.methods.prowl.saturation import saturated as product_saturated

    return product_saturated((X_train * a_sc + c_sc) / 100.0, qh.known_ceilings(X_train, meta), HEADROOM)


def top_fold(N):
    """One fold: ``(rest, strongest TOP_SHARE)`` of the rows of ``N`` by their mean observed score."""
    agg = np.nanmean(N, 1)
    order = np.argsort(agg, kind="stable")
    n_top = max(1, int(round(TOP_SHARE * len(N))))
    return [(np.sort(order[:-n_top]), np.sort(order[-n_top:]))]


def _pick(obj, n_avoid, tol):
    """Index of the lowest objective, or with ``tol``: of the fewest avoided datasets among those within
    ``(1 + tol)`` of the lowest (then the lowest objective)."""
    obj = np.where(np.isfinite(obj), obj, np.inf)
    best = int(np.argmin(obj))
    if not tol or not np.isfinite(obj[best]):
        return best
    near = np.flatnonzero(obj <= (1.0 + tol) * obj[best])
    return int(near[np.lexsort((obj[near], n_avoid[near]))[0]])


def search(N, k, allowed, objective, avoid=None, tol=0.0):
    """The product's search (:func:`harness_ext.methods.prowl.predictive.prediction_greedy_order` with ``size=k``)
    restricted to the ``allowed`` datasets while ``k`` of them remain: every ``k``-subset when enumerable within the
    product's budgets, else ``k`` greedy steps, each scoring the design criterion's best candidates exactly.
    ``avoid`` and ``tol``: ``V4``'s tie-break (:func:`_pick`)."""
    from harness_ext.methods.prowl import predictive as pr
    from harness_ext.methods.engine.subset_cv import score_flops

    n, d = N.shape
    allowed = allowed if allowed.sum() >= k else np.ones(d, bool)
    cols = np.flatnonzero(allowed)
    n_sub = math.comb(len(cols), k)
    if 2 <= k < d and n_sub <= pr.EXHAUSTIVE_MAX_SUBSETS and n_sub * score_flops(n, d) <= pr.EXHAUSTIVE_FLOPS_BUDGET:
        subsets = [list(c) for c in itertools.combinations(cols.tolist(), k)]
        obj = objective(subsets)
        n_avoid = np.array([avoid[s].sum() for s in subsets]) if avoid is not None else np.zeros(len(subsets))
        return np.array(subsets[_pick(obj, n_avoid, tol)])
    budget = pr.search_budgets(n, d, k, "auto", 12, 20)
    w = np.full(d, 1.0 / d)
    V, s2 = pr.ppca_loadings(N)
    K = V @ V.T
    order = []
    chosen = np.zeros(d, bool)
    for _ in range(k):
        fits = ~chosen & allowed if (~chosen & allowed).any() else ~chosen
        gains = np.where(fits, pr.design_gains(K, s2, w, 1.0), -np.inf)
        cand = np.argsort(-gains, kind="stable")[:min(int(fits.sum()), budget["n_candidates"])]
        obj = objective([order + [int(c)] for c in cand])
        c = int(cand[_pick(obj, avoid[cand].astype(int) if avoid is not None else np.zeros(len(cand)), tol)])
        order.append(c)
        chosen[c] = True
        pr._condition_on(K, c, s2)
    return np.sort(order)


def objectives(N, seed):
    """``{"random": f, "top": f}``: each maps subsets to the selection objective on its folds (shared fits)."""
    from harness_ext.methods.engine.subset_cv import model_folds, shared_cache
    from harness_ext.methods.pounce import make_predictor
    from harness_ext.methods.prowl.predictive import selection_objective

    est = make_predictor("lowrank")
    w = np.full(N.shape[1], 1.0 / N.shape[1])
    folds = model_folds(len(N), 5, seed)
    cache_r = shared_cache(N, est, folds)  # the product's selection reuses these fits
    cache_t = {}
    top = top_fold(N)

    def random(subsets):
        return selection_objective(N, subsets, est, folds, w, 1.0, cache_r)

    def topf(subsets):
        if "settings" not in cache_t and "settings" in cache_r:
            cache_t["settings"] = cache_r["settings"]  # the settings chosen once on every training model
        return selection_objective(N, subsets, est, top, w, 1.0, cache_t)

    return {"random": random, "top": topf}


def per_split_choice(obj, s0, s1):
    """``V5``: ``s1`` (``V1``'s subset) when it differs from ``s0`` (``V0``'s), costs at most ``V5_TOL`` on the
    shuffled folds' objective and predicts the training models' top fold better; else ``s0``."""
    if set(s0.tolist()) == set(s1.tolist()):
        return s0
    (r0, r1), (t0, t1) = (np.asarray(obj[f]([s0.tolist(), s1.tolist()]), dtype=float) for f in ("random", "top"))
    return s1 if r1 <= V5_TOL * r0 and t1 < t0 else s0


def run_split(X, meta, tr, te, seed, k, a_sc, c_sc, n_random_subsets=0):
    """One split: each variant's subset, its frontier/test aggregate MAE in points, and the demotion count; with
    ``n_random_subsets``, also the MAE of that many random ``k``-subsets under the same fit (``random_mae``)."""
    from harness_ext.methods.pounce import make_predictor

    Xtr = X[tr]
    N = (Xtr * a_sc + c_sc) / 100.0
    obj = objectives(N, seed)
    both = lambda s: (1 - TOP_WEIGHT) * obj["random"](s) + TOP_WEIGHT * obj["top"](s)  # noqa: E731
    sat, room = saturated(Xtr, a_sc, c_sc, meta)
    every = np.ones(X.shape[1], bool)
    subs = {"V0": search(N, k, every, obj["random"])}
    subs["V1"] = search(N, k, ~sat, obj["random"]) if sat.any() else subs["V0"]
    subs["V2"] = search(N, k, every, both)
    subs["V3"] = search(N, k, ~sat, both) if sat.any() else subs["V2"]
    subs["V4"] = search(N, k, every, obj["random"], avoid=sat, tol=TIE_TOL) if sat.any() else subs["V0"]
    subs["V5"] = per_split_choice(obj, subs["V0"], subs["V1"])
    product, _ = qh.choose_subset(Xtr, k, seed, qh.DEFAULT_SELECTOR, "lowrank", a_sc, c_sc)
    est = make_predictor("lowrank", random_state=seed).fit(Xtr)
    out = {"n_demoted": int(sat.sum()), "n_known": int(np.isfinite(room).sum()),
           "same": bool(set(product.tolist()) == set(subs["V0"].tolist())), "subsets": {}, "mae": {}}

    def mae(subset):
        keep, Xin, have, usable, target, W, C, agg_true = qh.test_targets(X[te], subset, a_sc, c_sc)
        p = est.predict_new_models(Xin, weights=W)
        pred = np.where(keep & have, X[te], p.mean)
        agg = (np.where(have, pred, 0.0) * W).sum(1) + C
        return float(np.abs(agg - agg_true)[usable].mean())

    for v, s in subs.items():
        out["mae"][v] = mae(s)
        out["subsets"][v] = s.tolist()
    rng = np.random.default_rng(1)
    out["random_mae"] = [mae(np.sort(rng.permutation(X.shape[1])[:k])) for _ in range(n_random_subsets)]
    out["demoted_in_v0"] = int(sat[subs["V0"]].sum())
    return out


def load(names):
    import quality_frontier_prior as fp

    mats = qh.load_matrices([n for n in names if n in qh.SOURCES], verbose=False)
    mats.update(fp.extra_matrices([n for n in names if n in fp.EXTRA]))
    return mats


def collect(mats, n_random, progress=print, n_random_subsets=0):
    """``{(matrix, split): run_split record}``: splits ``frontier`` / ``newest`` and ``a0``, ``a1``, ..."""
    from harness_ext.methods.engine.newmodel_intervals import run_groups
    from harness_ext.methods.pounce import split_models
    from harness_ext.methods.reduction.budget import default_subset_size

    out = {}
    for name, (raw, meta) in mats.items():
        X = raw.to_numpy(float)
        k = default_subset_size(X.shape[1])
        a_sc, c_sc = qh.aggregate_scale(X, meta)
        runs = run_groups(raw.index)
        splits = dict(qh.frontier_splits(raw, X, a_sc, c_sc))
        for s in range(n_random):
            splits[f"a{s}"] = split_models(X.shape[0], 0.2, random_state=s) if runs is None else qh.split_runs(runs, 0.2, s)
        for split, (tr, te) in splits.items():
            t = time.perf_counter()
            seed = int(split[1:]) if split.startswith("a") else 0
            rec = run_split(X, meta, tr, te, seed, k, a_sc, c_sc, n_random_subsets)
            out[(name, split)] = rec
            progress(f"  {name:<14}{split:<9} k={k:<3} demoted {rec['n_demoted']}/{rec['n_known']} "
                     f"(in V0's subset {rec['demoted_in_v0']}) same={rec['same']} "
                     + " ".join(f"{v} {rec['mae'][v]:.2f}" for v in VARIANTS) + f"  ({time.perf_counter() - t:.0f} s)")
    return out


def random_subsets(records, file=None):
    """Per split with random subsets measured: V0's MAE, the random subsets' median, and the share of them V0 beats."""
    rows = [(key, r) for key, r in records.items() if r.get("random_mae")]
    if not rows:
        return
    print("\nthe default's subset against random subsets of the same size (same fit): V0 MAE, random median, share of "
          "random subsets V0 beats", file=file)
    for (m, s), r in rows:
        rand = np.asarray(r["random_mae"])
        print(f"{m:<14}{s:<9}{r['mae']['V0']:>8.2f}{np.median(rand):>8.2f}{np.mean(rand > r['mae']['V0']):>7.2f}"
              f"  ({rand.size} subsets)", file=file)


def verdict(records, file=None):
    """Print the per-row table and the acceptance criterion per variant; return ``{variant: accepted}``."""
    front = [(m, s) for (m, s) in records if not s.startswith("a")]
    mats = sorted({m for m, _ in records}, key=lambda m: MATRICES.index(m) if m in MATRICES else 99)
    print("\nfrontier rows: aggregate MAE in points (V0 = default objective), ratio to V0 in brackets", file=file)
    print(f"{'matrix':<14}{'split':<9}{'demoted':>8}{'same':>6}" + "".join(f"{v:>15}" for v in VARIANTS), file=file)
    ratios = {v: [] for v in VARIANTS}
    for m, s in front:
        r = records[(m, s)]
        base = r["mae"]["V0"]
        for v in VARIANTS:
            ratios[v].append(r["mae"][v] / base if base > 0 else 1.0)
        print(f"{m:<14}{s:<9}{r['n_demoted']:>8}{str(r['same']):>6}"
              + "".join(f"{r['mae'][v]:>8.2f} ({r['mae'][v] / base:.2f})" for v in VARIANTS), file=file)
    print("\nrandom 80/20 splits: mean aggregate MAE over the splits (ratio to V0)", file=file)
    cost = {v: [] for v in VARIANTS}
    for m in mats:
        rows = [records[key] for key in records if key[0] == m and key[1].startswith("a")]
        if not rows:
            continue
        mean = {v: float(np.mean([r["mae"][v] for r in rows])) for v in VARIANTS}
        for v in VARIANTS:
            cost[v].append(mean[v] / mean["V0"] if mean["V0"] > 0 else 1.0)
        print(f"{m:<14}{len(rows):>3} splits, demoted {np.mean([r['n_demoted'] for r in rows]):.1f}"
              + "".join(f"{mean[v]:>8.2f} ({mean[v] / mean['V0']:.2f})" for v in VARIANTS), file=file)
    random_subsets(records, file)
    print(f"\ncriterion: random cost <= {MAX_RANDOM_COST} on every matrix, mean frontier ratio <= {MAX_MEAN_RATIO}, "
          f"worst frontier ratio <= {MAX_ROW_RATIO}", file=file)
    out = {}
    for v in VARIANTS[1:]:
        c1 = max(cost[v], default=1.0) <= MAX_RANDOM_COST
        mean_r, worst = float(np.mean(ratios[v])) if ratios[v] else float("nan"), max(ratios[v], default=float("nan"))
        out[v] = bool(c1 and mean_r <= MAX_MEAN_RATIO and worst <= MAX_ROW_RATIO)
        print(f"{v}: worst random cost {max(cost[v], default=float('nan')):.3f} ({c1}), mean frontier ratio "
              f"{mean_r:.3f}, worst {worst:.3f}, rows better/worse {sum(x < 1 for x in ratios[v])}/"
              f"{sum(x > 1 for x in ratios[v])} -> {'ACCEPT' if out[v] else 'reject'}", file=file)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matrices", default=",".join(MATRICES))
    ap.add_argument("--random-splits", type=int, default=3)
    ap.add_argument("--json", help="also write every split's record (subsets, MAE, demotions) to this file")
    ap.add_argument("--random-subsets", type=int, default=0,
                    help="also score this many random subsets of the same size per split (seeded), to place the default's")
    args = ap.parse_args(argv)
    t = time.perf_counter()
    records = collect(load(args.matrices.split(",")), args.random_splits, progress=lambda m: print(m, flush=True),
                      n_random_subsets=args.random_subsets)
    if args.json:
        import json

        Path(args.json).write_text(json.dumps({f"{m}/{s}": r for (m, s), r in records.items()}, indent=1))
    verdict(records)
    print(f"\n{time.perf_counter() - t:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
