"""One dataset under two harnesses' names: an Inspect AI log and the Every Eval Ever record converted from it.

The committed Epoch AI log names its task ``simpleqa_verified``; the Every Eval Ever record of the same run names the
dataset ``SimpleQA-Verified`` and keeps the scorer as its evaluation. Both were matrix columns of one run (0.431 and
0.431). The record's own fields (dataset repository, size, scorer) are the log's, so the matrix merges them, and says
what it did with counts; a record that could be several tasks' is not merged, and said; the user declares or
separates names with ``info --dataset-aliases``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness_ext.cli import main
from harness_ext.store.dataset_links import links_note
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LOG = FIXTURES / "inspect" / "no_version" / "2026-02-06T02-15-41+00-00_simpleqa-verified_claude-opus-4-6.json"
RECORD = next((FIXTURES / "eee_inspect_run").rglob("*.json"))
ARC = FIXTURES / "every_eval_ever" / "ai2_arc"
QUERY = MatrixQuery(benchmarks=("inspect",), normalise="none")


def _store(*paths):
    s = Store.open(":memory:")
    ingest_paths(s, [str(p) for p in paths], show_progress=False)
    return s


def _record_copy(tmp_path, name="copy.json", **changes) -> Path:
    """The real record with a few fields changed (``score``, ``model``)."""
    doc = json.loads(RECORD.read_text())
    if "score" in changes:
        doc["evaluation_results"][0]["score_details"]["score"] = changes["score"]
    if "model" in changes:
        doc["model_info"]["id"] = doc["model_info"]["name"] = changes["model"]
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


def test_the_log_and_its_record_are_one_dataset_the_cell_counted_once():
    s = _store(LOG, RECORD)
    df = load_matrix(s, QUERY)
    assert list(df.columns) == ["simpleqa_verified"]
    assert df.loc["anthropic/claude-opus-4-6", "simpleqa_verified"] == pytest.approx(0.431)
    (m,) = df.attrs["dataset_links"]["merged"]
    assert (m["dataset"], m["into"], m["moved"], m["same"], m["conflicts"]) == (
        "SimpleQA-Verified", "simpleqa_verified", 0, 1, 0)
    note = links_note(df.attrs)
    assert "codelion/SimpleQA-Verified, 1000 samples" in note and "simpleqa_scorer" in note
    assert "1 cell with the same value under both names" in note
    # --no-aliases keeps both names, as before
    apart = load_matrix(s, MatrixQuery(benchmarks=("inspect",), normalise="none", aliases=False))
    assert sorted(apart.columns) == ["SimpleQA-Verified", "simpleqa_verified"]
    assert "dataset_links" not in apart.attrs


def test_a_record_alone_or_of_another_dataset_is_left_as_it_is():
    """Names are never compared: EEE's ``ai2_arc`` beside the SimpleQA log stays ``ai2_arc``, and a record without
    the log keeps its own name."""
    df = load_matrix(_store(LOG, ARC), QUERY)
    assert sorted(df.columns) == ["ai2_arc", "simpleqa_verified"] and "dataset_links" not in df.attrs
    assert list(load_matrix(_store(RECORD), QUERY).columns) == ["SimpleQA-Verified"]


def test_a_value_that_disagrees_is_counted_and_the_logs_kept(tmp_path):
    other = _record_copy(tmp_path, score=0.5)
    moved = _record_copy(tmp_path, "moved.json", model="anthropic/claude-sonnet-4-0")
    df = load_matrix(_store(LOG, other, moved), QUERY)
    assert list(df.columns) == ["simpleqa_verified"]
    assert df.loc["anthropic/claude-opus-4-6", "simpleqa_verified"] == pytest.approx(0.431)
    assert df.loc["anthropic/claude-sonnet-4-0", "simpleqa_verified"] == pytest.approx(0.431)
    (m,) = df.attrs["dataset_links"]["merged"]
    assert (m["moved"], m["same"], m["conflicts"]) == (1, 0, 1)
    assert m["conflicting"] == [{"model": "anthropic/claude-opus-4-6", "value": 0.5, "kept": pytest.approx(0.431)}]
    note = links_note(df.attrs)
    assert "1 cell only under SimpleQA-Verified moved" in note and "1 cell with values that disagree" in note
    assert "anthropic/claude-opus-4-6 0.5 vs 0.431" in note


def test_a_record_that_fits_two_tasks_is_not_merged_and_said(tmp_path):
    """Two Inspect tasks that read the same dataset with the same scorer and size: which one the record is of is
    not known (Inspect's arc_easy and arc_challenge read one repository; there the size tells them apart)."""
    doc = json.loads(LOG.read_text())
    doc["eval"]["task"] = "simpleqa_verified_again"
    twin = tmp_path / "twin.json"
    twin.write_text(json.dumps(doc))
    df = load_matrix(_store(LOG, twin, RECORD), QUERY)
    assert sorted(df.columns) == ["SimpleQA-Verified", "simpleqa_verified", "simpleqa_verified_again"]
    (n,) = df.attrs["dataset_links"]["not_merged"]
    assert n["dataset"] == "SimpleQA-Verified" and "simpleqa_verified, simpleqa_verified_again" in n["why"]
    assert "not merged" in links_note(df.attrs)
    # the size tells two tasks of one repository apart
    doc["eval"]["dataset"]["samples"] = 999
    twin.write_text(json.dumps(doc))
    df = load_matrix(_store(LOG, twin, RECORD), QUERY)
    assert sorted(df.columns) == ["simpleqa_verified", "simpleqa_verified_again"]


def test_newer_records_name_the_task(tmp_path):
    """Newer converters write ``evaluation_name`` as ``"<task> - <scorer>"``: the task named is the link."""
    doc = json.loads(RECORD.read_text())
    doc["evaluation_results"][0]["evaluation_name"] = "inspect_evals/simpleqa_verified - simpleqa_scorer"
    del doc["evaluation_results"][0]["source_data"]["hf_repo"]
    p = tmp_path / "named.json"
    p.write_text(json.dumps(doc))
    df = load_matrix(_store(LOG, p), QUERY)
    assert list(df.columns) == ["simpleqa_verified"]
    assert "names Inspect task simpleqa_verified" in df.attrs["dataset_links"]["merged"][0]["why"]


def test_info_lists_the_link_and_the_user_separates_or_declares(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    os.environ.setdefault("HARNESS_EXT_NO_PROGRESS", "1")
    assert main(["ingest", "--db", str(db), str(LOG), str(RECORD), "-q"]) == 0
    capsys.readouterr()
    assert main(["info", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "datasets under two names" in out and "inspect/SimpleQA-Verified" in out and "same run" in out
    sep = tmp_path / "sep.yaml"
    sep.write_text("separate: [SimpleQA-Verified]\n")
    assert main(["info", "--db", str(db), "--dataset-aliases", str(sep)]) == 0
    assert "stored 1 dataset alias entry" in capsys.readouterr().out
    with Store.open(str(db), read_only=True) as s:
        assert sorted(load_matrix(s, QUERY).columns) == ["SimpleQA-Verified", "simpleqa_verified"]
    declared = tmp_path / "aliases.yaml"
    declared.write_text("aliases:\n  inspect/simpleqa_verified: [inspect/SimpleQA-Verified]\n")
    assert main(["info", "--db", str(db), "--dataset-aliases", str(declared)]) == 0
    with Store.open(str(db), read_only=True) as s:
        df = load_matrix(s, QUERY)
    assert list(df.columns) == ["simpleqa_verified"]
    (m,) = df.attrs["dataset_links"]["merged"]
    assert m["origin"].startswith("user:") and "declared in" in m["why"] and m["same"] == 1
    capsys.readouterr()
    assert main(["matrix", "--db", str(db), "--benchmark", "inspect"]) == 0
    assert "dataset SimpleQA-Verified merged into simpleqa_verified" in capsys.readouterr().err


def test_a_bad_alias_file_is_one_clear_error_and_stores_nothing(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(LOG), "-q"]) == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("aliases: [a, b]\n")
    capsys.readouterr()
    assert main(["info", "--db", str(db), "--dataset-aliases", str(bad)]) != 0
    assert "bad.yaml" in capsys.readouterr().err
    with Store.open(str(db), read_only=True) as s:
        assert not s.con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = "
                                 "'dataset_aliases'").fetchone()[0]


def test_shared_helm_records_have_no_links():
    """The shared Every Eval Ever leaderboards (no evaluation runs) gain no link: their matrix is as before."""
    root = Path(os.environ.get("HARNESS_EXT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    helm = root / "every_eval_ever" / "data" / "helm_classic"
    if not helm.is_dir():
        pytest.skip("shared data not available")
    df = load_matrix(_store(helm), MatrixQuery(benchmarks=("helm_classic",)))
    assert "dataset_links" not in df.attrs and df.shape[1] == 14


def test_a_declared_plain_name_in_two_benchmarks_is_not_guessed(tmp_path):
    """A record of another source puts ``SimpleQA-Verified`` in a second benchmark: a declaration by the plain name
    could mean either, so it is not applied and the matrix says to write ``benchmark/name``; the built-in link,
    made within one benchmark, still merges the Inspect record."""
    doc = json.loads(RECORD.read_text())
    doc["source_metadata"]["source_name"] = "epoch_ai"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(doc))
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(LOG), str(RECORD), str(other)]) == 0
    declared = tmp_path / "aliases.yaml"
    declared.write_text("aliases:\n  simpleqa_verified: [SimpleQA-Verified]\n")
    assert main(["info", "--db", str(db), "--dataset-aliases", str(declared)]) == 0
    with Store.open(str(db), read_only=True) as s:
        df = load_matrix(s, MatrixQuery(normalise="none"))
    assert sorted(df.columns) == ["epoch_ai/SimpleQA-Verified", "simpleqa_verified"]  # the name is in two benchmarks
    (n,) = df.attrs["dataset_links"]["not_merged"]
    assert n["dataset"] == "SimpleQA-Verified" and "write it as benchmark/name" in n["why"]
    assert [m["into"] for m in df.attrs["dataset_links"]["merged"]] == ["simpleqa_verified"]
