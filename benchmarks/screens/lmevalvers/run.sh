#!/bin/bash
# run.sh VER NAME FOLDER TASKS [extra lm_eval args]: lm-eval VER's own CLI (tests/lm_eval_standin.py registers a
# stand-in model; no torch weights, no network) on a reduced folder, from /work/venvs/lmeval-VER (0.4.13: walk33).
# Output in out/VER/NAME, logs in logs/VER/NAME.{out,err}. lm-eval 0.4.2 needs ./exact_match/exact_match.py (a copy of
# Hugging Face evaluate's metrics/exact_match) in the folder it runs in, as it loads that metric when imported.
set -u
ver=$1; name=$2; folder=$3; tasks=$4; shift 4
if [ "$ver" = 0.4.13 ]; then PY=/work/venvs/walk33/bin/python; else PY=/work/venvs/lmeval-$ver/bin/python; fi
STANDIN=$(cd "$(dirname "$0")/../../.." && pwd)/tests/lm_eval_standin.py
mkdir -p logs/$ver
HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false HARNESS_EXT_NO_PROGRESS=1 \
  nice -n 10 $PY "$STANDIN" cli \
  --model standin --model_args pretrained=standin/m99,seed=99 --include_path "$folder" --tasks "$tasks" \
  --output_path "out/$ver/$name" "$@" > "logs/$ver/$name.out" 2> "logs/$ver/$name.err"
echo "$ver $name rc=$?"
