"""``predict`` on an item manifest with several new models in its inputs: each predicted on its own, never pooled.

Dataset-level ``predict`` gives every model found in its results files a prediction of its own; item-level ``predict``
does the same for an item-response table of several models (long or wide) and for a folder of several models'
lm-eval ``--log_samples`` output. Pinned on real data: the committed HELM Lite slices (``fixtures/items``, three models
held out of ``reduce``), lm-eval's own output of the toy models (``fixtures/samples``), and, when present, the shared
HELM Lite tables: each model's rows give exactly the prediction that model gets when predicted alone.
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
from harness_ext.methods.reduction.item_manifest import decode_ids
from harness_ext.methods.reduction.item_predict import predict_items, read_item_logs
from test_item_predict_tables import ITEMS, METRICS, _slices

HELD_OUT = ("01-ai_yi-34b", "meta_llama-3-70b", "qwen_qwen1.5-14b")  # yi and qwen in both slices, llama in gsm only
LOGS = Path(__file__).resolve().parent / "fixtures" / "samples" / "lm_eval_output"


@pytest.fixture(scope="module")
def reduced(tmp_path_factory):
    """The slices' population without the three held-out models, 10 items per task (aipw: fast and exact)."""
    base = tmp_path_factory.mktemp("pop3")
    db = base / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(ITEMS)]) == 0
    red = hx.reduce_items(db, 10, estimator="aipw", exclude_models=list(HELD_OUT), seed=0)
    red.write(base / "reduced")
    return base / "reduced", json.loads((base / "reduced" / "manifest.json").read_text())


def _drawn(manifest: dict) -> pd.DataFrame:
    """The held-out models' rows of the drawn items, one long table with task and metric, in a shuffled order."""
    out = []
    for task, t in _slices().items():
        r = t[t["model"].isin(HELD_OUT) & t["item"].isin(decode_ids(manifest["tasks"][task]["sample"]))]
        out.append(r.assign(task=task, metric=METRICS[task]))
    return pd.concat(out).sample(frac=1.0, random_state=7).reset_index(drop=True)


def _of(pred, model: str) -> tuple:
    """One model's task rows and benchmark row, indexed afresh (as a prediction of that model alone has them)."""
    return (pred.table[pred.table["model"] == model].reset_index(drop=True),
            pred.aggregate[pred.aggregate["model"] == model].reset_index(drop=True))


def _alone(manifest: dict, rows: pd.DataFrame, folder: Path) -> dict:
    """model -> its prediction from a table of its own rows only."""
    folder.mkdir()
    out = {}
    for model, r in rows.groupby("model", sort=False):
        path = folder / f"{model}.csv"
        r.to_csv(path, index=False)
        out[model] = predict_items(manifest, [path])
    return out


def _assert_each_as_alone(pred, alone: dict) -> None:
    assert list(pred.aggregate["model"]) == sorted(alone)
    for model, one in alone.items():
        table, agg = _of(pred, model)
        pd.testing.assert_frame_equal(table, one.table)
        pd.testing.assert_frame_equal(agg, one.aggregate)


@pytest.mark.slow  # the population is reduced (ingest, reduce_items with its expected error): ~10 s
def test_a_long_table_of_three_models_predicts_each_as_alone(reduced, tmp_path):
    _, manifest = reduced
    rows = _drawn(manifest)
    table = tmp_path / "three.csv"
    rows.to_csv(table, index=False)
    pred = predict_items(manifest, [table])
    _assert_each_as_alone(pred, _alone(manifest, rows, tmp_path / "alone"))
    assert pred.sources == {m: [str(table)] for m in HELD_OUT}
    assert (pred.table["n_used"] == np.where(pred.table["model"].eq("meta_llama-3-70b")
                                             & pred.table["dataset"].eq("commonsense"), 0, 10)).all()
    assert "meta_llama-3-70b: no per-item exact_match log for task commonsense" in pred.warnings
    assert not any("matched the manifest's items" in w for w in pred.warnings)  # all matched: nothing to warn of
    assert not any("in-sample" in w for w in pred.warnings)


