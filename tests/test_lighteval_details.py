"""lighteval details (per-document scores) in the item table: the Open LLM Leaderboard v1 slice of real verdicts
(tests/fixtures/lighteval_details, see its PROVENANCE.md) meets its results file's row; lighteval's later column
layouts, names and item ids; bad files refused whole; and the item loop (reduce --items, then predict reading a new
model's lighteval run folder)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness_ext.cli import main
from harness_ext.errors import IngestError
from harness_ext.methods.reduction.item_manifest import decode_ids
from harness_ext.methods.reduction.manifest import load_manifest
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.item_tables import item_rows
from harness_ext.store.matrix import MatrixQuery, query_results

REAL = Path(__file__).parent / "fixtures" / "lighteval_details" / "details_Corianas__111m"
STAMP = "2023-07-19T13:48:53.093937"
REAL_DETAILS = REAL / STAMP / f"details_harness|arc:challenge|25_{STAMP}.parquet"
#: The share of the 1,172 documents scored acc_norm = 1, as dinostomp's own summary of the same rows gives it.
DINOSTOMP_ACCURACY = 0.197099


def _write(path: Path, rows: list) -> Path:
    """``rows`` (dicts) as a Parquet file, as lighteval writes its details (``Dataset.from_list(...).to_parquet``:
    one column per key, dicts as structs)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _lighteval_run(out: Path, model: str, key: str, scores: dict, stamp: str = "2025-01-02T03-04-05.000006",
                   layout: str = "metrics", metric: str = "acc", order=None, results: bool = True) -> Path:
    """A lighteval output folder (``details/<model>/<stamp>/details_<key>_<stamp>.parquet`` and, with ``results``,
    ``results/<model>/results_<stamp>.json``) scoring documents ``q<i>`` (``scores``: i -> score)."""
    rows = []
    for i in (order or sorted(scores)):
        doc = {"query": f"Question {i}: what is {i} + {i}?", "choices": [str(2 * i), str(2 * i + 1)], "gold_index": 0}
        if layout == "doc":  # lighteval from mid-2025
            rows.append({"doc": doc, "model_response": {"text": [str(2 * i)]}, "metric": {metric: scores[i]}})
        else:  # lighteval 2024 to mid-2025; "text" is the dict as lighteval writes it when the rows are mixed
            m = {metric: scores[i]}
            rows.append({"example": doc["query"], "choices": doc["choices"], "gold_index": [0],
                         "predictions": [[-1.0, -2.0]], "metrics": str(m) if layout == "text" else m})
    details = _write(out / "details" / model / stamp / f"details_{key}_{stamp}.parquet", rows)
    if results:
        mean = sum(scores.values()) / len(scores)
        res = {"config_general": {"model_name": model}, "results": {key: {metric: mean}},
               "config_tasks": {key.rsplit("|", 1)[0]: {"metric": [{"metric_name": metric, "higher_is_better": True}],
                                                        "effective_num_docs": len(scores)}}}
        p = out / "results" / model / f"results_{stamp}.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(res))
    return details


def test_real_leaderboard_details_meet_their_results_row_and_average_to_its_score():
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [REAL], show_progress=False)
        assert {f.status for f in rep.files} == {"ingested"} and len(rep.files) == 2
        [item_file] = [f for f in rep.files if f.adapter == "item_table"]
        assert Path(item_file.path) == REAL_DETAILS and item_file.n_samples == 1172
        rows = item_rows(s)
        results = query_results(s, MatrixQuery(benchmarks=("open_llm_leaderboard_v1",)))
    assert len(rows) == 1172 and rows["doc_id"].nunique() == 1172
    assert set(rows["model"]) == {"Corianas/111m"} and set(rows["benchmark"]) == {"open_llm_leaderboard_v1"}
    assert set(rows["task"]) == {"arc_challenge"} and set(rows["metric"]) == {"acc_norm"}
    [res] = results[(results["dataset"] == "arc_challenge") & (results["metric"] == "acc_norm")].itertuples()
    assert res.model == "Corianas/111m"  # the aggregate row and the item rows meet
    assert rows["value"].sum() == 231 and rows["value"].mean() == pytest.approx(res.value, abs=1e-12)
    assert rows["value"].mean() == pytest.approx(DINOSTOMP_ACCURACY, abs=5e-7)


