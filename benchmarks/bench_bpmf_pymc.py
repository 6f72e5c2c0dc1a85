"""Bayesian PMF by our Gibbs sampler against the PyMC NUTS reference (optional: skips without PyMC).

The model of Zhao et al. (004) §3.4 as they sample it: ``R = U V^T + noise``
on column-standardised scores, rank 10, fixed N(0, I) priors on ``U`` and
``V``, noise precision ``alpha = 2``; NUTS with 500 tuning steps and 100
draws. Ours is :class:`harness_ext.plugins.predictors.BayesianPMF` with the
same model (``hyperprior="fixed"``, ``alpha=2``) and 500 burn-in + 100 kept
Gibbs sweeps. Both see the same training cells (20% of the observed cells of
the CrossPred matrix hidden, seeded); the table gives each one's wall time,
RMSE on the hidden cells (original units) and the time ratio (PyMC / ours).

PyMC is not a dependency of harness-ext. Without it (or with ``--quick``:
NUTS takes minutes) the benchmark prints why it is skipped and exits 0::

    pip install pymc                       # into a separate environment is fine
    python benchmarks/bench_bpmf_pymc.py [--chains 2] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import _common  # noqa: F401  (sys.path and environment set-up)
from _common import emit_json, row


def _pymc_fit(train: np.ndarray, rank: int, alpha: float, tune: int, draws: int, chains: int, seed: int):
    """Posterior mean of ``U V^T`` (standardised units) under NUTS."""
    import pymc as pm

    n, q = train.shape
    obs = ~np.isnan(train)
    r, c = np.nonzero(obs)
    with pm.Model():
        U = pm.Normal("U", 0.0, 1.0, shape=(n, rank))
        V = pm.Normal("V", 0.0, 1.0, shape=(q, rank))
        mu = (U[r] * V[c]).sum(axis=1)
        pm.Normal("R", mu=mu, sigma=1.0 / np.sqrt(alpha), observed=train[r, c])
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed,
                          progressbar=False, compute_convergence_checks=False)
    Us = idata.posterior["U"].values.reshape(-1, n, rank)
    Vs = idata.posterior["V"].values.reshape(-1, q, rank)
    return np.einsum("snk,sqk->nq", Us, Vs) / Us.shape[0]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip (NUTS takes minutes)")
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.quick:
        print("bench_bpmf_pymc: skipped in --quick mode (PyMC NUTS takes minutes)")
        return 0
    try:
        import pymc  # noqa: F401
    except ImportError:
        print("bench_bpmf_pymc: skipped, PyMC is not installed (pip install pymc to run it)")
        return 0
    from bench_pounce import crosspred_matrix

    from harness_ext.methods.pounce import hide_cells
    from harness_ext.plugins.predictors import BayesianPMF, standardise_columns

    X, metric, source = crosspred_matrix()
    mask = hide_cells(X, 0.2, np.random.default_rng(args.seed))
    train = np.where(mask, np.nan, X)
    rank, alpha, tune, draws = 10, 2.0, 500, 100

    est = BayesianPMF(n_components=rank, alpha=alpha, hyperprior="fixed", n_burnin=tune, n_samples=draws,
                      column_groups=metric, random_state=args.seed)
    t0 = time.perf_counter()
    est.fit(train)
    t_ours = time.perf_counter() - t0
    rmse_ours = float(np.sqrt(np.mean((est.mean_[mask] - X[mask]) ** 2)))

    # The same standardisation as ours, so both samplers see identical training values.
    Z, mu, sd = standardise_columns(train, est.min_count, metric)
    t0 = time.perf_counter()
    mean_z = _pymc_fit(Z, rank, alpha, tune, draws, args.chains, args.seed)
    t_pymc = time.perf_counter() - t0
    pred = mean_z * sd + mu
    rmse_pymc = float(np.sqrt(np.mean((pred[mask] - X[mask]) ** 2)))

    size = f"{X.shape[0]} x {X.shape[1]} ({source}), 20% hidden"
    print(f"BPMF rank {rank}, alpha {alpha:g}, {tune} tune/burn-in + {draws} draws, {size}:")
    print(f"  ours (Gibbs)           {t_ours:8.2f} s   RMSE {rmse_ours:.4f}")
    print(f"  PyMC NUTS, {args.chains} chain(s) {t_pymc:8.2f} s   RMSE {rmse_pymc:.4f}")
    print(f"  time ratio {t_pymc / t_ours:,.1f}x (PyMC / ours); RMSE difference {rmse_ours - rmse_pymc:+.4f}")
    emit_json([row("bpmf_pymc", "BPMF vs PyMC NUTS", size, t_ours, t_pymc,
                   note=f"RMSE ours {rmse_ours:.4f}, PyMC {rmse_pymc:.4f}")])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
