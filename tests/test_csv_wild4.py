"""Leaderboards from the wild, read as a new user would: ScandEval's Scandinavian NLU board (a parameter count that
is ``unknown`` for closed models), MathVista's README table (a human reference row whose star is escaped for
Markdown) and a TSB-AD results table (one row per dataset, one column per detector: the models are the columns).

Real slices in fixtures/csv_wild4 (sources, commits and licences in its PROVENANCE.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_ext.adapters.csv_reference import reference_kind
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

FIX = Path(__file__).parent / "fixtures" / "csv_wild4"
SCANDEVAL = FIX / "scandeval_mainland_scandinavian_nlu_slice.csv"
MATHVISTA = FIX / "mathvista_testmini_slice.md"
TSBAD = FIX / "tsbad_uni_vuspr_slice.csv"

BOTH = pytest.mark.parametrize("read_path", [0, 1 << 40], ids=["columnar", "records"], indirect=True)


@pytest.fixture
def read_path(monkeypatch, request):
    import harness_ext.adapters.csv_table as csv_table

    monkeypatch.setattr(csv_table, "COLUMNAR_MIN_BYTES", request.param)


def _ingest(store, path):
    rep = ingest_paths(store, [path], show_progress=False)
    return rep.files[0]


@BOTH
def test_unknown_parameter_count_is_model_metadata_not_a_refusal(read_path):
    # ScandEval writes num_model_parameters 'unknown' for the closed models; the file was refused as a whole.
    with Store.open(":memory:") as s:
        f = _ingest(s, SCANDEVAL)
        assert f.status == "ingested", f.reason
        models = set(s.con.execute("SELECT name FROM models").fetchdf()["name"])
        datasets = set(s.con.execute("SELECT name FROM datasets").fetchdf()["name"])
    assert len(models) == 8 and "gpt-4-0613 (few-shot, val)" in models
    assert not datasets & {"num_model_parameters", "vocabulary_size", "max_sequence_length", "speed", "rank"}
    assert {"dansk", "norquad", "scala_sv", "score"} <= datasets
    assert any("num_model_parameters" in n and "the name describes the model" in n for n in f.notes)


def test_a_score_column_with_a_text_cell_is_still_refused(tmp_path):
    # Only a column whose name describes the model takes a stray text cell as metadata; a score column does not.
    rows = SCANDEVAL.read_text().splitlines()
    p = tmp_path / "board.csv"
    p.write_text("\n".join([rows[0], *[r.replace(",48.29,", ",unknown,") for r in rows[1:]]]) + "\n")
    with Store.open(":memory:") as s:
        f = _ingest(s, p)
    assert f.status != "ingested"
    assert "'angry_tweets' score 'unknown' is not a number" in f.reason


def test_escaped_star_human_row_is_a_reference_not_a_model():
    with Store.open(":memory:") as s:
        f = _ingest(s, MATHVISTA)
        assert f.status == "ingested", f.reason
        models = set(s.con.execute("SELECT name FROM models").fetchdf()["name"])
        ds = s.con.execute("SELECT name, random_baseline, metadata FROM datasets").fetchdf().set_index("name")
    assert len(models) == 6 and not any("Human" in m or "Random" in m for m in models)
    assert json.loads(ds.loc["FQA", "metadata"])["human_score"] == 59.7
    assert ds.loc["FQA", "random_baseline"] == pytest.approx(15.5)  # in the column's units, as declared chance levels are
    assert any("Human Performance" in n for n in f.notes)


@pytest.mark.parametrize("name, kind", [("Human Performance\\*", "human"), ("**Human Performance\\***", "human"),
                                        ("Random\\_Chance", "chance"), ("Llama\\-Human", None)])
def test_reference_kind_ignores_a_markdown_escape(name, kind):
    assert reference_kind(name) == kind


def test_table_with_one_row_per_dataset_names_the_option_that_reads_it():
    # The models are the columns (one per detector); renaming 'file' to 'model', as the refusal once said, stored
    # the series as models and their lengths as scores. It is never turned round unasked.
    with Store.open(":memory:") as s:
        f = _ingest(s, TSBAD)
    assert f.status == "skipped"
    assert "its rows look like datasets (first column 'file': 001_NAB_id_1_Facility_tr_1007_1st_2014.csv" in f.reason
    assert "--models-as-columns" in f.reason and "'models: columns'" in f.reason


def _ingest_turned(store, path, **options):
    return ingest_paths(store, [path], show_progress=False, options=options).files[0]


def _check_turned(s, f):
    assert f.status == "ingested", f.reason
    models = set(s.con.execute("SELECT name FROM models").fetchdf()["name"])
    ds = s.con.execute("SELECT name, metadata FROM datasets").fetchdf().set_index("name")
    assert len(models) == 32 and {"Sub-IForest", "MOMENT (FT)", "Lag-Llama"} <= models
    assert not models & {"ts_len", "anomaly_len", "num_anomaly", "avg_anomaly_len", "anomaly_ratio",
                         "point_anomaly", "seq_anomaly"}
    assert len(ds) == 3
    md = json.loads(ds.loc["001_NAB_id_1_Facility_tr_1007_1st_2014.csv", "metadata"])
    assert md["ts_len"] == 4031 and md["anomaly_ratio"] == pytest.approx(0.08509054825105433)
    assert md["point_anomaly"] == 0 and md["seq_anomaly"] == 1
    v = s.con.execute("SELECT value FROM results r JOIN models m ON r.model_id = m.model_id "
                      "WHERE m.name = 'MOMENT (FT)' ORDER BY value").fetchdf()["value"]
    assert list(v) == pytest.approx([0.1267562805043206, 0.3406602810304633, 0.5736119643477883])
    note = next(n for n in f.notes if "read with the models as the columns" in n)
    assert "32 models, 3 datasets" in note and "7 columns describing the datasets" in note
    assert "point_anomaly, seq_anomaly (whole numbers beside fractional scores)" in note


def test_models_as_columns_from_the_ingest_option():
    with Store.open(":memory:") as s:
        _check_turned(s, _ingest_turned(s, TSBAD, models_as_columns=True))


def test_models_as_columns_on_a_markdown_page_is_said_not_ignored():
    """The option turns CSV/TSV tables only: a Markdown board is read with a row per model, and the note says so."""
    with Store.open(":memory:") as s:
        f = _ingest_turned(s, MATHVISTA, models_as_columns=True)
        assert f.status == "ingested"
        assert any("applies to CSV and TSV tables only" in n for n in f.notes)


def test_models_as_columns_from_the_sidecar_and_kind_model(tmp_path):
    p = tmp_path / TSBAD.name
    p.write_bytes(TSBAD.read_bytes())
    side = tmp_path / (TSBAD.name + ".meta.yaml")
    side.write_text("models: columns\nbenchmark: tsb_ad_uni_vus_pr\n")
    with Store.open(":memory:") as s:
        _check_turned(s, _ingest(s, p))
        assert set(s.con.execute("SELECT DISTINCT benchmark FROM datasets").fetchdf()["benchmark"]) == {"tsb_ad_uni_vus_pr"}
    # a column the rules take for a descriptor, declared a model
    side.write_text("models: columns\ncolumns:\n  point_anomaly: {kind: model}\n")
    with Store.open(":memory:") as s:
        f = _ingest(s, p)
        assert f.status == "ingested", f.reason
        assert "point_anomaly" in set(s.con.execute("SELECT name FROM models").fetchdf()["name"])


def test_models_as_columns_refuses_a_table_with_a_model_column(tmp_path):
    p = tmp_path / "board.csv"
    p.write_text(SCANDEVAL.read_text())
    with Store.open(":memory:") as s:
        f = _ingest_turned(s, p, models_as_columns=True)
    assert f.status != "ingested"
    assert "its column 'model_id' names models" in f.reason


def test_kind_model_in_a_table_with_a_row_per_model_is_an_error(tmp_path):
    p = tmp_path / "board.csv"
    p.write_text(SCANDEVAL.read_text())
    (tmp_path / "board.csv.meta.yaml").write_text("columns:\n  dansk: {kind: model}\n")
    with Store.open(":memory:") as s:
        f = _ingest(s, p)
    assert f.status != "ingested" and "kind: model (dansk) is for a table read with its models" in f.reason


def test_markdown_backslash_escapes_are_read_as_the_page_shows_them():
    # CommonMark shows '\*' as '*': the name kept the backslash ('Human Performance\*') where it was stored or noted.
    with Store.open(":memory:") as s:
        f = _ingest(s, MATHVISTA)
    assert any("('Human Performance*')" in n for n in f.notes)
    assert not any("\\" in n for n in f.notes)
    with Store.open(":memory:") as s:
        f = _ingest_turned(s, MATHVISTA, keep_reference_rows=True)
        assert f.status == "ingested", f.reason
        models = set(s.con.execute("SELECT name FROM models").fetchdf()["name"])
    human = [m for m in models if m.startswith("Human Performance")]
    assert human and not any("\\" in m for m in models)


#: The LAVIS Img2LLM-VQA table's model cells (tests/fixtures/html/lavis_img2llm_vqa_readme.md), as a pipe table.
LAVIS_PIPE = ("| Model | VQAv2 val | OK-VQA test |\n|---|---|---|\n| Frozen-7B<sub>base</sub> | 29.5 | 5.9 |\n"
              "| Img2LLM-VQA-OPT<sub>13B</sub> | 57.1 | 39.9<sub>*</sub> |\n"
              "| Img2LLM-VQA-OPT<sub>175B</sub> | 60.6 | 45.6 |\n")


def test_a_subscript_in_a_markdown_model_name_is_joined_with_an_underscore(tmp_path):
    # 'OPT<sub>13B</sub>' ran into 'OPT13B'; a subscript marker after a score is read as before.
    p = tmp_path / "board.md"
    p.write_text(LAVIS_PIPE)
    with Store.open(":memory:") as s:
        f = _ingest(s, p)
        assert f.status == "ingested", f.reason
        models = set(s.con.execute("SELECT name FROM models").fetchdf()["name"])
    assert models == {"Frozen-7B_base", "Img2LLM-VQA-OPT_13B", "Img2LLM-VQA-OPT_175B"}
    assert any(n.startswith("3 cells with a subscript after its text read with '_'") for n in f.notes)


def test_the_tally_counts_subscripts_from_the_rendering_without_running_the_rule_again(monkeypatch):
    """The tally ran the subscript rule on each cell after rendering it had: once per cell now, the same count."""
    import harness_ext.adapters.csv_markdown as md

    (table,) = md.markdown_tables(LAVIS_PIPE)
    calls = []
    real = md._subscripts
    monkeypatch.setattr(md, "_subscripts", lambda text: calls.append(text) or real(text))
    tally = md._Tally()
    rows = [tally.cells(table.header, table.render)] + [tally.cells(cells, table.render) for _, cells in table.rows]
    assert [r[0] for r in rows[1:]] == ["Frozen-7B_base", "Img2LLM-VQA-OPT_13B", "Img2LLM-VQA-OPT_175B"]
    assert rows[2][2] == "39.9*"  # a marker after a score: left as it was
    with_sub = [c for _, cells in table.rows for c in cells if "<sub" in c]
    assert len(calls) == len(with_sub) == 4  # was 8: the rendering's, then the tally's again
    assert tally.subscript == 3


def test_models_as_columns_sidecar_gives_each_dataset_its_chance_and_scale(tmp_path):
    """The ordinary sidecar's per-column keys apply to a turned table's datasets, named by their rows: a random
    detector's VUS-PR is about the series' anomaly ratio (Liu and Paparrizos 2024), which the sidecar declares."""
    p = tmp_path / TSBAD.name
    p.write_bytes(TSBAD.read_bytes())
    side = tmp_path / (TSBAD.name + ".meta.yaml")
    side.write_text("models: columns\ncolumns:\n"
                    "  001_NAB_id_1_Facility_tr_1007_1st_2014.csv: {chance: 0.0851, source: anomaly ratio, "
                    "scale: proportion}\n"
                    "  002_NAB_id_2_WebService_tr_1500_1st_4106.csv: {min: 0, max: 1, higher_is_better: true}\n")
    with Store.open(":memory:") as s:
        f = _ingest(s, p)
        _check_turned(s, f)
        ds = s.con.execute("SELECT name, random_baseline, baseline_source, scale, min_score, max_score, "
                           "higher_is_better FROM datasets").fetchdf().set_index("name")
    nab1 = ds.loc["001_NAB_id_1_Facility_tr_1007_1st_2014.csv"]
    assert nab1["random_baseline"] == pytest.approx(0.0851) and nab1["baseline_source"] == "anomaly ratio"
    assert nab1["scale"] == "proportion"
    nab2 = ds.loc["002_NAB_id_2_WebService_tr_1500_1st_4106.csv"]
    assert (nab2["min_score"], nab2["max_score"], bool(nab2["higher_is_better"])) == (0, 1, True)
    assert ds.loc["005_NAB_id_5_Traffic_tr_594_1st_1645.csv"]["random_baseline"] != pytest.approx(0.0851)
    assert any("column metadata for 2 datasets (rows of the table" in n for n in f.notes)


@pytest.mark.parametrize("entry, reason", [
    ("  001_NAB_typo.csv: {chance: 0.1}", "names neither a column nor a row (dataset)"),
    ("  001_NAB_id_1_Facility_tr_1007_1st_2014.csv: {kind: model}", "kind: model and kind: metadata are for columns"),
    ("  LOF: {chance: 0.1}", "a dataset's chance, scale or direction goes under its row's name"),
])
def test_models_as_columns_sidecar_entry_errors_name_the_fault(tmp_path, entry, reason):
    p = tmp_path / TSBAD.name
    p.write_bytes(TSBAD.read_bytes())
    (tmp_path / (TSBAD.name + ".meta.yaml")).write_text(f"models: columns\ncolumns:\n{entry}\n")
    with Store.open(":memory:") as s:
        f = _ingest(s, p)
        assert s.con.execute("SELECT count(*) FROM results").fetchone()[0] == 0
    assert f.status != "ingested" and reason in f.reason
