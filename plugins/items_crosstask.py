"""Registration of the item estimators that borrow across a benchmark's tasks.

A plugin module like :mod:`harness_ext.plugins.registry` (which has no room left under the plugin-module
size bound): each registration names its implementation in
:mod:`harness_ext.methods.engine.item_crosstask` by reference, imported when a command first uses it.
``--disable-plugin items_crosstask`` leaves these out (as any built-in module). Nothing here may import numpy.
"""

from __future__ import annotations

from harness_ext.hookspecs import hookimpl
from harness_ext.types import ItemEstimator

_IMPL = "harness_ext.methods.engine.item_crosstask:"

#: name -> (implementation in harness_ext.methods.engine.item_crosstask, description); the same names as its ESTIMATORS
ITEM_ESTIMATORS = {
    "random_learn_crosstask": ("CrossTaskLearn", "random sampling + learn with the other tasks' sample means as "
                                                 "features (Zhang, Dorner and Hardt 2025; Kipnis et al. 2025)"),
    "aipw_difficulty": ("DifficultyAIPW", "AIPW whose working model adds a difficulty logit fitted across the "
                                          "benchmark's tasks, design-based interval (Zhang, Dorner and Hardt 2025)"),
    "kernel_learn": ("KernelLearn", "kernel ridge regression of the full score on every task's sampled answers, "
                                    "settings by leave-one-out (Zhang, Dorner and Hardt 2025; Kipnis et al. 2025)"),
    "stacked_learn": ("StackedLearn", "kernel_learn stacked with kernel ridge on the models' abilities (probabilistic "
                                      "PCA of every item), share by held-out population models (Breiman 1996)"),
    "crosstask": ("CrossTask", "composite of stacked_learn and aipw_difficulty: the regression inside the "
                               "population, the design-based estimate beyond it (Fay and Herriot 1979)"),
    "aipw_select": ("SelectedAIPW", "AIPW whose working model (ridge, difficulty logit, a logit on the items' "
                                    "loadings, or a mean of two) is chosen per model by nested cross-fitting"),
}


@hookimpl
def harness_ext_item_estimators():
    for name, (attr, description) in ITEM_ESTIMATORS.items():
        yield ItemEstimator(name=name, cls=_IMPL + attr, description=description)
