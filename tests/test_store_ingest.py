"""Store, ingestion and matrix on real result files, and every bad-input case."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest

from conftest import HELM_CLASSIC, LM_EVAL_V03, LM_EVAL_V04, PYTHIA, require
from harness_ext.errors import IngestError, StoreError
from harness_ext.store.ingest import detect_adapter, ingest_paths
from harness_ext.store.matrix import MatrixQuery, densify, load_matrix
from harness_ext.plugin_manager import get_registrations
from harness_ext.store.db import Store
from harness_ext.types import Adapter, SourceFile

V04_FILE = "Qwen__Qwen2.5-1.5B/results_2025-03-03T00-05-12.300060.json"
PYTHIA_FILE = "pythia-v1/pythia-160m/zero-shot/160m_step143000.json"


@pytest.fixture
def store():
    with Store.open(":memory:") as s:
        yield s


def counts(store):
    c = store.counts()
    c.pop("conflicts")
    return c


def test_pythia_mmlu_is_838_runs_by_57_subjects(pythia_mmlu_matrix):
    df = pythia_mmlu_matrix
    assert df.shape == (838, 57)
    assert not df.isna().to_numpy().any()
    assert df.to_numpy().min() >= 0 and df.to_numpy().max() <= 1
    meta = df.attrs["datasets"]["abstract_algebra"]
    assert meta["random_baseline"] == 0.25 and meta["metric"] == "acc"


def test_model_rows_merge_repeated_runs_of_one_checkpoint(real_store):
    with Store.open(real_store, read_only=True) as s:
        df = load_matrix(s, MatrixQuery(benchmarks=("mmlu",), rows="model_shots"))
        # Two final checkpoints were evaluated twice (baseline/ and zero-shot/): 838 runs, 836 model x shot rows.
        assert df.shape == (836, 57)
        conflicts = s.conflicts()
        assert len(conflicts) > 0 and set(conflicts.columns) >= {"model", "dataset", "value", "source"}


def test_helm_classic_matrix(helm_classic_matrix, real_store):
    df = helm_classic_matrix
    assert df.shape == (30, 14)
    with Store.open(real_store, read_only=True) as s:
        full = load_matrix(s, MatrixQuery(benchmarks=("helm_classic",), normalise="none"))
    # HELM's -1 "not evaluated" placeholders are missing cells, not scores.
    assert full.shape == (67, 14) and int(full.isna().sum().sum()) == 159
    assert int(full["HellaSwag"].isna().sum()) == 35 and int(full["XSUM"].isna().sum()) == 25
    assert (full.min() >= 0).all()
    assert "Mean win rate" not in df.columns
    assert not df.isna().to_numpy().any()


def test_v04_block_is_15_runs(store):
    require(LM_EVAL_V04)
    ingest_paths(store, [LM_EVAL_V04.parent], show_progress=False)
    runs = load_matrix(store, MatrixQuery(source="*v04*", rows="run", dense=True))
    assert runs.shape == (15, 73)
    assert {"mmlu", "lm_eval"} == {m["benchmark"] for m in runs.attrs["datasets"].values()}
    # gemma-2-2b was run twice (with and without parallelize=True): one model row.
    models = load_matrix(store, MatrixQuery(source="*v04*", dense=True))
    assert models.shape == (14, 73)


def test_reingest_changes_nothing(store, tmp_path):
    require(PYTHIA)
    before = ingest_paths(store, [PYTHIA / "pythia-v1" / "pythia-160m"], show_progress=False)
    assert before.by_status("ingested")
    c1 = counts(store)
    # Same bytes under another path are still the same source.
    copy = tmp_path / "copy.json"
    shutil.copy(PYTHIA / PYTHIA_FILE, copy)
    again = ingest_paths(store, [PYTHIA / "pythia-v1" / "pythia-160m", copy], show_progress=False)
    assert not again.by_status("ingested") and len(again.by_status("unchanged")) == len(before.files) + 1
    assert counts(store) == c1


def test_conflicting_value_is_reported_not_overwritten(store, tmp_path):
    require(PYTHIA)
    ingest_paths(store, [PYTHIA / PYTHIA_FILE], show_progress=False)
    doc = json.loads((PYTHIA / PYTHIA_FILE).read_text())
    doc["results"]["arc_easy"]["acc"] = 0.999
    other = tmp_path / "rerun.json"
    other.write_text(json.dumps(doc))
    rep = ingest_paths(store, [other], show_progress=False)
    assert len(rep.conflicts) == 1 and "arc_easy" in str(rep.conflicts[0]) and "0.999" in str(rep.conflicts[0])
    df = load_matrix(store, MatrixQuery(datasets="arc_easy", normalise="none"))
    assert df.iloc[0, 0] != 0.999  # the first-ingested value is used
    assert store.counts()["conflicts"] == 1 and len(store.conflicts()) == 2  # one cell, both values listed


def _write(tmp_path, name, content):
    p = tmp_path / name
    p.write_text(content) if isinstance(content, str) else p.write_bytes(content)
    return p


@pytest.mark.parametrize(
    "name, content, reason",
    [
        ("truncated.json", '{"results": {"arc_easy": {"acc": 0.5', "no adapter claims it"),
        # A bare NaN or Infinity is a metric lm-eval could not compute: left out (and noted), here the only one.
        ("nan.json", '{"results": {"arc_easy": {"acc": NaN}}, "config": {"model_args": "pretrained=x"}}',
         "no results found (read as lm_eval_v03); 1 metric written as null, NaN, Infinity or not a number"),
        ("inf.json", '{"results": {"arc_easy": {"acc": Infinity}}, "config": {"model_args": "pretrained=x"}}',
         "not a number (not computed) left out: arc_easy acc"),
        # Finite but far above 1: was let past the proportion check and stored as an accuracy of 1e308.
        ("huge.json", '{"results": {"arc_easy": {"acc": 1e308}}, "config": {"model_args": "pretrained=x"}}',
         "acc = 1e+308 is outside [0, 1]"),
        # A shot count that is no number was read as "not recorded": the result moved to another shot setting.
        ("shots.json", '{"results": {"arc_easy": {"acc": 0.5}}, "config": {"model_args": "pretrained=x", '
                       '"num_fewshot": "five"}}', "config.num_fewshot is 'five', not a shot count"),
        ("nshot.json", '{"results": {"arc_easy": {"acc,none": 0.5}}, "n-shot": {"arc_easy": "zero"}, '
                       '"config": {"model_args": "pretrained=x"}}', "n-shot of 'arc_easy' is 'zero', not a shot count"),
        # A string that is no number is a metric lm-eval could not compute ("N/A"): left out, here the only one.
        ("string.json", '{"results": {"arc_easy": {"acc": "high"}}, "config": {"model_args": "pretrained=x"}}',
         "no results found"),
        ("block.json", '{"results": {"arc_easy": [0.5]}, "config": {"model_args": "pretrained=x"}}', "expected an object"),
        ("nomodel.json", '{"results": {"arc_easy": {"acc": 0.5}}, "config": {"model_args": "batch_size=2"}}', "names no model"),
        ("empty.json", '{"results": {}, "config": {"model_args": "pretrained=x"}}', "no results found"),
        ("wide.csv", "model,a,b\nm1,0.5,inf\n", "not finite"),
        ("ragged.csv", "model,a,b\nm1,0.5\n", "fields"),
    ],
)
def test_bad_files_are_reported_and_store_unchanged(store, tmp_path, name, content, reason):
    require(PYTHIA)
    ingest_paths(store, [PYTHIA / PYTHIA_FILE], show_progress=False)
    c1 = counts(store)
    bad = _write(tmp_path, name, content)
    rep = ingest_paths(store, [bad], show_progress=False)
    (f,) = rep.files
    assert f.status == "skipped" and reason in f.reason, f.reason
    assert counts(store) == c1


def test_visualrwkv_non_standard_files_are_skipped_with_reason(store):
    require(LM_EVAL_V04)
    rep = ingest_paths(store, [LM_EVAL_V04 / "VisualRWKV__rwkv7-1.47B-pile"], show_progress=False)
    assert len(rep.by_status("skipped")) == 3 and not rep.by_status("ingested")
    reasons = sorted(f.reason for f in rep.files)
    # Two are bare results blocks; the third is a v0.4 results file without its config block, and says so (it
    # was "not a recognised result file").
    assert reasons[0] == "an lm-eval v0.4 results file without its 'config' object (the model and its arguments): not read"
    assert all("not a recognised result file" in r for r in reasons[1:])
    assert counts(store)["results"] == 0


def test_directory_named_like_json_is_walked(store):
    require(LM_EVAL_V04)
    rep = ingest_paths(store, [LM_EVAL_V04 / "all_materials.json"], show_progress=False)
    # One file holds polymer_tg_prediction's mae as Infinity (and its stderr as NaN): the whole file was skipped;
    # now that metric is left out, named in a note, and the file's other tasks are stored.
    assert not rep.by_status("skipped") and len(rep.by_status("ingested")) == 2
    (f,) = [f for f in rep.files if "19-37-57" in f.path]
    assert any("left out: polymer_tg_prediction mae; 1 task with no metric left" in n for n in f.notes), f.notes
    assert f.n_results > 10


def test_missing_path_and_ambiguous_format(store, tmp_path):
    rep = ingest_paths(store, [tmp_path / "nope.json"], show_progress=False)
    assert rep.files[0].status == "skipped" and "no such file" in rep.files[0].reason
    p = _write(tmp_path, "x.csv", "model,a\nm,0.5\n")
    adapters = dict(get_registrations("adapters"))
    adapters["clone"] = Adapter(name="clone", can_handle=lambda src: True, read=lambda src: [])
    with pytest.raises(IngestError, match="ambiguous format: adapters .*csv.*clone"):
        detect_adapter(SourceFile(p), adapters)


def test_csv_long_and_wide(store, tmp_path):
    wide = _write(tmp_path, "bench.csv", "model,d1,d2,d3\nm1,0.9,0.5,\nm2,0.4,0.6,0.7\n")
    long = _write(tmp_path, "long.csv", "model,benchmark,dataset,metric,value,higher_is_better,random_baseline\n"
                                        "m1,b,d1,acc,0.75,true,0.5\nm2,b,d1,acc,0.5,true,0.5\n")
    rep = ingest_paths(store, [wide, long], show_progress=False)
    assert rep.n_results == 7
    df = load_matrix(store, MatrixQuery(benchmarks=("bench",), normalise="none"))
    assert df.shape == (2, 3) and math.isnan(df.loc["m1", "d3"])
    b = load_matrix(store, MatrixQuery(benchmarks=("b",)))
    assert b.loc["m1", "d1"] == pytest.approx(0.5) and b.loc["m2", "d1"] == 0.0


def test_model_naming_from_model_args(store):
    require(LM_EVAL_V03)
    ingest_paths(store, [LM_EVAL_V03 / "llama" / "llama-7B" / "llama-7B_mmlu_5-shot.json",
                         PYTHIA / PYTHIA_FILE], show_progress=False)
    names = set(store.con.execute("SELECT name FROM models").df()["name"])
    assert names == {"llama-7B", "EleutherAI/pythia-v1.1-160m@step143000"}


def test_empty_store_and_no_match_errors(store, tmp_path):
    with pytest.raises(StoreError, match="store is empty"):
        load_matrix(store, MatrixQuery())
    with pytest.raises(StoreError, match="no store at"):
        Store.open(tmp_path / "absent.duckdb", read_only=True)
    _write(tmp_path, "b.csv", "model,d1\nm1,0.5\n")
    ingest_paths(store, [tmp_path / "b.csv"], show_progress=False)
    with pytest.raises(StoreError, match="no benchmark 'zzz' in the store. Benchmarks in the store: b"):
        load_matrix(store, MatrixQuery(benchmarks=("zzz",)))


def test_densify_and_normalisation_rules():
    import pandas as pd

    from harness_ext.store.matrix import normalise_matrix

    df = pd.DataFrame([[1, 2, np.nan], [1, np.nan, np.nan], [1, 2, 3]], index=list("abc"), columns=list("xyz"), dtype=float)
    assert densify(df).shape == (2, 2)
    raw = pd.DataFrame({"acc": [0.25, 0.625, 1.0], "ppl": [10.0, 20.0, 30.0], "bart": [-3.0, -2.0, -1.0]})
    meta = pd.DataFrame({"higher_is_better": [True, False, True], "random_baseline": [0.25, np.nan, np.nan],
                         "baseline_source": ["4 choices", None, None], "min_score": np.nan, "max_score": np.nan},
                        index=raw.columns)
    norm, how = normalise_matrix(raw, meta)
    assert np.allclose(norm["acc"], [0, 0.5, 1])
    assert np.allclose(norm["ppl"], [1, 0.5, 0])  # lower is better: flipped after min-max
    assert np.allclose(norm["bart"], [0, 0.5, 1])
    assert "chance 0.25" in how[0] and "flipped" in how[1] and how[2] == "min-max"


def test_cli_ingest_matrix_info(tmp_path, capsys):
    from harness_ext.cli import main

    require(PYTHIA)
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "--db", db, str(PYTHIA / "pythia-v1" / "pythia-160m" / "zero-shot")]) == 0
    assert "files ingested" in capsys.readouterr().out
    out = tmp_path / "m.csv"
    assert main(["matrix", "--db", db, "--benchmark", "mmlu", "-o", str(out)]) == 0
    assert out.read_text().startswith("model,abstract_algebra")
    assert main(["info", "--db", db]) == 0
    assert "mmlu" in capsys.readouterr().out
    assert main(["matrix", "--db", str(tmp_path / "none.duckdb")]) == 1
    assert "no store at" in capsys.readouterr().err


def test_conflicts_within_one_batch_and_within_one_file(store, tmp_path):
    head = "model,benchmark,dataset,value\n"
    a = _write(tmp_path, "a.csv", head + "m1,x,d1,0.5\nm1,x,d2,0.1\n")
    b = _write(tmp_path, "b.csv", head + "m1,x,d1,0.7\nm1,x,d2,0.1\n")  # same batch, d1 disagrees
    c = _write(tmp_path, "c.csv", head + "m2,x,d1,0.2\nm2,x,d1,0.3\n")  # one file repeating a cell
    rep = ingest_paths(store, [a, b, c], show_progress=False)
    by_path = {f.path: f for f in rep.files}
    assert [str(x.stored_value) for x in by_path[str(b)].conflicts] == ["0.5"]
    assert by_path[str(b)].n_results == 2 and not by_path[str(a)].conflicts
    assert [x.new_value for x in by_path[str(c)].conflicts] == [0.3]
    df = load_matrix(store, MatrixQuery(benchmarks=("x",), normalise="none"))
    assert df.loc["m1", "d1"] == 0.5 and df.loc["m2", "d1"] == 0.2
    assert store.counts()["sources"] == 3


def test_conflicts_listed_in_a_total_order(store, tmp_path):
    """Two metrics of one dataset conflicting in the same files: the rows come in the same order every time."""
    require(PYTHIA)
    ingest_paths(store, [PYTHIA / PYTHIA_FILE], show_progress=False)
    doc = json.loads((PYTHIA / PYTHIA_FILE).read_text())
    for metric in doc["results"]["arc_easy"]:
        if not metric.endswith("_stderr"):
            doc["results"]["arc_easy"][metric] = 0.999
    other = tmp_path / "rerun.json"
    other.write_text(json.dumps(doc))
    ingest_paths(store, [other], show_progress=False)
    first = store.conflicts()
    assert first["metric"].nunique() >= 2
    keys = ["model", "benchmark", "dataset", "metric", "num_fewshot"]  # then sources in ingest order
    assert first[keys].astype(str).values.tolist() == sorted(first[keys].astype(str).values.tolist())
    for _ in range(3):
        assert store.conflicts().equals(first)


@pytest.mark.slow
def test_model_metadata_is_one_row_per_model_source_and_key(tmp_path):
    """model_metadata has no index-backed key (new stores): its rows are unique by construction, whatever the
    adapters give (every fixture format, a file listing models more than once, and a re-ingest)."""
    from pathlib import Path

    fixtures = Path(__file__).parent / "fixtures"
    with Store.open(tmp_path / "s.duckdb") as s:
        for _ in range(2):
            ingest_paths(s, [fixtures], show_progress=False)
        n, distinct = s.con.execute(
            "SELECT count(*), count(DISTINCT (model_id, source_id, key)) FROM model_metadata").fetchone()
        assert n == distinct > 0
        assert "PRIMARY KEY" not in s.con.execute(
            "SELECT sql FROM duckdb_tables() WHERE table_name = 'model_metadata'").fetchone()[0]


def test_a_large_batch_is_checkpointed_at_its_commit_not_written_to_the_wal(tmp_path, monkeypatch):
    """A commit past CHECKPOINT_THRESHOLD goes into the database file at once: no WAL is left to replay, and the
    store reads back the same after closing."""
    import os
    from pathlib import Path

    from harness_ext.store import db

    monkeypatch.setattr(db, "CHECKPOINT_THRESHOLD", "1KB")
    path = str(tmp_path / "s.duckdb")
    with Store.open(path) as s:
        report = ingest_paths(s, [Path(__file__).parent / "fixtures" / "open_llm_leaderboard"], show_progress=False)
        assert report.n_results > 0 and not os.path.exists(path + ".wal")
        n = s.counts()["results"]
    with Store.open(path, read_only=True) as s:
        assert s.counts()["results"] == n == report.n_results


def test_cli_conflict_warning_names_both_files(tmp_path, capsys):
    """The TSC bake-off has H-InceptionTime's accuracies in best/ and deeplearning/, two cells differing; ingesting
    the folder warned 'stored ... from best/..., this file says ...' without saying which file that was."""
    from conftest import SHARED_DATA
    from harness_ext.cli import main

    results = require(SHARED_DATA / "tsml-eval-tsc-bakeoff" / "tsml_eval" / "publications" / "y2023" / "tsc_bakeoff"
                      / "results")
    files = [str(results / d / "H-InceptionTime_accuracy.csv") for d in ("best", "deeplearning")]
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), *files]) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if "conflict" in x]
    assert len(lines) == 2 and all(f"conflict in {files[1]}: H-InceptionTime on " in x and files[0] in x
                                   for x in lines)


def test_cli_conflict_inside_one_file_says_it_is_listed_twice(tmp_path, capsys):
    """BFCL's leaderboard lists GPT-4-1106-Preview twice (85, 81.78): the warning read 'stored 85 from <this file>,
    this file says 81.78', as if two files disagreed."""
    from conftest import SHARED_DATA
    from harness_ext.cli import main

    board = str(require(SHARED_DATA / "benchbench" / "leaderboards" / "bfcl_240906_tools.csv"))
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), board]) == 0
    err = capsys.readouterr().err.splitlines()
    lines = [x for x in err if "GPT-4-1106-Preview" in x and x.startswith("warning:")]
    assert lines == [f"warning: conflict in {board}: GPT-4-1106-Preview on BFCL (score): listed twice in this file, "
                     "85 then 81.78 (both kept; the first is used)"]
    # The rows repeated are also counted once, in a note (the leaderboard lists 14 models on 31 rows).
    assert any(x.startswith("note:") and "14 models listed on more than one row (31 rows)" in x for x in err)


