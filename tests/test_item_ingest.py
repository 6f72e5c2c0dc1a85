"""Item-response tables through ``harness-ext ingest``: stored once, one transaction per file, one error per bad file.

The committed slices (tests/fixtures/items, README there) are cut from the shared HELM Lite tables; the
whole shared folder is ingested when it is present.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.item_tables import item_rows

from conftest import SHARED_DATA

FIXTURES = Path(__file__).parent / "fixtures" / "items"
ITEMS = SHARED_DATA / "items"


def _ingest(db, *paths):
    with Store.open(db) as store:
        return ingest_paths(store, list(paths), show_progress=False)


def _rows(db, **kw):
    with Store.open(db, read_only=True) as store:
        return item_rows(store, **kw)


def test_fixture_slices_ingest_with_benchmark_and_means(tmp_path):
    db = tmp_path / "s.duckdb"
    rep = _ingest(db, FIXTURES)
    got = {Path(f.path).name: f for f in rep.files}
    assert got["gsm_slice.parquet"].status == "ingested" and got["gsm_slice.parquet"].adapter == "item_table"
    assert got["commonsense_wide.csv"].status == "ingested"
    assert "item scores from 2 item files" in rep.summary()
    rows = _rows(db)
    assert set(rows["benchmark"]) == {"helm_lite"}
    assert set(rows["task"]) == {"gsm", "commonsense"}
    assert set(rows["metric"]) == {"final_number_exact_match", "exact_match"}
    src = pd.read_parquet(FIXTURES / "gsm_slice.parquet")
    want = src.groupby("model")["score"].mean()
    have = rows[rows["task"] == "gsm"].groupby("model")["value"].mean()
    assert np.allclose(have.loc[want.index], want) and len(have) == len(want)
    wide = pd.read_csv(FIXTURES / "commonsense_wide.csv", index_col=0)  # items x models
    have = rows[rows["task"] == "commonsense"].groupby("model")["value"].mean()
    assert np.allclose(have.loc[wide.columns], wide.mean(axis=0))
    again = _ingest(db, FIXTURES)
    assert {f.status for f in again.files} == {"unchanged"}
    assert len(_rows(db)) == len(rows)


def test_one_source_row_per_model_and_task(tmp_path):
    db = tmp_path / "s.duckdb"
    _ingest(db, FIXTURES / "gsm_slice.parquet")
    with Store.open(db, read_only=True) as store:
        src = store.con.execute("SELECT model, task, n_rows, benchmark, path FROM sample_sources").df()
    n_models = pd.read_parquet(FIXTURES / "gsm_slice.parquet")["model"].nunique()
    assert len(src) == n_models and src["path"].nunique() == 1 and set(src["benchmark"]) == {"helm_lite"}


def test_bad_file_is_one_error_and_the_rest_go_on(tmp_path):
    d = tmp_path / "items"
    d.mkdir()
    (d / "good.csv").write_text("model,item,score\na,0,1\na,1,0\nb,0,1\n")
    (d / "clash.csv").write_text("model,item,score\na,0,1\na,0,0\n")
    (d / "broken.parquet").write_bytes(b"PAR1 not really")
    (d / "wide.csv").write_text("id,m1,m2\nq1,1,0\nq2,x,1\n")
    (d / "wide.csv.meta.yaml").write_text("items: {layout: items_x_models, task: t}\n")
    db = tmp_path / "s.duckdb"
    rep = _ingest(db, d)
    st = {Path(f.path).name: f for f in rep.files}
    assert st["good.csv"].status == "ingested" and st["good.csv"].n_samples == 3
    assert st["clash.csv"].status == "skipped" and "two different scores" in st["clash.csv"].reason
    assert st["wide.csv"].status == "skipped" and "not a number" in st["wide.csv"].reason
    assert st["broken.parquet"].status == "skipped"
    assert set(_rows(db)["source"]) == {str(d / "good.csv")}


def test_sidecar_items_block_is_checked(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("id,m1\nq1,1\n")
    (tmp_path / "w.csv.meta.yaml").write_text("items: {layout: sideways}\n")
    rep = _ingest(tmp_path / "s.duckdb", p)
    assert rep.files[0].status == "skipped" and "sideways" in rep.files[0].reason


def test_an_items_key_at_the_sidecars_top_level_is_refused_with_where_it_goes(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("model,item,score\nm,0,1\n")
    (tmp_path / "t.csv.meta.yaml").write_text("benchmark: b\nmetric: pass1\n")
    rep = _ingest(tmp_path / "s.duckdb", p)
    assert rep.files[0].status == "skipped"
    assert "unknown keys ['metric']" in rep.files[0].reason
    assert "metric goes under items: in an item-response table's sidecar" in rep.files[0].reason


def test_missing_scores_and_overlaps_are_noted(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "t.csv").write_text("model,item,score\nm,0,1\nm,1,\n")
    (b / "t.csv").write_text("model,item,score\nm,0,0\nm,2,1\n")
    db = tmp_path / "s.duckdb"
    first = _ingest(db, a / "t.csv")
    assert first.files[0].notes == ["1 missing scores (no row stored)",
                                    "no metric named (no metric column or sidecar metric:): its 1 0/1 score stored as "
                                    "acc; a metric column or the sidecar's items: block names the file's own",
                                    "no benchmark named (no benchmark column or sidecar benchmark:): stored under "
                                    "benchmark 'a', the folder's name (--benchmark a selects it)"]
    second = _ingest(db, b / "t.csv")
    assert any("different value" in n for n in second.files[0].notes)


def test_a_store_made_before_the_benchmark_column_still_takes_samples(tmp_path):
    db = tmp_path / "old.duckdb"
    with Store.open(db) as store:  # the samples tables as earlier versions created them
        store.con.execute("""CREATE TABLE sample_sources (source_id INTEGER PRIMARY KEY, path VARCHAR NOT NULL,
            sha256 VARCHAR NOT NULL UNIQUE, model VARCHAR NOT NULL, task VARCHAR NOT NULL, n_rows BIGINT NOT NULL,
            ingested_at TIMESTAMP NOT NULL)""")
        store.con.execute("""CREATE TABLE samples (model VARCHAR NOT NULL, task VARCHAR NOT NULL,
            doc_id BIGINT NOT NULL, metric VARCHAR NOT NULL, value DOUBLE NOT NULL, source VARCHAR NOT NULL,
            source_id INTEGER NOT NULL, doc_hash VARCHAR, prompt_hash VARCHAR)""")
    assert _rows(db).empty
    logs = Path(__file__).parent / "fixtures" / "samples"
    rep = _ingest(db, logs, FIXTURES / "gsm_slice.parquet")
    assert any(f.adapter == "lm_eval_samples" and f.status == "ingested" for f in rep.files)
    rows = _rows(db)
    assert set(rows["benchmark"].dropna()) == {"helm_lite"} and rows["benchmark"].isna().any()


def test_cli_ingest_reports_item_tables(tmp_path, capsys):
    from harness_ext.cli import main

    db, out = tmp_path / "s.duckdb", tmp_path / "report.json"
    assert main(["ingest", "--db", str(db), str(FIXTURES), "--json", str(out)]) == 0
    assert "item scores from 2 item files" in capsys.readouterr().out
    files = json.loads(out.read_text())["tables"]["files"]
    assert {f["adapter"] for f in files} == {"item_table"} and all(f["n_samples"] > 0 for f in files)


@pytest.mark.slow
@pytest.mark.skipif(not ITEMS.is_dir(), reason="needs ../shared/data/items")
def test_shared_item_tables_ingest_whole(tmp_path):
    db = tmp_path / "s.duckdb"
    rep = _ingest(db, ITEMS)
    tables = [f for f in rep.files if f.adapter == "item_table"]
    assert len(tables) == 8 and {f.status for f in tables} == {"ingested"}
    with Store.open(db, read_only=True) as store:
        for f in tables:
            path = Path(f.path)
            src = pd.read_parquet(path)
            want = src.groupby("model")["score"].mean()
            have = store.con.execute(
                "SELECT model, avg(value) AS v FROM samples WHERE source = ? GROUP BY model", [str(path)]
            ).df().set_index("model")["v"]
            assert len(have) == len(want) in (83, 428, 429)
            assert np.allclose(have.loc[want.index], want, atol=1e-6), path
            bench = store.con.execute("SELECT DISTINCT benchmark FROM sample_sources WHERE path = ?",
                                      [str(path)]).fetchall()
            assert bench == [(path.parent.name,)]
    assert {f.status for f in _ingest(db, ITEMS).files if f.adapter == "item_table"} == {"unchanged"}


HELM_RUN = Path(__file__).parent / "fixtures" / "helm_instances" / "babi_qa_task15"


def _stats_mean(run_dir, split="test", metric="quasi_exact_match"):
    stats = json.loads((run_dir / "stats.json").read_text())
    return next(s["mean"] for s in stats if s["name"] == {"name": metric, "split": split})


def test_helm_run_per_instance_stats_give_the_run_score(tmp_path):
    db = tmp_path / "s.duckdb"
    rep = _ingest(db, HELM_RUN)
    by_adapter = {f.adapter: f for f in rep.files}
    assert by_adapter["helm_run"].status == "ingested"
    items = by_adapter["item_table"]
    assert items.status == "ingested" and items.n_samples == 40  # the 40 test instances; valid ones noted
    assert any("other splits than test" in n for n in items.notes)
    rows = _rows(db)
    assert set(rows["benchmark"]) == {"helm"} and set(rows["task"]) == {"babi_qa:task=15"}
    assert rows["value"].mean() == pytest.approx(_stats_mean(HELM_RUN), abs=1e-12)
    assert set(rows["model"]) == {"AlephAlpha/luminous-base"}
    again = _ingest(db, HELM_RUN)
    assert {f.status for f in again.files} == {"unchanged"}


def test_helm_run_with_display_predictions_only(tmp_path):
    from conftest import require

    run = require(SHARED_DATA / "helm-raw-example" / "examples" / "run")
    d = tmp_path / "run"
    shutil.copytree(run, d)
    db = tmp_path / "s.duckdb"
    rep = _ingest(db, d)
    items = next(f for f in rep.files if f.adapter == "item_table")
    assert items.status == "ingested" and items.n_samples == 909
    rows = _rows(db)
    assert rows["value"].mean() == pytest.approx(_stats_mean(d), abs=1e-12)  # HELM's score, from its instances
    # 3,000 entries: 1,000 instances in 3 train trials; the 91 valid ones' 273 left out, the trials averaged: said.
    assert items.notes == [
        "273 per-instance entries of other splits than test (or without quasi_exact_match) left out",
        "2727 per-instance entries of quasi_exact_match on test: 909 instances in 3 train trials each, each "
        "instance's item score the mean over its trials"]


def test_helm_instances_in_uneven_trials_say_so(tmp_path):
    """The real run with one instance's third trial removed: its item score is the mean of two trials, so the items'
    mean is no longer HELM's score (which weights every trial alike), and the note says so."""
    import json

    run = require_helm_raw()
    d = tmp_path / "run"
    shutil.copytree(run, d)
    preds = json.loads((d / "display_predictions.json").read_text(encoding="utf-8"))
    test_ids = {x["id"] for x in json.loads((d / "instances.json").read_text(encoding="utf-8")) if x["split"] == "test"}
    drop = next(i for i, p in enumerate(preds) if p["instance_id"] in test_ids and p["train_trial_index"] == 2)
    del preds[drop]
    (d / "display_predictions.json").write_text(json.dumps(preds), encoding="utf-8")
    rep = _ingest(tmp_path / "s.duckdb", d)
    items = next(f for f in rep.files if f.adapter == "item_table")
    assert items.n_samples == 909
    assert ("2726 per-instance entries of quasi_exact_match on test: 909 instances in 2 to 3 train trials each (so "
            "their mean is not the run's score, which weights every trial alike)") in items.notes[-1]


