cd /work/wt-overcov
export HARNESS_EXT_SHARED_DATA=/work/shared/data HARNESS_EXT_NO_PROGRESS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
for t in helm_lite/commonsense helm_lite/gsm helm_lite/med_qa helm_lite/mmlu helm_lite/math open_llm_v2/ifeval open_llm_v2/musr open_llm_v2/openllm_math; do
 for p in interpolation extrapolation; do
  for s in 260 0; do
   nice -n 10 /work/venvs/polish/bin/python benchmarks/screens/overcov/dump.py --table $t --seeds $s $((s+20)) --protocol $p --save /tmp/overcov/$(basename $t)_${p:0:5}_$s.pkl
  done
 done
done
