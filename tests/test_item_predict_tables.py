"""``predict`` on an item manifest from a new model's item-response table (the tables ``ingest`` reads).

The population is the committed HELM Lite slices (``fixtures/items``: GSM8K long with a sidecar, OpenbookQA wide)
with one model held out of ``reduce``; that model's rows of the same real tables, written to ``tmp_path`` as a
long table, a wide one with its sidecar, or with their ids as text in another order, must give exactly the estimate
its lm-eval logs of the same scores give: items are matched by task, id and metric, never by position.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import harness_ext as hx
from harness_ext.cli import main
from harness_ext.errors import HarnessExtError
from harness_ext.methods.reduction.item_manifest import decode_ids
from harness_ext.methods.reduction.item_predict import predict_items, read_item_logs

ITEMS = Path(__file__).resolve().parent / "fixtures" / "items"
HELD_OUT = "qwen_qwen1.5-14b"  # in both slices
METRICS = {"gsm": "final_number_exact_match", "commonsense": "exact_match"}
DATE = "2026-01-01T00-00-00.000000"


def _slices() -> dict:
    """task -> the real slice as a long table (model, item, score)."""
    wide = pd.read_csv(ITEMS / "commonsense_wide.csv")
    return {"gsm": pd.read_parquet(ITEMS / "gsm_slice.parquet"),
            "commonsense": wide.melt(id_vars="item", var_name="model", value_name="score")}


@pytest.fixture(scope="module")
def reduced(tmp_path_factory):
    """The slices' population without the held-out model, reduced to 10 items per task (aipw: fast and exact)."""
    base = tmp_path_factory.mktemp("pop")
    db = base / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(ITEMS)]) == 0
    red = hx.reduce_items(db, 10, estimator="aipw", exclude_models=HELD_OUT, seed=0)
    red.write(base / "reduced")
    return base / "reduced", json.loads((base / "reduced" / "manifest.json").read_text())


def _samples(manifest: dict) -> dict:
    return {t: decode_ids(b["sample"]) for t, b in manifest["tasks"].items()}


