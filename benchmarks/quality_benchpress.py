"""BenchPress's own protocol, BenchPress as published against the engine's default, side by side.

Run::

    python benchmarks/quality_benchpress.py                       # every shared matrix, 10 seeds x 3 folds
    python benchmarks/quality_benchpress.py --seeds 1             # quick: 1 seed x 3 folds
    python benchmarks/quality_benchpress.py --csv tests/fixtures/benchpress/scores.csv  # BenchPress's own matrix

Protocol (Zeng & Papailiopoulos, 2026, §4.2): per-model 3-fold holdout for
seeds 42-51 (``--first-seed`` moves them; :func:`harness_ext.methods.engine.benchpress.holdout_folds`): each
model's observed cells are shuffled and cut in three, and fold ``k`` hides
block ``k`` of every model. Every fold is completed by

* ``benchpress``: the re-implementation of the published method (logit bias
  ALS, rank 2, lambda 0.1, 10 starts x 40 sweeps; its hybrid risk model,
  matrix support and the disagreement of 15 other completions, with
  leave-fold-out conformal 90% intervals, calibrated inside the fold's
  training matrix on its own 30 folds);
* the default predictor (``lowrank``, or ``--predictor``), whose completion of
  a matrix's cells is a weighted average of its own low-rank fit, BenchPress's
  completion, a column ridge regression and a nearest-models residual correction, the weights
  stacked by nested cross-validation (:mod:`harness_ext.methods.engine.completion_mix`).

BenchPress's intervals are scored twice: as the predictor gives them (its
interval layer calibrated inside each fold's training matrix, as a user gets
them), and as the paper scores them (:func:`harness_ext.methods.engine.benchpress.paper_evaluation`:
the risk model cross-fitted over the evaluation folds and each fold's
multiplier from the other folds' cells).

Reported per matrix and method, in points (x100 for scores in [0, 1]):
BenchPress's MedAE (the median absolute error of every held-out cell pooled),
the median over folds of each fold's MedAE, 90% coverage and its worst fold,
median interval width; then ``ratio`` = BenchPress MedAE / default MedAE
(above 1: the default is better; the bar is 1.05 on every matrix).

``--risk-models`` names the risk models of the paper-style scoring (default
``ridge``; ``paper``: the three MLPs behind the paper's §4.4 figures,
:data:`harness_ext.methods.engine.benchpress.PAPER_RISK_MODELS`; ``published``:
the released package's ridge and three MLPs). The MLPs cost minutes of network
fits per matrix; the ``benchpress`` predictor's own intervals keep ridge.
``--intervals`` names the risk model's features in both scorings (``hybrid``,
BenchPress's default, :mod:`harness_ext.methods.engine.benchpress_risk`; or
``support``, the matrix support alone); ``--paper-only`` skips the per-fold
predictor fits and gives the paper-style scoring alone (seconds to minutes).
The paper's figures on its own matrix are printed beside them: MedAE 4.58, its
hybrid 90% intervals covering 0.899 at a median width of 27.2 points (matrix
support alone: 0.900 at 29.3).

``--points-only`` skips both methods' intervals (the ratio needs point predictions only; coverage and width
print as nan), about a quarter of the default's cost on the large matrices. ``--save-errors DIR`` writes each
matrix's held-out absolute errors per method to ``DIR/NAME_seedsA-B.npz`` after every fold (``n_folds``: how many
it covers, ``fold_sizes``: their held-out cells), so runs over disjoint seed ranges (run side by side) pool into one MedAE and ratio, and a run stopped
early keeps its finished folds.

``--csv`` reads a models x benchmarks table (first column the model id, NaN
or empty where not run, scores as published: percentages 0-100, Elo as is);
``--folds`` a BenchPress folds file (``folds_s10_f3_bs42_ms1.json``: its
``test_cells`` per seed and fold) instead of regenerating the folds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("HARNESS_EXT_NO_PROGRESS", "1")
os.environ.setdefault("HARNESS_EXT_LOAD_PLUGINS", "")


def read_folds(path, shape):
    """BenchPress's folds JSON -> ``(n_folds, m, d)`` boolean masks of hidden cells."""
    data = json.loads(Path(path).read_text())
    if (data.get("n_models"), data.get("n_bench")) != tuple(shape):
        raise SystemExit(f"{path}: folds for {data.get('n_models')} x {data.get('n_bench')}, matrix is {shape}")
    out = np.zeros((len(data["folds"]),) + tuple(shape), dtype=bool)
    for f, rec in enumerate(data["folds"]):
        ij = np.asarray(rec["test_cells"], dtype=int).reshape(-1, 2)
        out[f, ij[:, 0], ij[:, 1]] = True
    return out