def require_helm_raw():
    from conftest import require

    return require(SHARED_DATA / "helm-raw-example" / "examples" / "run")


def test_helm_per_instance_file_that_is_broken_is_one_error(tmp_path):
    d = tmp_path / "run"
    shutil.copytree(HELM_RUN, d)
    (d / "per_instance_stats.json").write_text('{"not": "a list"}')
    rep = _ingest(tmp_path / "s.duckdb", d)
    st = {f.adapter: f for f in rep.files}
    assert st["helm_run"].status == "ingested"
    assert st["item_table"].status == "skipped" and "expected a list" in st["item_table"].reason


@pytest.mark.parametrize("name", ["instances.json", "per_instance_stats.json"])
@pytest.mark.parametrize("depth", [5000, 100_000])
def test_helm_instance_file_nested_too_deeply_is_one_error(tmp_path, name, depth):
    """A bracket nested thousands deep made json's decoder raise RecursionError out of ingest (a traceback, and the
    other files of the call lost)."""
    d = tmp_path / "run"
    shutil.copytree(HELM_RUN, d)
    text = (d / name).read_text()
    i = text.index(":") + 1
    (d / name).write_text(text[:i] + "[" * depth + "1" + "]" * depth + ', "zz":' + text[i:])
    rep = _ingest(tmp_path / "s.duckdb", d, FIXTURES / "gsm_slice.parquet")
    items = {Path(f.path).name: f for f in rep.files if f.adapter == "item_table"}
    assert items["gsm_slice.parquet"].status == "ingested"  # the call went on to its other files
    bad = [f for n, f in items.items() if n != "gsm_slice.parquet"]
    assert len(bad) == 1 and bad[0].status == "skipped"
    assert name in bad[0].reason and "nested too deeply" in bad[0].reason


def test_helm_instance_trial_listed_twice_is_one_error(tmp_path):
    """A (instance, trial) listed twice was averaged in as one more trial: the item's score and the run's mean from
    its items moved without a word."""
    d = tmp_path / "run"
    shutil.copytree(HELM_RUN, d)
    doc = json.loads((d / "per_instance_stats.json").read_text())
    doc.append(next(b for b in doc if b.get("perturbation") is None))
    (d / "per_instance_stats.json").write_text(json.dumps(doc))
    st = {f.adapter: f for f in _ingest(tmp_path / "s.duckdb", d).files}
    assert st["helm_run"].status == "ingested" and st["item_table"].status == "skipped"
    assert f"per_instance_stats.json entry {len(doc) - 1}: instance " in st["item_table"].reason
    assert st["item_table"].reason.endswith("is listed twice")


def test_api_ingest_takes_item_tables(tmp_path):
    import harness_ext as hx

    rep = hx.ingest(FIXTURES, tmp_path / "s.duckdb")
    assert [f.status for f in rep.files] == ["ingested", "ingested"] and rep.n_results == 0
