"""How far a better working model can lower the AIPW error at the frontier (shared item tables).

Run::

    python benchmarks/item_working_ceiling.py                 # every table, extrapolation, seeds 0-2

A cross-fitted AIPW estimate's error is the mean of the sampled items' residuals (answer minus working
model), so its standard error scales with the residuals' spread over the task's items. For each table
and seed of BenchPred's extrapolation split (sources the weakest 50%, targets the strongest 30%; 50 random
items per task, as ``quality_items.py`` draws them), each working model is fitted as one AIPW fold is
(on 40 of the 50 sampled items, plus every other task's 50) and its residuals' variance over the items
it did not see is averaged over the targets. Printed: the square root of each candidate's variance over
that of ``aipw_difficulty``'s working model (mean of the paper's ridge and the difficulty logit): the
ratio of the AIPW standard errors. Candidates:

* ``ridge``: the paper's ridge (penalty 10) on this task's items; ``logit``: the difficulty logit;
  ``mix``: their mean (the working model of ``aipw_difficulty`` and ``crosstask``);
* ``loadings_logit``: the logit with each item's loadings on the population's 2 leading answer patterns
  (``aipw_select``'s candidate), and its mean with the ridge;
* ``best_per_target`` (oracle): per target, the best of the above by its true residual variance;
* ``peers`` (oracle): the other frontier targets' mean answer to each item, on the logit scale with the
  target's own intercept and slope: what a working model could do with answers of models like the target,
  which no source population has at the frontier;
* ``ridge_all_items`` (oracle): the ridge fitted on all of the target's items (it sees the answers it
  predicts).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import quality_items as q  # noqa: E402


def candidates(scores, others, seed, n=50):
    from harness_ext.methods.engine.item_crosstask import DifficultyAIPW, SelectedAIPW
    from harness_ext.methods.engine.item_estimators import _ridge_dual, random_items
    from harness_ext.methods.engine.item_working import logistic_working

    src, tgt = q.split(scores, "extrapolation", seed)
    S, T = scores[src], scores[tgt]
    items = random_items(S.shape[1], n, seed)
    oit = [random_items(o.shape[1], n, 10_000 * (k + 1) + seed) for k, o in enumerate(others)]
    est = SelectedAIPW().fit(S, items, others=[(o[src], it) for o, it in zip(others, oit)])
    Y_other = np.hstack([o[tgt][:, it] for o, it in zip(others, oit)])
    tr = items[np.arange(n) % 5 != 0]
    Y_tr = T[:, tr]
    ridge, logit, loaded, _, ridge_loaded = est._candidates(tr, Y_tr, Y_other)
    preds = {"ridge": ridge, "logit": logit, "mix": 0.5 * (ridge + logit), "loadings_logit": loaded,
             "ridge+loadings_logit": ridge_loaded}
    assert np.allclose(preds["mix"], DifficultyAIPW._working(est, tr, Y_tr, {"Y_other": Y_other}))
    # Oracles (not available to an estimator).
    peer = np.clip((T.sum(axis=0)[None, :] - T) / (len(T) - 1), 0.02, 0.98)
    lg = np.log(peer / (1 - peer))
    out = np.empty_like(peer)
    for t in range(len(T)):
        X = np.column_stack([lg[t], np.ones(S.shape[1])])
        out[t] = logistic_working(X[tr], Y_tr[t:t + 1], X, np.array([1e-2, 1e-2]))[:, 0]
    preds["peers"] = out.T
    c, b = _ridge_dual(S.T, T.T, 10.0)
    preds["ridge_all_items"] = np.clip(S.T @ c + b, 0.0, 1.0)
    unseen = np.setdiff1d(np.arange(S.shape[1]), tr)
    spread = {k: (T[:, unseen] - f[unseen].T).var(axis=1) for k, f in preds.items()}
    real = ("ridge", "logit", "mix", "loadings_logit", "ridge+loadings_logit")
    spread["best_per_target"] = np.min([spread[k] for k in real], axis=0)
    return spread


def main() -> int:
    if not q.ITEMS.is_dir():
        print(f"skipped: no item tables at {q.ITEMS}")
        return 0
    tables = sorted(str(p.relative_to(q.ITEMS).with_suffix("")) for p in q.ITEMS.glob("*/*.parquet"))
    ratios = {}
    for t in tables:
        scores, models = q.load_named(q.ITEMS / f"{t}.parquet")
        others = q.sibling_tables(t, models)
        acc = {}
        for seed in range(3):
            for k, v in candidates(scores, others, seed).items():
                acc.setdefault(k, []).append(v.mean())
        r = {k: float(np.sqrt(np.mean(v) / np.mean(acc["mix"]))) for k, v in acc.items()}
        print(t, " ".join(f"{k}={v:.3f}" for k, v in r.items()), flush=True)
        for k, v in r.items():
            ratios.setdefault(k, []).append(v)
    print("mean over tables:", " ".join(f"{k}={np.mean(v):.3f}" for k, v in ratios.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
