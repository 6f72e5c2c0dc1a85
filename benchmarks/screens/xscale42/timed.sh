#!/bin/bash
# Time `reduce --items 50` on a make_store.py store with the switch set: timed.sh STORE_DIR GROUPED_FROM OUT [PYTHON]
# (GROUPED_FROM: 1000000 the dense logit as before this branch, 16 the default, 1 grouped everywhere).
D=${1:?store folder}; G=${2:?grouped-from}; OUT=${3:?out folder}; PY=${4:-python}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 HARNESS_EXT_NO_PROGRESS=1
HERE=$(dirname "$0"); l=$(cut -d' ' -f1-3 /proc/loadavg)
/usr/bin/time -f "$D grouped-from $G: %e s wall, %U+%S s CPU, peak %M KB (load at start $l)" nice -n 10 \
  $PY $HERE/run_with.py $G reduce --db $D/logs.duckdb --items 50 --out $OUT --no-plot -q >/dev/null
