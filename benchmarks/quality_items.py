"""Held-out quality of item-level estimators on the shared per-item tables (BenchPred's protocol).

Run::

    python benchmarks/quality_items.py                 # every table, 50 and 100 items, 20 seeds
    python benchmarks/quality_items.py --quick         # two tables, 50 items, 3 seeds

Data: ``../shared/data/items/<source>/<task>.parquet`` (long tables ``model, item, score`` of real 0/1
correctness; HELM Lite 83 models, Open LLM Leaderboard v2 428-429 models).

Protocol (Zhang, Dorner and Hardt 2025, §5; their ``main.py``): for each seed,

* interpolation: 25% of the models, drawn at random, are the targets, the rest the sources;
* extrapolation: the sources are the weakest 50% of models by their mean over all items, the targets
  the strongest 30%;

``n`` items are drawn uniformly (``RandomState(seed).permutation(N)[:n]``, the authors' draw) or chosen
by the method (anchor points); each estimator is fitted on the sources' answers to every item and
predicts each target's mean over all items from its answers to the chosen ones. Reported per table,
protocol, ``n`` and estimator: mean |error| in points (x100) with its standard error over seeds, 90%
interval coverage over targets x seeds and the median interval width in points. Baselines from the
paper, re-implemented: random sampling (``sample_mean``), random sampling + learn (``random_learn``),
AIPW as the authors compute it (``aipw_paper``) and anchor points (``anchor_weighted``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import SHARED_DATA  # noqa: E402

ITEMS = SHARED_DATA / "items"
QUICK_TABLES = ("helm_lite/gsm", "open_llm_v2/musr")


def load_table(path: Path) -> np.ndarray:
    """Models x items matrix of a long ``model, item, score`` Parquet table, models in file order."""
    import pandas as pd

    df = pd.read_parquet(path)
    models = pd.unique(df["model"])
    wide = df.pivot(index="model", columns="item", values="score").reindex(models)
    return wide.to_numpy(dtype=float)


def split(scores: np.ndarray, protocol: str, seed: int):
    """``(sources, targets)`` model indices of one seed, as the authors' ``main.py`` draws them."""
    m = scores.shape[0]
    if protocol == "interpolation":
        targets = np.random.RandomState(seed).permutation(m)[: int(0.25 * m)]
        sources = np.setdiff1d(np.arange(m), targets)
    else:
        order = np.argsort(scores.mean(axis=1), kind="stable")
        sources, targets = order[: int(0.5 * m)], order[-int(0.3 * m):]
    return sources, targets


def run_one(scores, protocol, n_items, seed, names):
    from harness_ext.methods.engine.item_estimators import ESTIMATORS, random_items

    sources, targets = split(scores, protocol, seed)
    S, T = scores[sources], scores[targets]
    truth = T.mean(axis=1)
    out = {}
    for name in names:
        est = ESTIMATORS[name]()
        items = (est.select(S, n_items, seed) if hasattr(est, "select")
                 else random_items(scores.shape[1], n_items, seed))
        res = est.fit(S, items).predict(T[:, items])
        err = np.abs(res.estimate - truth) * 100
        cover = (res.lower <= truth) & (truth <= res.upper)
        out[name] = (err, np.where(np.isnan(res.lower), np.nan, cover), res.width * 100)
    return out


def main(argv=None) -> int:
    from harness_ext.methods.engine.item_estimators import ESTIMATORS

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="two tables, 50 items, 3 seeds")
    ap.add_argument("--tables", nargs="*", help="tables as source/task (default: every table)")
    ap.add_argument("--items", nargs="*", type=int, default=[50, 100])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--estimators", nargs="*", default=list(ESTIMATORS))
    ap.add_argument("--protocols", nargs="*", default=["interpolation", "extrapolation"])
    args = ap.parse_args(argv)
    if not ITEMS.is_dir():
        print(f"skipped: no item tables at {ITEMS}")
        return 0
    tables = args.tables or sorted(str(p.relative_to(ITEMS).with_suffix("")) for p in ITEMS.glob("*/*.parquet"))
    n_list, seeds = args.items, args.seeds
    if args.quick:
        tables, n_list, seeds = list(args.tables or QUICK_TABLES), [50], 3
    print("table | protocol | n | estimator | mean |err| (pts) | se | 90% coverage | median width (pts)")
    for t in tables:
        scores = load_table(ITEMS / f"{t}.parquet")
        for protocol in args.protocols:
            for n in n_list:
                acc = {k: ([], [], [], []) for k in args.estimators}
                for seed in range(seeds):
                    for k, (e, c, w) in run_one(scores, protocol, n, seed, args.estimators).items():
                        acc[k][0].append(e.mean())
                        acc[k][1].append(c)
                        acc[k][2].append(w)
                for k, (means, covs, widths, _) in acc.items():
                    m = np.asarray(means)
                    cov = np.concatenate(covs)
                    cov_s = "n/a" if np.isnan(cov).all() else f"{np.nanmean(cov):.3f}"
                    wid = np.concatenate(widths)
                    wid_s = "n/a" if np.isnan(wid).all() else f"{np.nanmedian(wid):.2f}"
                    print(f"{t} | {protocol} | {n} | {k} | {m.mean():.2f} | {m.std(ddof=1) / np.sqrt(len(m)):.2f} | "
                          f"{cov_s} | {wid_s}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
