"""predict matches results by benchmark and dataset name, never by file name (issue 15 item 9).

Real format: the OpenCompass category leaderboards of ../shared/data/benchbench (wide CSVs whose
benchmark is their file name). A new model's results come in a CSV named after the checkpoint.
"""

from __future__ import annotations

import csv

import pytest

from conftest import SHARED_DATA, require
from harness_ext.store.ingest import ingest_paths
from harness_ext.methods.reduction.manifest import build_manifest
from harness_ext.store.matrix import MatrixQuery, load_matrix
from harness_ext.methods.reduction.predict import match_datasets, predict_from_manifest
from harness_ext.store.db import Store

LEADERBOARDS = SHARED_DATA / "benchbench" / "leaderboards"
CATEGORIES = ("agent_240829_agent", "code_240829_code", "instruct_240829_instructionfollow",
              "knowledge_240829_knowledge", "language_240829_language", "math_240829_math",
              "reasoning_240829_reasoning")
HELD_OUT = "Mistral-Large-Instruct-2407"


@pytest.mark.slow
def test_a_new_models_csv_with_another_file_name_is_predicted(tmp_path):
    require(LEADERBOARDS)
    train, held = tmp_path / "train", {}
    train.mkdir()
    for cat in CATEGORIES:
        rows = list(csv.reader(open(LEADERBOARDS / f"opencompass_{cat}.csv")))
        keep = [r for r in rows[1:] if r[0] != HELD_OUT]
        held.update({rows[0][1]: r[1] for r in rows[1:] if r[0] == HELD_OUT})
        with open(train / f"opencompass_{cat}.csv", "w", newline="") as fh:
            csv.writer(fh).writerows([rows[0]] + keep)
    with Store.open(":memory:") as s:
        ingest_paths(s, [train], show_progress=False, group="opencompass")
        df = load_matrix(s, MatrixQuery(benchmarks=("opencompass",), dense="models"))
    assert df.shape[1] == 7 and HELD_OUT not in df.index
    manifest = build_manifest(df, budget="3", n_random=50)
    subset = [e["name"] for e in manifest["subset"]]
    new = tmp_path / "my-checkpoint-step-2000.csv"  # benchmark 'my_checkpoint_step_2000' to the CSV adapter
    new.write_text("model," + ",".join(subset) + "\n" + HELD_OUT + "," + ",".join(held[c] for c in subset) + "\n")
    pred = predict_from_manifest(manifest, [new])
    rows = pred.table[pred.table["model"] == HELD_OUT]
    assert rows["observed"].sum() == 3 and len(rows) == 7
    assert rows.loc[~rows["observed"], "score"].between(0, 1).all()


def test_match_datasets_uses_names_not_files():
    ds = [{"name": "OC_Code", "benchmark": "opencompass_code_240829_code", "metric": "score"},
          {"name": "HELM_AIRBENCH_Hate/Toxicity", "benchmark": "helm_airbench_240916_safety", "metric": "score"},
          {"name": "a/acc", "benchmark": "a", "metric": "acc"}, {"name": "b/acc", "benchmark": "b", "metric": "acc"}]
    got = match_datasets(ds, ["new_file", "other_file", "a", "new_file", "opencompass_code_240829_code"],
                         ["OC_Code", "HELM_AIRBENCH_Hate/Toxicity", "acc", "acc", "OC_Code"],
                         ["score", "score", "acc", "acc", "elo"])
    # by name from another file; a '/' in a dataset name is not a benchmark prefix; exact benchmark match;
    # ambiguous names (two benchmarks have 'acc') and another metric never match
    assert got == ["OC_Code", "HELM_AIRBENCH_Hate/Toxicity", "a/acc", None, None]
