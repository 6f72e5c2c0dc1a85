"""``reduce --items N`` on a store with lm-eval task scores but no per-sample logs: random documents of every task.

The population gave only its results files (scores and each task's number of documents, lm-eval's ``n-samples``),
so the manifest draws each task's items from its documents and estimates by their mean with the finite-population
interval, which holds whatever the new model is. Fast tests use real lm-eval 0.4.13 output (tests/fixtures/samples:
results and samples_*.jsonl written by lm-eval itself; the population's results files alone are ingested); the slow
one the shared lm-eval 0.4 results (57 MMLU subjects of 15 models), skipped without them.
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
from harness_ext.methods.reduction.item_design_only import design_expected
from harness_ext.methods.reduction.item_design_plan import is_design_only
from harness_ext.methods.reduction.item_manifest import decode_ids
from harness_ext.methods.reduction.item_predict import predict_items
from harness_ext.methods.reduction.manifest import load_manifest

from conftest import SHARED_DATA

LOGS = Path(__file__).resolve().parent / "fixtures" / "samples" / "lm_eval_output"
V04 = SHARED_DATA / "lm-eval-harness" / "v04_results_from_pull_refs" / "results"


def _results_only(tmp_path, models=("toy__lm-small", "toy__lm-medium"), edit=None) -> Path:
    """A store of the population's results files only (no per-sample logs); ``edit`` changes each file's JSON."""
    files = []
    for m in models:
        [src] = (LOGS / m).glob("results_*.json")
        dst = tmp_path / "pop" / m / src.name
        dst.parent.mkdir(parents=True)
        doc = json.loads(src.read_text())
        dst.write_text(json.dumps(edit(doc) if edit else doc))
        files.append(str(dst))
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", *files]) == 0
    return db


def _run_of(tmp_path, manifest: dict, whole=()) -> Path:
    """The new model's lm-eval output folder with only the manifest's drawn documents logged (``whole``: tasks left
    with every document)."""
    run = tmp_path / "run"
    shutil.copytree(LOGS / "toy__lm-large", run)
    for f in run.glob("samples_*.jsonl"):
        task = next(t for t in manifest["tasks"] if f.name.startswith(f"samples_{t}_"))
        if task in whole:
            continue
        keep = set(decode_ids(manifest["tasks"][task]["sample"]).tolist())
        f.write_text("".join(line for line in f.read_text().splitlines(keepends=True)
                             if json.loads(line)["doc_id"] in keep))
    return run


def test_tasks_known_by_scores_alone_get_random_documents_and_the_sample_mean(tmp_path, capsys):
    db = _results_only(tmp_path)
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "8", "--out", str(out), "--no-plot"]) == 0
    text = capsys.readouterr().out
    assert "No item-level results for these tasks, only their lm-eval scores" in text
    m = load_manifest(out)
    assert is_design_only(m) and m["design"]["estimator"] == "sample_mean"
    assert set(m["tasks"]) == {"toy_arith_mc", "toy_arith_gen"}
    for task, b in m["tasks"].items():
        assert b["n_items"] == 18 and b["n_run"] == 8 and "population" not in b  # 18: the files' n-samples
        assert sorted(m["models"][i] for i in b["task_scores"]["models"]) == ["toy/lm-medium", "toy/lm-small"]
    drawn = json.loads((out / "harness_ext_reduced_samples.json").read_text())
    assert {t: len(v) for t, v in drawn.items()} == {"toy_arith_mc": 8, "toy_arith_gen": 8}
    assert all(0 <= i < 18 for v in drawn.values() for i in v)
    # Sorted: lm-eval 0.4.13 logs the k-th document it runs under --samples as the list's k-th index.
    assert all(v == sorted(v) for v in drawn.values())
    # The same seed draws the same documents; the group runs lm-eval's tasks with their definitions from the files.
    assert main(["reduce", "--db", str(db), "--items", "8", "--out", str(tmp_path / "again"), "--no-plot"]) == 0
    assert (tmp_path / "again" / "manifest.json").read_bytes() == (out / "manifest.json").read_bytes()
    assert "--samples" in (out / "harness_ext_reduced.yaml").read_text()
    for split in ("interpolation", "extrapolation"):
        bench = m["expected_error"][split]["benchmark"]
        assert 0 < bench["mean_abs_error"] < bench["mean_width"] and 0.8 <= bench["coverage"] <= 1.0
    capsys.readouterr()


def test_predict_estimates_from_the_drawn_documents_and_measures_a_whole_task(tmp_path, capsys):
    db = _results_only(tmp_path)
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "8", "--out", str(out), "--no-plot"]) == 0
    m = load_manifest(out)
    run = _run_of(tmp_path, m, whole=("toy_arith_gen",))
    pred = predict_items(m, [run])
    rows = pred.table.set_index("dataset")
    [results] = run.glob("results_*.json")
    truth = json.loads(results.read_text())["results"]
    # A task logged whole is measured: lm-eval's own score, exactly.
    assert rows.loc["toy_arith_gen", "observed"] and rows.loc["toy_arith_gen", "raw"] == truth["toy_arith_gen"][
        "exact_match,strict-match"]
    mc = rows.loc["toy_arith_mc"]
    assert not mc["observed"] and mc["n_used"] == 8 and mc["raw_lower"] < mc["raw"] <= mc["raw_upper"] <= 1.0
    [agg] = pred.aggregate.to_dict("records")
    assert agg["lower"] < agg["aggregate"] < agg["upper"]
    # The new model is stronger than both population models: said, with the design's interval holding there.
    assert agg["frontier"] > 0
    assert any("beyond the population" in w and "design-based and holds there" in w for w in pred.warnings)
    assert not any("in-sample" in w for w in pred.warnings)
    assert main(["predict", "-m", str(out), str(run), "--json", str(tmp_path / "p.json")]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("extra,said", [
    (["--item-estimator", "crosstask"], "needs them"),
    (["--item-design", "stratified"], "needs them"),
])
def test_options_that_need_the_populations_answers_are_refused(tmp_path, capsys, extra, said):
    db = _results_only(tmp_path)
    assert main(["reduce", "--db", str(db), "--items", "8", "--out", str(tmp_path / "r"), "--no-plot", *extra]) != 0
    err = capsys.readouterr().err
    assert said in err and "only their scores" in err


def test_predict_refuses_an_estimator_fitted_on_answers(tmp_path, capsys):
    db = _results_only(tmp_path)
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "8", "--out", str(out), "--no-plot"]) == 0
    with pytest.raises(HarnessExtError, match="has none"):
        predict_items(load_manifest(out), [_run_of(tmp_path, load_manifest(out))], estimator="aipw")
    capsys.readouterr()


def test_results_without_task_sizes_are_refused_saying_so(tmp_path, capsys):
    db = _results_only(tmp_path, edit=lambda d: {k: v for k, v in d.items() if k != "n-samples"})
    assert main(["reduce", "--db", str(db), "--items", "8", "--out", str(tmp_path / "r"), "--no-plot"]) != 0
    assert "number of documents" in capsys.readouterr().err


def test_the_api_takes_the_same_path(tmp_path):
    db = _results_only(tmp_path)
    red = hx.reduce_items(str(db), items=8)
    assert is_design_only(red.manifest) and red.manifest["cost"] == {"items_run": 16, "items_full": 36, "tasks": 2}


def test_the_designs_expected_coverage_is_its_nominal_level():
    """Hypergeometric draws of the sample mean's interval: near 90% for mid scores, and exact for a task run whole."""
    scores = pd.Series(np.linspace(0.2, 0.8, 25), index=[f"m{i:02d}" for i in range(25)])
    tasks = {"a": {"n_items": 500, "scores": scores}, "b": {"n_items": 40, "scores": scores[::-1].set_axis(scores.index)}}
    ex = design_expected(tasks, {"a": 50, "b": 40}, {"a": 1.0, "b": 1.0}, level=0.9, random_state=0)
    a = ex["interpolation"]["tasks"]["a"]
    assert 0.86 <= a["coverage"] <= 0.95
    se = np.sqrt(scores * (1 - scores) / 50 * (450 / 499)).mean()
    assert a["mean_abs_error"] == pytest.approx(np.sqrt(2 / np.pi) * se, rel=0.08)
    assert ex["interpolation"]["tasks"]["b"] == {"mean_abs_error": 0.0, "mean_width": 0.0, "coverage": 1.0,
                                                  "n_models": 25}
    assert ex["extrapolation"]["benchmark"]["n_models"] == 8  # the strongest 30% of 25


