#!/bin/bash
# live_run.sh NAME FOLDER TASKS [extra lm_eval args]: lm_eval's own CLI (tests/lm_eval_standin.py registers a stand-in
# model; no torch) on a reduced folder under strace; NAME.trace holds every file call, NAME.out/.err the run's output.
set -u
name=$1; folder=$2; tasks=$3; shift 3
STANDIN=/work/wt-redteam4/tests/lm_eval_standin.py
HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false HARNESS_EXT_NO_PROGRESS=1 \
  nice -n 10 strace -f -qq -e trace=file,execve -o "$name.trace" /work/venvs/polish2/bin/python "$STANDIN" cli \
  --model standin --model_args pretrained=standin/m99,seed=99 --include_path "$folder" --tasks "$tasks" \
  --output_path "out_$name" "$@" > "$name.out" 2> "$name.err"
echo "$name rc=$?"
