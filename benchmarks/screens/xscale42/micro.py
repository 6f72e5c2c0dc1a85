"""Microbenchmark: the dense and the grouped working logit on designs of T tasks (40 + 50 (T-1) rows, 16 targets);
prints T, the largest |difference| of the probabilities, dense seconds, grouped seconds (one call each)."""
import numpy as np, time
from harness_ext.methods.engine.item_working import logistic_working, logistic_working_grouped
rng = np.random.default_rng(0)
for T in (1, 6, 10, 20, 30, 57):
    k = T; d = 2
    group = np.repeat(np.arange(k), [40] + [50] * (k - 1))
    F = rng.normal(size=(len(group), d)); Fa = rng.normal(size=(900, d))
    R = (rng.random((16, len(group))) < 0.6).astype(float); R[0, 3] = np.nan
    prec = np.r_[np.ones(d), np.full(k, 1e-2)]
    X = np.hstack([F, np.eye(k)[group]]); Xa = np.hstack([Fa, np.eye(k)[np.zeros(900, int)]])
    t = time.perf_counter(); a = logistic_working(X, R, Xa, prec); t1 = time.perf_counter()
    b = logistic_working_grouped(F, group, R, Fa, prec, k); t2 = time.perf_counter()
    print(T, np.abs(a - b).max(), f"{t1-t:.4f} {t2-t1:.4f}")
