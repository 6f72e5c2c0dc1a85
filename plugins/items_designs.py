"""Registration of the item estimators that belong to an item design other than simple random sampling.

A plugin module like :mod:`harness_ext.plugins.registry` (which has no room left under the plugin-module
size bound): each registration names its implementation by reference, imported when a command first uses it:
the stratified estimators and IRT anchors in :mod:`harness_ext.methods.engine.item_designs`, random search +
learn in :mod:`harness_ext.methods.engine.item_search`. ``--disable-plugin items_designs`` leaves these out
(as any built-in module). Nothing here may import numpy.
"""

from __future__ import annotations

from harness_ext.hookspecs import hookimpl
from harness_ext.types import ItemEstimator

_ENGINE = "harness_ext.methods.engine."

#: name -> (implementation module:class under harness_ext.methods.engine, description); the names of
#: item_designs.DESIGN_ESTIMATORS
ITEM_ESTIMATORS = {
    "stratified_mean": ("item_designs:StratifiedMean", "stratified mean, finite-population interval (Cochran 1977)"),
    "stratified_aipw": ("item_designs:StratifiedAIPW", "AIPW under the stratified design (Cochran 1977)"),
    "irt_anchors": ("item_designs:IRTAnchors", "anchor points on the 2PL item parameters (Polo et al. 2024)"),
    "search_learn": ("item_search:SearchLearn", "random search + learn: ridge on the best of many random item subsets "
                                                "by held-out error (Zhang, Dorner and Hardt 2025)"),
}


@hookimpl
def harness_ext_item_estimators():
    for name, (ref, description) in ITEM_ESTIMATORS.items():
        yield ItemEstimator(name=name, cls=_ENGINE + ref, description=description)
