#!/bin/bash
# What a user sees of the commands that use the four split modules, kept to cmp across two checkouts.
# usage (from the repository root, with the checkout to measure installed): same_outputs.sh OUTDIR
# Every store and output is made at the same path (/tmp/split5_work), so the outputs that name it agree too.
set -u
FINAL=$1; OUT=/tmp/split5_work; rm -rf "$OUT" "$FINAL"; mkdir -p "$OUT"
REPO=$(pwd); PY=${PY:-python}; HX=${HX:-harness-ext}
export HARNESS_EXT_NO_PROGRESS=1 HARNESS_EXT_SHARED_DATA=${HARNESS_EXT_SHARED_DATA:-/work/shared/data}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
run() {  # run NAME CMD...: stdout+stderr and the exit code in NAME.txt
  local name=$1; shift
  (cd "$OUT" && nice -n 10 "$@") > "$OUT/$name.txt" 2>&1; echo "rc=$?" >> "$OUT/$name.txt"
}
# every command's --help
run help_top $HX --help
for c in ingest matrix info models plugins stalk prowl compare pounce weights reduce predict; do
  run help_$c $HX $c --help
done
# the README loop
db=$OUT/bundled.duckdb
run readme_ingest $HX ingest --db "$db" --bundled
run readme_reduce $HX reduce --db "$db" --benchmark mmlu --budget 8 --models '*deduped*' --out reduced
run readme_predict $HX predict --manifest reduced \
  "$REPO/harness_ext/data/pythia-5shot/pythia-2.8b/2.8b-5shot_step143000.json"
# the SimBA phases and weights on the bundled data
run stalk $HX stalk --db "$db" --benchmark mmlu --out stalk --json stalk.json
run prowl $HX prowl --db "$db" --benchmark mmlu --out prowl --json prowl.json
run pounce $HX pounce --db "$db" --benchmark mmlu --out pounce --json pounce.json
run weights $HX weights --db "$db" --benchmark mmlu --draws 2000 --out weights --json weights.json
rm -f "$db" "$db.wal"
# the frontier protocol on one shared matrix
run holdout_f $PY "$REPO/benchmarks/quality_holdout.py" --protocols f --matrices helm_classic --json holdout_f.json
# its load and run times and its progress bar differ from run to run: left out of what is compared
sed -E -i 's/ \([0-9.]+ s\)$//; /it\/s/d; s/; [0-9]+ s$//' "$OUT/holdout_f.txt"
mv "$OUT" "$FINAL"
