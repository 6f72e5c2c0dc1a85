#!/bin/bash
# Build the stores and manifests predict43 measured `predict` on, in DIR (new; kept), with the code PYTHON runs.
# Usage: benchmarks/screens/predict43/setup.sh DIR [PYTHON]
#   s400:   bench_reduce_items.py's 400 models x 300 tasks (results files alone), dataset-level reduce, one new model
#   readme: the README's quickstart (bundled Pythia, MMLU, 8 subjects chosen on the *deduped* runs), Pythia-2.8B
#   pythia: the shared Pythia MMLU matrix one row per run (--rows run), the 1.4b-1MtokBS run held out
#   openllm: the shared Open LLM v2 records (Every Eval Ever), one model's record held out
set -e
D=${1:?folder}; PY=${2:-python}; HERE=$(cd "$(dirname "$0")" && pwd); REPO=$(cd "$HERE/../../.." && pwd)
S=${HARNESS_EXT_SHARED_DATA:-$REPO/../shared/data}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 HARNESS_EXT_NO_PROGRESS=1 HARNESS_EXT_LOAD_PLUGINS=
mkdir -p "$D"; cd "$D"
H() { nice -n 10 $PY -m harness_ext "$@"; }
if [ ! -d s400 ]; then
  $PY - <<PYEOF
import sys; from pathlib import Path
sys.path.insert(0, "$REPO/benchmarks")
from bench_reduce_items import write_runs
write_runs(Path("s400/results"), 400, 300, logs=False); write_runs(Path("s400/new_results"), 1, 300, logs=False, first=400)
PYEOF
  H ingest --db s400/results.duckdb -q s400/results
fi
[ -f s400/red/manifest.json ] || H reduce --db s400/results.duckdb --out s400/red --no-plot -q >/dev/null
[ -f readme.duckdb ] || H ingest --bundled --db readme.duckdb -q
H reduce --db readme.duckdb --benchmark mmlu --budget 8 --models '*deduped*' --out readme_red --no-plot -q >/dev/null
if [ -d "$S/pythia-evals/evals" ]; then
  [ -f pythia.duckdb ] || H ingest --db pythia.duckdb -q "$S/pythia-evals/evals"
  H reduce --db pythia.duckdb --benchmark mmlu --rows run --exclude-models '*1.4b-1MtokBS*' --budget 8 \
    --out pythia_red --no-plot -q >/dev/null
fi
if [ -d "$S/every_eval_ever/data/hfopenllm_v2" ]; then
  NEW=$(find "$S/every_eval_ever/data/hfopenllm_v2/lemon07r/Gemma-2-Ataraxy-v2f-9B" -name '*.json' | head -1)
  [ -f openllm.duckdb ] || { H ingest --db openllm.duckdb -q "$S/every_eval_ever/data/hfopenllm_v2"; }
  H reduce --db openllm.duckdb --exclude-models 'lemon07r/Gemma-2-Ataraxy-v2f-9B*' --out openllm_red --no-plot -q >/dev/null
  echo "$NEW" > openllm_new.txt
fi
