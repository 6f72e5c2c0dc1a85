"""quality_holdout.main with newmodel_intervals.AGGREGATE_NEIGHBOUR_SCALE set (first argument: off|scale|mondrian).

    python benchmarks/screens/splitcov/run_holdout.py mondrian --protocols f --extra-predictors "" --json F
"""
import sys
from pathlib import Path

sys.path.insert(0, Path(__file__).resolve().parents[2].as_posix())
import quality_holdout as qh  # noqa: E402

from harness_ext.methods.engine import newmodel_intervals as ni  # noqa: E402

ni.AGGREGATE_NEIGHBOUR_SCALE = {"off": False, "scale": True, "mondrian": "mondrian"}[sys.argv[1]]
sys.exit(qh.main(sys.argv[2:]))
