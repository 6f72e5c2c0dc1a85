"""A task's full size from lm-eval ``--limit`` runs: kept at ingest, drawn from by ``reduce --items``, said where the
scores or logs cover only the first documents.

Real lm-eval 0.4.13 output (tests/fixtures/lm_eval_limit_items, provenance there): three stand-in models ran 2 tasks of
24 documents with ``--limit 8`` (``n-samples`` effective 8 of original 24) and logged their samples; a fourth ran both
whole. Before, ``reduce --items`` on their results files drew from the first 8 documents and said nothing; now it
draws from all 24 and says the models' scores cover the first 8. Hostile counts are edited copies of a real file.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from harness_ext.cli import main
from harness_ext.methods.reduction.item_design_only import sized_tasks
from harness_ext.methods.reduction.item_predict import predict_items
from harness_ext.methods.reduction.item_reduce import reduce_items
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

FIX = Path(__file__).parent / "fixtures"
POP = FIX / "lm_eval_limit_items" / "population"
NEW = FIX / "lm_eval_limit_items" / "new_model" / "standin__m99"
LIMIT50 = FIX / "lm_eval_limit" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-13-05.882357.json"
WHOLE = FIX / "lm_eval_limit" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-17-21.689149.json"
TASKS = ["toy_task_00", "toy_task_01"]


def _ingest(db: Path, paths) -> list:
    with Store.open(str(db)) as s:
        return ingest_paths(s, [str(p) for p in paths], show_progress=False).files


def _results_store(tmp_path) -> Path:
    db = tmp_path / "results.duckdb"
    files = _ingest(db, sorted(POP.rglob("results_*.json")))
    assert [f.status for f in files] == ["ingested"] * 3
    return db


def _sizes(db: Path) -> dict:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return dict(con.execute("SELECT name, json_extract_string(metadata, '$.n_documents') FROM datasets "
                                "WHERE metric = 'acc'").fetchall())
    finally:
        con.close()


def test_ingest_keeps_the_full_size_of_a_limit_run_only(tmp_path):
    db = _results_store(tmp_path)
    assert _sizes(db) == {t: "24" for t in TASKS}
    files = _ingest(tmp_path / "whole.duckdb", [WHOLE])
    assert _sizes(tmp_path / "whole.duckdb") == {"gpqa_diamond_zeroshot": None}  # a whole run: nothing more
    assert not any("--limit" in n for f in files for n in f.notes)


def test_reduce_items_draws_from_every_document_and_says_the_scores_cover_the_first(tmp_path):
    db = _results_store(tmp_path)
    m = reduce_items(str(db), 6).manifest
    assert m["design"]["population"] == "none" and m["cost"]["items_full"] == 48
    for t in TASKS:
        b = m["tasks"][t]
        assert b["n_items"] == 24 and b["n_run"] == 6
        assert b["first_documents"] == {"documents_scored": [8], "n_documents": 24, "n_models": 3, "of_models": 3}
    from harness_ext.methods.reduction.item_manifest import decode_ids

    # The sample covers the task: some drawn documents lie beyond the 8 the models scored.
    assert max(int(decode_ids(m["tasks"][t]["sample"]).max()) for t in TASKS) >= 8
    [w] = [w for w in m["warnings"] if "first documents only" in w]
    assert ("2 tasks scored by the store's models on their first documents only (lm-eval --limit): toy_task_00 8 of "
            "24 (3 of 3 models), toy_task_01 8 of 24 (3 of 3 models)") in w
    assert "take such a model's score on its first documents for its score on the whole task" in w
    assert not any("older harness-ext" in w for w in m["warnings"])


def test_predict_on_the_drawn_documents_of_a_whole_run(tmp_path):
    """The new model's logs cut to the drawn documents (what ``lm_eval --samples`` runs): the estimate is their mean."""
    db = _results_store(tmp_path)
    m = reduce_items(str(db), 6).manifest
    from harness_ext.methods.reduction.item_manifest import decode_ids

    run = tmp_path / "run" / "standin__m99"
    run.mkdir(parents=True)
    shutil.copy(next(NEW.glob("results_*.json")), run)  # names the model, as lm-eval writes it beside its logs
    means = []
    for log in NEW.glob("samples_*.jsonl"):
        task = next(t for t in TASKS if log.name.startswith(f"samples_{t}_"))
        keep = set(decode_ids(m["tasks"][task]["sample"]).tolist())
        rows = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
        rows = [r for r in rows if r["doc_id"] in keep]
        (run / log.name).write_text("".join(json.dumps(r) + "\n" for r in rows))
        means.append(sum(r["acc"] for r in rows) / len(rows))
    pred = predict_items(m, [run])
    assert sorted(pred.table["n_used"]) == [6, 6]
    agg = pred.aggregate.iloc[0]
    assert agg["aggregate"] == pytest.approx(sum(means) / 2, abs=1e-12)
    assert agg["lower"] < agg["aggregate"] < agg["upper"]


