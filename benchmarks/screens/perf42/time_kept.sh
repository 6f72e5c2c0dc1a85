#!/bin/bash
# Time each command of bench_reduce_items.py on the stores it kept (--keep DIR), one process at a time, with the load.
# Usage: benchmarks/screens/perf42/time_kept.sh DIR [PYTHON]
D=${1:?folder kept by bench_reduce_items.py --keep}; PY=${2:-python}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 HARNESS_EXT_NO_PROGRESS=1 HARNESS_EXT_LOAD_PLUGINS=
T() { local label=$1; shift; local l; l=$(cut -d' ' -f1-3 /proc/loadavg)
      /usr/bin/time -f "$label: %e s wall, %U+%S s CPU, peak %M KB (load $l)" nice -n 10 $PY -m harness_ext "$@" >/dev/null; }
NEW=$(ls -d $D/new_results/*/ | head -1)
T "results: reduce (dataset level, defaults)" reduce --db $D/results.duckdb --out $D/t_dataset --no-plot -q
T "results: reduce --items 50 (design only)" reduce --db $D/results.duckdb --items 50 --out $D/t_design --no-plot -q
T "results: predict a results file (dataset manifest)" predict --manifest $D/t_dataset $NEW/results_*.json
T "results: predict per-sample logs (design-only manifest)" predict --manifest $D/t_design $NEW
T "ingest of the same folder" ingest --db $D/t_new.duckdb -q $NEW
rm -f $D/t_new.duckdb
