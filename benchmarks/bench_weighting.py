"""Speed of the random-simplex-weights analysis against plain numpy and a per-draw loop, same process, same data.

Headline reference: :func:`numpy_reference`, what a user fluent in numpy
writes (``rng.dirichlet`` in chunks of 10,000 draws, one matrix product per
chunk, the comparisons broadcast over the chunk). Second column: the per-draw
Python loop below.

``harness_ext.methods.weighting.random_weight_analysis`` (chunked, vectorised: one
``(chunk x columns) @ (columns x models)`` product per chunk, Dirichlet(1) draws
as normalised exponentials) against ``random_weight_analysis_loop`` (one
Smith-Tromble draw, one matrix-vector product and one set of comparisons per
draw). Both compute each model's score range, the pairwise "row beats column"
matrix over the 20 best models and the top-two swap rate; the vectorised run
does not track ranks for the ratio, so the work is the same; the last column
times the run with every model's best/worst rank, as ``harness-ext weights`` does. The two use different
random streams, so their swap rates agree in distribution only (printed).

Matrices of the shapes the task names: HELM Classic (30 x 14 complete block), Pythia MMLU
(838 x 57) -- read from a store when ``--db`` holds them, synthetic otherwise --
and an ANLI-sized prompt-level 0/1 matrix (12 models x 1200 prompts, synthetic).

Usage::

    python benchmarks/bench_weighting.py           # 100,000 draws each
    python benchmarks/bench_weighting.py --quick   # 10,000 draws each (a few seconds)
    python benchmarks/bench_weighting.py --db harness-ext.duckdb   # real HELM/Pythia matrices
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import _common  # noqa: F401  (sys.path and environment set-up)
from _common import emit_json, row
from harness_ext.methods.weighting import random_weight_analysis, random_weight_analysis_loop


def numpy_reference(df, n_draws: int, random_state: int = 0, pairwise_top: int = 20, chunk: int = 10_000) -> dict:
    """The analysis as a user would write it in numpy: Dirichlet(1) draws in chunks, one product per chunk."""
    X = df.to_numpy(dtype=float)
    m, d = X.shape
    rng = np.random.default_rng(random_state)
    order = np.argsort(-X.mean(axis=1), kind="stable")
    top, a, b = order[: min(pairwise_top, m)], order[0], order[1]
    smin, smax = np.full(m, np.inf), np.full(m, -np.inf)
    wins = np.zeros((len(top), len(top)))
    swaps = 0
    for start in range(0, n_draws, chunk):
        W = rng.dirichlet(np.ones(d), size=min(chunk, n_draws - start))
        S = W @ X.T
        smin, smax = np.minimum(smin, S.min(axis=0)), np.maximum(smax, S.max(axis=0))
        St = S[:, top]
        wins += (St[:, :, None] > St[:, None, :]).sum(axis=0)
        swaps += int((S[:, b] > S[:, a]).sum())
    return {"score_min": smin, "score_max": smax, "pairwise": wins / n_draws, "top_two_swap_rate": swaps / n_draws}


def matrices(db):
    rng = np.random.default_rng(0)
    out = []
    real = {}
    if db:
        from harness_ext.store.matrix import MatrixQuery, load_matrix
        from harness_ext.store.db import Store

        with Store.open(db, read_only=True) as store:
            # the complete block (30 x 14): the per-draw reference has no NaN handling
            real["helm"] = load_matrix(store, MatrixQuery(benchmarks=("helm_classic",), dense="models"))
            real["pythia"] = load_matrix(store, MatrixQuery(benchmarks=("mmlu",), rows="run"))
    for key, label, (m, d) in (("helm", "HELM Classic", (30, 14)), ("pythia", "Pythia MMLU", (838, 57))):
        if key in real:
            out.append((f"{label} {real[key].shape[0]}x{real[key].shape[1]} (store)", real[key]))
        else:
            X = np.clip(rng.random((m, 3)) @ rng.random((3, d)) / 3 + 0.05 * rng.standard_normal((m, d)), 0, 1)
            out.append((f"{label}-shaped {m}x{d} (synthetic)", pd.DataFrame(X)))
    p = rng.uniform(0.45, 0.75, size=(12, 1))
    out.append(("prompt-level 12x1200 0/1 (synthetic)", pd.DataFrame((rng.random((12, 1200)) < p).astype(float))))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10,000 draws instead of 100,000")
    ap.add_argument("--draws", type=int, default=None)
    ap.add_argument("--db", default=None, help="store holding helm_classic and Pythia mmlu (optional)")
    args = ap.parse_args(argv)
    n = args.draws or (10_000 if args.quick else 100_000)
    print(f"random simplex weights: {n:,} draws, pairwise over the top 20 models")
    print(f"{'matrix':44s} {'vectorised s':>12s} {'numpy s':>9s} {'ratio':>7s} {'loop s':>9s} {'loop ratio':>10s}   "
          f"swap rate vec / numpy / loop   {'+ranks s':>8s}")
    rows = []
    for label, df in matrices(args.db):
        t_vec, t_np = float("inf"), float("inf")
        for _ in range(2):  # best of two, interleaved with the numpy reference: the machine is shared
            t0 = time.perf_counter()
            vec = random_weight_analysis(df, n_draws=n, random_state=0, pairwise_top=20, track_ranks=False, keep=0,
                                         show_progress=False)
            t_vec = min(t_vec, time.perf_counter() - t0)
            t0 = time.perf_counter()
            npr = numpy_reference(df, n_draws=n, random_state=1, pairwise_top=20)
            t_np = min(t_np, time.perf_counter() - t0)
        # what `harness-ext weights` runs: best/worst rank of every model too (a sort per draw)
        t0 = time.perf_counter()
        random_weight_analysis(df, n_draws=n, random_state=0, pairwise_top=20, track_ranks=True, keep=0, show_progress=False)
        t_ranks = time.perf_counter() - t0
        t0 = time.perf_counter()
        ref = random_weight_analysis_loop(df, n_draws=n, random_state=1, pairwise_top=20)
        t_loop = time.perf_counter() - t0
        print(
            f"{label:44s} {t_vec:12.3f} {t_np:9.3f} {t_np / t_vec:6.1f}x {t_loop:9.2f} {t_loop / t_vec:9.0f}x   "
            f"{vec.top_two_swap_rate:.4f} / {npr['top_two_swap_rate']:.4f} / {ref['top_two_swap_rate']:.4f}"
            f"        {t_ranks:8.3f}"
        )
        rows.append(row("weighting", f"random simplex weights, {n:,} draws: {label}", f"{df.shape[0]} x {df.shape[1]}",
                        t_vec, t_np, ref_kind="user", ref_name="numpy dirichlet + product per chunk", loop_s=t_loop,
                        note=f"with every model's rank range {t_ranks:.3f} s; swap rates agree in distribution"))
    emit_json(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
