"""The cross-benchmark frontier allowance (``engine/frontier_prior.py``): its constant, and leave-one-benchmark-out figures.

Run::

    HARNESS_EXT_SHARED_DATA=/work/shared/data python benchmarks/quality_frontier_prior.py            # frontier splits
    HARNESS_EXT_SHARED_DATA=/work/shared/data python benchmarks/quality_frontier_prior.py --random-splits 3

Every real matrix with at least 30 models and at least 3 datasets in ../shared/data gets the frontier split of
``quality_holdout.py --protocols f`` (the subset chosen and the default predictor fitted on the weakest 50% of its models
by full aggregate, the strongest 30% predicted from their subset cells; Pythia MMLU also its newest checkpoints), run as
protocol (f) runs it (``reduce``'s selection and nested calibration), with the allowance *off*. The six matrices of
``quality_holdout.py`` and five more: LiveBench (2024-08-29, its six categories; the overall column left out), the
HydroX safety leaderboard (four categories; overall left out), OpenCompass (its seven category leaderboards joined by
model name), RewardBench and RewardBench 2 (Every Eval Ever). The other 37 benchbench leaderboards have one score
column each (or fewer than 30 models): no subset to predict from, so no frontier split of their own; they enter through
the merged benchbench matrix.

For each test model the engine predicts stronger than every training model (the full allowance), the score
``(truth - prediction) / design sd`` is recorded; models placed between the training models' ``PRIOR_EDGE``
quantile of predicted strength and their strongest get a share of the allowance rising linearly from 0 to 1
(``frontier_prior.share``). ``--json`` keeps every test model's record (its quantile ``u``, flag distance, design sd,
predicted strength, and each split's training strengths and count), so other share rules can be replayed on them.
The shipped constant (``frontier_prior.FRONTIER_ALLOWANCE``) is the one-sided ``level`` quantile pooled over every
benchmark, each weighing the same (**in-sample** for each of them). The reported coverage of each benchmark uses the
constant computed *without* it and without the benchmarks that share its data (:data:`FAMILIES`): **leave one benchmark
out**. ``--random-splits N`` adds protocol (a)'s random 80/20 splits
with the same leave-one-benchmark-out constants: the allowance's cost inside the population.

The predictor is fitted as ``quality_holdout.py --fit store`` fits it (``--fit store``, the default: on the scores
``reduce`` fits it on, where the matrix has the store's record of every column; benchbench and the three leaderboards
taken from its files keep the raw fit); ``--fit raw`` fits it on the raw matrix, as this script did up to
2026-12-06. ``--csv NAME=FILE,...`` adds leaderboard files (each ingested on its own, as ``quality_holdout.py --csv``
does; they share no data with any other); ``--pool`` names the benchmarks whose scores make the constant (default
every one measured), the others measured with it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("HARNESS_EXT_NO_PROGRESS", "1")
os.environ.setdefault("HARNESS_EXT_LOAD_PLUGINS", "")
import quality_holdout as qh  # noqa: E402 - the protocols' shared splits and subset choice
from _holdout_matrices import column_meta, load_user_matrices  # noqa: E402
from _holdout_store import store_fit  # noqa: E402 - the product's fit, as quality_holdout --fit store

#: "store" (the default: the predictor fitted as ``reduce`` fits it, ``quality_holdout.py --fit store``) or "raw"
#: (the predictor fitted on the raw matrix, as this script did before the thirty-fifth session's re-run).
FIT = "store"

LB = qh.BENCHBENCH
EXTRA = ("livebench", "hydrox", "opencompass", "rewardbench", "rewardbench_2")
#: Benchmarks that share data (models' scores of one leaderboard, or a leaderboard merged into another matrix): left
#: out together. The benchbench matrix holds the LiveBench, HydroX, OpenCompass, HELM Classic and Open LLM v2
#: leaderboards' columns; RewardBench 2 shares RewardBench's models; Pythia's two variants are one benchmark.
FAMILIES = {"benchbench": {"livebench", "hydrox", "opencompass", "helm_classic", "open_llm_v2"},
            "livebench": {"benchbench"}, "hydrox": {"benchbench"}, "opencompass": {"benchbench"},
            "helm_classic": {"benchbench"}, "open_llm_v2": {"benchbench"},
            "rewardbench": {"rewardbench_2"}, "rewardbench_2": {"rewardbench"}}
LEVELS = (0.8, 0.9, 0.95)
OPENCOMPASS = ("agent_240829_agent", "code_240829_code", "instruct_240829_instructionfollow", "knowledge_240829_knowledge",
               "language_240829_language", "math_240829_math", "reasoning_240829_reasoning")


def extra_matrices(names):
    """``{name: (raw DataFrame, meta)}`` of the calibration matrices that are not ``quality_holdout``'s."""
    import pandas as pd

    out, metas = {}, {}
    if "livebench" in names:
        out["livebench"] = pd.read_csv(LB / "livebench_240829_holistic.csv").set_index("model").drop(
            columns=["livebench_240725"])
    if "hydrox" in names:
        out["hydrox"] = pd.read_csv(LB / "hydrox_safety_241001_safety.csv").set_index("model").drop(
            columns=["hydrox_overall_score"])
    if "opencompass" in names:
        d = None
        for c in OPENCOMPASS:
            x = pd.read_csv(LB / f"opencompass_{c}.csv").groupby("model").first()
            d = x if d is None else d.join(x, how="outer")
        out["opencompass"] = d.loc[d.notna().sum(axis=1) >= 3]
    rb = [b for b in ("rewardbench", "rewardbench_2") if b in names]
    if rb:
        from harness_ext.store.db import Store
        from harness_ext.store.ingest import ingest_paths
        from harness_ext.store.matrix import MatrixQuery, load_matrix

        with Store.open(":memory:") as store:
            ingest_paths(store, [qh.EEE / "reward-bench"], show_progress=False)
            for b in rb:
                m = load_matrix(store, MatrixQuery(normalise="none", benchmarks=(b,)))
                raw = pd.DataFrame(m.to_numpy(float), index=[str(i) for i in m.index],
                                   columns=[str(c) for c in m.columns])
                cols = raw.notna().sum(axis=0) >= 10
                raw = raw.loc[:, cols]
                metas[b] = [x for x, c in zip(column_meta(m), cols) if c]  # the store's records, for FIT "store"
                out[b] = raw.loc[raw.notna().sum(axis=1) >= 3]
    return {k: (v.astype(float), metas.get(k, [{} for _ in v.columns])) for k, v in out.items()}


