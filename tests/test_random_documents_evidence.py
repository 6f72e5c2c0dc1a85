"""``reduce``'s line on what the subset's cost buys as random documents of every dataset (the design's figures).

The bundled Pythia 160M runs (lm-eval 0.3, 30 checkpoints x 57 MMLU subjects): the files give no n-samples, and MMLU's
subjects are sized by MMLU's test set; the design's expected figures at the subset's number of questions, drawn from
every subject, are what ``reduce --items-total N`` then reports for the same models.
"""

from __future__ import annotations

import pytest

from harness_ext.methods.reduction.item_design_cost import random_documents_line
from harness_ext.methods.reduction.manifest import build_manifest
from harness_ext.methods.reduction.reduce import ReduceResult
from harness_ext.store.db import Store
from harness_ext.store.ingest import bundled_data_path, ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix


@pytest.fixture(scope="module")
def pythia_160m():
    with Store.open(":memory:") as store:
        ingest_paths(store, sorted(bundled_data_path().glob("pythia-160m")), show_progress=False)
        return {b: load_matrix(store, MatrixQuery(benchmarks=(b,))) for b in ("mmlu", "lm_eval")}


def test_mmlu_subsets_say_what_random_questions_would_give(pythia_160m):
    from harness_ext.benchmarks import MMLU_TEST_SIZES

    df = pythia_160m["mmlu"]
    m = build_manifest(df, budget="4", n_random=20, n_random_subsets=10, random_state=0)
    ev = m["evidence"]["random_documents"]
    subset = [s["name"] for s in m["subset"]]
    assert ev["items_total"] == sum(MMLU_TEST_SIZES[s] for s in subset) and ev["items_full"] == 14042
    assert ev["sizes"] == "MMLU's test set" and ev["weighting"].startswith("subjects weighted")
    for split in ("interpolation", "extrapolation"):
        f = ev[split]
        assert 0 < f["mean_abs_error"] < f["mean_width"] < 0.1 and 0.85 <= f["coverage"] <= 0.97
    # The strongest 30% of the models with every subject.
    assert ev["extrapolation"]["n_models"] == round(0.3 * ev["interpolation"]["n_models"]) > 0
    text = ReduceResult(m).render()
    assert f"reduce --items-total {ev['items_total']}" in text and random_documents_line(ev) in text
    # The same inputs and seed: the same figures.
    again = build_manifest(df, budget="4", n_random=20, n_random_subsets=10, random_state=0)
    assert again["evidence"]["random_documents"] == ev


def test_no_line_where_documents_cannot_be_counted(pythia_160m):
    """lm-eval 0.3's other tasks have no recorded size: nothing is said."""
    m = build_manifest(pythia_160m["lm_eval"], budget="3", n_random=20, n_random_subsets=10, random_state=0)
    assert "random_documents" not in m["evidence"]
    assert "random documents instead" not in ReduceResult(m).render()
