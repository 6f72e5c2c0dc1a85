"""MTEB results: legacy (mteb 0.0.2, mtebpaper) and current (mteb 1.12, embeddings-benchmark/results) layouts.

Issue 15: "MTEB results are not read at all" (files were "not a recognised result file"). Real slice in
fixtures/mteb (see its README).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_ext.cli import main
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix
from harness_ext.store.db import Store

FIX = Path(__file__).parent / "fixtures" / "mteb"


def _store(paths, **options):
    s = Store.open(":memory:")
    rep = ingest_paths(s, paths, show_progress=False, options=options)
    return s, rep


def test_both_layouts_ingest_with_each_task_types_main_score():
    s, rep = _store([FIX])
    # GritLM's model_meta.json: model metadata, skipped quietly (test_model_meta_json_is_model_metadata...)
    assert len(rep.by_status("ingested")) == 15 and [f.quiet for f in rep.by_status("skipped")] == [True]
    assert {f.adapter for f in rep.by_status("ingested")} == {"mteb"}
    df = load_matrix(s, MatrixQuery(normalise="none"))
    mini = df.loc["all-MiniLM-L6-v2"]
    # the documented task-type mapping on legacy files without main_score
    assert mini["STSBenchmark"] == pytest.approx(0.8203246731235654)      # cos_sim.spearman
    assert mini["SciFact"] == pytest.approx(0.64508)                      # ndcg_at_10
    assert mini["SprintDuplicateQuestions"] == pytest.approx(0.9455063045792446)  # cos_sim.ap
    assert mini["StackExchangeClustering"] == pytest.approx(0.5336142166203601)   # v_measure (test, not validation)
    assert mini["AskUbuntuDupQuestions"] == pytest.approx(0.634768168123733)      # map
    assert mini["MassiveIntentClassification"] == pytest.approx(0.6740416946872899)  # the English subset
    # current layout: the file's main_score; the model from the folder above the revision
    assert df.loc["GritLM/GritLM-7B", "Banking77Classification"] == pytest.approx(0.793603896103896)
    # the same model's AskUbuntu result in both layouts lands in one cell, with no conflict
    assert s.counts()["conflicts"] == 0
    meta = s.con.execute("SELECT metadata FROM datasets WHERE name = 'STSBenchmark' AND is_primary").fetchone()[0]
    assert '"main_metric": "cos_sim.spearman"' in meta


def test_secondary_metrics_are_queryable():
    s, _ = _store([FIX / "legacy"])
    df = load_matrix(s, MatrixQuery(normalise="none", metric="ndcg_at_100"))
    assert list(df.columns) == ["SciFact"] and df.iloc[0, 0] == pytest.approx(0.67665)
    f1 = load_matrix(s, MatrixQuery(normalise="none", metric="cos_sim.f1"))
    assert f1.loc["all-MiniLM-L6-v2", "SprintDuplicateQuestions"] == pytest.approx(0.890126582278481)


def test_language_and_split_selection():
    path = FIX / "current" / "all-MiniLM-L6-v2" / "no_revision_available" / "MassiveIntentClassification.json"
    s, _ = _store([path], mteb_languages=["da", "sv"])
    v = load_matrix(s, MatrixQuery(normalise="none")).iloc[0, 0]
    assert v == pytest.approx((0.4098520511096167 + 0.38103564223268327) / 2)
    s, _ = _store([path], mteb_split="validation", mteb_languages=["nb"])
    assert load_matrix(s, MatrixQuery(normalise="none")).iloc[0, 0] == pytest.approx(0.38145597638957207)
    s, rep = _store([path], mteb_languages=["fr"])
    (f,) = rep.by_status("skipped")
    assert "no subset matches" in f.reason and "'da'" in f.reason


def test_cli_options(tmp_path):
    db = str(tmp_path / "s.duckdb")
    path = FIX / "legacy" / "all-MiniLM-L6-v2" / "StackExchangeClustering.json"
    assert main(["ingest", str(path), "--db", db, "-q", "--mteb-split", "validation"]) == 0
    with Store.open(db, read_only=True) as s:
        assert load_matrix(s, MatrixQuery(normalise="none")).iloc[0, 0] == pytest.approx(0.48796536527431683)
    assert main(["ingest", str(path), "--db", db, "-q", "--mteb-split", "dev"]) == 1  # no such split: reported


def test_language_pairs_that_each_hold_english_are_averaged():
    """BUCC's fr-en, zh-en, ru-en, de-en all list eng-Latn: none of them is "the English subset"
    (the first one, fr-en, was taken alone); the MTEB leaderboard averages the four."""
    s, _ = _store([FIX / "current"])
    df = load_matrix(s, MatrixQuery(normalise="none"))
    grit = (0.9880218651405092 + 0.9908723889766543 + 0.9740561136127468 + 0.9949895615866389) / 4
    e5 = (0.9442443135896548 + 0.9396727566219092 + 0.9873869171885873 + 0.9404598911707917) / 4
    assert df.loc["GritLM/GritLM-7B", "BUCC.v2"] == pytest.approx(grit)
    assert df.loc["intfloat/multilingual-e5-small", "BUCC.v2"] == pytest.approx(e5)
    # a subset wholly in English is still chosen alone
    assert df.loc["all-MiniLM-L6-v2", "MassiveIntentClassification"] == pytest.approx(0.6740416946872899)
    # mteb 2.x: validation split only, cosine_spearman as main score
    assert df.loc["intfloat/multilingual-e5-small", "JSTS"] == pytest.approx(0.789213)


def test_nan_diagnostics_do_not_void_the_file():
    """mteb 1.12 retrieval files carry NaN nauc_* diagnostics: the file was skipped whole ("is nan, not finite")."""
    path = (FIX / "current" / "GritLM__GritLM-7B" / "13f00a0e36500c80ce12870ea513846a066004af"
            / "CrossLingualSemanticDiscriminationWMT21.json")
    s, rep = _store([path])
    assert len(rep.by_status("ingested")) == 1
    df = load_matrix(s, MatrixQuery(normalise="none"))
    assert df.iloc[0, 0] == pytest.approx(0.94513)  # no English subset: both directions averaged
    assert load_matrix(s, MatrixQuery(normalise="none", metric="ndcg_at_10")).iloc[0, 0] == pytest.approx(
        (0.97757 + 0.97716) / 2)
    stored = {r[0] for r in s.con.execute("SELECT metric FROM datasets").fetchall()}
    assert not any(m.startswith("nauc_precision_at_1000") or m.startswith("nauc_recall_at_1000") for m in stored)


GRIT = FIX / "current" / "GritLM__GritLM-7B" / "13f00a0e36500c80ce12870ea513846a066004af"


def test_model_meta_json_is_model_metadata_not_a_result_file(caplog):
    """Every model folder of embeddings-benchmark/results holds a model_meta.json: it printed "skipped: not a
    recognised result file" once per model. Its fields are now the model's metadata, it creates no dataset,
    and it is counted as skipped without a warning."""
    s, rep = _store([GRIT])
    (meta_file,) = rep.by_status("skipped")
    assert meta_file.path.endswith("model_meta.json") and meta_file.quiet and "model metadata" in meta_file.reason
    assert len(rep.by_status("ingested")) == 5
    assert "1 skipped (1 of them metadata files with no results)" in rep.summary()
    assert "model_meta" not in {d for (d,) in s.con.execute("SELECT name FROM datasets").fetchall()}
    meta = s.model_metadata(["GritLM/GritLM-7B"])
    got = dict(zip(meta.key, meta.value))
    assert {k: got[k] for k in ("n_parameters", "embed_dim", "max_tokens", "release_date", "open_weights")} == {
        "n_parameters": 7240000000, "embed_dim": 4096, "max_tokens": 4096.0, "release_date": "2024-02-15",
        "open_weights": True}
    assert got["revision"] == "13f00a0e36500c80ce12870ea513846a066004af" and got["name"] == "GritLM/GritLM-7B"
    assert "training_datasets" not in got and "public_training_data" not in got  # nested / null: left out


def test_ingest_command_does_not_warn_about_model_meta_json(tmp_path, capsys, caplog):
    db = tmp_path / "s.duckdb"
    with caplog.at_level("WARNING"):
        assert main(["ingest", "--db", str(db), str(GRIT)]) in (0, None)
    assert "model_meta.json" not in caplog.text
    assert "metadata files with no results" in capsys.readouterr().out


def test_aggregate_task_is_stored_as_an_aggregate_and_noted():
    """CQADupstackRetrieval, mteb's mean of its 12 forum sub-tasks, was stored as a dataset beside its parts."""
    s, rep = _store([GRIT])
    kinds = dict(s.con.execute("SELECT name, kind FROM datasets WHERE is_primary").fetchall())
    assert kinds["CQADupstackRetrieval"] == "aggregate"
    assert {k for n, k in kinds.items() if n != "CQADupstackRetrieval"} == {"dataset"}
    (f,) = [f for f in rep.by_status("ingested") if f.path.endswith("CQADupstackRetrieval.json")]
    assert f.notes == ["task CQADupstackRetrieval stored as an aggregate (mteb defines it as the mean of its sub-tasks)"]
    df = load_matrix(s, MatrixQuery(normalise="none", aggregates="only"))
    assert df.loc["GritLM/GritLM-7B", "CQADupstackRetrieval"] == pytest.approx(0.46394)


