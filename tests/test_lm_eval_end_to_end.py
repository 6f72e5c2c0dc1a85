"""The whole loop in real lm-evaluation-harness, offline: population -> ingest -> reduce -> lm_eval CLI -> predict.

Twelve local JSON-lines tasks, deterministic stand-in models registered in lm-eval's
model registry (tests/lm_eval_standin.py; no torch, no downloads). The population's
results are written by lm-eval's own ``simple_evaluate`` + ``EvaluationTracker``; the
new model runs the reduced folder through lm-eval's own command line
(``--include_path reduced --tasks harness_ext_reduced --log_samples``), which needs
the task YAMLs ``reduce`` rebuilt from the results files; ``predict`` is checked
against the new model's full run. Figures are printed with ``-s``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from harness_ext.cli import main

pytest.importorskip("lm_eval", reason="lm-eval not installed (pip install 'harness-ext[lmeval]')")

HERE = Path(__file__).resolve().parent
STANDIN = HERE / "lm_eval_standin.py"
POPULATION = list(range(1, 21))
NEW_MODEL = None  # a seed inside the population's ability range (lm_eval_standin.typical_seed)
BUDGET = "4"
ITEMS = 25  # of each subset task's 100 items


def _env():
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               HF_DATASETS_CACHE=os.environ.get("HF_DATASETS_CACHE", ""), TOKENIZERS_PARALLELISM="false")
    if not env["HF_DATASETS_CACHE"]:
        del env["HF_DATASETS_CACHE"]
    return env


def _run(args, cwd):
    proc = subprocess.run([sys.executable, str(STANDIN), *args], cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    sys.path.insert(0, str(HERE))
    import lm_eval_standin

    global NEW_MODEL
    NEW_MODEL = lm_eval_standin.typical_seed(POPULATION)
    root = tmp_path_factory.mktemp("lm_eval_loop")
    tasks = lm_eval_standin.write_tasks(root / "tasks")
    # One process for the population and the new model's full run (the truth), one lm_eval CLI run for the subset.
    _run(["population", json.dumps({"tasks_dir": str(root / "tasks"), "out": str(root / "population"),
                                    "seeds": POPULATION, "tasks": tasks})], root)
    _run(["population", json.dumps({"tasks_dir": str(root / "tasks"), "out": str(root / "truth"),
                                    "seeds": [NEW_MODEL], "tasks": tasks, "log_samples": False})], root)
    db = root / "store.duckdb"
    assert main(["ingest", "--db", str(db), str(root / "population")]) == 0
    reduced = root / "reduced"
    # The task data are the user's own: --local-data lets their absolute paths into the task YAMLs.
    local = ["--local-data", str(root / "tasks")]
    assert main(["reduce", "--db", str(db), "--budget", BUDGET, "--n-random", "200", "--out", str(reduced), *local]) == 0
    # The same reduction with item subsets: ITEMS anchor items of each subset task (from the population's sample logs).
    reduced_items = root / "reduced_items"
    assert main(["reduce", "--db", str(db), "--budget", BUDGET, "--n-random", "200", "--items", str(ITEMS), "--item-design", "anchors",
                 "--out", str(reduced_items), *local]) == 0
    # The same tasks known from the population's results files alone (no per-sample logs): random documents of each.
    db_results = root / "results_only.duckdb"
    assert main(["ingest", "--db", str(db_results), *map(str, sorted((root / "population").rglob("results_*.json")))]) == 0
    reduced_docs = root / "reduced_docs"
    assert main(["reduce", "--db", str(db_results), "--items", str(ITEMS), "--out", str(reduced_docs), *local]) == 0
    # The user's tasks folder is gone by the time the reduced benchmark runs: only the data files remain.
    for f in (root / "tasks").glob("*.yaml"):
        f.unlink()
    run_dir = root / "new_run"
    cli = _run(["cli", "--model", "standin", "--model_args", f"pretrained=standin/m{NEW_MODEL},seed={NEW_MODEL}",
                "--include_path", str(reduced), "--tasks", "harness_ext_reduced", "--output_path", str(run_dir),
                "--log_samples"], root)
    run_items = root / "new_run_items"
    _run(["cli", "--model", "standin", "--model_args", f"pretrained=standin/m{NEW_MODEL},seed={NEW_MODEL}",
          "--include_path", str(reduced_items), "--tasks", "harness_ext_reduced", "--output_path", str(run_items),
          "--samples", str(reduced_items / "harness_ext_reduced_samples.json"), "--log_samples"], root)
    run_docs = root / "new_run_docs"
    _run(["cli", "--model", "standin", "--model_args", f"pretrained=standin/m{NEW_MODEL},seed={NEW_MODEL}",
          "--include_path", str(reduced_docs), "--tasks", "harness_ext_reduced", "--output_path", str(run_docs),
          "--samples", str(reduced_docs / "harness_ext_reduced_samples.json"), "--log_samples"], root)
    return {"root": root, "tasks": tasks, "db": db, "reduced": reduced, "run": run_dir, "cli": cli,
            "truth": root / "truth", "reduced_items": reduced_items, "run_items": run_items,
            "reduced_docs": reduced_docs, "run_docs": run_docs}


@pytest.mark.slow
def test_reduced_folder_is_self_contained(loop):
    m = json.loads((loop["reduced"] / "manifest.json").read_text())
    subset = [s["name"] for s in m["subset"]]
    assert len(subset) == int(BUDGET)
    from conftest import load_group_yaml

    group = load_group_yaml(loop["reduced"] / "harness_ext_reduced.yaml")
    assert group["group_alias"] == f"{m['subset'][0]['benchmark']} (estimated from {len(subset)} of 12)"
    assert group["aggregate_metric_list"] == [{"metric": "acc", "aggregation": "!function harness_ext_estimate.estimate",
                                               "weight_by_size": False}]
    assert (loop["reduced"] / "harness_ext_estimate.py").is_file()
    assert [t["task"] for t in group["task"]] == subset
    for name in subset:
        assert m["lm_eval_tasks"][name]["origin"] == "results"
        cfg = yaml.safe_load((loop["reduced"] / f"{name}.yaml").read_text())
        assert cfg["task"] == name and cfg["dataset_path"] == "json"
        # The run's own metadata (model arguments, where the YAML was) is not part of the task.
        assert cfg["metadata"] == {"version": 1.0}
    assert "NOT SELF-CONTAINED" not in (loop["reduced"] / "harness_ext_reduced.yaml").read_text()
    assert not any("no lm-eval definition" in w for w in m["warnings"])


@pytest.mark.slow
def test_lm_eval_cli_runs_the_reduced_group_and_predict_matches_the_full_run(loop, tmp_path, capsys):
    m = json.loads((loop["reduced"] / "manifest.json").read_text())
    subset = [s["name"] for s in m["subset"]]
    [results] = list(loop["run"].rglob("results_*.json"))
    doc = json.loads(results.read_text())
    assert set(subset) <= set(doc["results"]) and "harness_ext_reduced" in doc["results"]
    # --log_samples wrote one per-sample log per subset task.
    logs = sorted(p.name.split("_2")[0] for p in results.parent.glob("samples_*.jsonl"))
    assert logs == sorted(f"samples_{t}" for t in subset)

    out = tmp_path / "pred.json"
    assert main(["predict", "-m", str(loop["reduced"]), str(loop["run"]), "--json", str(out)]) == 0
    capsys.readouterr()
    pred = json.loads(out.read_text())
    [agg] = pred["aggregate"]
    # The estimate also lands next to the run, in lm-eval's own results layout.
    lm = json.loads((results.parent / "harness_ext_prediction_harness_ext_reduced.json").read_text())
    bench = pred["score"]["benchmark"]
    full_row = lm["results"][bench]  # named after the benchmark, on its metric
    assert full_row["alias"] == f"{bench} (estimated from {len(subset)} of 12)"
    assert full_row["acc,predicted"] == pytest.approx(agg["aggregate"])
    assert (full_row["acc_lower,predicted"], full_row["acc_upper,predicted"]) == pytest.approx((agg["lower"], agg["upper"]))
    assert full_row["normalised,predicted"] == pytest.approx(agg["normalised"])
    assert agg["metric"] == "acc" and agg["n_observed"] == len(subset)
    # The benchmark's score is on acc: the mean of the twelve tasks' accuracies (observed or predicted).
    assert agg["aggregate"] == pytest.approx(np.mean([r["raw"] for r in pred["datasets"]]))

    # lm-eval's own table and results file: the reduced group's row is that estimate, with its interval.
    group_row = doc["results"]["harness_ext_reduced"]
    assert group_row["alias"] == f"{bench} (estimated from {len(subset)} of 12)"
    assert "acc,none" not in group_row  # the subset's plain mean is not shown as the benchmark's score
    assert group_row["acc,estimate"] == pytest.approx(agg["aggregate"], abs=1e-6)
    assert (group_row["acc_lower,estimate"], group_row["acc_upper,estimate"]) == pytest.approx((agg["lower"], agg["upper"]), abs=1e-6)
    lines = loop["cli"].stdout.splitlines()
    at = [i for i, line in enumerate(lines) if line.startswith(f"|{bench} (estimated from {len(subset)} of 12)")]
    assert at, loop["cli"].stdout[-3000:]  # in the tasks table (and again in the groups table)
    cells = [[c.strip() for c in lines[i].strip("|").split("|")] for i in (at[0], at[0] + 1, at[0] + 2)]
    assert [c[2] for c in cells] == ["estimate"] * 3, loop["cli"].stdout[-3000:]
    assert [(c[4], c[6]) for c in cells] == [("acc", f"{agg['aggregate']:.4f}"), ("acc_lower", f"{agg['lower']:.4f}"),
                                             ("acc_upper", f"{agg['upper']:.4f}")], loop["cli"].stdout[-3000:]
    assert cells[0][7] == "±" and float(cells[0][8]) > 0
    with capsys.disabled():
        print("\nlm_eval's table:\n" + "\n".join(l for l in loop["cli"].stdout.splitlines() if l.startswith("|")))

    # Truth: the new model's full run of all twelve tasks.
    from harness_ext.methods.reduction.manifest import load_manifest
    from harness_ext.methods.reduction.predict import predict_from_manifest

    full = predict_from_manifest(load_manifest(loop["reduced"]), [loop["truth"]]).aggregate.iloc[0]
    actual = float(full["actual"])
    assert np.isfinite(actual)
    # The subset run and the full run score the subset identically, so both predictions agree.
    assert full["aggregate"] == pytest.approx(agg["aggregate"], abs=1e-9)
    err = agg["aggregate"] - actual
    with capsys.disabled():
        print(f"\nlm-eval loop: {len(POPULATION)} stand-in models x {len(loop['tasks'])} tasks, subset of {len(subset)} "
              f"({', '.join(subset)}); new model standin/m{NEW_MODEL}: predicted full score {agg['aggregate']:.4f} "
              f"[{agg['lower']:.4f}, {agg['upper']:.4f}] (90%), actual {actual:.4f}, error {err:+.4f}")
    assert agg["lower"] <= actual <= agg["upper"]
    assert abs(err) < 0.1


@pytest.mark.slow
def test_samples_of_the_reduced_run_reach_the_samples_table(loop):
    from harness_ext.store.samples import prompt_matrix
    from harness_ext.store.db import Store

    db = loop["root"] / "new.duckdb"
    assert main(["ingest", "--db", str(db), str(loop["run"])]) == 0
    m = json.loads((loop["reduced"] / "manifest.json").read_text())
    with Store.open(db, read_only=True) as s:
        for t in (x["name"] for x in m["subset"]):
            pm = prompt_matrix(s, t, "acc")
            assert pm.shape == (100, 1) and pm.attrs["binary"]
            assert list(pm.columns) == [f"standin/m{NEW_MODEL}"]


@pytest.mark.slow
def test_item_subsets_run_through_lm_eval_samples_and_predict(loop, capsys):
    """Issue 16: a manifest holding item subsets; 'lm_eval --samples FILE' runs only those items; predict weights
    the anchors from the run's per-sample logs and widens its intervals by their cross-validated error."""
    m = json.loads((loop["reduced_items"] / "manifest.json").read_text())
    subset = [s["name"] for s in m["subset"]]
    items = m["items"]["tasks"]
    assert sorted(items) == sorted(subset)
    wanted = json.loads((loop["reduced_items"] / "harness_ext_reduced_samples.json").read_text())
    assert {t: len(v) for t, v in wanted.items()} == {t: ITEMS for t in subset}
    assert "--samples" in (loop["reduced_items"] / "harness_ext_reduced.yaml").read_text()
    # lm-eval ran exactly the anchor items of each task.
    logs = list(loop["run_items"].rglob("samples_*.jsonl"))
    assert len(logs) == len(subset)
    for f in logs:
        task = f.name[len("samples_"):].rsplit("_2", 1)[0]
        ids = sorted(json.loads(line)["doc_id"] for line in f.read_text().splitlines() if line.strip())
        assert ids == sorted(wanted[task]), task

    from harness_ext.methods.reduction.manifest import load_manifest
    from harness_ext.methods.reduction.predict import predict_from_manifest

    pred = predict_from_manifest(load_manifest(loop["reduced_items"]), [loop["run_items"]])
    agg = pred.aggregate.iloc[0]
    assert not any("no per-sample log" in w for w in pred.warnings)
    actual = float(predict_from_manifest(load_manifest(loop["reduced_items"]), [loop["truth"]]).aggregate.iloc[0]["actual"])
    # The same subset run whole (the manifest without items): the item subsets' own error widens the interval.
    whole = predict_from_manifest(load_manifest(loop["reduced"]), [loop["run"]]).aggregate.iloc[0]
    width_items, width_full = agg["upper"] - agg["lower"], whole["upper"] - whole["lower"]
    with capsys.disabled():
        print(f"\nitem subsets: {ITEMS} of 100 items x {len(subset)} tasks ({ITEMS * len(subset)} of "
              f"{100 * len(loop['tasks'])} items): predicted {agg['aggregate']:.4f} [{agg['lower']:.4f}, "
              f"{agg['upper']:.4f}] (90%), actual {actual:.4f}, error {agg['aggregate'] - actual:+.4f}; interval width "
              f"{width_items:.4f} vs {width_full:.4f} with whole tasks")
    assert width_items > width_full
    assert agg["lower"] <= actual <= agg["upper"]
    # lm-eval's own group row weights the anchors as predict does, from the run's logged samples.
    [results] = list(loop["run_items"].rglob("results_*.json"))
    row = json.loads(results.read_text())["results"]["harness_ext_reduced"]
    assert row["acc,estimate"] == pytest.approx(agg["aggregate"], abs=1e-9)
    assert (row["acc_lower,estimate"], row["acc_upper,estimate"]) == pytest.approx((agg["lower"], agg["upper"]), abs=1e-9)
    assert abs(agg["aggregate"] - actual) < 0.1