#: Zeng & Papailiopoulos (2026) on their 84 x 133 matrix: MedAE, and (coverage, median width) of the 90% intervals.
PAPER_FIGURES = {"medae": 4.58, "hybrid": (0.899, 27.2), "support": (0.900, 29.3)}


def evaluate(X, folds, names, progress=None, intervals="hybrid", points_only=False):
    """``{method: {"err": pooled |errors| (points), "fold_medae", "fold_cov", "width": pooled widths}}``; with
    ``points_only`` the intervals are not computed (coverage and width NaN)."""
    from harness_ext.methods.engine import benchpress as bp
    from harness_ext.methods.pounce import make_predictor

    P = bp.points_factor(X)
    res = {n: {"err": [], "fold_medae": [], "fold_cov": [], "width": []} for n in names}
    for f, hide in enumerate(folds):
        hide = hide & ~np.isnan(X)
        Xt = np.where(hide, np.nan, X)
        truth = X[hide]
        scale = np.broadcast_to(P, X.shape)[hide]
        for name in names:
            kw = {"intervals": intervals} if name == "benchpress" else {}
            est = make_predictor(name, random_state=f, **kw).fit(Xt)
            mean = est.mean_[hide]
            lo, hi = (np.full_like(mean, np.nan),) * 2 if points_only else (est.lower_[hide], est.upper_[hide])
            err = np.abs(mean - truth) * scale
            r = res[name]
            r["err"].append(err)
            r["fold_medae"].append(float(np.median(err)))
            r["fold_cov"].append(np.nan if points_only else float(((truth >= lo) & (truth <= hi)).mean()))
            r["width"].append((hi - lo) * scale)
        if progress:
            progress(f"fold {f + 1}/{len(folds)}", res)
    return res


def save_errors(folder, name, first_seed, n_seeds, res):
    """Write the held-out absolute errors so far, per method, to ``folder/NAME_seedsA-B.npz`` (``n_folds``: the
    folds they cover, in order; a stopped run's file keeps its finished folds)."""
    out = Path(folder) / f"{name}_seeds{first_seed}-{first_seed + n_seeds - 1}.npz"
    out.parent.mkdir(parents=True, exist_ok=True)
    errs = {m: np.concatenate(r["err"]) for m, r in res.items()}
    sizes = [e.size for e in next(iter(res.values()))["err"]]
    np.savez_compressed(out, n_folds=len(sizes), fold_sizes=np.asarray(sizes), **errs)


def summarise(name, shape, res, default):
    row = {"matrix": name, "shape": f"{shape[0]} x {shape[1]}"}
    for meth, r in res.items():
        err = np.concatenate(r["err"])
        row[meth] = {"medae": float(np.median(err)), "medae_fold_median": float(np.median(r["fold_medae"])),
                     "cov": float(np.mean(np.concatenate([np.full(e.size, c) for e, c in zip(r["err"], r["fold_cov"])]))),
                     "cov_min": float(np.min(r["fold_cov"])), "width": float(np.median(np.concatenate(r["width"]))),
                     "n_cells": int(err.size)}
    row["ratio"] = row["benchpress"]["medae"] / row[default]["medae"]
    return row


def print_paper(rows, intervals="hybrid", file=None):
    print("\nBenchPress's intervals scored as its paper scores them (risk cross-fitted over these folds, each fold's "
          "multiplier from the others): coverage (worst fold), median width", file=file)
    for r in rows:
        p = r.get("benchpress_paper")
        if p:
            print(f"{r['matrix']:<14}{r['shape']:>11}  MedAE {p['medae']:.3f}  cov90 {p['coverage']:.3f} "
                  f"({min(p['fold_coverage']):.2f})  width {p['width']:.2f}  {p.get('intervals', 'support')} features, "
                  f"risk {','.join(p.get('risk_models', ['ridge']))}", file=file)
    cov, width = PAPER_FIGURES[intervals]
    print(f"{'paper':<14}{'84 x 133':>11}  MedAE {PAPER_FIGURES['medae']:.2f}   cov90 {cov:.3f}         width {width:.1f}"
          f"   (Zeng & Papailiopoulos 2026, {intervals} risk model, its own matrix)", file=file)


