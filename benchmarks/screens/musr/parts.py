"""The design part's working model on the diagnosis seeds: errors of design-unbiased AIPW variants and the paper's.

    HARNESS_EXT_SHARED_DATA=/work/shared/data nice -n 10 python benchmarks/screens/musr/parts.py open_llm_v2/musr ...

Per table, extrapolation, 50 items, seeds 0-19: mean |error| (points) and signed mean, sd of the signed error, for
sample_mean, aipw_paper, aipw (cross-fitted ridge), aipw_difficulty with the ridge alone / logit alone / their mean
(the product's), the working models swapped by patching ``_working`` on instances.
"""
import os
import sys
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import quality_items as q  # noqa: E402
from harness_ext.methods.engine import item_estimators as ie  # noqa: E402
from harness_ext.methods.engine.item_crosstask import DifficultyAIPW  # noqa: E402


class LogitOnly(DifficultyAIPW):
    def _working(self, train_items, Y_train, context):
        return self._logit(train_items, Y_train, context["Y_other"])


class RidgeOnly(DifficultyAIPW):
    def _working(self, train_items, Y_train, context):
        return np.clip(ie.AIPW._working(self, train_items, Y_train, context), 0, 1)


for t in sys.argv[1:]:
    scores, models = q.load_named(q.ITEMS / f"{t}.parquet")
    others = q.sibling_tables(t, models)
    acc = {}
    for seed in range(20):
        src, tg = q.split(scores, "extrapolation", seed)
        S, T = scores[src], scores[tg]
        truth = T.mean(axis=1)
        oi = [ie.random_items(o.shape[1], 50, 10_000 * (k + 1) + seed) for k, o in enumerate(others)]
        items = ie.random_items(scores.shape[1], 50, seed)
        fo = [(o[src], it) for o, it in zip(others, oi)]
        po = [o[tg][:, it] for o, it in zip(others, oi)]
        est = {"sample_mean": T[:, items].mean(axis=1),
               "aipw_paper": ie.AIPWPaper().fit(S, items).predict(T[:, items]).estimate,
               "aipw(ridge, one task)": ie.AIPW().fit(S, items).predict(T[:, items]).estimate}
        for name, cls in (("difficulty: ridge alone", RidgeOnly), ("difficulty: logit alone", LogitOnly),
                          ("aipw_difficulty (mean)", DifficultyAIPW)):
            r = cls().fit(S, items, others=fo).predict(T[:, items], others=po)
            est[name] = r.estimate
            if name.startswith("aipw_difficulty"):
                acc.setdefault("design se (pts, median)", []).append(np.full(len(truth), np.median(r.se)))
        for k, v in est.items():
            acc.setdefault(k, []).append(v - truth)
    print(f"\n{t} extrapolation, 50 items, seeds 0-19: estimator | mean |err| | signed | sd of signed error")
    for k, v in acc.items():
        e = np.concatenate(v) * 100
        if k.startswith("design se"):
            print(f"{k} | {np.median(e):.2f}")
            continue
        print(f"{k} | {np.abs(e).mean():.3f} | {e.mean():+.2f} | {e.std():.2f}")
