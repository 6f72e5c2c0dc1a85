"""Inspect AI logs' per-sample scores in the item table: real logs (tests/fixtures/inspect/samples, see its
PROVENANCE.md), the same logs as .eval archives, Inspect's score values, hostile archives, and the item loop
(reduce --items, then predict reading a new model's Inspect log)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from harness_ext.cli import main
from harness_ext.methods.reduction.item_manifest import decode_ids
from harness_ext.methods.reduction.manifest import load_manifest
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.item_tables import item_rows
from harness_ext.store.matrix import MatrixQuery, query_results

REAL = Path(__file__).parent / "fixtures" / "inspect" / "samples"
LLAMA = REAL / "2024-10-15T12-53-13-04-00_popularity_llama3.1.json"
GEMMA = REAL / "2025-07-05T09-59-40-04-00_popularity_gemma3.json"
CANCELLED = REAL / "2025-05-12T20-28-13-04-00_popularity_gpt-4o-mini.json"


def as_eval(doc: dict, path: Path, extra: dict = ()) -> Path:
    """``doc`` (a .json log) written as Inspect writes an .eval archive: header.json without the samples, one
    ``samples/<id>_epoch_<epoch>.json`` member per sample; ``extra``: more members (name -> bytes)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", json.dumps({k: v for k, v in doc.items() if k != "samples"}))
        for s in doc.get("samples") or []:
            z.writestr(f"samples/{s['id']}_epoch_{s.get('epoch', 1)}.json", json.dumps(s))
        for name, data in dict(extra).items():
            z.writestr(name, data)
    return path


def _ingest(paths):
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [str(p) for p in paths], show_progress=False)
        rows = item_rows(s)
        results = query_results(s, MatrixQuery(benchmarks=("inspect",)))
    return rep, rows, results


def test_real_logs_give_item_rows_whose_mean_is_the_header_score_and_reingest_changes_nothing():
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [REAL], show_progress=False)
        items = [f for f in rep.files if f.adapter == "item_table"]
        assert sorted(Path(f.path).name for f in items) == sorted([LLAMA.name, GEMMA.name])
        assert all(f.status == "ingested" and f.n_samples == 1 for f in items)
        # The cancelled log is refused once, for its results, and gives no item rows either.
        [skipped] = rep.by_status("skipped")
        assert Path(skipped.path) == CANCELLED and "'cancelled'" in skipped.reason
        rows = item_rows(s)
        results = query_results(s, MatrixQuery(benchmarks=("inspect",)))
        again = ingest_paths(s, [REAL], show_progress=False)
        assert {f.status for f in again.files} == {"unchanged", "skipped"} and len(item_rows(s)) == len(rows)
    assert set(rows["benchmark"]) == {"inspect"} and set(rows["task"]) == {"popularity"}
    assert set(rows["metric"]) == {"accuracy"} and set(rows["doc_id"]) == {1}
    mean = rows.groupby(["model", "task", "metric"])["value"].mean()
    header = results.set_index(["model", "dataset", "metric"])["value"]
    assert dict(mean) == dict(header) == {("ollama/gemma3", "popularity", "accuracy"): 1.0,
                                          ("ollama/llama3.1", "popularity", "accuracy"): 0.0}


def test_three_real_samples_average_to_the_header_accuracy_exactly_as_json_and_as_eval(tmp_path):
    """The gpt-4o-mini log's samples and header are as published; only its status (cancelled) is set to success."""
    doc = json.loads(CANCELLED.read_text())
    doc["status"] = "success"
    (tmp_path / "json").mkdir()
    (tmp_path / "json" / "log.json").write_text(json.dumps(doc))
    (tmp_path / "eval").mkdir()
    as_eval(doc, tmp_path / "eval" / "log.eval")
    got = {}
    for kind in ("json", "eval"):
        rep, rows, results = _ingest([tmp_path / kind])
        assert [f.status for f in rep.files] == ["ingested", "ingested"], rep.files
        got[kind] = rows.drop(columns="source").to_dict("records")
        [header] = results["value"]
        assert rows["value"].mean() == header == 0.6666666666666666
    assert got["json"] == got["eval"] and [r["value"] for r in got["json"]] == [1.0, 1.0, 0.0]


def _log(samples, scores=None, config=None) -> dict:
    """A log in Inspect's shape around synthetic ``samples``."""
    scores = scores or [{"name": "match", "scorer": "match",
                         "metrics": {"accuracy": {"name": "accuracy", "value": 0.5}}}]
    return {"version": 2, "status": "success",
            "eval": {"task": "inspect_evals/toy", "model": "openai/m", "config": config or {}},
            "results": {"scores": scores}, "samples": samples}


def _scored(sid, value, epoch=1, scorer="match"):
    return {"id": sid, "epoch": epoch, "scores": {scorer: {"value": value}}}