@pytest.mark.slow
def test_mmlu_from_real_lm_eval_results(tmp_path, capsys):
    """57 MMLU subjects of the shared lm-eval 0.4 results: sizes from their n-samples (MMLU's 14,042 test questions),
    the group of lm-eval's own subject tasks, the subjects weighted by their questions as lm-eval's mmlu group."""
    if not V04.is_dir():
        pytest.skip("needs ../shared/data/lm-eval-harness")
    db = tmp_path / "v4.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(V04)]) == 0
    out = tmp_path / "mmlu"
    assert main(["reduce", "--db", str(db), "--benchmark", "mmlu", "--items", "20", "--out", str(out), "--no-plot"]) == 0
    capsys.readouterr()
    m = load_manifest(out)
    assert is_design_only(m) and len(m["tasks"]) == 57 and m["cost"]["items_full"] == 14042
    assert m["weighting"].startswith("subjects weighted") and m["weights"]["mmlu_professional_law"] == 1534.0
    assert all(e.get("origin") for e in m["lm_eval_tasks"].values())
    bench = m["expected_error"]["extrapolation"]["benchmark"]
    assert bench["mean_abs_error"] < 0.02 and 0.85 <= bench["coverage"] <= 0.95


def test_mmlu_subjects_of_lm_eval_0_3_are_sized_by_mmlus_test_set(tmp_path, capsys):
    """lm-eval 0.3 results (the bundled Pythia runs) record no n-samples; MMLU's subjects still have a known size, the
    test questions lm-eval 0.4's subject tasks run, and the drawn documents name those tasks."""
    from harness_ext.benchmarks import MMLU_TEST_SIZES

    runs = Path(hx.bundled_data_path())
    files = [str(sorted((runs / m).glob("*.json"))[0]) for m in ("pythia-160m", "pythia-410m")]
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), "-q", *files]) == 0
    out = tmp_path / "mmlu"
    assert main(["reduce", "--db", str(db), "--benchmark", "mmlu", "--items", "10", "--out", str(out), "--no-plot"]) == 0
    assert "sized by MMLU's test set" in capsys.readouterr().err
    m = load_manifest(out)
    assert {t: b["n_items"] for t, b in m["tasks"].items()} == {f"mmlu_{s}": n for s, n in MMLU_TEST_SIZES.items()}