def test_mteb_version_past_the_first_bytes_is_still_recognised(tmp_path):
    """A multilingual file that writes its test block first (mteb 1.0.x; MassiveIntentClassification's layout, with
    per-language blocks) put mteb_version past byte 4,800 and was skipped as "not a recognised result file"."""
    import json

    real = FIX / "current" / "all-MiniLM-L6-v2" / "no_revision_available" / "MassiveIntentClassification.json"
    doc = json.loads(real.read_text())
    block = doc["test"]["da"]
    for lang in ("af", "am", "ar", "az", "bn", "cy", "de", "el", "es", "fa", "fi", "fr", "he", "hi", "hu"):
        doc["test"][lang] = dict(block)  # more languages before the file's metadata, as a 51-language run writes
    text = json.dumps(doc, indent=4)
    assert text.index("mteb_version") > 4800
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / "MassiveIntentClassification.json"
    path.write_text(text)
    s, rep = _store([path])
    (f,) = rep.files
    assert (f.status, f.adapter) == ("ingested", "mteb"), f.reason
    assert load_matrix(s, MatrixQuery(normalise="none")).iloc[0, 0] == pytest.approx(0.6740416946872899)


def test_a_subset_listed_twice_with_other_scores_refuses_the_file(tmp_path):
    """The later entry replaced the first without a word (main_score 0.1 stored beside the first's accuracy)."""
    import json
    import shutil

    folder = tmp_path / "GritLM__GritLM-7B" / GRIT.name
    folder.mkdir(parents=True)
    doc = json.loads((GRIT / "Banking77Classification.json").read_text())
    doc["scores"]["test"].append({**doc["scores"]["test"][0], "main_score": 0.1})
    (folder / "Banking77Classification.json").write_text(json.dumps(doc))
    s, rep = _store([folder / "Banking77Classification.json"])
    (f,) = rep.files
    assert f.status == "skipped" and "lists subset 'default' twice, with different scores" in f.reason
    # The same entry twice is one subset.
    doc["scores"]["test"][-1] = doc["scores"]["test"][0]
    shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "Banking77Classification.json").write_text(json.dumps(doc))
    s, rep = _store([folder / "Banking77Classification.json"])
    assert rep.files[0].status == "ingested"
    assert load_matrix(s, MatrixQuery(normalise="none")).iloc[0, 0] == pytest.approx(0.7936039)


