"""Source-only agreement between a task and the benchmark's other tasks, per shared item table (itemagree screen).

For each table and each of the two frontier splits (benchmark-frontier: the sources the weakest 50% by the mean over
the benchmark's tasks; extrapolation: the weakest 50% by this task's mean), on the SOURCES ONLY (full-task scores):

* rho: Spearman correlation of this task's mean with the other tasks' mean (tasks weighted equally);
* r2_front: the frontier-like check: this task's mean regressed (least squares, one feature: the other tasks' mean)
  on the sources' weakest 70% by the other tasks' mean, scored (1 - SSE / SS about the held-out mean) on their
  strongest 30% -- the sources beyond the fit on the other tasks, as a flagged target is;
* r2_multi: the same with each other task's mean as its own feature;
* slope_ratio: the fitted slope on the strong 30% alone over the slope on the weak 70% (1: the relation carries).

Run: HARNESS_EXT_SHARED_DATA=/work/shared/data python benchmarks/screens/itemagree/measure.py
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

HERE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(HERE))
import quality_items as q  # noqa: E402
from harness_ext.methods.engine.item_agreement import row_means  # noqa: E402

TABLES = ["helm_lite/commonsense", "helm_lite/gsm", "helm_lite/math", "helm_lite/med_qa", "helm_lite/mmlu",
          "open_llm_v2/ifeval", "open_llm_v2/musr", "open_llm_v2/openllm_math"]
#: What each table wants for a model strongest on the whole benchmark (HISTORY, twenty-fifth session's screens).
WANTS = {"commonsense": "composite", "gsm": "design (~)", "math": "design", "med_qa": "design", "mmlu": "composite",
         "ifeval": "design (~)", "musr": "own", "openllm_math": "design"}


def r2_out(x_fit, y_fit, x_new, y_new) -> float:
    X = np.column_stack([np.ones(len(x_fit)), x_fit])
    beta = np.linalg.lstsq(X, y_fit, rcond=None)[0]
    pred = np.column_stack([np.ones(len(x_new)), x_new]) @ beta
    return 1 - np.sum((y_new - pred) ** 2) / np.sum((y_new - y_new.mean()) ** 2)


def agreement(own: np.ndarray, others: np.ndarray, share: float = 0.3) -> dict:
    """``own``: the sources' mean on this task; ``others``: their mean on each other task (columns)."""
    ok = np.isfinite(own) & np.isfinite(others).all(axis=1)
    own, others = own[ok], others[ok]
    om = others.mean(axis=1)
    order = np.argsort(om, kind="stable")
    k = int(round(share * len(om)))
    weak, strong = order[:-k], order[-k:]
    slope = lambda i: np.polyfit(om[i], own[i], 1)[0]  # noqa: E731
    return {"n": int(ok.sum()), "rho": float(spearmanr(own, om)[0]),
            "rho_strong": float(spearmanr(own[strong], om[strong])[0]),
            "r2_front": float(r2_out(om[weak], own[weak], om[strong], own[strong])),
            "r2_multi": float(r2_out(others[weak], own[weak], others[strong], own[strong])),
            "slope_ratio": float(slope(strong) / slope(weak))}


def main() -> None:
    print("| table | wants | split | n | rho | rho (strong 30%) | r2_front | r2_multi | slope ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for t in TABLES:
        scores, models = q.load_named(q.ITEMS / f"{t}.parquet")
        others = q.sibling_tables(t, models)
        strength = q.benchmark_strength(scores, others)
        own_full = row_means(scores)
        other_full = np.column_stack([row_means(o) for o in others])
        for protocol in ("benchmark-frontier", "extrapolation"):
            sources, _ = q.split(scores, protocol, 0, strength=strength)
            r = agreement(own_full[sources], other_full[sources])
            print(f"| {t} | {WANTS[t.split('/')[1]]} | {protocol} | {r['n']} | {r['rho']:.3f} | {r['rho_strong']:.3f} "
                  f"| {r['r2_front']:.3f} | {r['r2_multi']:.3f} | {r['slope_ratio']:.2f} |")


if __name__ == "__main__":
    main()
