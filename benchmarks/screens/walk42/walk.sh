#!/usr/bin/env bash
# The forty-second walk of the analysis commands: run every documented analysis on shared data and on ZeroEval's
# leaderboard (rebuilt from its numbers). Usage: benchmarks/screens/walk42/walk.sh OUT  (HE: the harness-ext to run)
set -euo pipefail
OUT=${1:?folder}; HE=${HE:-harness-ext}; D=$(cd "${HARNESS_EXT_SHARED_DATA:-../shared/data}" && pwd); HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT" && cd "$OUT"
$HE ingest --db cls.duckdb "$D/every_eval_ever/data/helm_classic"
$HE info --db cls.duckdb
for c in stalk prowl weights; do time $HE $c --db cls.duckdb --benchmark helm_classic --dense models --out "cls_$c"; done
$HE prowl --db cls.duckdb --benchmark helm_classic --dense models --out cls_prowl --json prowl_q.json -q
time $HE compare --db cls.duckdb --benchmark helm_classic --dense models --out cls_compare --n-jobs 1
$HE ingest --db tsc.duckdb "$D/tsml-eval-tsc-bakeoff/tsml_eval/publications/y2023/tsc_bakeoff/results"
time $HE compare --db tsc.duckdb --benchmark tsc_bakeoff --metric accuracy --dense --out tsc_compare --n-jobs 1
$HE ingest --db it.duckdb "$D/items/helm_lite/gsm.parquet" "$D/items/open_llm_v2/musr.parquet"
time $HE weights --db it.duckdb --samples-task gsm --out gsm_weights
$HE weights --db it.duckdb --samples-task musr --analyses random --out musr_weights
python - "$D" <<'PY'
import sys, pandas as pd
d = pd.read_parquet(f"{sys.argv[1]}/items/open_llm_v2/musr.parquet")
d.pivot(index="item", columns="model", values="score").iloc[:, :40].to_csv("musr_prompts.csv")
PY
$HE prowl --prompts musr_prompts.csv --out musr_prowl
python "$HERE/rebuild_zeroeval.py" zeroeval.md
$HE ingest --db ze.duckdb zeroeval.md
$HE matrix --db ze.duckdb > /dev/null
for c in stalk prowl weights; do $HE $c --db ze.duckdb --out "ze_$c"; done
$HE compare --db ze.duckdb --dense --out ze_compare --n-jobs 1
$HE plugins > /dev/null
