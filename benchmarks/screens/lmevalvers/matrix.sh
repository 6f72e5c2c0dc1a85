#!/bin/bash
# matrix.sh: in a folder holding store.duckdb and pop/ (live_pop.py), write the two folders with this harness-ext
# and run them on every lm-eval release, then predict each output. Prints one line per run.
set -u
HERE=$(cd "$(dirname "$0")" && pwd); H=/work/venvs/walk33/bin/harness-ext; export HARNESS_EXT_NO_PROGRESS=1
rm -rf fin_ds fin_it out/*/fin_*
$H reduce --db store.duckdb --budget 4 --n-random 100 --local-data pop/tasks --out fin_ds --no-plot > fin_ds.log 2>&1
$H reduce --db store.duckdb --items 10 --local-data pop/tasks --out fin_it --no-plot > fin_it.log 2>&1
for V in 0.4.2 0.4.5 0.4.8 0.4.9.2 0.4.10 0.4.13; do
  $HERE/run.sh $V fin_ds fin_ds harness_ext_reduced --log_samples
  grep "^|" logs/$V/fin_ds.out | sed -n 3p; tail -1 logs/$V/fin_ds.err | grep -E "Error|error" | cut -c1-160
  $HERE/run.sh $V fin_it fin_it harness_ext_reduced --samples fin_it/harness_ext_reduced_samples.json --log_samples
  grep "^|" logs/$V/fin_it.out | sed -n 3p; tail -1 logs/$V/fin_it.err | grep -E "Error|error" | cut -c1-160
  for k in ds it; do [ -d out/$V/fin_$k ] && $H predict -m fin_$k out/$V/fin_$k 2>&1 | grep -E "^standin/m99 +acc" | sed "s/^/  predict $V $k: /"; done
done