def test_reingesting_changes_nothing_and_a_copy_is_said_to_be_already_stored(tmp_path):
    copy = tmp_path / "copy" / "details_Corianas__111m"
    shutil.copytree(REAL, copy)
    with Store.open(":memory:") as s:
        ingest_paths(s, [REAL], show_progress=False)
        n = len(item_rows(s))
        again = ingest_paths(s, [REAL], show_progress=False)
        assert {f.status for f in again.files} == {"unchanged"} and len(item_rows(s)) == n
        third = ingest_paths(s, [copy], show_progress=False)
        assert {f.status for f in third.files} == {"unchanged"} and len(item_rows(s)) == n


def test_a_details_datasets_parquet_copy_of_its_results_file_is_passed_over_quietly(tmp_path):
    """lighteval uploads ``results_<date>.parquet`` beside ``results_<date>.json`` to a details dataset: a copy, not
    a second results file (it was warned about as unrecognised)."""
    clone = tmp_path / "details_Corianas__111m"
    shutil.copytree(REAL, clone)
    _write(clone / f"results_{STAMP}.parquet", [{"config_general": "{}", "results": "{}"}])
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [clone], show_progress=False)
    [skipped] = rep.by_status("skipped")
    assert skipped.quiet and "Parquet copy" in skipped.reason and len(rep.by_status("ingested")) == 2


def test_item_ids_are_stable_across_models_and_row_orders(tmp_path):
    """Two models' files list the documents in different orders (lighteval logs them as batches finish): each
    document gets one number, so the models' answers line up item by item."""
    scores_a = {i: float(i % 2) for i in range(8)}
    scores_b = {i: float(i % 3 == 0) for i in range(8)}
    _lighteval_run(tmp_path / "a", "org/model-a", "lighteval|arc:easy|0", scores_a)
    _lighteval_run(tmp_path / "b", "org/model-b", "lighteval|arc:easy|0", scores_b, order=[7, 3, 1, 0, 6, 2, 5, 4],
                   layout="doc")
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [tmp_path / "a", tmp_path / "b"], show_progress=False)
        assert {f.status for f in rep.files} == {"ingested"}
        rows = item_rows(s)
        results = query_results(s, MatrixQuery(benchmarks=("lighteval",)))
    assert set(rows["benchmark"]) == {"lighteval"} and set(rows["task"]) == {"arc_easy"}
    wide = rows.pivot(index="doc_id", columns="model", values="value")
    assert len(wide) == 8 and not wide.isna().any().any()
    # Each model's mean is its results file's score, and the results rows name the same dataset.
    for model, scores in (("org/model-a", scores_a), ("org/model-b", scores_b)):
        [res] = results[results["model"] == model].itertuples()
        assert res.dataset == "arc_easy" and wide[model].mean() == pytest.approx(res.value, abs=1e-12)
    # The same documents in another order score the same per document.
    first = rows[rows["model"] == "org/model-a"].sort_values("doc_id")["doc_id"].tolist()
    assert first == sorted(wide.index)


@pytest.mark.parametrize("layout", ["metrics", "text", "doc"])
def test_each_column_layout_reads_to_the_same_items(tmp_path, layout):
    from harness_ext.adapters.lighteval_details import read_details

    scores = {i: float(i in (1, 4)) for i in range(5)}
    path = _lighteval_run(tmp_path, "org/m", "leaderboard|arc:challenge|25", scores, layout=layout, metric="acc_norm")
    table = read_details(path, store_ids=False)
    assert table.benchmark == "lighteval_leaderboard"
    f = table.frame
    assert set(f["model"]) == {"org/m"} and set(f["task"]) == {"arc_challenge"} and set(f["metric"]) == {"acc_norm"}
    assert len(f) == 5 and f["value"].sum() == 2.0
    other = read_details(_lighteval_run(tmp_path / "x", "org/n", "leaderboard|arc:challenge|25", scores,
                                        layout="doc" if layout != "doc" else "metrics", metric="acc_norm"),
                         store_ids=False)
    assert sorted(other.frame["doc_id"]) == sorted(f["doc_id"])  # one document, one id, whatever the layout