def _renamed(doc: dict, old: str, new: str, metric=None) -> dict:
    """An lm-eval results file with task ``old`` renamed ``new`` (and its ``acc`` renamed ``metric``)."""
    for key in ("results", "n-samples", "configs", "versions", "n-shot", "higher_is_better"):
        block = doc.get(key)
        if isinstance(block, dict) and old in block:
            block[new] = block.pop(old)
    if metric:
        res = doc["results"][new]
        res[f"{metric},none"] = res.pop("acc,none")
        doc["configs"][new]["metric_list"] = [{"metric": metric}]  # lm-eval's default aggregation of the metric
    return doc


def test_metrics_lm_eval_computes_over_the_whole_task_are_left_out_saying_so(tmp_path, capsys):
    """MCC (GLUE's cola), corpus F1, BLEU, perplexity: lm-eval logs each document's inputs to them, not a score, so a
    sample's mean estimates nothing and predict could not read the run; a task's own aggregation is read first."""
    from harness_ext.methods.reduction.item_design_only import aggregation

    assert aggregation("mcc", None) != "mean" and aggregation("f1", {"metric_list": [{"metric": "f1"}]}) != "mean"
    assert aggregation("f1", {"metric_list": [{"metric": "f1", "aggregation": "mean"}]}) == "mean"  # DROP's F1
    assert aggregation("exact_match,strict-match", None) == "mean" and aggregation("mae", None) == "mean"
    db = _results_only(tmp_path, edit=lambda d: _renamed(d, "toy_arith_mc", "toy_arith_mc", metric="mcc"))
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "8", "--out", str(out), "--no-plot"]) == 0
    captured = capsys.readouterr()
    assert "1 task whose metric lm-eval computes over the whole task" in captured.err
    assert "toy_arith_mc (mcc)" in captured.err
    assert set(load_manifest(out)["tasks"]) == {"toy_arith_gen"}
    # Asked for that metric alone: refused, naming the tasks and what to choose instead.
    assert main(["reduce", "--db", str(db), "--items", "8", "--metric", "mcc", "--out", str(tmp_path / "r2"),
                 "--no-plot"]) != 0
    err = capsys.readouterr().err
    assert "computes over the whole task" in err and "toy_arith_mc (mcc)" in err and "--metric" in err


