"""CrossPred adapter (adapters/crosspred.py): sniffing, reading, profiles, and BPMF on the real matrix."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness_ext.adapters.crosspred import can_handle, load_profiles, read
from harness_ext.errors import IngestError
from harness_ext.types import SourceFile

from conftest import SHARED_DATA, require

CROSSPRED = SHARED_DATA / "crosspred-lvlm" / "data"

FLAT = {
    "m1": {"Chart (SEED_2)": 0.5, "Whole dataset (GQA)": -5.2},
    "m2": {"Chart (SEED_2)": 0.7, "Whole dataset (GQA)": -4.1},
}
NESTED = {
    "m1": {"Chart (SEED_2)": {"acc": 0.5, "f1": 0.4, "prec": 0.3, "rec": 0.6},
           "Whole dataset (GQA)": {"bart": -5.2, "bert": 0.1}},
    "m2": {"Chart (SEED_2)": {"acc": 0.7}, "Whole dataset (GQA)": {"bart": -4.1, "bert": 0.2}},
}
MODEL_PROFILES = {
    "m1": {"num_params_llm": 7, "vision_encoder": ["CLIP", "DINOv2"], "model_family": "prism"},
    "m2": {"num_params_llm": 13, "vision_encoder": ["CLIP"], "model_family": "LLaVA"},
    "m3": {"num_params_llm": None, "vision_encoder": None, "model_family": "GPT4"},
}
DATASET_PROFILES = {"Chart (SEED_2)": {"des_cluster": [1.0, 0.0], "gt_cluster": [0.0, 1.0, 0.0]},
                    "Whole dataset (GQA)": {"des_cluster": [0.0, 1.0], "gt_cluster": [1.0, 0.0, 0.0]}}


def write(path: Path, doc) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture
def crosspred_dir(tmp_path):
    d = tmp_path / "data"
    write(d / "result_summary.json", FLAT)
    write(d / "all_result_summary.json", NESTED)
    write(d / "model_profiles.json", MODEL_PROFILES)
    write(d / "dataset_profiles.json", DATASET_PROFILES)
    return d


def test_can_handle_by_name_and_structure(crosspred_dir, tmp_path):
    assert can_handle(SourceFile(crosspred_dir / "result_summary.json"))
    assert can_handle(SourceFile(crosspred_dir / "all_result_summary.json"))
    assert not can_handle(SourceFile(crosspred_dir / "model_profiles.json"))
    assert not can_handle(SourceFile(crosspred_dir))
    # right structure, wrong name; right name, wrong structure; swapped structures
    assert not can_handle(SourceFile(write(tmp_path / "x" / "scores.json", FLAT)))
    assert not can_handle(SourceFile(write(tmp_path / "y" / "result_summary.json", {"results": {"a": {"acc": 0.5}}})))
    assert not can_handle(SourceFile(write(tmp_path / "z" / "result_summary.json", NESTED)))
    assert not can_handle(SourceFile(write(tmp_path / "w" / "all_result_summary.json", FLAT)))
    assert not can_handle(SourceFile(write(tmp_path / "v" / "all_result_summary.json", {"m": {"d": {"loss": 1.0}}})))
    bad = tmp_path / "u" / "result_summary.json"
    bad.parent.mkdir()
    bad.write_bytes(b"{not json")
    assert not can_handle(SourceFile(bad))


def test_read_flat_records(crosspred_dir):
    recs = list(read(SourceFile(crosspred_dir / "result_summary.json")))
    assert len(recs) == 4
    by = {(r.model, r.dataset): r for r in recs}
    r = by[("m1", "Chart (SEED_2)")]
    assert (r.benchmark, r.metric, r.value, r.primary, r.task) == ("crosspred", "acc", 0.5, True, "SEED_2")
    assert (r.min_score, r.max_score, r.higher_is_better) == (0.0, 1.0, True)
    assert r.model_metadata["model_family"] == "prism"
    assert r.dataset_metadata["des_cluster"] == [1.0, 0.0]
    b = by[("m2", "Whole dataset (GQA)")]
    assert (b.metric, b.value, b.min_score, b.task) == ("bart", -4.1, None, "GQA")
    for rec in recs:
        rec.validate("x")


def test_read_nested_records_mark_main_metric_primary(crosspred_dir):
    recs = list(read(SourceFile(crosspred_dir / "all_result_summary.json")))
    assert len(recs) == 4 + 2 + 1 + 2
    primary = {(r.model, r.dataset, r.metric) for r in recs if r.primary}
    assert primary == {("m1", "Chart (SEED_2)", "acc"), ("m1", "Whole dataset (GQA)", "bart"),
                       ("m2", "Chart (SEED_2)", "acc"), ("m2", "Whole dataset (GQA)", "bart")}
    bert = [r for r in recs if r.metric == "bert"]
    assert all(r.min_score is None and not r.primary for r in bert)


def test_read_rejects_wrong_structure(tmp_path):
    p = write(tmp_path / "result_summary.json", [1, 2, 3])
    with pytest.raises(IngestError):
        list(read(SourceFile(p)))


@pytest.mark.parametrize("cell, match", [
    ("0.5", "'0.5' is not a number"), (True, "True is not a number"),
    (50.0, r"acc = 50.0 is outside \[0, 1\]"), ([0.5], r"\[0.5\] is not a number"),
])
def test_a_broken_cell_refuses_the_file_naming_it(tmp_path, cell, match):
    """A bool was stored as 1.0 and a percentage as 50; a bad first cell read as 'no adapter claims it'."""
    doc = {"m1": {"Chart (SEED_2)": cell, "Whole dataset (GQA)": -5.2}, "m2": FLAT["m2"]}
    src = SourceFile(write(tmp_path / "result_summary.json", doc))
    assert can_handle(src)
    with pytest.raises(IngestError, match=match) as exc:
        list(read(src))
    assert "'m1' on 'Chart (SEED_2)'" in str(exc.value)


def test_null_cells_are_counted_in_a_note(tmp_path):
    """A null or NaN cell is a missing score: left out, and said so (it was dropped without a word)."""
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths

    flat = write(tmp_path / "a" / "result_summary.json", {"m0": {"Chart (SEED_2)": None, "D (X)": 0.4}, **FLAT})
    nested = write(tmp_path / "b" / "all_result_summary.json",
                   {"m1": {"Chart (SEED_2)": {"acc": 0.5, "f1": float("nan")}}, "m2": NESTED["m2"]})
    with Store.open(":memory:") as store:
        rep = ingest_paths(store, [flat, nested], show_progress=False)
    by = {Path(f.path).parent.name: f for f in rep.files}
    assert by["a"].status == "ingested" and by["a"].n_results == 4 + 1
    assert by["a"].notes == ["1 score written as null or NaN left out: m0 on Chart (SEED_2)"]
    assert by["b"].notes == ["1 score written as null or NaN left out: m1 on Chart (SEED_2) (f1)"]


def test_ingest_both_files_gives_one_primary_matrix(crosspred_dir):
    from harness_ext.store.ingest import ingest_paths
    from harness_ext.store.matrix import MatrixQuery, load_matrix
    from harness_ext.store.db import Store

    with Store.open(":memory:") as store:
        report = ingest_paths(store, [crosspred_dir], show_progress=False)
        assert {f.adapter for f in report.by_status("ingested")} == {"crosspred"}
        assert not report.conflicts
        df = load_matrix(store, MatrixQuery(benchmarks=("crosspred",), normalise="none"))
        assert df.shape == (2, 2)
        assert df.loc["m2", "Whole dataset (GQA)"] == -4.1
        f1 = load_matrix(store, MatrixQuery(benchmarks=("crosspred",), metric="f1", normalise="none"))
        assert f1.shape == (1, 1)


def test_load_profiles(crosspred_dir):
    H, G = load_profiles(crosspred_dir, ["m1", "m2", "m3", "unknown"], ["Whole dataset (GQA)", "Chart (SEED_2)", "new"])
    # columns: log params, encoders CLIP/DINOv2, families GPT4/LLaVA/prism
    assert H.shape == (4, 1 + 2 + 3)
    assert np.allclose(H[:2, 0], [-1, 1]) and H[2, 0] == 0
    assert H[0, 1:3].tolist() == [1, 1] and H[1, 1:3].tolist() == [1, 0]
    assert H[2, 3] == 1 and not H[3].any()
    assert G.tolist() == [[0, 1], [1, 0], [0, 0]]
    _, Go = load_profiles(crosspred_dir / "result_summary.json", ["m1"], ["Chart (SEED_2)"], dataset_profile="gt_cluster")
    assert Go.tolist() == [[0, 1, 0]]
    with pytest.raises(IngestError):
        load_profiles(crosspred_dir, ["m1"], ["Chart (SEED_2)"], dataset_profile="nope")


# -- real data ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_matrix():
    path = require(CROSSPRED / "result_summary.json")
    recs = list(read(SourceFile(path)))
    long = pd.DataFrame([(r.model, r.dataset, r.metric, r.value) for r in recs],
                        columns=["model", "dataset", "metric", "value"])
    return long


def test_real_result_summary(real_matrix):
    assert len(real_matrix) == 108 * 176
    assert real_matrix["model"].nunique() == 108 and real_matrix["dataset"].nunique() == 176
    bart = real_matrix[real_matrix["metric"] == "bart"]
    assert bart["dataset"].nunique() == 27 and (bart["value"] < 0).all()
    assert can_handle(SourceFile(CROSSPRED / "all_result_summary.json"))
    assert not can_handle(SourceFile(CROSSPRED / "dataset_profiles.json"))


def test_real_bpmf_beats_baselines_and_is_calibrated(real_matrix):
    """004 Fig. 3 at 20% hidden: BPMF well below both baselines; 90% intervals cover 85-95%."""
    from harness_ext.plugins.predictors import BayesianPMF, GlobalMean, MeanOfMeans
    from harness_ext.methods.pounce import masked_rmse

    wide = real_matrix.pivot(index="model", columns="dataset", values="value")
    groups = real_matrix.drop_duplicates("dataset").set_index("dataset").loc[wide.columns, "metric"].to_numpy()
    preds = {"global_mean": GlobalMean(column_groups=groups), "mean_of_means": MeanOfMeans(column_groups=groups),
             "bpmf": BayesianPMF(column_groups=groups, n_burnin=150, n_samples=150)}
    long = masked_rmse(wide.to_numpy(), preds, hidden_ratios=(0.2,), random_state=0).set_index("predictor")
    assert long.loc["bpmf", "rmse"] < 0.75 * long.loc["mean_of_means", "rmse"] < long.loc["global_mean", "rmse"]
    assert 0.85 <= long.loc["bpmf", "coverage"] <= 0.95
    assert 0.3 < long.loc["global_mean", "rmse"] < 0.45  # 004 Table 11: 0.367


def test_real_profiles_align(real_matrix):
    models = sorted(real_matrix["model"].unique())
    datasets = sorted(real_matrix["dataset"].unique())
    H, G = load_profiles(CROSSPRED, models, datasets)
    assert H.shape[0] == 108 and G.shape == (176, 5)
    assert (G.sum(axis=1) == 1).all() and (H[:, 1:].sum(axis=1) >= 1).mean() > 0.9
