"""A file changed on disk since it was stored (same path, adapter and reading options; other bytes) replaces what its
earlier reading stored, as ``ingest --reread`` replaces an older reader's: the store mirrors the file as it is now.

Each test copies real files (tests/fixtures: lm-eval results, a HELM run with per-instance stats, a leaderboard CSV,
an item-response table, lm-eval per-sample logs) to a temporary folder, ingests them, edits one score in place and
ingests again; the store must then equal a fresh ingest of the edited files, table by table.
"""

from __future__ import annotations

import json
import shutil
from contextlib import contextmanager

import duckdb
import pytest

from conftest import REPO
from harness_ext.cli import main
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.ingest_files import EDITED_KEPT_REASON
from test_store_reread import _snapshot
from test_store_reread_items import TABLES

FIX = REPO / "tests" / "fixtures"
LM_EVAL = FIX / "lm_eval_v04" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-15-28.837033.json"
CSV = FIX / "csv" / "arena_hard_auto_leaderboard_v0.1.csv"


def _ingest(db, paths, **kw):
    with Store.open(str(db)) as store:
        report = ingest_paths(store, paths, show_progress=False, **kw)
        kept = (store._model_ids, store._dataset_ids, store._primary, store._next_source, store._shas)
        store._load_caches()  # the caches a replacement leaves are what the store holds
        assert kept == (store._model_ids, store._dataset_ids, store._primary, store._next_source, store._shas)
        return report


def _edit_lm_eval(folder):
    f = folder / "results.json"
    doc = json.loads(f.read_text())
    task = next(iter(doc["results"]))
    doc["results"][task]["acc,none"] = 0.123
    f.write_text(json.dumps(doc))


def _edit_helm(folder):
    run = folder / "babi_qa_task15"
    stats = json.loads((run / "stats.json").read_text())
    stats[0]["mean"] = 0.9
    (run / "stats.json").write_text(json.dumps(stats))
    per = json.loads((run / "per_instance_stats.json").read_text())
    per[0]["stats"][0]["mean"] = 1.0 - per[0]["stats"][0]["mean"]
    (run / "per_instance_stats.json").write_text(json.dumps(per))


def _edit_csv(folder):
    f = folder / CSV.name
    lines = f.read_text().splitlines()
    cells = lines[1].split(",")
    i = next(i for i, c in enumerate(cells) if c.replace(".", "", 1).isdigit() and i > 0)
    cells[i] = str(float(cells[i]) / 2)
    lines[1] = ",".join(cells)
    f.write_text("\n".join(lines) + "\n")


def _edit_items(folder):
    f = folder / "commonsense_wide.csv"
    lines = f.read_text().splitlines()
    cells = lines[5].split(",")
    cells[1] = "1" if cells[1] == "0" else "0"
    lines[5] = ",".join(cells)
    f.write_text("\n".join(lines) + "\n")


def _edit_samples(folder):
    f = next((folder / "toy").glob("samples_toy_arith_mc_*.jsonl"))
    lines = f.read_text().splitlines()
    doc = json.loads(lines[0])
    doc["acc"] = 1.0 - doc["acc"]
    lines[0] = json.dumps(doc)
    f.write_text("\n".join(lines) + "\n")


def _copy(kind, folder):
    """The real files of ``kind`` in ``folder``; their edit, and how the report counts their scores."""
    if kind == "lm_eval":
        shutil.copy(LM_EVAL, folder / "results.json")
        return _edit_lm_eval, "n_results"
    if kind == "helm_run":
        shutil.copytree(FIX / "helm_instances" / "babi_qa_task15", folder / "babi_qa_task15")
        return _edit_helm, "n_results"
    if kind == "csv":
        shutil.copy(CSV, folder / CSV.name)
        return _edit_csv, "n_results"
    if kind == "item_table":
        for name in ("commonsense_wide.csv", "commonsense_wide.csv.meta.yaml"):
            shutil.copy(FIX / "items" / name, folder / name)
        return _edit_items, "n_samples"
    shutil.copytree(FIX / "samples" / "lm_eval_output" / "toy__lm-small", folder / "toy")
    return _edit_samples, "n_samples"