def test_expected_intervals_are_clipped_to_the_score_range_as_predict_clips_them():
    """Two documents of a task: the t interval on 1 degree of freedom spans far beyond [0, 1]; predict clips a
    proportion's interval to [0, 1], so the expected width is at most 1 (it was 6)."""
    scores = pd.Series(np.linspace(0.2, 0.8, 10), index=[f"m{i}" for i in range(10)])
    ex = design_expected({"a": {"n_items": 100, "scores": scores}}, {"a": 2}, {"a": 1.0}, level=0.9)
    assert 0.9 < ex["interpolation"]["tasks"]["a"]["mean_width"] <= 1.0


def test_tasks_scored_outside_the_unit_range_are_left_out_saying_so(tmp_path, capsys):
    """An MAE of 3.5 (lm-eval's mean aggregation, lower is better): as reduce --items refuses item scores outside
    [0, 1], the task is left out, said; alone, refused. Predict's benchmark interval (a mean of proportions, clipped
    to [0, 1]) had collapsed onto its estimate with such a task."""
    def mae(doc):
        doc = _renamed(doc, "toy_arith_mc", "toy_lattice_mae", metric="mae")
        res = doc["results"]["toy_lattice_mae"]
        res["mae,none"] = 3.5
        del res["acc_norm,none"], res["acc_norm_stderr,none"]
        return doc

    db = _results_only(tmp_path, edit=mae)
    out = tmp_path / "r"
    assert main(["reduce", "--db", str(db), "--items", "8", "--out", str(out), "--no-plot"]) == 0
    assert "1 task scored outside [0, 1]" in capsys.readouterr().err and "toy_lattice_mae (mae, 3.5" in \
        " ".join(load_manifest(out)["warnings"])
    assert set(load_manifest(out)["tasks"]) == {"toy_arith_gen"}
    assert main(["reduce", "--db", str(db), "--items", "8", "--datasets", "*mae*", "--out", str(tmp_path / "r2"),
                 "--no-plot"]) != 0
    assert "toy_lattice_mae (mae, 3.5 to 3.5) scored outside [0, 1]" in capsys.readouterr().err


def test_no_benchmark_figures_without_a_model_on_every_task_said_and_printed_blank(tmp_path, capsys):
    """Each model scored on one task only (the shared lm-eval 0.4 results' 28 models on 33 unrelated tasks): no model
    is ranked by the benchmark's score, so no benchmark or 'frontier' figures; said, and printed blank, not 'None'."""
    def one_task(keep):
        def edit(doc):
            for key in ("results", "n-samples", "configs"):
                doc[key] = {t: v for t, v in doc[key].items() if t == keep}
            return doc
        return edit

    files = []
    for m, keep in (("toy__lm-small", "toy_arith_mc"), ("toy__lm-medium", "toy_arith_gen")):
        db = _results_only(tmp_path / m, models=(m,), edit=one_task(keep))
        files.append(next((tmp_path / m / "pop").rglob("results_*.json")))
    db = tmp_path / "both.duckdb"
    assert main(["ingest", "--db", str(db), "-q", *map(str, files)]) == 0
    assert main(["reduce", "--db", str(db), "--items", "8", "--out", str(tmp_path / "r"), "--no-plot"]) == 0
    text = capsys.readouterr().out
    assert "No benchmark figures and no 'frontier': no model has a score on every task" in text
    assert "None" not in text


def test_results_without_sizes_in_several_benchmarks(tmp_path, capsys):
    """lm-eval 0.3's files (the bundled Pythia results: lm_eval and mmlu) give no sizes: only MMLU's subjects are
    sized (by MMLU's test set), so lm_eval's tasks are refused for their sizes and, without --benchmark, the user is
    asked to choose."""
    db = tmp_path / "py.duckdb"
    assert main(["ingest", "--db", str(db), "--bundled", "-q"]) == 0
    assert main(["reduce", "--db", str(db), "--items", "20", "--benchmark", "lm_eval", "--out", str(tmp_path / "r"),
                 "--no-plot"]) != 0
    assert "number of documents" in capsys.readouterr().err
    assert main(["reduce", "--db", str(db), "--items", "20", "--out", str(tmp_path / "r"), "--no-plot"]) != 0
    assert "choose with --benchmark" in capsys.readouterr().err


