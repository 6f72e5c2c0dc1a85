"""Per-dataset predictor-space transforms (harness_ext.methods.engine.transforms)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness_ext.errors import MethodError
from harness_ext.methods.engine.transforms import LOGIT, STANDARDISE, ScaleTransform, as_transform, detect_scales


def mixed_matrix(seed=0, m=40):
    rng = np.random.default_rng(seed)
    X = np.column_stack([
        rng.uniform(0.2, 0.95, m),          # proportion
        rng.uniform(15, 90, m),             # percentage
        rng.normal(1150, 80, m),            # Elo
        rng.uniform(3.0, 9.2, m),           # 0-10 judge score
        rng.normal(-3.5, 0.6, m),           # BARTScore (negative)
    ])
    X[rng.random(X.shape) < 0.2] = np.nan
    return X


def test_detection_from_data():
    cols = detect_scales(mixed_matrix())
    assert [c["kind"] for c in cols] == [LOGIT, LOGIT, STANDARDISE, STANDARDISE, STANDARDISE]
    assert (cols[0]["lo"], cols[0]["hi"]) == (0.0, 1.0)
    assert (cols[1]["lo"], cols[1]["hi"]) == (0.0, 100.0)


def test_detection_from_metadata_and_overrides():
    X = mixed_matrix()
    meta = [{"random_baseline": 0.25}, {}, {"min_score": 0, "max_score": 2000}, {}, {}]
    cols = detect_scales(X, meta)
    assert cols[2]["kind"] == LOGIT and cols[2]["reason"] == "declared bounds"
    assert cols[0]["chance"] == 0.25
    cols = detect_scales(X, kinds={1: "standardise", 0: "identity"})
    assert [c["kind"] for c in cols][:2] == ["identity", STANDARDISE]
    with pytest.raises(MethodError, match="unknown scale kind"):
        detect_scales(X, kinds="log")


def test_round_trip_is_exact_where_not_clipped():
    X = mixed_matrix()
    t = ScaleTransform().fit(X)
    Z = t.transform(X)
    assert np.array_equal(np.isnan(Z), np.isnan(X))
    assert np.allclose(t.inverse_transform(Z), X, equal_nan=True, rtol=0, atol=1e-9)
    # derivative matches finite differences
    h = 1e-6
    Zf = np.nan_to_num(Z)
    num = (t.inverse_transform(Zf + h) - t.inverse_transform(Zf - h)) / (2 * h)
    assert np.allclose(t.derivative(Zf), num, rtol=1e-5, atol=1e-6)


def test_chance_floor_and_eps_clip():
    X = np.array([[0.10], [0.25], [0.60], [1.0], [0.0]])
    # the logit asked for: detected, four of five cells at the clip would standardise it (see the clip test below)
    t = ScaleTransform(kinds="logit", meta=[{"random_baseline": 0.25}], eps=0.01).fit(X)
    Z = t.transform(X)[:, 0]
    # below chance is floored at chance, 1.0 is clipped at 1 - eps, inverse is exact inside
    assert Z[0] == Z[1] == Z[4] == pytest.approx(np.log(0.25 / 0.75))
    assert Z[3] == pytest.approx(np.log(0.99 / 0.01))
    assert t.inverse_transform(Z[:, None])[2, 0] == pytest.approx(0.60)
    assert t.columns_[0]["floor"] == pytest.approx(0.25)


def test_serialises_into_json_and_back():
    X = mixed_matrix(1)
    t = ScaleTransform(meta=[{"random_baseline": 0.2}, {}, {}, {}, {}]).fit(X)
    d = json.loads(json.dumps(t.to_dict()))
    t2 = as_transform(d, X)
    assert np.allclose(t2.transform(X), t.transform(X), equal_nan=True)
    Z = np.random.default_rng(0).normal(size=(3, 5))
    assert np.allclose(t2.inverse_transform(Z), t.inverse_transform(Z))
    with pytest.raises(MethodError, match="5 datasets"):
        as_transform(d, X[:, :3])


def test_monotone_inverse_maps_intervals_to_intervals():
    X = mixed_matrix(2)
    t = ScaleTransform().fit(X)
    z = np.linspace(-6, 6, 50)[:, None] * np.ones((1, 5))
    x = t.inverse_transform(z)
    assert (np.diff(x, axis=0) > 0).all()
    assert (x[:, 0] > 0).all() and (x[:, 0] < 1).all() and (x[:, 1] < 100).all()


def test_a_flat_standardised_column_takes_the_other_columns_spread():
    # Every model at one score (all clipped to chance) used to get sd 1: one predicted z was a score of 100%.
    X = np.column_stack([np.full(8, 0.0), np.linspace(0.0, 0.1, 8), np.linspace(0.0, 0.3, 8)])
    t = ScaleTransform(kinds=STANDARDISE).fit(X)
    sds = [c["sd"] for c in t.columns_]
    assert sds[0] == pytest.approx(np.median(sds[1:]))
    assert t.inverse_transform(np.array([[2.0, 0.0, 0.0]]))[0, 0] < 0.3


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_constant_column_is_flat_whatever_the_sums_rounding(order):
    # A column at one score (an lm-eval task of the bundled data, thirty models) does not sum to thirty times the
    # score in every order: the rounding left it an sd of 6e-17 (a z-score of 1e16 for any other value) with the
    # C-ordered array pandas 2 gives and 0 with the F-ordered one pandas 3 gives, so the same matrix was
    # transformed differently under the two releases.
    value = -0.2692307692307693
    rng = np.random.default_rng(0)
    X = np.asarray(np.column_stack([rng.normal(0.0, 0.2, (30, 3)), np.full(30, value)]), order=order)
    t = ScaleTransform().fit(X)
    col, others = t.columns_[3], [c["sd"] for c in t.columns_[:3]]
    assert col["kind"] == STANDARDISE and col["mu"] == value
    assert col["sd"] == pytest.approx(np.median(others))
    assert (t.transform(X)[:, 3] == 0.0).all()
    other = ScaleTransform().fit(np.ascontiguousarray(X) if order == "F" else np.asfortranarray(X)).columns_[3]
    assert (other["mu"], other["sd"]) == pytest.approx((col["mu"], col["sd"]), rel=1e-12)


@pytest.mark.slow
def test_flat_mmlu_subject_is_not_predicted_at_100_percent(tmp_path):
    """lm-eval v0.3 master results: all 8 OPT models (0-shot) are below chance on college_mathematics, so
    its normalised column is all 0; LLaMA-7B held out was predicted 1.000 there with a zero-width interval."""
    import harness_ext as hx
    from conftest import LM_EVAL_V03, require

    llama = require(LM_EVAL_V03 / "llama" / "llama-7B" / "llama-7B_mmlu_5-shot.json")
    db = tmp_path / "s.duckdb"
    hx.ingest([require(LM_EVAL_V03 / "opt"), llama], store=db)
    m = hx.load_matrix(db, "mmlu", num_fewshot=0)
    assert m.shape == (8, 57) and (m["college_mathematics"] == 0).all()
    reduced = hx.reduce(m, budget=8, seed=0, n_random_subsets=20, n_random=20)
    raw = hx.load_matrix(db, "mmlu", num_fewshot=5, normalise="none")
    p = hx.predict(reduced, raw.loc[["llama-7B"], reduced.subset]).to_frame().set_index("dataset")
    row = p.loc["college_mathematics"]
    assert row["score"] < 0.5 and row["upper"] > row["lower"]


def _tsc_slice():
    """Eight classifiers' resample-0 accuracy on ACSF1 and Wafer (real, tests/fixtures/tsc_bakeoff/PROVENANCE.md)."""
    import pandas as pd
    from pathlib import Path

    d = pd.read_csv(Path(__file__).parent / "fixtures" / "tsc_bakeoff" / "tsc_bakeoff_wafer_acsf1_slice.csv")
    return d.pivot(index="classifier", columns="dataset", values="0")[["ACSF1", "Wafer"]].to_numpy(float)


def test_a_column_mostly_at_the_logits_clip_is_standardised():
    X = _tsc_slice()  # Wafer: every classifier at 0.998-1.0, at or above 1 - eps; ACSF1: 0.87-0.91
    acsf1, wafer = detect_scales(X)
    assert acsf1["kind"] == LOGIT and (acsf1["lo"], acsf1["hi"]) == (0.0, 1.0)
    assert wafer["kind"] == STANDARDISE and wafer["lo"] is None
    assert wafer["reason"] == "values in [0, 1], but 100% of the cells at the logit's clip"
    t = ScaleTransform().fit(X)  # the fitted transform takes the same kinds and keeps the order of Wafer's cells
    assert t.kinds_() == [LOGIT, STANDARDISE]
    Z = t.transform(X)
    assert np.array_equal(np.argsort(Z[:, 1], kind="stable"), np.argsort(X[:, 1], kind="stable"))
    # a kind given is kept
    assert detect_scales(X, kinds={1: "logit"})[1]["kind"] == LOGIT
