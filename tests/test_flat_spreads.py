"""A column (or vector) at one value has no spread, exactly, wherever a spread is tested against zero.

numpy's standard deviation of ``n`` copies of a value such as 0.7 is about 1e-16 for most ``n`` (the mean as
summed is one rounding off the value), and which ``n`` give 0 depends on the array's memory layout. Each test
below fails on code that tested ``sd > 0`` (or ``var > 0``) on the computed spread.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness_ext.flat import flat_slices

# 20 copies of 0.7: numpy's sd is 1e-16 summed in either layout (a column of a C- or an F-ordered matrix) and as a
# 1-D array (benchmarks/screens/flatsd/rounding_probe.py: 62-87% of constant columns are like it).
VALUE, N = 0.7, 20


def _with_constant_column(order, seed=0):
    rng = np.random.default_rng(seed)
    return np.asarray(np.column_stack([rng.normal(0.5, 0.2, (N, 3)), np.full(N, VALUE)]), order=order)


@pytest.mark.parametrize("order", ["C", "F"])
def test_the_rounding_is_there_and_flat_slices_sees_through_it(order):
    X = _with_constant_column(order)
    assert np.nanstd(X, axis=0)[3] > 0 and np.full(N, VALUE).std() > 0  # what the fixes guard against
    X[[0, 5], 3] = np.nan
    X[:, 1] = np.nan
    flat, value = flat_slices(X, 0)
    assert flat.tolist() == [False, False, False, True] and value[3] == VALUE
    rows, _ = flat_slices(np.asarray(X.T, order=order), 1)
    assert rows.tolist() == flat.tolist()
    one, v = flat_slices(np.array([np.nan, 3.0, 3.0]))
    assert bool(one) and v == 3.0 and not flat_slices(np.array([1.0, 2.0]))[0]


@pytest.mark.parametrize("order", ["C", "F"])
def test_standardise_columns_gives_a_constant_column_the_pooled_spread(order):
    from harness_ext.methods.engine.baselines import standardise_columns

    X = _with_constant_column(order)
    Z, mu, sd = standardise_columns(X, min_count=5)
    # Its own sd (1e-16) made the column's z-scores rounding over rounding (about +-1); pooled, they are 0.
    assert mu[3] == VALUE and sd[3] == pytest.approx(X.std()) and (Z[:, 3] == 0.0).all()
    # A group whose every cell is the one value pools no spread either: it takes the whole matrix's.
    Z, mu, sd = standardise_columns(X, min_count=5, groups=["a", "a", "a", "b"])
    assert sd[3] == pytest.approx(X.std()) and (Z[:, 3] == 0.0).all()


@pytest.mark.parametrize("order", ["C", "F"])
def test_risk_model_leaves_a_constant_feature_unscaled(order):
    from harness_ext.methods.engine.benchpress import RiskModel

    X = _with_constant_column(order)
    y = np.random.default_rng(1).normal(0.3, 0.1, N)
    new = _with_constant_column(order, seed=2)
    new[:, 3] = VALUE + 0.05  # a held-out cell whose feature the training cells all shared
    # Scaled by 1e-16, the 0.05 became a feature of 1e14 times a weight fitted on rounding; unscaled, the
    # constant feature has weight 0 and the model is the one fitted without it.
    full = RiskModel("ridge").fit(X, y).predict(new)
    without = RiskModel("ridge").fit(X[:, :3], y).predict(new[:, :3])
    assert full == pytest.approx(without, rel=1e-9)


def test_crosspred_profiles_of_models_of_one_size_have_no_size_feature(tmp_path):
    from harness_ext.adapters.crosspred import load_profiles

    models = {f"m{i}": {"num_params_llm": 7, "vision_encoder": ["CLIP"], "model_family": "LLaVA"} for i in range(5)}
    (tmp_path / "model_profiles.json").write_text(json.dumps(models))
    (tmp_path / "dataset_profiles.json").write_text(json.dumps({"d": {"des_cluster": [1.0]}}))
    H, _ = load_profiles(tmp_path, list(models), ["d"])
    # Five of the 60 7B models of the shared CrossPred profiles: log(7) five times has an sd of 2e-16, and the
    # standardised size was rounding over rounding (+1 each), a difference from unprofiled models that is not there.
    assert (H[:, 0] == 0.0).all()


def test_held_out_share_is_none_when_every_held_out_aggregate_is_equal():
    from harness_ext.methods.engine.newmodel_intervals import held_out_share

    truth = np.full(N, VALUE)
    pred = truth + np.linspace(-0.01, 0.01, N)
    # Their variance is 1e-32 by rounding: the share was 1 - 1e-4 / 1e-32, not "without spread".
    assert held_out_share([(truth, pred)]) is None


def test_explained_share_is_none_when_every_training_aggregate_is_equal():
    from harness_ext.methods.reduction.explained import explained_share

    manifest = {"training_matrix": {"values": [[VALUE, VALUE]] * N}, "datasets": [{"weight": 0.5}, {"weight": 0.5}],
                "prediction": {"expected_error": {"aggregate_rmse": 0.1}}}
    assert explained_share(manifest) is None