@pytest.mark.slow  # the population is reduced (ingest, reduce_items with its expected error): ~10 s
def test_a_wide_table_of_two_models_predicts_each_as_alone(reduced, tmp_path):
    """Items x models, declared by its sidecar: one column per model, as the population's OpenbookQA slice."""
    _, manifest = reduced
    rows = _drawn(manifest)
    rows = rows[(rows["task"] == "commonsense") & rows["model"].isin(HELD_OUT)]
    wide = tmp_path / "obqa.csv"
    rows.pivot(index="item", columns="model", values="score").reset_index().to_csv(wide, index=False)
    (tmp_path / "obqa.csv.meta.yaml").write_text("items:\n  layout: items_x_models\n  task: commonsense\n"
                                                 "  metric: exact_match\n")
    pred = predict_items(manifest, [wide])
    _assert_each_as_alone(pred, _alone(manifest, rows, tmp_path / "alone"))
    assert list(pred.aggregate["model"]) == ["01-ai_yi-34b", "qwen_qwen1.5-14b"]


@pytest.mark.slow  # the population is reduced (ingest, reduce_items with its expected error): ~10 s
def test_the_command_shows_and_writes_one_block_per_model(reduced, tmp_path, capsys, monkeypatch):
    out, manifest = reduced
    monkeypatch.chdir(tmp_path)
    new = tmp_path / "new"
    new.mkdir()
    _drawn(manifest).to_parquet(new / "checkpoints.parquet", index=False)
    pj = tmp_path / "pred.json"
    capsys.readouterr()
    assert main(["predict", "-m", str(out), str(new), "--json", str(pj)]) == 0
    text = capsys.readouterr().out
    for model in HELD_OUT:
        assert f"\n{model}: task scores estimated from their items" in text
    doc = json.loads(pj.read_text())
    assert [a["model"] for a in doc["aggregate"]] == list(HELD_OUT)
    assert pd.DataFrame(doc["datasets"]).groupby("model").size().to_dict() == {m: 2 for m in HELD_OUT}
    # The lm-eval-layout results beside the table, one per model: a folder of several models names each file.
    assert sorted(p.name for p in new.glob("harness_ext_prediction_*")) == [
        f"harness_ext_prediction_{m}.json" for m in HELD_OUT]


@pytest.mark.slow  # the population is reduced (ingest, reduce_items with its expected error): ~10 s
def test_the_populations_own_table_predicts_each_model_with_one_in_sample_warning(reduced, tmp_path, capsys):
    """The table reduce drew from: its population models are predicted in-sample, said once, naming them."""
    out, manifest = reduced
    pred = predict_items(manifest, [ITEMS / "gsm_slice.parquet"])
    models = sorted(pd.read_parquet(ITEMS / "gsm_slice.parquet")["model"].unique())
    assert list(pred.aggregate["model"]) == models
    known = [m for m in models if m in manifest["models"]]
    assert len(known) == 5
    said = [w for w in pred.warnings if "in-sample" in w]
    assert said == [f"{', '.join(known)}: among the manifest's population models: their estimates are in-sample"]


def test_a_table_of_several_models_is_read_with_each_rows_own_model():
    long, sources, _ = read_item_logs([ITEMS / "commonsense_wide.csv"])
    models = list(pd.read_csv(ITEMS / "commonsense_wide.csv").columns[1:])
    assert sorted(sources) == sorted(models) and all(v == [str(ITEMS / "commonsense_wide.csv")]
                                                     for v in sources.values())
    assert long.groupby("model").size().to_dict() == {m: 30 for m in models}
    wide = pd.read_csv(ITEMS / "commonsense_wide.csv").set_index("item")
    got = long.pivot(index="doc_id", columns="model", values="value")
    pd.testing.assert_frame_equal(got[models], wide[models].astype(float), check_names=False)


def _toy_manifest(tmp_path) -> dict:
    """lm-eval's own output of two toy models as the population, 8 of 18 items drawn."""
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(LOGS / "toy__lm-small"), str(LOGS / "toy__lm-medium")]) == 0
    return hx.reduce_items(db, 8, metric="acc", estimator="aipw", seed=3).manifest


def _drawn_only(folder: Path, sample) -> None:
    """Keep only the drawn items in each samples file of ``folder`` (what lm_eval --samples runs)."""
    for log in folder.glob("samples_toy_arith_mc_*.jsonl"):
        kept = [ln for ln in log.read_text().splitlines() if json.loads(ln)["doc_id"] in set(sample)]
        log.write_text("\n".join(kept) + "\n")


