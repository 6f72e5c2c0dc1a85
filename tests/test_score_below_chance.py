"""The benchmark's own score (MMLU acc) is calibrated on the training scores below chance as they are.

Normalisation floors a score below chance at chance, and the manifest's training matrix holds those floored
scores. The acc interval was calibrated on them, so near chance (where a model scores below chance on many
subjects) it held the truth far less often than the normalised one: 0.489 against 0.867 on held-out Pythia
runs (benchmarks/quality_round_trip.py --scheme variant --quick). The manifest now records the clipped cells
with their values before clipping (``training_matrix.unclipped``) and the acc interval is calibrated on them;
a manifest without the record loads and predicts as before.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import harness_ext as hx
from harness_ext.errors import HarnessExtError
from harness_ext.methods.reduction.manifest import validate_manifest
from harness_ext.store.matrix import apply_normalisation, clipped_cells, params_frame, unpack_clipped

SUBJECTS = ["abstract_algebra", "anatomy", "astronomy", "virology", "marketing", "nutrition", "econometrics",
            "sociology"]
FAST = {"budget": 3, "seed": 0, "n_random_subsets": 20, "n_random": 20, "selector": "greedy_coverage"}


@pytest.fixture(scope="module")
def near_chance(tmp_path_factory):
    """A store of 4-choice accuracies near chance (many below it), its chance file, and a reduction of all but
    the last three models."""
    root = tmp_path_factory.mktemp("near_chance")
    rng = np.random.default_rng(0)
    ability = rng.uniform(-0.02, 0.12, 33)
    rows = [{"model": f"m{i:02d}", "benchmark": "mmlu", "dataset": s, "metric": "acc",
             "value": float(np.clip(0.25 + a * (1 + 0.5 * j / len(SUBJECTS)) + rng.normal(0, 0.04), 0, 1))}
            for i, a in enumerate(ability) for j, s in enumerate(SUBJECTS)]
    pd.DataFrame(rows).to_csv(root / "scores.csv", index=False)
    (root / "chance.json").write_text(json.dumps({s: 0.25 for s in SUBJECTS}))
    db = root / "s.duckdb"
    hx.ingest(root / "scores.csv", db)
    df = hx.load_matrix(db, "mmlu", chance_file=str(root / "chance.json"))
    raw = hx.load_matrix(db, "mmlu", normalise="none")
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


def test_load_matrix_and_manifest_carry_the_values_below_chance(near_chance):
    df, raw, red = near_chance
    rows, cols, values = unpack_clipped(df.attrs["clipped"], df.index, df.columns)
    assert rows.size > 10 and (values < 0).all() and (df.to_numpy()[rows, cols] == 0).all()
    np.testing.assert_allclose(values, (raw.to_numpy()[rows, cols] - 0.25) / 0.75)
    tm = red.manifest["training_matrix"]
    rec = tm["unclipped"]
    assert len(rec["rows"]) == len(rec["columns"]) == len(rec["values"]) > 0
    cells = np.array(tm["values"], dtype=float)
    assert (cells[rec["rows"], rec["columns"]] == 0).all() and max(rec["values"]) < 0
    # Same inputs and seed: the same bytes; and the schema and the checks accept it.
    again = hx.reduce(df.iloc[:-3], **FAST)
    assert json.dumps(again.manifest, sort_keys=True) == json.dumps(red.manifest, sort_keys=True)
    validate_manifest(json.loads(json.dumps(red.manifest)))


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
    pred = hx.predict(red, new)
    old_manifest = json.loads(json.dumps(red.manifest))
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
    """The engine scores the further aggregates against ``extra_truth``; given the fitted matrix, nothing changes."""
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
    for name in ("aggregate_lower", "aggregate_upper", "extra_lower", "extra_upper", "lower", "upper"):
        np.testing.assert_array_equal(getattr(plain, name), getattr(same, name))
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
    m = json.loads(json.dumps(red.manifest))
    tamper(m["training_matrix"]["unclipped"])
    with pytest.raises(HarnessExtError, match=message):
        validate_manifest(m)


def test_predictors_without_conformal_intervals_score_the_values_below_chance_too(near_chance):
    """Ridge's acc interval is z times the cross-validated RMSE of the score, scored against the values below
    chance (the normalised aggregate's RMSE, rescaled, only when nothing was clipped)."""
    df, raw, _ = near_chance
    red = hx.reduce(df.iloc[:-3], predictor="ridge", **FAST)
    new = raw.iloc[-3:][red.subset]
    old_manifest = json.loads(json.dumps(red.manifest))
    del old_manifest["training_matrix"]["unclipped"]
    a, b = hx.predict(red, new).aggregate, hx.predict(old_manifest, new).aggregate
    np.testing.assert_allclose(a["aggregate"], b["aggregate"])
    np.testing.assert_allclose(a["normalised_upper"], b["normalised_upper"])
    assert ((a["upper"] - a["lower"]) > (b["upper"] - b["lower"]) + 1e-9).all()