def test_mair_retrieval_files_with_ndcg_at_10_spelled_ndcg_at_sign_are_read(tmp_path):
    """embeddings-benchmark/results holds MAIR's retrieval results beside MTEB's (``results/<model>/<revision>/
    SciFact.json``, mteb_version "1.2.0"): ``{"mteb_dataset_name": ..., "mteb_mair_domain": ..., "scores": {"test":
    [{"hf_subset": "default", "NDCG@10": ...}]}}``, with no main_score. Every such file was skipped ("no main score
    and no known task-type metric"); NDCG@10 is the retrieval main metric. Synthetic numbers, the files' layout."""
    import json

    folder = tmp_path / "intfloat__e5-small-v2" / ("a" * 40)
    folder.mkdir(parents=True)
    for task, value in (("SciFact", 0.61), ("ArguAna", 0.29)):
        doc = {"dataset_revision": "b" * 40, "mteb_version": "1.2.0", "evaluation_time": "",
               "mteb_dataset_name": task, "mteb_mair_domain": "Academic", "queries": {"NDCG@10": value},
               "scores": {"test": [{"hf_subset": "default", "NDCG@10": value}]}}
        (folder / f"{task}.json").write_text(json.dumps(doc, indent=4))
    s, rep = _store([tmp_path])
    assert [f.status for f in rep.files] == ["ingested", "ingested"], [f.reason for f in rep.files]
    row = load_matrix(s, MatrixQuery(normalise="none")).loc["intfloat/e5-small-v2"]
    assert row["SciFact"] == pytest.approx(0.61) and row["ArguAna"] == pytest.approx(0.29)
    meta = s.con.execute("SELECT metadata FROM datasets WHERE name = 'SciFact' AND is_primary").fetchone()[0]
    assert '"main_metric": "ndcg_at_10"' in meta


