"""Prompt-level data: lm-eval samples_<task>_<date>.jsonl (written by lm-eval 0.4.13 itself) into the
samples table, and prompt x model matrices that agree with the aggregated results."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from harness_ext.errors import IngestError, StoreError
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, query_results
from harness_ext.store.samples import (SAMPLES_FILE_RE, ingest_samples, is_samples_file, model_for_samples, prompt_matrix,
                                 read_samples, sample_tasks)
from harness_ext.store.db import Store

OUT = Path(__file__).parent / "fixtures" / "samples" / "lm_eval_output"
MODELS = ["toy/lm-large", "toy/lm-medium", "toy/lm-small"]


@pytest.fixture
def store():
    with Store.open(":memory:") as s:
        yield s


def _samples_rows(store):
    return store.con.execute("SELECT count(*) FROM samples").fetchone()[0]


def test_file_names():
    assert is_samples_file("samples_toy_arith_mc_2026-11-22T19-54-30.364107.jsonl")
    assert is_samples_file("samples_mmlu_abstract_algebra_2024-05-01T12-00-00.123456.jsonl.gz")
    assert not is_samples_file("results_2024-05-01T12-00-00.123456.json")
    m = SAMPLES_FILE_RE.match("samples_arc_easy_2024-05-01T12-00-00.123456.jsonl")
    assert m.group("task") == "arc_easy"


def test_ingest_real_format_logs(store):
    report = ingest_samples(store, [OUT], show_progress=False)
    assert len(report.by_status("ingested")) == 6 and report.n_rows == 216
    # 18 prompts x 3 models; mc logs acc and acc_norm, gen logs exact_match under two filters.
    tasks = sample_tasks(store).set_index(["task", "metric"])
    assert tasks.loc[("toy_arith_gen", "exact_match,strict-match")].tolist() == [3, 18, 54]
    assert tasks.loc[("toy_arith_mc", "acc_norm")].tolist() == [3, 18, 54]
    again = ingest_samples(store, [OUT], show_progress=False)
    assert len(again.by_status("unchanged")) == 6 and _samples_rows(store) == 216
    src = store.con.execute("SELECT model, task, n_rows FROM sample_sources ORDER BY path").fetchall()
    assert {r[0] for r in src} == set(MODELS)


def test_prompt_matrix_agrees_with_the_aggregated_results(store):
    ingest_samples(store, [OUT], show_progress=False)
    ingest_paths(store, [OUT], show_progress=False)  # the results_*.json files beside the logs
    agg = query_results(store, MatrixQuery(benchmarks=("lm_eval",)), all_metrics=True)
    agg = agg.set_index(["model", "dataset", "metric"]).value
    for task, metric in [("toy_arith_mc", "acc"), ("toy_arith_mc", "acc_norm"),
                         ("toy_arith_gen", "exact_match,strict-match"), ("toy_arith_gen", "exact_match,flexible-extract")]:
        pm = prompt_matrix(store, task, metric)
        assert pm.shape == (18, 3) and list(pm.columns) == MODELS and list(pm.index) == list(range(18))
        assert pm.attrs == {"task": task, "metric": metric, "binary": True}
        for model in MODELS:
            assert pm[model].mean() == pytest.approx(agg[(model, task, metric)])  # lm-eval's own mean
    # flexible-extract finds the answers written in a sentence: never below strict-match.
    strict = prompt_matrix(store, "toy_arith_gen", "exact_match,strict-match")
    flexible = prompt_matrix(store, "toy_arith_gen", "exact_match,flexible-extract")
    assert (flexible.to_numpy() >= strict.to_numpy()).all()
    sub = prompt_matrix(store, "toy_arith_mc", models=["toy/lm-small", "toy/lm-large"])
    assert list(sub.columns) == ["toy/lm-small", "toy/lm-large"]


def test_model_from_sibling_results_or_given(tmp_path):
    f = next(OUT.glob("toy__lm-medium/samples_toy_arith_mc_*.jsonl"))
    assert model_for_samples(f) == "toy/lm-medium"
    assert model_for_samples(f, model="someone/else") == "someone/else"
    lone = tmp_path / f.name
    shutil.copy(f, lone)
    with pytest.raises(IngestError, match="pass model="):
        model_for_samples(lone)
    model, task, frame, _ = read_samples(lone, model="x/y")
    assert (model, task, len(frame)) == ("x/y", "toy_arith_mc", 36)
    two = tmp_path / "two"
    two.mkdir()
    for d in ("toy__lm-medium", "toy__lm-small"):
        src = next(OUT.glob(f"{d}/results_*.json"))
        shutil.copy(src, two / src.name)
    shutil.copy(f, two / "samples_toy_arith_mc_2020-01-01T00-00-00.000000.jsonl")  # matches no results date
    with pytest.raises(IngestError, match="several models"):
        model_for_samples(two / "samples_toy_arith_mc_2020-01-01T00-00-00.000000.jsonl")


def test_gzip_and_explicit_model(store, tmp_path):
    f = next(OUT.glob("toy__lm-large/samples_toy_arith_gen_*.jsonl"))
    gz = tmp_path / (f.name + ".gz")
    gz.write_bytes(gzip.compress(f.read_bytes()))
    report = ingest_samples(store, [gz], model="toy/lm-large", show_progress=False)
    assert report.files[0].status == "ingested" and report.n_rows == 36
    plain = prompt_matrix(store, "toy_arith_gen", "exact_match,strict-match")
    assert plain.shape == (18, 1)


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("corrupt, match", [
    (lambda rows: rows[:5] + ["{not json"], "not JSON"),
    (lambda rows: rows[:5] + [json.dumps({**json.loads(rows[5]), "doc_id": "seven"})], "not an integer"),
    (lambda rows: rows[:5] + ["[1, 2]"], "expected an object"),
    (lambda rows: [json.dumps({"doc_id": 1, "metrics": ["acc"], "acc": "yes"})], "no per-sample metric"),
    # A document logged twice with another score would count twice in every item-level estimate.
    (lambda rows: rows + [json.dumps({**json.loads(rows[0]), "acc": 1 - json.loads(rows[0])["acc"]})],
     "two different scores"),
])
def test_a_bad_file_writes_nothing(store, tmp_path, corrupt, match):
    ingest_samples(store, [OUT / "toy__lm-small"], show_progress=False)
    before = _samples_rows(store), store.con.execute("SELECT count(*) FROM sample_sources").fetchone()[0]
    good = next(OUT.glob("toy__lm-large/samples_toy_arith_mc_*.jsonl"))
    rows = good.read_text().splitlines()
    bad = tmp_path / good.name
    bad.write_text("\n".join(corrupt(rows)) + "\n")
    report = ingest_samples(store, [bad], model="toy/lm-large", show_progress=False)
    assert report.files[0].status == "skipped" and match in report.files[0].reason
    after = _samples_rows(store), store.con.execute("SELECT count(*) FROM sample_sources").fetchone()[0]
    assert after == before


def test_repeated_samples_and_values_that_are_no_numbers_are_reported(tmp_path):
    """A line logged twice with the same scores is stored once, a null or string score is left out; both are
    counted in the file's notes, where they were dropped without a word."""
    run = tmp_path / "toy__lm-small"
    shutil.copytree(OUT / "toy__lm-small", run)
    log = next(run.glob("samples_toy_arith_mc_*.jsonl"))
    rows = log.read_text().splitlines()
    rows[3] = json.dumps({**json.loads(rows[3]), "acc": None})
    log.write_text("\n".join(rows + [rows[0]]) + "\n")
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [run], show_progress=False)
        (f,) = [f for f in report.files if f.path == str(log)]
        assert f.status == "ingested" and f.n_samples == 18 * 2 - 1
        assert any("1 per-sample value written as null, not a number or not finite (NaN, Infinity) left out: acc" in n for n in f.notes)
        assert any("2 repeated (model, item) rows with the same score kept once" in n for n in f.notes)
        assert s.con.execute("SELECT count(*) FROM samples WHERE task = 'toy_arith_mc'").fetchone()[0] == 35


