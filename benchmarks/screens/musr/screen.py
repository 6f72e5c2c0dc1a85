"""Screens of the musr candidates: ``benchmarks/quality_items.py`` with these variants of ``crosstask`` registered.

* ``crosstask_shrink`` (the screened candidate, CRITERION.md): the design part moved toward the paper's AIPW by the
  squared-error-optimal share (see :class:`CrossTaskShrink`).
* ``crosstask_edgew``, ``crosstask_papermix`` (rejected on the diagnosis seeds before the criterion) and
  ``crosstask_rangeclip`` (a quick look on seeds 60-64 after the screen; not screened): see their docstrings.

Run (one process; arguments as quality_items.py's):
    HARNESS_EXT_SHARED_DATA=/work/shared/data nice -n 10 python benchmarks/screens/musr/screen.py \
        --items 50 --seeds 20 --first-seed 60 --protocols interpolation extrapolation benchmark-frontier \
        --estimators sample_mean random_learn aipw_paper anchor_weighted crosstask crosstask_shrink
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import quality_items as q  # noqa: E402
from harness_ext.methods.engine import item_crosstask as ict  # noqa: E402
from harness_ext.methods.engine import item_estimators as ie  # noqa: E402


class CrossTaskEdgeWeight(ict.CrossTask):
    """main's ``crosstask`` with the regression's weight minimising the variance its interval states: the model variance
    in the weight gains ``edge_slope**2`` times :func:`~harness_ext.methods.engine.item_crosstask.expected_squared_gap`."""

    def _scaled_weight(self, v_a, a, v_m, lam, bounds=None, m=None, clip=None):
        v_m = lam * v_m
        sd_a = np.sqrt(v_a)
        b = self.range_ if bounds is None else bounds
        edge = ict.expected_squared_gap(a, sd_a, b, self.floor_margin * sd_a)
        v_model = self._model_variance(a, sd_a, v_m, bounds, m, clip) + self.edge_slope ** 2 * edge
        return self._weight(v_a, v_model, v_m)[0]

    def fit(self, source, items, others=()):
        super().fit(source, items, others=others)
        if self.own_ is not None:  # the own-task composite of the agreement rule, with the same weight
            self.own_ = CrossTaskEdgeWeight(**self.get_params()).fit(self.source_, self.items_)
        return self


ict.ESTIMATORS["crosstask_edgew"] = CrossTaskEdgeWeight



class _MixedDesign:
    """The design part's predictions shifted by ``share`` of the way to the paper's AIPW (interval moved with it)."""

    def __init__(self, design, paper, shift):
        self.design, self.paper, self.shift = design, paper, shift

    def predict(self, Y, others=()):
        a = self.design.predict(Y, others=others)
        shift = self.shift(self.paper.predict(Y).estimate - a.estimate)
        return ict.ItemEstimate(a.estimate + shift, a.lower + shift, a.upper + shift, a.level, a.se)


class CrossTaskPaperMix(ict.CrossTask):
    """``crosstask`` whose design part is, when the held-out source models say so, the equal-weight mean of
    ``aipw_difficulty`` and the paper's AIPW (its in-sample ridge shrinks the sample toward the sources' answers):
    the share (0 or 1/2) is chosen with ``lam`` and ``clip`` by the composite's mean held-out error over the
    interleaved folds and the sources' own frontier, as main chooses those two. The interval keeps the design
    part's standard error, moved with the estimate."""

    shares = (0.0, 0.5)

    def fit(self, source, items, others=()):
        ict._ItemEstimator.fit(self, source, items)
        others = list(others)
        self.design_ = ict.DifficultyAIPW(level=self.level, alpha=self.alpha, n_folds=self.n_folds).fit(
            self.source_, self.items_, others=others)
        self.paper_ = ie.AIPWPaper(level=self.level, alpha=self.alpha).fit(self.source_, self.items_)
        self.learn_, self.error_correlation_, self.variance_scale_ = None, 0.0, 1.0
        self.gap_clip_, self.interval_scale_, self.share_ = np.inf, 1.0, 0.0
        self.shift_ = _no_shift
        if self.source_.shape[0] >= self.min_models:
            self.learn_ = self.learner(level=self.level).fit(self.source_, self.items_, others=others)
            held = self._held_out_errors(others)
            held["p"] = self._held_out_paper()
            best = None
            for share, fn in self._options(held):
                h = _shifted(held, fn)
                inside = {k: v[~h["frontier"]] for k, v in h.items()}
                self.error_correlation_ = self._cross_validated_correlation(inside)
                score, lam, clip = self._scored_choice(h)
                if best is None or score < best[0] - 1e-12:
                    best = (score, lam, clip, share, self.error_correlation_, inside, fn)
            _, self.variance_scale_, self.gap_clip_, self.share_, self.error_correlation_, inside, self.shift_ = best
            if self.calibrate:
                self.interval_scale_ = self._calibrated_scale(self._reselected(inside, others))
        self.design_ = _MixedDesign(self.design_, self.paper_, self.shift_)
        full = self.source_.mean(axis=1)
        self.range_ = (float(full.min()), float(full.max()))
        self.others_reach_ = (float(np.nanmax(ict.other_tasks_mean([np.asarray(S_k, dtype=float)[:, it]
                                                                      for S_k, it in others])))
                              if others else np.inf)
        self.agreement_ = ict.sources_agreement(self.source_, others)
        self.own_ = (ict.CrossTask(**{k: v for k, v in self.get_params().items() if k != "shares"}).fit(
            self.source_, self.items_) if self.learn_ is not None and self.agreement_ < ict.AGREEMENT_THRESHOLD
            else None)
        print(f"MIX {type(self).__name__} share={self.share_}", file=sys.stderr, flush=True)
        return self

    def _options(self, held):
        """``(label, shift)`` pairs: the design part moved by ``shift(p - a)``; the held-out error chooses one."""
        return [(0.0, _no_shift), (0.5, lambda d: 0.5 * d)]

    def _held_out_paper(self):
        """The paper's AIPW on each held-out source model, in :meth:`_held_out_errors`' split order."""
        S, items = self.source_, self.items_
        splits = list(self._interleaved(5))
        n_top = int(round(self.frontier_share * S.shape[0]))
        if n_top >= 1:
            top = np.zeros(S.shape[0], dtype=bool)
            top[np.argsort(S.mean(axis=1), kind="stable")[-n_top:]] = True
            if ict._usable_split(top):
                splits.append(top)
        out = [ie.AIPWPaper(level=self.level, alpha=self.alpha).fit(S[~h], items).predict(S[h][:, items]).estimate
               for h in splits]
        return np.concatenate(out) if out else np.empty(0)


