#!/bin/bash
# matrix.sh VER...: in a folder holding store.duckdb and pop/ (redteam4/live_pop.py, lm-eval 0.4.13), write the
# dataset and item folders with this harness-ext (venv lmeval-0.4.13) and run them on each lm-eval VER
# (/work/venvs/lmeval-VER, lmevalvers/run.sh): the dataset folder; the item folder with --samples (its arc_easy is
# defined in the folder under lm-eval's own name); a copy without arc_easy (--samples alone); arc_easy alone.
set -u
HERE=$(cd "$(dirname "$0")" && pwd); RUN=$HERE/../lmevalvers/run.sh; H=/work/venvs/lmeval-0.4.13/bin/harness-ext
export HARNESS_EXT_NO_PROGRESS=1
if [ ! -d fin_ds ]; then
  $H reduce --db store.duckdb --budget 4 --n-random 100 --local-data pop/tasks --out fin_ds --no-plot > fin_ds.log 2>&1
  $H reduce --db store.duckdb --items 10 --local-data pop/tasks --out fin_it --no-plot > fin_it.log 2>&1
fi
/work/venvs/lmeval-0.4.13/bin/python $HERE/noarc.py fin_it fin_itx arc_easy
for V in "$@"; do
  rm -rf out/$V
  $RUN $V fin_ds fin_ds harness_ext_reduced --log_samples
  $RUN $V fin_it fin_it harness_ext_reduced --samples fin_it/harness_ext_reduced_samples.json --log_samples
  $RUN $V fin_itx fin_itx harness_ext_reduced --samples fin_itx/harness_ext_reduced_samples.json --log_samples
  $RUN $V arc fin_it arc_easy --log_samples
  for k in fin_ds fin_it fin_itx arc; do
    grep "^|" logs/$V/$k.out | sed -n 3p | sed "s/^/  row $V $k: /"
    grep -hE "Error|error:|overrides|Couldn't" logs/$V/$k.err | tail -1 | cut -c1-200 | sed "s/^/  err $V $k: /"
    r=$(ls out/$V/$k/*/results_*.json 2>/dev/null | head -1)
    [ -n "$r" ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); c=d['configs']; print('  ran', sys.argv[2], sys.argv[3], d.get('lm_eval_version'), {t: (c[t].get('dataset_path'), c[t].get('dataset_name')) for t in c if t=='arc_easy'})" "$r" $V $k
  done
  for k in ds it itx; do [ -d out/$V/fin_$k ] && $H predict -m fin_${k%x} out/$V/fin_$k > logs/$V/predict_$k.txt 2>&1; \
    [ -d out/$V/fin_$k ] && grep -E "^standin/m99 +acc|this folder needs|no result|left out" logs/$V/predict_$k.txt | cut -c1-300 | sed "s/^/  predict $V $k: /"; done
done
