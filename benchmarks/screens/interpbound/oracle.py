"""Diagnosis: how far can an item estimator that uses the population's items go in INTERPOLATION? Oracle bounds.

Not an estimator: every oracle below reads answers a user never has. Draws as ``benchmarks/quality_items.py``'s
(``draw`` and ``run_one``: 25% random targets, 50 random items per task, the other tasks' samples with their own
seeds), and the four baselines, ``crosstask`` and ``stacked_learn`` measured on the same draws by ``run_one``.

* O1 "known item parameters": a latent model of the items fitted on the FULL answers of ALL models, the targets
  included, every task of the benchmark joined (this task's columns first). Each target's ability from its sampled
  answers only; its full-task score = (sum of its sampled answers + sum of the predicted probabilities of the
  unsampled items) / N. Two item models: the product's probabilistic PCA (``item_factor.factor_loadings`` /
  ``factor_scores``; p = mu + W z clipped to [0, 1]) and the product's multidimensional 2PL (``item_irt.fit_2pl``,
  joint MAP; abilities and p-IRT by ``item_irt.pirt_estimates``). Abilities from every task's sample (``all``)
  or from this task's sample only (``own``); one label per model and rank.
  ``ppca{r}_lto`` and ``2pl{r}_lto``: the item models fitted on every model but the target's fold (no answer of the
  target in the item model), abilities from every task's sample.
* O2 "a bigger population": ``stacked_learn`` and ``crosstask`` fitted on every model but the target's fold (the
  seed's targets in ``--folds`` interleaved folds; with 5 folds about 95% of the models are sources, against 75%
  in the headline).
* O3 the finite-population floor: sqrt(sum over the unsampled items of p (1 - p)) / N, p the 2PL's at the target's
  ability from ALL its answers (the joint fit; rank ``--floor-rank``): the error if the unsampled answers were
  predicted perfectly in expectation; ``floor_abs`` is sqrt(2 / pi) times it (the mean |error| of a normal error).

    export HARNESS_EXT_SHARED_DATA=/work/shared/data HARNESS_EXT_NO_PROGRESS=1
    nice -n 10 python benchmarks/screens/interpbound/oracle.py --tables helm_lite/gsm --seeds 5
"""
import argparse
import json
import os
import sys
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import quality_items as q  # noqa: E402

from harness_ext.methods.engine import item_crosstask as ict  # noqa: E402
from harness_ext.methods.engine.item_factor import StackedLearn, factor_loadings, factor_scores, \
    residual_variance  # noqa: E402
from harness_ext.methods.engine.item_irt import _sigmoid, fit_2pl, pirt_estimates  # noqa: E402
from harness_ext.methods.engine.item_learn import _fill_missing  # noqa: E402

HEADLINE = (*q.BASELINES, "crosstask", "stacked_learn")


def ppca_models(X: np.ndarray, ranks) -> dict:
    """rank -> the probabilistic PCA of ``X`` (gaps filled with the item means) on every column, as
    ``FactorKernel`` reads the leading columns of one fit (the residual variances recomputed per rank)."""
    Xf = _fill_missing(X, X)[0]
    full = factor_loadings(Xf, np.arange(X.shape[1]), max(ranks))
    var = (Xf - full["mu"]).var(axis=0)
    return {r: {"mu": full["mu"], "W": full["W"][:, :r], "psi": residual_variance(var, full["W"][:, :r], 0.05)}
            for r in ranks}


def ppca_estimate(model: dict, Y_obs: np.ndarray, obs: np.ndarray, items: np.ndarray, n_task: int) -> np.ndarray:
    """(sum of the sampled answers + sum of the PCA's predicted p over the unsampled items of the task) / N."""
    sub = {k: model[k][obs] for k in ("mu", "W", "psi")}
    Y = np.where(np.isnan(Y_obs), sub["mu"], Y_obs)  # a missing answer: the item's mean (no information)
    z = factor_scores(sub, Y)
    p = np.clip(model["mu"][:n_task] + z @ model["W"][:n_task].T, 0.0, 1.0)
    unseen = np.setdiff1d(np.arange(n_task), items)
    return (np.nansum(Y_obs[:, : len(items)], axis=1) + p[:, unseen].sum(axis=1)) / n_task