def test_first_ingested_wins_and_booleans_become_numbers(store, tmp_path):
    for i, value in enumerate((True, 0.0)):
        p = tmp_path / f"run{i}" / "samples_t_2024-01-01T00-00-00.000000.jsonl"
        p.parent.mkdir()
        p.write_text(json.dumps({"doc_id": 0, "filter": "none", "metrics": ["acc", "ppl"], "acc": value,
                                 "ppl": [-3.2, 4]}) + "\n")
        ingest_samples(store, [p], model="m", show_progress=False)
    pm = prompt_matrix(store, "t")
    assert pm.iloc[0, 0] == 1.0  # first file's True, not the later 0.0
    assert set(sample_tasks(store).metric) == {"acc"}  # the (loglikelihood, words) pair is not a per-sample score


def test_errors_name_what_is_there(store, tmp_path):
    with pytest.raises(StoreError, match="no per-sample data"):
        prompt_matrix(store, "toy_arith_mc")
    ingest_samples(store, [OUT], show_progress=False)
    with pytest.raises(StoreError, match="metrics logged for it: acc, acc_norm"):
        prompt_matrix(store, "toy_arith_mc", "exact_match")
    with pytest.raises(StoreError, match="tasks in the store: toy_arith_gen, toy_arith_mc"):
        prompt_matrix(store, "arc_easy")
    db = tmp_path / "s.duckdb"
    Store.open(db).close()
    with Store.open(db, read_only=True) as ro:
        with pytest.raises(StoreError, match="read-only"):
            ingest_samples(ro, [OUT], show_progress=False)


