"""``prediction_greedy(demote_saturated=True)`` and ``reduce --demote-saturated``: a dataset left little headroom
below its known ceiling is chosen only after every other, and every demotion is reported with its headroom."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from harness_ext.methods.prowl.saturation import (HEADROOM, dataset_ceilings, headroom, saturation_plan,
                                                  unit_ceilings)
from harness_ext.plugin_manager import get_registration


def ceiling_matrix(n=40, seed=0, n_saturated=1):
    """``n`` models x 6 datasets in [0, 1] on one ability; the first ``n_saturated`` sit at the ceiling for most
    models (headroom ~0) and carry the ability most sharply, so the default selection wants one of them."""
    rng = np.random.default_rng(seed)
    a = np.sort(rng.normal(0.0, 1.0, n))
    slope = np.array([4.0, 1.0, 1.2, 0.8, 1.5, 0.6])
    shift = np.array([4.0, 0.0, -0.3, 0.2, -0.5, 0.4])
    slope[1:n_saturated], shift[1:n_saturated] = 4.0, 4.0
    X = 1.0 / (1.0 + np.exp(-(slope * a[:, None] + shift))) + rng.normal(0.0, 0.02, (n, 6))
    return np.clip(X, 0.0, 1.0)


def fit(X, **params):
    return get_registration("selectors", "prediction_greedy").cls(predictor="lowrank", **params).fit(X)


def test_headroom_rule_ceilings_and_fallback():
    X = ceiling_matrix()
    room = headroom(X, unit_ceilings(X))
    assert room[0] < HEADROOM <= room[1:].min()
    allowed, rec = saturation_plan(X, None, HEADROOM, k=2)
    assert allowed.tolist() == [False] + [True] * 5
    assert rec["saturated"] == [0] and rec["n_saturated"] == 1 and rec["n_known_ceiling"] == 6 and rec["applied"]
    assert rec["saturated_headroom"][0] == pytest.approx(room[0], abs=1e-4) and rec["note"] is None
    # a ceiling that is not known is never demoted; a column outside [0, 1] has none by default
    assert saturation_plan(X, [None] + [1.0] * 5, HEADROOM, 2)[0] is None
    Y = X.copy()
    Y[:, 0] *= 100
    assert unit_ceilings(Y)[0] is None and np.isnan(headroom(Y, unit_ceilings(Y))[0])
    # fewer than k others: nothing demoted, and the record says so
    allowed, rec = saturation_plan(X, None, HEADROOM, k=6)
    assert allowed is None and not rec["applied"] and "fewer than the 6" in rec["note"]
    with pytest.raises(Exception, match="headroom must be a positive number"):
        saturation_plan(X, None, -1.0, 2)
    with pytest.raises(Exception, match="one value"):
        saturation_plan(X, [1.0], HEADROOM, 2)


def test_a_headroom_exactly_at_the_threshold_is_not_saturated_on_any_scale():
    # q10 = 0.6, q90 = 0.8 over 11 models: (1 - 0.8) / (0.8 - 0.6) = 1, and at ceiling 0.85 exactly 0.25
    col = np.array([0.6] * 2 + [0.7] * 7 + [0.8] * 2)
    for scale in (1.0, 100.0, 3.0):
        x = (col * scale)[:, None]
        assert headroom(x, [0.85 * scale])[0] == 0.25
        assert not saturation_plan(np.hstack([x, x[::-1]]), [0.85 * scale, None], HEADROOM, 1)[1]["n_saturated"]


def test_ceilings_come_from_the_normalisation_records():
    norm = {"description": "[0,1]", "lo": 0.0, "span": 1.0, "flip": False, "chance": 0.25, "clip": True,
            "transform": "linear", "scale": "proportion"}
    minmax = dict(norm, description="min-max", scale="unbounded")
    elo = dict(norm, description="Elo win probability", scale="elo", transform="elo")
    raw = {"description": "raw", "lo": 0.0, "span": 1.0, "flip": False, "chance": 0.0, "clip": False}
    X = np.array([[0.2, 0.5, 0.3, 40.0], [0.9, 0.1, 0.7, 80.0]])
    assert dataset_ceilings([norm, minmax, elo, raw], X) == [1.0, None, None, 100.0]


def test_the_option_avoids_the_saturated_dataset_the_default_picks():
    X = ceiling_matrix()
    default = fit(X, n_select=2)
    assert 0 in default.order_.tolist() and "saturation" not in default.describe()
    assert default.get_params()["demote_saturated"] is False and default.get_params()["headroom"] == HEADROOM
    opt = fit(X, n_select=2, demote_saturated=True)
    assert 0 not in opt.order_.tolist()
    sat = opt.describe()["saturation"]
    assert sat["n_saturated"] == 1 and sat["saturated"] == [0] and sat["applied"] and sat["k"] == 2
    assert 0 <= sat["saturated_headroom"][0] < HEADROOM
    # a full order (no size): the saturated dataset comes last
    assert fit(X, demote_saturated=True, method="design").order_[-1] == 0


def test_too_few_unsaturated_datasets_compete_with_the_saturated_ones_and_it_is_said():
    X = ceiling_matrix(n_saturated=5)
    sel = fit(X, n_select=2, demote_saturated=True)
    sat = sel.describe()["saturation"]
    assert sat["n_saturated"] == 5 and not sat["applied"] and "nothing demoted" in sat["note"]
    assert set(sel.order_.tolist()) & set(range(5))  # demoted ones used


def _frame(X):
    return pd.DataFrame(X, index=[f"m{i:02d}" for i in range(len(X))], columns=[f"d{j}" for j in range(X.shape[1])])


@pytest.mark.slow
def test_reduce_records_every_demotion_and_reselects_with_it():
    import harness_ext
    from harness_ext.methods.reduction.manifest import build_manifest

    df = _frame(ceiling_matrix())
    off = build_manifest(df, budget="2", n_random=10, n_random_subsets=5)
    assert "d0" in [s["name"] for s in off["subset"]] and "saturation" not in off["selection"]
    res = harness_ext.reduce(df, budget=2, n_random=10, n_random_subsets=5, demote_saturated=True)
    on = res.manifest
    params = on["selection"]["selector"]["params"]
    assert params["demote_saturated"] is True and params["ceilings"] == [1.0] * 6
    rec = on["selection"]["saturation"]
    assert [s["name"] for s in rec["saturated"]] == ["d0"] and rec["n_in_subset"] == 0 and rec["applied"]
    assert 0 <= rec["saturated"][0]["headroom"] < HEADROOM and rec["n_known_ceiling"] == 6
    assert "d0" not in [s["name"] for s in on["subset"]]
    # the calibration's folds reselect with the same parameters
    assert all("d0" not in sub for sub in on["prediction"]["calibration"]["subsets"])
    # and each fold's own demotions are recorded, one list per fold
    cal = on["prediction"]["calibration"]
    assert len(cal["saturated"]) == cal["n_folds"] and all(fold == ["d0"] for fold in cal["saturated"])
    assert "saturated" not in off["prediction"]["calibration"]  # the default records nothing new
    line = "saturation (--demote-saturated): 1 of the 6 datasets with a known ceiling has headroom below 0.25 (d0 0.00)"
    assert line + "; it is chosen only after every other; 0 in the subset" in res.render()
    with pytest.raises(Exception, match="needs the prediction_greedy selector"):
        build_manifest(df, budget="2", n_random=10, selector="greedy_coverage",
                       selector_params={"demote_saturated": True})


@pytest.mark.slow
def test_cli_flag_reaches_the_manifest(tmp_path):
    from harness_ext.cli import main
    from harness_ext.store.ingest import bundled_data_path

    db, out = tmp_path / "s.duckdb", tmp_path / "out"
    assert main(["ingest", "--db", str(db), *map(str, sorted(bundled_data_path().glob("pythia-160m*")))]) == 0
    assert main(["reduce", "--db", str(db), "--benchmark", "lm_eval", "--models", "*-160m*", "--budget", "3",
                 "--n-random", "10", "--n-random-subsets", "5", "--demote-saturated", "--format", "json",
                 "--no-plot", "--out", str(out)]) == 0
    man = json.loads((out / "manifest.json").read_text())
    assert man["selection"]["selector"]["params"]["demote_saturated"] is True
    assert "saturation" in man["selection"] and len(man["selection"]["selector"]["params"]["ceilings"]) == 8


def test_selector_parameters_from_the_command_line(tmp_path, capsys):
    """reduce --selector-param KEY=VALUE reaches the selector (and the manifest); an unknown key is refused."""
    from harness_ext.cli import main
    from harness_ext.store.ingest import bundled_data_path

    db, out = tmp_path / "s.duckdb", tmp_path / "out"
    assert main(["ingest", "--db", str(db), *map(str, sorted(bundled_data_path().glob("pythia-160m*")))]) == 0
    base = ["reduce", "--db", str(db), "--benchmark", "lm_eval", "--models", "*-160m*", "--budget", "3", "--n-random",
            "10", "--n-random-subsets", "5", "--format", "json", "--no-plot", "--out", str(out)]
    assert main(base + ["--selector-param", "demote_saturated=true", "--selector-param", "headroom=0.4"]) == 0
    params = json.loads((out / "manifest.json").read_text())["selection"]["selector"]["params"]
    assert params["demote_saturated"] is True and params["headroom"] == 0.4
    assert main(base + ["--selector-param", "no_such=1"]) != 0
    assert "has no parameter 'no_such'" in capsys.readouterr().err


@pytest.mark.slow
def test_predictor_parameters_from_the_command_line(tmp_path, capsys):
    """reduce --predictor-param KEY=VALUE reaches the predictor (its evidence, the selection's own predictor and the
    manifest), and predict rebuilds it from the manifest; an unknown key is refused."""
    from harness_ext.cli import main
    from harness_ext.store.ingest import bundled_data_path

    db, out = tmp_path / "s.duckdb", tmp_path / "out"
    files = sorted(bundled_data_path().glob("pythia-160m*"))
    assert main(["ingest", "--db", str(db), *map(str, files)]) == 0
    base = ["reduce", "--db", str(db), "--benchmark", "lm_eval", "--models", "*-160m*", "--budget", "3", "--n-random",
            "10", "--n-random-subsets", "5", "--format", "json", "--no-plot", "--out", str(out)]
    assert main(base + ["--predictor-param", "rank=1"]) == 0
    man = json.loads((out / "manifest.json").read_text())
    assert man["prediction"]["predictor"]["params"]["rank"] == 1
    assert man["selection"]["selector"]["params"]["predictor_params"]["rank"] == 1
    run = next(p for p in sorted(files[0].rglob("*.json")) if p.is_file()) if files[0].is_dir() else files[0]
    assert main(["predict", "-m", str(out), str(run), "--no-lm-eval-results"]) == 0
    assert main(base + ["--predictor-param", "nope=2"]) != 0
    assert "predictor 'lowrank' has no parameter 'nope'" in capsys.readouterr().err
