"""How much of the training checkpoints' spread on the chosen subset is sampling noise, on the round trip's frontier split.

``quality_round_trip.py --scheme frontier`` fits on the weakest half of the bundled Pythia checkpoints (by the normalised
full MMLU score, as that script orders them) and predicts the strongest 30%. This script rebuilds the same split and
manifest, then for the subset's question-weighted accuracy ``acc_S`` and the other subjects' ``acc_U`` prints, per
group (weakest half, strongest 30%, all): their spread, the share of ``acc_S``'s variance that binomial sampling
explains (``acc_S (1 - acc_S) / n_S``, ``n_S`` the subset's MMLU test questions), the least-squares slope of ``acc_U``
on ``acc_S``, and the frontier error of three ways to carry the weakest half's relation to the strongest: the fitted
slope, the slope corrected for the noise (Spearman 1904's disattenuation), and slope 1 (the subset's shift taken as is).

Usage: python benchmarks/screens/noise/noise_share.py [--budget 8]
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import quality_round_trip as q  # noqa: E402
from harness_ext.methods.reduction.benchmark_score import harness_weights as _weights  # noqa: E402

MMLU_QUESTIONS = 14042


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", default="8")
    a = ap.parse_args(argv)
    root = q.bundled_data_path()
    with q.Store.open(":memory:") as store:
        q.ingest_paths(store, [p for p in sorted(root.iterdir()) if p.is_dir()], show_progress=False)
        df = q.load_matrix(store, q.MatrixQuery(benchmarks=("mmlu",)))
        raw = q.load_matrix(store, q.MatrixQuery(benchmarks=("mmlu",), normalise="none"))
    order = np.argsort(df.mean(axis=1).to_numpy(), kind="stable")  # as quality_round_trip.frontier orders them
    weak, strong = order[:len(order) // 2], order[len(order) - int(round(0.3 * len(order))):]
    m = q._manifest(df.iloc[weak], a.budget, 0, 0, False)
    cols = [d["name"] for d in m["datasets"]]
    sub = {s["name"] for s in m["subset"]}
    v, _ = _weights(cols, "mmlu")
    S = np.array([c in sub for c in cols])
    R = raw.reindex(columns=cols).to_numpy(float)
    acc = R @ v
    acc_s = R[:, S] @ (v[S] / v[S].sum())
    acc_u = R[:, ~S] @ (v[~S] / v[~S].sum())
    n_s = v[S].sum() * MMLU_QUESTIONS
    print(f"subset ({S.sum()} subjects, {n_s:.0f} questions): {sorted(sub)}")
    for name, idx in (("weakest half", weak), ("strongest 30%", strong), ("all", np.arange(len(acc)))):
        x, y = acc_s[idx], acc_u[idx]
        share = np.mean(x * (1 - x)) / n_s / np.var(x, ddof=1)
        slope = np.cov(x, y)[0, 1] / np.var(x, ddof=1)
        print(f"{name:14s} n={len(idx):3d}  acc_S {x.mean():.4f} (sd {x.std(ddof=1):.4f})  acc_U {y.mean():.4f} "
              f"(sd {y.std(ddof=1):.4f})  noise share of acc_S's variance {share:.3f}  slope of acc_U on acc_S {slope:.3f}")
    x, y = acc_s[weak], acc_u[weak]
    slope = np.cov(x, y)[0, 1] / np.var(x, ddof=1)
    rel = 1 - np.mean(x * (1 - x)) / n_s / np.var(x, ddof=1)
    for name, b in (("fitted slope", slope), ("disattenuated", slope / rel if rel > 0 else np.nan), ("slope 1", 1.0)):
        pred_u = y.mean() + b * (acc_s[strong] - x.mean())
        e = v[S].sum() * acc_s[strong] + v[~S].sum() * pred_u - acc[strong]
        print(f"strongest 30% predicted with the {name} ({b:.3f}): acc bias {e.mean():+.4f}, RMSE {np.sqrt(np.mean(e ** 2)):.4f}")


if __name__ == "__main__":
    main()
