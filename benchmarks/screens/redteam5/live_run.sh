#!/bin/bash
set -u
ver=$1; name=$2; folder=$3; tasks=$4; shift 4
PY=/work/venvs/lmeval-$ver/bin/python
HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false HARNESS_EXT_NO_PROGRESS=1 PYTHONPATH=/tmp/rt5/hx \
  nice -n 10 strace -f -qq -e trace=file,execve -o "$name.trace" $PY /work/wt-redteam5/tests/lm_eval_standin.py cli \
  --model standin --model_args pretrained=standin/m99,seed=99 --include_path "$folder" --tasks "$tasks" \
  --output_path "out_$name" "$@" > "$name.out" 2> "$name.err"
echo "$name rc=$?"