def test_a_store_read_before_keeps_the_old_sizes_and_says_to_read_again(tmp_path):
    """A store whose lm-eval files an older reader stored (its revision, no full sizes): drawn from the first 8
    documents, as before, with the warning; ``ingest --reread`` gives the full sizes."""
    db = _results_store(tmp_path)
    con = duckdb.connect(str(db))
    con.execute("UPDATE sources SET reader = '4'")
    con.execute("UPDATE datasets SET metadata = json_object('harness', 'lm-evaluation-harness', 'version', 1.0)")
    con.close()
    m = reduce_items(str(db), 6).manifest
    assert [b["n_items"] for b in m["tasks"].values()] == [8, 8]
    [w] = [w for w in m["warnings"] if "older harness-ext" in w]
    assert w.startswith("6 results read from lm-eval 0.4 results files by an older harness-ext, which kept no task's "
                        "full number of documents") and "ingest --reread" in w
    assert main(["ingest", "--db", str(db), "--reread", *map(str, sorted(POP.rglob("results_*.json")))]) == 0
    m = reduce_items(str(db), 6).manifest
    assert [b["n_items"] for b in m["tasks"].values()] == [24, 24]
    assert not any("older harness-ext" in w for w in m["warnings"])


def test_a_models_whole_run_beside_its_limit_run_is_its_score(tmp_path):
    """One model's --limit 50 run and whole run of a task: its score is the whole run's, nothing said of --limit."""
    db = tmp_path / "s.duckdb"
    _ingest(db, [LIMIT50, WHOLE])
    with Store.open(str(db), read_only=True) as s:
        found = sized_tasks(s, metric="acc")
    b = found["gpqa_diamond_zeroshot"]
    assert b["n_items"] == 198 and b["first_documents"] == {}
    assert float(b["scores"].iloc[0]) == pytest.approx(0.494949494949495, abs=1e-12)


def test_item_level_logs_of_limit_runs_are_said_in_reduce_and_predict(tmp_path):
    db = tmp_path / "items.duckdb"
    _ingest(db, [POP])
    m = reduce_items(str(db), 6).manifest
    assert m["design"].get("population") != "none"
    for t in TASKS:
        assert m["tasks"][t]["n_items"] == 8
        assert m["tasks"][t]["logged_documents"] == {"n_logged": 8, "n_documents": 24}
    want = ("2 tasks with items logged for part of their documents (per-sample logs of lm-eval --limit runs, or of "
            "runs of part of a task): toy_task_00 8 of 24, toy_task_01 8 of 24; the items are drawn from the logged "
            "documents, and each such task's estimate (and the benchmark's) is of the logged documents' mean, not of "
            "the whole task's")
    assert want in m["warnings"]
    pred = predict_items(m, [NEW])
    assert want in pred.warnings


def _edited(tmp_path, counts: dict) -> Path:
    """A copy of a real --limit results file whose n-samples entries say ``counts``."""
    src = next(POP.glob("standin__m01/results_*.json"))
    doc = json.loads(src.read_text())
    for t, v in counts.items():
        doc["n-samples"][t] = v
    out = tmp_path / "edited" / "standin__m01" / src.name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize("original", [4, "24", 24.5, -3, True, 2**40, 2**70, None, [24]])