class _Recorder:
    """Stands in for the engine's allowance step (``frontier._prior_allowance``) during a run: records, for every new
    model, its predicted-strength quantile ``u`` among the training models, its subset flag distance, its share of the
    allowance and its design sd, the number of training models and their predicted strengths, and raises nothing (the
    allowance off), so every rule can be applied afterwards with the engine's own formula."""

    def __init__(self):
        self.rows, self.sd, self.share = np.array([], int), np.array([]), np.array([])
        self.u = self.dist = self.sd_all = self.strength = self.ref = None
        self.m = 0

    def placement(self, est, fit, mz, z, O, pattern):
        from harness_ext.methods.engine import frontier_shift as fs

        alpha = float(getattr(est, "blend_new_", est._uncalibrated_blend()))
        self.strength = fs.predicted_strength(np.where(O, z, np.nan), mz)
        self.ref = np.sort(fs.reference_strength(est, fit, pattern, alpha))
        return fs.predicted_quantile(self.strength, self.ref)

    def __call__(self, est, O, W, out, dist, u, cals, W_extra):
        from harness_ext.methods.engine import frontier_prior as fp
        from harness_ext.methods.engine.frontier_design import design_aggregate_sd

        if u is None:
            return
        g = fp.share(dist, u, fp.PRIOR_EDGE)
        self.rows = np.flatnonzero(g > 0)
        self.share = g[self.rows]
        self.u, self.dist, self.m = np.asarray(u, float), np.asarray(dist, float), int(est.X_.shape[0])
        self.sd_all = design_aggregate_sd(est.X_, O, W)
        self.sd = self.sd_all[self.rows]


