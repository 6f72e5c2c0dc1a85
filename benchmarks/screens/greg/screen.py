"""The greg screen: ``benchmarks/quality_items.py`` with ``crosstask_greg`` registered by ``greg.py`` (criterion in
CRITERION.md).

Run (one process; arguments as quality_items.py's):
    HARNESS_EXT_SHARED_DATA=/work/shared/data HARNESS_EXT_NO_PROGRESS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
        nice -n 10 python benchmarks/screens/greg/screen.py --items 50 --seeds 40 --first-seed 200 \
        --protocols interpolation extrapolation benchmark-frontier \
        --estimators sample_mean random_learn aipw_paper anchor_weighted crosstask crosstask_greg \
        --per-draw benchmarks/screens/greg/criterion_draws.csv
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import quality_items as q  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import greg  # noqa: E402,F401  (registers crosstask_greg)

if __name__ == "__main__":
    raise SystemExit(q.main(sys.argv[1:]))
