"""Numerical methods shared by plugins: predictor-space transforms, low-rank models, conformal intervals.

Modules here import only numpy (scipy lazily) and the core (:mod:`harness_ext.errors`);
they never print or parse arguments.
"""