def _mair_and_mteb_files(root):
    """Synthetic numbers in the real files' layouts, in embeddings-benchmark/results (no licence file: not copied):

    * ``results/intfloat__e5-small-v2/dca8b1a9dae0d4575df2bf423a5edb485a431236/SCIDOCS.json``: MTEB's SCIDOCS
      (mteb 1.18.0, ``task_name``, ``main_score``, ``ndcg_at_10``, dataset revision f8c2fcf0...);
    * ``results/intfloat__e5-small-v2/a81da2d3d5990c4ef456177ecf94abd605a60cb8/SCIDOCS.json``: MAIR's SCIDOCS as
      rewritten later (``task_name``, ``main_score``, ``NDCG@10``, ``"evaluation_time": 120``, mteb_version 1.2.0,
      dataset revision 7d24eac8...), beside ``ACORDAR.json`` and 120-odd other MAIR tasks;
    * ``results/intfloat__e5-small-v2/a81da2d3.../SciFact.json`` at commit 1a2ee92c: MAIR's first upload
      (``mteb_dataset_name``, ``mteb_mair_domain``, ``queries``, ``"evaluation_time": ""``, no main_score);
    * ``results/intfloat__e5-base-v2/1c644c92ad3ba1efdad3f1451a637716616a20e8/ArguAna.json``: MTEB's ArguAna at
      commit 4cfe4aaa, MAIR's at commit 30e5403f -- one revision folder held both benchmarks' files (here: two
      checkouts, ``at_4cfe4aaa/`` and ``at_30e5403f/``).
    """
    import json

    small = root / "results" / "intfloat__e5-small-v2"
    mteb_dir, mair_dir = small / "dca8b1a9dae0d4575df2bf423a5edb485a431236", small / "a81da2d3d5990c4ef456177ecf94abd605a60cb8"
    base = Path("results") / "intfloat__e5-base-v2" / "1c644c92ad3ba1efdad3f1451a637716616a20e8"
    base_mteb, base_mair = root / "at_4cfe4aaa" / base, root / "at_30e5403f" / base
    for d in (mteb_dir, mair_dir, base_mteb, base_mair):
        d.mkdir(parents=True)

    def mteb(task, rev, value):
        return {"dataset_revision": rev, "evaluation_time": 41.2, "kg_co2_emissions": 0.0018, "mteb_version": "1.18.0",
                "scores": {"test": [{"hf_subset": "default", "languages": ["eng-Latn"], "main_score": value,
                                     "map_at_10": value / 2, "ndcg_at_10": value, "recall_at_10": value + 0.01}]},
                "task_name": task}

    def mair(task, value):
        return {"dataset_revision": "7d24eac886a6ae6653a6b67433e1c302cb0e9ac6", "mteb_version": "1.2.0",
                "evaluation_time": 120, "scores": {"test": [{"hf_subset": "default", "NDCG@10": value, "main_score": value,
                                                             "evaluation_time": 120, "languages": ["eng-Latn"]}]},
                "task_name": task}

    files = {mteb_dir / "SCIDOCS.json": mteb("SCIDOCS", "f8c2fcf00f625baaa80f62ec5bd9e1fff3b8ae88", 0.177),
             mair_dir / "SCIDOCS.json": mair("SCIDOCS", 0.176),
             mair_dir / "ACORDAR.json": mair("ACORDAR", 0.254),
             mair_dir / "SciFact.json": {"dataset_revision": "7d24eac886a6ae6653a6b67433e1c302cb0e9ac6",
                                         "mteb_version": "1.2.0", "evaluation_time": "", "mteb_dataset_name": "SciFact",
                                         "mteb_mair_domain": "Academic", "queries": {"NDCG@10": 0.702},
                                         "scores": {"test": [{"hf_subset": "default", "NDCG@10": 0.702}]}},
             base_mteb / "ArguAna.json": mteb("ArguAna", "c22ab2a51041ffd869aaddef7af8d8215647e41a", 0.446),
             base_mair / "ArguAna.json": mair("ArguAna", 0.311)}
    for path, doc in files.items():
        path.write_text(json.dumps(doc, indent=4))
    return files