def run_split(X, tr, te, seed, k, a_sc, c_sc, runs, meta=None):
    """One split as protocol (f)/(a) evaluates the default predictor: per test model ``truth``, ``pred``, ``lo``,
    ``hi`` (points, allowance off), ``share`` of the allowance, ``sd`` (design sd, NaN without a share), ``usable``.

    With :data:`FIT` "store" and ``meta`` holding the store's record of every column, the predictor is fitted as
    ``quality_holdout.py --fit store`` fits it (on the scores ``reduce`` fits it on, its aggregate mapped back to raw
    units); otherwise on the raw matrix."""
    from harness_ext.methods.engine import frontier as fr
    from harness_ext.methods.engine.newmodel_intervals import FOLD_RESELECTION
    from harness_ext.methods.pounce import make_predictor

    Xtr, Xte = X[tr], X[te]
    subset, _ = qh.choose_subset(Xtr, k, seed, qh.DEFAULT_SELECTOR, "lowrank", a_sc, c_sc)
    keep, Xin, have, usable, target, W, C, agg_true = qh.test_targets(Xte, subset, a_sc, c_sc)
    reselect = qh.product_reselect(Xtr, k, seed, qh.DEFAULT_SELECTOR, "lowrank", a_sc, c_sc, FOLD_RESELECTION,
                                   groups=None if runs is None else runs[tr])
    rec, orig = _Recorder(), (fr._prior_allowance, fr._placement)
    fr._prior_allowance, fr._placement = rec, rec.placement
    sf = store_fit(Xtr, meta, FIT)
    offset = np.zeros(len(te))
    try:
        if sf is None:
            p = make_predictor("lowrank", random_state=seed).fit(Xtr).predict_new_models(Xin, weights=W,
                                                                                          reselect=reselect)
        else:  # as _holdout_store.StoreFit.predict: normalised fit, aggregate weights on raw units mapped over
            est = sf.predictor("lowrank", seed).fit(sf.normalise(Xtr))
            p = est.predict_new_models(sf.normalise(Xin), weights=np.asarray(W, float) * sf.beta, reselect=reselect)
            offset = (np.asarray(W, float) * sf.alpha).sum(1)
    finally:
        fr._prior_allowance, fr._placement = orig
    sd, share = np.full(len(te), np.nan), np.zeros(len(te))
    sd[rec.rows], share[rec.rows] = rec.sd, rec.share
    n = len(te)
    extra = dict(u=np.full(n, np.nan) if rec.u is None else rec.u, dist=np.zeros(n) if rec.dist is None else rec.dist,
                 sd_all=np.full(n, np.nan) if rec.sd_all is None else rec.sd_all,
                 strength=np.full(n, np.nan) if rec.strength is None else rec.strength,
                 ref=np.array([]) if rec.ref is None else rec.ref, m=np.int64(rec.m))
    C = C + offset
    return dict(truth=agg_true, pred=p.aggregate + C, lo=p.aggregate_lower + C, hi=p.aggregate_upper + C, sd=sd,
                share=share, usable=usable, **extra)


def user_boards(pairs):
    """``{name: (raw DataFrame, meta)}`` of ``NAME=FILE`` leaderboard files, each ingested on its own as
    ``quality_holdout.py --csv FILE`` ingests it (a file holding more than one benchmark is refused)."""
    out = {}
    for pair in pairs:
        name, _, path = pair.partition("=")
        if not path:
            raise SystemExit(f"quality_frontier_prior: --csv wants NAME=FILE, got {pair!r}")
        mats = load_user_matrices(csv=[path], verbose=False)
        if len(mats) != 1:
            raise SystemExit(f"quality_frontier_prior: {path}: {len(mats)} benchmarks read, one expected")
        out[name] = next(iter(mats.values()))
    return out


def collect(names, n_random, random_names=None, progress=print, boards=None):
    """``{(benchmark, variant): record}`` of the frontier splits (variants ``frontier``/``newest``) of every benchmark
    in ``names`` and ``n_random`` random splits (``a0``, ``a1``, ...) of those in ``random_names`` (default all);
    ``boards``: more ``{name: (raw, meta)}`` matrices (:func:`user_boards`), measured after ``names``."""
    from harness_ext.methods.engine.newmodel_intervals import run_groups
    from harness_ext.methods.pounce import split_models
    from harness_ext.methods.reduction.budget import default_subset_size

    mats = qh.load_matrices([n for n in names if n in qh.SOURCES])
    mats.update(extra_matrices([n for n in names if n in EXTRA]))
    mats.update(boards or {})
    names = [*names, *(boards or {})]
    out = {}
    for name in names:
        if name not in mats:
            continue
        raw, meta = mats[name]
        X = raw.to_numpy(float)
        k = default_subset_size(X.shape[1])
        a_sc, c_sc = qh.aggregate_scale(X, meta)
        runs = run_groups(raw.index)
        t = time.perf_counter()
        for variant, (tr, te) in qh.frontier_splits(raw, X, a_sc, c_sc).items():
            out[(name, variant)] = run_split(X, tr, te, 0, k, a_sc, c_sc, runs, meta)
        for s in range(n_random if random_names is None or name in random_names else 0):
            tr, te = split_models(X.shape[0], 0.2, random_state=s) if runs is None else qh.split_runs(runs, 0.2, s)
            out[(name, f"a{s}")] = run_split(X, tr, te, s, k, a_sc, c_sc, runs, meta)
        progress(f"  {name} {X.shape[0]} x {X.shape[1]}: {time.perf_counter() - t:.0f} s")
    return out


