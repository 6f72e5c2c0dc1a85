"""Screen: a Fay-Herriot-type multivariate composite of the design-only per-task sample means against the sample mean.

For stores of per-task scores only (no per-sample logs), ``reduce --items N`` draws N random documents per task and
``predict`` estimates each task by their mean (``sample_mean``). Under simple random sampling without replacement
the number correct among n of a 0/1 task's N documents is Hypergeometric(N, round(p N), n) exactly, so every
model x task score table with known sizes is a screen with a known truth.

The composite: the source models' task scores (raw or logit) give a prior N(mu, L L' + diag(psi)) (rank r by SVD,
psi the residual variances); a target's vector of sample means y has design variances D (smoothed: from the
composite's own estimate, three passes); the posterior mean mu + S (S + D)^-1 (y - mu) and variance
S - S (S + D)^-1 S give each task's estimate and normal interval; the benchmark row is the weighted sum
(delta method in logit space).

Settings ``name:space:rank:psi_floor[:vague:adapt:shape:lam_floor]``: ``vague`` multiplies the first factor's prior
sd (a target's overall level read from its own sample means), ``adapt=1`` scales the task-specific variance per
target by the Fay-Herriot moment estimate over its tasks, ``shape=flat`` gives every task the same task-specific
variance. A name with ``~conf`` scales the posterior sd by the factor that gives 90% coverage on folds of the sources
(inside-like: a random quarter; frontier-like: the weakest 60% fitted, the strongest quarter the targets; a target
whose sample means' benchmark score is beyond every source's takes the frontier-like factor). ``--lt c`` adds, per
setting, the limited-translation variants (``+lt``: the composite at most c design standard errors from the sample
mean, interval the union of the composite's and the design's; ``+lts``: the design's half-width about the capped
estimate); their benchmark row is the sample mean's.

Protocols: inside (random 25% of the models are targets, the rest sources, re-drawn per seed) and frontier (sources
the weakest 50% by the benchmark score, targets the strongest 30%). 20 draws per target per seed.

Usage: benchmarks/screens/composite/run.sh OUT (every command, in order); summarise.py OUT/final_all.json for tables.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import pandas as pd

Z90 = 1.6448536269514722


def load_tables(stores: list, items_root: str | None) -> dict:
    """name -> (scores models x tasks DataFrame, sizes per task Series)."""
    from harness_ext.methods.reduction.item_design_only import sized_tasks
    from harness_ext.store.db import Store

    out = {}
    for label, path, bench in stores:
        s = Store.open(path, read_only=True)
        t = sized_tasks(s, [bench], None, None, None, None, [])
        F = pd.DataFrame({k: v["scores"] for k, v in t.items()})
        # the dense block: tasks scored by at least half of the models, then the models with all of them
        F = F.loc[:, F.notna().sum() >= 0.5 * F.notna().sum().max()].dropna()
        N = pd.Series({k: t[k]["n_items"] for k in F.columns}, dtype=float)
        out[label] = (F, N)
    if items_root:
        import glob
        import os
        for folder in ("helm_lite", "open_llm_v2"):
            frames, sizes = {}, {}
            for f in sorted(glob.glob(os.path.join(items_root, folder, "*.parquet"))):
                d = pd.read_parquet(f)
                name = os.path.basename(f)[:-8]
                frames[name] = d.groupby("model")["score"].mean()
                sizes[name] = d["item"].nunique()
            F = pd.DataFrame(frames).dropna()
            out[f"items:{folder}"] = (F, pd.Series(sizes, dtype=float)[F.columns])
    return out


def _logit(p):
    return np.log(p) - np.log1p(-p)


def _expit(x):
    return 1.0 / (1.0 + np.exp(-x))


def fit_prior(S: np.ndarray, N: np.ndarray, space: str, rank: int, psi_floor: float, shape: str = "src"):
    """(mu, L, psi) of the sources' task scores ``S`` (sources x tasks) in ``space``: rank-``rank`` SVD loadings
    ``L`` (tasks x rank) and residual variances ``psi`` (``shape="flat"``: their mean on every task)."""
    X = _logit(np.clip(S, 0.5 / N, 1 - 0.5 / N)) if space == "logit" else S.copy()
    mu = X.mean(axis=0)
    C = X - mu
    m = len(X)
    U, s, Vt = np.linalg.svd(C, full_matrices=False)
    r = min(rank, len(s) - 1) if len(s) > 1 else 0
    L = Vt[:r].T * (s[:r] / np.sqrt(max(m - 1, 1)))
    R = C - (U[:, :r] * s[:r]) @ Vt[:r]
    psi = (R ** 2).sum(axis=0) / max(m - 1 - r, 1)
    if shape == "flat":
        psi = np.full_like(psi, psi.mean())
    # a task whose sources all agree would get no room of its own: floor at a share of the median
    psi = np.maximum(psi, psi_floor * np.median(psi) + 1e-8)
    return mu, L, psi


def posterior(k, n, N, prior, space, vague=0.0, adapt=False, lam_floor=0.25, passes=3):
    """Composite estimates (transformed scale) and posterior covariances for counts ``k`` (cases x tasks).

    ``vague`` > 0: the first factor's prior sd is multiplied by that (a target's overall level is read from its own
    sample means, not shrunk toward the sources'); ``adapt``: the task-specific variance is scaled per target by
    the Fay-Herriot moment estimate ``sum(r^2 - D) / sum(psi)`` over its tasks (floored at ``lam_floor``)."""
    mu, L, psi = prior
    L = L.copy()
    if vague and L.shape[1]:
        L[:, 0] *= vague
    fpc = (N - n) / np.maximum(N - 1, 1)
    p0 = (k + 0.5) / (n + 1.0)
    y = _logit(p0) if space == "logit" else k / n
    pt = p0.copy()
    lam = np.ones((len(k), 1))
    T = len(N)
    LL = L @ L.T
    for _ in range(passes):
        pt = np.clip(pt, 0.5 / n, 1 - 0.5 / n)
        dv = pt * (1 - pt) / n * fpc
        D = dv / (pt * (1 - pt)) ** 2 if space == "logit" else dv
        A = LL[None] + (lam * psi + D)[:, None, :] * np.eye(T)[None]
        G = np.linalg.solve(A, (y - mu)[..., None])[..., 0]  # A^-1 (y - mu)
        f = G @ L  # posterior mean of the factors
        u = lam * psi * G  # posterior mean of the task-specific parts
        m = mu + f @ L.T + u
        if adapt:
            r = y - mu - f @ L.T
            lam = np.maximum(lam_floor, ((r ** 2 - D).sum(axis=1) / psi.sum()))[:, None]
        pt = _expit(m) if space == "logit" else np.clip(m, 0, 1)
    if adapt:  # the estimate and its variance at the last scale (the loop's last solve used the one before)
        A = LL[None] + (lam * psi + D)[:, None, :] * np.eye(T)[None]
        G = np.linalg.solve(A, (y - mu)[..., None])[..., 0]
        m = mu + (G @ L) @ L.T + lam * psi * G
    Sig = LL[None] + (lam * psi)[:, None, :] * np.eye(T)[None]
    K = np.linalg.solve(A, Sig)  # A^-1 Sigma
    V = Sig - np.swapaxes(Sig, 1, 2) @ K
    return m, V


def run_split(F, N, w, src, tgt, n, rng, draws, settings, variants):
    """Per-task and benchmark records for one split: dict variant -> arrays."""
    P = F.to_numpy()
    Nn = N.to_numpy().astype(np.int64)
    nt = np.minimum(n, Nn).astype(np.int64)
    K = np.rint(P[tgt] * Nn).astype(np.int64)
    truth = K / Nn  # targets x tasks
    k = rng.hypergeometric(np.broadcast_to(K, (draws,) + K.shape), (Nn - K), np.broadcast_to(nt, K.shape))  # draws x targets x tasks
    k = k.reshape(-1, len(Nn))
    tr = np.broadcast_to(truth, (draws,) + truth.shape).reshape(-1, len(Nn))
    out = {}
    # sample mean with the finite-population t interval, as predict gives it
    from harness_ext.methods.reduction.item_benchmark import benchmark_interval
    from harness_ext.methods.reduction.item_design_only import _outcome_intervals
    est = k / nt
    lo = np.empty_like(est)
    hi = np.empty_like(est)
    se = np.empty_like(est)
    for j in range(len(Nn)):
        if nt[j] >= Nn[j]:
            lo[:, j] = hi[:, j] = est[:, j]
            se[:, j] = 0
            continue
        a, b, c = _outcome_intervals(int(nt[j]), int(Nn[j]), 0.9)
        lo[:, j], hi[:, j], se[:, j] = a[k[:, j]], b[k[:, j]], c[k[:, j]]
    bc, bl, bh, _ = benchmark_interval(est, se, w, 0.9)
    out["sample_mean"] = (est, lo, hi, bc, bl, bh)
    S = P[src]
    for name, (space, rank, floor, vague, adapt, shape, lam_floor) in settings.items():
        base = name.split("~")[0]
        prior = fit_prior(S, Nn, space, rank, floor, shape)
        m, V = posterior(k, nt, Nn, prior, space, vague, adapt, lam_floor)
        sd = np.sqrt(np.maximum(np.einsum("cii->ci", V), 0))
        if "~conf" in name:
            # interval scale from folds of the sources: inside-like (random quarter) and frontier-like (the weakest
            # 60% of the sources fitted, the strongest 25% of them the targets); a target whose sample means'
            # benchmark score is beyond every source's takes the frontier-like fold's scale
            s_in, s_fr = fold_scales(S, Nn, nt, w, space, (rank, floor, vague, adapt, shape, lam_floor), rng)
            beyond = (k / nt) @ w > (S @ w).max()
            scale = np.where(beyond, s_fr, s_in)[:, None]
            sd = sd * scale
            V = V * (scale ** 2)[..., None]
        if space == "logit":
            ce, cl, ch = _expit(m), _expit(m - Z90 * sd), _expit(m + Z90 * sd)
            g = w * ce * (1 - ce)
        else:
            ce, cl, ch = np.clip(m, 0, 1), np.clip(m - Z90 * sd, 0, 1), np.clip(m + Z90 * sd, 0, 1)
            g = np.broadcast_to(w, m.shape)
        b = ce @ w
        bsd = np.sqrt(np.maximum(np.einsum("ci,cij,cj->c", g, V, g), 0))
        out[name] = (ce, cl, ch, b, b - Z90 * bsd, b + Z90 * bsd)
        for c in variants.get("lt", ()):
            out[f"{name}+lt{c}"] = _limited(est, se, ce, cl, ch, c, nt, (bc, bl, bh))
            out[f"{name}+lts{c}"] = _limited(est, se, ce, cl, ch, c, nt, (bc, bl, bh), shifted=True)
    return tr, tr @ w, out


def _limited(est, se, ce, cl, ch, c, nt, bench, shifted=False):
    """Limited translation: the composite at most ``c`` design standard errors from the sample mean. Its interval:
    the composite's, but never narrower than the design interval shifted to the new centre minus the shift (so it
    always contains the design interval): the union of the composite's and the design's intervals. ``shifted``: the
    design interval's half-width about the capped estimate instead."""
    sed = np.where(se > 0, se, np.sqrt(np.clip(est * (1 - est), 0.25 / nt, None) / nt))
    e = np.clip(ce, est - c * sed, est + c * sed)
    h = Z90 * sed  # design half-width (normal)
    if shifted:  # the design interval's width, moved with the estimate (no design guarantee)
        return e, np.maximum(e - h, 0), np.minimum(e + h, 1), *bench
    lo = np.minimum(cl, np.maximum(est - h, 0))
    hi = np.maximum(ch, np.minimum(est + h, 1))
    lo = np.minimum(lo, e)
    hi = np.maximum(hi, e)
    return e, lo, hi, *bench  # benchmark row stays design-based


