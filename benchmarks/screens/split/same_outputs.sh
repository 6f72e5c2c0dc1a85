#!/bin/bash
# Ingest four sources into fresh stores and keep what a user sees of them, to cmp across two checkouts.
# usage (from the repository root, with the checkout to measure installed): same_outputs.sh OUTDIR
# Every store is made at the same path (/tmp/same_outputs_work), so the outputs that name it agree too.
set -u
FINAL=$1; OUT=/tmp/same_outputs_work; rm -rf "$OUT" "$FINAL"; mkdir -p "$OUT"
PY=${PY:-python}; HX=${HX:-harness-ext}
export HARNESS_EXT_NO_PROGRESS=1 HARNESS_EXT_SHARED_DATA=${HARNESS_EXT_SHARED_DATA:-/work/shared/data}
for name in helm items helm_lite fixtures; do
  case $name in
    helm) src=tests/fixtures/helm;; items) src=tests/fixtures/items;;
    helm_lite) src=$HARNESS_EXT_SHARED_DATA/items/helm_lite;; fixtures) src=tests/fixtures;;
  esac
  db=$OUT/$name.duckdb
  nice -n 10 $HX ingest --db "$db" "$src" > "$OUT/$name.ingest.txt" 2>&1; echo "rc=$?" >> "$OUT/$name.ingest.txt"
  nice -n 10 $HX info --db "$db" --json > "$OUT/$name.info.json" 2>&1
  nice -n 10 $HX matrix --db "$db" --out "$OUT/$name.matrix.csv" > "$OUT/$name.matrix.txt" 2>&1
  nice -n 10 $PY -c "
import sys
from harness_ext.store.db import Store
from harness_ext.store.item_tables import item_rows
with Store.open(sys.argv[1]) as s:
    item_rows(s).to_csv(sys.argv[2], index=False)
" "$db" "$OUT/$name.items.csv" > "$OUT/$name.items.txt" 2>&1
  rm -f "$db" "$db.wal"
done
mv "$OUT" "$FINAL"