def _write_logs(folder: Path, rows: dict, metrics: dict = METRICS) -> Path:
    """The held-out model's drawn items as lm-eval logs them (the path predict read before tables)."""
    folder.mkdir(parents=True)
    (folder / f"results_{DATE}.json").write_text(json.dumps(
        {"config": {"model": "hf", "model_args": f"pretrained={HELD_OUT}"}, "model_name": HELD_OUT, "results": {}}))
    for task, r in rows.items():
        m = metrics[task]
        lines = [json.dumps({"doc_id": int(d), "filter": "none", "metrics": [m], m: float(s)})
                 for d, s in zip(r["item"], r["score"])]
        (folder / f"samples_{task}_{DATE}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def _drawn(manifest: dict) -> dict:
    """task -> the held-out model's rows of the drawn items, in a shuffled order (a table's order is its own)."""
    out = {}
    for task, t in _slices().items():
        r = t[(t["model"] == HELD_OUT) & t["item"].isin(_samples(manifest)[task])]
        out[task] = r.sample(frac=1.0, random_state=3).reset_index(drop=True)
    return out


def _estimates(pred) -> pd.DataFrame:
    return pred.table.set_index("dataset")[["raw", "raw_lower", "raw_upper", "n_used"]]


@pytest.mark.slow  # the population is reduced (ingest, reduce_items with its expected error): ~10 s
def test_a_models_item_table_gives_the_estimate_its_logs_give(reduced, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="harness_ext.predict")
    out, manifest = reduced
    rows = _drawn(manifest)
    from_logs = predict_items(manifest, [_write_logs(tmp_path / "logs", rows)])
    new = tmp_path / "table"
    new.mkdir()
    # One long table with a task column and a metric column: the sidecar-free layout ingest reads by its header.
    pd.concat([r.assign(task=t, metric=METRICS[t]) for t, r in rows.items()]).to_csv(new / "qwen.csv", index=False)
    from_table = predict_items(manifest, [new])
    pd.testing.assert_frame_equal(_estimates(from_table), _estimates(from_logs))
    pd.testing.assert_frame_equal(from_table.aggregate, from_logs.aggregate)
    assert (from_table.table["n_used"] == 10).all() and from_table.table["raw"].notna().all()
    # Every score matched: an informational line (-v), no warning.
    said = f"{new / 'qwen.csv'}: 20 of its 20 item scores matched the manifest's items (task, item id and metric)"
    assert said not in from_table.warnings and said in caplog.messages
    assert from_table.sources == {HELD_OUT: [str(new / "qwen.csv")]}


@pytest.mark.slow  # the population is reduced (ingest, reduce_items with its expected error): ~10 s
def test_tables_with_the_populations_sidecar_convention_are_read_as_ingest_reads_them(reduced, tmp_path):
    """The held-out model's whole rows: a long Parquet table with a sidecar and a wide CSV declared by one, as the
    population's files are; every item logged, so each task is measured, exactly its mean (the harness's score)."""
    out, manifest = reduced
    new = tmp_path / "new"
    new.mkdir()
    slices = _slices()
    g = slices["gsm"][slices["gsm"]["model"] == HELD_OUT]
    g.to_parquet(new / "gsm_mine.parquet", index=False)
    (new / "gsm_mine.parquet.meta.yaml").write_text(
        "items:\n  task: gsm\n  metric: final_number_exact_match\n  benchmark: helm_lite\n")
    c = slices["commonsense"]
    c[c["model"] == HELD_OUT].pivot(index="item", columns="model", values="score").reset_index().to_csv(
        new / "obqa.csv", index=False)
    (new / "obqa.csv.meta.yaml").write_text("items:\n  layout: items_x_models\n  task: commonsense\n"
                                            "  metric: exact_match\n")
    pj = tmp_path / "pred.json"
    assert main(["predict", "-m", str(out), str(new), "--json", str(pj), "--no-lm-eval-results"]) == 0
    rows = pd.DataFrame(json.loads(pj.read_text())["datasets"]).set_index("dataset")
    assert rows["observed"].all()
    assert rows.loc["gsm", "raw"] == pytest.approx(float(g["score"].mean()), abs=1e-9)  # the JSON keeps 10 decimals
    assert rows.loc["commonsense", "raw"] == pytest.approx(float(c.loc[c["model"] == HELD_OUT, "score"].mean()),
                                                           abs=1e-9)  # the JSON keeps 10 decimals


def test_a_table_of_text_ids_is_matched_by_id_not_by_position(tmp_path):
    """Ids that are not numbers (``q17x``) are numbered by position in each file; predict matches the new model's
    by their text, so a table listing only the drawn items, in another order, gives its logs' estimate."""
    pop = tmp_path / "pop"
    pop.mkdir()
    g = _slices()["gsm"].assign(item=lambda d: "q" + d["item"].astype(str) + "x")
    g = g.sort_values(["model", "item"], key=lambda s: s.map(hash) if s.name == "item" else s)  # not 0, 1, ... order
    g[g["model"] != HELD_OUT].to_parquet(pop / "gsm.parquet", index=False)
    (pop / "gsm.parquet.meta.yaml").write_text("items:\n  metric: final_number_exact_match\n")
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(pop)]) == 0
    manifest = hx.reduce_items(db, 10, estimator="aipw", seed=1).manifest
    b = manifest["tasks"]["gsm"]
    names = dict(zip(decode_ids(b["items"]).tolist(), b["item_ids"]))
    drawn = [names[int(d)] for d in decode_ids(b["sample"])]
    mine = g[(g["model"] == HELD_OUT) & g["item"].isin(drawn)].iloc[::-1]  # reversed: positions differ from the draw
    new = tmp_path / "new"
    new.mkdir()
    mine.to_csv(new / "gsm.csv", index=False)
    (new / "gsm.csv.meta.yaml").write_text("items:\n  metric: final_number_exact_match\n")
    from_table = predict_items(manifest, [new / "gsm.csv"])
    # The same scores as a log naming each item by the manifest's number for its id.
    number = {n: d for d, n in names.items()}
    logs = _write_logs(tmp_path / "logs", {"gsm": pd.DataFrame({"item": mine["item"].map(number),
                                                                "score": mine["score"]})})
    from_logs = predict_items(manifest, [logs])
    pd.testing.assert_frame_equal(_estimates(from_table), _estimates(from_logs))
    assert from_table.table["n_used"].tolist() == [10]


