#!/bin/bash
# live_run.sh VER NAME FOLDER TASKS [extra lm_eval args]: lm-eval VER's own CLI (/work/venvs/lmeval-VER; the stand-in
# model of tests/lm_eval_standin.py, no torch weights, no network) on a reduced folder under strace (NAME.trace, for
# ../redteam4/trace_files.py), output in out_NAME. The lmeval-VER venvs' editable harness-ext pointed at a removed
# worktree, so PYTHONPATH names a folder whose sitecustomize.py installs this checkout's editable finder (a copy of
# the __editable___harness_ext_0_1_0_finder.py of a venv installed from this checkout).
set -u
ver=$1; name=$2; folder=$3; tasks=$4; shift 4
PY=/work/venvs/lmeval-$ver/bin/python
HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false HARNESS_EXT_NO_PROGRESS=1 PYTHONPATH=${HX_FINDER_DIR:-/tmp/rt5/hx} \
  nice -n 10 strace -f -qq -e trace=file,execve -o "$name.trace" $PY $(cd "$(dirname "$0")/../../.." && pwd)/tests/lm_eval_standin.py cli \
  --model standin --model_args pretrained=standin/m99,seed=99 --include_path "$folder" --tasks "$tasks" \
  --output_path "out_$name" "$@" > "$name.out" 2> "$name.err"
echo "$name rc=$?"
