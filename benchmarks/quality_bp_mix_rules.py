"""How much can mixing other completers into the default's cells gain? Rules by nested CV, and oracles.

Run::

    python benchmarks/quality_bp_mix_rules.py --matrices helm_classic,tsc_bakeoff,benchbench \
        --csv tests/fixtures/benchpress/scores.csv --seeds 1 --cache /tmp/mixrules

On BenchPress's protocol (per-model 3-fold holdout, :func:`harness_ext.methods.engine.benchpress.holdout_folds`)
every fold's training matrix is completed by the default engine alone (``lowrank`` with ``bp_mix=0``), by
BenchPress's logit bias ALS at its published settings and at rank 1, rank 3, penalty 1 and penalty 0.01, by
the column ridge (:mod:`harness_ext.methods.engine.column_ridge`) and by the neighbour residuals
(:mod:`harness_ext.methods.engine.neighbour_residual`). Each
completer also completes the fold's inner cross-validation (the 3 folds of held-out training cells that
:func:`harness_ext.methods.engine.completion_mix.choose_mix` uses, same seeds), so a rule that chooses weights
from the training cells only can be replayed without refitting. Printed per matrix, as the ratio of
BenchPress's pooled MedAE (points) to the rule's (above 1: better than BenchPress):

* each completer alone and equal-weight averages;
* rules chosen by the nested CV: the default's (:func:`harness_ext.methods.engine.completion_mix.stack_weights`
  over the engine, BenchPress, the column ridge and the neighbour residuals; error over each column's sd), the
  earlier default's grid (weight of BenchPress 0, 0.5, 1), a 0.1 grid, the same scored in points, and simplex
  weights over four completers;
* in-sample oracles (weights chosen on the held-out cells themselves: upper bounds for any rule of that
  form): one weight, one weight per dataset, one per model.

``--cache DIR`` keeps each fold's completions (``<matrix>_s<seeds>_f<fold>_v3.npz``) for reruns.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("HARNESS_EXT_NO_PROGRESS", "1")
os.environ.setdefault("HARNESS_EXT_LOAD_PLUGINS", "")

#: BenchPress variants: its published settings, then the neighbours its paper's §4.4 disagreement features use.
BP_VARIANTS = {"bp": {}, "bp_r1": {"rank": 1}, "bp_r3": {"rank": 3}, "bp_l1": {"lam": 1.0}, "bp_l001": {"lam": 0.01}}
#: Equal-weight averages reported.
AVERAGES = {"engine+bp": ("lr", "bp"), "engine+bp+ridge": ("lr", "bp", "cr"), "engine+bp+bp_r3": ("lr", "bp", "bp_r3"),
            "engine+bp_r1..3": ("lr", "bp", "bp_r1", "bp_r3"), "bp_r1..3": ("bp", "bp_r1", "bp_r3")}
#: Rules replayed on the inner CV: (completers, weight step, error scale).
#: The default's completers, in the order of :data:`harness_ext.methods.engine.completion_mix.MEMBERS`.
DEFAULT_KEYS = ("lr", "bp", "cr", "nb")
RULES = {"earlier default grid (0, .5, 1), sd": (("lr", "bp"), 0.5, "invsd"), "grid 0.1, sd": (("lr", "bp"), 0.1, "invsd"),
         "grid 0.1, points": (("lr", "bp"), 0.1, "fac"),
         "simplex 0.1 over 4, sd": (("lr", "bp", "bp_r1", "bp_r3"), 0.1, "invsd")}


def completions(Xt, seed):
    from harness_ext.methods.engine import benchpress as bp
    from harness_ext.methods.engine import column_ridge
    from harness_ext.methods.engine.completion import LowRankCompleter

    out = {"lr": LowRankCompleter(random_state=seed, bp_mix=0.0).fit(Xt).mean_}
    out.update({k: bp.complete_units(Xt, **kw) for k, kw in BP_VARIANTS.items()})
    out["cr"], out["nb"] = column_ridge.completions(Xt, neighbours=True)[1:]
    return out


def fold_record(X, hide, seed, fac):
    """Completions of one outer fold's hidden cells (``o_*``) and of its inner CV's (``i_*``), with truth and scales."""
    from harness_ext.methods.engine.cell_cv import inverse_column_sd

    Xt = np.where(hide, np.nan, X)
    r, c = np.nonzero(hide)
    flat = r * X.shape[1] + c
    rec = {"o_truth": X[r, c], "o_fac": fac[c], "o_col": c, "o_row": r}
    rec.update({f"o_{k}": v[r, c] for k, v in completions(Xt, seed).items()})
    inv = inverse_column_sd(Xt)
    rec["o_invsd"] = inv[flat]
    idx = np.flatnonzero(~np.isnan(Xt).ravel())
    fold = np.random.default_rng(seed + 53).permutation(idx.size) % 3  # choose_mix's folds
    parts = []
    for k in range(3):
        h = idx[fold == k]
        Xi = Xt.ravel().copy()
        Xi[h] = np.nan
        done = completions(Xi.reshape(X.shape), seed)
        parts.append({"truth": Xt.ravel()[h], "fac": fac[h % X.shape[1]], "invsd": inv[h],
                      **{key: v.ravel()[h] for key, v in done.items()}})
    rec.update({f"i_{key}": np.concatenate([p[key] for p in parts]) for key in parts[0]})
    return rec


def simplex(n, step):
    k = int(round(1 / step))
    for cut in itertools.combinations(range(k + n - 1), n - 1):
        yield (np.diff(np.r_[-1, cut, k + n - 1]) - 1) / k


def rule_weights(rec, keys, step, scale):
    """Weights over ``keys`` with the lowest inner-CV median error (ties: more weight on the engine, listed first)."""
    P = np.stack([rec["i_" + k] for k in keys])
    err = lambda w: round(float(np.median(np.abs(w @ P - rec["i_truth"]) * rec["i_" + scale])), 12)
    return min(simplex(len(keys), step), key=lambda w: (err(w), -w[0]))


def default_weights(rec):
    """The default's weights over :data:`DEFAULT_KEYS` stacked on the record's inner CV (its rule)."""
    from harness_ext.methods.engine.completion_mix import stack_weights

    P = np.stack([rec["i_" + k] for k in DEFAULT_KEYS])
    return np.asarray(stack_weights(P, rec["i_truth"], rec["i_invsd"]))


def oracle(truth, a, b, groups, fac):
    """Weights of ``a`` chosen per group on the held-out cells themselves (a 0.1 grid): an in-sample bound."""
    out = np.empty_like(a)
    for g in np.unique(groups):
        m = groups == g
        w = min(np.linspace(0, 1, 11), key=lambda w: np.median(np.abs(w * a[m] + (1 - w) * b[m] - truth[m]) * fac[m]))
        out[m] = w * a[m] + (1 - w) * b[m]
    return out


def report(name, recs):
    cat = lambda key: np.concatenate([r[key] for r in recs])
    truth, fac = cat("o_truth"), cat("o_fac")
    medae = lambda p: float(np.median(np.abs(p - truth) * fac))
    base = medae(cat("o_bp"))
    rows = [("completer", k, base / medae(cat("o_" + k))) for k in ("lr", *BP_VARIANTS, "cr", "nb")]
    rows += [("average", n, base / medae(np.mean([cat("o_" + k) for k in ks], 0))) for n, ks in AVERAGES.items()]
    pred = [default_weights(r) @ np.stack([r["o_" + k] for k in DEFAULT_KEYS]) for r in recs]
    rows.append(("nested CV", "default (stacked, 4 completers), sd", base / medae(np.concatenate(pred))))
    for n, (keys, step, scale) in RULES.items():
        pred = [rule_weights(r, keys, step, scale) @ np.stack([r["o_" + k] for k in keys]) for r in recs]
        rows.append(("nested CV", n, base / medae(np.concatenate(pred))))
    lr, b = cat("o_lr"), cat("o_bp")
    rows += [("oracle", n, base / medae(oracle(truth, lr, b, g, fac))) for n, g in
             (("one weight", np.zeros(truth.size)), ("per dataset", cat("o_col")), ("per model", cat("o_row")))]
    print(f"\n{name}: BenchPress MedAE {base:.3f} points over {truth.size} held-out cells; BenchPress MedAE / MedAE")
    for kind, n, v in rows:
        print(f"  {kind:<10} {n:<30} {v:6.3f}")
    return {"matrix": name, "benchpress_medae": base, "rows": [{"kind": k, "name": n, "ratio": v} for k, n, v in rows]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matrices", default="helm_classic,tsc_bakeoff,benchbench", help="shared matrices (quality_holdout's names)")
    ap.add_argument("--csv", default=None, help="a models x benchmarks score table (BenchPress's published matrix)")
    ap.add_argument("--seeds", type=int, default=1, help="seeds of 3 per-model folds (default 1)")
    ap.add_argument("--db", default=None, help="reuse DuckDB store files for ingestion, as quality_holdout.py --db")
    ap.add_argument("--cache", default=None, help="a folder keeping each fold's completions")
    args = ap.parse_args(argv)

    import pandas as pd

    import quality_holdout as qh
    from harness_ext.methods.engine import benchpress as bp

    mats = {}
    if args.csv:
        mats[Path(args.csv).stem] = pd.read_csv(args.csv, index_col=0).apply(pd.to_numeric, errors="coerce").to_numpy(float)
    names = [n for n in args.matrices.split(",") if n]
    mats.update({n: raw.to_numpy(dtype=float) for n, (raw, _) in qh.load_matrices(names, db=args.db).items()})
    for name, X in mats.items():
        fac = bp.points_factor(X)
        recs = []
        for f, hide in enumerate(bp.holdout_folds(~np.isnan(X), n_seeds=args.seeds)):
            path = Path(args.cache) / f"{name}_s{args.seeds}_f{f}_v3.npz" if args.cache else None
            if path is not None and path.exists():
                recs.append(dict(np.load(path)))
                continue
            recs.append(fold_record(X, hide & ~np.isnan(X), f, fac))
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                np.savez(path, **recs[-1])
            print(f"{name}: fold {f + 1} done", file=sys.stderr, flush=True)
        report(name, recs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
