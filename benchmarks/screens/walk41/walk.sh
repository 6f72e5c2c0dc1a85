#!/usr/bin/env bash
# The new-user walk of `reduce --items` on other users' lm-eval results files (HISTORY: forty-first session, fix-walk41).
# Usage: HE=path/to/harness-ext bash walk.sh OUTDIR   (the shared lm-eval 0.4 results for the GLUE line)
# rebuild_leaderboard_runs.py writes two Open LLM Leaderboard v2 runs of January 2025 (lm-eval 0.4.7 layout) from the
# numbers of csabakecskemeti/lm_eval_results @ 3a119928 (no licence: rebuilt from their values, not copied; configs
# trimmed to the fields harness-ext reads).
set -u
HE=${HE:-harness-ext}; OUT=${1:?OUTDIR}; mkdir -p "$OUT"; HERE=$(cd "$(dirname "$0")" && pwd); cd "$OUT"
export HARNESS_EXT_NO_PROGRESS=1
PY=$(dirname "$(command -v "$HE")")/python
rm -rf data s1.duckdb; "$PY" "$HERE/rebuild_leaderboard_runs.py" data
$HE ingest --db s1.duckdb data -q
$HE reduce --db s1.duckdb --benchmark lm_eval --items 20 --out all --no-plot 2>&1 | grep "items (\|^benchmark\|^hellaswag"
for g in 'leaderboard_bbh*' 'leaderboard_math*' 'leaderboard_gpqa*' 'leaderboard_musr*'; do
  $HE reduce --db s1.duckdb --datasets "$g" --items 20 --out "r_${g%\*}" --no-plot 2>&1 | grep "items (\|^benchmark"
done
$HE reduce --db s1.duckdb --datasets 'leaderboard_math*' --items-total 300 --out t300 --no-plot 2>&1 | grep "^benchmark"
$HE reduce --db s1.duckdb --metric acc_norm --items 20 --out an --no-plot 2>&1 | grep "without acc_norm"
$HE reduce --db s1.duckdb --datasets leaderboard_bbh --items 20 --out x --no-plot 2>&1 | tail -1
$HE predict -m r_leaderboard_math data/meta-llama__Llama-3.1-8B-Instruct 2>&1 | tail -1
V04=${HARNESS_EXT_SHARED_DATA:-../shared/data}/lm-eval-harness/v04_results_from_pull_refs/results
if [ -d "$V04" ]; then
  $HE ingest --db v4.duckdb "$V04" -q
  D=""; for t in mnli mnli_mismatch mrpc qnli qqp rte sst2 wnli; do D="$D --datasets $t"; done
  $HE reduce --db v4.duckdb --benchmark lm_eval $D --items 20 --out glue --no-plot 2>&1 | grep "items (\|^benchmark"
  $HE reduce --db v4.duckdb --benchmark mmlu --items 20 --out mmlu --no-plot 2>&1 | grep "^benchmark"
fi