@pytest.mark.parametrize("layout", ["own_folders", "side_by_side"])
def test_two_models_lm_eval_logs_in_one_folder_give_two_predictions_never_pooled(tmp_path, layout):
    """lm-eval writes each run to ``<output_path>/<model>/``; a user may also copy runs side by side into one folder,
    where each samples file belongs to the results file of its date stamp. Either way: one prediction per model, each
    from its own items only, exactly as that model's folder alone gives."""
    manifest = _toy_manifest(tmp_path)
    sample = decode_ids(manifest["tasks"]["toy_arith_mc"]["sample"]).tolist()
    runs = tmp_path / "runs"
    alone = {}
    for name in ("toy__lm-large", "toy__lm-medium"):
        own = tmp_path / "alone" / name
        shutil.copytree(LOGS / name, own)
        _drawn_only(own, sample)
        alone[name.replace("__", "/")] = predict_items(manifest, [own])
        dest = runs / name if layout == "own_folders" else runs
        dest.mkdir(parents=True, exist_ok=True)
        for f in own.iterdir():
            shutil.copy(f, dest / f.name)
    pred = predict_items(manifest, [runs])
    _assert_each_as_alone(pred, alone)
    rows = pred.table.set_index("model")
    assert (rows["n_used"] == 8).all() and not rows["observed"].any()
    # Two models' items pooled would give one estimate between theirs: here each is its own items' estimate.
    assert rows.loc["toy/lm-large", "raw"] != rows.loc["toy/lm-medium", "raw"]
    assert not any("logged twice" in w for w in pred.warnings)
    assert [w for w in pred.warnings if "in-sample" in w] == [
        "toy/lm-medium: among the manifest's population models: its estimates are in-sample"]


def test_a_samples_file_whose_date_names_no_one_results_file_is_refused(tmp_path):
    """Side by side, a samples file whose date stamp matches no results file cannot be given a model: one error
    naming it and the models beside it, never a guess (which could put one model's items under another)."""
    from harness_ext.errors import HarnessExtError

    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("toy__lm-large", "toy__lm-medium"):
        for f in (LOGS / name).iterdir():
            shutil.copy(f, runs / f.name)
    [mc] = runs.glob("samples_toy_arith_mc_2026-11-22T19-54-30*.jsonl")
    mc.rename(runs / "samples_toy_arith_mc_2026-11-22T20-00-00.000000.jsonl")
    with pytest.raises(HarnessExtError, match=r"samples_toy_arith_mc_2026-11-22T20-00-00\.000000\.jsonl: the results "
                                              r"files beside it name several models \(toy/lm-large, toy/lm-medium\)"):
        read_item_logs([runs])


@pytest.mark.slow  # reduces the whole shared HELM Lite tables (69 models, 3,504 items)
def test_three_held_out_helm_lite_models_in_one_table_predict_each_as_alone(tmp_path):
    """The documented loop on the shared tables with the default estimator (crosstask, which borrows across tasks and
    caches its fits across models): one table of three held-out models gives each the prediction it gets alone."""
    from conftest import SHARED_DATA

    shared = SHARED_DATA / "items" / "helm_lite"
    if not shared.is_dir():
        pytest.skip(f"the shared item tables are not at {shared}")
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(shared)]) == 0
    models = ["anthropic_claude-3-5-sonnet-20241022", "anthropic_claude-2.1", "openai_gpt-4o-mini-2024-07-18"]
    manifest = hx.reduce_items(db, 50, exclude_models=["anthropic_*", "openai_gpt-4o*"], seed=0).manifest
    rows = pd.concat([d[d["model"].isin(models) & d["item"].isin(decode_ids(manifest["tasks"][p.stem]["sample"]))]
                      .assign(task=p.stem) for p in sorted(shared.glob("*.parquet")) for d in [pd.read_parquet(p)]])
    table = tmp_path / "three.parquet"
    rows.to_parquet(table, index=False)
    pred = predict_items(manifest, [table])
    _assert_each_as_alone(pred, _alone(manifest, rows, tmp_path / "alone"))
    assert (pred.table["n_used"] == 50).all()
    assert pred.aggregate.set_index("model").loc[models[0], "frontier"] > 0
