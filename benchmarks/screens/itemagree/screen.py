"""Screen of the itemagree candidate (CRITERION.md): ``benchmarks/quality_items.py`` with ``crosstask_agree`` registered.

``crosstask_agree``: main's ``crosstask``; on a table whose sources' Spearman correlation between this task's mean
and the other tasks' mean is below sqrt(0.5), a target flagged beyond the sources on the other tasks gets the
equal-weight mean of main's design part and this task's own-regression composite. Intervals are main's.

Run (one process; arguments as quality_items.py's):
    HARNESS_EXT_SHARED_DATA=/work/shared/data nice -n 10 python benchmarks/screens/itemagree/screen.py \
        --items 50 --seeds 20 --estimators sample_mean random_learn aipw_paper anchor_weighted crosstask crosstask_agree
Per fit, a line ``AGREE rho=.. switched=.. flagged=.. targets=.. outside=..`` goes to stderr: the sources' rho, whether
the rule acts, the flagged targets, and how many changed estimates fall outside main's interval.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import quality_items as q  # noqa: E402
from harness_ext.methods.engine.item_agreement import row_means  # noqa: E402
from harness_ext.methods.engine import item_crosstask as ict  # noqa: E402

THRESHOLD = float(np.sqrt(0.5))


def sources_agreement(source: np.ndarray, others: list) -> float:
    """Spearman correlation of the sources' mean on this task with their mean over the other tasks' full answers
    (models with every task answered); NaN with fewer than 10 such models or no other tasks."""
    if not others:
        return np.nan
    own = row_means(np.asarray(source, dtype=float))
    other = np.column_stack([row_means(np.asarray(S_k, dtype=float)) for S_k, _ in others])
    ok = np.isfinite(own) & np.isfinite(other).all(axis=1)
    if ok.sum() < 10:
        return np.nan
    return float(spearmanr(own[ok], other[ok].mean(axis=1))[0])


class CrossTaskAgree(ict.CrossTask):
    def fit(self, source, items, others=()):
        others = list(others)
        super().fit(source, items, others=others)
        self.agreement_ = sources_agreement(self.source_, others)
        self.own_ = None
        if np.isfinite(self.agreement_) and self.agreement_ < THRESHOLD:
            self.own_ = ict.CrossTask(level=self.level).fit(self.source_, self.items_)
        return self

    def predict(self, Y, others=()):
        others = list(others)
        res = super().predict(Y, others=others)
        flag = np.asarray(self.beyond_sources_, dtype=bool)
        n_out = 0
        if self.own_ is not None and flag.any():
            a = self.design_.predict(Y, others=others).estimate
            o = self.own_.predict(Y).estimate
            est = np.where(flag, 0.5 * (a + o), res.estimate)
            n_out = int(np.sum(flag & ((est < res.lower) | (est > res.upper))))
            res = ict.ItemEstimate(est, res.lower, res.upper, res.level, res.se, beyond_sources=res.beyond_sources)
        print(f"AGREE rho={self.agreement_:.3f} switched={self.own_ is not None} flagged={int(flag.sum())} "
              f"targets={len(flag)} outside={n_out}", file=sys.stderr, flush=True)
        return res


ict.ESTIMATORS["crosstask_agree"] = CrossTaskAgree

if __name__ == "__main__":
    raise SystemExit(q.main(sys.argv[1:]))