def test_a_store_object_with_stale_caches_is_refused_whole(tmp_path):
    """Two Store objects on one file in one process: the one whose caches predate the other's write numbers its
    sources (and models) from stale ids; sources' primary key refuses its batch whole, for a new file and for the
    file the other stored (new stores have no index on hashes or model names: see tables._SCHEMA)."""
    files = sorted(require(HELM_CLASSIC).rglob("*.json"))[:2]
    db = tmp_path / "s.duckdb"
    with Store.open(db), Store.open(db) as a, Store.open(db) as b:
        assert ingest_paths(b, [files[0]], show_progress=False).by_status("ingested")
        before = counts(b)
        for f in files:  # a's caches know nothing of b's write
            report = ingest_paths(a, [f], show_progress=False)
            assert [x.status for x in report.files] == ["skipped"], report.summary()
            # the database's own reason, not the aborted transaction's refusal to unregister a view
            assert "the store refused it: Constraint Error" in report.files[0].reason, report.files[0].reason
        assert counts(b) == before
        assert a.con.execute("SELECT count(*), count(DISTINCT sha256) FROM sources").fetchone() == (1, 1)
        assert a.con.execute("SELECT count(*), count(DISTINCT name), count(DISTINCT model_id) FROM models"
                             ).fetchone() == (1, 1, 1)


