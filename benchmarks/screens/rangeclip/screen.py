"""The rangeclip screen: ``benchmarks/quality_items.py`` with ``crosstask_rangeclip`` (and the musr screen's other
variants) registered by ``benchmarks/screens/musr/screen.py`` (criterion in CRITERION.md), and ``crosstask_lcbgap``
by ``lcbgap.py`` (CRITERION2.md).

Run (one process; arguments as quality_items.py's):
    HARNESS_EXT_SHARED_DATA=/work/shared/data OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
        nice -n 10 python benchmarks/screens/rangeclip/screen.py --items 50 --seeds 20 --first-seed 80 \
        --protocols interpolation extrapolation benchmark-frontier \
        --estimators sample_mean random_learn aipw_paper anchor_weighted crosstask crosstask_rangeclip
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "musr"))
import screen as musr_screen  # noqa: E402  (registers the variants)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lcbgap  # noqa: E402,F401  (registers crosstask_lcbgap, CRITERION2.md)

if __name__ == "__main__":
    raise SystemExit(musr_screen.q.main(sys.argv[1:]))