def print_rows(rows, default, file=None):
    print(f"\nBenchPress's protocol (per-model 3 folds x seeds): MedAE pooled, median of fold MedAEs, coverage "
          f"(worst fold), median 90% width; ratio = BenchPress MedAE / {default} MedAE", file=file)
    print(f"{'matrix':<14}{'shape':>11}  {'method':<11}{'MedAE':>7}{'foldMed':>8}{'cov90':>7}{'min':>6}{'width':>7}"
          f"{'ratio':>7}", file=file)
    for r in rows:
        for i, meth in enumerate(("benchpress", default)):
            m = r[meth]
            lead = f"{r['matrix']:<14}{r['shape']:>11}" if i == 0 else " " * 25
            tail = f"{r['ratio']:>7.3f}" if i == 1 else ""
            print(f"{lead}  {meth:<11}{m['medae']:>7.3f}{m['medae_fold_median']:>8.3f}{m['cov']:>7.3f}"
                  f"{m['cov_min']:>6.2f}{m['width']:>7.2f}{tail}", file=file)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matrices", default=None, help="comma-separated shared matrices (quality_holdout's names; "
                                                     "default all, none with --csv)")
    ap.add_argument("--csv", default=None, help="a models x benchmarks score table (BenchPress's published matrix)")
    ap.add_argument("--folds", default=None, help="BenchPress's folds JSON for --csv (default: regenerate them)")
    ap.add_argument("--seeds", type=int, default=10, help="seeds of 3 per-model folds (default 10, the paper's)")
    ap.add_argument("--first-seed", type=int, default=42,
                    help="the first fold seed (default 42, the paper's: seeds 42-51); a later one gives folds no "
                         "design choice looked at")
    ap.add_argument("--predictor", default="lowrank", help="the default predictor to compare (default lowrank)")
    ap.add_argument("--db", default=None, help="reuse DuckDB store files for ingestion, as quality_holdout.py --db")
    ap.add_argument("--json", default=None, help="write the summary rows to this JSON file")
    ap.add_argument("--save-errors", default=None,
                    help="a directory: write each matrix's held-out absolute errors per method (points, folds in "
                         "order) to NAME_seedsA-B.npz, so runs over disjoint seeds can be pooled")
    ap.add_argument("--intervals", default="hybrid", choices=("hybrid", "support"),
                    help="BenchPress's risk-model features: hybrid (its default: matrix support and the disagreement "
                         "of 15 completers) or support (matrix support alone)")
    ap.add_argument("--points-only", action="store_true",
                    help="point predictions only: skip both methods' intervals (the ratio needs none; coverage and "
                         "width print as nan). The default's interval calibration is about a quarter of its cost")
    ap.add_argument("--paper-only", action="store_true",
                    help="only BenchPress's intervals as its paper scores them (no per-fold predictor fits)")
    ap.add_argument("--risk-models", default="ridge",
                    help="risk models of the paper-style interval scoring: comma-separated names among ridge, mlp16, "
                         "mlp32, mlp64_32, or 'paper' (the three MLPs of the paper's figures) or 'published' (all four)")
    args = ap.parse_args(argv)

    import pandas as pd
    from tqdm import tqdm

    import quality_holdout as qh
    from harness_ext.methods.engine import benchpress as bp
    from harness_ext.methods.engine import benchpress_risk as bpr

    kinds = bp.check_kinds({"paper": bp.PAPER_RISK_MODELS, "published": tuple(bp.RISK_MODELS)}.get(
        args.risk_models, args.risk_models.split(",")))
    mats = {}
    if args.csv:
        df = pd.read_csv(args.csv, index_col=0)
        mats[Path(args.csv).stem] = df.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    names = args.matrices.split(",") if args.matrices else ([] if args.csv else list(qh.SOURCES))
    mats.update({n: raw.to_numpy(dtype=float) for n, (raw, _) in qh.load_matrices(names, db=args.db).items()})
    t0 = time.perf_counter()
    rows = []
    for name, X in mats.items():
        folds = (read_folds(args.folds, X.shape) if args.csv and args.folds and name == Path(args.csv).stem
                 else bp.holdout_folds(~np.isnan(X), n_seeds=args.seeds, base_seed=args.first_seed))
        if args.paper_only:
            rows.append({"matrix": name, "shape": f"{X.shape[0]} x {X.shape[1]}"})
        else:
            bar = tqdm(total=len(folds), desc=name, file=sys.stderr)

            def progress(msg, res, bar=bar, name=name):
                bar.set_postfix_str(msg)
                bar.update(1)
                if args.save_errors:  # after every fold, so a run stopped early keeps its finished folds
                    save_errors(args.save_errors, name, args.first_seed, args.seeds, res)

            res = evaluate(X, folds, ("benchpress", args.predictor), progress, args.intervals, args.points_only)
            bar.close()
            rows.append(summarise(name, X.shape, res, args.predictor))
        # BenchPress's intervals as its paper scores them: leave-fold-out over these folds (no refit per fold)
        score = bpr.paper_evaluation_hybrid if args.intervals == "hybrid" else bp.paper_evaluation
        rows[-1]["benchpress_paper"] = {**score(X * bp.points_factor(X), folds, kinds=kinds),
                                        "risk_models": list(kinds), "intervals": args.intervals}
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    if not args.paper_only:
        print_rows(rows, args.predictor)
    print_paper(rows, args.intervals)
    last = args.first_seed + args.seeds - 1
    print(f"\n{args.seeds} seeds ({args.first_seed}-{last}) x 3 per-model folds; {time.perf_counter() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
