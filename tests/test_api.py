"""The public Python API (issue 18, item 3): the README's example runs as written, and the API agrees
with the command line (same manifest bytes for the same inputs and seed)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import harness_ext as hx
from harness_ext.errors import HarnessExtError

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Python API"):]
    section = section[:section.index("\n## ", 1)]
    [code] = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    return code


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    """The README example, verbatim, in a fresh folder."""
    folder = tmp_path_factory.mktemp("api")
    code = readme_example()
    proc = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True,
                          env={**__import__("os").environ, "HARNESS_EXT_NO_PROGRESS": "1"})
    assert proc.returncode == 0, proc.stderr
    return folder, proc.stdout


@pytest.mark.slow  # the example ingests 269 files and reduces 57 datasets (~30 s)
def test_readme_example_runs_the_whole_loop(example_run):
    folder, stdout = example_run
    assert "reduced 57 datasets to 8" in stdout and "<- chosen" in stdout
    # The printed aggregate shows what its comment promises: print(DataFrame) once cut it to "model ... frontier".
    for field in ("metric", "aggregate", "lower", "upper", "normalised"):
        assert re.search(rf"^{field} +\S", stdout, flags=re.M), field
    assert re.search(r"^metric +acc$", stdout, flags=re.M)
    written = {p.name for p in (folder / "reduced").iterdir()}
    assert {"manifest.json", "harness_ext_reduced.yaml", "run_entries_harness_ext_reduced.conf",
            "harness_ext_reduced_tasks.txt", "error_vs_budget.png"} <= written
    assert (folder / "prediction.png").stat().st_size > 1000
    assert sorted(p.name for p in (folder / "prediction").iterdir()) == ["aggregate.csv", "prediction.json",
                                                                         "predictions.csv"]


@pytest.mark.slow  # the example ingests 269 files and reduces 57 datasets (~30 s)
def test_readme_example_predicts_the_held_out_model(example_run):
    """The example's objects, rebuilt in-process: the prediction agrees with the held-out model's truth."""
    folder, _ = example_run
    store = folder / "pythia.duckdb"
    new = "EleutherAI/pythia-v1.1-2.8b@step143000"
    matrix = hx.load_matrix(store, benchmark="mmlu")
    manifest = json.loads((folder / "reduced" / "manifest.json").read_text())
    assert new not in manifest["source"]["models"] and len(manifest["subset"]) == 8
    raw = hx.load_matrix(store, benchmark="mmlu", normalise="none")
    subset = [s["name"] for s in manifest["subset"]]
    pred = hx.predict(folder / "reduced", raw.loc[[new], subset])
    assert isinstance(pred, hx.PredictionResult)
    w = np.array([d["weight"] for d in manifest["datasets"]])
    truth = float(matrix.loc[new, [d["name"] for d in manifest["datasets"]]].to_numpy() @ w)
    agg = pred.aggregate.iloc[0]
    assert agg["normalised_lower"] <= agg["normalised"] <= agg["normalised_upper"] and abs(agg["normalised"] - truth) < 0.03
    # The full-benchmark score is MMLU's acc (about 0.28 for this model), not the normalised 0.05 it once was,
    # weighted as lm-eval's mmlu group weights its subjects.
    from harness_ext.benchmarks import MMLU_TEST_SIZES

    names = [d["name"] for d in manifest["datasets"]]
    sizes = np.array([MMLU_TEST_SIZES[n] for n in names], dtype=float)
    acc = float(raw.loc[new, names].to_numpy() @ sizes / sizes.sum())
    assert agg["metric"] == "acc" and 0.25 < agg["aggregate"] < 0.35
    assert agg["lower"] <= agg["aggregate"] <= agg["upper"] and abs(agg["aggregate"] - acc) < 0.02
    assert pred.score["weighting"].startswith("subjects weighted by their test questions")
    # level=: narrower at 50%, the same point estimates (issue: predict --level).
    half = hx.predict(folder / "reduced", raw.loc[[new], subset], level=0.5)
    h = half.aggregate.iloc[0]
    assert h["aggregate"] == pytest.approx(agg["aggregate"]) and h["normalised"] == pytest.approx(agg["normalised"])
    assert h["upper"] - h["lower"] < agg["upper"] - agg["lower"] and half.summary()["interval_level"] == 0.5
    assert ((half.table["upper"] - half.table["lower"]) <= (pred.table["upper"] - pred.table["lower"]) + 1e-12).all()
    frame = pred.to_frame()
    assert len(frame) == 57 and frame["observed"].sum() == 8
    # A dict keyed by lm-eval task names is one model's scores; JSON and text render.
    scores = {f"mmlu_{n}": float(raw.loc[new, n]) for n in subset}
    again = hx.predict(folder / "reduced", scores)
    assert again.aggregate["aggregate"].iloc[0] == pytest.approx(agg["aggregate"])
    doc = json.loads(again.to_json())
    assert doc["aggregate"][0]["model"] == "new_model" and "full-benchmark estimate" in str(again)
    assert doc["manifest"] == str(folder / "reduced")
    # A manifest given as a dict has no file: JSON null, not the string "None".
    assert json.loads(hx.predict(manifest, scores).to_json())["manifest"] is None
    partial = hx.predict(folder / "reduced", dict(list(scores.items())[:4]))
    assert partial.warnings and all(f"warning: {w}" in str(partial) for w in partial.warnings)
    # A model the manifest was built from is predicted in-sample, and says so; the held-out one does not.
    trained = manifest["source"]["models"][0]
    insample = hx.predict(folder / "reduced", raw.loc[[trained], subset])
    assert any(trained in w and "in-sample" in w for w in insample.warnings)
    assert not any("in-sample" in w for w in pred.warnings)
    with pytest.raises(HarnessExtError, match="the scores: 1 column.* not numbers: "):
        hx.predict(folder / "reduced", {subset[0]: "n/a"})
    with pytest.raises(HarnessExtError, match="match no single dataset"):
        hx.predict(folder / "reduced", {"not_a_subject": 0.3})
    # Result files, as 'harness-ext predict' reads them: the same prediction from the model's own run.
    run = hx.bundled_data_path() / "pythia-2.8b" / "2.8b-5shot_step143000.json"
    from_file = hx.predict(folder / "reduced", run)
    assert from_file.aggregate["model"].tolist() == [new]
    assert from_file.aggregate["aggregate"].iloc[0] == pytest.approx(agg["aggregate"], abs=1e-9)


@pytest.mark.slow  # the example ingests 269 files and reduces 57 datasets (~30 s)
def test_api_reduce_gives_the_cli_manifest_byte_for_byte(example_run, tmp_path):
    """The same store, query and seed: hx.reduce(...).write() and 'harness-ext reduce' write the same manifest."""
    from harness_ext.cli import main

    folder, _ = example_run
    store = folder / "pythia.duckdb"
    res = hx.reduce(store, benchmark="mmlu", budget=5, seed=1, n_random=20, n_random_subsets=10)
    assert isinstance(res, hx.ReduceResult) and len(res.subset) == 5
    res.write(tmp_path / "api", ["json", "task_list"])
    assert main(["reduce", "--db", str(store), "--benchmark", "mmlu", "--budget", "5", "--seed", "1", "--n-random", "20",
                 "--n-random-subsets", "10", "--format", "json,task_list", "--no-plot", "--out", str(tmp_path / "cli")]) == 0
    for name in ("manifest.json", "harness_ext_reduced_tasks.txt"):
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    assert isinstance(res.budget_curve(), pd.DataFrame) and res.budget_curve()["chosen"].sum() == 1
    assert json.loads(res.to_json())["manifest"]["subset"][0]["name"] == res.subset[0]
    assert res.to_frame().index.name == "step"
    # Subset datasets have no cross-validated error: NaN in a float column (was None in an object column).
    assert res.to_frame()["cv_rmse"].dtype == float and res.to_frame()["cv_rmse"].isna().all()


@pytest.mark.slow  # the example ingests 269 files (~30 s); this reduce is ~3 s on 9 columns
def test_reduce_warns_when_a_hand_built_matrix_mixes_scales(example_run):
    """Chatbot Arena's real Elo ratings beside MMLU accuracies: the manifest says the scales are mixed.

    Was: no word; the uniform aggregate followed the Elo column and the subset took it first.
    """
    from conftest import SHARED_DATA, require

    arena = require(SHARED_DATA / "benchbench" / "leaderboards" / "chatbot_arena_241104_holistic.csv")
    folder, _ = example_run
    raw = hx.load_matrix(folder / "pythia.duckdb", benchmark="mmlu", normalise="none")
    elo = pd.read_csv(arena)["arena_elo"].to_numpy()
    frame = pd.DataFrame(raw.iloc[:, :8].to_numpy(), index=raw.index, columns=raw.columns[:8])
    frame["arena_elo"] = np.resize(elo, len(frame))  # real ratings, paired with models only for the shape
    res = hx.reduce(frame, budget=3, seed=0, n_random=20, n_random_subsets=10)
    [note] = [w for w in res.warnings if "mixes scales" in w]
    # print(res) shows the warnings the command line logs (was: render() only, warnings lost in a notebook).
    assert "8 columns proportion; unbounded: arena_elo" in note and f"warning: {note}" in str(res)
    # The same accuracies alone, or the store's normalised matrix: no such warning.
    assert not [w for w in hx.reduce(frame.iloc[:, :8], budget=3, seed=0, n_random=20,
                                     n_random_subsets=10).warnings if "mixes scales" in w]


def test_api_refusals_are_clear(tmp_path):
    scores = pd.DataFrame({"anatomy": [0.3, 0.4]}, index=["a", "b"])
    # Was: ingest read each column name as a missing file, load_matrix printed the frame as a store path.
    with pytest.raises(HarnessExtError, match=r"ingest\(\) takes a path, not a DataFrame.*harness_ext.reduce"):
        hx.ingest(scores, store=tmp_path / "s.duckdb")
    with pytest.raises(HarnessExtError, match=r"load_matrix\(\) takes a path, not a DataFrame"):
        hx.load_matrix(scores)
    # Was: numpy's "could not convert string to float: 'pythia'", "File name too long" on an array, and a
    # model named twice taken as two models. Each refusal names what is wrong.
    with pytest.raises(HarnessExtError, match="the matrix: 1 column.* not numbers: family; keep only score columns"):
        hx.reduce(scores.assign(family="pythia"))
    with pytest.raises(HarnessExtError, match="the matrix: a model named more than once: a"):
        hx.reduce(scores.set_axis(["a", "a"]))
    with pytest.raises(HarnessExtError, match=r"reduce\(\) takes a DataFrame .* not ndarray"):
        hx.reduce(scores.to_numpy())
    with pytest.raises(HarnessExtError, match="no harness-ext store"):
        hx.load_matrix(tmp_path / "missing.duckdb")
    with pytest.raises(HarnessExtError, match="no harness-ext store"):
        hx.reduce(tmp_path / "missing.duckdb")


def test_ingest_report_prints_its_summary(tmp_path):
    """print(hx.ingest(...)) is the line 'harness-ext ingest' prints, not a repr of every file."""
    run = hx.bundled_data_path() / "pythia-2.8b" / "2.8b-5shot_step143000.json"
    report = hx.ingest(run, store=tmp_path / "s.duckdb")
    assert str(report) == report.summary() and str(report).startswith("1 file ingested (")
    assert str(hx.ingest(run, store=tmp_path / "s.duckdb")).startswith("0 files ingested (0 results), 1 unchanged")


def test_ingest_reads_again_what_an_older_reader_stored(tmp_path):
    """`harness-ext ingest --reread` had no Python form: hx.ingest counted the files an older reader stored and
    could not read them again. A real leaderboard CSV stored with no recorded reader (a store made before readers
    were recorded) is counted, then read again with reread=True, as the command does."""
    import duckdb

    table = Path(__file__).parent / "fixtures" / "csv" / "arena_hard_auto_leaderboard_v0.1.csv"
    db = tmp_path / "s.duckdb"
    hx.ingest(table, store=db)
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE sources SET reader = NULL")
    assert hx.ingest(table, store=db).n_older_reader == 1
    again = hx.ingest(table, store=db, reread=True)
    assert again.n_reread == 1 and "1 of them read again" in again.summary()
    assert hx.ingest(table, store=db).n_older_reader == 0



@pytest.mark.slow
def test_ingest_takes_the_commands_reading_options(tmp_path):
    """hx.ingest had no form of --meta-columns (nor --column-meta, --mteb-split, --mteb-languages): a real
    leaderboard CSV's columns the command stores as model metadata were datasets through the API."""
    table = Path(__file__).parent / "fixtures" / "csv" / "obsscaling_base_llm_benchmark_eval.csv"
    hx.ingest(table, store=tmp_path / "a.duckdb")
    hx.ingest(table, store=tmp_path / "b.duckdb", meta_columns="HumanEval, XWinograd")
    subprocess.run([sys.executable, "-m", "harness_ext", "ingest", str(table), "--db", str(tmp_path / "c.duckdb"), "-q",
                    "--meta-columns", "HumanEval,XWinograd"], check=True)
    plain, via_api = hx.load_matrix(tmp_path / "a.duckdb"), hx.load_matrix(tmp_path / "b.duckdb")
    assert "HumanEval" in plain.columns and "HumanEval" not in via_api.columns
    assert via_api.equals(hx.load_matrix(tmp_path / "c.duckdb"))
    with pytest.raises(Exception, match="nope.yaml"):  # refused before any CSV is read, as the command does
        hx.ingest(table, store=tmp_path / "d.duckdb", column_meta=tmp_path / "nope.yaml")


def test_the_api_is_listed_and_lazy():
    for name in ("ingest", "load_matrix", "reduce", "predict", "ReduceResult", "PredictionResult"):
        assert name in hx.__all__ and name in dir(hx)
    code = "import sys, harness_ext; assert 'numpy' not in sys.modules and 'pandas' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