def scores(rec):
    """``(truth - prediction) / design sd`` of the usable test models with the full allowance (predicted stronger
    than every training model): the allowance is learnt where it is applied in full."""
    m = rec["usable"] & np.isfinite(rec["sd"]) & (rec["share"] >= 1.0)
    return (rec["truth"] - rec["pred"])[m] / np.maximum(rec["sd"][m], 1e-12)


def pooled_quantile(records, exclude, level, score=None):
    """The ``level`` quantile of the frontier splits' scores (``score(record)``, default :func:`scores`) pooled over the
    benchmarks not in ``exclude``, each benchmark weighing 1 (its variants sharing it), or None without scores."""
    vals, wts = [], []
    for name in sorted({n for n, v in records if not v.startswith("a")} - set(exclude)):
        keys = [key for key in records if key[0] == name and not key[1].startswith("a")]
        for key in keys:
            s = (score or scores)(records[key])
            if s.size:
                vals.append(s)
                wts.append(np.full(s.size, 1.0 / s.size / len(keys)))
    if not vals:
        return None
    v, w = np.concatenate(vals), np.concatenate(wts)
    o = np.argsort(v, kind="stable")
    cum = np.cumsum(w[o]) / w.sum()
    return float(v[o][min(np.searchsorted(cum, level - 1e-12), v.size - 1)])


def figures(rec, q):
    """``(coverage, median width)`` of the usable test models' aggregates with multiplier ``q`` (None: off)."""
    from harness_ext.methods.engine.frontier_prior import raised_upper

    hi = rec["hi"].copy()
    m = np.isfinite(rec["sd"])
    if q is not None:
        hi[m] = raised_upper(rec["pred"][m], hi[m], rec["sd"][m], q * rec["share"][m])
    u = rec["usable"]
    return float(((rec["truth"] >= rec["lo"]) & (rec["truth"] <= hi))[u].mean()), float(np.median((hi - rec["lo"])[u]))


def report(records, level, file=None, pool=None):
    """Print each frontier split's coverage (width) before, with its leave-one-benchmark-out constant and with the
    in-sample one; ``pool``: the benchmarks whose scores make the constant (default all), the others measured with
    it; returns the in-sample constant."""
    names = sorted({n for n, _ in records})
    out = set(names) - set(pool) if pool else set()
    q_all = pooled_quantile(records, out, level)
    print(f"\nlevel {level:.2f}: shipped constant (pooled over {len(names) - len(out)} benchmarks, in-sample) "
          f"{q_all:.3f}", file=file)
    print(f"{'benchmark':<14}{'variant':<9}{'test':>5}{'full':>5}  {'before':>14}  {'LOBO q':>7}  {'after (LOBO)':>14}  "
          f"{'in-sample':>14}", file=file)
    for (name, variant), rec in records.items():
        q = pooled_quantile(records, {name} | FAMILIES.get(name, set()) | out, level)
        (cb, wb), (ca, wa), (ci, wi) = figures(rec, None), figures(rec, q), figures(rec, q_all)
        n_el = int((rec["usable"] & (rec["share"] >= 1.0)).sum())
        print(f"{name:<14}{variant:<9}{int(rec['usable'].sum()):>5}{n_el:>5}  {cb:>6.3f} ({wb:>5.2f})  "
              f"{q if q is not None else float('nan'):>7.3f}  {ca:>6.3f} ({wa:>5.2f})  {ci:>6.3f} ({wi:>5.2f})", file=file)
    return q_all