def fold_scales(S, N, nt, w, space, cfg, rng, draws=5):
    """(inside scale, frontier scale): the factor by which the posterior sd must grow for 90% coverage of the
    task cells in the sources' own inside-like and frontier-like folds (simulated draws, truth known)."""
    rank, floor, vague, adapt, shape, lam_floor = cfg
    m = len(S)
    order = np.argsort(S @ w, kind="stable")
    perm = rng.permutation(m)
    q = max(1, int(round(0.25 * m)))
    folds = [(np.sort(perm[q:]), np.sort(perm[:q])),
             (order[: max(2, int(0.6 * m))], order[m - q:])]
    out = []
    for src, tgt in folds:
        prior = fit_prior(S[src], N, space, rank, floor, shape)
        K = np.rint(S[tgt] * N).astype(np.int64)
        k = rng.hypergeometric(np.broadcast_to(K, (draws,) + K.shape), N - K,
                               np.broadcast_to(nt, K.shape)).reshape(-1, len(N))
        tr = np.broadcast_to(K / N, (draws,) + K.shape).reshape(-1, len(N))
        mm, V = posterior(k, nt, N, prior, space, vague, adapt, lam_floor)
        sd = np.sqrt(np.maximum(np.einsum("cii->ci", V), 1e-12))
        t = _logit(np.clip(tr, 0.5 / N, 1 - 0.5 / N)) if space == "logit" else tr
        out.append(max(1.0, float(np.quantile(np.abs(mm - t) / sd, 0.9)) / Z90))
    return tuple(out)


