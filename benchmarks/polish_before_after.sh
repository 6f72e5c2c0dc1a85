#!/bin/bash
# Before/after of the fix-polish defects (benchmarks/HISTORY.md). usage: polish_before_after.sh VENV (a venv with harness-ext installed: main's, then the branch's)
PY=/work/venvs/$1/bin/python; F=$(cd "$(dirname "$0")/../tests/fixtures" && pwd); export HARNESS_EXT_NO_PROGRESS=1
d=$(mktemp -d)
echo "## TSB-AD"; $PY -m harness_ext ingest --db $d/a.duckdb $F/csv_wild4/tsbad_uni_vuspr_slice.csv 2>&1 | tail -2
$PY -m harness_ext ingest --db $d/a2.duckdb --models-as-columns $F/csv_wild4/tsbad_uni_vuspr_slice.csv 2>&1 | tail -3
echo "## LAVIS models"; $PY -m harness_ext ingest -q --db $d/b.duckdb $F/html/lavis_img2llm_vqa_readme.md >/dev/null 2>&1; $PY -m harness_ext models --db $d/b.duckdb 2>&1 | grep -i "opt\|base" | head -3
echo "## MathVista keep refs"; $PY -m harness_ext ingest -q --keep-reference-rows --db $d/c.duckdb $F/csv_wild4/mathvista_testmini_slice.md >/dev/null 2>&1; $PY -m harness_ext models --db $d/c.duckdb 2>&1 | grep -i "human"
echo "## OmniGenBench md"; $PY -m harness_ext ingest --db $d/e.duckdb $F/csv_wild5/omnigenbench_supported_models.md 2>&1 | head -1 | cut -c1-400
echo "## OmniGenBench md + MathVista"; cat $F/csv_wild4/mathvista_testmini_slice.md $F/csv_wild5/omnigenbench_supported_models.md > $d/mixed.md; $PY -m harness_ext ingest --db $d/f.duckdb $d/mixed.md 2>&1 | tail -1
echo "## OmniGenBench csv"; $PY -m harness_ext ingest --db $d/g.duckdb $F/csv_wild5/omnigenbench_rna_models.csv 2>&1 | head -1
echo "## weights chinese"; $PY -m harness_ext ingest -q --db $d/h.duckdb $F/csv_wild/chinese_llm_benchmark_alldata_slice.csv >/dev/null 2>&1; $PY -m harness_ext weights --db $d/h.duckdb --out $d/wh 2>&1 >/dev/null | grep -c "no installed font has"
echo "## weights metabench"; $PY -m harness_ext ingest -q --db $d/i.duckdb $F/csv_wild/metabench_open_llm_leaderboard_slice.csv >/dev/null 2>&1; $PY -m harness_ext weights --db $d/i.duckdb --out $d/wi --analyses random 2>&1 | grep -i "tied\|Matter-0.1-Slim-7B " | head -3
rm -rf $d
