"""The item-level loop: reduce --items N on item-level results, a new model's per-item logs, predict.

Fast tests use real lm-eval 0.4.13 output (tests/fixtures/samples: results and samples_*.jsonl written
by lm-eval itself). The slow test runs the whole loop on the shared HELM Lite and Open LLM Leaderboard
item tables (skipped without them): reduce on the training models, the held-out models' items written
as lm-eval per-sample logs, predict, error and coverage checked, inside the population and at its frontier.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import harness_ext as hx
from harness_ext.cli import main
from harness_ext.errors import HarnessExtError
from harness_ext.methods.reduction.item_manifest import decode_ids, decode_scores, encode_ids, encode_scores
from harness_ext.methods.reduction.manifest import load_manifest
from harness_ext.methods.reduction.item_predict import predict_items

from conftest import SHARED_DATA, load_group_yaml

HERE = Path(__file__).resolve().parent
LOGS = HERE / "fixtures" / "samples" / "lm_eval_output"
SHARED_ITEMS = SHARED_DATA / "items"
DATE = "2026-01-01T00-00-00.000000"


def _population(tmp_path, models=("toy__lm-small", "toy__lm-medium")) -> Path:
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", *(str(LOGS / m) for m in models)]) == 0
    return db


@pytest.mark.parametrize("metric,task", [("acc", "toy_arith_mc"), ("exact_match,strict-match", "toy_arith_gen")])
def test_every_item_gives_the_harness_score_exactly(tmp_path, capsys, metric, task):
    """--items at least the task's size lists every item; predict then returns lm-eval's own task score."""
    db = _population(tmp_path)
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "18", "--metric", metric, "--out", str(out)]) == 0
    m = load_manifest(out)
    assert list(m["tasks"]) == [task] and m["tasks"][task]["n_run"] == m["tasks"][task]["n_items"] == 18
    assert json.loads((out / "harness_ext_reduced_samples.json").read_text()) == {task: list(range(18))}
    run = tmp_path / "run"
    shutil.copytree(LOGS / "toy__lm-large", run)
    pred_json = tmp_path / "pred.json"
    assert main(["predict", "-m", str(out), str(run), "--json", str(pred_json)]) == 0
    capsys.readouterr()
    [results] = run.glob("results_*.json")
    want = json.loads(results.read_text())["results"][task][metric if "," in metric else f"{metric},none"]
    # The estimate is the harness's float exactly; the JSON outputs round to 10 digits.
    pred = predict_items(load_manifest(out), [run])
    [row] = pred.table.to_dict("records")
    assert row["observed"] and row["raw"] == want and row["raw_lower"] == row["raw_upper"] == want
    [agg] = pred.aggregate.to_dict("records")
    assert agg["aggregate"] == want and agg["lower"] == agg["upper"] == want
    [row] = json.loads(pred_json.read_text())["datasets"]
    assert row["raw"] == pytest.approx(want, abs=1e-10)
    lm = json.loads((run / "harness_ext_prediction_harness_ext_reduced.json").read_text())
    assert lm["results"][task][f"{metric.split(',')[0]},predicted"] == pytest.approx(want, abs=1e-10)


@pytest.mark.slow
def test_random_items_give_an_estimate_with_an_interval(tmp_path, capsys):
    db = _population(tmp_path)
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "8", "--metric", "acc", "--out", str(out), "--seed", "3"]) == 0
    text = capsys.readouterr().out
    assert "8 of 18 items" in text and "frontier" in text
    # 0/1 answers: the expected errors and widths are printed in points, as the harness's accuracy in percent
    assert "(points, 0-100)" in text
    assert (out / "expected_error_items.png").stat().st_size > 0  # the same figures as a plot
    m = load_manifest(out)
    b = m["tasks"]["toy_arith_mc"]
    sample = decode_ids(b["sample"])
    assert len(sample) == 8 and m["design"]["estimator"] == "crosstask" and m["cost"] == {
        "items_run": 8, "items_full": 18, "tasks": 1}
    assert json.loads((out / "harness_ext_reduced_samples.json").read_text()) == {"toy_arith_mc": sample.tolist()}
    assert m["design"]["estimator_why"].startswith("crosstask: ")  # why the default, recorded
    assert "--samples" in (out / "harness_ext_reduced.yaml").read_text()
    # Same inputs and seed: the same manifest, byte for byte.
    again = tmp_path / "again"
    assert main(["reduce", "--db", str(db), "--items", "8", "--metric", "acc", "--out", str(again), "--seed", "3"]) == 0
    assert (again / "manifest.json").read_bytes() == (out / "manifest.json").read_bytes()
    run = tmp_path / "run"
    shutil.copytree(LOGS / "toy__lm-large", run)
    # What lm_eval --samples runs: only the drawn items (the fixture's log has them all).
    [log] = run.glob("samples_toy_arith_mc_*.jsonl")
    kept = [line for line in log.read_text().splitlines() if json.loads(line)["doc_id"] in set(sample.tolist())]
    log.write_text("\n".join(kept) + "\n")
    # (random_learn's conformal interval needs more than two population models; only design-based ones here)
    for estimator in (None, "sample_mean"):
        pj = tmp_path / f"pred_{estimator}.json"
        args = ["predict", "-m", str(out), str(run), "--json", str(pj)]
        assert main(args + (["--item-estimator", estimator] if estimator else [])) == 0
        [row] = json.loads(pj.read_text())["datasets"]
        assert not row["observed"] and row["n_used"] == 8
        assert 0 <= row["raw_lower"] < row["raw"] < row["raw_upper"] <= 1
    # The plot's task axis is the harness's metric: item scores are not normalised (it once said "normalised").
    fig = hx.predict(out, run).plot()
    assert fig.axes[0].get_xlabel() == "task score (acc, the harness's metric)"
    assert "observed (subset)" not in [t.get_text() for t in fig.legends[0].get_texts()]  # nothing observed
    # An Every Eval Ever record carries the benchmark estimate with its interval and how it was made.
    assert main(["predict", "-m", str(out), str(run), "--eee", str(tmp_path / "eee")]) == 0
    [rec] = (tmp_path / "eee").glob("*.json")
    bench = json.loads(rec.read_text())["evaluation_results"][-1]
    assert "8 of 18 items" in bench["evaluation_name"]
    assert "item estimator crosstask" in bench["score_details"]["uncertainty"]["confidence_interval"]["method"]
    # The estimator that picks its own items is refused with a reason.
    capsys.readouterr()
    assert main(["predict", "-m", str(out), str(run), "--item-estimator", "anchor_weighted"]) != 0
    assert "picks its own items" in capsys.readouterr().err


def test_the_groups_row_in_lm_eval_is_the_estimate_from_the_runs_logged_items(tmp_path, capsys, monkeypatch):
    """The shipped aggregation, loaded as lm-eval loads it, turns the run's logged samples into predict's estimate."""
    import importlib.util

    from conftest import load_group_yaml

    db = _population(tmp_path)
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "8", "--metric", "acc", "--out", str(out), "--seed", "3"]) == 0
    capsys.readouterr()
    group = load_group_yaml(out / "harness_ext_reduced.yaml")
    assert group["aggregate_metric_list"] == [{"metric": "acc", "aggregation": "!function harness_ext_estimate.estimate",
                                               "weight_by_size": False}]
    assert group["group_alias"].endswith("(estimated from 8 of 18 items)")
    spec = importlib.util.spec_from_file_location("harness_ext_estimate", out / "harness_ext_estimate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sample = set(decode_ids(load_manifest(out)["tasks"]["toy_arith_mc"]["sample"]).tolist())
    run = tmp_path / "run"
    shutil.copytree(LOGS / "toy__lm-large", run)
    [log] = run.glob("samples_toy_arith_mc_*.jsonl")
    logged = [r for r in map(json.loads, log.read_text().splitlines()) if r["doc_id"] in sample]
    log.write_text("".join(json.dumps(r) + "\n" for r in logged))
    [agg] = predict_items(load_manifest(out), [run]).aggregate.to_dict("records")
    plain = {"alias": group["group_alias"], "acc,none": 0.5, "acc_stderr,none": 0.1}
    row = module.estimate(dict(plain), {}, ["toy_arith_mc"], "acc", samples={"toy_arith_mc": logged})
    assert row["acc,estimate"] == pytest.approx(agg["aggregate"], abs=1e-12) and "acc,none" not in row
    assert (row["acc_lower,estimate"], row["acc_upper,estimate"]) == pytest.approx((agg["lower"], agg["upper"]), abs=1e-12)
    # Without --log_samples lm-eval keeps no per-item results: the plain mean stays, and says what it is.
    row = module.estimate(dict(plain), {}, ["toy_arith_mc"], "acc", samples={"toy_arith_mc": []})
    assert row["acc,none"] == 0.5 and "not the estimate" in row["alias"] and "acc,estimate" not in row
    # A task logged under another metric only: no estimate for it, so none for the benchmark; the plain mean stays.
    other = [dict(r, acc_norm=r["acc"], metrics=["acc_norm"]) for r in logged]
    row = module.estimate(dict(plain), {}, ["toy_arith_mc"], "acc", samples={"toy_arith_mc": other})
    assert row["acc,none"] == 0.5 and "not the estimate" in row["alias"] and "acc,estimate" not in row
    # An older harness-ext where lm-eval runs (a helper this folder needs is missing): the alias says to upgrade.
    import harness_ext.methods.reduction.item_predict as item_predict

    import harness_ext

    monkeypatch.delattr(item_predict, "predict_logged_items")
    row = module.estimate(dict(plain), {}, ["toy_arith_mc"], "acc", samples={"toy_arith_mc": logged})
    # The same version as wrote the folder: the import error itself (a dependency), not an upgrade.
    assert row["acc,none"] == 0.5 and "(ImportError: " in row["alias"] and "acc,estimate" not in row
    monkeypatch.setattr(harness_ext, "__version__", "0.0.1")
    row = module.estimate(dict(plain), {}, ["toy_arith_mc"], "acc", samples={"toy_arith_mc": logged})
    assert "upgrade harness-ext 0.0.1: this folder was written by " in row["alias"] and "acc,estimate" not in row


def test_tasks_with_different_metrics_get_the_mean_score_estimate_as_their_row(tmp_path, capsys):
    """acc and exact_match tasks: the row estimates their mean score; without the estimate it holds no score."""
    import importlib.util

    db = _population(tmp_path)
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "8", "--out", str(out), "--seed", "3", "--no-plot"]) == 0
    capsys.readouterr()
    manifest = load_manifest(out)
    assert len({b["metric"] for b in manifest["tasks"].values()}) == 2
    spec = importlib.util.spec_from_file_location("harness_ext_estimate", out / "harness_ext_estimate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    run = tmp_path / "run"
    shutil.copytree(LOGS / "toy__lm-large", run)
    samples = {}
    for task, block in manifest["tasks"].items():
        drawn = set(decode_ids(block["sample"]).tolist())
        [log] = run.glob(f"samples_{task}_*.jsonl")
        samples[task] = [r for r in map(json.loads, log.read_text().splitlines()) if r["doc_id"] in drawn]
        log.write_text("".join(json.dumps(r) + "\n" for r in samples[task]))
    [agg] = predict_items(manifest, [run]).aggregate.to_dict("records")
    metric = load_group_yaml(out / "harness_ext_reduced.yaml")["aggregate_metric_list"][0]["metric"]
    plain = {"alias": "lm_eval", f"{metric},none": 0.5, f"{metric}_stderr,none": 0.1}
    row = module.estimate(dict(plain), {}, list(samples), metric, samples=samples)
    assert agg["metric"] == "mean score" and row["mean_score,estimate"] == pytest.approx(agg["aggregate"], abs=1e-12)
    assert f"{metric},none" not in row
    row = module.estimate(dict(plain), {}, list(samples), metric, samples={})
    assert row.keys() == {"alias"} and "no estimate" in row["alias"]


def test_item_scores_outside_0_1_are_refused_by_reduce_naming_the_file(tmp_path, capsys):
    """Scores of -1/0 ingest (a table may hold any numbers) but made every figure NaN and a manifest predict
    refused; reduce now stops with the task, the range and the file, and writes nothing."""
    rng = np.random.default_rng(0)
    table = tmp_path / "bench" / "signed.csv"
    table.parent.mkdir()
    rows = [(f"m{m}", i, -1 if rng.random() < 0.5 else 0) for m in range(6) for i in range(20)]
    table.write_text("model,item,score\n" + "".join(f"{m},{i},{v}\n" for m, i, v in rows))
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(table.parent)]) == 0
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "5", "--out", str(out), "--no-plot"]) != 0
    err = capsys.readouterr().err
    assert "signed: item scores (score) range from -1 to 0, outside [0, 1]" in err and "signed.csv" in err
    assert not out.exists()


def test_predict_says_what_in_a_log_it_did_not_use(tmp_path, capsys):
    """A log with an id the task lacks, an item logged twice with two scores, and a task logged under another
    metric: each is said (the estimate was silently the same)."""
    db = _population(tmp_path)
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "8", "--metric", "acc", "--out", str(out), "--seed", "3"]) == 0
    capsys.readouterr()
    manifest = load_manifest(out)
    run = tmp_path / "run"
    shutil.copytree(LOGS / "toy__lm-large", run)
    [log] = run.glob("samples_toy_arith_mc_*.jsonl")
    rows = [json.loads(x) for x in log.read_text().splitlines()]
    drawn = int(decode_ids(manifest["tasks"]["toy_arith_mc"]["sample"])[0])
    first = next(r for r in rows if r["doc_id"] == drawn)
    rows += [dict(first, doc_id=99999), dict(first, acc=1.0 - first["acc"])]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    warnings = predict_items(manifest, [run]).warnings
    assert any("1 of them with a different score" in w for w in warnings), warnings
    assert any("1 logged ids not items of the task (it has 18) not used" in w for w in warnings), warnings
    log.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "acc"} | {"acc_x": r["acc"],
                                                                                      "metrics": ["acc_x"]}) + "\n"
                           for r in rows))
    # The manifest's one task logged only under another metric: nothing to estimate, said as one error.
    with pytest.raises(HarnessExtError, match=r"tasks are toy_arith_mc \(acc\); the logs hold .*toy_arith_mc \(acc_x\)"):
        predict_items(manifest, [run])


def test_predict_refuses_logs_of_none_of_the_manifests_tasks(tmp_path, capsys):
    """A run of other tasks than the manifest's (lm-eval's ``leaderboard_musr_*`` subtasks against a population stored
    as one table task ``musr`` scored ``acc``) matched nothing: predict wrote a prediction of nulls and exited 0. It
    is one clear error naming both sides, and nothing is written."""
    db = _population(tmp_path)
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "8", "--metric", "acc", "--out", str(out), "--seed", "3"]) == 0
    run = tmp_path / "run"
    shutil.copytree(LOGS / "toy__lm-large", run)
    for log in run.glob("samples_*.jsonl"):  # the same items, logged under lm-eval task names the manifest lacks
        log.rename(log.with_name(log.name.replace("samples_toy_", "samples_leaderboard_toy_")))
    capsys.readouterr()
    with pytest.raises(HarnessExtError, match=r"no logged item is of a task of the manifest under its metric.*"
                                              r"manifest's tasks are toy_arith_mc \(acc\).*the logs hold "
                                              r"leaderboard_toy_arith_gen \(.*leaderboard_toy_arith_mc \(acc, acc_norm\)"):
        predict_items(load_manifest(out), [run])
    assert main(["predict", "-m", str(out), str(run)]) != 0
    assert "no logged item is of a task of the manifest" in capsys.readouterr().err
    assert not list(run.glob("harness_ext_prediction_*.json"))


def test_a_task_not_logged_has_no_standard_error_in_the_results_file(tmp_path, capsys):
    """A run missing one of the manifest's tasks: its row in the lm-eval results file was null with a standard error
    of 0.0, a certainty about nothing. Its standard error is null too; the task measured whole keeps its 0."""
    db = _population(tmp_path)
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "8", "--out", str(out), "--seed", "3"]) == 0
    assert len(load_manifest(out)["tasks"]) == 2
    run = tmp_path / "run"
    shutil.copytree(LOGS / "toy__lm-large", run)
    [gen] = run.glob("samples_toy_arith_gen_*.jsonl")
    gen.unlink()
    capsys.readouterr()
    assert main(["predict", "-m", str(out), str(run)]) == 0
    assert "no per-item" in capsys.readouterr().err
    [written] = run.glob("harness_ext_prediction_*.json")
    rows = json.loads(written.read_text())["results"]
    missing = next(v for k, v in rows.items() if k.startswith("toy_arith_gen"))
    logged = next(v for k, v in rows.items() if k.startswith("toy_arith_mc"))
    assert [v for k, v in missing.items() if k != "alias"] == [None] * 4, missing
    # The run logged every item of the other task: measured, its standard error a real 0.
    assert logged["acc,predicted"] is not None and logged["acc_stderr,predicted"] == 0.0, logged


def test_encodings_round_trip_and_bad_manifests_are_refused(tmp_path):
    ids = np.array([0, 1, 2, 5, 6, 9])
    assert encode_ids(ids) == [[0, 3], [5, 7], [9, 10]]
    assert decode_ids(encode_ids(ids)).tolist() == ids.tolist()
    rng = np.random.default_rng(0)
    B = (rng.random((7, 13)) < 0.5).astype(float)
    assert np.array_equal(decode_scores(encode_scores(B)), B) and encode_scores(B)["encoding"] == "bits"
    F = rng.random((3, 4))
    assert np.array_equal(decode_scores(encode_scores(F)), F)
    db = _population(tmp_path)
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "8", "--metric", "acc", "--out", str(out)]) == 0
    m = json.loads((out / "manifest.json").read_text())
    m["tasks"]["toy_arith_mc"]["population"]["scores"]["shape"] = [3, 18]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(m))
    with pytest.raises(HarnessExtError, match="bad.json.*toy_arith_mc"):
        load_manifest(bad)
    # What predict is given: one clear error each.
    manifest = load_manifest(out)
    for given, reason in ((tmp_path / "missing", "no such file"), (bad, "not a per-item log"),
                          (tmp_path / "reduced", "no per-item logs")):
        with pytest.raises(HarnessExtError, match=reason):
            predict_items(manifest, [given])


# -- the whole loop on the shared item tables ---------------------------------------------------------------
def _write_logs(folder: Path, model: str, task_scores: dict, samples: dict) -> None:
    """A held-out model's items as lm-eval writes them: samples_<task>_<date>.jsonl beside results_<date>.json."""
    folder.mkdir(parents=True)
    (folder / f"results_{DATE}.json").write_text(json.dumps(
        {"config": {"model": "hf", "model_args": f"pretrained={model}"}, "model_name": model, "results": {}}))
    for task, ids in samples.items():
        s = task_scores[task]
        lines = [json.dumps({"doc_id": int(d), "filter": "none", "metrics": ["acc"], "acc": float(s[d])}) for d in ids]
        (folder / f"samples_{task}_{DATE}.jsonl").write_text("\n".join(lines) + "\n")