def summarise(tr, btr, recs):
    """variant -> figures (per-task pooled over tasks, and benchmark)."""
    res = {}
    for name, (e, lo, hi, b, bl, bh) in recs.items():
        err = np.abs(e - tr)
        res[name] = {"task_mae": float(err.mean()), "task_cov": float(((lo <= tr + 1e-12) & (tr - 1e-12 <= hi)).mean()),
                     "task_width_med": float(np.median(hi - lo)),
                     "task_mae_by_task": err.mean(axis=0),
                     "task_cov_by_task": ((lo <= tr + 1e-12) & (tr - 1e-12 <= hi)).mean(axis=0),
                     "bench_mae": float(np.abs(b - btr).mean()),
                     "bench_cov": float(((bl <= btr + 1e-12) & (btr - 1e-12 <= bh)).mean()),
                     "bench_width_med": float(np.median(bh - bl))}
    return res


def splits(F, N, w, seed, min_models=8):
    strength = F.to_numpy() @ w
    m = len(F)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(m)
    nt = max(1, int(round(0.25 * m)))
    yield "inside", np.sort(perm[nt:]), np.sort(perm[:nt])
    order = np.argsort(strength, kind="stable")
    yield "frontier", order[: int(m * 0.5)], order[m - max(1, int(round(0.3 * m))):]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--stores", nargs="*", default=[
        "pythia:/tmp/comp/pythia.duckdb:mmlu", "pevals:/tmp/comp/pevals.duckdb:mmlu",
        "v03:/tmp/comp/v03.duckdb:mmlu", "v04:/tmp/comp/v04.duckdb:mmlu"])
    ap.add_argument("--items-root", default="/work/shared/data/items")
    ap.add_argument("--seeds", default="0-9")
    ap.add_argument("--ns", default="10,20,50")
    ap.add_argument("--draws", type=int, default=20)
    ap.add_argument("--settings", default="raw1:raw:1:0.1,raw2:raw:2:0.1,logit1:logit:1:0.1,logit2:logit:2:0.1")
    ap.add_argument("--lt", default="1,2")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    lo_s, _, hi_s = a.seeds.partition("-")
    seeds = range(int(lo_s), int(hi_s or lo_s) + 1)
    settings = {}
    for s in a.settings.split(","):
        name, space, rank, floor, *more = s.split(":")
        vague, adapt, shape, lam_floor = (more + ["0", "0", "src", "0.25"][len(more):])
        settings[name] = (space, int(rank), float(floor), float(vague), adapt == "1", shape, float(lam_floor))
    variants = {"lt": [float(c) for c in a.lt.split(",") if c]}
    tables = load_tables([tuple(s.split(":")) for s in a.stores], a.items_root)
    allres = {}
    for label, (F, N) in tables.items():
        w = (N / N.sum()).to_numpy()
        print(f"# {label}: {F.shape[0]} models x {F.shape[1]} tasks, sizes {int(N.min())}-{int(N.max())}", flush=True)
        for n in [int(x) for x in a.ns.split(",")]:
            acc = {}
            for seed in seeds:
                for proto, src, tgt in splits(F, N, w, seed):
                    rng = np.random.default_rng([seed, n, 7])
                    tr, btr, recs = run_split(F, N, w, src, tgt, n, rng, a.draws, settings, variants)
                    acc.setdefault(proto, []).append((tr, btr, recs))
            for proto, runs in acc.items():
                tr = np.concatenate([r[0] for r in runs])
                btr = np.concatenate([r[1] for r in runs])
                recs = {v: tuple(np.concatenate([r[2][v][i] for r in runs]) for i in range(6)) for v in runs[0][2]}
                res = summarise(tr, btr, recs)
                base = res["sample_mean"]["task_mae"]
                for v, r in res.items():
                    better = float((r["task_mae_by_task"] < res["sample_mean"]["task_mae_by_task"]).mean())
                    cov_t = r["task_cov_by_task"]
                    row = {k: (round(x, 4) if isinstance(x, float) else None) for k, x in r.items()
                           if not k.endswith("_by_task")}
                    row.update(cut=round(1 - r["task_mae"] / base, 3), tasks_better=round(better, 3),
                               task_cov_min=round(float(cov_t.min()), 3), task_cov_p10=round(float(np.quantile(cov_t, 0.1)), 3))
                    allres.setdefault(label, {}).setdefault(str(n), {}).setdefault(proto, {})[v] = row
                    print(f"{label:18s} n={n:<3d} {proto:8s} {v:14s} mae {row['task_mae']:.4f} cut {row['cut']:+.3f} "
                          f"cov {row['task_cov']:.3f} (min {row['task_cov_min']:.2f}) wid {row['task_width_med']:.3f} | "
                          f"bench mae {row['bench_mae']:.4f} cov {row['bench_cov']:.3f} wid {row['bench_width_med']:.3f}",
                          flush=True)
    if a.out:
        with open(a.out, "w") as fh:
            json.dump({"seeds": a.seeds, "draws": a.draws, "settings": a.settings, "lt": a.lt, "results": allres},
                      fh, indent=1)


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"# {time.time() - t0:.0f} s", file=sys.stderr)
