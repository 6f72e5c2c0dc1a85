"""The item loop's benchmark-level interval over several item draws: tasks combined as independent or correlated.

The item loop (``tests/test_item_loop.py``) measures one draw of items; every held-out model of that draw
shares its items, so its benchmark coverage is one draw's. This repeats the loop's splits (interpolation:
a quarter of the models held out at random, seed 0; frontier: the strongest 30% held out) over ``--draws``
item draws (``reduce``'s per-task seeds for ``--seed`` 0, 1, ...): per draw, the population's expected errors
and the tasks' error correlation exactly as ``reduce --items`` records them
(:func:`~harness_ext.methods.reduction.item_reduce.expected_errors_and_correlation`), then each held-out model
estimated per task from its sampled answers, and the benchmark's interval built both ways
(:func:`~harness_ext.methods.reduction.item_benchmark.benchmark_interval`).

    HARNESS_EXT_SHARED_DATA=../shared/data python benchmarks/item_benchmark_interval.py --tables helm_lite \
        --splits frontier interpolation --draws 5
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd


def load_tables(bench: str) -> dict:
    root = Path(os.environ.get("HARNESS_EXT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    tables = {p.stem: pd.read_parquet(p) for p in sorted((root / "items" / bench).glob("*.parquet"))}
    if not tables:
        raise SystemExit(f"no item tables in {root / 'items' / bench}")
    # Items in each table's own order, as ingest numbers them.
    return {t: df.assign(item=pd.Categorical(df["item"], categories=pd.unique(df["item"]))).pivot_table(
        index="model", columns="item", values="score", observed=False).sort_index() for t, df in tables.items()}


def held_out(full: dict, split: str) -> list:
    """The item loop's held-out models (``tests/test_item_loop.py::_splits``, seed 0)."""
    common = sorted(set.intersection(*(set(W.index) for W in full.values())))
    strength = pd.concat([W.mean(axis=1) for W in full.values()], axis=1).loc[common].mean(axis=1)
    order = list(strength.sort_values().index)
    if split == "interpolation":
        return list(np.random.default_rng(0).choice(common, size=max(8, len(common) // 4), replace=False))
    return order[len(order) - int(round(0.3 * len(order))):]


def one_draw(full: dict, held: list, seed: int, estimator: str, n_items: int, level: float) -> dict:
    from harness_ext.methods.reduction.item_benchmark import benchmark_interval, task_standard_error
    from harness_ext.methods.reduction.item_design_plan import draw_task, task_seed
    from harness_ext.methods.reduction.item_others import fit_predict, population_others, uses_other_tasks
    from harness_ext.methods.reduction.item_reduce import expected_errors_and_correlation
    from harness_ext.plugin_manager import get_registration

    tasks = sorted(full)
    pops, samples = {}, {}
    for t in tasks:
        train = full[t][~full[t].index.isin(held)].dropna(axis=0, thresh=full[t].shape[1] // 2)
        M = train.to_numpy(float)
        M = np.where(np.isnan(M), np.nanmean(M, axis=0), M)
        pops[t] = (M, list(train.index))
        samples[t] = draw_task("random", M, n_items, task_seed(seed, t))[0]
    expected, corr = expected_errors_and_correlation(pops, samples, {t: 1.0 for t in tasks}, estimator, level, seed)
    reg = get_registration("item_estimators", estimator)
    cross = uses_other_tasks(reg)
    E, S, T = (np.zeros((len(held), len(tasks))) for _ in range(3))
    for j, t in enumerate(tasks):
        Y = full[t].loc[held].to_numpy(float)
        others = [full[u].loc[held].to_numpy(float)[:, samples[u]] for u in tasks if u != t] if cross else []
        e = fit_predict(reg, level, pops[t][0], samples[t], Y[:, samples[t]],
                        population_others(pops, samples, t) if cross else [], others)
        E[:, j], S[:, j], T[:, j] = e.estimate, task_standard_error(e.lower, e.upper, e.se, level), Y.mean(axis=1)
    w, out = np.full(len(tasks), 1.0 / len(tasks)), {"expected": expected, "correlation": corr}
    for name, R in (("independent", None), ("correlated", np.asarray(corr["matrix"]))):
        est, lo, hi, _ = benchmark_interval(E, S, w, level, R)
        truth = T @ w
        out[name] = (float(np.mean((lo <= truth) & (truth <= hi))), float(np.mean(hi - lo)))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tables", nargs="+", default=["helm_lite", "open_llm_v2"])
    p.add_argument("--splits", nargs="+", default=["frontier", "interpolation"])
    p.add_argument("--draws", type=int, default=5)
    p.add_argument("--first-draw", type=int, default=0)
    p.add_argument("--estimator", default="crosstask")
    p.add_argument("--items", type=int, default=50)
    args = p.parse_args(argv)
    for bench in args.tables:
        full = load_tables(bench)
        for split in args.splits:
            held = held_out(full, split)
            rows = []
            for seed in range(args.first_draw, args.first_draw + args.draws):
                t0 = time.time()
                r = one_draw(full, held, seed, args.estimator, args.items, 0.9)
                R = np.asarray(r["correlation"]["matrix"])
                off = R[~np.eye(len(R), dtype=bool)]
                rows.append((r["independent"], r["correlated"]))
                print(f"{bench} {split} draw {seed}: {len(held)} held out; coverage / mean width (points) independent "
                      f"{r['independent'][0]:.2f} / {100 * r['independent'][1]:.2f}, correlated {r['correlated'][0]:.2f}"
                      f" / {100 * r['correlated'][1]:.2f}; correlation off-diagonal mean {off.mean():+.3f} "
                      f"(shrinkage {r['correlation']['shrinkage']:.2f}); {time.time() - t0:.0f} s", flush=True)
            ind, cor = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
            print(f"{bench} {split}, {len(rows)} draws: coverage independent {ind[:, 0].mean():.3f} (draws "
                  f"{ind[:, 0].min():.2f}-{ind[:, 0].max():.2f}), correlated {cor[:, 0].mean():.3f} (draws "
                  f"{cor[:, 0].min():.2f}-{cor[:, 0].max():.2f}); mean width {100 * ind[:, 1].mean():.2f} -> "
                  f"{100 * cor[:, 1].mean():.2f} points", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
