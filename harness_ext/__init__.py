"""harness-ext: cheaper, still trustworthy LLM evaluation.

Ingest harness result files into a DuckDB store, find a small subset of
datasets that preserves model rankings (stalk, prowl), and predict a new
model's full-benchmark scores from that subset with uncertainty (pounce).

The routine loop in Python (:mod:`harness_ext.methods.api`)::

    import harness_ext as hx
    matrix = hx.load_matrix("harness-ext.duckdb", benchmark="mmlu")
    reduced = hx.reduce(matrix, budget=8)      # .subset, .expected_error, .plot(), .write("reduced")
    hx.predict(reduced, "results/")            # .to_frame(), .aggregate, .plot()
"""

from .errors import HarnessExtError, IngestError, MethodError, PluginError, StoreError

__version__ = "0.1.0"

# The rest of the public API is imported on first use (PEP 562), so that
# ``harness-ext --help`` does not pay for pluggy and numpy.
_LAZY = {
    "hookimpl": "hookspecs", "hookspec": "hookspecs",
    "get_plugin_manager": "plugin_manager", "get_registration": "plugin_manager",
    "get_registrations": "plugin_manager",
    "Adapter": "types", "ItemEstimator": "types", "ManifestWriter": "types", "Predictor": "types", "ResultRecord": "types",
    "Selector": "types", "SimilarityMeasure": "types", "SourceFile": "types", "WeightingScheme": "types",
    # The Python API of the routine loop (harness_ext.methods.api): ingest -> load_matrix -> reduce -> predict.
    "ingest": "methods.api", "load_matrix": "methods.api", "reduce": "methods.api", "predict": "methods.api",
    "reduce_items": "methods.api", "ItemReduceResult": "methods.reduction.item_reduce_result",
    "ItemEstimate": "methods.engine.item_estimators",  # what an item estimator plugin's predict returns
    "ReduceResult": "methods.reduction.reduce", "PredictionResult": "methods.reduction.predict", "Result": "report",
    "bundled_data_path": "store.ingest",
}

__all__ = [
    "ingest", "load_matrix", "reduce", "reduce_items", "predict", "ReduceResult", "ItemReduceResult", "PredictionResult", "Result", "bundled_data_path",
    "Adapter", "HarnessExtError", "IngestError", "ItemEstimate", "ItemEstimator", "ManifestWriter", "MethodError", "PluginError",
    "Predictor", "ResultRecord", "Selector", "SimilarityMeasure", "SourceFile", "StoreError",
    "WeightingScheme", "get_plugin_manager", "get_registration", "get_registrations", "hookimpl",
    "hookspec", "__version__",
]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'harness_ext' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
