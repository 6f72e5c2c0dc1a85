"""The standard error of an Every Eval Ever score, from what its ``score_details.uncertainty`` gives.

Schema 0.2's ``uncertainty`` may hold a ``standard_error`` (``{"value", "method"}``), a ``confidence_interval``
(``lower``, ``upper``, an optional ``confidence_level`` in [0, 1], ``method``), and ``standard_deviation`` with
``num_samples``. In that order of preference a score's standard error is:

1. the explicit ``standard_error.value`` (a bare number is read too);
2. a two-sided normal interval at a known level: ``half / z``, with ``z`` the normal quantile at ``(1 + level) / 2``
   and ``half`` the half-width of the interval's wider side around the score (an asymmetric interval, as Wilson or
   bootstrap intervals are near 0 and 1, is not narrowed to its shorter side; such intervals are counted in a note);
3. ``standard_deviation / sqrt(num_samples)``, the schema's own definition of the standard error of a mean.

Nothing is assumed where the record is silent or unclear, and each case is counted in a note naming the results:
an interval without a level gives no standard error (95% and 90% would give standard errors 19% apart); a level
written as a percentage (95) is read as one (0.95) and counted; a level that is neither a probability nor a
percentage, an interval whose bounds are not numbers in order, and one that does not contain its score give none.
The one exception is an interval written as ``-h`` to ``h`` around zero (Global MMLU Lite's records), which is a
half-width ``h`` and is read as one, counted.

The standard error is in the score's own units, as the score is stored.
"""

from __future__ import annotations

import math
from typing import Optional

from harness_ext.report import listed, plural
from harness_ext.types import SourceFile

#: Sides of an interval differing by more than this fraction of the wider one make it asymmetric (rounding of the
#: bounds to 3-4 digits stays below it).
_ASYMMETRY = 0.1


def _number(value) -> Optional[float]:
    """A finite float, or None for anything else (a bool, a string, NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


class Uncertainties:
    """Standard errors of one file's results (:meth:`stderr`), and one note per case met (:meth:`note`).

    References
    ----------
    Every Eval Ever schema 0.2 (EvalEval Coalition, 2025), ``score_details.uncertainty``.
    """

    def __init__(self):
        self.levelless, self.percent, self.asymmetric, self.half_widths = [], [], [], []
        self.unusable: dict = {}

    def stderr(self, name, details, score) -> Optional[float]:
        """The standard error of one result's score from its ``score_details`` (see the module), or None."""
        if not isinstance(details, dict):
            return None
        unc = details.get("uncertainty") if isinstance(details.get("uncertainty"), dict) else {}
        se = unc.get("standard_error")
        if se is not None:
            value = _number(se.get("value") if isinstance(se, dict) else se)
            if value is not None and value >= 0:
                return value
            self._unusable(name, "a standard_error that is not a non-negative number")
        found = _intervals(details)
        with_level = [ci for ci in found if isinstance(ci, dict) and ci.get("confidence_level") is not None]
        if with_level:
            value = self._from_interval(name, with_level[0], _number(score))
            if value is not None:
                return value
        elif found:
            self.levelless.append(str(name))
        sd, n = _number(unc.get("standard_deviation")), _number(unc.get("num_samples"))
        if sd is not None and sd >= 0 and n is not None and n >= 1:
            return sd / math.sqrt(n)
        return None

    def _from_interval(self, name, ci: dict, score: Optional[float]) -> Optional[float]:
        level, lower, upper = _number(ci.get("confidence_level")), _number(ci.get("lower")), _number(ci.get("upper"))
        if level is not None and 1 < level < 100:
            self.percent.append(f"{name} {level:g}")
            level /= 100
        if level is None or not 0 < level < 1:
            self._unusable(name, "a confidence_level that is neither a probability nor a percentage")
            return None
        if lower is None or upper is None or upper < lower:
            self._unusable(name, "interval bounds that are not two numbers in order")
            return None
        from statistics import NormalDist

        z = NormalDist().inv_cdf((1 + level) / 2)
        if score is not None and lower <= score <= upper:
            below, above = score - lower, upper - score
            if abs(above - below) > _ASYMMETRY * max(above, below):
                self.asymmetric.append(str(name))
            return max(below, above) / z
        if lower < 0 < upper and abs(lower + upper) <= 1e-9 * upper + 1e-12:
            self.half_widths.append(str(name))
            return upper / z
        self._unusable(name, "an interval that does not contain its score")
        return None

    def _unusable(self, name, reason: str) -> None:
        self.unusable.setdefault(reason, []).append(str(name))

    def note(self, src: SourceFile) -> None:
        """One note per case met in the file, with its count and the results' names."""
        if self.levelless:
            n = len(self.levelless)
            src.note(f"{plural(n, 'confidence interval', 'confidence intervals')} without a level "
                     f"{'were' if n != 1 else 'was'} not used (no level is assumed, so "
                     f"{'they give' if n != 1 else 'it gives'} no standard error): {listed(self.levelless, 8)}")
        if self.percent:
            src.note(f"{plural(len(self.percent), 'confidence level', 'confidence levels')} written as a percentage "
                     f"read as one (95 as 0.95): {listed(self.percent, 8)}")
        if self.asymmetric:
            src.note(f"{plural(len(self.asymmetric), 'asymmetric confidence interval', 'asymmetric confidence intervals')}"
                     f": the standard error is the wider side's half-width over the normal quantile of the level: "
                     f"{listed(self.asymmetric, 8)}")
        if self.half_widths:
            src.note(f"{plural(len(self.half_widths), 'confidence interval', 'confidence intervals')} written as -h "
                     f"to h around zero, not around the score, read as a half-width h: {listed(self.half_widths, 8)}")
        for reason, names in self.unusable.items():
            src.note(f"{plural(len(names), 'result', 'results')} with {reason} given no standard error: "
                     f"{listed(names, 8)}")


def _intervals(details: dict) -> list:
    """The confidence intervals a result's ``score_details`` gives: schema 0.2's ``uncertainty.confidence_interval``,
    the ``confidence_interval`` beside the score that records converted from Inspect logs write (``lower``,
    ``upper``), and a ``details.confidence_interval`` number (schema 0.0.1 Global MMLU Lite records: a half-width)."""
    unc = details.get("uncertainty")
    found = [unc.get("confidence_interval")] if isinstance(unc, dict) else []
    found.append(details.get("confidence_interval"))
    extra = details.get("details")
    if isinstance(extra, dict):
        found.append(extra.get("confidence_interval"))
    return [ci for ci in found if ci is not None]
