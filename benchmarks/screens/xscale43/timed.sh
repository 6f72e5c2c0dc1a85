#!/bin/bash
# Time `reduce --items 50` on a make_store.py store with one checkout's code: timed.sh STORE_DIR SRC OUT [PYTHON]
# (SRC: a checkout's root, first on PYTHONPATH: this worktree, or main's code from `git archive c603a564`).
D=${1:?store folder}; SRC=${2:?checkout}; OUT=${3:?out folder}; PY=${4:-python}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 HARNESS_EXT_NO_PROGRESS=1
l=$(cut -d' ' -f1-3 /proc/loadavg)
PYTHONPATH=$SRC /usr/bin/time -f "$D $SRC: %e s wall, %U+%S s CPU, peak %M KB (load at start $l)" nice -n 10 \
  $PY -m harness_ext reduce --db $D/logs.duckdb --items 50 --out $OUT --no-plot -q >/dev/null
