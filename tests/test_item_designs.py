"""Item designs: stratified sampling by difficulty, allocation of a budget, tinyBenchmarks' IRT anchors.

Numerics on synthetic populations with a known truth (the stratified estimators' intervals are
design-based: over repeated draws of the items they cover a fixed model's full-task score at the nominal
rate); the command line on the committed HELM Lite slices and on synthetic item tables; hostile options
and tampered manifests give one clear error each.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness_ext.cli import main
from harness_ext.errors import HarnessExtError
from harness_ext.methods.engine.item_designs import (IRTAnchors, StratifiedAIPW, StratifiedMean, allocate,
                                                     design_estimator, difficulty_strata, draw_design,
                                                     stratified_items)
from harness_ext.methods.engine.item_estimators import AIPW
from harness_ext.methods.reduction.item_manifest import decode_ids
from harness_ext.methods.reduction.item_predict import predict_items
from harness_ext.methods.reduction.manifest import load_manifest

DATE = "2026-01-01T00-00-00.000000"


def _population(n_models=40, n_items=600, seed=0, shift=0.0):
    """0/1 answers from a 2PL model (models x items); ``shift`` moves every ability (a stronger population)."""
    items = np.random.default_rng(11)
    a, b = items.gamma(4.0, 0.3, size=n_items), items.normal(size=n_items)
    theta = np.random.default_rng(seed).normal(size=(n_models, 1)) + shift
    p = 1 / (1 + np.exp(-(theta * a - b)))
    return (np.random.default_rng(seed + 1).random(p.shape) < p).astype(float)


# -- numerics ----------------------------------------------------------------------------------------------
def test_strata_are_equal_groups_by_difficulty_and_deterministic():
    S = _population()
    labels = difficulty_strata(S, 5)
    assert np.bincount(labels).tolist() == [120] * 5
    acc = S.mean(axis=0)
    assert all(acc[labels == h].max() <= acc[labels == h + 1].min() for h in range(4))
    assert np.array_equal(labels, difficulty_strata(S, 5))


def test_allocation_sums_and_respects_bounds():
    assert allocate([100] * 5, 50, rule="proportional").tolist() == [10] * 5
    n = allocate([100] * 5, 50, sds=[0.1, 0.3, 0.5, 0.3, 0.05])
    assert n.sum() == 50 and n[2] == n.max() and n.min() >= 2
    # A small group is capped at its size; the rest goes to the others.
    assert allocate([3, 100, 1000], 50, sds=[1, 1, 1], weights=[1, 1, 1]).tolist() == [3, 24, 23]
    assert allocate([3, 5, 10], 500).tolist() == [3, 5, 10]
    with pytest.raises(ValueError, match="cannot give each"):
        allocate([10] * 5, 6)
    with pytest.raises(ValueError, match="allocation 'bogus'"):
        allocate([10], 5, rule="bogus")


@pytest.mark.parametrize("cls", [StratifiedMean, StratifiedAIPW])
@pytest.mark.parametrize("allocation", ["neyman", "proportional"])
def test_stratified_intervals_cover_a_fixed_model_over_repeated_draws(cls, allocation):
    """Design-based: the items are drawn again each time, the model's answers stay; coverage about 90%.

    The target is stronger than every source model, so a model-based interval would not be promised here.
    """
    S = _population(n_models=40, seed=0)
    y = _population(n_models=1, seed=99, shift=2.5)[0]
    truth = y.mean()
    labels = difficulty_strata(S, 5)
    from harness_ext.methods.engine.item_designs import stratum_sd

    n_h = allocate(np.bincount(labels), 50, sds=stratum_sd(S, labels), rule=allocation)
    est, cover = [], []
    for seed in range(300):
        items = stratified_items(labels, n_h, seed)
        r = cls().fit(S, items, strata=labels).predict(y[items][None, :])
        est.append(r.estimate[0])
        cover.append(r.lower[0] <= truth <= r.upper[0])
    assert abs(np.mean(est) - truth) < 0.01  # unbiased over draws (se of the mean about 0.002)
    assert 0.85 <= np.mean(cover) <= 0.99


def test_stratified_estimators_need_every_stratum_and_the_right_design():
    S = _population(n_models=20, n_items=100)
    labels = difficulty_strata(S, 4)
    items = np.flatnonzero(labels < 3)[:10]  # the easiest stratum left out
    with pytest.raises(ValueError, match="stratum 3 .* no sampled item"):
        StratifiedMean().fit(S, items, strata=labels)
    with pytest.raises(ValueError, match="needs the strata"):
        StratifiedMean().fit(S, items)
    info = {"strata": labels}
    with pytest.raises(ValueError, match="stratified design needs an estimator"):
        design_estimator("stratified", AIPW, 0.9, info, S, items)
    with pytest.raises(ValueError, match="irt_anchors"):
        design_estimator("irt-anchors", AIPW, 0.9, {"weights": np.ones(10)}, S, items)
    with pytest.raises(ValueError, match="not one of"):
        draw_design("bogus", S, 10)


def test_irt_anchors_are_cluster_weighted_and_deterministic():
    S = _population(n_models=60, n_items=300)
    idx, info = draw_design("irt-anchors", S, 20, random_state=3)
    idx2, info2 = draw_design("irt-anchors", S, 20, random_state=3)
    assert np.array_equal(idx, idx2) and np.allclose(info["weights"], info2["weights"])
    assert len(idx) == 20 and info["weights"].sum() == pytest.approx(1.0)
    est = IRTAnchors().fit(S[:40], idx, weights=info["weights"])
    r = est.predict(S[40:, idx])
    assert est.radius_ > 0 and np.all(r.upper - r.lower == pytest.approx(2 * est.radius_))
    truth = S[40:].mean(axis=1)
    assert np.mean(np.abs(r.estimate - truth)) < 0.12  # 20 items of 0/1 answers: a sample mean's sd is about 0.1
    assert np.mean((r.lower <= truth) & (truth <= r.upper)) >= 0.75


# -- the command line on item tables --------------------------------------------------------------------------
def _write_tables(folder: Path, tasks: dict, benchmark: str = "synth", metric: str = "acc") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for task, (M, names) in tasks.items():
        rows = [(m, int(i), float(M[j, i])) for j, m in enumerate(names) for i in range(M.shape[1])]
        path = folder / f"{task}.parquet"
        pd.DataFrame(rows, columns=["model", "item", "score"]).to_parquet(path, index=False)
        (folder / f"{task}.parquet.meta.yaml").write_text(
            f"items:\n  task: {task}\n  metric: {metric}\n  benchmark: {benchmark}\n")


def _store(tmp_path, n_models=30, sizes=(200, 400, 100)) -> tuple:
    names = [f"org/m{j:02d}" for j in range(n_models + 1)]
    tasks = {f"t{k}": (_population(n_models + 1, n, seed=k), names) for k, n in enumerate(sizes)}
    pop = {t: (M[:-1], names[:-1]) for t, (M, _) in tasks.items()}
    _write_tables(tmp_path / "tables", pop)
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(tmp_path / "tables")]) == 0
    new = {t: M[-1] for t, (M, _) in tasks.items()}
    return db, new


def _logs(folder: Path, model: str, scores: dict, samples: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"results_{DATE}.json").write_text(json.dumps(
        {"config": {"model": "hf", "model_args": f"pretrained={model}"}, "model_name": model, "results": {}}))
    for task, ids in samples.items():
        lines = [json.dumps({"doc_id": int(d), "filter": "none", "metrics": ["acc"], "acc": float(scores[task][d])})
                 for d in ids]
        (folder / f"samples_{task}_{DATE}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.slow
def test_items_total_is_spread_over_the_tasks_and_reported(tmp_path, capsys):
    db, _ = _store(tmp_path)
    for allocation in ("neyman", "proportional"):
        out = tmp_path / allocation
        assert main(["reduce", "--db", str(db), "--items-total", "60", "--item-allocation", allocation,
                     "--out", str(out), "--no-plot"]) == 0
        text = capsys.readouterr().out
        m = load_manifest(out)
        runs = {t: b["n_run"] for t, b in m["tasks"].items()}
        assert sum(runs.values()) == 60 and m["cost"]["items_run"] == 60 and m["cost"]["items_full"] == 700
        assert m["design"]["n_total"] == 60 and m["design"]["n_per_task"] is None
        assert "60 of 700 items (8.6%)" in text and "a total of 60 spread over the tasks" in text
        if allocation == "proportional":
            assert runs == {"t0": 17, "t1": 34, "t2": 9}
        samples = json.loads((out / "harness_ext_reduced_samples.json").read_text())
        assert {t: len(v) for t, v in samples.items()} == runs
        # These tasks have no HELM run entry: the conf says there is nothing to run, with no run line to copy.
        conf = (out / "run_entries_harness_ext_reduced.conf").read_text()
        assert "nothing for helm-run to run" in conf and "# Run: helm-run" not in conf


@pytest.mark.parametrize("design,estimator", [("stratified", "stratified_aipw"), ("stratified", "stratified_mean"),
                                              pytest.param("irt-anchors", "irt_anchors", marks=pytest.mark.slow),
                                              pytest.param("search", "search_learn", marks=pytest.mark.slow)])
def test_designs_through_reduce_and_predict(tmp_path, capsys, design, estimator):
    db, new = _store(tmp_path, sizes=(200, 300))
    out = tmp_path / "reduced"
    args = ["reduce", "--db", str(db), "--items", "30", "--item-design", design, "--out", str(out), "--no-plot"]
    assert main(args + ["--item-estimator", estimator]) == 0
    m = load_manifest(out)
    assert m["design"]["design"] == design and m["design"]["estimator"] == estimator and m["design"]["why"]
    for b in m["tasks"].values():
        assert b["n_run"] == 30 and ("strata" in b) == (design == "stratified")
        if design == "stratified":
            assert sum(b["strata"]["n_run"]) == 30 and min(b["strata"]["n_run"]) >= 2
        elif design == "irt-anchors":
            assert len(b["anchor_clusters"]) == 30 and sum(b["anchor_clusters"]) == b["n_items"]
        else:  # searched items need nothing but their ids
            assert "anchor_clusters" not in b and "strata" not in b
    samples = json.loads((out / "harness_ext_reduced_samples.json").read_text())
    run = _logs(tmp_path / "run", "org/new", new, samples)
    pred = predict_items(m, [run])
    truth = {t: float(v.mean()) for t, v in new.items()}
    for row in pred.table.to_dict("records"):
        assert row["n_used"] == 30 and row["raw_lower"] < row["raw"] < row["raw_upper"]
        # Model-based: a regression from 30 models may miss by more, but its interval covers.
        tol = 0.2 if design != "search" else row["raw_upper"] - row["raw_lower"]
        assert abs(row["raw"] - truth[row["dataset"]]) < tol, (row, truth)
    # Same inputs and seed: the same manifest bytes.
    again = tmp_path / "again"
    assert main([str(again) if a == str(out) else a for a in args] + ["--item-estimator", estimator]) == 0
    assert (again / "manifest.json").read_bytes() == (out / "manifest.json").read_bytes()
    # An estimator that ignores the design is refused with its reason, at predict too.
    capsys.readouterr()
    assert main(["predict", "-m", str(out), str(run), "--item-estimator", "aipw"]) != 0
    assert "aipw" in capsys.readouterr().err


def test_hostile_design_options_give_one_clear_error(tmp_path, capsys):
    db, _ = _store(tmp_path, sizes=(100, 100))
    base = ["reduce", "--db", str(db), "--out", str(tmp_path / "o"), "--no-plot"]
    cases = [(["--items-total", "3"], "need at least 4 items"),
             (["--items", "10", "--items-total", "40"], "either --items N"),
             (["--items", "10", "--item-design", "stratified", "--item-strata", "0"], "--item-strata 0"),
             (["--items", "10", "--item-design", "stratified", "--item-estimator", "aipw"], "does not fit the stratified"),
             (["--items", "10", "--item-estimator", "stratified_mean"], "does not fit the random"),
             (["--items-total", "40", "--item-design", "anchors"], "--items-total spreads items")]
    for extra, reason in cases:
        assert main(base + extra) != 0, extra
        err = capsys.readouterr().err
        assert reason in err, (extra, err)
        assert not (tmp_path / "o" / "manifest.json").exists()


def _reduced(tmp_path, db, n_items: int, design: str) -> tuple:
    """``(manifest, out folder)`` of ``reduce --items n_items --item-design design`` on ``db``."""
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", str(n_items), "--item-design", design, "--out", str(out),
                 "--no-plot"]) == 0
    return load_manifest(out), out


def test_tampered_strata_are_refused_naming_the_file(tmp_path):
    db, _ = _store(tmp_path, sizes=(100,))
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "20", "--item-design", "stratified", "--out", str(out),
                 "--no-plot"]) == 0
    m = json.loads((out / "manifest.json").read_text())
    for change, reason in ((lambda b: b["strata"].update(labels="@@"), "not base64"),
                           (lambda b: b["strata"].update(sizes=[1, 2]), "do not match"),
                           (lambda b: b["strata"].update(labels="AAAA"), "stratum labels for 100 items")):
        bad = json.loads(json.dumps(m))
        change(bad["tasks"]["t0"])
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        with pytest.raises(HarnessExtError, match=f"bad.json.*{reason}"):
            load_manifest(path)


def test_the_stratified_sample_is_the_one_written_for_lm_eval(tmp_path):
    db, _ = _store(tmp_path, sizes=(200,))
    m, out = _reduced(tmp_path, db, 25, "stratified")
    b = m["tasks"]["t0"]
    assert json.loads((out / "harness_ext_reduced_samples.json").read_text())["t0"] == decode_ids(b["sample"]).tolist()


def test_a_partial_log_that_misses_a_stratum_is_said_not_fatal(tmp_path):
    db, new = _store(tmp_path, sizes=(200,))
    m, out = _reduced(tmp_path, db, 20, "stratified")
    from harness_ext.methods.reduction.item_design_plan import design_info

    b = m["tasks"]["t0"]
    sample = decode_ids(b["sample"])
    labels = design_info(b, b["n_items"], len(sample), "t0")["strata"]
    kept = sample[labels[sample] != 0]  # the hardest stratum's items not logged
    pred = predict_items(m, [_logs(tmp_path / "run", "org/new", new, {"t0": kept})])
    assert np.isnan(pred.table["raw"].iloc[0])
    assert any("stratum 0" in w and "no sampled item" in w for w in pred.warnings)


def test_quality_items_measures_the_designs_by_label():
    from conftest import import_benchmark

    mod = import_benchmark("quality_items")
    scores = _population(n_models=40, n_items=200)
    out = mod.run_one(scores, "extrapolation", 30, 0, ["aipw"], designs=["stratified", "stratified:proportional"])
    assert set(out) == {"aipw", "stratified/stratified_aipw", "stratified/stratified_mean",
                        "stratified:proportional/stratified_aipw", "stratified:proportional/stratified_mean"}
    err, cover, width = out["stratified:proportional/stratified_aipw"]
    assert err.shape == cover.shape == width.shape == (12,) and np.all(width > 0)


@pytest.mark.slow
def test_a_model_based_estimate_beyond_the_population_is_said(tmp_path):
    db, new = _store(tmp_path, sizes=(200,))
    m, out = _reduced(tmp_path, db, 30, "search")
    samples = json.loads((out / "harness_ext_reduced_samples.json").read_text())
    # A model that answers every sampled item right: stronger than every population model.
    pred = predict_items(m, [_logs(tmp_path / "run", "org/strong", {"t0": np.ones(200)}, samples)])
    assert any("outside the population's range" in w and "design-based interval" in w for w in pred.warnings)
    # One like the population is not flagged.
    pred = predict_items(m, [_logs(tmp_path / "run2", "org/new", new, samples)])
    assert not any("outside the population's range" in w for w in pred.warnings)
