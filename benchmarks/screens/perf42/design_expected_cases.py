"""Dump design_expected's figures on edge cases (one task, a task measured whole, gaps, a score outside [0, 1],
no complete model, uneven sizes) as JSON, to compare the code before and after a change byte for byte.

Usage: python benchmarks/screens/perf42/design_expected_cases.py OUT.json
"""
import json
import sys

import numpy as np
import pandas as pd

from harness_ext.methods.reduction.item_design_only import design_expected


def cases():
    rng = np.random.default_rng(5)
    models = [f"m{i}" for i in range(37)]
    s = lambda: pd.Series(rng.uniform(0.05, 0.95, len(models)), index=models)  # noqa: E731
    yield "two", {"a": {"n_items": 200, "scores": s()}, "b": {"n_items": 90, "scores": s()}}, {"a": 50, "b": 40}
    yield "one", {"a": {"n_items": 100, "scores": s()}}, {"a": 7}
    yield "one_whole", {"a": {"n_items": 30, "scores": s()}}, {"a": 30}
    gap = s()
    gap.iloc[[3, 9]] = np.nan
    out = s()
    out.iloc[4] = 1.2
    yield "gaps", {"a": {"n_items": 500, "scores": gap.dropna()}, "b": {"n_items": 40, "scores": s()},
                   "c": {"n_items": 1000, "scores": out}, "d": {"n_items": 25, "scores": s()}}, \
        {"a": 60, "b": 40, "c": 70, "d": 5}
    yield "disjoint", {"a": {"n_items": 50, "scores": s().iloc[:10]}, "b": {"n_items": 50, "scores": s().iloc[20:]}}, \
        {"a": 10, "b": 10}
    many = {f"t{j}": {"n_items": int(rng.integers(20, 3000)), "scores": s()} for j in range(23)}
    yield "many", many, {t: min(b["n_items"], 33) for t, b in many.items()}


def main():
    got = {}
    for name, tasks, n_run in cases():
        w = {t: float(i + 1) for i, t in enumerate(tasks)}
        for draws in (2000, 37):
            got[f"{name}/{draws}"] = design_expected(tasks, n_run, w, 0.9, 3, draws=draws)
    with open(sys.argv[1], "w") as fh:
        json.dump(got, fh, sort_keys=True, indent=1)


if __name__ == "__main__":
    main()