@pytest.mark.parametrize("key, bench, task", [
    ("lighteval|gsm8k|0", "lighteval", "gsm8k"),
    ("gsm8k|0", "lighteval", "gsm8k"),  # lighteval 0.11 on: no suite in the key
    ("leaderboard|mmlu:abstract_algebra|5", "mmlu", "abstract_algebra"),  # lm-eval's cells, as the results adapter
    ("helm|hellaswag|0", "lighteval_helm", "hellaswag"),
    ("harness|truthfulqa:mc|0", "open_llm_leaderboard_v1", "truthfulqa_mc"),
    ("harness|hendrycksTest-abstract_algebra|5", "mmlu", "abstract_algebra"),
])
def test_names_match_the_aggregate_adapters(key, bench, task):
    # (not "benchmark": pytest-benchmark, when installed, owns a fixture of that name)
    from harness_ext.adapters.lighteval_details import task_of

    assert task_of(f"details_{key}_2024-01-02T03-04-05.123456.parquet")[:2] == (bench, task)


def test_model_from_the_folders_without_a_results_file(tmp_path):
    from harness_ext.adapters.lighteval_details import read_details

    path = _lighteval_run(tmp_path / "out", "org/model-x", "lighteval|gsm8k|0", {0: 1.0, 1: 0.0}, results=False,
                          metric="em")
    assert set(read_details(path).frame["model"]) == {"org/model-x"}
    # The leaderboard's own layout: details_<org>__<model>/<stamp>/, without its results file.
    lb = tmp_path / "details_org__model-y" / STAMP / f"details_harness|gsm8k|5_{STAMP}.parquet"
    lb.parent.mkdir(parents=True)
    shutil.copy(path, lb)
    assert set(read_details(lb).frame["model"]) == {"org/model-y"}


def test_late_2025_names_with_double_underscores_are_read_with_the_runs_results_file(tmp_path):
    """lighteval wrote ``details_arc__challenge__25_<date>.parquet`` for ``arc:challenge|25`` for a while: ``__`` for
    both ``|`` and ``:``. The run's results file names the key; without it the file is refused, not guessed."""
    from harness_ext.adapters.lighteval_details import read_details

    stamp = "2025-11-05T14-43-47.148527"
    path = _lighteval_run(tmp_path, "org/m", "arc:challenge|25", {0: 1.0, 1: 0.0, 2: 1.0}, stamp=stamp,
                          metric="acc_norm")
    odd = path.with_name(f"details_arc__challenge__25_{stamp}.parquet")
    path.rename(odd)
    table = read_details(odd)
    assert table.benchmark == "lighteval" and set(table.frame["task"]) == {"arc_challenge"}
    (tmp_path / "results" / "org" / "m" / f"results_{stamp}.json").unlink()
    with pytest.raises(IngestError, match="not of the form"):
        read_details(odd)


def test_early_leaderboard_columns_gold_and_counts_are_no_metrics(tmp_path):
    """The July 2023 leaderboard files: each metric its own column, beside integer columns that are not scores."""
    from harness_ext.adapters.lighteval_details import read_details

    rows = [{"example": f"Mercury_{i}", "query": f"Q{i}", "choices": ["a", "b"], "gold": i % 2, "acc": float(i < 2),
             "acc_norm": float(i < 3), "num_asked_few_shots": 25, "num_effective_few_shots": -1, "truncated": [0]}
            for i in range(4)]
    path = _write(tmp_path / "details_org__m" / STAMP / f"details_harness|arc:challenge|25_{STAMP}.parquet", rows)
    f = read_details(path).frame
    assert set(f["metric"]) == {"acc", "acc_norm"} and set(f["model"]) == {"org/m"}
    assert f.groupby("metric")["value"].sum().to_dict() == {"acc": 2.0, "acc_norm": 3.0}


