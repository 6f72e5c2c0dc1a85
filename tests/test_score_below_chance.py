"""Scores below chance: the predictor is fitted on them as they are, and older manifests keep their calibration.

Real data: the bundled Pythia runs nearest chance (70M, 160M and 410M, both training sets; lm-eval v0.3 results,
Apache-2.0), half of whose cells of eight MMLU subjects lie below chance.

Normalisation floors a score below chance at chance for display. A predictor fitted on floored scores never
predicts below chance, so near chance it predicts too high (on held-out Pythia checkpoints the floored fit's MMLU
aggregate was 2.1 points high, its interval covering 12%: ``benchmarks/quality_holdout.py --fit store-floored``).
So ``reduce`` fits on the scores before the floor (``prediction.floor_at_chance: false``) and ``predict``
normalises a new model's alike, keeping predictions inside the scale's own ends.

Manifests written before recorded the floored training matrix and the floored cells' values before the floor
(``training_matrix.unclipped``), on which the benchmark score's interval was calibrated; they load and predict
as before.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import harness_ext as hx
from conftest import import_benchmark
from harness_ext.errors import HarnessExtError
from harness_ext.methods.reduction.manifest import validate_manifest
from harness_ext.store.matrix import apply_normalisation, clipped_cells, params_frame, unpack_clipped

SUBJECTS = ["abstract_algebra", "anatomy", "astronomy", "virology", "marketing", "nutrition", "econometrics",
            "sociology"]
FAST = {"budget": 3, "seed": 0, "n_random_subsets": 20, "n_random": 20, "selector": "greedy_coverage"}


#: The bundled Pythia runs nearest chance (real lm-eval v0.3 results, 15 checkpoints each): half their cells of these
#: subjects lie below chance.
NEAR_CHANCE_RUNS = ["pythia-70m", "pythia-70m-deduped", "pythia-160m", "pythia-160m-deduped", "pythia-410m",
                    "pythia-410m-deduped"]


@pytest.fixture(scope="module")
def near_chance_store(tmp_path_factory):
    """A store of the bundled near-chance Pythia runs and a chance file for the subjects: their folder."""
    from harness_ext.store.ingest import bundled_data_path

    root = tmp_path_factory.mktemp("near_chance")
    (root / "chance.json").write_text(json.dumps({s: 0.25 for s in SUBJECTS}))
    for run in NEAR_CHANCE_RUNS:
        hx.ingest(bundled_data_path() / run, root / "s.duckdb")
    return root


@pytest.fixture(scope="module")
def near_chance(near_chance_store):
    """The store's matrix, normalised and raw, and a reduction of all but the last three models."""
    root = near_chance_store
    db = root / "s.duckdb"
    df = hx.load_matrix(db, "mmlu", datasets=SUBJECTS, chance_file=str(root / "chance.json"))
    raw = hx.load_matrix(db, "mmlu", datasets=SUBJECTS, normalise="none")
    red = hx.reduce(df.iloc[:-3], **FAST)
    return df, raw, red


def test_normalisation_records_what_it_clips():
    params = params_frame({"a": {"lo": 0.0, "span": 1.0, "flip": False, "chance": 0.25, "clip": True},
                           "b": {"lo": 0.0, "span": 1.0, "flip": False, "chance": 0.0, "clip": False}}, ["a", "b"])
    X = np.array([[0.1, -3.0], [0.5, 2.0], [np.nan, 0.5], [0.25, 0.1]])
    cells = clipped_cells(X, params, ["m0", "m1", "m2", "m3"], ["a", "b"])
    rows, cols, values = unpack_clipped(cells, ["m0", "m1", "m2", "m3"], ["a", "b"])
    # only the below-chance cell of the clipped column: 0.1 is (0.1 - 0.25) / 0.75 = -0.2 before the floor
    assert rows.tolist() == [0] and cols.tolist() == [0] and values == pytest.approx([-0.2])
    np.testing.assert_allclose(apply_normalisation(X, params, clip=False)[0, 0], -0.2)
    assert apply_normalisation(X, params)[0, 0] == 0.0
    # aligned by label with any frame of these labels; text, so pandas copies it for free and Parquet keeps it
    rows, cols, _ = unpack_clipped(cells, ["m3", "m0"], ["b", "a"])
    assert rows.tolist() == [1] and cols.tolist() == [1]
    assert isinstance(cells, str) and clipped_cells(X[1:2], params, ["m1"], ["a", "b"]) is None


