#!/bin/bash
# usage: run.sh ARM NAME=FILE ...   (ARM prod|clip; quality_holdout --protocols a,f --splits 5 on the store fit,
# serially, niced; NAME=shared:MATRIX for a shared matrix). Output in out/NAME_ARM.{json,out}.
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../../.."
export HARNESS_EXT_NO_PROGRESS=1
PY=${PY:-python}
O=$HERE/out; mkdir -p $O
arm=$1; shift
for nf in "$@"; do
  n=${nf%%=*}; f=${nf#*=}
  case "$f" in shared:*) src="--matrices ${f#shared:}";; *) src="--csv $f";; esac
  [ -s $O/${n}_$arm.json ] && continue
  s=$(date +%s)
  nice -n 10 $PY benchmarks/screens/storenorm/screen.py $arm -- $src --protocols a,f --extra-predictors "" --splits 5 \
      --json $O/${n}_$arm.json > $O/${n}_$arm.out 2>&1
  echo "$n $arm $(( $(date +%s) - s ))s rc=$? $(grep -o 'rule fired on [0-9]*' $O/${n}_$arm.out)" >> $O/LOG
done
