"""How often numpy's spread of a constant column is not exactly 0, by memory layout and reduction.

For n models in 2..200 and 200 score values per n (uniform in [0, 1], and 0-100 percentages
rounded to 2 decimals), a constant column is put beside 3 random columns and its spread computed
with each reduction the package uses, in C and F order. Prints the share of (n, value) pairs
whose spread is not exactly 0.
"""
import numpy as np

rng = np.random.default_rng(0)
REDUCTIONS = {
    "np.std(X, 0)": lambda X: X.std(0),
    "np.nanstd(X, 0)": lambda X: np.nanstd(X, 0),
    "np.var(X, 0, ddof=1)": lambda X: X.var(0, ddof=1),
    "np.nanvar(X, 0, ddof=1)": lambda X: np.nanvar(X, 0, ddof=1),
    "sum/n then sum of squares": lambda X: ((X - X.sum(0) / X.shape[0]) ** 2).sum(0),
    "np.std(X[:, j]) (1-D copy)": lambda X: np.array([X[:, j].std() for j in range(X.shape[1])]),
    "np.ptp(X, 0)": lambda X: np.ptp(X, 0),
}
values = np.concatenate([rng.uniform(0, 1, 100), np.round(rng.uniform(0, 100, 100), 2)])
for name, f in REDUCTIONS.items():
    hits = {"C": 0, "F": 0}
    total = 0
    for n in range(2, 201):
        base = rng.normal(0, 1, (n, 3))
        for v in values:
            X = np.column_stack([base, np.full(n, v)])
            total += 1
            for order in "CF":
                hits[order] += f(np.asarray(X, order=order))[3] != 0
    print(f"{name:28s}  C {hits['C'] / total:6.1%}  F {hits['F'] / total:6.1%}  of {total}")
