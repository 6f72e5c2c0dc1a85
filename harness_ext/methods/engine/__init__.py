"""The prediction engine: transforms, the low-rank fit and fold-in, cross-validation, calibrated intervals.

Everything here is numerics on a models x datasets matrix (or a models x items table); nothing
reads the store or prints. The reduction (:mod:`harness_ext.methods.reduction`) and the seed phases
(stalk, prowl, pounce, weighting, compare) build on it.
"""
