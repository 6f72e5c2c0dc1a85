"""How much of the training models' spread the subset predicts, said where it is low.

Real data: the bundled Pythia runs (lm-eval v0.3 MMLU results, Apache-2.0). Their weakest half (by the normalised
full MMLU score, as ``benchmarks/quality_round_trip.py --scheme frontier`` splits them) sits at chance: 96% of their
spread on a chosen subset is binomial sampling noise (``benchmarks/screens/noise/noise_share.py``), so a reduction
fitted on them predicts every stronger checkpoint near their mean. ``reduce`` and ``predict`` say so; a reduction
of all the runs, whose spread the subset predicts, says nothing of it.
"""

from __future__ import annotations

import numpy as np
import pytest

import harness_ext as hx
from harness_ext.methods.reduction.explained import LOW_SHARE, explained_share, low_share_text
from harness_ext.store.ingest import bundled_data_path

FAST = {"budget": 8, "seed": 0, "n_random_subsets": 20, "n_random": 20}


@pytest.fixture(scope="module")
def pythia(tmp_path_factory):
    """The bundled runs' MMLU matrix, normalised and raw, the order of their full scores, and the store's path."""
    db = tmp_path_factory.mktemp("pythia") / "s.duckdb"
    hx.ingest(bundled_data_path(), db)
    df = hx.load_matrix(db, "mmlu")
    raw = hx.load_matrix(db, "mmlu", normalise="none")
    return df, raw, np.argsort(df.mean(axis=1).to_numpy(), kind="stable")


def test_the_weakest_half_is_said_to_predict_a_stronger_model_near_its_mean(pythia):
    df, raw, order = pythia
    weak, strong = df.index[order[: len(order) // 2]], df.index[order[-20:]]
    res = hx.reduce(df.loc[weak], **FAST)
    share = explained_share(res.manifest)
    assert share is not None and share < LOW_SHARE
    assert res.summary()["explained_share"] == pytest.approx(share)
    text = res.render()
    assert f"the subset predicts {share:.0%} of these models' spread" in text
    assert low_share_text(share) in text.splitlines()
    pred = hx.predict(res.manifest, raw.loc[strong].reindex(columns=[d["name"] for d in res.manifest["datasets"]]))
    above = [w for w in pred.warnings if "outside the manifest's models' range" in w]
    assert above and all(low_share_text(share) in w for w in above if "predicts only" in w)
    assert any("predicts only" in w for w in above)


def test_a_population_whose_spread_the_subset_predicts_says_nothing_of_it(pythia):
    df, _, _ = pythia
    res = hx.reduce(df, **FAST)
    share = explained_share(res.manifest)
    assert share is not None and share >= LOW_SHARE
    assert low_share_text(share) == ""
    assert "predicts only" not in res.render()


def test_no_share_without_enough_complete_models():
    manifest = {"training_matrix": {"values": [[0.1, None], [0.2, 0.3]] * 3}, "datasets": [{"weight": 0.5}] * 2,
                "prediction": {"expected_error": {"aggregate_rmse": 0.1}}}
    assert explained_share(manifest) is None
    assert explained_share({"datasets": []}) is None
