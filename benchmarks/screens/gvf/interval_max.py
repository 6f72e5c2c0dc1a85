"""``quality_items.py`` with ``crosstask``'s interval reading the larger of the target's own design variance and the
smoothed one (the weight reads the smoothed one either way): a screen of the alternative the product did not take.

    python benchmarks/screens/gvf/interval_max.py [quality_items.py's arguments]
"""
import runpy
import sys
from pathlib import Path

import numpy as np

from harness_ext.methods.engine.item_composite import gvf_variance
from harness_ext.methods.engine.item_crosstask import CrossTask

_parts = CrossTask._interval_parts


def _interval_parts(self, a, al, au, sd_a, m, v_m, local, w, bounds=None):
    sd = np.sqrt(np.maximum(sd_a ** 2, gvf_variance(self.gvf_, a, sd_a ** 2)))
    return _parts(self, a, al, au, sd, m, v_m, local, w, bounds)


CrossTask._interval_parts = _interval_parts
script = Path(__file__).resolve().parents[2] / "quality_items.py"
sys.argv = [str(script)] + sys.argv[1:]
runpy.run_path(str(script), run_name="__main__")