def save_records(records, path) -> None:
    """Write ``{(benchmark, variant): record}`` as JSON (``--json``), keys ``benchmark/variant``."""
    Path(path).write_text(json.dumps({f"{n}/{v}": {k: np.asarray(x).tolist() for k, x in r.items()}
                                      for (n, v), r in records.items()}))


def load_records(paths) -> dict:
    """``{(benchmark, variant): record}`` from :func:`save_records`'s files (a record already read from an earlier
    file is kept): arrays, ``usable`` boolean, ``m`` (the number of training models) an int where recorded."""
    out = {}
    for path in paths:
        for key, rec in json.loads(Path(path).read_text()).items():
            name, variant = key.split("/")
            r = {a: np.asarray(x) for a, x in rec.items()}
            r["usable"] = r["usable"].astype(bool)
            if "m" in r:
                r["m"] = int(r["m"])
            out.setdefault((name, variant), r)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--benchmarks", default=None, help=f"comma-separated subset of {', '.join((*qh.SOURCES, *EXTRA))}")
    ap.add_argument("--random-splits", type=int, default=0, help="protocol (a) random splits per benchmark (cost check)")
    ap.add_argument("--random-benchmarks", default=None, help="comma-separated benchmarks given random splits (default all)")
    ap.add_argument("--levels", default=",".join(str(v) for v in LEVELS), help="interval levels to report")
    ap.add_argument("--json", default=None, help="write the per-model records here")
    ap.add_argument("--fit", default="store", choices=("store", "raw"),
                    help="the predictor fitted as reduce fits it (store, the default) or on the raw matrix")
    ap.add_argument("--csv", default=None, metavar="NAME=FILE[,NAME=FILE...]",
                    help="more leaderboards (each file ingested on its own, as quality_holdout.py --csv does)")
    ap.add_argument("--pool", default=None,
                    help="comma-separated benchmarks whose frontier scores make the constant (default all measured)")
    args = ap.parse_args(argv)
    global FIT
    FIT = args.fit
    names = args.benchmarks.split(",") if args.benchmarks else (*qh.SOURCES, *EXTRA)
    t0 = time.perf_counter()
    boards = user_boards(args.csv.split(",")) if args.csv else {}
    rand = set(args.random_benchmarks.split(",")) if args.random_benchmarks else {*names, *boards}
    records = collect(names, args.random_splits, rand, progress=lambda m: print(m, file=sys.stderr, flush=True),
                      boards=boards)
    if args.json:
        save_records(records, args.json)
    pool = args.pool.split(",") if args.pool else None
    for level in (float(v) for v in args.levels.split(",")):
        report({k: r for k, r in records.items() if not k[1].startswith("a")}, level, pool=pool)
        if args.random_splits:
            _report_random(records, level, pool=pool)
    print(f"\n{time.perf_counter() - t0:.0f} s", flush=True)
    return 0


def _report_random(records, level, file=None, pool=None):
    """Protocol (a)'s cost: mean coverage and mean median width over the random splits, before and with each
    benchmark's leave-one-benchmark-out constant."""
    frontier = {k: r for k, r in records.items() if not k[1].startswith("a")}
    out = {n for n, _ in frontier} - set(pool) if pool else set()
    print(f"  random splits, level {level:.2f}: coverage (5th percentile) / mean median width, before -> after (LOBO q)",
          file=file)
    for name in sorted({n for n, v in records if v.startswith("a")}):
        recs = [r for (n, v), r in records.items() if n == name and v.startswith("a")]
        q = pooled_quantile(frontier, {name} | FAMILIES.get(name, set()) | out, level)
        b = np.array([figures(r, None) for r in recs])
        a = np.array([figures(r, q) for r in recs])
        print(f"  {name:<14}{len(recs):>3} splits  {b[:, 0].mean():.3f} ({np.quantile(b[:, 0], 0.05):.3f}) / "
              f"{b[:, 1].mean():6.2f} -> {a[:, 0].mean():.3f} ({np.quantile(a[:, 0], 0.05):.3f}) / {a[:, 1].mean():6.2f}"
              f" ({a[:, 1].mean() / b[:, 1].mean() - 1:+.1%})", file=file)


if __name__ == "__main__":
    sys.exit(main())