def floored_manifest(manifest: dict) -> dict:
    """``manifest`` as ``reduce`` wrote it before it fitted before the floor (the quality benchmark's ``--floored``)."""
    return import_benchmark("quality_round_trip").floored_manifest(manifest)


def test_load_matrix_records_and_the_manifest_fits_the_values_below_chance(near_chance):
    df, raw, red = near_chance
    rows, cols, values = unpack_clipped(df.attrs["clipped"], df.index, df.columns)
    assert rows.size > 10 and (values < 0).all() and (df.to_numpy()[rows, cols] == 0).all()
    np.testing.assert_allclose(values, (raw.to_numpy()[rows, cols] - 0.25) / 0.75)
    # the manifest holds them as they are, says so, and records no floored cells
    tm = red.manifest["training_matrix"]
    assert "unclipped" not in tm and red.manifest["prediction"]["floor_at_chance"] is False
    cells = np.array(tm["values"], dtype=float)
    keep = rows < len(tm["models"])
    np.testing.assert_allclose(cells[rows[keep], cols[keep]], values[keep], atol=1e-9)
    # Same inputs and seed: the same bytes; and the schema and the checks accept it.
    again = hx.reduce(df.iloc[:-3], **FAST)
    assert json.dumps(again.manifest, sort_keys=True) == json.dumps(red.manifest, sort_keys=True)
    validate_manifest(json.loads(json.dumps(red.manifest)))
    validate_manifest(floored_manifest(red.manifest))


def test_predictions_go_below_chance_and_stay_inside_the_scale(near_chance):
    """Near chance, the fit before the floor predicts scores below chance (negative normalised scores), never below
    the scale's own floor (acc 0, normalised -1/3 at chance 0.25); the floored manifest never goes below 0."""
    df, raw, red = near_chance
    new = raw.iloc[-3:][red.subset]
    pred = hx.predict(red, new).table
    hidden = ~pred["observed"].to_numpy(dtype=bool)
    lower = pred["lower"].to_numpy(dtype=float)[hidden]
    assert (lower < 0).any() and (lower >= -1 / 3 - 1e-12).all()
    assert (pred["raw_lower"].to_numpy(dtype=float)[hidden] >= -1e-12).all()
    old = hx.predict(floored_manifest(red.manifest), new)
    assert (old.table["lower"].to_numpy(dtype=float) >= 0).all()
    # the benchmark score (acc) may go below chance too, never below 0; the floored fit's stays at chance or above
    acc_lower = hx.predict(red, new).aggregate["lower"].to_numpy(dtype=float)
    assert (acc_lower >= -1e-12).all() and (acc_lower < 0.25).any()
    assert (old.aggregate["lower"].to_numpy(dtype=float) >= 0.25 - 1e-12).all()


def test_a_store_rebuilt_training_matrix_is_unfloored_too(near_chance, near_chance_store):
    """A manifest too large to embed its training matrix rebuilds it from the store: unfloored as ``reduce`` fitted,
    and floored for a manifest written before."""
    from harness_ext.methods.reduction.predict import training_matrix
    from harness_ext.store.floor import unfloored

    df, _, _ = near_chance
    root = near_chance_store
    red = hx.reduce(str(root / "s.duckdb"), benchmark="mmlu", datasets=SUBJECTS, chance_file=str(root / "chance.json"),
                    **FAST)
    m = json.loads(json.dumps(red.manifest))
    embedded = np.array(m.pop("training_matrix")["values"], dtype=float)
    rebuilt = training_matrix(m).to_numpy(dtype=float)
    np.testing.assert_allclose(rebuilt, embedded, atol=1e-9)
    assert (rebuilt < 0).any()
    del m["prediction"]["floor_at_chance"]
    assert (training_matrix(m).to_numpy(dtype=float) >= 0).all()
    back = unfloored(df)
    assert "clipped" not in back.attrs and unfloored(back) is back


def test_a_matrix_written_to_parquet_keeps_them(near_chance, tmp_path):
    """``matrix --out m.parquet`` writes the attrs as JSON: the record is text, so it is written and read back (a
    matrix read from Parquet goes to the API's reduce with it)."""
    pytest.importorskip("pyarrow")
    df, _, _ = near_chance
    df.to_parquet(tmp_path / "m.parquet")
    back = pd.read_parquet(tmp_path / "m.parquet")
    assert back.attrs["clipped"] == df.attrs["clipped"]