def test_the_helm_conf_says_where_a_design_only_task_came_from(tmp_path, capsys):
    """A task HELM also runs (hellaswag) drawn from lm-eval's results files: the conf does not call it an item table."""
    db = _results_only(tmp_path, edit=lambda d: _renamed(d, "toy_arith_mc", "hellaswag"))
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "8", "--out", str(out), "--no-plot"]) == 0
    capsys.readouterr()
    conf = (out / "run_entries_harness_ext_reduced.conf").read_text()
    assert "from lm-eval's results files" in conf and "item tables" not in conf


def test_tasks_with_scores_but_no_item_level_results_are_named_beside_an_item_level_reduction(tmp_path, capsys):
    """Both models logged one task (--log_samples) and only scored the other: the item-level reduction holds the
    first; the second is named, with how to draw its documents, not dropped unsaid."""
    files = []
    for m in ("toy__lm-small", "toy__lm-medium"):
        files += [str(p) for p in (LOGS / m).glob("results_*.json")]
        files += [str(p) for p in (LOGS / m).glob("samples_toy_arith_mc_*.jsonl")]
    db = tmp_path / "mixed.duckdb"
    assert main(["ingest", "--db", str(db), "-q", *files]) == 0
    red = hx.reduce_items(str(db), items=6)
    assert not is_design_only(red.manifest) and set(red.manifest["tasks"]) == {"toy_arith_mc"}
    assert any("no item-level results from 2 or more models not in this reduction: toy_arith_gen" in w
               for w in red.manifest["warnings"])
    alone = hx.reduce_items(str(db), items=6, datasets="toy_arith_gen")
    assert is_design_only(alone.manifest) and set(alone.manifest["tasks"]) == {"toy_arith_gen"}


def test_a_query_matching_no_scores_says_what_the_store_has(tmp_path, capsys):
    """A --datasets glob or --metric that matches none of the store's lm-eval scores: the error says so and what
    they are, not only that the store has no item-level results."""
    db = _results_only(tmp_path)
    assert main(["reduce", "--db", str(db), "--items", "8", "--datasets", "glue*", "--out", str(tmp_path / "r"),
                 "--no-plot"]) != 0
    err = capsys.readouterr().err
    assert "no item-level results" in err and "nor do the store's lm-eval task scores match --datasets glue*" in err
    assert "lm_eval (2 tasks)" in err


def test_too_few_models_for_a_frontier_are_said(tmp_path, capsys):
    """One model's scores: 'frontier' (its strongest 30%) has none, said."""
    db = _results_only(tmp_path, models=("toy__lm-small",))
    assert main(["reduce", "--db", str(db), "--items", "8", "--out", str(tmp_path / "r"), "--no-plot"]) == 0
    assert "No 'frontier': the strongest 30% of 1 model is none." in capsys.readouterr().out


def test_the_plot_labels_the_designs_frontier_as_the_strongest_models_not_a_prediction(tmp_path):
    pytest.importorskip("matplotlib")
    red = hx.reduce_items(str(_results_only(tmp_path)), items=8)
    fig = red.plot()
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any("its strongest 30%" in t for t in labels) and not any("weakest half" in t for t in labels)
    assert "the design, for the store's models' scores" in fig.axes[0].get_title()


@pytest.mark.parametrize("edit,said", [
    (lambda b: b.update(task_scores={"models": [0], "values": ["0.5"]}), "task_scores must pair"),
    (lambda b: b.update(task_scores={"models": [99], "values": [0.5]}), "task_scores must pair"),
    (lambda b: b.update(task_scores=[0.5]), "task_scores must be an object"),
    (lambda b: b.update(population={"models": [], "scores": None}), "the manifest's design has no population"),
])
def test_a_hostile_design_only_manifest_gets_one_clear_error(tmp_path, capsys, edit, said):
    """A manifest from elsewhere, edited: its task scores are checked before predict reads them, naming the task."""
    from harness_ext.methods.reduction.item_manifest import validate_item_manifest

    db = _results_only(tmp_path)
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "8", "--out", str(out), "--no-plot"]) == 0
    capsys.readouterr()
    m = load_manifest(out)
    edit(m["tasks"]["toy_arith_mc"])
    with pytest.raises(HarnessExtError, match=f"manifest.json is not a valid harness-ext item manifest: task "
                                              f"'toy_arith_mc': {said}"):
        validate_item_manifest(m, "manifest.json")