def test_mair_tasks_named_like_mteb_tasks_are_stored_apart(tmp_path):
    """MAIR's SCIDOCS, ArguAna, SciFact ... are other evaluations than MTEB's tasks of the same name. A model with
    both gave one cell with a conflict, the value of the file read first kept: MAIR's retrieval score silently
    stood for MTEB's (or the reverse). MAIR files are now stored as benchmark mair and counted in a note."""
    _mair_and_mteb_files(tmp_path)
    s, rep = _store([tmp_path / "results" / "intfloat__e5-small-v2"])
    assert [f.status for f in rep.files] == ["ingested"] * 4, [f.reason for f in rep.files]
    assert s.counts()["conflicts"] == 0 and not rep.conflicts
    benches = dict(s.con.execute("SELECT name || ':' || benchmark, benchmark FROM datasets WHERE is_primary").fetchall())
    assert sorted(benches) == ["ACORDAR:mair", "SCIDOCS:mair", "SCIDOCS:mteb", "SciFact:mair"]
    row = load_matrix(s, MatrixQuery(normalise="none")).loc["intfloat/e5-small-v2"]
    assert row["mteb/SCIDOCS"] == pytest.approx(0.177) and row["mair/SCIDOCS"] == pytest.approx(0.176)
    assert row["SciFact"] == pytest.approx(0.702)  # a name only MAIR has here keeps its plain column name
    # one note line for all MAIR files, with their count
    mair_lines = [line for line in rep.note_lines() if "MAIR" in line]
    assert mair_lines == ["MAIR result: stored under benchmark mair, apart from MTEB's tasks of the same name (other "
                          "queries and instructions) (3 files, e.g. " + mair_lines[0].split("e.g. ", 1)[1]]
    meta = s.con.execute("SELECT metadata FROM datasets WHERE benchmark = 'mair' AND name = 'SciFact' "
                         "AND is_primary").fetchone()[0]
    assert '"mair_domain": "Academic"' in meta and '"suite": "MAIR"' in meta
    # Without the MAIR marks (MTEB's own files), nothing moves: all of the earlier fixtures stay mteb.
    s2, rep2 = _store([FIX])
    assert {b for (b,) in s2.con.execute("SELECT DISTINCT benchmark FROM datasets").fetchall()} == {"mteb"}
    assert not any("MAIR" in line for line in rep2.note_lines())


def test_one_revision_folder_with_mteb_and_mair_files_of_one_task(tmp_path):
    """intfloat/e5-base-v2's revision folder held MTEB's ArguAna.json, then MAIR's under the same name: read in
    either order, the two scores are two cells, never a conflict."""
    _mair_and_mteb_files(tmp_path)
    mteb_run, mair_run = tmp_path / "at_4cfe4aaa", tmp_path / "at_30e5403f"
    for order in ([mteb_run, mair_run], [mair_run, mteb_run]):
        s, rep = _store(order)
        assert [f.status for f in rep.files] == ["ingested"] * 2 and not rep.conflicts
        assert s.counts()["conflicts"] == 0
        row = load_matrix(s, MatrixQuery(normalise="none")).loc["intfloat/e5-base-v2"]
        assert row["mteb/ArguAna"] == pytest.approx(0.446) and row["mair/ArguAna"] == pytest.approx(0.311)


def _rteb_file(task, value, revision="989310c1", subset="default"):
    """RTEB's converter's layout (embeddings-benchmark/results, ``results/BAAI__bge-small-en-v1.5/5c38ec7c.../
    AILACasedocs.json`` at commit 1c89d6c1): mteb_version 1.0.0, ``"evaluation_time": 0``, the first 8 digits of
    the MD5 of RTEB's dataset name as dataset revision, ndcg/map/recall/precision at 1 ... 100. Synthetic numbers."""
    return {"dataset_revision": revision, "task_name": task, "evaluation_time": 0, "kg_co2_emissions": 0,
            "mteb_version": "1.0.0",
            "scores": {"test": [{"hf_subset": subset, "languages": ["en"], "main_score": value, "ndcg_at_1": 0.24,
                                 "ndcg_at_10": value, "ndcg_at_50": value + 0.1, "map_at_10": value / 2}]}}


