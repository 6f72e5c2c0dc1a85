"""Small defects a new user meets, each on real or bundled data: long names in tables, the one name of the item
count, a prediction's folder, an item reduction's frame unit, step-named checkpoints offered as duplicates."""

from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest

import harness_ext as hx
from conftest import SHARED_DATA
from harness_ext.cli import main
from harness_ext.errors import HarnessExtError
from harness_ext.report import MAX_CELL, format_table, shorten

#: Two Open LLM Leaderboard records (Every Eval Ever) of one fine-tuner; one model's name is 113 characters with its
#: precision (``LONG (bfloat16)``), its id 102 without.
LONG_NAMES = SHARED_DATA / "every_eval_ever" / "data" / "hfopenllm_v2" / "Joseph717171"
LONG = "Joseph717171/Hermes-3-Llama-3.1-8B_TIES_with_Base_Embeds_Initialized_to_Special_Instruct_Toks_dtypeF32"
HELM_LITE_ITEMS = SHARED_DATA / "items" / "helm_lite"
BENCHBENCH = SHARED_DATA / "benchbench" / "leaderboards"
NEW = "EleutherAI/pythia-v1.1-2.8b@step143000"


@pytest.fixture(scope="module")
def bundled_store(tmp_path_factory):
    """The bundled Pythia runs (269 checkpoints) in a store."""
    db = tmp_path_factory.mktemp("bundled") / "pythia.duckdb"
    hx.ingest(hx.bundled_data_path(), store=db)
    return db


@pytest.fixture(scope="module")
def bundled(bundled_store):
    """The store, and a small reduction of MMLU without Pythia-2.8B's last checkpoint."""
    matrix = hx.load_matrix(bundled_store, benchmark="mmlu")
    reduced = hx.reduce(matrix.drop(index=NEW), budget=4, seed=0, n_random=20, n_random_subsets=5)
    return bundled_store, reduced


# -- 1. tables: long cells shortened in the middle, the JSON whole ------------------------------------------------
def test_shorten_keeps_both_ends():
    name = "EleutherAI/pythia-v1.1-2.8b-deduped@step143000"
    assert shorten(name, 100) == name
    short = shorten(LONG)
    assert len(short) == MAX_CELL and short.startswith("Joseph717171/") and short.endswith("dtypeF32")
    prose, listed = "not merged: one source lists both, " * 3, ", ".join(["exact_match"] * 8)
    frame = pd.DataFrame({"model": [LONG, "m"], "why": [prose, "y"], "metrics": [listed, "acc"]}, index=[LONG, "b"])
    text = format_table(frame)
    assert LONG not in text and short in text and prose.strip() in text and listed in text  # prose and lists whole
    assert text.splitlines()[-1].startswith("(2 cells over 60 characters shortened in the middle")
    assert format_table(pd.DataFrame({"model": ["m"]})) == pd.DataFrame({"model": ["m"]}).to_string()
    rows = format_table([{"name": LONG, "status": "disabled: same name as the built-in one " * 2}], index=False)
    assert short in rows and "built-in one disabled" in rows and "1 cell over 60" in rows


@pytest.mark.skipif(not (LONG_NAMES.is_dir() and BENCHBENCH.is_dir()), reason="shared data not present")
def test_models_table_is_not_as_wide_as_its_longest_name(tmp_path, capsys):
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "--db", db, "-q", str(LONG_NAMES), str(BENCHBENCH)]) == 0
    capsys.readouterr()
    assert main(["models", "--db", db]) == 0
    out = capsys.readouterr().out
    assert LONG not in out and shorten(LONG) in out and shorten(f"{LONG} (bfloat16)") in out
    assert out.splitlines()[-1].endswith("shortened in the middle, marked …; the JSON output holds them whole)")
    # A model's list of benchmarks is cut as info cuts a list: whole names, the rest counted.
    assert "more: --json lists them)" in out
    assert max(len(line) for line in out.splitlines()) < 3 * MAX_CELL + 80
    assert main(["models", "--db", db, "--json", str(tmp_path / "m.json")]) == 0
    rows = json.loads((tmp_path / "m.json").read_text())["tables"]["models"]
    assert f"{LONG} (bfloat16)" in {r["name"] for r in rows} and LONG in {r["canonical"] for r in rows}
    assert max(r["benchmarks"].count(",") for r in rows) >= 10


# -- 5. models --unmatched: no pairs of one run's step checkpoints, counted ------------------------------------
def test_unmatched_leaves_out_checkpoints_of_one_run_and_counts_them(bundled_store, tmp_path, capsys):
    db = bundled_store
    assert main(["models", "--db", str(db), "--unmatched", "--json", str(tmp_path / "u.json")]) == 0
    out = capsys.readouterr().out
    # Every one of the 269 names is a step of a Pythia run: 1,876 such pairs were offered for review before.
    assert out.startswith("0 pairs of models that may be the same")
    assert "left out: 1,876 pairs of checkpoints of one run (revisions @step...), two models by design" in out
    doc = json.loads((tmp_path / "u.json").read_text())
    assert doc["tables"]["pairs"] == [] and doc["summary"]["pairs_left_out"] == {
        "checkpoints of one run (revisions @step...)": 1876}
    from harness_ext.store.identity import candidate_pairs

    # A checkpoint and the run's unrevisioned name, or two runs' checkpoints, are still offered.
    pairs = candidate_pairs(["org/model-a@step100", "org/model-a@step2000", "org/model-a", "org/model-aa@step100"], {})
    got = {frozenset(p) for p in zip(pairs["model_a"], pairs["model_b"])}
    assert frozenset(("org/model-a@step100", "org/model-a@step2000")) not in got
    assert frozenset(("org/model-a@step100", "org/model-aa@step100")) in got
    assert pairs.attrs["left_out"] == {"checkpoints of one run (revisions @step...)": 1}