def test_acc_interval_is_calibrated_below_chance_and_old_manifests_keep_theirs(near_chance):
    df, raw, red = near_chance
    new = raw.iloc[-3:][red.subset]
    floored = floored_manifest(red.manifest)
    pred = hx.predict(floored, new)
    old_manifest = json.loads(json.dumps(floored))
    del old_manifest["training_matrix"]["unclipped"]  # as written before the values below chance were recorded
    old = hx.predict(old_manifest, new)
    a, b = pred.aggregate, old.aggregate
    # The normalised aggregate and the cells are the same; the acc point is the same (observed cells at their
    # measured values either way); the acc interval is calibrated on what acc counts, so it is wider here.
    np.testing.assert_allclose(a["normalised_lower"], b["normalised_lower"])
    np.testing.assert_allclose(pred.table["score"], old.table["score"])
    np.testing.assert_allclose(a["aggregate"], b["aggregate"])
    assert ((a["upper"] - a["lower"]) > (b["upper"] - b["lower"]) + 1e-9).all()


@pytest.mark.slow
def test_extra_truth_moves_only_the_extra_aggregate():
    """The engine scores the further aggregates against ``extra_truth``: given, their intervals join the plain and
    signed residuals' (never narrower); the main aggregate and the cells never change."""
    from harness_ext.methods.engine.completion import LowRankCompleter

    rng = np.random.default_rng(0)
    X = np.clip(rng.random((40, 2)) @ rng.random((2, 9)) / 2 + 0.03 * rng.standard_normal((40, 9)), 0, 1)
    new = X[:3].copy()
    new[:, 4:] = np.nan
    w, u = np.full(9, 1 / 9), np.linspace(0.02, 0.2, 9)

    def run(truth):
        est = LowRankCompleter(random_state=0).fit(X[3:])
        return est.predict_new_models(new, weights=w, extra_weights=u[None, :], extra_truth=truth)

    plain, same = run(None), run(X[3:])
    for name in ("aggregate_lower", "aggregate_upper", "lower", "upper"):
        np.testing.assert_array_equal(getattr(plain, name), getattr(same, name))
    assert (same.extra_lower <= plain.extra_lower + 1e-12).all() and (same.extra_upper >= plain.extra_upper - 1e-12).all()
    noisy = X[3:] + 0.05 * rng.standard_normal(X[3:].shape)  # scored against other values: wider
    moved = run(noisy)
    np.testing.assert_array_equal(moved.aggregate_lower, plain.aggregate_lower)
    moved_w, plain_w = (moved.extra_upper - moved.extra_lower)[:, 0], (plain.extra_upper - plain.extra_lower)[:, 0]
    assert (moved_w >= plain_w).all()
    # The second new model lies beyond every training model: besides the design-style interval (the frontier folds
    # are thin), its extra aggregate joins the held-out residuals scaled by one plus its distance beyond the range,
    # which read the truth, so it widens too.
    assert plain.frontier[1] < -1
    assert (moved_w > plain_w).all()
    with pytest.raises(Exception, match="extra_truth must have"):
        run(X[:5])


@pytest.mark.parametrize("tamper, message", [
    (lambda r: r["rows"].append(0), "lists of one length"),
    (lambda r: r["rows"].__setitem__(0, 10 ** 6), "outside the"),
    (lambda r: r["values"].__setitem__(0, "x"), "must be integers, its values numbers"),
    (lambda r: r.__setitem__("columns", 3), "lists of one length"),
])
def test_a_malformed_record_is_refused(near_chance, tamper, message):
    _, _, red = near_chance
    m = floored_manifest(red.manifest)
    tamper(m["training_matrix"]["unclipped"])
    with pytest.raises(HarnessExtError, match=message):
        validate_manifest(m)


def test_predictors_without_conformal_intervals_score_the_values_below_chance_too(near_chance):
    """Ridge's acc interval is z times the cross-validated RMSE of the score, scored against the values below
    chance (the normalised aggregate's RMSE, rescaled, only when nothing was clipped)."""
    df, raw, _ = near_chance
    red = hx.reduce(df.iloc[:-3], predictor="ridge", **FAST)
    new = raw.iloc[-3:][red.subset]
    floored = floored_manifest(red.manifest)
    old_manifest = json.loads(json.dumps(floored))
    del old_manifest["training_matrix"]["unclipped"]
    a, b = hx.predict(floored, new).aggregate, hx.predict(old_manifest, new).aggregate
    np.testing.assert_allclose(a["aggregate"], b["aggregate"])
    np.testing.assert_allclose(a["normalised_upper"], b["normalised_upper"])
    assert ((a["upper"] - a["lower"]) > (b["upper"] - b["lower"]) + 1e-9).all()
