"""Local checkpoint folders named for a training step keep their run's folder in the model's name.

Hugging Face's Trainer saves ``<run>/checkpoint-<step>``; two fine-tuning runs evaluated at the same step with
``pretrained=/…/<run>/checkpoint-1000`` are two models, not one model with conflicting scores. The files are the
real lm-eval v0.4 run of Qwen3.5-9B in tests/fixtures/lm_eval_v04 with only ``model_args`` changed.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness_ext.adapters.lm_eval import model_name
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

REAL = Path(__file__).parent / "fixtures" / "lm_eval_v04" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-15-28.837033.json"


def test_step_folders_keep_their_run():
    names = [model_name({"model_args": f"pretrained={p}"}, "/out/results.json")[0] for p in
             ("/ckpt/run-a/checkpoint-1000", "/ckpt/run-b/checkpoint-1000/", "./run-c/final",
              "/ckpt/global_step500", "/weights/my-model", "EleutherAI/pythia-160m")]
    assert names == ["run-a/checkpoint-1000", "run-b/checkpoint-1000", "run-c/final", "ckpt/global_step500",
                     "my-model", "EleutherAI/pythia-160m"]
    # lm-eval's own output folder (the path sanitised) already tells runs apart and is kept as it is.
    assert model_name({"model_args": "pretrained=/ckpt/run-a/checkpoint-1000"},
                      "/out/__ckpt__run-a__checkpoint-1000/results.json")[0] == "__ckpt__run-a__checkpoint-1000"


def test_two_runs_at_one_step_are_two_models(tmp_path):
    doc = json.loads(REAL.read_text())
    for run in ("run-a", "run-b"):
        doc["config"]["model_args"] = f"pretrained=/ckpt/{run}/checkpoint-1000,dtype=bfloat16"
        out = tmp_path / run
        out.mkdir()
        (out / REAL.name).write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [tmp_path], show_progress=False)
        names = sorted(r[0] for r in s.con.execute("SELECT name FROM models").fetchall())
    assert names == ["run-a/checkpoint-1000", "run-b/checkpoint-1000"]
    assert not report.conflicts