@pytest.mark.parametrize("rows, reason", [
    ([{"example": "q", "metrics": "{'acc': __import__('os')}"}], "not a dict of scores"),
    ([{"example": "q", "metrics": "[1, 2]"}], "expected a dict of scores"),
    ([{"example": "", "metrics": {"acc": 1.0}}], "has no query text"),
    ([{"example": "q", "metrics": {"acc": None}}], "no per-document scores"),
    ([{"example": "q", "metrics": "{'acc': " + "9" * 400 + "}"}], "scores too large for a float"),
    ([{"example": "q", "metrics": "{'\\ud800': 1.0}"}], "is not valid Unicode"),
    ([{"example": "q", "full_prompt": "p"}], "no scores"),
])
def test_bad_files_are_skipped_whole_with_the_reason(tmp_path, rows, reason):
    good = _lighteval_run(tmp_path / "ok", "org/m", "lighteval|gsm8k|0", {0: 1.0, 1: 0.0}, results=False, metric="em")
    bad = _write(tmp_path / "bad" / "details" / "org" / "m" / "2025-01-02T03-04-05.000006"
                 / "details_lighteval|math|0_2025-01-02T03-04-05.000006.parquet", rows)
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [good, bad], show_progress=False)
        [skipped] = rep.by_status("skipped")
        assert Path(skipped.path) == bad and reason in skipped.reason
        assert set(item_rows(s)["task"]) == {"gsm8k"}  # nothing of the bad file stored, the good one whole


def test_a_name_without_a_task_key_and_a_file_that_is_not_parquet_are_refused(tmp_path):
    from harness_ext.adapters.lighteval_details import read_details, task_of

    with pytest.raises(IngestError, match="not of the form"):
        task_of("details_arc__challenge__25_2025-11-05T14-43-47.148527.parquet")
    fake = tmp_path / "details" / "m" / STAMP / f"details_lighteval|gsm8k|0_{STAMP}.parquet"
    fake.parent.mkdir(parents=True)
    fake.write_text("PAR1 not really")
    with pytest.raises(IngestError, match="not a Parquet file"):
        read_details(fake)
    # A clone of a details dataset made without git lfs: the pointer is said, with how to fetch the file.
    fake.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:" + "0" * 64 + "\nsize 87199\n")
    with pytest.raises(IngestError, match="Git LFS pointer"):
        read_details(fake)


def test_metrics_text_as_lighteval_prints_it_is_read_as_data(tmp_path):
    """``str(dict)`` of NaN is ``nan``, NumPy 2 prints ``np.float64(1.0)``; JSON text has ``null``: all read, nothing
    evaluated (a call or a name other than these refuses the file, as in the test above)."""
    from harness_ext.adapters.lighteval_details import read_details

    texts = ["{'acc': np.float64(1.0), 'em': nan}", '{"acc": 0.0, "em": null}', "{'acc': numpy.int64(1), 'em': inf}",
             "{'acc': True}"]
    path = _write(tmp_path / "details" / "m" / STAMP / f"details_lighteval|x|0_{STAMP}.parquet",
                  [{"example": f"q{i}", "metrics": t} for i, t in enumerate(texts)])
    table = read_details(path)
    f = table.frame
    assert set(f["metric"]) == {"acc"} and f["value"].tolist() == [1.0, 0.0, 1.0, 1.0]
    assert "1 null scores left out" in table.notes and "2 scores that are NaN or infinite left out" in table.notes
    for bad in ("{'acc': np.load('x')}", "{'acc': os.system}", "{'acc': np.float64(x)}"):
        _write(path, [{"example": "q", "metrics": bad}])
        with pytest.raises(IngestError, match="not a dict of scores"):
            read_details(path)


def test_repeated_documents_are_kept_apart_and_counted(tmp_path):
    from harness_ext.adapters.lighteval_details import read_details

    rows = [{"example": "same", "choices": ["a", "b"], "metrics": {"acc": v}} for v in (1.0, 0.0, 1.0)]
    path = _write(tmp_path / "details" / "m" / STAMP / f"details_lighteval|x|0_{STAMP}.parquet", rows)
    table = read_details(path)
    assert table.frame["doc_id"].nunique() == 3 and table.frame["value"].sum() == 2.0
    assert any("2 rows repeat another row's query" in n for n in table.notes)


