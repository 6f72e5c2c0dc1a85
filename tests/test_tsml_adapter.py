"""tsml-eval resample tables (TSC bake-off 2023) -> ResultRecord."""

import math

import numpy as np
import pytest

from harness_ext.adapters import tsml
from harness_ext.errors import IngestError
from harness_ext.types import SourceFile

TSC = "tsml-eval-tsc-bakeoff/tsml_eval/publications/y2023/tsc_bakeoff/results"


def _write(path, text):
    path.write_text(text)
    return SourceFile(path)


def test_reads_mean_stderr_and_resample_count(tmp_path):
    src = _write(tmp_path / "HC2_accuracy.csv", "Resamples:,0,1,2,3\nACSF1,0.9,0.8,0.85,0.95\nAdiac,0.5,0.6,0.7,0.6\n\n")
    assert tsml.can_handle(src)
    recs = list(tsml.read(src))
    assert [r.dataset for r in recs] == ["ACSF1", "Adiac"]
    a = recs[0]
    assert (a.model, a.benchmark, a.metric) == ("HC2", "tsc_bakeoff", "accuracy")
    assert a.value == pytest.approx(0.875)
    assert a.stderr == pytest.approx(np.std([0.9, 0.8, 0.85, 0.95], ddof=1) / 2)
    assert a.n_samples == 4 and a.higher_is_better is True and a.primary is True
    assert recs[1].n_samples == 4 and recs[1].value == pytest.approx(0.6)  # incomplete rows: see test_file_completeness
    assert a.model_metadata == {"tsml_group": tmp_path.name}


@pytest.mark.parametrize(
    "name,metric,hib,primary,baseline",
    [
        ("MR-Hydra_logloss.csv", "logloss", False, False, None),
        ("MR-Hydra_auroc.csv", "auroc", True, False, 0.5),
        ("MR-Hydra_balacc.csv", "balacc", True, False, None),
        ("1NN-DTW_ACC.csv", "accuracy", True, True, None),
        ("1NN-DTW_NLL.csv", "logloss", False, False, None),
        ("1NN-DTW_BALACC.csv", "balacc", True, False, None),
        ("1NN-DTW_AUROC.csv", "auroc", True, False, 0.5),
    ],
)
def test_metric_spellings(tmp_path, name, metric, hib, primary, baseline):
    src = _write(tmp_path / name, "Resamples:,0,1\nBeef,0.4,0.6\n")
    assert tsml.can_handle(src)
    (rec,) = tsml.read(src)
    assert rec.model == name.rsplit("_", 1)[0]
    assert (rec.metric, rec.higher_is_better, rec.primary, rec.random_baseline) == (metric, hib, primary, baseline)
    assert (rec.max_score is None) == (metric == "logloss")


def test_can_handle_is_specific(tmp_path):
    # Right header, generic name: not ours.
    assert not tsml.can_handle(_write(tmp_path / "results.csv", "Resamples:,0,1\nBeef,0.4,0.6\n"))
    # Right name, generic CSV content: not ours.
    assert not tsml.can_handle(_write(tmp_path / "HC2_accuracy.csv", "model,dataset,score\nHC2,Beef,0.5\n"))
    # The summary table of the bake-off.
    assert not tsml.can_handle(_write(tmp_path / "table_c4.csv", "Estimators:,,MR-H,HC2\nBeef_eq,,0.9,0.8\n"))
    assert not tsml.can_handle(SourceFile(tmp_path))
    assert tsml.parse_filename("H-InceptionTime_accuracy.csv") == ("H-InceptionTime", "accuracy", True)
    assert tsml.parse_filename("HC2_accuracy.tsv") is None


def test_bad_values_raise_ingest_error(tmp_path):
    with pytest.raises(IngestError, match="not a number"):
        list(tsml.read(_write(tmp_path / "X_accuracy.csv", "Resamples:,0,1\nBeef,0.4,abc\n")))
    with pytest.raises(IngestError, match="2 resamples"):
        list(tsml.read(_write(tmp_path / "Y_accuracy.csv", "Resamples:,0,1\nBeef,0.4,0.5,0.6\n")))
    with pytest.raises(IngestError, match="Resamples"):
        list(tsml.read(_write(tmp_path / "Z_accuracy.csv", "Foo,0,1\nBeef,0.4,0.5\n")))


@pytest.mark.parametrize("name, row, match", [
    ("A_accuracy.csv", "Beef,0.4,1.5\n", r"accuracy 1.5 is outside \[0, 1\]"),
    ("A_auroc.csv", "Beef,-0.2,0.5\n", r"auroc -0.2 is outside \[0, 1\]"),
    ("A_logloss.csv", "Beef,0.3,-1\n", r"logloss -1 is outside \[0, inf\)"),
])
def test_a_resample_out_of_range_refuses_the_file(tmp_path, name, row, match):
    """One resample out of range moved the row's mean (stored as a plausible accuracy of 0.95)."""
    with pytest.raises(IngestError, match=match):
        list(tsml.read(_write(tmp_path / name, "Resamples:,0,1\n" + row)))
    # The published files' rounding above 1 is let through.
    (rec,) = tsml.read(_write(tmp_path / "B_auroc.csv", "Resamples:,0,1\nBeef,1.0000000000000002,1\n"))
    assert rec.value == pytest.approx(1.0)


def test_registered_and_claims_alone(tmp_path):
    from harness_ext.store.ingest import detect_adapter
    from harness_ext.plugin_manager import get_registration, get_registrations

    reg = get_registration("adapters", "tsml-bakeoff")
    assert reg.can_handle is tsml.can_handle and not reg.directory
    src = _write(tmp_path / "HC2_accuracy.csv", "Resamples:,0,1\nBeef,0.4,0.6\n")
    assert detect_adapter(src, get_registrations("adapters")).name == "tsml_bakeoff"


def test_real_files_through_the_store():
    from conftest import SHARED_DATA, require

    from harness_ext.store.ingest import ingest_paths
    from harness_ext.store.matrix import MatrixQuery, load_matrix
    from harness_ext.store.db import Store

    root = require(SHARED_DATA / TSC)
    files = [root / "hybrid" / "HC2_accuracy.csv", root / "hybrid" / "HC2_logloss.csv", root / "best" / "HC2_accuracy.csv",
             root / "distance" / "1NN-DTW_accuracy.csv", root / "table_c4.csv"]
    with Store.open(":memory:") as store:
        rep = ingest_paths(store, files, show_progress=False)
        assert [f.status for f in rep.files] == ["ingested", "ingested", "ingested", "ingested", "skipped"]
        assert not rep.conflicts  # best/ and hybrid/ agree for HC2
        raw = load_matrix(store, MatrixQuery(benchmarks=("tsc_bakeoff",), metric="accuracy", normalise="none"))
        assert raw.shape == (2, 142)  # best/ adds the 30 *_eq datasets for HC2 only
        dense = load_matrix(store, MatrixQuery(benchmarks=("tsc_bakeoff",), metric="accuracy", dense=True))
        assert dense.shape == (2, 112)
    rows = (root / "hybrid" / "HC2_accuracy.csv").read_text().splitlines()
    acsf = [float(v) for v in rows[1].split(",")[1:]]
    assert rows[1].startswith("ACSF1,") and len(acsf) == 30
    assert raw.loc["HC2", "ACSF1"] == pytest.approx(np.mean(acsf))
    assert math.isclose(raw.loc["HC2", "ACSF1"], sum(acsf) / 30)