def _everything(db) -> dict:
    """Every table a reader sees (test_store_reread's snapshot), and the item tables the store has, by content."""
    out = _snapshot(db)
    with Store.open(str(db), read_only=True) as store:
        have = {r[0] for r in store.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        out.update({name: store.con.execute(sql).fetchall() for name, sql in TABLES.items() if name in have})
    return out


KINDS = ["lm_eval", "helm_run", "csv", "item_table", "samples"]


@pytest.mark.parametrize("kind", KINDS)
def test_an_edited_file_replaces_its_earlier_reading_as_a_fresh_ingest_would(kind, tmp_path):
    folder = tmp_path / "files"
    folder.mkdir()
    edit, _ = _copy(kind, folder)
    db = tmp_path / "s.duckdb"
    first = _ingest(db, [folder])
    edit(folder)
    report = _ingest(db, [folder])
    replaced = [f for f in report.by_status("ingested") if f.replaced]
    assert replaced and report.n_replaced == len(replaced)
    assert len(replaced) == (2 if kind == "helm_run" else 1)  # a HELM run: its results and per-instance scores
    for f in replaced:
        count = "n_results" if "n_results" in f.replaced else "n_samples"
        assert f.replaced["versions"] == 1 and not f.reread
        before = {g.path: g for g in first.by_status("ingested")}[f.path]
        assert f.replaced[count] == getattr(before, count) and f.replaced[count + "_now"] == getattr(f, count)
        assert any(n.startswith("replaced: the file changed since it was stored; the earlier version stored from "
                                "this path (") for n in f.notes)
    assert "changed since stored, replacing their earlier reading" in report.summary()
    fresh = tmp_path / "fresh.duckdb"
    _ingest(fresh, [folder])
    assert _everything(db) == _everything(fresh)
    with Store.open(str(db), read_only=True) as store:
        assert store.conflicts().empty  # no "listed twice" between the earlier reading and the new one
    again = _ingest(db, [folder])  # idempotent
    assert not again.by_status("ingested") and again.n_replaced == 0
    assert _everything(db) == _everything(fresh)


def test_the_new_value_is_the_one_used(tmp_path):
    """The lm-eval results file edited in place: the matrix and the raw results give the new value, once."""
    folder = tmp_path / "files"
    folder.mkdir()
    _copy("lm_eval", folder)
    db = tmp_path / "s.duckdb"
    _ingest(db, [folder])
    _edit_lm_eval(folder)
    _ingest(db, [folder])
    with Store.open(str(db), read_only=True) as store:
        values = store.con.execute("SELECT value FROM results r JOIN datasets d USING (dataset_id) "
                                   "WHERE d.name = 'gpqa_diamond_zeroshot' AND d.metric = 'acc'").fetchall()
    assert values == [(0.123,)]


def test_several_stored_versions_are_all_replaced(tmp_path, monkeypatch):
    """A store made before kept two readings of the same path side by side: the next one replaces both."""
    import harness_ext.store.ingest as ingest

    folder = tmp_path / "files"
    folder.mkdir()
    _copy("csv", folder)
    db = tmp_path / "s.duckdb"
    _ingest(db, [folder])
    _edit_csv(folder)
    with monkeypatch.context() as m:  # as a store made before kept the edited file beside the earlier reading
        m.setattr(ingest, "earlier_readings", lambda *a: [])
        _ingest(db, [folder])
    (f, ) = _ingest(db, [folder]).by_status("unchanged")  # the latest content is stored: nothing to replace
    _edit_csv(folder)
    (f, ) = _ingest(db, [folder]).by_status("ingested")
    assert f.replaced["versions"] == 2 and len(f.replaced["sha256"]) == 2
    assert any(n.startswith("replaced: the file changed since it was stored; 2 earlier versions stored from this "
                            "path") for n in f.notes)
    fresh = tmp_path / "fresh.duckdb"
    _ingest(fresh, [folder])
    assert _everything(db) == _everything(fresh)


def test_a_result_file_the_store_refuses_keeps_its_earlier_reading(tmp_path, monkeypatch):
    import harness_ext.store.ingest as ingest
    from harness_ext.store.db import SourceOutcome

    folder = tmp_path / "files"
    folder.mkdir()
    _copy("lm_eval", folder)
    db = tmp_path / "s.duckdb"
    _ingest(db, [folder])
    before = _everything(db)
    _edit_lm_eval(folder)
    real = ingest._write_many
    with monkeypatch.context() as m:
        m.setattr(ingest, "_write_many", lambda store, items: [SourceOutcome("skipped", reason="refused for the test")
                                                               for _ in items])
        (f, ) = _ingest(db, [folder]).by_status("skipped")
    assert f.reason == "refused for the test" + EDITED_KEPT_REASON and f.replaced is None
    assert _everything(db) == before
    monkeypatch.setattr(ingest, "_write_many", real)
    (f, ) = _ingest(db, [folder]).by_status("ingested")  # next time it is replaced
    assert f.replaced["versions"] == 1


@pytest.mark.parametrize("kind", ["item_table", "samples"])
def test_an_item_file_the_store_refuses_keeps_its_earlier_reading(kind, tmp_path, monkeypatch):
    folder = tmp_path / "files"
    folder.mkdir()
    edit, _ = _copy(kind, folder)
    db = tmp_path / "s.duckdb"
    _ingest(db, [folder])
    before = _everything(db)
    edit(folder)
    real = Store.transaction

    @contextmanager
    def refusing(self, **frames):
        with real(self, **frames) as con:
            yield con
            if "_samples_frame" in frames or "_item_sources" in frames:
                raise duckdb.ConstraintException("refused for the test")

    with monkeypatch.context() as m:
        m.setattr(Store, "transaction", refusing)
        report = _ingest(db, [folder])
    (f, ) = [f for f in report.by_status("skipped")]
    assert f.reason == "the store refused it: refused for the test" + EDITED_KEPT_REASON
    assert _everything(db) == before


def test_other_reading_options_are_still_stored_beside(tmp_path):
    """The edited CSV read with other reading options is another reading of it: stored beside, noted."""
    folder = tmp_path / "files"
    folder.mkdir()
    _copy("csv", folder)
    db = tmp_path / "s.duckdb"
    _ingest(db, [folder])
    _edit_csv(folder)
    (f, ) = _ingest(db, [folder], options={"meta_columns": ["avg_tokens"]}).by_status("ingested")
    assert f.replaced is None
    assert any(n.startswith("stored before from this path with other reading options") for n in f.notes)
    with Store.open(str(db), read_only=True) as store:
        assert store.con.execute("SELECT count(*) FROM sources").fetchall() == [(2,)]


def test_the_json_report_says_what_was_replaced(tmp_path, capsys):
    folder = tmp_path / "files"
    folder.mkdir()
    _copy("lm_eval", folder)
    db = tmp_path / "s.duckdb"
    _ingest(db, [folder])
    _edit_lm_eval(folder)
    capsys.readouterr()
    assert main(["ingest", "--db", str(db), "-q", "--json", "-", str(folder)]) == 0
    out = capsys.readouterr().out
    payload = json.loads(out[out.index("{"):])
    assert payload["summary"]["replaced"] == 1
    (f, ) = payload["tables"]["files"]
    assert f["status"] == "ingested" and f["replaced"]["versions"] == 1 and f["replaced"]["n_results"] == 2
    assert f["replaced"]["n_results_now"] == 2 and len(f["replaced"]["sha256"][0]) == 64



def _other_model_lm_eval(folder):
    """results.json overwritten by another model's run (an output path used again)."""
    f = folder / "results.json"
    doc = json.loads(f.read_text())
    doc["config"]["model_args"] = {"pretrained": "other-org/other-model"}
    doc["model_name"], doc["model_name_sanitized"] = "other-org/other-model", "other-org__other-model"
    f.write_text(json.dumps(doc))


def _other_model_items(folder):
    """The item table rewritten with other models' columns."""
    f = folder / "commonsense_wide.csv"
    lines = f.read_text().splitlines()
    lines[0] = ",".join(["item"] + [f"other_{c}" for c in lines[0].split(",")[1:]])
    f.write_text("\n".join(lines) + "\n")


def _other_model_samples(folder):
    """The run's folder overwritten by another model's run: its results file names the other model."""
    res = next((folder / "toy").glob("results_*.json"))
    doc = json.loads(res.read_text())
    doc["config"]["model_args"] = doc["config"]["model_args"].replace("toy/lm-small", "toy/lm-other")
    doc["model_name"], doc["model_name_sanitized"] = "toy/lm-other", "toy__lm-other"
    res.write_text(json.dumps(doc))
    _edit_samples(folder)


@pytest.mark.parametrize("kind,rewrite", [("lm_eval", _other_model_lm_eval), ("item_table", _other_model_items),
                                          ("samples", _other_model_samples)])
def test_another_models_file_at_a_path_used_before_is_stored_beside(kind, rewrite, tmp_path):
    """A file rewritten with none of the models its earlier reading stored is another run written to the same
    path, not an update: replacing would lose the earlier model's scores, which no file holds any more."""
    folder = tmp_path / "files"
    folder.mkdir()
    _copy(kind, folder)
    db = tmp_path / "s.duckdb"
    _ingest(db, [folder])
    before = _everything(db)
    rewrite(folder)
    report = _ingest(db, [folder])
    assert report.n_replaced == 0 and not any(f.replaced for f in report.files)
    assert any(n.startswith("stored before from this path with other content for other models")
               for f in report.by_status("ingested") for n in f.notes)
    after = _everything(db)
    key = "items" if kind != "lm_eval" else "models"
    assert set(before[key]) < set(after[key])  # the earlier reading's rows all stay, the new ones beside them
    again = _ingest(db, [folder])
    assert not again.by_status("ingested")  # the new reading is stored: unchanged from now on