def test_rteb_files_converted_into_mteb_layout_are_stored_apart(tmp_path):
    """bge-small-en-v1.5's AILACasedocs.json held MTEB's result (mteb 1.18.0, 0.23501) at one commit and RTEB's,
    converted from RTEB's own evaluator (0.22311), at another, in the same revision folder: one cell with a
    conflict, the file read first standing for the other. RTEB's files are now benchmark rteb, counted in a note."""
    import json

    rel = Path("results") / "BAAI__bge-small-en-v1.5" / "5c38ec7c405ec4b44b94cc5a9bb96e735b38267a"
    mteb_run, rteb_run = tmp_path / "at_8b10313a" / rel, tmp_path / "at_1c89d6c1" / rel
    mteb_run.mkdir(parents=True)
    rteb_run.mkdir(parents=True)
    (mteb_run / "AILACasedocs.json").write_text(json.dumps(
        {"dataset_revision": "4106e6bcc72e0698d714ea8b101355e3e238431a", "task_name": "AILACasedocs",
         "mteb_version": "1.18.0", "evaluation_time": 1.264, "kg_co2_emissions": 4.96e-05,
         "scores": {"test": [{"ndcg_at_1": 0.24, "ndcg_at_10": 0.23501, "main_score": 0.23501,
                              "hf_subset": "default", "languages": ["eng-Latn"]}]}}, indent=2))
    (rteb_run / "AILACasedocs.json").write_text(json.dumps(_rteb_file("AILACasedocs", 0.22311), indent=4))
    # a closed dataset only RTEB has, from the converter's older run (subset named "test")
    (rteb_run / "ClosedDataset 1 (Code)Retrieval.json").write_text(json.dumps(
        _rteb_file("ClosedDataset 1 (Code)Retrieval", 0.75347, revision="1ff7183e", subset="test"), indent=4))
    for order in ([mteb_run.parents[2], rteb_run.parents[2]], [rteb_run.parents[2], mteb_run.parents[2]]):
        s, rep = _store(order)
        assert [f.status for f in rep.files] == ["ingested"] * 3, [f.reason for f in rep.files]
        assert s.counts()["conflicts"] == 0 and not rep.conflicts
        benches = sorted(s.con.execute("SELECT name || ':' || benchmark FROM datasets WHERE is_primary").fetchall())
        assert benches == [("AILACasedocs:mteb",), ("AILACasedocs:rteb",), ("ClosedDataset 1 (Code)Retrieval:rteb",)]
        row = load_matrix(s, MatrixQuery(normalise="none")).loc["BAAI/bge-small-en-v1.5"]
        assert row["mteb/AILACasedocs"] == pytest.approx(0.23501) and row["rteb/AILACasedocs"] == pytest.approx(0.22311)
        assert row["ClosedDataset 1 (Code)Retrieval"] == pytest.approx(0.75347)
        rteb_lines = [line for line in rep.note_lines() if "RTEB" in line]
        assert len(rteb_lines) == 1 and "(2 files, e.g. " in rteb_lines[0], rep.note_lines()
        meta = s.con.execute("SELECT metadata FROM datasets WHERE benchmark = 'rteb' AND name = 'AILACasedocs' "
                             "AND is_primary").fetchone()[0]
        assert '"suite": "RTEB"' in meta


def test_rteb_marks_are_all_needed():
    """Only the converter's marks together make a file RTEB's: MTEB's own files (40-digit dataset revisions,
    measured evaluation times, mteb 1.0.0 in the legacy layout) stay mteb, as do the bundled fixtures."""
    from harness_ext.adapters.mteb import is_rteb

    assert is_rteb(_rteb_file("AILACasedocs", 0.22311))
    for change in ({"mteb_version": "1.18.0"}, {"evaluation_time": 1.26}, {"evaluation_time": False},
                   {"dataset_revision": "4106e6bcc72e0698d714ea8b101355e3e238431a"}, {"dataset_revision": "989310C1"}):
        assert not is_rteb({**_rteb_file("AILACasedocs", 0.22311), **change}), change
    legacy = {"mteb_version": "1.0.0", "mteb_dataset_name": "SciFact", "dataset_revision": "989310c1",
              "evaluation_time": 0, "test": {"ndcg_at_10": 0.6}}
    assert not is_rteb(legacy)
    s, rep = _store([FIX])
    assert {b for (b,) in s.con.execute("SELECT DISTINCT benchmark FROM datasets").fetchall()} == {"mteb"}
    assert not any("RTEB" in line for line in rep.note_lines())


API = Path(__file__).parent / "fixtures" / "mteb_api_revisions"


def test_an_api_models_revision_folders_1_and_2_do_not_name_the_model():
    """embeddings-benchmark/results keeps an API model's results in revision folders ``1`` and ``2``: they were
    stored under models named ``1`` and ``2``. The model_meta.json beside them names the model, as mteb's own
    result cache reads it, and the file is noted."""
    s, rep = _store([API])
    df = load_matrix(s, MatrixQuery(normalise="none"))
    assert list(df.index) == ["openai/text-embedding-3-large"]
    assert df.loc["openai/text-embedding-3-large", "STS13"] == pytest.approx(0.8609681753)  # legacy cos_sim.spearman
    assert df.loc["openai/text-embedding-3-large", "JSTS"] == pytest.approx(0.837617)       # validation main_score
    ingested = rep.by_status("ingested")
    assert len(ingested) == 2 and all(any("model_meta.json" in n for n in f.notes) for f in ingested)
    got = dict(zip(*(lambda m: (m.key, m.value))(s.model_metadata(["openai/text-embedding-3-large"]))))
    assert got["revision"] in ("1", "2") and got["name"] == "openai/text-embedding-3-large"


