#!/usr/bin/env bash
# The new-user walk of `reduce --items` from lm-eval results files alone (HISTORY: fortieth session, fix-dowalk).
# Usage: HE=path/to/harness-ext bash walk.sh OUTDIR   (needs ../shared/data; the toy runs are the repo's fixtures)
set -u
HE=${HE:-harness-ext}; OUT=${1:?OUTDIR}; mkdir -p "$OUT"; cd "$OUT"
export HARNESS_EXT_NO_PROGRESS=1
REPO=$(cd "$(dirname "$0")/../../.." && pwd); V04=$REPO/../shared/data/lm-eval-harness/v04_results_from_pull_refs/results
[ -d "$V04" ] || V04=${HARNESS_EXT_SHARED_DATA:?}/lm-eval-harness/v04_results_from_pull_refs/results
F=$REPO/tests/fixtures/samples/lm_eval_output
$HE ingest --db v4.duckdb "$V04" -q
$HE reduce --db v4.duckdb --benchmark mmlu --items 20 --out mmlu20 --no-plot | grep "^benchmark"
$HE reduce --db v4.duckdb --benchmark mmlu --items-total 300 --out t300 --no-plot | grep "machine_learning\|^benchmark"
$HE reduce --db v4.duckdb --benchmark lm_eval --items 20 --out lm20 --no-plot 2>&1 | grep "^[0-9].* items\|left out\|No bench"
$HE reduce --db v4.duckdb --benchmark lm_eval --items 20 --metric f1 --out f1 --no-plot 2>&1 | tail -1
$HE ingest --db py.duckdb --bundled -q; $HE reduce --db py.duckdb --items 20 --out py --no-plot 2>&1 | tail -1
# The toy population's results files alone; the new model's run with only the drawn documents, then all of them.
rm -rf toyres runpart runall; for m in small medium; do mkdir -p toyres/toy__lm-$m; cp $F/toy__lm-$m/results_*.json toyres/toy__lm-$m/; done
$HE ingest --db toy.duckdb toyres -q; $HE reduce --db toy.duckdb --items 6 --out toy6 --no-plot | grep "^toy\|^bench"
mkdir runpart runall; cp -r $F/toy__lm-large runall/; cp -r $F/toy__lm-large runpart/
python - <<'PY'
import json, glob
S = json.load(open("toy6/harness_ext_reduced_samples.json"))
for f in glob.glob("runpart/toy__lm-large/samples_*.jsonl"):
    t = next(k for k in S if f.split("samples_")[1].startswith(k))
    keep = [l for l in open(f) if json.loads(l)["doc_id"] in S[t]]
    open(f, "w").writelines(keep)
PY
$HE predict -m toy6 runpart | tail -6; $HE predict -m toy6 runall | tail -6
