"""How much of the training models' spread the subset predicts, said where it is low.

Real data: the bundled Pythia runs (lm-eval v0.3 MMLU results, Apache-2.0). Their weakest half (by the normalised
full MMLU score, as ``benchmarks/quality_round_trip.py --scheme frontier`` splits them) sits at chance: 96% of their
spread on a chosen subset is binomial sampling noise (``benchmarks/screens/noise/noise_share.py``), so a reduction
fitted on them predicts every stronger checkpoint near their mean. ``reduce`` and ``predict`` say so, and ``predict``
widens a stronger checkpoint's intervals to hold the reading that does not shrink toward them; a reduction of all
the runs, whose spread the subset predicts, says nothing of it.
"""

from __future__ import annotations

import numpy as np
import pytest

import harness_ext as hx
from harness_ext.methods.engine.frontier_unidentified import LOW_SHARE
from harness_ext.methods.reduction.explained import explained_share, low_share_text
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
    joined = [w for w in pred.warnings if "hold the reading that does not shrink" in w]
    flagged = (pred.aggregate["frontier"] > 0).to_numpy()
    assert flagged.any() and len(joined) == flagged.sum()


def test_the_unshrunk_reading_is_joined_only_where_the_spread_is_unpredicted(pythia, monkeypatch):
    """The strongest checkpoints' intervals from a reduction of the weakest half, with the rule and without: every
    bound moves outward or stays, the centre stays, and the widened intervals hold more of the truth."""
    import harness_ext.methods.engine.frontier as fr

    df, raw, order = pythia
    weak, strong = df.index[order[: len(order) // 2]], df.index[order[-20:]]
    res = hx.reduce(df.loc[weak], **FAST)
    new = raw.loc[strong].reindex(columns=[d["name"] for d in res.manifest["datasets"]])
    with_rule = hx.predict(res.manifest, new).aggregate.set_index("model")
    monkeypatch.setattr(fr, "join_unshrunk", lambda *a, **k: None)
    without = hx.predict(res.manifest, new).aggregate.set_index("model")
    for c in ("normalised", "aggregate"):
        assert np.allclose(with_rule[c], without[c])
    for lo, hi in (("normalised_lower", "normalised_upper"), ("lower", "upper")):
        assert (with_rule[lo] <= without[lo] + 1e-12).all() and (with_rule[hi] >= without[hi] - 1e-12).all()
    held = lambda a: ((a["lower"] <= a["actual"]) & (a["actual"] <= a["upper"])).mean()  # noqa: E731
    assert held(with_rule) > held(without)


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


def _unpredicted_population(seed: int, m: int = 150, n: int = 100, d: int = 16):
    """Training models whose abilities spread less than the cells' noise, and stronger new models (the generator of
    ``benchmarks/screens/noise/p4_synthetic.py``, fixed before its figures were read)."""
    rng = np.random.default_rng(seed)
    ability = np.concatenate([rng.uniform(0, 0.01, m), rng.uniform(0.05, 0.15, n)])
    return ability[:, None] * rng.uniform(0.5, 1.5, d)[None, :] + rng.normal(0, 0.03, (m + n, d))


def test_a_population_differing_by_noise_gets_the_unshrunk_reading_joined():
    from harness_ext.methods.engine.completion import LowRankCompleter

    T = _unpredicted_population(1)
    new = T[150:].copy()
    new[:, 5:] = np.nan
    w = np.full(16, 1 / 16)
    est = LowRankCompleter(random_state=0).fit(T[:150])
    p = est.predict_new_models(new, weights=w)
    assert est.calibration_share_ < LOW_SHARE
    rec = est.frontier_["unidentified"]
    assert rec.raised == np.flatnonzero(np.asarray(p.frontier) > 0).tolist() and rec.raised
    truth = T[150:] @ w
    assert ((p.aggregate_lower <= truth) & (truth <= p.aggregate_upper)).mean() > 0.5  # 0.13 without the reading