def test_a_model_meta_json_that_names_the_folders_model_adds_no_note():
    s, rep = _store([GRIT])
    assert not any(n for f in rep.by_status("ingested") for n in f.notes if "model_meta.json" in n)
    assert "GritLM/GritLM-7B" in load_matrix(s, MatrixQuery(normalise="none")).index


def _experiment_copy(tmp_path, src_dir, files, experiment):
    """The real task files ``files`` of ``src_dir`` laid out as mteb 2.x writes a revision's default run and one
    experiment run (``<model>/<revision>/experiments/<experiment>/``, mteb ``cache/result_cache.py``). The
    experiment's copies hold the same values, re-indented: ingest reads a byte-identical file once, and only the
    layout is tested here."""
    import json
    import shutil

    rev = tmp_path / src_dir.parent.name / src_dir.name
    exp = rev / "experiments" / experiment
    for target in (rev, exp):
        target.mkdir(parents=True)
    for f in files:
        shutil.copy(src_dir / f, rev / f)
        (exp / f).write_text(json.dumps(json.loads((src_dir / f).read_text()), indent=1))
    return tmp_path


def test_an_experiment_run_is_its_own_model_not_the_default_runs_cell(tmp_path):
    """mteb 2.x writes a model run with non-default settings to <revision>/experiments/<name>/: it was read as a
    model named after the experiment folder, revision None (or, beside a model_meta.json, as the model itself, one
    cell with its default run: a conflict whose value was the file read first)."""
    e5 = FIX / "current" / "intfloat__multilingual-e5-small" / "c007d7ef6fd86656326059b28395a7a03a7c5846"
    s, rep = _store([_experiment_copy(tmp_path, e5, ["JSTS.json"], "embed_dim_256")])
    df = load_matrix(s, MatrixQuery(normalise="none"))
    assert sorted(df.index) == ["intfloat/multilingual-e5-small", "intfloat/multilingual-e5-small (embed_dim_256)"]
    assert df.loc["intfloat/multilingual-e5-small (embed_dim_256)", "JSTS"] == pytest.approx(0.789213)  # the file's main_score
    assert s.counts()["conflicts"] == 0
    meta = s.model_metadata(["intfloat/multilingual-e5-small (embed_dim_256)"])
    got = dict(zip(meta.key, meta.value))
    assert got["experiment"] == "embed_dim_256" and got["experiment_of"] == "intfloat/multilingual-e5-small"
    assert got["revision"] == "c007d7ef6fd86656326059b28395a7a03a7c5846"
    assert sum("mteb experiment run" in line for line in rep.note_lines()) == 1


def test_an_experiment_run_beside_its_model_meta_json(tmp_path):
    s, rep = _store([_experiment_copy(tmp_path, GRIT, ["Banking77Classification.json", "model_meta.json"],
                                      "prompts_custom")])
    df = load_matrix(s, MatrixQuery(normalise="none"))
    assert sorted(df.index) == ["GritLM/GritLM-7B", "GritLM/GritLM-7B (prompts_custom)"]
    assert df.loc["GritLM/GritLM-7B (prompts_custom)", "Banking77Classification"] == pytest.approx(0.793603896103896)
    assert s.counts()["conflicts"] == 0
    # model_meta.json names the folders' model: no note that it names another
    assert not any(n for f in rep.by_status("ingested") for n in f.notes if "model_meta.json beside" in n)


def test_run_settings_jsonl_is_skipped_without_a_warning(tmp_path):
    """mteb 2.x writes run_settings.jsonl beside a revision's task files; it was reported as "not a recognised result
    file" once per model folder. No published file was found: this line has the keys mteb's
    ``ResultCache.save_to_cache`` writes (task, splits, version, encode_kwargs, subsets), with made-up versions."""
    rev = tmp_path / "intfloat__multilingual-e5-small" / "c007d7ef6fd86656326059b28395a7a03a7c5846"
    rev.mkdir(parents=True)
    (rev / "run_settings.jsonl").write_text(
        '{"task": "JSTS", "splits": ["validation"], "version": {"mteb": "2.2.0", "torch": null}, '
        '"encode_kwargs": {"batch_size": 32}, "subsets": ["default"]}\n')
    s, rep = _store([tmp_path])
    (f,) = rep.by_status("skipped")
    assert f.quiet and "mteb run settings" in f.reason
    assert s.con.execute("SELECT count(*) FROM datasets").fetchone()[0] == 0


