"""Without ``--demote-saturated``, a subset holding a dataset near its ceiling is said: ``reduce`` warns and records
it (``selection.subset_saturated``), and ``predict`` warns for each new model near that ceiling, where a model
stronger than the manifest's cannot show its strength (its frontier distance can read 0)."""

from __future__ import annotations

import numpy as np
import pytest

from harness_ext.methods.prowl.saturation import (HEADROOM, near_ceiling, subset_saturation,
                                                  subset_saturation_warning, unit_ceilings)
from test_saturation_selection import _frame, ceiling_matrix


def test_the_saturated_datasets_of_a_subset_with_where_near_begins():
    X = ceiling_matrix()
    cols = [f"d{j}" for j in range(6)]
    rec = subset_saturation(X, unit_ceilings(X), [0, 2], cols)
    assert rec["n_saturated"] == 1 and rec["n_known_ceiling"] == 6 and not rec["applied"]
    (hit,) = rec["in_subset"]
    q10, q90 = np.percentile(X[:, 0], [10, 90])
    assert hit["name"] == "d0" and 0 <= hit["headroom"] < HEADROOM and hit["ceiling"] == 1.0
    assert hit["near_from"] == pytest.approx(1.0 - HEADROOM * (q90 - q10), abs=1e-6)
    Z = np.array([[hit["near_from"], 0.0], [hit["near_from"] - 1e-6, 0.0], [np.nan, 0.0]])
    assert near_ceiling(rec, Z, ["d0", "d2"])["d0"].tolist() == [True, False, False]
    assert near_ceiling(rec, Z, ["d1", "d2"]) == {} and near_ceiling(None, Z, ["d0", "d2"]) == {}
    assert subset_saturation(X, unit_ceilings(X), [1, 2], cols) is None  # no saturated dataset in the subset
    assert subset_saturation(X, [None] * 6, [0, 2], cols) is None  # no known ceiling: never saturated
    text = subset_saturation_warning(rec)
    assert text.startswith("the subset holds 1 dataset near its ceiling among these models: d0 (headroom ")
    assert "--demote-saturated" in text and "a trade" in text


@pytest.mark.slow
def test_reduce_warns_and_predict_flags_models_near_the_ceiling():
    import harness_ext as hx
    from harness_ext.methods.reduction.manifest import build_manifest

    df = _frame(ceiling_matrix())
    off = build_manifest(df, budget="2", n_random=10, n_random_subsets=5)
    assert "d0" in [s["name"] for s in off["subset"]]
    rec = off["selection"]["subset_saturated"]
    assert [h["name"] for h in rec["in_subset"]] == ["d0"]
    assert sum("near its ceiling" in w for w in off["warnings"]) == 1
    on = build_manifest(df, budget="2", n_random=10, n_random_subsets=5, selector_params={"demote_saturated": True})
    assert "subset_saturated" not in on["selection"] and not any("near its ceiling" in w for w in on["warnings"])
    # predict: a model at the ceiling is warned about, one well below it is not
    other = [s["name"] for s in off["subset"] if s["name"] != "d0"][0]
    new = df.iloc[[0, -1]][["d0", other]].copy()
    new.index = ["weak", "strong"]
    new.loc["weak", "d0"], new.loc["strong", "d0"] = 0.3, 1.0
    ws = [w for w in hx.predict(off, new).warnings if "near the ceiling" in w]
    assert len(ws) == 1 and ws[0].startswith("strong: 1.000 (normalised) on d0")


@pytest.mark.slow
def test_helm_classic_weaker_half_subset_holds_imdb_and_its_strong_models_are_warned(tmp_path):
    """Real data (the shared HELM Classic leaderboard): reduced on its weaker half of models, the default subset
    holds IMDB, which those models already crowd near its ceiling; most of the stronger models are warned about."""
    import harness_ext as hx
    from conftest import HELM_CLASSIC, require

    require(HELM_CLASSIC)
    db = tmp_path / "helm.duckdb"
    hx.ingest(HELM_CLASSIC, db)
    m = hx.load_matrix(db, "helm_classic")
    order = np.argsort(np.nanmean(m.to_numpy(dtype=float), axis=1), kind="stable")
    weak, strong = m.iloc[np.sort(order[: len(order) // 2])], m.iloc[order[-len(order) * 3 // 10:]]
    weak.attrs = m.attrs
    res = hx.reduce(weak)
    rec = res.manifest["selection"].get("subset_saturated")
    assert rec is not None and "IMDB" in [h["name"] for h in rec["in_subset"]]
    assert any(w.startswith("the subset holds") and "IMDB" in w for w in res.manifest["warnings"])
    assert "the subset holds 1 dataset near its ceiling (IMDB): a model stronger than these cannot show it there" in res.render()
    assert res.summary()["subset_near_ceiling"] == ["IMDB"]
    subset = [s["name"] for s in res.manifest["subset"]]
    ws = [w for w in hx.predict(res, strong[subset]).warnings if "near the ceiling" in w and "on IMDB" in w]
    assert len(ws) >= len(strong) // 3
