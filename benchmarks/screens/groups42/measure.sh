#!/usr/bin/env bash
# lm-eval groups named in `reduce --items` (HISTORY: forty-second session, fix-groups42).
# Usage: HE=path/to/harness-ext bash measure.sh OUTDIR   (HARNESS_EXT_SHARED_DATA for the shared lm-eval 0.4 lines)
# The walk41 leaderboard runs (rebuilt from the numbers of csabakecskemeti/lm_eval_results @ 3a119928, no licence:
# not copied) and the shared lm-eval 0.4 results; each group by its name, then the same store as an older reader
# left it (no members: the query fails with the hint), then `ingest --reread`.
set -u
HE=${HE:-harness-ext}; OUT=${1:?OUTDIR}; mkdir -p "$OUT"; HERE=$(cd "$(dirname "$0")" && pwd); cd "$OUT"
export HARNESS_EXT_NO_PROGRESS=1
PY=$(dirname "$(command -v "$HE")")/python
# reduce_group DB LABEL GROUP: `reduce --items 20 --datasets GROUP`, its summary's figures and the written alias
reduce_group() {
  echo "== $2--datasets $3"
  $HE reduce --db "$1" --datasets "$3" --items 20 --out "r_$3" --no-plot 2>&1 | grep -o "^.* items (.*\|^benchmark.*\|Groups named: [^.]*" | cut -c1-400
  grep -h group_alias "r_$3/harness_ext_reduced.yaml"
}
rm -rf data s1.duckdb v4.duckdb r_* o_*; "$PY" "$HERE/../walk41/rebuild_leaderboard_runs.py" data
$HE ingest --db s1.duckdb data -q
for g in leaderboard_bbh leaderboard_math_hard leaderboard_gpqa leaderboard_musr; do reduce_group s1.duckdb "" "$g"; done
echo "== --benchmark leaderboard (no score in these files, so no row: its members are not kept)"
$HE reduce --db s1.duckdb --benchmark leaderboard --items 20 --out r_lb --no-plot 2>&1 | tail -1 | cut -c1-300
V04=${HARNESS_EXT_SHARED_DATA:-../shared/data}/lm-eval-harness/v04_results_from_pull_refs/results
if [ -d "$V04" ]; then
  $HE ingest --db v4.duckdb "$V04" -q
  for g in mmlu mmlu_stem mmlu_humanities glue; do reduce_group v4.duckdb "shared: " "$g"; done
  echo "== shared, the store as the reader before revision 6 left it"
  "$PY" - v4.duckdb <<'PYEOF'
import json, sys, duckdb
with duckdb.connect(sys.argv[1]) as con:
    for did, md in con.execute("SELECT dataset_id, metadata FROM datasets WHERE kind = 'aggregate'").fetchall():
        md = json.loads(md); md.pop("members", None)
        con.execute("UPDATE datasets SET metadata = ? WHERE dataset_id = ?", [json.dumps(md), did])
    con.execute("UPDATE sources SET reader = '5' WHERE adapter = 'lm_eval_v04'")
PYEOF
  $HE reduce --db v4.duckdb --datasets mmlu_stem --items 20 --out o_stem --no-plot 2>&1 | tail -1 | cut -c1-600
  $HE ingest --db v4.duckdb --reread "$V04" -q 2>&1 | tail -1
  $HE reduce --db v4.duckdb --datasets mmlu_stem --items 20 --out o_stem --no-plot 2>&1 | grep "^benchmark"
fi
