#!/usr/bin/env bash
# The composite screen end to end: build the stores, choose settings on seeds 0-4, final figures on seeds 400-419.
# Usage: benchmarks/screens/composite/run.sh OUT   (HE, PY: the venv's harness-ext and python)
set -euo pipefail
OUT=${1:?OUT}; HE=${HE:-harness-ext}; PY=${PY:-python}; D=$(dirname "$0")
export HARNESS_EXT_SHARED_DATA=${HARNESS_EXT_SHARED_DATA:-/work/shared/data} HARNESS_EXT_NO_PROGRESS=1
L=$HARNESS_EXT_SHARED_DATA/lm-eval-harness
mkdir -p "$OUT"
$HE ingest --bundled --db "$OUT/pythia.duckdb" -q
$HE ingest --db "$OUT/v03.duckdb" -q "$L/v03_results_master_2023-07-31"
$HE ingest --db "$OUT/v04.duckdb" -q "$L/v04_results_from_pull_refs"
$HE ingest --db "$OUT/pevals.duckdb" -q "$HARNESS_EXT_SHARED_DATA/pythia-evals"
STORES="pythia:$OUT/pythia.duckdb:mmlu pevals:$OUT/pevals.duckdb:mmlu v03:$OUT/v03.duckdb:mmlu v04:$OUT/v04.duckdb:mmlu"
DEV="logit1:logit:1:0.1,logit2:logit:2:0.1,raw1:raw:1:0.1,logit1~conf:logit:1:0.1,av1~conf:logit:1:0.1:10:1:src,avf1~conf:logit:1:0.1:10:1:flat"
FINAL="logit1:logit:1:0.1,avf1~conf:logit:1:0.1:10:1:flat"
$PY $D/screen.py --stores $STORES --items-root "$HARNESS_EXT_SHARED_DATA/items" --seeds 0-4 --ns 20 --lt 0.5,1 \
    --settings "$DEV" --out "$OUT/dev.json"
$PY $D/screen.py --stores "v04lm:$OUT/v04.duckdb:lm_eval" --items-root "" --seeds 0-4 --ns 20 --lt 1 \
    --settings "logit1:logit:1:0.1,raw1:raw:1:0.1,logit1~conf:logit:1:0.1,av1~conf:logit:1:0.1:10:1:src,avf1~conf:logit:1:0.1:10:1:flat" \
    --out "$OUT/dev_v04lm.json"
$PY $D/screen.py --stores $STORES --items-root "$HARNESS_EXT_SHARED_DATA/items" --seeds 400-419 --ns 10,20,50 --lt 1 \
    --settings "$FINAL" --out "$OUT/final.json"
$PY $D/screen.py --stores "v04lm:$OUT/v04.duckdb:lm_eval" --items-root "" --seeds 400-419 --ns 10,20,50 --lt 1 \
    --settings "$FINAL" --out "$OUT/final_v04lm.json"
$PY - "$OUT" <<'PYEOF'
import json, sys
o = sys.argv[1]
a = json.load(open(f"{o}/final.json")); a["results"].update(json.load(open(f"{o}/final_v04lm.json"))["results"])
json.dump(a, open(f"{o}/final_all.json", "w"), indent=1)
PYEOF
$PY $D/summarise.py "$OUT/dev.json" > "$OUT/dev.md"
$PY $D/summarise.py "$OUT/final_all.json" > "$OUT/final.md"
