#!/bin/bash
# mkvenv.sh VER: /work/venvs/lmeval-VER as the thirty-eighth session's recipe
set -eu
V=$1; D=/work/venvs/lmeval-$V
python3.11 -m venv $D
$D/bin/pip install -q torch==2.13.0
$D/bin/pip install -q "lm_eval==$V" 'transformers<5' 'datasets<4'
$D/bin/pip install -q -e /work/wt-lm049
$D/bin/python -c "import lm_eval, importlib.metadata as m; print(m.version('lm_eval'), m.version('torch'), m.version('transformers'), m.version('datasets'))"
