"""Speed of the rank-preservation protocol's hot paths vs straightforward references.

Run ``python benchmarks/bench_compare.py [--quick]``. Each line prints the
reference time, ours, the ratio (reference / ours) and checks both agree.
Sizes are those of one trial on the TSC bake-off: 40 models, 89-dataset pool,
6 selectors x 19 subset sizes = 114 rankings per trial.

References: the headline one is what a user would otherwise write with the
libraries (scipy/sklearn metrics per ranking; numpy fancy indexing for subset
mean ranks; one scipy ``cdist`` and a running minimum for farthest-first; one
batched ``np.linalg.slogdet`` over the candidates per greedy step for
D-optimal; a sort and ``np.maximum.accumulate`` for Holm). The straightforward
Python loops are the second column (``loop``).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import _common  # noqa: F401  (sys.path and environment set-up)
from _common import emit_json, row
from scipy.stats import kendalltau, rankdata, spearmanr
from sklearn.metrics import ndcg_score

from harness_ext.methods import ranking
from harness_ext.methods.compare import holm
from harness_ext.methods.prowl.representation import dataset_representation
from harness_ext.plugins.selectors_design import DOptimal
from harness_ext.plugins.selectors_representation import FarthestFirst


def _time(fn, reps):
    best = np.inf
    out = None
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


ROWS = []


def _report(name, ref, ours, agree, ref_name, loop=None):
    """Print one line and keep its result row (``ref`` is the library/numpy reference, ``loop`` the naive one)."""
    tail = "" if loop is None else f"   loop {loop * 1e3:9.2f} ms ({loop / ours:,.0f}x)"
    print(f"{name:<34} {ref_name} {ref * 1e3:9.2f} ms   ours {ours * 1e3:8.2f} ms   ratio {ref / ours:7.1f}x"
          f"{tail}   agree={agree}")
    ROWS.append(row("compare", name, "-", ours, ref, ref_kind="user", ref_name=ref_name, loop_s=loop,
                    note=f"agree={agree}"))


def bench_metrics(reps, rng):
    M, B = 40, 114
    R_full = rng.random(M) * 20
    R_sub = rng.integers(0, 60, (B, M)) / 3.0

    def reference():
        out = np.empty((B, 5))
        pos_full = rankdata(R_full)
        for b in range(B):
            out[b, 0] = np.abs(R_sub[b] - R_full).mean()
            out[b, 1] = spearmanr(R_sub[b], R_full).statistic
            out[b, 2] = kendalltau(R_sub[b], R_full).statistic
            out[b, 3] = ndcg_score([M + 1 - pos_full], [-R_sub[b]], k=5)
            out[b, 4] = 1.0 / rankdata(R_sub[b])[np.argmin(R_full)]
        return out

    def ours():
        d = ranking.rank_metrics(R_sub, R_full)
        return np.column_stack([d[m] for m in ("mae", "spearman", "kendall", "ndcg@5", "mrr")])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr, a = _time(reference, reps)
        to, b = _time(ours, reps)
    _report("5 rank metrics, 114 x 40", tr, to, bool(np.allclose(a, b, equal_nan=True)), "scipy/sklearn per ranking")


def bench_subset_ranks(reps, rng):
    ranks = ranking.rank_per_dataset(rng.random((40, 112)))
    subsets = np.array([rng.choice(112, 10, replace=False) for _ in range(114)])

    def reference():
        return np.array([[np.mean([ranks[m, j] for j in s]) for m in range(40)] for s in subsets])

    tr, a = _time(reference, reps)
    tn, c = _time(lambda: ranks[:, subsets].mean(axis=2).T, reps)
    to, b = _time(lambda: ranking.subset_mean_ranks(ranks, subsets), reps)
    _report("subset mean ranks, 114 subsets", tn, to, bool(np.allclose(a, b) and np.allclose(c, b)),
            "numpy fancy index", tr)


def bench_farthest_first(reps, rng):
    X = rng.random((40, 89))
    F = dataset_representation(X)

    def reference():
        n = F.shape[0]
        first = int(np.argmax(np.linalg.norm(F - F.mean(axis=0), axis=1)))
        S = [first]
        while len(S) < 20:
            best, best_d = None, -1.0
            for j in range(n):
                if j in S:
                    continue
                d = min(np.linalg.norm(F[j] - F[i]) for i in S)
                if d > best_d:
                    best, best_d = j, d
            S.append(best)
        return np.array(S)

    def numpy_ref():
        from scipy.spatial.distance import cdist

        D = cdist(F, F)
        S = [int(np.argmax(np.linalg.norm(F - F.mean(axis=0), axis=1)))]
        dmin = D[S[0]].copy()
        for _ in range(19):
            dmin[S] = -1.0
            S.append(int(np.argmax(dmin)))
            dmin = np.minimum(dmin, D[S[-1]])
        return np.array(S)

    tr, a = _time(reference, max(1, reps // 2))
    tn, c = _time(numpy_ref, reps)
    to, b = _time(lambda: FarthestFirst(n_select=20).fit(X).order_, reps)
    _report("farthest-first, 89 datasets, k=20", tn, to, bool(np.array_equal(a, b) and np.array_equal(c, b)),
            "scipy cdist + running min", tr)


def bench_d_optimal(reps, rng):
    X = rng.random((40, 89))
    F = dataset_representation(X)
    lam = 1.0

    def reference():
        # Greedy on eq. 4 directly: log det of the p x p information for every candidate.
        S = []
        for _ in range(10):
            vals = np.full(F.shape[0], -np.inf)
            for j in range(F.shape[0]):
                if j in S:
                    continue
                T = S + [j]
                vals[j] = np.linalg.slogdet(F[T].T @ F[T] + lam * np.eye(F.shape[1]))[1]
            S.append(int(np.argmax(vals)))
        return np.array(S)

    def numpy_ref():
        # The same greedy, every candidate's log det in one batched slogdet per step.
        S = []
        eye = lam * np.eye(F.shape[1])
        base = np.zeros((F.shape[1], F.shape[1]))
        outer = np.einsum("ji,jk->jik", F, F)
        for _ in range(10):
            vals = np.linalg.slogdet(base + eye + outer)[1]
            vals[S] = -np.inf
            S.append(int(np.argmax(vals)))
            base = base + outer[S[-1]]
        return np.array(S)

    tr, a = _time(reference, max(1, reps // 2))
    tn, c = _time(numpy_ref, reps)
    to, b = _time(lambda: DOptimal(n_select=10, swaps=False).fit(X).order_, reps)
    _report("D-optimal greedy, 89 datasets, k=10", tn, to, bool(np.array_equal(a, b) and np.array_equal(c, b)),
            "numpy batched slogdet", tr)


def bench_holm(reps, rng):
    p = rng.random(2000) ** 3

    def reference():
        m = len(p)
        order = np.argsort(p, kind="stable")
        out = np.empty(m)
        running = 0.0
        for i, idx in enumerate(order):
            running = max(running, min(1.0, (m - i) * p[idx]))
            out[idx] = running
        return out

    def numpy_ref():
        m = len(p)
        order = np.argsort(p, kind="stable")
        out = np.empty(m)
        out[order] = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
        return out

    tr, a = _time(reference, reps)
    tn, c = _time(numpy_ref, reps)
    to, b = _time(lambda: holm(p), reps)
    _report("Holm, 2000 p-values", tn, to, bool(np.allclose(a, b) and np.allclose(c, b)), "numpy sort + accumulate",
            tr)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args(argv)
    reps = 2 if args.quick else 7
    rng = np.random.default_rng(0)
    bench_metrics(reps, rng)
    bench_subset_ranks(reps, rng)
    bench_farthest_first(reps, rng)
    bench_d_optimal(reps, rng)
    bench_holm(reps, rng)
    emit_json(ROWS)


if __name__ == "__main__":
    main()