def test_counts_that_are_no_counts_are_noted_not_kept(tmp_path, original):
    f = _edited(tmp_path, {"toy_task_00": {"original": original, "effective": 8}})
    [rep] = _ingest(tmp_path / "s.duckdb", [f])
    assert rep.status == "ingested"
    sizes = _sizes(tmp_path / "s.duckdb")
    assert sizes == {"toy_task_00": None, "toy_task_01": "24"}
    assert any(n.startswith("1 n-samples entry whose counts (effective of original) are not counts of documents")
               and f"toy_task_00 (8 of {original!r})" in n for n in rep.notes), rep.notes
    with Store.open(str(tmp_path / "s.duckdb"), read_only=True) as s:
        found = sized_tasks(s)
    assert found["toy_task_00"]["n_items"] == 8 and found["toy_task_01"]["n_items"] == 24


def test_hostile_effective_counts_do_not_crash(tmp_path):
    f = _edited(tmp_path, {"toy_task_00": {"original": 24, "effective": -1},
                           "toy_task_01": {"original": 24, "effective": "8"}})
    [rep] = _ingest(tmp_path / "s.duckdb", [f])
    assert rep.status == "ingested" and _sizes(tmp_path / "s.duckdb") == {t: None for t in TASKS}
    assert any("toy_task_00 (-1 of 24), toy_task_01 ('8' of 24)" in n for n in rep.notes), rep.notes
    con = duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True)
    assert con.execute("SELECT count(n_samples) FROM results").fetchone() == (0,)  # no count: unknown, not -1
    con.close()


def test_a_copy_of_the_fixture_reads_the_same(tmp_path):
    """The fixture's files are lm-eval's own: copied elsewhere they ingest the same (nothing reads their task data)."""
    shutil.copytree(POP, tmp_path / "pop")
    _ingest(tmp_path / "s.duckdb", [tmp_path / "pop"])
    assert _sizes(tmp_path / "s.duckdb") == {t: "24" for t in TASKS}


def test_the_limit_note_of_many_tasks_names_eight_and_counts_the_rest():
    """A --limit run of 40 tasks noted every one on one line; eight are named, then how many more."""
    from harness_ext.adapters.lm_eval_sizes import _note_limited

    class _Src:
        notes: list = []

        def note(self, text):
            self.notes.append(text)

    src = _Src()
    _note_limited({"n-samples": {f"t{i:02d}": {"effective": 5, "original": 50 + i} for i in range(40)}}, src)
    assert src.notes[0].startswith("40 tasks scored on part of their documents (--limit): t00 5 of 50, ")
    assert "t07 5 of 57 and 32 more;" in src.notes[0] and "t08" not in src.notes[0]


def test_a_count_beyond_any_task_is_no_size_and_reduce_draws_without_enumerating_it(tmp_path):
    """An n-samples of 2**40 documents made reduce --items enumerate them (8 TiB); a store read before counts were
    bounded may still hold one as a result's n_samples: it is no size there either."""
    import numpy as np
    import pandas as pd

    from harness_ext.methods.reduction.item_design_only import _counts
    from harness_ext.store.lm_eval_tasks import MAX_DOCUMENTS

    got = _counts(pd.Series([2**40, MAX_DOCUMENTS, MAX_DOCUMENTS + 1, 24]))
    assert np.isnan(got[0]) and got[1] == MAX_DOCUMENTS and np.isnan(got[2]) and got[3] == 24
    f = _edited(tmp_path, {"toy_task_00": {"original": 2**40, "effective": 8}})
    _ingest(tmp_path / "s.duckdb", [f])
    red = reduce_items(str(tmp_path / "s.duckdb"), 3)
    assert red.manifest["tasks"]["toy_task_00"]["n_items"] == 8


def test_the_random_documents_line_takes_no_count_beyond_any_task():
    """reduce's line on what the subset's cost buys as random documents drew from every dataset's n_samples; one of
    2**40 (a store read before counts were bounded) stopped numpy's hypergeometric draws."""
    from types import SimpleNamespace

    from harness_ext.methods.reduction.item_design_cost import document_sizes

    meta = {c: {"benchmark": "lm_eval", "metric": "acc", "n_samples": n} for c, n in (("a", 100), ("b", 2**40))}
    assert document_sizes(SimpleNamespace(columns=["a", "b"], meta=meta)) == (None, None)
    meta["b"]["n_samples"] = 200
    sizes, _ = document_sizes(SimpleNamespace(columns=["a", "b"], meta=meta))
    assert list(sizes) == [100, 200]