def test_info_separates_metrics_that_hold_a_comma():
    """lm-eval v0.4 names a filtered metric 'exact_match,strict-match': joined with bare commas, info's metrics
    column read 'exact_match,exact_match,strict-match' (two metrics or three?); it is a list of names."""
    with Store.open(":memory:") as s:
        ingest_paths(s, [require(LM_EVAL_V04 / "all_materials.json")], show_progress=False)
        metrics = s.benchmarks().set_index("benchmark").loc["lm_eval", "metrics"]
    assert "exact_match,xml-extract" in metrics and "mae" in metrics


def test_cli_prints_ten_conflicts_per_file_and_counts_the_rest(tmp_path, capsys):
    """A board listing models twice with other scores (the Open LLM Leaderboard v1 as fboulnois/llm-leaderboard-csv
    ``csv/huggingface.csv`` gives it, one row per precision: 5 such models in 140 rows printed 35 warnings; values
    here made up) prints ten conflicting values per file, then how many more and where to see them all."""
    from harness_ext.cli import main

    board = tmp_path / "board.csv"
    cols = [f"task{i}" for i in range(12)]
    board.write_text("model," + ",".join(cols) + "\n" + "m1," + ",".join("0.5" for _ in cols) + "\n"
                     + "m1," + ",".join("0.6" for _ in cols) + "\nm2," + ",".join("0.7" for _ in cols) + "\n")
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), str(board)]) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith(f"warning: conflict in {board}")]
    assert len(lines) == 11 and all("m1 on task" in x for x in lines[:10])
    assert lines[10] == (f"warning: conflict in {board}: 2 more conflicting values "
                         "(every one: 'harness-ext info --conflicts')")
