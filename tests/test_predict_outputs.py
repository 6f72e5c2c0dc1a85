"""predict: honest messages and interoperable outputs (issue 16, items 3, 4 and 5)."""

from __future__ import annotations

import json

import pytest

from harness_ext.cli import main
from test_reduced_folder import TASKS, _write_population


@pytest.fixture(scope="module")
def reduced(tmp_path_factory):
    root = tmp_path_factory.mktemp("pred_out")
    pop = _write_population(root / "pop", n_models=10)
    new = _write_population(root / "new", n_models=1, seed=7)
    db, out = root / "s.duckdb", root / "reduced"
    assert main(["ingest", "--db", str(db), str(pop)]) == 0
    assert main(["reduce", "--db", str(db), "--budget", "2", "--n-random", "20", "--out", str(out)]) == 0
    return root, out, new


def test_json_dash_writes_json_to_stdout_only(reduced, capsys):
    """Issue 16: 'predict --json -' wrote a file named '-'."""
    root, out, new = reduced
    capsys.readouterr()
    assert main(["predict", "-m", str(out), str(new), "--json", "-", "--no-lm-eval-results"]) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert doc["aggregate"][0]["model"] == "org/m0" and "full-benchmark estimate" in cap.err
    assert not (root / "-").exists() and not (new.parent / "-").exists()


