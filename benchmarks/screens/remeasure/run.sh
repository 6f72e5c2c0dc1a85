#!/bin/bash
# usage: run.sh NAME=FILE ...   (store a,f then raw f, serially, niced)
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../../.."
export HARNESS_EXT_NO_PROGRESS=1
PY=python
O=$HERE/out
for nf in "$@"; do
  n=${nf%%=*}; f=${nf#*=}; extra=""
  case "$n" in *_s10) extra="--splits 10";; esac
  if [ ! -s $O/${n}_store.json ]; then
    s=$(date +%s)
    nice -n 10 $PY benchmarks/quality_holdout.py --csv $f --protocols a,f --extra-predictors "" $extra --json $O/${n}_store.json > $O/${n}_store.out 2>&1
    echo "$n store $(( $(date +%s) - s ))s rc=$?" >> $O/LOG
  fi
  if [ ! -s $O/${n}_raw.json ]; then
    s=$(date +%s)
    nice -n 10 $PY benchmarks/quality_holdout.py --csv $f --protocols f --extra-predictors "" --fit raw --json $O/${n}_raw.json > $O/${n}_raw.out 2>&1
    echo "$n raw $(( $(date +%s) - s ))s rc=$?" >> $O/LOG
  fi
done
echo "batch done: $*" >> $O/LOG
