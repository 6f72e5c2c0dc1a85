"""Reference rows of a long CSV (``model,dataset,value``: ``random-baseline,EQ-Bench,0.0``, ``Human Expert (High),...``)
are not models, on the record path and on the columnar path alike.

Fixtures (tests/fixtures/csv_reference_rows/PROVENANCE.md): ``eqbench_240912_emotion_long.csv`` is the real EQ-Bench
slice from IBM/benchbench (its ``random-baseline,0.0`` row) written one row per cell; ``mmmu_val_long_composed.csv``
the composed MMMU validation table the wide tests read, one row per cell with ``benchmark``, ``metric`` and ``kind``
columns. No real long table with such rows was found (the shared data holds no long CSV at all).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import harness_ext.adapters.csv_table as csv_table
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.ingest_files import reading_options

FIX = Path(__file__).parent / "fixtures" / "csv_reference_rows"
EQ, MMMU = FIX / "eqbench_240912_emotion_long.csv", FIX / "mmmu_val_long_composed.csv"
PATHS = ["records", "columnar"]


def _ingest(tmp_path, path, reader, monkeypatch, name="s", **options):
    """``(models, datasets by name, notes)`` of one file read by ``reader`` (the columnar one is checked to run)."""
    import harness_ext.adapters.csv_columnar as csv_columnar

    ran = []
    real = csv_columnar._read_long_columnar
    monkeypatch.setattr(csv_columnar, "_read_long_columnar", lambda *a: ran.append(1) or real(*a))
    monkeypatch.setattr(csv_table, "COLUMNAR_MIN_BYTES", 1 if reader == "columnar" else 1 << 40)
    db = tmp_path / f"{name}-{reader}.duckdb"
    with Store.open(str(db)) as s:
        report = ingest_paths(s, [path], show_progress=False, options=reading_options(**options))
        models = set(s.con.execute("SELECT name FROM models").fetchdf()["name"])
        ds = s.con.execute("SELECT name, random_baseline, baseline_source, metadata, kind FROM datasets "
                           "ORDER BY name").fetchdf()
    assert [f.status for f in report.files] == ["ingested"], report.files[0].reason
    assert bool(ran) == (reader == "columnar")
    return models, ds.set_index("name"), [n for f in report.files for n in f.notes]


@pytest.mark.parametrize("reader", PATHS)
def test_random_baseline_row_is_the_chance_level_not_a_model(tmp_path, monkeypatch, reader):
    models, ds, notes = _ingest(tmp_path, EQ, reader, monkeypatch)
    assert "random-baseline" not in models and len(models) == 8
    assert ds.loc["EQ-Bench", "random_baseline"] == 0.0
    assert ds.loc["EQ-Bench", "baseline_source"] == "leaderboard row 'random-baseline'"
    assert json.loads(ds.loc["EQ-Bench", "metadata"])["reference_scores"] == {"random-baseline": 0.0}
    assert any(n.startswith("1 model name is a random or chance baseline ('random-baseline'): stored as the chance "
                            "level of 1 dataset (EQ-Bench), not as a model") for n in notes), notes


@pytest.mark.parametrize("reader", PATHS)
def test_mmmu_random_row_sets_chance_human_rows_are_metadata(tmp_path, monkeypatch, reader):
    from test_csv_reference_rows import check_mmmu

    models, ds, notes = _ingest(tmp_path, MMMU, reader, monkeypatch)
    check_mmmu(models, ds, notes, unit="model name")
    assert ds.loc["overall", "kind"] == "aggregate" and ds.loc["overall", "random_baseline"] == 22.0


def test_both_long_readers_store_the_same(tmp_path, monkeypatch):
    got = [_ingest(tmp_path, MMMU, reader, monkeypatch) for reader in PATHS]
    assert got[0][0] == got[1][0] and got[0][2] == got[1][2]
    assert got[0][1].to_dict() == got[1][1].to_dict()


@pytest.mark.parametrize("reader", PATHS)
def test_keep_reference_rows_stores_them_as_models(tmp_path, monkeypatch, reader):
    models, ds, notes = _ingest(tmp_path, MMMU, reader, monkeypatch, keep_reference_rows=True)
    assert len(models) == 9 and "Random Choice" in models
    assert ds["random_baseline"].isna().all()
    assert any(n.startswith("4 model names named as a reference rather than a model ('Human Expert (High)', "
                            "'Human Expert (Medium)', 'Frequent Choice', 'Random Choice') stored as models, as "
                            "--keep-reference-rows asks") for n in notes), notes


@pytest.mark.parametrize("reader", PATHS)
def test_a_declared_chance_wins_and_a_dataset_only_references_give_is_noted(tmp_path, monkeypatch, reader):
    """The table's ``random_baseline`` column is its declared chance; a reference row's cell on a dataset no model
    has is left out, noted; a reference row giving a dataset twice keeps its first value, noted."""
    d = tmp_path / "in"
    d.mkdir()
    lines = MMMU.read_text().splitlines()
    body = [ln + ("," + ("25" if ",science," in ln and ln.startswith("Model") else "")) for ln in lines[1:]]
    body += ["Random Choice,mmmu_val,music,acc,30.0,dataset,", "Random Choice,mmmu_val,science,acc,19.0,dataset,"]
    (d / "long.csv").write_text("\n".join([lines[0] + ",random_baseline", *body]) + "\n")
    shutil.copy(d / "long.csv", d / "long2.csv")
    models, ds, notes = _ingest(tmp_path, d / "long.csv", reader, monkeypatch)
    assert ds.loc["science", "random_baseline"] == 25.0 and ds.loc["science", "baseline_source"] == "csv column"
    assert ds.loc["business", "random_baseline"] == 25.0 and "music" not in ds.index
    text = "\n".join(notes)
    assert "the random_baseline column's chance kept on 1 dataset where the row differs: science (declared 25, row " \
           "'Random Choice' 18)" in text
    assert "reference rows' values on 1 dataset no model has left out: music" in text
    assert "1 dataset given twice with different values by a reference row ('Random Choice'): its first value " \
           "kept" in text


@pytest.mark.parametrize("reader", PATHS)
def test_a_long_table_of_only_reference_rows_stores_them(tmp_path, monkeypatch, reader):
    path = tmp_path / "refs.csv"
    path.write_text("model,dataset,value\nHuman,gsm8k,0.92\nrandom-baseline,mmlu,0.25\n")
    models, ds, notes = _ingest(tmp_path, path, reader, monkeypatch)
    assert models == {"Human", "random-baseline"}
    assert any("as the file has no other model name" in n for n in notes)


def test_a_reference_rows_bad_value_is_an_error_naming_the_row(tmp_path, monkeypatch):
    monkeypatch.setattr(csv_table, "COLUMNAR_MIN_BYTES", 1)
    path = tmp_path / "bad.csv"
    path.write_text("model,dataset,value\ngpt-4o,mmlu,0.8\nRandom,mmlu,n/a\n")
    with Store.open(str(tmp_path / "b.duckdb")) as s:
        report = ingest_paths(s, [path], show_progress=False)
        assert s.counts()["results"] == 0
    assert "row 3: value 'n/a' is not a number" in report.files[0].reason


# -- item-response tables ------------------------------------------------------------------------------------------
#: Composed (no real item table with such rows was found; the shared HELM Lite and Open LLM v2 tables have none): the
#: long layout's header, two models, a human annotator's and a random guesser's answers.
ITEMS = ("model,task,item,score\n" + "".join(f"{m},gsm8k,{i},{s}\n" for m, row in (
    ("gpt-4o", "1101"), ("llama-3-8b", "0100"), ("Human", "1111"), ("random", "0010")) for i, s in enumerate(row)))


def test_an_item_tables_reference_rows_are_left_out_and_noted(tmp_path):
    from harness_ext.store.item_tables import read_item_table

    path = tmp_path / "gsm8k.csv"
    path.write_text(ITEMS)
    table = read_item_table(path)
    assert set(table.frame["model"].astype(str)) == {"gpt-4o", "llama-3-8b"} and len(table.frame) == 8
    assert "2 model names are a reference rather than a model, left out with their item scores ('Human' (a human " \
           "or ceiling reference): 4 scores, mean 1; 'random' (a chance baseline): 4 scores, mean 0.25); " \
           "--keep-reference-rows stores them as models" in table.notes
    kept = read_item_table(path, keep_reference_rows=True)
    assert len(kept.frame) == 16 and kept.sha256 != table.sha256  # another reading of the same bytes
    assert any("stored as models, as --keep-reference-rows asks" in n for n in kept.notes)
    plain = tmp_path / "plain.csv"
    plain.write_text("".join(ITEMS.splitlines(keepends=True)[:9]))  # no reference row: the option changes nothing
    assert read_item_table(plain).sha256 == read_item_table(plain, keep_reference_rows=True).sha256


def test_ingest_keep_reference_rows_reaches_item_tables(tmp_path):
    from harness_ext.store.item_tables import item_rows

    path = tmp_path / "gsm8k.csv"
    path.write_text(ITEMS)
    for name, options in (("a", {}), ("b", {"keep_reference_rows": True})):
        with Store.open(str(tmp_path / f"{name}.duckdb")) as s:
            report = ingest_paths(s, [path], show_progress=False, options=reading_options(**options))
            assert [f.status for f in report.files] == ["ingested"]
            models = set(item_rows(s)["model"].astype(str))
        assert models == ({"gpt-4o", "llama-3-8b"} | ({"Human", "random"} if options else set()))