def _loop(tmp_path, bench: str, held_out, n_items: int = 50, extra=()):
    tables = {p.stem: pd.read_parquet(p) for p in sorted((SHARED_ITEMS / bench).glob("*.parquet"))}
    train_dir = tmp_path / bench
    train_dir.mkdir()
    for task, t in tables.items():
        t[~t["model"].isin(held_out)].to_parquet(train_dir / f"{task}.parquet", index=False)
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(train_dir)]) == 0
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", str(n_items), "--out", str(out), "--no-plot", *extra]) == 0
    samples = json.loads((out / "harness_ext_reduced_samples.json").read_text())
    truth = {}
    for i, model in enumerate(held_out):
        scores = {task: t[t["model"] == model].set_index("item")["score"] for task, t in tables.items()}
        _write_logs(tmp_path / "runs" / f"m{i}", model, scores, samples)
        truth[model] = {task: float(s.mean()) for task, s in scores.items()}
    pj = tmp_path / "pred.json"
    assert main(["predict", "-m", str(out), str(tmp_path / "runs"), "--json", str(pj), "--no-lm-eval-results"]) == 0
    pred = json.loads(pj.read_text())
    rows = pd.DataFrame(pred["datasets"])
    rows["truth"] = [truth[m][t] for m, t in zip(rows["model"], rows["dataset"])]
    agg = pd.DataFrame(pred["aggregate"])
    agg["truth"] = [np.mean(list(truth[m].values())) for m in agg["model"]]
    return rows, agg