def _population(root: Path, n_models: int = 7, n_items: int = 30) -> dict:
    """lighteval runs of ``n_models`` models on two tasks; the last model's are returned, not written."""
    import numpy as np

    rng = np.random.default_rng(0)
    new = {}
    for m in range(n_models):
        skill = 0.2 + 0.6 * m / n_models
        for key in ("lighteval|arc:easy|0", "lighteval|piqa|0"):
            scores = {i: float(rng.random() < skill) for i in range(n_items)}
            if m == n_models - 1:
                new[key] = scores
            else:
                _lighteval_run(root / f"run{m}", f"org/model-{m}", key, scores, stamp=f"2025-01-0{1 + m % 9}T00-00-00.0")
    return new


def test_reduce_items_on_lighteval_details_and_predict_reads_a_new_models_run_folder(tmp_path, capsys):
    new = _population(tmp_path / "runs")
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(tmp_path / "runs")]) == 0
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "10", "--benchmark", "lighteval", "--out", str(out),
                 "--no-plot"]) == 0
    m = load_manifest(out)
    assert sorted(m["tasks"]) == ["arc_easy", "piqa"] and {b["metric"] for b in m["tasks"].values()} == {"acc"}
    # Every document run (lighteval runs a task whole): each task's score is lighteval's own, exactly.
    whole = tmp_path / "whole"
    for key, scores in new.items():
        _lighteval_run(whole, "org/new-model", key, scores)
    pj = tmp_path / "whole.json"
    assert main(["predict", "-m", str(out), str(whole), "--json", str(pj)]) == 0
    rows = {r["dataset"]: r for r in json.loads(pj.read_text())["datasets"]}
    for key, scores in new.items():
        task = key.split("|")[1].replace(":", "_")
        assert rows[task]["observed"] and rows[task]["raw"] == pytest.approx(sum(scores.values()) / len(scores))
    # Only the drawn documents run: an estimate with its interval from the 10 drawn items of each task.
    drawn = tmp_path / "drawn"
    for key, scores in new.items():
        b = m["tasks"][key.split("|")[1].replace(":", "_")]
        names = dict(zip(decode_ids(b["items"]).tolist(), b["item_ids"]))
        wanted = {names[d] for d in decode_ids(b["sample"]).tolist()}
        from harness_ext.adapters.lighteval_details import _item_ids

        ids = _item_ids([(f"Question {i}: what is {i} + {i}?", [str(2 * i), str(2 * i + 1)], None) for i in scores], [])
        keep = {i: v for (i, v), h in zip(scores.items(), ids) if h in wanted}
        assert len(keep) == 10
        _lighteval_run(drawn, "org/new-model", key, keep, results=False)
    pj = tmp_path / "drawn.json"
    assert main(["predict", "-m", str(out), str(drawn), "--json", str(pj)]) == 0
    for r in json.loads(pj.read_text())["datasets"]:
        assert not r["observed"] and r["n_used"] == 10 and r["raw_lower"] <= r["raw"] <= r["raw_upper"]
    # A details file predict cannot read is one clear error naming it.
    bad = tmp_path / "bad"
    _write(bad / "details" / "org" / "m" / STAMP / f"details_lighteval|piqa|0_{STAMP}.parquet",
           [{"example": "q", "metrics": "{'acc': oops}"}])
    assert main(["predict", "-m", str(out), str(bad)]) != 0
    err = capsys.readouterr().err
    assert "cannot read the lighteval details file" in err and "details_lighteval|piqa|0" in err


@pytest.mark.parametrize("key", ["custom|..|0", "custom|~|0", "lighteval|-.-|5"])
def test_a_task_key_of_punctuation_only_is_refused_naming_the_key(tmp_path, key):
    """A task named by no letter or digit snake-cases to nothing: the details file and the results file are each
    refused naming the key as written (not "task must be a non-empty string, got ''")."""
    _lighteval_run(tmp_path, "org/m", key, {0: 1.0, 1: 0.0})
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [tmp_path], show_progress=False)
        skipped = rep.by_status("skipped")
        assert len(skipped) == 2 and not rep.by_status("ingested")
        for f in skipped:
            assert json.dumps(key) in f.reason and "no letter or digit" in f.reason, f.reason
        assert s.con.execute("SELECT count(*) FROM results").fetchone() == (0,)
