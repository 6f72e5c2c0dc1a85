#!/bin/bash
# run_case.sh GEN KIND [reduce args...]: a fresh work folder, generate, ingest, reduce --items, check.
set -u
HERE=$(cd "$(dirname "$0")" && pwd); PY=/work/venvs/polish2/bin/python
gen=$1; kind=$2; shift 2
W=/tmp/rt4/$gen-$kind; rm -rf "$W"; mkdir -p "$W"; cd "$W"
export HARNESS_EXT_NO_PROGRESS=1
(cd "$HERE" && $PY $gen.py "$W/in" "$kind")
$PY -m harness_ext ingest --db store.duckdb in > ingest.out 2> ingest.err; echo "ingest rc=$?"; tail -n 3 ingest.out; head -c 1500 ingest.err
$PY -m harness_ext reduce --db store.duckdb --items ${N:-8} ${BENCH:+--benchmark $BENCH} --no-plot --out red "$@" > reduce.out 2> reduce.err; echo "reduce rc=$?"
head -c 2500 reduce.err; mv reduce.out reduce.out.keep
$PY "$HERE/check.py" red "$W"
