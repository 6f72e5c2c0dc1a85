"""The data floor: the DuckDB store, ingestion, samples, model identity and the matrix query.

Modules here import only the plugin core (:mod:`harness_ext.errors`, :mod:`harness_ext.types`,
:mod:`harness_ext.plugin_manager`) and the built-in adapters; they never import
:mod:`harness_ext.methods` or :mod:`harness_ext.cli`, never print, and never parse arguments.
"""