@pytest.mark.slow  # the population is reduced (ingest, reduce_items with its expected error): ~10 s
def test_unmatched_items_of_a_table_are_counted(reduced, tmp_path):
    out, manifest = reduced
    rows = _drawn(manifest)["gsm"]
    extra = pd.DataFrame({"model": HELD_OUT, "item": [900001, 900002], "score": [1.0, 0.0]})
    new = tmp_path / "gsm.csv"
    pd.concat([rows, extra]).to_csv(new, index=False)
    (tmp_path / "gsm.csv.meta.yaml").write_text("items:\n  metric: final_number_exact_match\n")
    pred = predict_items(manifest, [new])
    assert (f"{new}: 10 of its 12 item scores matched the manifest's items (task, item id and metric); 2 not (other "
            "tasks or metrics, or ids that are no item of their task), by task: gsm 2") in pred.warnings
    assert pred.table.set_index("dataset").loc["gsm", "n_used"] == 10


@pytest.mark.slow  # the population is reduced (ingest, reduce_items with its expected error): ~10 s
def test_predict_warns_of_a_tables_matches_only_when_some_scores_did_not_match(reduced, tmp_path, capsys):
    """Through the command line, on the held-out model's real HELM Lite rows: a table whose every item score matched
    is no warning (an informational line with -v); lm-eval logs of the same scores say nothing of it; a table with
    scores of another metric is a warning counting them by task."""
    out, manifest = reduced
    slices = _slices()
    mine = {t: r[r["model"] == HELD_OUT] for t, r in slices.items()}
    whole = tmp_path / "whole"
    whole.mkdir()
    pd.concat([r.assign(task=t, metric=METRICS[t]) for t, r in mine.items()]).to_csv(whole / "qwen.csv", index=False)
    capsys.readouterr()
    assert main(["predict", "-m", str(out), str(whole), "--no-lm-eval-results"]) == 0
    err = capsys.readouterr().err
    assert "matched the manifest's items" not in err and "warning:" not in err, err
    assert main(["predict", "-m", str(out), str(whole), "--no-lm-eval-results", "-v"]) == 0
    assert (f"info: {whole / 'qwen.csv'}: 70 of its 70 item scores matched the manifest's items (task, item id and "
            "metric)") in capsys.readouterr().err.splitlines()
    logs = _write_logs(tmp_path / "logs", _drawn(manifest))
    assert main(["predict", "-m", str(out), str(logs), "--no-lm-eval-results"]) == 0
    assert "matched" not in capsys.readouterr().err
    # The OpenbookQA rows logged under another metric (acc, not the population's exact_match) match nothing.
    other = tmp_path / "other"
    other.mkdir()
    pd.concat([mine["gsm"].assign(task="gsm", metric=METRICS["gsm"]),
               mine["commonsense"].assign(task="commonsense", metric="acc")]).to_csv(other / "qwen.csv", index=False)
    assert main(["predict", "-m", str(out), str(other), "--no-lm-eval-results"]) == 0
    assert (f"warning: {other / 'qwen.csv'}: 40 of its 70 item scores matched the manifest's items (task, item id and "
            "metric); 30 not (other tasks or metrics, or ids that are no item of their task), by task: commonsense 30"
            ) in capsys.readouterr().err.splitlines()


