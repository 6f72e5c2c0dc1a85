"""Build a synthetic per-sample-log store of N models x T tasks (bench_reduce_items' logs case) and ingest it.

Usage: python benchmarks/screens/xscale42/make_store.py OUT_DIR N_MODELS N_TASKS
"""
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench_reduce_items import write_runs  # noqa: E402

out, n, t = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
folders = write_runs(out / "logs", n, t, logs=True, seed=1, largest=1000)
subprocess.run([sys.executable, "-m", "harness_ext", "ingest", "--db", str(out / "logs.duckdb"), "-q",
                *map(str, folders)], check=True)
