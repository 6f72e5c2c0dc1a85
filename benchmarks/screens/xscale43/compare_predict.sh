#!/bin/bash
# predict one new model's logs with one manifest by two checkouts; compare the printed table and the prediction JSON
# (without its manifest-path line). Usage: compare_predict.sh NEW_MODEL_FOLDER MANIFEST SRC_A SRC_B [PYTHON]
# (SRC_*: a checkout's root, put first on PYTHONPATH). Prints SAME or the difference.
N=${1:?}; M=${2:?}; A=${3:?}; B=${4:?}; PY=${5:-python}; T=$(mktemp -d)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 HARNESS_EXT_NO_PROGRESS=1
for x in A B; do
  PYTHONPATH=${!x} nice -n 10 $PY -m harness_ext predict --manifest $M $N 2>&1 | grep -v "^wrote" > $T/$x.txt
  grep -v "\"manifest\": " $N/harness_ext_prediction_*.json > $T/$x.json; done
cmp $T/A.txt $T/B.txt && cmp $T/A.json $T/B.json && echo SAME || diff $T/A.txt $T/B.txt | head