@pytest.mark.slow
def test_random_documents_drawn_from_results_files_alone_run_through_lm_eval(loop, capsys):
    """A population known only by its results files (scores and n-samples): reduce --items draws ITEMS documents of
    every task, lm-eval runs exactly those (--samples), and predict's estimate (the sample mean, the lm-eval group's
    row too) lies near the new model's full score.

    The stand-in decides each answer by a hash of the request's doc_id, which lm-eval 0.4.13 numbers by position among
    the drawn documents under --samples (it logs the original index), so the subset run is another draw of the model's
    answers than its full run: the score it estimates is the model's expected one, the mean of its probabilities of a
    right answer over every document, which the full run's score scatters around too."""
    from harness_ext.methods.reduction.item_design_plan import is_design_only
    from harness_ext.methods.reduction.item_predict import predict_items
    from harness_ext.methods.reduction.manifest import load_manifest

    m = load_manifest(loop["reduced_docs"])
    assert is_design_only(m) and sorted(m["tasks"]) == sorted(loop["tasks"])
    wanted = json.loads((loop["reduced_docs"] / "harness_ext_reduced_samples.json").read_text())
    logs = list(loop["run_docs"].rglob("samples_*.jsonl"))
    assert len(logs) == len(loop["tasks"])
    for f in logs:
        task = f.name[len("samples_"):].rsplit("_2", 1)[0]
        ids = sorted(json.loads(line)["doc_id"] for line in f.read_text().splitlines() if line.strip())
        assert ids == sorted(wanted[task]), task
    pred = predict_items(m, [loop["run_docs"]])
    agg = pred.aggregate.iloc[0]
    import lm_eval_standin

    docs = {t: [json.loads(line) for line in (loop["root"] / "tasks" / f"{t}.jsonl").read_text().splitlines()]
            for t in m["tasks"]}
    expected = float(np.mean([np.mean([lm_eval_standin.p_correct(NEW_MODEL, d) for d in docs[t]]) for t in docs]))
    [truth_file] = list(loop["truth"].rglob("results_*.json"))
    truth = json.loads(truth_file.read_text())["results"]
    actual = float(np.mean([truth[t]["acc,none"] for t in m["tasks"]]))
    se = (agg["upper"] - agg["lower"]) / (2 * 1.6449)
    with capsys.disabled():
        print(f"\nrandom documents from results files alone: {ITEMS} x {len(m['tasks'])} tasks: predicted "
              f"{agg['aggregate']:.4f} [{agg['lower']:.4f}, {agg['upper']:.4f}] (90%), expected score {expected:.4f}, "
              f"full run {actual:.4f}")
    assert abs(agg["aggregate"] - expected) < 2.58 * se and abs(agg["aggregate"] - actual) < 0.1
    [results] = list(loop["run_docs"].rglob("results_*.json"))
    row = json.loads(results.read_text())["results"]["harness_ext_reduced"]
    assert row["acc,estimate"] == pytest.approx(agg["aggregate"], abs=1e-9)