# -- 2. predictions write a folder, as reductions do ----------------------------------------------------------
@pytest.mark.slow  # a reduction (with its nested calibration) and a prediction: ~35 s
def test_prediction_writes_json_and_tables_all_or_none(bundled, tmp_path):
    db, reduced = bundled
    raw = hx.load_matrix(db, benchmark="mmlu", normalise="none")
    pred = hx.predict(reduced, raw.loc[[NEW], reduced.subset])
    paths = pred.write(tmp_path / "out")
    assert [p.name for p in paths] == ["prediction.json", "predictions.csv", "aggregate.csv"]
    assert json.loads(paths[0].read_text()) == json.loads(pred.to_json())
    table = pd.read_csv(paths[1])
    assert len(table) == 57 and {"score", "lower", "upper", "raw", "raw_lower", "raw_upper"} <= set(table)
    assert table["score"].to_numpy() == pytest.approx(pred.to_frame()["score"].to_numpy())
    agg = pd.read_csv(paths[2])
    assert agg.loc[0, "model"] == NEW and agg.loc[0, "lower"] <= agg.loc[0, "aggregate"] <= agg.loc[0, "upper"]
    # One file that cannot be written: none is, and the folder is as it was.
    blocked = tmp_path / "blocked"
    (blocked / "aggregate.csv").mkdir(parents=True)
    with pytest.raises(HarnessExtError, match="aggregate.csv"):
        pred.write(blocked)
    assert sorted(p.name for p in blocked.iterdir()) == ["aggregate.csv"]


@pytest.mark.slow  # two predictions, each calibrated on the manifest's matrix: ~25 s
def test_predict_out_writes_the_folder_and_its_figure(bundled, tmp_path, capsys):
    _, reduced = bundled
    reduced.write(tmp_path / "reduced")
    run = hx.bundled_data_path() / "pythia-2.8b" / "2.8b-5shot_step143000.json"
    base = ["predict", "-m", str(tmp_path / "reduced"), str(run), "--no-lm-eval-results"]
    assert main([*base, "--out", str(tmp_path / "p")]) == 0
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == [
        "aggregate.csv", "prediction.json", "prediction.png", "predictions.csv"]
    assert f"wrote {tmp_path / 'p' / 'prediction.png'}" in capsys.readouterr().out
    assert main([*base, "-o", str(tmp_path / "q"), "--no-plot"]) == 0
    assert not (tmp_path / "q" / "prediction.png").exists() and (tmp_path / "q" / "aggregate.csv").is_file()


# -- 3. and 4. the item reduction: its frame's unit, one name for its count --------------------------------------
@pytest.fixture(scope="module")
def helm_lite_items(tmp_path_factory):
    if not HELM_LITE_ITEMS.is_dir():
        pytest.skip("shared HELM Lite item tables not present")
    db = tmp_path_factory.mktemp("items") / "items.duckdb"
    hx.ingest([HELM_LITE_ITEMS / "gsm.parquet", HELM_LITE_ITEMS / "math.parquet"], store=db)
    return db


@pytest.mark.slow  # an item reduction of two HELM Lite tasks: ~7 s
def test_item_reduction_frame_names_its_unit_and_the_summary_shows_points(helm_lite_items):
    reduced = hx.reduce_items(helm_lite_items, items=20, benchmark="helm_lite", seed=0)
    frame = reduced.to_frame()
    assert set(frame["unit"]) == {"0-1"} and list(frame.index) == ["gsm", "math", "benchmark"]
    assert frame["in_abs_error"].between(0, 1).all()
    printed = reduced.render()
    table = printed.splitlines()[-5:]  # header, index name, gsm, math, benchmark
    assert "(points, 0-100)" in printed and table[0].split()[:2] == ["metric", "items"] and "unit" not in table[0]
    assert f"{100 * frame.loc['benchmark', 'in_abs_error']:.2f}" in table[-1].split()


@pytest.mark.slow  # three item reductions: ~18 s
def test_reduce_items_takes_items_as_reduce_does_and_n_items_warns(helm_lite_items):
    new = hx.reduce_items(helm_lite_items, items=10, benchmark="helm_lite", seed=1).manifest
    with pytest.warns(DeprecationWarning, match=r"reduce_items\(items=\.\.\.\)"):
        old = hx.reduce_items(helm_lite_items, n_items=10, benchmark="helm_lite", seed=1).manifest
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        positional = hx.reduce_items(helm_lite_items, 10, benchmark="helm_lite", seed=1).manifest
    assert json.dumps(new, sort_keys=True) == json.dumps(old, sort_keys=True) == json.dumps(positional, sort_keys=True)
    with pytest.raises(HarnessExtError, match="give items= only"):
        hx.reduce_items(helm_lite_items, items=10, n_items=10, benchmark="helm_lite")
