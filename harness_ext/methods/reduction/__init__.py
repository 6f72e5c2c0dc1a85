"""The reduction: choose a subset, write the manifest harnesses run, and predict the full benchmark.

``reduce`` picks datasets (or items) and builds the manifest with its evidence and budget;
``predict`` reads a new model's subset results and returns the full benchmark's estimate with
intervals, on the harness's own metric. The numerics come from :mod:`harness_ext.methods.engine`.
"""
