#!/bin/bash
# run.sh VER OUT [extra lm_eval args]: lm-eval VER's own CLI with the stand-in model (tests/lm_eval_standin.py) on the
# two tasks of make_tasks.py (in ./tasks), offline, from /work/venvs/lmeval-VER. Run in a folder holding
# ./exact_match/exact_match.py (a copy of Hugging Face evaluate's metrics/exact_match), which 0.4.0-0.4.2 load.
set -u
ver=$1; out=$2; shift 2
STANDIN=$(cd "$(dirname "$0")/../../.." && pwd)/tests/lm_eval_standin.py
mkdir -p logs
HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false \
  nice -n 10 /work/venvs/lmeval-$ver/bin/python "$STANDIN" cli --model standin \
  --model_args pretrained=standin/m99,seed=99 --include_path tasks --tasks t_mc,t_gen \
  --output_path "$out" --log_samples "$@" > "logs/$ver.out" 2> "logs/$ver.err"
echo "$ver rc=$?"