def test_a_tables_ids_are_numbered_by_text_unless_they_are_the_populations_own_numbers(tmp_path):
    """Whole numbers keep their number; ids the manifest lists by text (or that did not keep their own numbers in the
    file) are numbered by their text as a log's ids are, whatever their position in the file."""
    from harness_ext.store.samples import doc_id

    new = tmp_path / "mine.csv"
    pd.DataFrame({"model": "m", "task": ["a", "a", "b", "b"], "item": ["7", "3", "q-z", "q-y"],
                  "score": [1.0, 0.0, 1.0, 1.0]}).to_csv(new, index=False)
    long, sources, _ = read_item_logs([new], listed={"b"})
    assert long.set_index(["task", "doc_id"])["by_id"].to_dict() == {
        ("a", 7): False, ("a", 3): False, ("b", doc_id("q-z")): True, ("b", doc_id("q-y")): True}
    assert sources == {"m": [str(new)]} and set(long["table"]) == {str(new)}


@pytest.mark.slow  # the population is reduced (ingest, reduce_items with its expected error): ~10 s
def test_a_table_with_a_broken_sidecar_is_refused_naming_the_sidecar(reduced, tmp_path):
    _, manifest = reduced
    new = tmp_path / "gsm.csv"
    _drawn(manifest)["gsm"].to_csv(new, index=False)
    (tmp_path / "gsm.csv.meta.yaml").write_text("items:\n  layout: sideways\n")
    with pytest.raises(HarnessExtError, match=r"cannot read the item table .*gsm\.csv: .*gsm\.csv\.meta\.yaml: items "
                                              r"layout 'sideways'"):
        predict_items(manifest, [new])


@pytest.mark.slow  # the population is reduced (ingest, reduce_items with its expected error): ~10 s
def test_an_estimate_from_a_table_is_the_item_estimators_own(reduced, tmp_path):
    """The API: the fitted estimator on the drawn items, given the table's scores in the draw's order."""
    from harness_ext.methods.engine.item_estimators import AIPW
    from harness_ext.methods.reduction.item_manifest import item_positions, task_population

    _, manifest = reduced
    rows = _drawn(manifest)["gsm"]
    new = tmp_path / "gsm.csv"
    rows.to_csv(new, index=False)
    (tmp_path / "gsm.csv.meta.yaml").write_text("items:\n  metric: final_number_exact_match\n")
    pred = predict_items(manifest, [new])
    ids, sample, M, _ = task_population(manifest, "gsm")
    used = np.sort(sample)
    res = AIPW(level=0.9).fit(M, item_positions(ids, used)).predict(
        rows.set_index("item").loc[used, "score"].to_numpy(dtype=float)[None, :])
    got = pred.table.set_index("dataset").loc["gsm"]
    assert got["raw"] == pytest.approx(float(res.estimate[0]), abs=1e-12)


@pytest.mark.slow  # the population is reduced (ingest, reduce_items with its expected error): ~10 s
def test_a_model_beyond_the_population_is_flagged_with_its_distance(reduced, tmp_path):
    """A model answering every drawn item right lies above every population model of the slices: the aggregate's
    ``frontier`` column gives its distance, read from the items it ran, and a warning says how the interval holds;
    one answering none lies below the weakest, at a negative distance."""
    _, manifest = reduced
    rows = _drawn(manifest)
    perfect = pd.concat([r.assign(task=t, metric=METRICS[t], score=1.0, model="perfect") for t, r in rows.items()])
    none = perfect.assign(score=0.0, model="none")
    new = tmp_path / "new"
    new.mkdir()
    perfect.to_csv(new / "perfect.csv", index=False)
    none.to_csv(new / "none.csv", index=False)
    pred = predict_items(manifest, [new])
    agg = pred.aggregate.set_index("model")
    full = {t: s.groupby("model")["score"].mean() for t, s in _slices().items()}
    bench = (pd.DataFrame(full).drop(index=HELD_OUT).dropna().mean(axis=1))  # both tasks, uniform weights
    assert agg.loc["perfect", "frontier"] == pytest.approx(1.0 - bench.max(), abs=1e-12)
    assert agg.loc["none", "frontier"] == pytest.approx(0.0 - bench.min(), abs=1e-12)
    flagged = sorted(w for w in pred.warnings if "beyond the population" in w)
    assert len(flagged) == 2 and "below the weakest" in flagged[0] and flagged[1].startswith("perfect: beyond the population: the mean score of the items "
                                                       "it ran, 1.000 over the benchmark, lies ")
    assert len(bench) == 1 and "of the manifest's 1 population model (" in flagged[1]  # one model has both tasks
    assert "aipw's interval is design-based and holds there" in flagged[1]
    assert "frontier" in pred.render()