def _splits(bench: str, seed: int = 0) -> dict:
    tables = [pd.read_parquet(p) for p in sorted((SHARED_ITEMS / bench).glob("*.parquet"))]
    common = sorted(set.intersection(*(set(t["model"]) for t in tables)))
    strength = pd.concat([t.groupby("model")["score"].mean() for t in tables], axis=1).loc[common].mean(axis=1)
    order = list(strength.sort_values().index)
    rng = np.random.default_rng(seed)
    return {"interpolation": list(rng.choice(common, size=max(8, len(common) // 4), replace=False)),
            # The frontier: the strongest 30% held out, the rest (weaker models) train.
            "frontier": order[len(order) - int(round(0.3 * len(order))):]}


@pytest.mark.slow
@pytest.mark.parametrize("bench", ["helm_lite", "open_llm_v2"])
@pytest.mark.parametrize("split", ["interpolation", "frontier"])
def test_the_whole_loop_on_the_shared_item_tables(tmp_path, capsys, bench, split):
    if not (SHARED_ITEMS / bench).is_dir():
        pytest.skip(f"the shared item tables are not at {SHARED_ITEMS / bench}")
    held_out = _splits(bench)[split]
    rows, agg = _loop(tmp_path, bench, held_out)
    capsys.readouterr()
    err = (rows["raw"] - rows["truth"]).abs()
    cover = ((rows["raw_lower"] <= rows["truth"]) & (rows["truth"] <= rows["raw_upper"])).mean()
    b_err = (agg["aggregate"] - agg["truth"]).abs()
    b_cover = ((agg["lower"] <= agg["truth"]) & (agg["truth"] <= agg["upper"])).mean()
    with capsys.disabled():
        print(f"\n{bench} {split}: {len(agg)} held-out models, 50 items per task; tasks: mean |error| "
              f"{100 * err.mean():.2f} points, 90% coverage {cover:.2f}; benchmark: mean |error| "
              f"{100 * b_err.mean():.2f} points, coverage {b_cover:.2f}, mean width {100 * (agg['upper'] - agg['lower']).mean():.2f}")
    assert len(agg) == len(held_out)
    assert err.mean() < 0.06 and b_err.mean() < 0.03
    assert cover >= 0.8 and b_cover >= 0.75


@pytest.mark.slow
def test_items_chosen_on_cross_validated_error_through_the_loop(tmp_path, capsys):
    """``--item-design search`` on the Open LLM Leaderboard v2 tables, models like the population held out."""
    if not (SHARED_ITEMS / "open_llm_v2").is_dir():
        pytest.skip(f"the shared item tables are not at {SHARED_ITEMS / 'open_llm_v2'}")
    held_out = _splits("open_llm_v2")["interpolation"]
    rows, agg = _loop(tmp_path, "open_llm_v2", held_out, extra=("--item-design", "search"))
    text = capsys.readouterr().out
    assert "items chosen on cross-validated error" in text and "estimator search_learn" in text
    m = json.loads((tmp_path / "reduced" / "manifest.json").read_text())
    assert m["design"]["design"] == "search" and "random search + learn" in m["design"]["why"]
    err = (rows["raw"] - rows["truth"]).abs()
    cover = ((rows["raw_lower"] <= rows["truth"]) & (rows["truth"] <= rows["raw_upper"])).mean()
    b_err = (agg["aggregate"] - agg["truth"]).abs()
    with capsys.disabled():
        print(f"\nopen_llm_v2 interpolation, search design: {len(agg)} held-out models; tasks: mean |error| "
              f"{100 * err.mean():.2f} points, 90% coverage {cover:.2f}; benchmark: mean |error| {100 * b_err.mean():.2f}")
    assert len(agg) == len(held_out) and err.mean() < 0.06 and cover >= 0.8


# -- through lm-eval's own command line ---------------------------------------------------------------------
@pytest.mark.slow
def test_lm_eval_runs_the_drawn_items_and_predict_reads_its_logs(tmp_path, capsys):
    """Stand-in models in real lm-eval: the population's logs, reduce --items, lm_eval --samples, predict.

    With every item listed, predict gives lm-eval's own task scores exactly; with 25 of 100 items it
    gives an estimate with an interval from the logs of exactly those items.
    """
    pytest.importorskip("lm_eval", reason="lm-eval not installed (pip install 'harness-ext[lmeval]')")
    import sys

    sys.path.insert(0, str(HERE))
    import lm_eval_standin
    from test_lm_eval_end_to_end import _run

    population = list(range(1, 13))
    new = lm_eval_standin.typical_seed(population)
    tasks = lm_eval_standin.write_tasks(tmp_path / "tasks", n_tasks=3)
    _run(["population", json.dumps({"tasks_dir": str(tmp_path / "tasks"), "out": str(tmp_path / "population"),
                                    "seeds": population, "tasks": tasks})], tmp_path)
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(tmp_path / "population")]) == 0
    local = ["--local-data", str(tmp_path / "tasks")]
    runs, shown = {}, {}
    for n in (100, 25):
        out = tmp_path / f"reduced_{n}"
        assert main(["reduce", "--db", str(db), "--items", str(n), "--out", str(out), *local]) == 0
        runs[n] = tmp_path / f"run_{n}"
        shown[n] = _run(["cli", "--model", "standin", "--model_args", f"pretrained=standin/m{new},seed={new}",
                         "--include_path", str(out), "--tasks", "harness_ext_reduced", "--output_path", str(runs[n]),
                         "--samples", str(out / "harness_ext_reduced_samples.json"), "--log_samples"], tmp_path).stdout
    capsys.readouterr()
    [results] = runs[100].rglob("results_*.json")
    want = {t: json.loads(results.read_text())["results"][t]["acc,none"] for t in tasks}
    full = predict_items(load_manifest(tmp_path / "reduced_100"), [runs[100]])
    got = dict(zip(full.table["dataset"], full.table["raw"]))
    assert got == want and full.table["observed"].all()
    part = predict_items(load_manifest(tmp_path / "reduced_25"), [runs[25]])
    assert (part.table["n_used"] == 25).all() and not part.table["observed"].any()
    assert ((part.table["raw_lower"] < part.table["raw"]) & (part.table["raw"] < part.table["raw_upper"])).all()
    agg = part.aggregate.iloc[0]
    truth = float(np.mean(list(want.values())))
    with capsys.disabled():
        print(f"\nlm-eval items: 25 of 100 items x 3 tasks: {agg['aggregate']:.4f} [{agg['lower']:.4f}, "
              f"{agg['upper']:.4f}] (90%), lm-eval's full score {truth:.4f}")
    assert abs(agg["aggregate"] - truth) < 0.1
    # lm-eval's own table and results file: the group's row is the same estimate, made from the run's logged items.
    rows = {n: json.loads(next(runs[n].rglob("results_*.json")).read_text())["results"]["harness_ext_reduced"]
            for n in (100, 25)}
    assert rows[100]["acc,estimate"] == pytest.approx(truth, abs=1e-12)
    assert rows[100]["acc_lower,estimate"] == rows[100]["acc_upper,estimate"] == rows[100]["acc,estimate"]
    assert rows[25]["acc,estimate"] == pytest.approx(agg["aggregate"], abs=1e-9)
    assert (rows[25]["acc_lower,estimate"], rows[25]["acc_upper,estimate"]) == pytest.approx(
        (agg["lower"], agg["upper"]), abs=1e-9)
    assert "acc,none" not in rows[25] and "not the estimate" not in rows[25]["alias"]
    lines = [x.replace(" ", "") for x in shown[25].splitlines() if x.startswith(f"|{rows[25]['alias']}")]
    assert lines and all("|estimate|" in x for x in lines), shown[25][-3000:]


@pytest.mark.slow
def test_lm_eval_shows_the_mean_score_estimate_when_the_tasks_metrics_differ(tmp_path, capsys):
    """Tasks scored by acc and by acc_norm: lm-eval's plain group row would average the acc tasks only, so the
    row is the estimate of the tasks' mean score (``mean_score,estimate``), equal to predict's."""
    pytest.importorskip("lm_eval", reason="lm-eval not installed (pip install 'harness-ext[lmeval]')")
    import sys

    sys.path.insert(0, str(HERE))
    import lm_eval_standin
    from test_lm_eval_end_to_end import _run

    population = list(range(1, 9))
    new = lm_eval_standin.typical_seed(population)
    tasks = lm_eval_standin.write_tasks(tmp_path / "tasks", n_tasks=2, metrics=("acc", "acc_norm"))
    _run(["population", json.dumps({"tasks_dir": str(tmp_path / "tasks"), "out": str(tmp_path / "population"),
                                    "seeds": population, "tasks": tasks})], tmp_path)
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(tmp_path / "population")]) == 0
    out, run = tmp_path / "reduced", tmp_path / "run"
    assert main(["reduce", "--db", str(db), "--items", "25", "--out", str(out), "--no-plot",
                 "--local-data", str(tmp_path / "tasks")]) == 0
    manifest = load_manifest(out)
    assert {b["metric"] for b in manifest["tasks"].values()} == {"acc", "acc_norm"}
    _run(["cli", "--model", "standin", "--model_args", f"pretrained=standin/m{new},seed={new}",
          "--include_path", str(out), "--tasks", "harness_ext_reduced", "--output_path", str(run),
          "--samples", str(out / "harness_ext_reduced_samples.json"), "--log_samples"], tmp_path)
    capsys.readouterr()
    [agg] = predict_items(manifest, [run]).aggregate.to_dict("records")
    assert agg["metric"] == "mean score"
    row = json.loads(next(run.rglob("results_*.json")).read_text())["results"]["harness_ext_reduced"]
    assert row["mean_score,estimate"] == pytest.approx(agg["aggregate"], abs=1e-9)
    assert (row["mean_score_lower,estimate"], row["mean_score_upper,estimate"]) == pytest.approx(
        (agg["lower"], agg["upper"]), abs=1e-9)
    assert not [k for k in row if k.startswith("acc")] and "estimated from 50 of 200 items" in row["alias"]


