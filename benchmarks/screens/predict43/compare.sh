#!/bin/bash
# predict with the code before (OLD: a checkout of the commit before, run through PYTHONPATH) and after (this
# checkout, installed), one after the other, on the manifests setup.sh wrote in DIR: wall, CPU, peak memory and the
# load, then the printed table and --json compared with cmp.
# Usage: benchmarks/screens/predict43/compare.sh DIR OLD_CHECKOUT [PYTHON] [ROUNDS]
D=${1:?folder from setup.sh}; OLD=${2:?checkout of the code before}; PY=${3:-python}; N=${4:-1}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 HARNESS_EXT_NO_PROGRESS=1 HARNESS_EXT_LOAD_PLUGINS=
cd "$D" || exit 1
T() { local label=$1 out=$2; shift 2; local l; l=$(cut -d' ' -f1-3 /proc/loadavg)
      /usr/bin/time -f "$label: %e s wall, %U+%S s CPU, peak %M KB (load $l)" nice -n 10 "$@" >"$out" 2>"$out.err"
      tail -1 "$out.err"; }
for c in s400 readme pythia openllm; do
  case $c in
    s400) M=s400/red; F=$(ls s400/new_results/*/results_*.json | head -1);;
    readme) M=readme_red; F=$($PY -c 'import harness_ext;print(harness_ext.bundled_data_path())')/pythia-2.8b/2.8b-5shot_step143000.json;;
    pythia) M=pythia_red; F=$(ls ${HARNESS_EXT_SHARED_DATA}/pythia-evals/evals/pythia-v1/pythia-1.4b-1MtokBS/*step146000*.json 2>/dev/null | head -1);;
    openllm) M=openllm_red; F=$(cat openllm_new.txt 2>/dev/null);;
  esac
  [ -f "$M/manifest.json" ] && [ -n "$F" ] || { echo "$c: not built"; continue; }
  for r in $(seq "$N"); do
    for side in old new; do
      if [ $side = old ]; then P=(env PYTHONPATH="$OLD" $PY); else P=($PY); fi
      T "$c $side table" "$c.$side.txt" "${P[@]}" -m harness_ext predict --manifest "$M" "$F" --no-lm-eval-results
      T "$c $side json" "$c.$side.json" "${P[@]}" -m harness_ext predict --manifest "$M" "$F" --no-lm-eval-results --json -
    done
  done
  for k in txt json; do cmp -s "$c.old.$k" "$c.new.$k" && echo "$c $k: identical" || echo "$c $k: DIFFER"; done
  # stderr (the warnings) without time's own last line
  cmp -s <(head -n -1 "$c.old.txt.err") <(head -n -1 "$c.new.txt.err") && echo "$c stderr: identical" || echo "$c stderr: DIFFER"
done
