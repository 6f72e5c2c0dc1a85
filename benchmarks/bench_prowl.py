"""Speed of the vectorised prowl numerics against straightforward per-pair / per-prefix references.

Times, in one process on the same data:

* the nine SimBA similarity matrices (``harness_ext.methods.similarity``) against
  a double loop over column pairs calling scipy.stats / scipy.spatial.distance
  on the pairwise-complete rows;
* the RANDOM baseline (1000 random orders, coverage at every prefix,
  ``harness_ext.methods.prowl.random_baseline``) against two per-run references: the
  straightforward scipy one (for every prefix of every run, win rates from
  ``scipy.stats.rankdata`` on the prefix's columns, then ``scipy.stats.pearsonr``)
  and a from-scratch one (per-dataset pairwise win counts, then Pearson);

checks that all give the same numbers, and prints the speed-up ratios and the
issue's figure of merit: the nine similarity matrices plus the 1000-run
baseline together, in seconds.

Result rows (``$HARNESS_EXT_BENCH_JSON``, for benchmarks/run.py): the random
baseline's headline reference is the scipy one (what a user would write with
the library: no library routine does the whole curve); the from-scratch one is
the naive-loop column. The similarity rows here are against per-pair scipy
loops only (naive); their library references (pandas, numpy, scipy, sklearn
routines) are bench_similarity_libs.py's headline.

Usage::

    python benchmarks/bench_prowl.py           # 79 x 58 (SimBA's MMLU shape), 1000 runs
    python benchmarks/bench_prowl.py --quick   # same matrix, references timed on fewer runs
    python benchmarks/bench_prowl.py --real    # also real 79 x 57 Pythia MMLU runs and HELM Classic 30 x 14

The references for the random baseline are timed on a few runs and scaled
linearly to ``--runs`` (each run costs the same), which the output says.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy import stats
from scipy.spatial import distance

from harness_ext.methods.similarity import measures as sim
from harness_ext.methods.prowl import random_baseline


def make_matrix(m: int, d: int, seed: int = 0, missing: float = 0.0) -> np.ndarray:
    """A low-rank-plus-noise score matrix in [0, 1] (like a normalised benchmark)."""
    rng = np.random.default_rng(seed)
    X = rng.random((m, 3)) @ rng.random((3, d)) / 3 + 0.05 * rng.standard_normal((m, d))
    X = np.clip(X, 0, 1)
    if missing:
        X[rng.random((m, d)) < missing] = np.nan
    return X


# ----------------------------------------------------------------------------- references


def _ref_pairwise(X, fn, scale_p=None):
    n, p = X.shape
    C = np.full((p, p), np.nan)
    for i in range(p):
        for j in range(i, p):
            m = ~np.isnan(X[:, i]) & ~np.isnan(X[:, j])
            a, b = X[m, i], X[m, j]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                v = fn(a, b)
            if scale_p is not None:
                v = v * (n / m.sum()) ** (1.0 / scale_p)
            C[i, j] = C[j, i] = v
    return C


REFERENCES = {
    "pearson": lambda X: _ref_pairwise(X, lambda a, b: stats.pearsonr(a, b)[0]),
    "spearman": lambda X: _ref_pairwise(X, lambda a, b: stats.spearmanr(a, b)[0]),
    "kendall_tau": lambda X: _ref_pairwise(X, lambda a, b: stats.kendalltau(a, b)[0]),
    "cosine": lambda X: _ref_pairwise(X, lambda a, b: 1 - distance.cosine(a, b)),
    "manhattan": lambda X: np.exp(-_ref_pairwise(X, lambda a, b: distance.cityblock(a, b), scale_p=1)),
    "euclidean": lambda X: np.exp(-_ref_pairwise(X, lambda a, b: distance.euclidean(a, b), scale_p=2)),
    "minkowski": lambda X: np.exp(-_ref_pairwise(X, lambda a, b: distance.minkowski(a, b, 3), scale_p=3)),
    "wasserstein": lambda X: (lambda W: np.exp(-W / np.nanmax(W)))(_ref_pairwise(X, stats.wasserstein_distance)),
    "jensen_shannon": lambda X: 1 - _ref_pairwise(X, lambda a, b: distance.jensenshannon(a, b, base=2)),
}


def ref_mean_win_rate(B: np.ndarray) -> np.ndarray:
    """MWR from scratch: per dataset, count wins (+0.5 ties) against every other observed model."""
    m, n = B.shape
    rates = [[] for _ in range(m)]
    for d in range(n):
        col = B[:, d]
        obs = ~np.isnan(col)
        k = obs.sum()
        if k < 2:
            continue
        for mu in np.flatnonzero(obs):
            others = col[obs]
            wins = (col[mu] > others).sum() + 0.5 * ((col[mu] == others).sum() - 1)
            rates[mu].append(wins / (k - 1))
    return np.array([np.mean(r) if r else np.nan for r in rates])


def _scipy_mwr(B: np.ndarray) -> np.ndarray:
    n = (~np.isnan(B)).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        wr = (stats.rankdata(B, axis=0, nan_policy="omit") - 1.0) / (n - 1.0)
    return np.nanmean(np.where(n >= 2, wr, np.nan), axis=1)


def scipy_curve(X: np.ndarray, order) -> np.ndarray:
    """Coverage at every prefix the straightforward way: scipy ranks per prefix, then scipy Pearson."""
    full = _scipy_mwr(X)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(1, len(order) + 1):
            sub = _scipy_mwr(X[:, order[:k]])
            ok = np.isfinite(sub) & np.isfinite(full)
            out.append(stats.pearsonr(full[ok], sub[ok])[0] if np.ptp(sub[ok]) > 0 else np.nan)
    return np.array(out)


def ref_curve(X: np.ndarray, order) -> np.ndarray:
    full = ref_mean_win_rate(X)
    out = []
    for k in range(1, len(order) + 1):
        sub = ref_mean_win_rate(X[:, order[:k]])
        ok = np.isfinite(sub) & np.isfinite(full)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(stats.pearsonr(full[ok], sub[ok])[0] if np.ptp(sub[ok]) > 0 else np.nan)
    return np.array(out)


def _time(fn, repeat: int = 1):
    best, out = np.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def bench_matrix(X: np.ndarray, runs: int, ref_runs: int, scipy_runs: int, tag: str) -> list:
    """Print the comparison for one matrix; returns its result rows."""
    from _common import row

    rows = []
    shape = f"{X.shape[0]} x {X.shape[1]}"
    print(f"\n{tag}: matrix {shape}, {np.isnan(X).mean():.0%} missing")
    # The first column's header names the matrix, so benchmarks/run.py labels each ratio with it.
    head = f"{tag} {shape} similarity"
    w = len(head) + 2
    print(f"\n{head:<{w}}{'vectorised s':>14}{'per-pair s':>12}{'ratio':>9}{'max |diff|':>12}")
    tot_v = tot_r = 0.0
    for name in sim.PAPER_MEASURES:
        func = sim._FUNCS[name][0]
        tv, C = _time(lambda: func(X), repeat=3)
        tr, R = _time(lambda: REFERENCES[name](X))
        np.fill_diagonal(R, 1.0)
        diff = np.nanmax(np.abs(C - R))
        tot_v, tot_r = tot_v + tv, tot_r + tr
        print(f"{name:<{w}}{tv:>14.4f}{tr:>12.3f}{tr / tv:>9.0f}{diff:>12.1e}")
        rows.append(row("prowl", f"{tag} similarity {name}", shape, tv, tr, ref_kind="naive",
                        ref_name="scipy per pair", note=f"max |diff| {diff:.1e}"))
    print(f"{'all nine':<{w}}{tot_v:>14.4f}{tot_r:>12.3f}{tot_r / tot_v:>9.0f}")
    rows.append(row("prowl", f"{tag} similarity, all nine", shape, tot_v, tot_r, ref_kind="naive",
                    ref_name="scipy per pair", note="library references: bench_similarity_libs"))

    tv, base = _time(lambda: random_baseline(X, n_runs=runs, random_state=0), repeat=1)
    print(f"\nrandom baseline, {tag} {shape}, {runs} runs x {X.shape[1]} prefixes:")
    print(f"  vectorised {tv:.3f} s")
    scaled_by = {}
    for what, fn, k in (("scipy per prefix (rankdata + pearsonr)", scipy_curve, scipy_runs),
                        ("from scratch per prefix (win counts)", ref_curve, ref_runs)):
        tr, ref = _time(lambda: [fn(X, o) for o in base.orders[:k]])
        diff = np.nanmax(np.abs(np.array(ref) - base.curves[:k]))
        scaled = tr / k * runs
        scaled_by[fn] = (scaled, k, diff)
        print(f"  {what}: ratio {scaled / tv:.0f}x ({tr:.2f} s for {k} runs -> {scaled:.1f} s for {runs}, linear; "
              f"max |diff| {diff:.1e})")
    s_ref, k, diff = scaled_by[scipy_curve]
    rows.append(row("prowl", f"{tag} random baseline, {runs} runs", shape, tv, s_ref, ref_kind="user",
                    ref_name="scipy rankdata + pearsonr per prefix", loop_s=scaled_by[ref_curve][0],
                    note=f"references timed on {k} / {scaled_by[ref_curve][1]} runs, scaled; max |diff| {diff:.1e}"))
    print(f"  nine similarity matrices + {runs}-run random baseline: {tot_v + tv:.2f} s vectorised "
          f"(timed under whatever load the machine has)")
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="time the random-baseline references on few runs")
    ap.add_argument("--models", type=int, default=79)
    ap.add_argument("--datasets", type=int, default=58)
    ap.add_argument("--missing", type=float, default=0.0, help="fraction of cells set missing")
    ap.add_argument("--runs", type=int, default=1000, help="random-baseline runs (vectorised)")
    ap.add_argument("--ref-runs", type=int, default=None, help="runs timed for the from-scratch reference (default 2 quick, 50 full)")
    ap.add_argument("--scipy-runs", type=int, default=None, help="runs timed for the scipy reference (default 10 quick, 100 full)")
    ap.add_argument("--real", action="store_true",
                    help="also time real matrices from ../shared/data: 79 Pythia MMLU runs x 57 subjects, HELM Classic 30 x 14")
    args = ap.parse_args(argv)
    ref_runs = args.ref_runs or (2 if args.quick else 50)
    scipy_runs = args.scipy_runs or (10 if args.quick else 100)
    from _common import emit_json

    X = make_matrix(args.models, args.datasets, missing=args.missing)
    rows = bench_matrix(X, args.runs, ref_runs, scipy_runs, "synthetic")
    if args.real:
        from _common import real_matrices

        for label, df in real_matrices(("helm_classic", "pythia_mmlu")).items():
            if label == "Pythia MMLU":
                # SimBA's MMLU has 79 models: every k-th run spreads them over the checkpoints and families.
                df = df.iloc[:: max(1, len(df) // 79)].iloc[:79]
            rows += bench_matrix(df.to_numpy(dtype=float), args.runs, ref_runs, scipy_runs, label)
    emit_json(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