@pytest.mark.slow  # reduces the whole shared HELM Lite tables (69 models, 3,504 items)
def test_the_strongest_helm_lite_model_held_out_predicts_from_its_table_as_from_its_logs(tmp_path, capsys):
    """The documented loop on the shared tables: the strongest families held out of reduce (--exclude-models), Claude
    3.5 Sonnet (October 2024) predicted from its own rows of the drawn items: the same estimate as from lm-eval logs
    of them, flagged beyond the population, its score (0.902 on all items) inside the design-based interval."""
    from conftest import SHARED_DATA

    shared = SHARED_DATA / "items" / "helm_lite"
    if not shared.is_dir():
        pytest.skip(f"the shared item tables are not at {shared}")
    strong = "anthropic_claude-3-5-sonnet-20241022"
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(shared)]) == 0
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "50", "--item-estimator", "aipw", "--no-plot", "--out", str(out),
                 "--exclude-models", "anthropic_*", "openai_gpt-4o*", "meta_llama-3.1-405b*", "qwen_qwen2.5-72b*"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    tables = {p.stem: pd.read_parquet(p) for p in sorted(shared.glob("*.parquet"))}
    mine = {t: d[(d["model"] == strong) & d["item"].isin(decode_ids(manifest["tasks"][t]["sample"]))]
            for t, d in tables.items()}
    new = tmp_path / "new"
    new.mkdir()
    pd.concat([d.assign(task=t) for t, d in mine.items()]).to_parquet(new / "claude.parquet", index=False)
    from_table = predict_items(manifest, [new])
    # The shared tables have no sidecar: scored acc, as ingest scores 0/1 items without one.
    from_logs = predict_items(manifest, [_write_logs(tmp_path / "logs", mine, {t: "acc" for t in tables})])
    pd.testing.assert_frame_equal(_estimates(from_table), _estimates(from_logs))
    agg = from_table.aggregate.set_index("model").loc[strong]
    truth = np.mean([float(d.loc[d["model"] == strong, "score"].mean()) for d in tables.values()])
    assert truth == pytest.approx(0.902, abs=5e-4)
    assert agg["lower"] <= truth <= agg["upper"] and agg["frontier"] > 0
    assert any(w.startswith(f"{strong}: beyond the population") for w in from_table.warnings)


@pytest.mark.slow  # a one-task population reduced: ~5 s
def test_a_benchmark_of_one_task_has_its_tasks_interval(tmp_path):
    """The benchmark row of a one-task reduction is the task row, interval included (it was the normal quantile
    around the task's standard error, beside the task's own Student's t interval)."""
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(ITEMS / "gsm_slice.parquet")]) == 0
    red = hx.reduce_items(db, 10, estimator="sample_mean", exclude_models=HELD_OUT, seed=0)
    red.write(tmp_path / "reduced")
    manifest = json.loads((tmp_path / "reduced" / "manifest.json").read_text())
    assert list(manifest["tasks"]) == ["gsm"]
    g = _slices()["gsm"]
    drawn = g[(g["model"] == HELD_OUT) & g["item"].isin(_samples(manifest)["gsm"])]
    pred = predict_items(manifest, [_write_logs(tmp_path / "logs", {"gsm": drawn})])
    task, agg = pred.table.iloc[0], pred.aggregate.iloc[0]
    assert (agg["aggregate"], agg["lower"], agg["upper"]) == (
        pytest.approx(task["raw"]), pytest.approx(task["raw_lower"]), pytest.approx(task["raw_upper"]))
    bench = manifest["expected_error"]["interpolation"]
    assert bench["benchmark"]["mean_width"] == pytest.approx(bench["tasks"]["gsm"]["mean_width"], rel=1e-6)
