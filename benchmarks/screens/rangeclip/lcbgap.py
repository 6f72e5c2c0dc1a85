"""``crosstask_lcbgap``: main's ``crosstask`` whose gap above the range is never less than the one-sided lower bound of
the design estimate's distance beyond the range's top (criterion: CRITERION2.md). Imported by screen.py and perseed.py."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "musr"))
import screen as s  # noqa: E402  (registers the musr screen's variants, crosstask_rangeclip among them)


class CrossTaskLowerBoundGap(s.ict.CrossTask):
    """Main's gap, but never less than the one-sided lower bound of the design estimate's
    distance beyond the range's top, ``a - hi - Z sd_a`` (Z = 2): a regression below the range's top cannot cancel the
    gap of a design estimate many standard errors beyond it, while one just above the top by noise keeps main's."""

    Z = 2.0

    def _gap(self, a, sd_a, bounds=None, m=None, clip=None):
        g = super()._gap(a, sd_a, bounds, m, clip)
        if m is None:
            return g
        hi = (self.range_ if bounds is None else bounds)[1]
        return np.maximum(g, np.asarray(a, dtype=float) - hi - self.Z * np.asarray(sd_a, dtype=float))

    def fit(self, source, items, others=()):
        super().fit(source, items, others=others)
        if self.own_ is not None:
            self.own_ = CrossTaskLowerBoundGap(**self.get_params()).fit(self.source_, self.items_)
        return self


s.ict.ESTIMATORS["crosstask_lcbgap"] = CrossTaskLowerBoundGap
