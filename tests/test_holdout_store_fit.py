"""``benchmarks/quality_holdout.py --fit store``: the predictor fitted on the scores ``reduce`` fits it on.

Real data: ScandEval's Icelandic NLG board (``tests/fixtures/csv_wild4/scandeval_icelandic_nlg.csv``, MIT), three of
whose six columns have no known scale (min-max over the training models, not clipped), and the LiveBench slice of
``test_quality_holdout_user.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import import_benchmark

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ICELANDIC = FIXTURES / "csv_wild4" / "scandeval_icelandic_nlg.csv"
LIVEBENCH = FIXTURES / "holdout_csv" / "livebench_240829_slice.csv"


def _board(path):
    import_benchmark("quality_holdout")  # puts benchmarks/ on the path
    from _holdout_matrices import load_user_matrices

    [(raw, meta)] = load_user_matrices(csv=[str(path)], verbose=False).values()
    return raw, meta


def test_the_store_fit_normalises_as_reduces_manifest_records(tmp_path):
    """The split's normalisation (training models only) is the one ``reduce`` writes in its manifest for them."""
    from harness_ext.cli import main

    raw, meta = _board(ICELANDIC)
    from _holdout_store import StoreFit, store_records

    held = list(raw.index[:5])
    train = raw.drop(index=held)
    sf = StoreFit(train.to_numpy(float), store_records(meta))
    db, out = tmp_path / "s.duckdb", tmp_path / "red"
    assert main(["ingest", "-q", "--db", str(db), str(ICELANDIC)]) == 0
    assert main(["reduce", "-q", "--db", str(db), "--exclude-models", *held, "--out", str(out), "--no-plot"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    norm = {d["name"]: d["normalisation"] for d in manifest["datasets"]}
    for j, c in enumerate(raw.columns):
        got = sf.params.iloc[j]
        assert (got["lo"], got["span"], got["chance"], bool(got["clip"])) == pytest.approx(
            (norm[c]["lo"], norm[c]["span"], norm[c]["chance"], norm[c]["clip"])), c
    scales = manifest["prediction"]["predictor"]["params"]["scale_meta"]
    assert sf.predictor("lowrank", 0).get_params()["scale_meta"] == scales
    # the values reduce fits on (before the floor at chance) are the ones the benchmark fits on
    tm = manifest["training_matrix"]
    fitted = np.array([[np.nan if v is None else v for v in row] for row in tm["values"]], dtype=float)
    order = [list(train.index).index(m) for m in tm["models"]]
    cols = [list(raw.columns).index(c) for c in tm["datasets"]]
    np.testing.assert_allclose(fitted, sf.normalise(train.to_numpy(float))[order][:, cols], atol=1e-9)
    X = raw.to_numpy(float)
    Z = sf.normalise(X)
    inside = (Z > 0) & (Z < 1)
    assert np.allclose(sf.to_raw(Z)[inside], X[inside])  # the affine inverse, exact where nothing was clipped


def test_fit_store_runs_the_frontier_protocol_on_a_users_leaderboard(tmp_path, capsys):
    qh = import_benchmark("quality_holdout")
    try:
        out = tmp_path / "rows.json"
        assert qh.main(["--csv", str(LIVEBENCH), "--protocols", "f", "--ridge-draws", "2", "--extra-predictors", "",
                        "--fit", "store", "--json", str(out)]) == 0
        [row] = json.loads(out.read_text())
        assert 0 < row["f_frontier_lowrank_agg_mae"] < 30 and 0 <= row["f_frontier_lowrank_agg_cov"] <= 1
    finally:
        qh.FIT = "store"