def test_inspect_score_values_epochs_and_what_is_left_out_counted(tmp_path):
    samples = [_scored(1, "C"), _scored(2, "I"), _scored(3, "P"), _scored(4, "N"), _scored(5, 0.25),
               _scored(6, True), _scored(7, "yes"), _scored(8, "0.75"), _scored(9, "C"),
               _scored(10, "C", epoch=1), _scored(10, "I", epoch=2), _scored(10, "C", epoch=3),
               _scored(11, "banana"), _scored(12, [1, 0]), _scored(13, None), _scored(14, float("nan")),
               {"id": 15, "epoch": 1, "scores": {}}, {"id": 16, "epoch": 1, "error": "timeout"}]
    (tmp_path / "log.json").write_text(json.dumps(_log(samples)))
    rep, rows, _ = _ingest([tmp_path / "log.json"])
    [f] = [f for f in rep.files if f.adapter == "item_table"]
    assert f.status == "ingested" and f.n_samples == 10
    assert f.notes == ["2 samples without a score left out",
                       "1 score of text that is no grade or number (Inspect counts such values 0) left out",
                       "1 score with a list value (Inspect counts such values 0) left out",
                       "1 unscored score (NaN) left out", "1 unscored score (null) left out"]
    got = dict(zip(rows["doc_id"], rows["value"]))
    assert got == {1: 1.0, 2: 0.0, 3: 0.5, 4: 0.0, 5: 0.25, 6: 1.0, 7: 1.0, 8: 0.75, 9: 1.0, 10: pytest.approx(2 / 3)}
    assert set(rows["task"]) == {"toy"} and set(rows["metric"]) == {"accuracy"}


def test_dict_values_are_one_score_per_key_named_as_the_header_names_them(tmp_path):
    scores = [{"name": k, "scorer": "judge", "metrics": {"mean": {"name": "mean", "value": 1.0}}} for k in ("a", "b")]
    samples = [{"id": 1, "epoch": 1, "scores": {"judge": {"value": {"a": 2, "b": "C", "c": 3}}}}]
    (tmp_path / "log.json").write_text(json.dumps(_log(samples, scores)))
    rep, rows, results = _ingest([tmp_path / "log.json"])
    assert sorted(zip(rows["metric"], rows["value"])) == [("a/mean", 2.0), ("b/mean", 1.0)]
    with Store.open(":memory:") as s:  # the header's names for the same scores
        ingest_paths(s, [tmp_path / "log.json"], show_progress=False)
        for name in ("a/mean", "b/mean"):
            assert query_results(s, MatrixQuery(benchmarks=("inspect",), metric=name))["metric"].tolist() == [name]
    [f] = [f for f in rep.files if f.adapter == "item_table"]
    assert f.notes == ["1 score of a scorer the header does not list left out"]


def test_another_epoch_reducer_scores_the_logs_reduced_values_or_is_noted(tmp_path):
    samples = [_scored(1, "C", 1), _scored(1, "I", 2), _scored(1, "I", 3), _scored(2, "C", 1), _scored(2, "C", 2),
               _scored(2, "P", 3)]
    doc = _log(samples, config={"epochs": 3, "epochs_reducer": ["mode"]})
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "log.json").write_text(json.dumps(doc))
    rep, rows, _ = _ingest([tmp_path / "bare"])
    [f] = [f for f in rep.files if f.adapter == "item_table"]
    assert rows["value"].tolist() == [pytest.approx(1 / 3), pytest.approx(5 / 6)]  # no reduced values: the mean
    assert "reduces epochs by ['mode'] and does not list every reduced score" in f.notes[0]
    # Inspect lists the reduced scores (the log's "reductions", an archive's reductions.json): they are the items'.
    doc["reductions"] = [{"scorer": "match", "reducer": "mode",
                          "samples": [{"value": 0, "sample_id": 1}, {"value": 1.0, "sample_id": 2}]}]
    (tmp_path / "reduced").mkdir()
    (tmp_path / "reduced" / "log.json").write_text(json.dumps(doc))
    as_eval({k: v for k, v in doc.items() if k != "reductions"}, tmp_path / "reduced" / "log.eval",
            {"reductions.json": json.dumps(doc["reductions"])})
    rep, rows, _ = _ingest([tmp_path / "reduced"])
    items = [f for f in rep.files if f.adapter == "item_table"]
    assert [f.status for f in items] == ["ingested", "ingested"] and items[0].notes == [
        "scores reduced over up to 3 epochs by the log's reducer, mode, as its header scores them"]
    assert rows["value"].tolist() == [0.0, 1.0, 0.0, 1.0]


