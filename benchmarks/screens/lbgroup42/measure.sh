#!/usr/bin/env bash
# The Open LLM Leaderboard's `leaderboard` group (no score, no metric in common) in `reduce --items`
# (HISTORY: forty-second session, fix-lbgroup42).
# Usage: HE=path/to/harness-ext bash measure.sh OUTDIR
# walk41's two rebuilt lm-eval 0.4.7 runs (numbers of csabakecskemeti/lm_eval_results @ 3a119928, no licence: not
# copied), with the top group `leaderboard` added as lm-eval 0.4.7 writes it for `--tasks leaderboard` (`{" ": " "}`,
# group_subtasks: its YAML's six members; the rebuild left it out). Then: ingest twice (idempotent), reduce by the
# group's name, the store as reader 6 left it (the hint), `ingest --reread`, the same reduction again.
set -u
HE=${HE:-harness-ext}; OUT=${1:?OUTDIR}; mkdir -p "$OUT"; HERE=$(cd "$(dirname "$0")" && pwd); cd "$OUT"
export HARNESS_EXT_NO_PROGRESS=1
PY=$(dirname "$(command -v "$HE")")/python
rm -rf data s.duckdb r_* o_*; "$PY" "$HERE/../walk41/rebuild_leaderboard_runs.py" data
"$PY" - data <<'PYEOF'
import json, pathlib, sys
for p in pathlib.Path(sys.argv[1]).rglob("results_*.json"):
    d = json.loads(p.read_text())
    d["results"]["leaderboard"] = {" ": " ", "alias": "leaderboard"}
    d["group_subtasks"]["leaderboard"] = ["leaderboard_mmlu_pro", "leaderboard_bbh", "leaderboard_gpqa",
                                          "leaderboard_math_hard", "leaderboard_ifeval", "leaderboard_musr"]
    p.write_text(json.dumps(d, indent=2))
PYEOF
/usr/bin/time -f "ingest %e s" $HE ingest --db s.duckdb data 2>&1 | grep -i "leaderboard (no row\|files ingested\|ingest "
$HE ingest --db s.duckdb data 2>&1 | tail -1
"$PY" - s.duckdb <<'PYEOF'
import sys, duckdb
with duckdb.connect(sys.argv[1], read_only=True) as con:
    print(con.execute("SELECT count(DISTINCT name), count(*) FROM datasets WHERE json_extract(metadata, '$.in_groups') IS NOT NULL").fetchone(),
          "(dataset names, rows) carrying in_groups")
PYEOF
for flag in --benchmark --datasets; do
  echo "== $flag leaderboard"
  $HE reduce --db s.duckdb $flag leaderboard --items 20 --out "r_${flag#--}" --no-plot 2>&1 | grep -o "^.* items (.*\|^benchmark.*" | cut -c1-900
  grep -h group_alias "r_${flag#--}/harness_ext_reduced.yaml"
done
echo "== --benchmark leaderboard --datasets 'leaderboard_[gm][pm]*' (GPQA and MMLU-Pro)"
$HE reduce --db s.duckdb --benchmark leaderboard --datasets 'leaderboard_[gm][pm]*' --items 20 --out r_gm --no-plot 2>&1 | grep -o "^.* items (.*\|^benchmark.*" | cut -c1-600
echo "== the store as the reader before revision 7 left it"
cp s.duckdb o.duckdb
"$PY" - o.duckdb <<'PYEOF'
import json, sys, duckdb
with duckdb.connect(sys.argv[1]) as con:
    for did, md in con.execute("SELECT dataset_id, metadata FROM datasets").fetchall():
        md = json.loads(md)
        if md.pop("in_groups", None) is not None:
            con.execute("UPDATE datasets SET metadata = ? WHERE dataset_id = ?", [json.dumps(md), did])
    con.execute("UPDATE sources SET reader = '6' WHERE adapter = 'lm_eval_v04'")
PYEOF
$HE reduce --db o.duckdb --benchmark leaderboard --items 20 --out o_lb --no-plot 2>&1 | tail -1 | cut -c1-900
$HE ingest --db o.duckdb --reread data -q 2>&1 | tail -1
$HE reduce --db o.duckdb --benchmark leaderboard --items 20 --out o_lb --no-plot 2>&1 | grep "^benchmark"
