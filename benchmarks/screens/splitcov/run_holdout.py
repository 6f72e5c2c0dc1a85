"""The first round's screen runner. The rules it switched were a flag of ``newmodel_intervals`` until the second
round removed it (at commit adb22a29 the flag is still there: ``off|scale|mondrian``). The Mondrian rule is now
installed by monkeypatching: ``benchmarks/screens/splitcov2/run_holdout.py off|mondrian|mondrian-runs ...``.
"""
import sys

sys.exit("benchmarks/screens/splitcov/run_holdout.py: the neighbour-distance flag is gone from newmodel_intervals; "
         "run benchmarks/screens/splitcov2/run_holdout.py off|mondrian|mondrian-runs (or check out adb22a29 for 'scale')")
