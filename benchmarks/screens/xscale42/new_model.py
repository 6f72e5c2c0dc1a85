"""Write one new model's lm-eval logs for a make_store.py store, keeping only a reduction's sampled documents.

Usage: new_model.py OUT_DIR N_MODELS N_TASKS SAMPLES_JSON (a reduction's harness_ext_reduced_samples.json)
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench_reduce_items import write_runs  # noqa: E402

out, n, t, keep = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), json.loads(Path(sys.argv[4]).read_text())
folder = write_runs(out, 1, t, logs=True, seed=1, first=n, largest=1000)[0]
for f in folder.glob("samples_*.jsonl"):
    task = next(k for k in keep if f.name.startswith(f"samples_{k}_"))
    ids = set(keep[task])
    f.write_text("".join(line for line in f.read_text().splitlines(True) if json.loads(line)["doc_id"] in ids))
print(folder)