def test_matrix_feeds_binary_similarity(store):
    from harness_ext.plugin_manager import get_registrations

    ingest_samples(store, [OUT], show_progress=False)
    pm = prompt_matrix(store, "toy_arith_gen", "exact_match,flexible-extract")
    binary = {n: r for n, r in get_registrations("similarity_measures").items() if r.binary_only}
    if not binary:
        pytest.skip("no binary similarity measure registered")
    S = next(iter(binary.values())).func(pm.to_numpy(dtype=float))
    assert S.shape == (3, 3) and np.allclose(S, S.T, equal_nan=True)


def test_every_eval_ever_instance_level_samples(tmp_path):
    """Issue 16: EEE instance-level *_samples.jsonl go to the samples table (real record, see fixtures' PROVENANCE)."""
    from pathlib import Path

    from harness_ext.store.ingest import ingest_paths
    from harness_ext.store.samples import prompt_matrix
    from harness_ext.store.db import Store

    fixture = Path(__file__).parent / "fixtures" / "eee_samples"
    with Store.open(tmp_path / "s.duckdb") as s:
        rep = ingest_paths(s, [fixture], show_progress=False)
        [f] = [x for x in rep.files if x.path.endswith("None_samples.jsonl")]
        assert f.status == "ingested" and f.adapter == "lm_eval_samples" and f.n_samples == 2
        pm = prompt_matrix(s, "mmlu", "acc")
        assert list(pm.columns) == ["openai/gpt2"] and pm.index.tolist() == [59] and pm.iloc[0, 0] == 0.0
        assert prompt_matrix(s, "mmlu", "score").attrs["binary"]
        again = ingest_paths(s, [fixture], show_progress=False)
        assert [x.status for x in again.files if x.path.endswith(".jsonl")] == ["unchanged"]
    bad = tmp_path / "x_samples.jsonl"
    bad.write_text('{"sample_id": 1}\n')
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [bad], show_progress=False)
    assert rep.files[0].status == "skipped" and "instance record" in rep.files[0].reason


def test_eee_sample_ids_of_different_parts_stay_apart(tmp_path):
    """Every Eval Ever ids: 'id12' is item 12 (HELM's and EEE's numbering), but 'dev1' and 'test1' are two items
    (their numbers were read alike, merging them); two ids that read as one item refuse the file."""
    import json

    from harness_ext.errors import IngestError
    from harness_ext.store.samples import read_eee_samples

    def write(ids):
        path = tmp_path / "run_samples.jsonl"
        path.write_text("".join(json.dumps({"sample_id": i, "model_id": "m", "evaluation_name": "t",
                                            "evaluation": {"score": float(k % 2)}}) + "\n" for k, i in enumerate(ids)))
        return path

    _, _, frame, _ = read_eee_samples(write(["id12", "id13"]))
    assert sorted(frame["doc_id"]) == [12, 13]
    _, _, frame, _ = read_eee_samples(write(["dev1", "test1", "dev2"]))
    assert frame["doc_id"].nunique() == 3
    with pytest.raises(IngestError, match="both read as item 1"):
        read_eee_samples(write(["id1", "1"]))


