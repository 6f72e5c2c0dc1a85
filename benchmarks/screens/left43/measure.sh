#!/usr/bin/env bash
# Leftovers of lm-eval groups and a page's <br> (HISTORY: forty-third session, fix-left43).
# Usage: HE=path/to/harness-ext bash measure.sh OUTDIR   (HARNESS_EXT_SHARED_DATA for the shared lm-eval lines)
# 1. ZeroEval's board rebuilt (walk42's script: no licence, not copied) and its dataset names ('MMLU<br/>-Redux').
# 2. The shared pythia-evals + lm-eval-harness results ingested: wall time, member lists kept beside a group's first
#    (other_member_lists) and the files' notes on them, groups kept nowhere.
set -u
HE=${HE:-harness-ext}; OUT=${1:?OUTDIR}; mkdir -p "$OUT"; HERE=$(cd "$(dirname "$0")" && pwd); cd "$OUT"
export HARNESS_EXT_NO_PROGRESS=1
PY=$(dirname "$(command -v "$HE")")/python
rm -f zeroeval.md z.duckdb all.duckdb all.json
"$PY" "$HERE/../walk42/rebuild_zeroeval.py" zeroeval.md
$HE ingest --db z.duckdb zeroeval.md -q
echo "== ZeroEval's datasets"
"$PY" -c "import duckdb; print(sorted(n for (n,) in duckdb.connect('z.duckdb', read_only=True).execute('SELECT name FROM datasets').fetchall()))"
D=${HARNESS_EXT_SHARED_DATA:-../shared/data}
if [ -d "$D/lm-eval-harness" ]; then
  echo "== shared pythia-evals + lm-eval-harness ingested"
  /usr/bin/time -f "%e s wall, %M KB" $HE ingest --db all.duckdb "$D/pythia-evals" "$D/lm-eval-harness" --json all.json 2>&1 | tail -1
  "$PY" - <<'PYEOF'
import json, duckdb
files = json.load(open("all.json"))["tables"]["files"]
notes = [n for f in files for n in f["notes"]]
print("files", len(files), "| notes on another member list", sum("this file lists" in n for n in notes),
      "| notes on groups kept nowhere", sum("kept nowhere" in n for n in notes))
con = duckdb.connect("all.duckdb", read_only=True)
print("datasets with other member lists", con.execute(
    "SELECT count(*) FROM datasets WHERE json_extract(metadata, '$.other_member_lists') IS NOT NULL").fetchall()[0][0])
PYEOF
fi
