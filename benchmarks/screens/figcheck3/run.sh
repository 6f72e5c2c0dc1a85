#!/bin/bash
# The re-measurements of this pass, one process at a time (2 shared cores).
# Usage: benchmarks/screens/figcheck3/run.sh STEP...   (from the repository root)
set -u
export HARNESS_EXT_SHARED_DATA=${HARNESS_EXT_SHARED_DATA:-/work/shared/data} HARNESS_EXT_NO_PROGRESS=1
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
PY=${PY:-python}
OUT=benchmarks/screens/figcheck3/out
mkdir -p $OUT/errs
run() {  # NAME COMMAND...: output and wall time to $OUT/NAME.txt
    local name=$1; shift
    local t0=$(date +%s)
    echo "# $* ($(date -u +%H:%M) UTC, load $(cut -d' ' -f1 /proc/loadavg))" > $OUT/$name.txt
    nice -n 10 "$@" >> $OUT/$name.txt 2>&1
    echo "# exit $?, wall $(( $(date +%s) - t0 )) s" >> $OUT/$name.txt
}
for step in "$@"; do
  case $step in
    bp_tsc_bakeoff|bp_helm_classic|bp_pythia_mmlu)  # with the default's intervals, as the 10-seed runs of record
      m=${step#bp_}
      run $step $PY benchmarks/quality_benchpress.py --matrices $m --seeds 10 --first-seed 42 --intervals support \
          --save-errors $OUT/errs --json $OUT/$step.json ;;
    bp_benchbench|bp_crosspred|bp_open_llm_v2)  # points only, as the 10-seed runs of record
      m=${step#bp_}
      run $step $PY benchmarks/quality_benchpress.py --matrices $m --seeds 10 --first-seed 42 --intervals support \
          --points-only --save-errors $OUT/errs --json $OUT/$step.json ;;
    bp_own)  # BenchPress's own matrix, seeds 43-52
      run $step $PY benchmarks/quality_benchpress.py --csv tests/fixtures/benchpress/scores.csv --seeds 10 \
          --first-seed 43 --intervals support --points-only --save-errors $OUT/errs --json $OUT/$step.json ;;
    f_default)
      run $step $PY benchmarks/quality_holdout.py --protocols f --extra-predictors "" --json $OUT/$step.json ;;
    f_demote)
      run $step $PY benchmarks/quality_holdout.py --protocols f --extra-predictors "" \
          --selector-params demote_saturated=true --json $OUT/$step.json ;;
    a_default|a_demote)
      extra=""; [ $step = a_demote ] && extra="--selector-params demote_saturated=true"
      run $step $PY benchmarks/quality_holdout.py --protocols a --splits 5 --extra-predictors "" \
          --matrices helm_classic,tsc_bakeoff,crosspred,benchbench $extra --json $OUT/$step.json ;;
    inspect)  # needs inspect-ai (pip install inspect-ai) in the same environment
      run $step $PY benchmarks/inspect_loop.py --new 20 ;;
    bench_matrix)
      run $step $PY benchmarks/bench_matrix.py --pipeline-only --pipeline-models 1000 ;;  # not run in this pass
    fsel)
      run $step $PY benchmarks/quality_frontier_selection.py --random-splits 3 --random-subsets 30 --json $OUT/$step.json ;;  # not run in this pass
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
