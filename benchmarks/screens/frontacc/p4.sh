#!/bin/bash
# P4: the README loop, product (prod) or a candidate, in its own store directory
set -e
C=$1; HERE=$(cd "$(dirname "$0")" && pwd); D=${TMPDIR:-/tmp}/frontacc_p4_$C; rm -rf $D; mkdir -p $D; cd $D
export HARNESS_EXT_DB=$D/p.duckdb HARNESS_EXT_NO_PROGRESS=1
PY="nice -n 10 python $HERE/p4.py $C"
$PY ingest --bundled > ingest.txt 2>&1
$PY reduce --benchmark mmlu --budget 8 --models '*deduped*' --out reduced > reduce.txt 2>&1
$PY predict --manifest reduced $HERE/../../../harness_ext/data/pythia-5shot/pythia-2.8b/2.8b-5shot_step143000.json --json pred1.json > predict.txt 2>&1