def test_a_users_folder_named_experiments_is_not_an_experiment_run(tmp_path):
    """Only a folder ``experiments`` inside a revision folder is mteb's: legacy model folders kept under a user's
    own ``experiments`` folder keep their model names."""
    import shutil

    shutil.copytree(FIX / "legacy" / "all-MiniLM-L6-v2", tmp_path / "runs" / "experiments" / "all-MiniLM-L6-v2")
    s, rep = _store([tmp_path])
    assert list(load_matrix(s, MatrixQuery(normalise="none")).index) == ["all-MiniLM-L6-v2"]
    assert not any("mteb experiment run" in line for line in rep.note_lines())


def _experiments_only(tmp_path, src_dir, files, experiments):
    """The real task files ``files`` of ``src_dir`` laid out as experiment runs only
    (``<model>/<revision>/experiments/<experiment>/``), no default run beside them; each experiment's copies hold the
    same values, indented by its own width (ingest reads a byte-identical file once)."""
    import json

    for width, experiment in enumerate(experiments, 1):
        exp = tmp_path / src_dir.parent.name / src_dir.name / "experiments" / experiment
        exp.mkdir(parents=True)
        for f in files:
            (exp / f).write_text(json.dumps(json.loads((src_dir / f).read_text()), indent=width))
    return tmp_path


E5 = FIX / "current" / "intfloat__multilingual-e5-small" / "c007d7ef6fd86656326059b28395a7a03a7c5846"


def test_an_experiment_only_model_is_a_variant_of_its_model(tmp_path):
    """A model the store holds at one experiment only carries variant_of (the plain model), as a precision does,
    and is shown by the plain name; it had no link to its model and was shown as 'org/model (name)' only."""
    s, _ = _store([_experiments_only(tmp_path, E5, ["JSTS.json"], ["embed_dim_256"])])
    df = load_matrix(s, MatrixQuery(normalise="none"))
    assert list(df.index) == ["intfloat/multilingual-e5-small"]
    assert df.iloc[0]["JSTS"] == pytest.approx(0.789213)
    meta = s.model_metadata(["intfloat/multilingual-e5-small (embed_dim_256)"])
    got = dict(zip(meta.key, meta.value))
    assert got["variant_of"] == "intfloat/multilingual-e5-small" and got["experiment_of"] == got["variant_of"]
    assert got["non_default_variant"] is True


def test_an_experiment_beside_the_default_run_or_another_experiment_keeps_its_name(tmp_path):
    """The link makes no experiment the default run's cell: beside the default run (stored under the plain name) the
    experiment is its own row, and two experiments of one model are two rows, as two precisions are."""
    s, _ = _store([_experiment_copy(tmp_path / "a", E5, ["JSTS.json"], "embed_dim_256")])
    df = load_matrix(s, MatrixQuery(normalise="none"))
    assert sorted(df.index) == ["intfloat/multilingual-e5-small", "intfloat/multilingual-e5-small (embed_dim_256)"]
    assert s.counts()["conflicts"] == 0
    s, rep = _store([_experiments_only(tmp_path / "b", E5, ["JSTS.json"], ["embed_dim_256", "embed_dim_128"])])
    df = load_matrix(s, MatrixQuery(normalise="none"))
    assert sorted(df.index) == ["intfloat/multilingual-e5-small (embed_dim_128)",
                                "intfloat/multilingual-e5-small (embed_dim_256)"]
    # experiments are not precisions: the note on models at several precisions does not count them
    assert rep.variants == {} and not any("precision" in line for line in rep.note_lines())
    assert sum("mteb experiment run" in line for line in rep.note_lines()) == 1


def test_the_split_and_subsets_read_are_said_when_the_file_offers_a_choice():
    """A file with several splits or subsets: ingest says which were read and which option chooses others (the
    choice was recorded only in the dataset's metadata); nothing is said when the options chose."""
    path = FIX / "current" / "all-MiniLM-L6-v2" / "no_revision_available" / "MassiveIntentClassification.json"
    _, rep = _store([path])
    (f,) = rep.by_status("ingested")
    assert f.notes == [
        "several splits (test, validation): test read, the first of test, dev, validation the file has "
        "(--mteb-split chooses another)",
        "1 of 4 subsets read (en): the English one, as the MTEB(eng) leaderboard does (--mteb-languages chooses others)"]
    _, rep = _store([path], mteb_split="test", mteb_languages=["da"])
    assert rep.by_status("ingested")[0].notes == []
    bucc = [f for f in _store([FIX / "current"])[1].by_status("ingested") if f.path.endswith("BUCC.v2.json")]
    assert bucc and all("4 subsets and none the default or English alone: their mean read" in " ".join(f.notes)
                        for f in bucc)
