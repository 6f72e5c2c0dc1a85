"""Leaderboards from the wild, fifth round, read as a new user would: ProteinGym's zero-shot summary (its overall
column is named after the metric it averages, ``Average_Spearman``), the MMMU leaderboard's data file (one array of
records wrapped in an object, each record's values grouped by split) and ParseBench's table (its systems named in a
``Provider`` column).

Real slices in fixtures/csv_wild5 (sources, commits and licences in its PROVENANCE.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

FIX = Path(__file__).parent / "fixtures" / "csv_wild5"
PROTEINGYM = FIX / "proteingym_zero_shot_spearman_slice.csv"
MMMU = FIX / "mmmu_leaderboard_data_slice.json"
PARSEBENCH = FIX / "parsebench_leaderboard_slice.csv"
MTEB_FR = FIX / "mteb_fr_classification_slice.jsonl"


def _ingest(store, path):
    rep = ingest_paths(store, [path], show_progress=False)
    return rep.files[0]


def _datasets(s) -> dict:
    df = s.con.execute("SELECT name, kind FROM datasets").fetchdf()
    return dict(zip(df["name"], df["kind"]))


def _models(s) -> set:
    return set(s.con.execute("SELECT name FROM models").fetchdf()["name"])


def _read(path):
    """``(file report, model names, {dataset: kind})`` of ``path`` ingested alone, refused with its reason."""
    with Store.open(":memory:") as s:
        f = _ingest(s, path)
        assert f.status == "ingested", f.reason
        return f, _models(s), _datasets(s)


def test_an_average_named_after_its_metric_is_an_aggregate():
    # "Average_Spearman" averages the five Function_* columns beside it; "Spearman" is the metric, not a benchmark
    # the file lacks, so it is not one of the 18 datasets a subset is chosen from.
    with Store.open(":memory:") as s:
        f = _ingest(s, PROTEINGYM)
        assert f.status == "ingested", f.reason
        kinds = _datasets(s)
    assert kinds["Average_Spearman"] == "aggregate"
    assert sum(k != "aggregate" for k in kinds.values()) == 17
    assert any("Average_Spearman" in n and "aggregate" in n for n in f.notes)
    assert "Bootstrap_standard_error_Spearman" not in kinds


def test_an_average_of_a_benchmark_the_file_lacks_stays_a_dataset(tmp_path):
    # The word after "average" still names a benchmark when it is none of the metric names (Nejumi's AVG_mtbench).
    p = tmp_path / "board.csv"
    p.write_text("model,AVG_mtbench,GLP_a,GLP_b,ALT_c\nm1,6.1,0.5,0.4,0.3\nm2,7.2,0.6,0.5,0.2\n")
    with Store.open(":memory:") as s:
        assert _ingest(s, p).status == "ingested"
        assert _datasets(s)["AVG_mtbench"] != "aggregate"


def test_a_wrapped_array_of_grouped_records_is_read_as_its_table():
    # Refused before: "not a recognised result file (no adapter claims it ...)".
    f, models, kinds = _read(MMMU)
    assert {"GPT-4o (0513)", "NVILA", "CogVLM", "Qwen-VL-MAX"} <= models
    # the human expert and the random baseline are references, not models
    assert not models & {"Human Expert (High)", "Random Choice"}
    assert {"validation.artDesign", "test.techEng", "pro.vision"} <= set(kinds)
    assert {k for k, v in kinds.items() if v == "aggregate"} == {"validation.overall", "test.overall", "pro.overall"}
    # the groups' text is metadata, never a score
    assert not set(kinds) & {"info.size", "info.date", "info.type", "info.link", "validation.source"}


def test_grouped_records_keep_their_values():
    from harness_ext.store.matrix import MatrixQuery, load_matrix

    with Store.open(":memory:") as s:
        _ingest(s, MMMU)
        m = load_matrix(s, MatrixQuery(normalise="none"), fingerprint=False)
    assert abs(m.loc["NVILA", "validation.business"] - 62.7) < 1e-9
    assert abs(m.loc["NVILA", "pro.original"] - 38.7) < 1e-9


def test_records_nested_deeper_or_beside_other_arrays_are_not_a_table(tmp_path):
    from harness_ext.adapters.csv_records import is_record_table
    from harness_ext.types import SourceFile

    cases = {
        # a group holding an object: one level of grouping only
        "deep.json": {"board": [{"info": {"name": "a", "meta": {"size": 1}}, "val": {"x": 1.0, "y": 2.0}}]},
        # two arrays of records: which one is the table is not said
        "two.json": {"rows": [{"name": "a", "x": 1.0}], "other": [{"name": "b", "x": 2.0}]},
        # a wrapper beside an object (HELM's scenario_state: adapter_spec beside request_states)
        "state.json": {"adapter_spec": {"model": "m"}, "request_states": [{"instance": {"id": "i"}, "x": 1.0}]},
    }
    for name, doc in cases.items():
        p = tmp_path / name
        p.write_text(json.dumps(doc))
        assert not is_record_table(SourceFile(p)), name


def test_a_provider_column_names_the_systems():
    # Refused before: "a table whose header names no model column ... rename the column that names the models".
    f, models, kinds = _read(PARSEBENCH)
    assert len(models) == 12 and {"LlamaParse Agentic Plus", "AWS Textract", "PyMuPDF4LLM"} <= models
    assert {"Tables", "Charts", "Content_Faithfulness", "Semantic_Formatting", "Visual_Grounding"} <= set(kinds)
    assert kinds["Overall"] == "aggregate"
    assert not set(kinds) & {"Cost_Per_Page", "Category", "HF_Model_ID"}
    assert any("'Provider' read as the models' names" in n for n in f.notes)


def test_a_model_column_wins_over_a_system_column(tmp_path):
    p = tmp_path / "board.csv"
    p.write_text("system,model,a,b,c\nrag-1,m1,0.5,0.4,0.3\nrag-2,m2,0.6,0.5,0.2\n")
    with Store.open(":memory:") as s:
        f = _ingest(s, p)
        assert f.status == "ingested", f.reason
        assert _models(s) == {"m1", "m2"}
    assert not any("read as the models' names" in n for n in f.notes)


@pytest.mark.parametrize("command", ["matrix", "stalk"])
def test_matrix_says_which_models_have_only_aggregates(tmp_path, capsys, command):
    # 82 of MMMU's 172 models report only validation.overall: `matrix` (and every command reading a matrix) left them
    # out without a word.
    import logging

    from harness_ext.cli import main

    db = str(tmp_path / "s.duckdb")
    with Store.open(db) as s:
        _ingest(s, MMMU)
    p = tmp_path / "only_overall.json"
    doc = json.loads(MMMU.read_text())
    doc["leaderboardData"].append({"info": {"name": "Only Overall"}, "validation": {"overall": "61.0"}})
    p.write_text(json.dumps(doc))
    with Store.open(db) as s:
        ingest_paths(s, [p], show_progress=False)
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logging.getLogger("harness_ext").addHandler(handler)
    try:
        argv = ["-o", str(tmp_path / "m.csv")] if command == "matrix" else ["--benchmark", "only_overall",
                                                                         "--out", str(tmp_path / "out")]
        assert main([command, "--db", db, *argv]) in (0, None)
    finally:
        logging.getLogger("harness_ext").removeHandler(handler)
    text = " ".join(r.getMessage() for r in records) + capsys.readouterr().err
    assert "1 model with only aggregate scores" in text and "Only Overall" in text


def test_a_row_index_is_model_metadata_not_a_score():
    """The MTEB leaderboard's JSON Lines records carry the row's ``index`` beside its ``Rank``: it was stored as a
    seventh dataset of the French classification board (57 x 7, not 57 x 6)."""
    rep, models, kinds = _read(MTEB_FR)
    assert rep.status == "ingested" and len(models) == 8
    assert sorted(k for k, v in kinds.items() if v == "dataset") == sorted([
        "AmazonReviewsClassification (fr)", "MasakhaNEWSClassification (fra)", "MassiveIntentClassification (fr)",
        "MassiveScenarioClassification (fr)", "MTOPDomainClassification (fr)", "MTOPIntentClassification (fr)"])
    assert "index" not in kinds and any("model metadata, not scores: index, Rank" in n for n in rep.notes)
    from harness_ext.adapters.csv_rules import META_NAME

    assert not META_NAME.search("Jaccard index") and not META_NAME.search("index_score")