def test_a_log_without_samples_gives_no_item_entry(tmp_path):
    (tmp_path / "log.json").write_text(json.dumps(_log([])))
    as_eval(_log([]), tmp_path / "log.eval")
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [tmp_path], show_progress=False)
        tables = {r[0] for r in s.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert [f.adapter for f in rep.files] == ["inspect_ai", "inspect_ai"]
    assert not tables & {"samples", "sample_sources", "item_ids"}  # no item file: the store's item tables not made


@pytest.mark.parametrize("case,reason", [
    ("outside", "names a path outside the archive's samples/ folder"),
    ("huge_id", "sample id of 31 digits is outside the 64-bit range"),
    ("two_as_one", "both read as item 7"),
    ("twice", "epoch 1 is listed twice"),
    ("no_id", "is not an Inspect sample (no id)"),
    ("float_id", "sample id '1.5' is not an integer or text"),
    ("bad_epoch", "epoch '[1]' is not a whole number from 1"),
    ("bomb", "bytes inflated, above the 4,096-byte limit: not read"),
    ("not_json", "member samples/1_epoch_1.json is not JSON"),
])
def test_hostile_archives_give_one_clear_error_naming_the_file(tmp_path, monkeypatch, case, reason):
    import harness_ext.adapters.inspect_items as inspect_items

    doc, extra = _log([_scored(1, "C")]), {}
    if case == "outside":
        extra = {"samples/../../evil.json": json.dumps(_scored(2, "C"))}
    elif case == "huge_id":
        doc["samples"].append(_scored(10**30, "C"))
    elif case == "two_as_one":
        doc["samples"] += [_scored(7, "C"), _scored("id7", "I")]
    elif case == "twice":
        extra = {"samples/1_epoch_1_again.json": json.dumps(_scored(1, "I"))}
    elif case == "no_id":
        extra = {"samples/x.json": json.dumps({"epoch": 1})}
    elif case == "float_id":
        doc["samples"].append(_scored(1.5, "C"))
    elif case == "bad_epoch":
        doc["samples"].append(dict(_scored(2, "C"), epoch=[1]))
    elif case == "bomb":
        monkeypatch.setattr(inspect_items, "MAX_SAMPLE_BYTES", 4096)
        extra = {"samples/big.json": b" " * 10**6}  # a megabyte of blanks deflates to about a kilobyte
    elif case == "not_json":
        doc["samples"] = []
        extra = {"samples/1_epoch_1.json": b"{not json"}
    log = as_eval(doc, tmp_path / "run.eval", extra)
    rep, rows, results = _ingest([log])
    assert len(results) == 1  # the header's results are stored; the samples are refused whole
    [f] = [f for f in rep.files if f.adapter == "item_table"]
    assert f.status == "skipped" and reason in f.reason, f.reason
    assert rows.empty


def _population(folder: Path, n_models: int = 12, n_items: int = 30, seed: int = 0) -> dict:
    """Inspect logs of ``n_models`` models on two tasks (ids whole numbers on one, text the store numbers on the
    other); returns the log of one more model, the new one, and its accuracy, per task."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    new = {}
    for m in range(n_models + 1):
        ability = rng.uniform(0.2, 0.9)
        for task, ids in (("arith", list(range(n_items))), ("trivia", [f"q{i}-{'abc'[i % 3]}" for i in range(n_items)])):
            answers = (rng.random(n_items) < ability).tolist()
            samples = [_scored(i, "C" if a else "I") for i, a in zip(ids, answers)]
            rng.shuffle(samples)  # each log lists its samples in its own order (Inspect logs them as they finish)
            acc = float(np.mean(answers))
            doc = _log(samples, [{"name": "choice", "scorer": "match",
                                  "metrics": {"accuracy": {"name": "accuracy", "value": acc}}}])
            doc["samples"] = [_scored(s["id"], s["scores"]["match"]["value"], scorer="choice") for s in samples]
            doc["eval"].update(task=task, model=f"org/model-{m}")
            if m == n_models:
                new[task] = (doc, acc)
            else:
                (folder / f"{task}_{m}.json").write_text(json.dumps(doc))
    return new


@pytest.mark.slow
def test_reduce_items_on_inspect_logs_and_predict_reads_a_new_models_eval_log(tmp_path, capsys):
    new = _population(tmp_path / "logs")
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(tmp_path / "logs")]) == 0
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "10", "--out", str(out), "--no-plot"]) == 0
    m = load_manifest(out)
    assert sorted(m["tasks"]) == ["arith", "trivia"] and {b["metric"] for b in m["tasks"].values()} == {"accuracy"}
    # Every item logged: each task's score is Inspect's own, exactly.
    whole = tmp_path / "whole"
    whole.mkdir()
    for task, (doc, _) in new.items():
        as_eval(doc, whole / f"{task}.eval")
    # inspect eval-set writes logs.json beside its logs (log name -> header): not a log, not read
    (whole / "logs.json").write_text(json.dumps({"arith.eval": {k: v for k, v in new["arith"][0].items()
                                                               if k != "samples"}}))
    pj = tmp_path / "whole.json"
    assert main(["predict", "-m", str(out), str(whole), "--json", str(pj)]) == 0
    rows = {r["dataset"]: r for r in json.loads(pj.read_text())["datasets"]}
    for task, (_, acc) in new.items():
        assert rows[task]["observed"] and rows[task]["raw"] == pytest.approx(acc, abs=1e-10)
    # The text ids are listed beside their numbers: the ids `inspect eval --sample-id` runs.
    b = m["tasks"]["trivia"]
    names = dict(zip(decode_ids(b["items"]).tolist(), b["item_ids"]))
    assert sorted(names.values()) == sorted(s["id"] for s in new["trivia"][0]["samples"])
    assert "item_ids" not in m["tasks"]["arith"]  # whole numbers are their own
    # Only the drawn items logged (inspect eval --sample-id): an estimate with its interval.
    drawn = tmp_path / "drawn"
    drawn.mkdir()
    for task, (doc, _) in new.items():
        sample = decode_ids(m["tasks"][task]["sample"]).tolist()
        run = {names[d] for d in sample} if task == "trivia" else set(sample)
        part = dict(doc, samples=[s for s in doc["samples"] if s["id"] in run])
        assert len(part["samples"]) == 10
        as_eval(part, drawn / f"{task}.eval")
    pj = tmp_path / "drawn.json"
    assert main(["predict", "-m", str(out), str(drawn), "--json", str(pj)]) == 0
    for r in json.loads(pj.read_text())["datasets"]:
        assert not r["observed"] and r["n_used"] == 10 and r["raw_lower"] <= r["raw"] <= r["raw_upper"]
    assert "numbered from 0" not in capsys.readouterr().err  # how the store numbers ids is ingest's note, not predict's
    # A log predict cannot read is one clear error naming it.
    bad = tmp_path / "bad"
    bad.mkdir()
    as_eval(dict(new["arith"][0], status="error"), bad / "arith.eval")
    assert main(["predict", "-m", str(out), str(bad)]) != 0
    err = capsys.readouterr().err
    assert "cannot read the Inspect log" in err and "arith.eval" in err and "'error'" in err


def test_the_same_log_as_json_and_as_eval_is_stored_twice_and_said_so(tmp_path):
    """Text ids listed in another order by the second file are renumbered by the store's id map (that crashed)."""
    doc = _log([_scored(f"q{i}-x", "CI"[i % 2]) for i in range(6)])
    (tmp_path / "a.json").write_text(json.dumps(doc))
    as_eval(dict(doc, samples=doc["samples"][::-1]), tmp_path / "b.eval")
    rep, rows, _ = _ingest([tmp_path])
    items = [f for f in rep.files if f.adapter == "item_table"]
    assert [f.status for f in items] == ["ingested", "ingested"] and items[1].item_conflicts == 0
    assert "6 item scores already stored from another file with the same value (both kept" in " ".join(items[1].notes)
    assert len(rows) == 12 and rows.groupby("doc_id")["value"].nunique().max() == 1


def test_an_eval_sets_logs_json_is_counted_as_no_results_without_a_warning(tmp_path):
    """inspect eval-set writes logs.json (log name -> header) beside its logs: it was warned about as unrecognised."""
    doc = json.loads(GEMMA.read_text())
    (tmp_path / GEMMA.name).write_text(json.dumps(doc))
    (tmp_path / "logs.json").write_text(json.dumps({GEMMA.name: {k: v for k, v in doc.items() if k != "samples"}}))
    rep, rows, results = _ingest([tmp_path])
    by = {(Path(f.path).name, f.adapter): f for f in rep.files}
    index = next(f for (name, _), f in by.items() if name == "logs.json")
    assert index.status == "skipped" and index.quiet and "eval set's index" in index.reason
    assert len(results) == 1 and len(rows) == 1  # the log itself, once


def test_two_logs_scoring_one_item_differently_are_a_reported_conflict(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(_log([_scored(1, "C"), _scored(2, "C")])))
    (tmp_path / "b.json").write_text(json.dumps(_log([_scored(1, "I"), _scored(2, "C")])))
    rep, rows, _ = _ingest([tmp_path])
    a, b = [f for f in rep.files if f.adapter == "item_table"]
    assert (a.item_conflicts, b.item_conflicts) == (0, 1) and rep.n_item_conflicts == 1
    assert any("1 item score already stored from another file with a different value" in n for n in b.notes)
    assert len(rows) == 4  # both kept; the first stored is the one used