def test_unknown_chance_levels_alone_are_not_flagged(reduced, capsys):
    """No dataset of this manifest has a known chance level: every score is the same fraction of its scale and the
    aggregate is consistent, so predict says nothing (the mixed case warns: tests/test_new_user_defaults.py)."""
    _, out, new = reduced
    capsys.readouterr()
    assert main(["predict", "-m", str(out), str(new), "--no-lm-eval-results"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert all(d["normalisation"].get("chance_source") is None for d in manifest["datasets"])
    assert len(manifest["datasets"]) == len(TASKS) and "chance level" not in capsys.readouterr().err


def test_mismatch_lists_found_and_expected_keys(reduced, tmp_path, capsys):
    """Issue 16: with acc_norm (or acc,strict-match) results predict only said 'none of the results is on a dataset'."""
    _, out, new = reduced
    [f] = new.rglob("results_*.json")
    doc = json.loads(f.read_text())
    doc["results"] = {t: {"alias": t, "acc_norm,none": 0.5} for t in TASKS}
    p = tmp_path / "results_2025-01-01T00-00-00.000000.json"
    p.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["predict", "-m", str(out), str(p)]) == 1
    err = capsys.readouterr().err
    m = json.loads((out / "manifest.json").read_text())
    first = m["subset"][0]["name"]
    assert f"(lm_eval, {first}, acc_norm, 0 shots)" in err          # found
    assert f"expects (lm_eval, {first}, acc, 0 shots)" in err       # expected
    assert "with metric 'acc_norm'; the manifest has benchmark 'lm_eval' and metric 'acc'" in err


@pytest.mark.slow
def test_lm_eval_schema_results_file_next_to_the_run(reduced, capsys):
    root, out, new = reduced
    assert main(["predict", "-m", str(out), str(new)]) == 0
    [f] = new.rglob("results_*.json")
    written = f.parent / "harness_ext_prediction_harness_ext_reduced.json"
    assert written.exists() and f"wrote {written}" in capsys.readouterr().out
    doc = json.loads(written.read_text())
    # The full-benchmark row is named after the benchmark and is on its metric, the normalised aggregate beside it.
    bench = doc["harness_ext_prediction"]["score"]["benchmark"]
    full = doc["results"][bench]
    assert full["alias"] == f"{bench} (estimated from 2 of {len(TASKS)})"
    assert full["acc_lower,predicted"] <= full["acc,predicted"] <= full["acc_upper,predicted"]
    assert full["normalised_lower,predicted"] <= full["normalised,predicted"] <= full["normalised_upper,predicted"]
    assert doc["group_subtasks"][bench] == TASKS
    # Which tasks were run is said beside the results (lm-eval's table prints every key of a row as a metric).
    assert not any("observed" in r for r in doc["results"].values())
    assert len(doc["harness_ext_prediction"]["observed"]) == doc["harness_ext_prediction"]["n_observed"] == 2
    assert "90%" in doc["harness_ext_prediction"]["method"] and doc["harness_ext_prediction"]["interval_level"] == 0.9
    # Predicting again from the same folder: the prediction file is refused, never read as a measured result.
    capsys.readouterr()
    assert main(["predict", "-m", str(out), str(new), "--json", "-"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["aggregate"][0]["aggregate"] == pytest.approx(full["acc,predicted"])
    from harness_ext.store.ingest import ingest_paths
    from harness_ext.store.db import Store

    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [written], show_progress=False)
    assert rep.files[0].status == "skipped" and "harness-ext prediction" in rep.files[0].reason


def test_every_eval_ever_export(reduced, tmp_path, capsys):
    _, out, new = reduced
    eee = tmp_path / "eee"
    assert main(["predict", "-m", str(out), str(new), "--eee", str(eee), "--no-lm-eval-results"]) == 0
    [f] = eee.glob("*.json")
    rec = json.loads(f.read_text())
    for key in ("schema_version", "evaluation_id", "retrieved_timestamp", "source_metadata", "model_info",
                "eval_library", "evaluation_results"):
        assert key in rec
    assert rec["schema_version"].startswith("0.2")
    full = rec["evaluation_results"][-1]
    ci = full["score_details"]["uncertainty"]["confidence_interval"]
    assert ci["lower"] <= full["score_details"]["score"] <= ci["upper"] and ci["confidence_level"] == 0.9
    assert "conformal (CV+)" in ci["method"]  # the default lowrank predictor's intervals
    for r in rec["evaluation_results"]:
        assert {"evaluation_name", "source_data", "metric_config", "score_details"} <= set(r)
        assert "lower_is_better" in r["metric_config"]
        assert all(isinstance(v, str) for v in r["score_details"].get("details", {}).values())
    # The EEE adapter refuses its own predictions.
    from harness_ext.store.ingest import ingest_paths
    from harness_ext.store.db import Store

    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [f], show_progress=False)
    assert rep.files[0].status == "skipped" and "prediction" in rep.files[0].reason


def test_anchor_estimated_observed_cells_keep_their_interval_in_both_exports():
    """An observed cell that is an anchor-item estimate (its raw interval has width) carries that interval in the
    lm-eval results file (non-zero stderr) and in the Every Eval Ever record; an exactly observed cell does not."""
    import types

    import pandas as pd

    from harness_ext.methods.reduction.predict_export import eee_record, lm_eval_results_doc

    norm = {"description": "raw", "lo": 0.0, "span": 1.0, "flip": False, "chance": 0.0, "clip": False}
    manifest = {"group_name": "g", "source": {"n_models": 10},
                "prediction": {"predictor": {"name": "lowrank"}},
                "datasets": [{"name": n, "metric": "acc", "task": n, "normalisation": norm} for n in ("exact", "anchor", "pred")]}
    table = pd.DataFrame({"model": ["m"] * 3, "dataset": ["exact", "anchor", "pred"], "observed": [True, True, False],
                          "score": [0.5, 0.6, 0.7], "lower": [0.5, 0.55, 0.6], "upper": [0.5, 0.65, 0.8],
                          "raw": [0.5, 0.6, 0.7], "raw_lower": [0.5, 0.55, 0.6], "raw_upper": [0.5, 0.65, 0.8],
                          "actual": [float("nan")] * 3})
    agg = pd.DataFrame({"model": ["m"], "aggregate": [0.6], "lower": [0.55], "upper": [0.65], "n_observed": [2],
                        "actual": [float("nan")]})
    pred = types.SimpleNamespace(table=table, aggregate=agg, warnings=[], sources={})
    doc = lm_eval_results_doc(pred, manifest, "m", "manifest.json")
    assert doc["results"]["exact"]["acc_stderr,predicted"] == 0.0
    assert doc["results"]["anchor"]["acc_stderr,predicted"] == pytest.approx(0.1 / (2 * 1.6448536269514722))
    assert doc["harness_ext_prediction"]["observed"] == ["exact", "anchor"]
    rec = {r["evaluation_name"]: r["score_details"] for r in eee_record(pred, manifest, "m", timestamp="1")["evaluation_results"]}
    assert "uncertainty" not in rec["exact"]
    ci = rec["anchor"]["uncertainty"]["confidence_interval"]
    assert (ci["lower"], ci["upper"]) == (0.55, 0.65) and rec["anchor"]["details"]["estimated"] == "true"
    assert "uncertainty" in rec["pred"]


def test_models_sharing_a_folder_each_get_their_own_file(reduced, tmp_path, capsys):
    """Two models' results in one folder (as in a leaderboard CSV): the second model's prediction file
    used to overwrite the first's under the group's name."""
    _, out, _ = reduced
    pop = _write_population(tmp_path / "two", n_models=2, seed=11)
    both = tmp_path / "both"
    both.mkdir()
    for i, f in enumerate(sorted(pop.rglob("results_*.json"))):
        f.rename(both / f"results_2025-01-0{i + 1}T00-00-00.000000.json")
    assert main(["predict", "-m", str(out), str(both)]) == 0
    written = sorted(both.glob("harness_ext_prediction_*.json"))
    assert [p.name for p in written] == ["harness_ext_prediction_org__m0.json", "harness_ext_prediction_org__m1.json"]
    assert [json.loads(p.read_text())["model_name"] for p in written] == ["org/m0", "org/m1"]
    assert not (both / "harness_ext_prediction_harness_ext_reduced.json").exists()


@pytest.mark.slow
def test_sparse_training_matrix_predicts_without_numpy_warnings(tmp_path):
    """lm-eval v0.4 pull-request results (lm_eval benchmark, 85% missing): most training models have no
    subset cell, and the edge-of-range check printed numpy's 'Mean of empty slice' RuntimeWarning."""
    import warnings

    import harness_ext as hx
    from conftest import LM_EVAL_V04, require

    held = "Qwen__Qwen2.5-3B"
    paths = [p for p in sorted(require(LM_EVAL_V04).iterdir()) if p.name != held]
    db = tmp_path / "s.duckdb"
    hx.ingest(paths, store=db)
    m = hx.load_matrix(db, "lm_eval")
    assert m.isna().mean().mean() > 0.5
    reduced = hx.reduce(m, budget=1, seed=0, n_random_subsets=20, n_random=20)
    assert m[reduced.subset].isna().all(axis=1).any()  # training models without a subset cell
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        p = hx.predict(reduced, LM_EVAL_V04 / held)
    assert len(p.aggregate) == 1


def test_a_checkout_copy_of_a_bundled_run_gets_its_prediction_in_the_working_directory(tmp_path, monkeypatch):
    """The Quickstart from a clone with a non-editable install: the run it names is the clone's copy of a bundled
    file, not the installed package's, and predict wrote into the clone's source tree. A byte-identical copy under
    a ``harness_ext/data`` folder is treated as the bundled run; a changed copy, or any other folder, is the user's."""
    from pathlib import Path

    import harness_ext
    from harness_ext.methods.reduction.predict_export import _writable_home

    bundled = Path(harness_ext.__file__).parent / "data" / "pythia-5shot" / "pythia-2.8b" / "2.8b-5shot_step143000.json"
    assert bundled.is_file()
    copy = tmp_path / "clone" / "harness_ext" / "data" / "pythia-5shot" / "pythia-2.8b" / bundled.name
    copy.parent.mkdir(parents=True)
    copy.write_bytes(bundled.read_bytes())
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert _writable_home(bundled) == Path.cwd()
    assert _writable_home(copy) == Path.cwd()
    copy.write_bytes(bundled.read_bytes().replace(b"0.", b"1.", 1))  # the user's own edited run
    assert _writable_home(copy) == copy.parent
    own = tmp_path / "results" / bundled.name
    own.parent.mkdir()
    own.write_bytes(bundled.read_bytes())  # identical bytes, but not under harness_ext/data: the user's folder
    assert _writable_home(own) == own.parent
