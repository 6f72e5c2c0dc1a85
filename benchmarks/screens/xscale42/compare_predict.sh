#!/bin/bash
# predict one new model's logs with two manifests; compare the printed tables and the written prediction JSON.
# (the JSON without its manifest path line; G=GROUPED_FROM sets run_with.py's switch, default 16;
# GA, GB set it for A and B alone: the same manifest twice compares the two logit paths)
# Usage: compare_predict.sh NEW_MODEL_FOLDER MANIFEST_A MANIFEST_B [PYTHON]   (prints SAME or the diff)
N=${1:?}; A=${2:?}; B=${3:?}; PY=${4:-python}; HERE=$(dirname "$0"); T=$(mktemp -d)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 HARNESS_EXT_NO_PROGRESS=1
for x in A B; do M=${!x}
  nice -n 10 $PY $HERE/run_with.py $(eval echo \${G$x:-${G:-16}}) predict --manifest $M $N 2>&1 | grep -v "^wrote" > $T/$x.txt
  grep -v "\"manifest\": " $N/harness_ext_prediction_*.json > $T/$x.json; done
cmp $T/A.txt $T/B.txt && cmp $T/A.json $T/B.json && echo SAME || diff $T/A.txt $T/B.txt | head
