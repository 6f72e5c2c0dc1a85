"""Round-trip quality of reduce -> run the subset -> predict on the bundled Pythia runs.

For each held-out Pythia model, every checkpoint of it is removed from the
store, ``reduce`` (the library call behind ``harness-ext reduce``, default
selector, similarity and predictor) picks a subset of the 57 MMLU subjects
from the others, and ``predict`` (the call behind ``harness-ext predict``)
reads the held-out model's result files and predicts the subjects outside the
subset and the full-benchmark score. Cells outside the subset are masked
before the predictor sees them (``tests/test_manifest_predict.py`` checks that
full files and subset-only files give identical predictions), so the held-out
files' other subjects serve as the truth.

Three hold-out schemes:

* ``variant``: one model directory (e.g. ``pythia-2.8b``) is held out; its
  twin trained on deduplicated data (``pythia-2.8b-deduped``) stays in.
* ``size``: every variant of one size is held out (``pythia-2.8b`` and
  ``pythia-2.8b-deduped``), the harder case.
* ``frontier``: the checkpoints are ranked by their normalised full-benchmark
  score; ``reduce`` sees the weakest half, ``predict`` the strongest 30%
  (extrapolation to stronger models than any it was built from).

Reported per hold-out, on the normalised scale (0 = chance, 1 = perfect):
RMSE and largest error of the predicted full-benchmark score over the
model's checkpoints, and how often its 90% interval holds the truth; RMSE
and 90%-interval coverage per hidden subject; the manifest's own expected
aggregate RMSE (10-fold CV on the training models); and two baselines for
the full score: the plain mean of the subset's normalised scores and the
training models' mean full score. And the benchmark's own score (``acc``:
MMLU accuracy, subjects weighted by their test questions): RMSE, mean signed
error (bias), how often its 90% interval holds the truth and its mean width;
The normalised scores are before the floor at chance, what ``reduce`` fits
on (``harness_ext.store.floor``); ``--floored`` predicts as from a manifest
written before it did: the training scores floored at chance, their values
below chance recorded for the acc interval's calibration (the subset is the
one chosen on the scores before the floor).

Usage::

    python benchmarks/quality_round_trip.py                 # both schemes, budget 8 (a few minutes on 2 cores)
    python benchmarks/quality_round_trip.py --quick         # three variants
    python benchmarks/quality_round_trip.py --scheme size --budget 0.15
    python benchmarks/quality_round_trip.py --scheme all --quick --floored   # as manifests fitted on floored scores

This is a quality benchmark, not a speed one, so ``benchmarks/run.py`` does
not run it.

References
----------
SimBA (Subramani, Gomez and Diab) §4 and Table 4 (S -> D \\ S regression, MSE on held-out models).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault("HARNESS_EXT_NO_PROGRESS", "1")
os.environ.setdefault("HARNESS_EXT_LOAD_PLUGINS", "")

from harness_ext.store.ingest import bundled_data_path, ingest_paths  # noqa: E402
from harness_ext.methods.reduction.manifest import build_manifest  # noqa: E402
from harness_ext.store.matrix import MatrixQuery, load_matrix  # noqa: E402
from harness_ext.methods.reduction.benchmark_score import floor_at_chance  # noqa: E402
from harness_ext.methods.reduction.predict import embedded_values, predict_from_manifest, predict_scores  # noqa: E402
from harness_ext.store.floor import unfloored  # noqa: E402
from harness_ext.store.db import Store  # noqa: E402

QUICK = ("pythia-160m", "pythia-2.8b", "pythia-12b")


def _size(name: str) -> str:
    return re.match(r"pythia-[0-9.]+[mb]", name).group(0)


def holdouts(root: Path, scheme: str, quick: bool) -> list:
    """``[(label, [held-out dirs])]`` for a hold-out scheme."""
    dirs = sorted(p for p in root.iterdir() if p.is_dir())
    if scheme == "variant":
        out = [(d.name, [d]) for d in dirs]
        return [o for o in out if o[0] in QUICK] if quick else out
    sizes = {}
    for d in dirs:
        sizes.setdefault(_size(d.name), []).append(d)
    out = sorted(sizes.items(), key=lambda kv: float(kv[0][7:-1]) * (1000 if kv[0].endswith("b") else 1))
    return [o for o in out if o[0] in QUICK] if quick else out


def one(root: Path, held: list, budget: str, n_random: int, seed: int, floored: bool = False) -> dict:
    train_dirs = [p for p in sorted(root.iterdir()) if p.is_dir() and p not in held]
    with Store.open(":memory:") as store:
        ingest_paths(store, train_dirs, show_progress=False)
        df = load_matrix(store, MatrixQuery(benchmarks=("mmlu",)))
    manifest = _manifest(df, budget, n_random, seed, floored)
    with Store.open(":memory:") as store:
        ingest_paths(store, held, show_progress=False)
        truth = load_matrix(store, MatrixQuery(benchmarks=("mmlu",)))
    return scores(manifest, df, truth, predict_from_manifest(manifest, held))


def frontier(root: Path, budget: str, n_random: int, seed: int, floored: bool = False) -> dict:
    """The frontier split: fit on the weakest half of the checkpoints (by their normalised full-benchmark score),
    predict the strongest 30% from their raw scores (:func:`predict_scores`, what ``predict`` calls once it has read
    the results files; it observes only the subset's cells)."""
    with Store.open(":memory:") as store:
        ingest_paths(store, [p for p in sorted(root.iterdir()) if p.is_dir()], show_progress=False)
        df = load_matrix(store, MatrixQuery(benchmarks=("mmlu",)))
        raw = load_matrix(store, MatrixQuery(benchmarks=("mmlu",), normalise="none"))
    order = df.index[np.argsort(df.mean(axis=1).to_numpy(), kind="stable")]
    weak, strong = order[:len(order) // 2], order[len(order) - int(round(0.3 * len(order))):]
    manifest = _manifest(df.loc[weak], budget, n_random, seed, floored)
    columns = [d["name"] for d in manifest["datasets"]]
    pred = predict_scores(manifest, raw.loc[strong].reindex(columns=columns))
    return scores(manifest, df.loc[weak], df.loc[strong], pred)


def _manifest(df, budget, n_random, seed, floored):
    """``reduce``'s manifest as ``predict`` reads it back; ``floored``: :func:`floored_manifest` of it."""
    manifest = json.loads(json.dumps(build_manifest(df, budget=budget, n_random=n_random, random_state=seed)))
    return floored_manifest(manifest) if floored else manifest


def floored_manifest(manifest: dict, record: bool = True) -> dict:
    """``manifest`` as ``reduce`` wrote it before it fitted before the floor at chance: the training cells below
    chance floored at 0, their values before recorded in ``training_matrix.unclipped`` (``record=False``: not
    recorded, as written before that), no ``prediction.floor_at_chance``. The subset and folds stay as chosen."""
    m = json.loads(json.dumps(manifest))
    del m["prediction"]["floor_at_chance"]
    tm = m["training_matrix"]
    cells = embedded_values(tm)
    rows, cols = np.nonzero(cells < 0)
    if record and rows.size:
        tm["unclipped"] = {"description": "values before the floor", "rows": rows.tolist(), "columns": cols.tolist(),
                           "values": cells[rows, cols].tolist()}
    tm["values"] = [[None if np.isnan(v) else max(float(v), 0.0) for v in row] for row in cells]
    return m


def scores(manifest: dict, df: pd.DataFrame, truth: pd.DataFrame, pred) -> dict:
    """Errors and coverage of the predictions ``pred`` of the held-out models ``truth`` (normalised as the manifest
    fits them: before the floor at chance, unless it is floored)."""
    if not floor_at_chance(manifest):
        df, truth = unfloored(df), unfloored(truth)
    columns = [d["name"] for d in manifest["datasets"]]
    truth = truth.reindex(columns=columns)
    agg = pred.aggregate.set_index("model").loc[truth.index]
    w = np.array([d["weight"] for d in manifest["datasets"]])
    true_agg = truth.to_numpy() @ w
    # The normalised aggregate (the manifest's weights): the figures quoted since the first runs are on it.
    err = agg["normalised"].to_numpy() - true_agg
    inside = (agg["normalised_lower"].to_numpy() <= true_agg) & (true_agg <= agg["normalised_upper"].to_numpy())
    cells = truth.stack().rename("true").reset_index().set_axis(["model", "dataset", "true"], axis=1)
    hidden = pred.table[~pred.table["observed"]].merge(cells, on=["model", "dataset"], validate="one_to_one")
    cell_err = (hidden["score"] - hidden["true"]).to_numpy()
    cell_in = ((hidden["lower"] <= hidden["true"]) & (hidden["true"] <= hidden["upper"])).to_numpy()
    subset_idx = [columns.index(s["name"]) for s in manifest["subset"]]
    naive = truth.to_numpy()[:, subset_idx].mean(axis=1)
    train_mean = float(df.reindex(columns=columns).to_numpy().mean(axis=1).mean())
    rmse = lambda e: float(np.sqrt(np.mean(np.square(e))))  # noqa: E731
    # The benchmark's own score: MMLU acc, subjects weighted by test questions, with its own interval.
    acc_err = (agg["aggregate"] - agg["actual"]).to_numpy(dtype=float)
    acc_in = ((agg["lower"] <= agg["actual"]) & (agg["actual"] <= agg["upper"])).to_numpy()
    return {
        "checkpoints": len(truth), "train models": df.shape[0], "k": manifest["selection"]["subset_size"],
        "true full (mean)": float(true_agg.mean()),
        "agg RMSE": rmse(err), "agg max|err|": float(np.abs(err).max()), "agg 90% cover": float(inside.mean()),
        "expected RMSE": manifest["prediction"]["expected_error"]["aggregate_rmse"],
        "cell RMSE": rmse(cell_err), "cell MSE": float(np.mean(cell_err ** 2)), "cell 90% cover": float(cell_in.mean()),
        "subset-mean RMSE": rmse(naive - true_agg), "train-mean RMSE": rmse(train_mean - true_agg),
        "acc RMSE": rmse(acc_err), "acc bias": float(acc_err.mean()), "acc 90% cover": float(acc_in.mean()),
        "acc width": float((agg["upper"] - agg["lower"]).mean()),
        "warnings": len(pred.warnings),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scheme", choices=("variant", "size", "frontier", "both", "all"), default="both",
                    help="hold-out scheme; both: variant and size; all: the three")
    ap.add_argument("--budget", default="8", help="reduce budget (default 8 of 57 subjects)")
    ap.add_argument("--n-random", type=int, default=200, help="random orders for the chance check (default 200)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    ap.add_argument("--floored", action="store_true",
                    help="predict as from a manifest fitted on scores floored at chance (written before reduce "
                         "fitted before the floor), its acc interval calibrated on the values below chance")
    args = ap.parse_args(argv)
    root = bundled_data_path()
    schemes = {"both": ("variant", "size"), "all": ("variant", "size", "frontier")}.get(args.scheme, (args.scheme,))
    pd.set_option("display.width", 250)
    for scheme in schemes:
        rows, t0 = {}, time.perf_counter()
        runs = ([("strongest 30%", None)] if scheme == "frontier" else holdouts(root, scheme, args.quick))
        for label, held in runs:
            rows[label] = (frontier(root, args.budget, args.n_random, args.seed, args.floored) if held is None
                           else one(root, held, args.budget, args.n_random, args.seed, args.floored))
            print(f"  {scheme} {label}: aggregate RMSE {rows[label]['agg RMSE']:.4f}", file=sys.stderr, flush=True)
        table = pd.DataFrame(rows).T
        table = table.astype({c: int for c in ("checkpoints", "train models", "k", "warnings")})
        ck = table["checkpoints"].astype(float)
        pooled = {
            "agg RMSE": np.sqrt(np.average(table["agg RMSE"].astype(float) ** 2, weights=ck)),
            "agg 90% cover": np.average(table["agg 90% cover"].astype(float), weights=ck),
            "cell RMSE": np.sqrt(np.average(table["cell MSE"].astype(float), weights=ck)),
            "cell 90% cover": np.average(table["cell 90% cover"].astype(float), weights=ck),
            "subset-mean RMSE": np.sqrt(np.average(table["subset-mean RMSE"].astype(float) ** 2, weights=ck)),
            "train-mean RMSE": np.sqrt(np.average(table["train-mean RMSE"].astype(float) ** 2, weights=ck)),
            "acc RMSE": np.sqrt(np.average(table["acc RMSE"].astype(float) ** 2, weights=ck)),
            "acc bias": np.average(table["acc bias"].astype(float), weights=ck),
            "acc 90% cover": np.average(table["acc 90% cover"].astype(float), weights=ck),
            "acc width": np.average(table["acc width"].astype(float), weights=ck),
        }
        print(f"\nhold-out scheme '{scheme}', budget {args.budget}, seed {args.seed}"
              f"{', fitted on floored scores' if args.floored else ''} "
              f"({time.perf_counter() - t0:.0f} s; normalised scores, 0 = chance; acc: MMLU's own score):")
        print(table.drop(columns=["cell MSE"]).to_string(float_format=lambda v: f"{v:.4f}"))
        print(f"pooled over {int(ck.sum())} held-out checkpoints: "
              + ", ".join(f"{k} {v:.4f}" for k, v in pooled.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