def columns(d: dict, widths: list) -> tuple:
    """``(own, all)``: the global columns of this task's sample and of every task's (this task first)."""
    ends = np.cumsum([0] + widths)
    other = [ends[k + 1] + np.asarray(it) for k, (_, it) in enumerate(d["fit_o"])]
    return np.asarray(d["items"]), np.concatenate([d["items"], *other])


def o1(X, targets, d, widths, ppca, irt, args) -> dict:
    """O1: the item models fitted on every model's full answers; the targets' abilities from their samples."""
    n_task, out = widths[0], {}
    own, every = columns(d, widths)
    for scope, obs in (("all", every), ("own", own)):
        Y = X[targets][:, obs]
        for r, model in ppca.items():
            out[f"O1_ppca{r}_{scope}"] = ppca_estimate(model, Y, obs, d["items"], n_task)
        for r, (A, b, _) in irt.items():
            out[f"O1_2pl{r}_{scope}"] = pirt_estimates(Y, obs, A, b, task=np.arange(n_task))[1]
    return out


def fold_oracles(X, scores, others, targets, d, widths, args) -> dict:
    """O2 and the item models without the target (``_lto``): per interleaved fold of the targets, fitted on the
    other models."""
    m, n_task = X.shape[0], widths[0]
    own, every = columns(d, widths)
    its = [it for _, it in d["fit_o"]]
    names = ["O2_stacked_learn", "O2_crosstask", f"O1_ppca{args.lto_rank}_lto_all"]
    names += [f"O1_2pl{args.lto_irt_rank}_lto_all"] if args.lto_irt_rank else []
    out = {k: np.full(len(targets), np.nan) for k in names}
    for f in range(args.folds):
        pos = np.arange(f, len(targets), args.folds)
        held = targets[pos]
        src = np.setdiff1d(np.arange(m), held)
        fit_o = [(o[src], it) for o, it in zip(others, its)]
        pred_o = [o[held][:, it] for o, it in zip(others, its)]
        Y = scores[held][:, d["items"]]
        for name, cls in zip(names[:2], (StackedLearn, ict.CrossTask)):
            out[name][pos] = cls().fit(scores[src], d["items"], others=fit_o).predict(Y, others=pred_o).estimate
        model = ppca_models(X[src], (args.lto_rank,))[args.lto_rank]
        out[names[2]][pos] = ppca_estimate(model, X[held][:, every], every, d["items"], n_task)
        if not args.lto_irt_rank:
            continue
        A, b, _ = fit_2pl(X[src], dims=args.lto_irt_rank, max_iter=args.irt_iter)
        out[names[3]][pos] = pirt_estimates(X[held][:, every], every, A, b, task=np.arange(n_task))[1]
    return out


def floor(irt_full, targets, items, n_task) -> dict:
    """O3: the unsampled items' Bernoulli noise at the 2PL's p for each target's ability from all its answers."""
    A, b, th = irt_full
    P = _sigmoid(th[targets] @ A[:n_task].T - b[:n_task])
    unseen = np.setdiff1d(np.arange(n_task), items)
    sd = np.sqrt((P[:, unseen] * (1 - P[:, unseen])).sum(axis=1)) / n_task
    return {"O3_floor_rms": sd, "O3_floor_abs": np.sqrt(2 / np.pi) * sd}