def test_every_eval_ever_items_are_stored_under_the_records_benchmark(tmp_path):
    """Items of an Every Eval Ever instance file were shown (and selected) as lm-eval's: ``info`` said ``lm_eval`` and
    ``reduce --items --benchmark every_eval_ever`` found none. They take the benchmark of the record beside the file
    (its source's name), else ``every_eval_ever``, as the record's results do."""
    from harness_ext.methods.reduction.item_reduce import item_catalogue
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths

    fix = Path(__file__).parent / "fixtures"
    named = tmp_path / "named"
    shutil.copytree(fix / "eee_instances" / "geneval", named)
    [record] = named.rglob("geneval_sdxl_example.json")
    doc = json.loads(record.read_text())
    doc["source_metadata"]["source_name"] = "GenEval Leaderboard"
    record.write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        ingest_paths(s, [fix / "eee_instances", fix / "eee_samples"], show_progress=False)
        cat = item_catalogue(s)
        assert set(zip(cat["benchmark"], cat["task"])) == {("every_eval_ever", "geneval_overall"),
                                                            ("every_eval_ever", "mmlu")}
        results = s.con.execute("SELECT DISTINCT benchmark FROM datasets").fetchall()
        assert results == [("every_eval_ever",)]
    with Store.open(":memory:") as s:
        ingest_paths(s, [named], show_progress=False)
        assert list(item_catalogue(s, benchmarks=["geneval_leaderboard"])["task"]) == ["geneval_overall"]
        assert s.con.execute("SELECT DISTINCT benchmark FROM datasets").fetchall() == [("geneval_leaderboard",)]


def test_eee_items_and_their_records_score_under_two_names_are_reported(tmp_path):
    """GenEval's example record is an evaluation run: its score is stored under dataset GenEval (source_data), its
    instance file's items under task geneval_overall (evaluation_name), with nothing said. The ingest note names both,
    and the result's task is the items' task (the record's link). A leaderboard record (HELM Lite's, read as columns
    named by evaluation_name) and an evaluation run read as columns (GAIA's) say nothing."""
    import json

    from harness_ext.store.eee_links import record_dataset

    fix = Path(__file__).parent / "fixtures"
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [fix / "eee_instances", fix / "eee_samples"], show_progress=False)
        result_task = s.con.execute("SELECT name, task FROM datasets").fetchall()
        item_task = s.con.execute("SELECT DISTINCT task FROM samples WHERE model LIKE 'stabilityai/%'").fetchall()
    assert result_task == [("GenEval", "geneval_overall")] and item_task == [("geneval_overall",)]
    notes = [n for n in rep.note_lines() if "geneval_sdxl_example_samples.jsonl" in n]
    assert len(notes) == 1 and ("items stored under task 'geneval_overall' (the lines' evaluation_name), while the "
                                "record beside the file stores that evaluation's score under dataset 'GenEval'") in notes[0]
    assert not [n for n in rep.note_lines() if "None_samples.jsonl" in n]  # no record beside it
    names = {}
    for folder in ("helm_lite", "GAIA", "ai2_arc"):
        for record in (fix / "every_eval_ever" / folder).rglob("*.json"):
            doc = json.loads(record.read_text())
            for r in doc.get("evaluation_results") or []:
                names.setdefault(folder, set()).add(record_dataset(doc, r["evaluation_name"]))
    # HELM Lite's leaderboard columns keep their evaluation's name; Inspect runs converted (GAIA's gaia_scorer,
    # ai2_arc's choice) are stored under their dataset, as the adapter stores them.
    assert names == {"helm_lite": {None}, "GAIA": {"GAIA"}, "ai2_arc": {"ai2_arc"}}