def _no_shift(d):
    return 0.0 * d


def _shifted(held, fn):
    h = dict(held)
    shift = fn(held["p"] - held["a"])
    for k in ("a", "al", "au", "e_a"):
        h[k] = held[k] + shift
    return h


class CrossTaskShrink(CrossTaskPaperMix):
    """``crosstask`` whose design part ``a`` is shrunk toward the paper's AIPW ``p`` by the share that minimises the
    squared error of ``a + s (p - a)``: ``s = c / E[(p - a)**2]``, ``c = -Cov(a - truth, p - a)`` the noise the
    paper's in-sample ridge removes, estimated once per fit on the held-out source models of the interleaved folds
    (where the paper's bias is small), and ``E[(p - a)**2]`` estimated for each target by its own ``(p - a)**2``
    (unbiased for it), so a target whose two estimates disagree by more than the noise explains (the paper's bias
    toward the sources beyond them) is shrunk less: the shift is ``p - a`` while ``|p - a| <= sqrt(c)``, then ``c / (p -
    a)``. No shift where ``c <= 0``."""

    def _options(self, held):
        inside = ~held["frontier"]
        e_a, d = held["e_a"][inside], (held["p"] - held["a"])[inside]
        c = max(0.0, -float(np.mean(e_a * (d - d.mean())))) if len(d) >= 10 else 0.0
        return [(c, lambda x: np.where(x ** 2 > c, c / np.where(x == 0, 1.0, x), x) if c > 0 else 0.0 * x)]


class CrossTaskRangeClip(ict.CrossTask):
    """``crosstask`` whose gap clip is measured, above the range, from the higher of the regression's estimate and
    the range's top: ``above = min(a, max(m, hi) + clip sd_a) - hi``. main measures it from ``m`` alone, so a
    regression that sits below the range's top (a kernel regression cannot pass it) cancels the gap of a design
    estimate several standard errors beyond the range and the composite trusts the regression there. The floor side
    (``lo``, ``floor_margin``) is main's."""

    def _gap(self, a, sd_a, bounds=None, m=None, clip=None):
        if m is None:
            return super()._gap(a, sd_a, bounds)
        clip = self.gap_clip_ if clip is None else clip
        lo, hi = self.range_ if bounds is None else bounds
        a, m, sd_a = (np.asarray(v, dtype=float) for v in (a, m, sd_a))
        reach = clip * sd_a if np.isfinite(clip) else np.inf
        above = np.minimum(a, np.maximum(m, hi) + reach) - hi
        below = lo - np.maximum(a, m - reach) - self.floor_margin * sd_a
        return np.maximum(0.0, np.maximum(above, below))

    def fit(self, source, items, others=()):
        super().fit(source, items, others=others)
        if self.own_ is not None:  # the own-task composite of the agreement rule, with the same gap
            self.own_ = CrossTaskRangeClip(**self.get_params()).fit(self.source_, self.items_)
        return self


ict.ESTIMATORS["crosstask_papermix"] = CrossTaskPaperMix
ict.ESTIMATORS["crosstask_rangeclip"] = CrossTaskRangeClip
ict.ESTIMATORS["crosstask_shrink"] = CrossTaskShrink


if __name__ == "__main__":
    raise SystemExit(q.main(sys.argv[1:]))
