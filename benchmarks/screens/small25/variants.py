"""crosstask variants screened at small item budgets (subclasses of the product's CrossTask; nothing patched)."""
from __future__ import annotations

import numpy as np

from harness_ext.methods.engine.item_crosstask import CrossTask


class Clip2(CrossTask):
    def __init__(self, **kw):
        kw.setdefault("gap_clips", (2.0,))
        super().__init__(**kw)


class ClipInf(CrossTask):
    def __init__(self, **kw):
        kw.setdefault("gap_clips", (np.inf,))
        super().__init__(**kw)


class DesignOnly(CrossTask):
    """w = 0 for every target (the design part alone, its interval): the floor of what the weight can give."""

    def _scaled_weight(self, v_a, a, v_m, lam, bounds=None, m=None, clip=None):
        return np.zeros_like(np.asarray(a, dtype=float))


VARIANTS = {"main": CrossTask, "clip2": Clip2, "clipinf": ClipInf, "design": DesignOnly}


class FlagUnclip(CrossTask):
    """A target beyond the sources on the other tasks (the flag ``beyond_sources_`` marks) has its gap unclipped:
    the other tasks' evidence says the design estimate beyond the range is not the noise the clip guards against."""

    def predict(self, Y, others=()):
        others = list(others)
        if self.learn_ is not None and others:
            from harness_ext.methods.engine.item_crosstask import other_tasks_mean
            self._flag = other_tasks_mean(others) - self.others_reach_ > 0
        else:
            self._flag = None
        try:
            return super().predict(Y, others=others)
        finally:
            self._flag = None

    def _gap(self, a, sd_a, bounds=None, m=None, clip=None):
        g = super()._gap(a, sd_a, bounds, m, clip)
        flag = getattr(self, "_flag", None)
        if flag is None or m is None or np.shape(a) != np.shape(flag):
            return g
        return np.where(flag, np.maximum(g, super()._gap(a, sd_a, bounds, m, np.inf)), g)


VARIANTS["flagunclip"] = FlagUnclip


def _above(self, a, bounds):
    hi = (self.range_ if bounds is None else bounds)[1]
    return np.asarray(a, dtype=float) > hi


class LamAbove(CrossTask):
    """The regression-alone option (``lam = 0``) only for a design estimate inside the range: above the sources'
    top the regression's error variance counts at least once."""

    def _scaled_weight(self, v_a, a, v_m, lam, bounds=None, m=None, clip=None):
        v = np.where(_above(self, a, bounds), max(lam, 1.0), lam) * v_m
        return self._weight(v_a, self._model_variance(a, np.sqrt(v_a), v, bounds, m, clip), v)[0]


class DisAbove(CrossTask):
    """Above the sources' top, the regression's error variance in the weight at least its disagreement with the
    design estimate, ``(m - a)**2 - V_a + 2 C`` (Fay and Herriot's moment estimate, as the interval uses)."""

    def _scaled_weight(self, v_a, a, v_m, lam, bounds=None, m=None, clip=None):
        v = lam * v_m
        model = self._model_variance(a, np.sqrt(v_a), v, bounds, m, clip)
        if m is not None:
            c = self.error_correlation_ * np.sqrt(v_a * v_m)
            dis = (np.asarray(m) - np.asarray(a)) ** 2 - v_a + 2 * c
            model = np.where(_above(self, a, bounds), np.maximum(model, dis), model)
        return self._weight(v_a, model, v)[0]


VARIANTS.update(lamabove=LamAbove, disabove=DisAbove)


class DisNear(DisAbove):
    """:class:`DisAbove` from one design standard error below the sources' top (the design estimates of targets
    beyond the top that fell just inside by noise)."""

    def _scaled_weight(self, v_a, a, v_m, lam, bounds=None, m=None, clip=None):
        v = lam * v_m
        model = self._model_variance(a, np.sqrt(v_a), v, bounds, m, clip)
        if m is not None:
            hi = (self.range_ if bounds is None else bounds)[1]
            c = self.error_correlation_ * np.sqrt(v_a * v_m)
            dis = (np.asarray(m) - np.asarray(a)) ** 2 - v_a + 2 * c
            model = np.where(np.asarray(a) > hi - np.sqrt(v_a), np.maximum(model, dis), model)
        return self._weight(v_a, model, v)[0]


VARIANTS.update(disnear=DisNear)


class DisChosen(DisAbove):
    """:class:`DisAbove` only where the held-out source models choose it: ``(lam, clip)`` are chosen as the product
    chooses them (interleaved folds and the sources' frontier), once without and once with the disagreement above
    the top, and the rule is taken only if its held-out score is lower."""

    use_dis_ = False

    def _scaled_weight(self, v_a, a, v_m, lam, bounds=None, m=None, clip=None):
        if self.use_dis_:
            return DisAbove._scaled_weight(self, v_a, a, v_m, lam, bounds, m, clip)
        return CrossTask._scaled_weight(self, v_a, a, v_m, lam, bounds, m, clip)

    def _cross_validated_choice(self, held):
        self.use_dis_ = False
        off = self._scored_choice(held)
        self.use_dis_ = True
        on = self._scored_choice(held)
        self.use_dis_ = bool(on[0] < off[0] - 1e-12)
        self.dis_scores_ = (off[0], on[0])
        return (on if self.use_dis_ else off)[1:]


VARIANTS.update(dischosen=DisChosen)


class DisFlag(DisAbove):
    """:class:`DisAbove` only for targets beyond the sources on the other tasks (the flag), at ``predict``; the
    held-out choice and the interval's calibration as the product makes them."""

    def predict(self, Y, others=()):
        others = list(others)
        self._flag = None
        if self.learn_ is not None and others:
            from harness_ext.methods.engine.item_crosstask import other_tasks_mean
            self._flag = other_tasks_mean(others) - self.others_reach_ > 0
        try:
            return super().predict(Y, others=others)
        finally:
            self._flag = None

    def _scaled_weight(self, v_a, a, v_m, lam, bounds=None, m=None, clip=None):
        base = CrossTask._scaled_weight(self, v_a, a, v_m, lam, bounds, m, clip)
        flag = getattr(self, "_flag", None)
        if flag is None or np.shape(flag) != np.shape(a):
            return base
        return np.where(flag, DisAbove._scaled_weight(self, v_a, a, v_m, lam, bounds, m, clip), base)


VARIANTS.update(disflag=DisFlag)
