"""Speed of the pounce numerics against straightforward references, in one process on the same data.

* **Bayesian PMF** (``harness_ext.plugins.predictors.BayesianPMF``) on the
  108 x 176 CrossPred matrix (read through the CrossPred adapter; a synthetic
  matrix of that shape if ../shared/data is absent) with 20% of cells hidden,
  default settings (300 burn-in + 300 kept Gibbs sweeps, D = 10): wall time
  (target: under a minute on 2 cores), RMSE and 90%-interval coverage.
* **One Gibbs sweep**, batched (one Cholesky of all rows' D x D precisions at
  once) against a per-row loop doing the same algebra with ``np.linalg``; the
  posterior means of both are checked to agree.
* **Ridge MSE curve** (``harness_ext.methods.pounce.mse_curve`` with
  ``RidgePredictor``: one Gram matrix for all ``|S| = 1..d-1``) against
  refitting ``sklearn.linear_model.Ridge`` at every step, on a matrix of Pythia
  MMLU's shape (838 x 57); the curves are checked to be identical.

Result rows (``$HARNESS_EXT_BENCH_JSON``, for benchmarks/run.py): the ridge
curve's reference (sklearn) is a headline library reference; the Gibbs
per-row loop is a naive-loop reference (second column): the library reference
for Bayesian PMF is PyMC's NUTS sampler, bench_bpmf_pymc.py (optional).

Usage::

    python benchmarks/bench_pounce.py           # full
    python benchmarks/bench_pounce.py --quick   # fewer reference sweeps / repeats (< ~30 s)
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import _common  # noqa: F401  (sys.path and environment set-up)
from _common import emit_json, row
from harness_ext.base import limit_threads
from harness_ext.methods.engine.pmf import _row_posterior
from harness_ext.plugins.predictors import BayesianPMF, RidgePredictor
from harness_ext.methods.pounce import hide_cells, interval_coverage, mse_curve, split_models

CROSSPRED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "crosspred-lvlm" / "data" / "result_summary.json"


def crosspred_matrix():
    """(X, column metric labels, source) -- the real matrix when available."""
    if CROSSPRED.is_file():
        from harness_ext.adapters.crosspred import read
        from harness_ext.types import SourceFile

        recs = list(read(SourceFile(CROSSPRED)))
        models = sorted({r.model for r in recs})
        datasets = sorted({r.dataset for r in recs})
        mi = {m: i for i, m in enumerate(models)}
        di = {d: j for j, d in enumerate(datasets)}
        X = np.full((len(models), len(datasets)), np.nan)
        metric = np.empty(len(datasets), dtype=object)
        for r in recs:
            X[mi[r.model], di[r.dataset]] = r.value
            metric[di[r.dataset]] = r.metric
        return X, metric.astype(str), str(CROSSPRED)
    rng = np.random.default_rng(0)
    X = rng.random((108, 4)) @ rng.random((4, 176)) / 4 + 0.05 * rng.standard_normal((108, 176))
    X[:, :27] = -8 + 6 * X[:, :27]  # BARTScore-like columns on another scale
    metric = np.array(["bart"] * 27 + ["acc"] * 149)
    return X, metric, "synthetic 108 x 176 (CrossPred data not found)"


def timed(fn, repeat=1):
    best = np.inf
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


# ------------------------------------------------------------------------------------ references


def ref_row_posterior(Tw, W, V, alpha, prior_prec, prior_mean, rng):
    """One row at a time: the textbook form of S&M 2008 eq. 11-12."""
    M, D = prior_mean.shape
    out = np.empty((M, D))
    for i in range(M):
        P = prior_prec.copy()
        b = prior_prec @ prior_mean[i]
        for j in range(V.shape[0]):
            if W[i, j]:
                P += alpha * W[i, j] * np.outer(V[j], V[j])
                b += alpha * Tw[i, j] * V[j]
        cov = np.linalg.inv(P)
        mean = cov @ b
        out[i] = mean if rng is None else rng.multivariate_normal(mean, cov)
    return out


def ref_ridge_curve(X_tr, X_te, order, alpha=1.0):
    from sklearn.linear_model import Ridge

    d = X_tr.shape[1]
    curve = []
    for k in range(1, d):
        S = order[:k]
        rest = np.setdiff1d(np.arange(d), S)
        pred = Ridge(alpha=alpha).fit(X_tr[:, S], X_tr[:, rest]).predict(X_te[:, S]).reshape(len(X_te), -1)
        curve.append(np.mean((pred - X_te[:, rest]) ** 2))
    return np.asarray(curve)


# ------------------------------------------------------------------------------------ benchmarks


def bench_bpmf(quick: bool):
    X, metric, source = crosspred_matrix()
    mask = hide_cells(X, 0.2, np.random.default_rng(0))
    train = np.where(mask, np.nan, X)
    est = BayesianPMF(column_groups=metric, random_state=0)
    secs, fitted = timed(lambda: est.fit(train))
    rmse = float(np.sqrt(np.mean((fitted.mean_[mask] - X[mask]) ** 2)))
    cov = interval_coverage(X[mask], fitted.mean_[mask], fitted.std_[mask], 0.9)
    sweeps = est.n_burnin + est.n_samples
    print(f"BayesianPMF on {X.shape[0]} x {X.shape[1]} ({source}), 20% hidden, {sweeps} sweeps, D={est.n_components}:")
    print(f"  {secs:.2f} s  ({1000 * secs / sweeps:.1f} ms/sweep)  -> under a minute: {'yes' if secs < 60 else 'NO'}")
    print(f"  RMSE on hidden cells {rmse:.3f}; 90% interval coverage {cov:.3f}")
    size = f"{X.shape[0]} x {X.shape[1]}"
    rows = [row("pounce", f"BayesianPMF fit, {sweeps} sweeps, D={est.n_components}", size, secs,
                note=f"RMSE {rmse:.3f}, 90% coverage {cov:.3f}; library reference (PyMC NUTS): bench_bpmf_pymc; "
                     f"target < 60 s", target="< 60 s", target_met=bool(secs < 60))]

    # one sweep's row updates, batched vs per-row loop, same inputs
    rng = np.random.default_rng(1)
    Z = (train - np.nanmean(train, 0)) / np.nanstd(train, 0)
    O = (~np.isnan(Z)).astype(float)
    Tw = np.where(O > 0, Z, 0.0)
    D = 10
    U, V = rng.normal(size=(X.shape[0], D)), rng.normal(size=(X.shape[1], D))
    lam, mU, mV = np.eye(D), np.zeros((X.shape[0], D)), np.zeros((X.shape[1], D))
    with limit_threads():
        a = _row_posterior(Tw, O, V, 2.0, lam, mU, None)
    b = ref_row_posterior(Tw, O, V, 2.0, lam, mU, None)
    assert np.allclose(a, b, atol=1e-8), "batched and per-row posterior means differ"
    n_ref = 3 if quick else 10

    def batched():
        with limit_threads():
            for _ in range(n_ref):
                _row_posterior(Tw, O, V, 2.0, lam, mU, rng)
                _row_posterior(Tw.T, O.T, U, 2.0, lam, mV, rng)

    def loop():
        for _ in range(n_ref):
            ref_row_posterior(Tw, O, V, 2.0, lam, mU, rng)
            ref_row_posterior(Tw.T, O.T, U, 2.0, lam, mV, rng)

    t_fast, _ = timed(batched, repeat=3)
    t_ref, _ = timed(loop, repeat=1)
    print(f"  Gibbs row updates, {n_ref} sweeps: batched {t_fast / n_ref * 1000:.2f} ms/sweep, per-row loop "
          f"{t_ref / n_ref * 1000:.1f} ms/sweep  -> ratio {t_ref / t_fast:.0f}x (posterior means agree)")
    rows.append(row("pounce", "Gibbs row updates, one sweep", size, t_fast / n_ref, t_ref / n_ref, ref_kind="naive",
                    ref_name="per-row np.linalg loop", note="posterior means agree"))
    return rows


def bench_ridge(quick: bool):
    rng = np.random.default_rng(0)
    m, d = 838, 57
    X = np.clip(rng.random((m, 3)) @ rng.random((3, d)) / 3 + 0.05 * rng.standard_normal((m, d)), 0, 1)
    tr, te = split_models(m, 0.2, 0)
    order = rng.permutation(d)
    repeat = 1 if quick else 3
    t_fast, fast = timed(lambda: mse_curve(X[tr], X[te], order, RidgePredictor()), repeat)
    t_ref, ref = timed(lambda: ref_ridge_curve(X[tr], X[te], order), repeat)
    assert np.allclose(fast, ref, rtol=1e-9, atol=1e-12), "ridge curves differ"
    print(f"ridge MSE curve, {m} x {d} (Pythia MMLU shape), |S| = 1..{d - 1}:")
    print(f"  mse_curve {t_fast * 1000:.0f} ms, sklearn Ridge refit per step {t_ref * 1000:.0f} ms  "
          f"-> ratio {t_ref / t_fast:.1f}x (identical curves)")
    return [row("pounce", f"ridge MSE curve, |S| = 1..{d - 1}", f"{m} x {d}", t_fast, t_ref, ref_kind="user",
                ref_name="sklearn Ridge refit per step", note="identical curves")]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer reference sweeps and repeats")
    args = p.parse_args(argv)
    rows = bench_bpmf(args.quick)
    print()
    rows += bench_ridge(args.quick)
    emit_json(rows)


if __name__ == "__main__":
    main()