def one_table(t: str, args) -> dict:
    """label -> per-seed mean |error| (points) of every estimator and oracle on table ``t``."""
    scores, models, others, strength = q.load_task(t)
    X = np.hstack([scores, *others])
    widths = [scores.shape[1]] + [o.shape[1] for o in others]
    ppca = ppca_models(X, args.ppca_ranks)
    irt = {r: fit_2pl(X, dims=r, max_iter=args.irt_iter) for r in args.irt_ranks}
    acc = {}
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        d = q.draw(scores, "interpolation", 50, seed, others, 1.0, strength)
        targets, truth = d["targets"], d["truth"]
        errs = {k: v[0] for k, v in q.run_one(scores, "interpolation", 50, seed, HEADLINE, others).items()}
        est = {**o1(X, targets, d, widths, ppca, irt, args),
               **fold_oracles(X, scores, others, targets, d, widths, args)}
        errs.update({k: np.abs(v - truth) * 100 for k, v in est.items()})
        errs.update({k: v * 100 for k, v in floor(irt[args.floor_rank], targets, d["items"], widths[0]).items()})
        for k, e in errs.items():
            acc.setdefault(k, []).append(float(np.mean(e)))
        print(f"# {t} seed {seed}: crosstask {np.mean(errs['crosstask']):.2f} | O2_crosstask "
              f"{np.mean(errs['O2_crosstask']):.2f} | O1_2pl{args.floor_rank}_all "
              f"{np.mean(errs[f'O1_2pl{args.floor_rank}_all']):.2f}", flush=True)
    return acc


def report(res: dict) -> None:
    """Per table: each label's mean over seeds, its se over seeds, its ratio to the best baseline; then averages."""
    print("\ntable | label | mean |err| (pts) | se over seeds | / best baseline (which)")
    ratios = {}
    for t, acc in res.items():
        base = {k: np.mean(acc[k]) for k in q.BASELINES}
        best = min(base, key=base.get)
        for k, v in acc.items():
            v = np.asarray(v)
            ratios.setdefault(k, []).append(v.mean() / base[best])
            print(f"{t} | {k} | {v.mean():.3f} | {v.std(ddof=1) / np.sqrt(len(v)):.3f} | "
                  f"{v.mean() / base[best]:.3f} ({best})")
    for pattern in ("O1_ppca", "O1_2pl"):
        for scope in ("all", "own"):
            # the oracle's rank chosen per table on the same draws (in-sample: a bound, not an estimator)
            keys = [k for k in next(iter(res.values())) if k.startswith(pattern) and k.endswith("_" + scope)
                    and "lto" not in k]
            for t, acc in res.items():
                best_k = min(keys, key=lambda k: np.mean(acc[k]))
                base = min(np.mean(acc[k]) for k in q.BASELINES)
                ratios.setdefault(f"{pattern}BEST_{scope}", []).append(np.mean(acc[best_k]) / base)
                print(f"{t} | {pattern}BEST_{scope} = {best_k} | {np.mean(acc[best_k]):.3f} | | "
                      f"{np.mean(acc[best_k]) / base:.3f}")
    print("\naverage over tables: label | mean ratio to the best baseline | tables | per table")
    for k, v in ratios.items():
        print(f"{k} | {np.mean(v):.3f} | {len(v)} | " + " ".join(f"{x:.3f}" for x in v))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", nargs="*")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--ppca-ranks", nargs="*", type=int, default=[1, 2, 3, 5, 8, 12, 20])
    ap.add_argument("--irt-ranks", nargs="*", type=int, default=[1, 2, 4, 8, 16])
    ap.add_argument("--irt-iter", type=int, default=100)
    ap.add_argument("--lto-rank", type=int, default=8)
    ap.add_argument("--lto-irt-rank", type=int, default=4, help="0: skip the 2PL without the target (the slow part)")
    ap.add_argument("--dump", type=Path, help="also write every table's per-seed figures to this JSON file")
    ap.add_argument("--load", nargs="*", type=Path,
                    help="report the JSON files of earlier runs (tables merged, a table's seeds joined across files)")
    ap.add_argument("--floor-rank", type=int, default=4)
    args = ap.parse_args(argv)
    if args.load:
        res = {}
        for path in args.load:  # a table in several files (runs of other seeds): its seeds joined
            for t, acc in json.loads(path.read_text()).items():
                for k, v in acc.items():
                    res.setdefault(t, {}).setdefault(k, []).extend(v)
        report(res)
        return 0
    tables = args.tables or sorted(str(p.relative_to(q.ITEMS).with_suffix("")) for p in q.ITEMS.glob("*/*.parquet"))
    res = {t: one_table(t, args) for t in tables}
    if args.dump:
        args.dump.write_text(json.dumps(res, indent=1))
    report(res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
