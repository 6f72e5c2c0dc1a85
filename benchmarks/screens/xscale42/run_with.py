"""Run ``harness-ext`` with crosstask's working-logit switch set: ``run_with.py GROUPED_FROM ARGS...``.

``GROUPED_FROM`` 1000000 gives the dense design everywhere (the code before this branch), 1 the grouped one
everywhere (to compare outputs on small stores, which the default of 16 leaves on the dense path).
"""
import sys

import harness_ext.methods.engine.item_crosstask as crosstask
from harness_ext.cli import main

crosstask.GROUPED_FROM = int(sys.argv[1])
sys.exit(main(sys.argv[2:]))