def test_predict_refuses_an_adapter_for_an_item_level_manifest(tmp_path, capsys):
    """An item-level manifest is predicted from per-sample logs, which no adapter reads: --adapter is refused, not ignored."""
    db = _population(tmp_path)
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "8", "--metric", "acc", "--out", str(out), "-q"]) == 0
    capsys.readouterr()
    assert main(["predict", "-m", str(out), str(LOGS / "toy__lm-large"), "--adapter", "lm_eval_v04"]) == 1
    assert "item-level manifest" in capsys.readouterr().err


def test_a_new_models_table_naming_no_metric_is_told_to_name_it():
    """A new model's item table without its sidecar has its 0/1 scores read as ``acc``; the population's table named
    ``exact_match`` (HELM Lite's). The one error says which tasks are logged under another metric and how to name
    it (found as a new user: the error named only both sides)."""
    from harness_ext.methods.reduction.item_predict import _check_some_log_matches

    manifest = {"tasks": {"gsm": {"metric": "exact_match"}, "mmlu": {"metric": "exact_match"}}}
    long = pd.DataFrame({"task": ["gsm", "mmlu", "other"], "metric": ["acc", "acc", "acc"]})
    with pytest.raises(HarnessExtError, match=r"2 tasks of the manifest under another metric \(gsm: acc, not "
                                              r"exact_match; mmlu: acc, not exact_match\): a new model's item table "
                                              r"that names no metric .*`metric:` in the table's sidecar"):
        _check_some_log_matches(manifest, long)
    long["metric"] = "acc_norm"  # lm-eval logs under another metric: the tasks said, no word of tables
    with pytest.raises(HarnessExtError) as exc:
        _check_some_log_matches(manifest, long)
    assert "gsm: acc_norm, not exact_match" in str(exc.value) and "sidecar" not in str(exc.value).split("Items are")[0]
