"""Reference rows of a leaderboard CSV ("random-baseline", "Random Choice", "Human Expert (High)") are not models.

Fixtures (tests/fixtures/csv_reference_rows/PROVENANCE.md): slices of EQ-Bench (its ``random-baseline,0.0`` row),
AlpacaEval 2.0 LC and the Open LLM Leaderboard v2 (models whose names contain "Human") from IBM/benchbench; a composed
table with the MMMU leaderboard's validation columns and reference rows (its most frequent answer before its random
one, two human experts).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness_ext.adapters.csv_reference import reference_kind
from harness_ext.cli import main
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.ingest_files import reading_options

FIX = Path(__file__).parent / "fixtures" / "csv_reference_rows"
EQ, MMMU = FIX / "eqbench_240912_emotion.csv", FIX / "mmmu_val_composed.csv"


def _ingest(tmp_path, path, name="s", **options):
    db = tmp_path / f"{name}.duckdb"
    with Store.open(str(db)) as s:
        report = ingest_paths(s, [path], show_progress=False, options=reading_options(**options))
        models = set(s.con.execute("SELECT name FROM models").fetchdf()["name"])
        ds = s.con.execute("SELECT name, random_baseline, baseline_source, metadata FROM datasets").fetchdf()
    assert [f.status for f in report.files] == ["ingested"]
    return models, ds.set_index("name"), [n for f in report.files for n in f.notes]


@pytest.mark.parametrize("name, kind", [
    ("random-baseline", "chance"), ("Random", "chance"), ("Random chance", "chance"), ("Random guess", "chance"),
    ("Random Choice", "chance"), ("Frequent Choice", "chance"), ("Majority class", "chance"),
    ("majority baseline", "chance"), ("chance", "chance"), ("Random Agent", "chance"),
    ("Human", "human"), ("Human expert", "human"), ("Human (avg)", "human"), ("Human Expert (High)", "human"),
    ("human (worst)", "human"), ("Oracle", "human"), ("Upper bound", "human"), ("Human performance", "human"),
    ("vicgalle/Humanish-RP-Llama-3.1-8B", None), ("Alpaca_Farm_PPO_Human_7B", None), ("RandomForest", None),
    ("random-forest", None), ("Oracle-8B", None), ("gpt-4o", None)])
def test_reference_kind_reads_the_whole_name(name, kind):
    assert reference_kind(name) == kind


def test_eqbench_random_baseline_is_the_chance_level_not_a_model(tmp_path):
    models, ds, notes = _ingest(tmp_path, EQ)
    assert "random-baseline" not in models and len(models) == 8
    assert ds.loc["EQ-Bench", "random_baseline"] == 0.0
    assert ds.loc["EQ-Bench", "baseline_source"] == "leaderboard row 'random-baseline'"
    assert json.loads(ds.loc["EQ-Bench", "metadata"])["reference_scores"] == {"random-baseline": 0.0}
    assert any(n.startswith("1 row is a random or chance baseline ('random-baseline'): stored as the chance level "
                            "of 1 dataset (EQ-Bench), not as a model") for n in notes)


def test_keep_reference_rows_stores_them_as_models_and_says_so(tmp_path, capsys):
    models, ds, notes = _ingest(tmp_path, EQ, keep_reference_rows=True)
    assert "random-baseline" in models and len(models) == 9
    assert ds["random_baseline"].isna().all()
    assert any("stored as model, as --keep-reference-rows asks" in n for n in notes)
    db = tmp_path / "cli.duckdb"
    assert main(["ingest", str(EQ), "--db", str(db), "--keep-reference-rows", "-q"]) == 0
    assert main(["info", "--db", str(db)]) == 0
    assert "9 models" in capsys.readouterr().out


def check_mmmu(models, ds, notes, unit: str = "row") -> None:
    """What the MMMU table's reference rows give, wide or long (tests/test_reference_rows_long.py): ``unit`` is what
    the notes count."""
    assert models == {f"Model {c}" for c in "ABCDE"}
    # the random row, not the most frequent answer listed before it, is the chance level
    assert ds.loc["artDesign", "random_baseline"] == 29.0
    assert ds.loc["business", "baseline_source"] == "leaderboard row 'Random Choice'"
    meta = json.loads(ds.loc["science", "metadata"])
    assert meta["human_score"] == 90.0
    assert meta["reference_scores"] == {"Human Expert (High)": 90.0, "Human Expert (Medium)": 84.0,
                                        "Frequent Choice": 27.0, "Random Choice": 18.0}
    text = "\n".join(notes)
    assert f"2 {unit}s are a random or chance baseline ('Frequent Choice', 'Random Choice'): stored as the chance " \
           "level of 7 datasets" in text
    assert f"2 {unit}s are a human or ceiling reference ('Human Expert (High)', 'Human Expert (Medium)'): kept as " \
           "dataset metadata (human_score, reference_scores) of 7 datasets, not as a model" in text


def test_mmmu_random_row_sets_chance_human_rows_are_metadata(tmp_path):
    check_mmmu(*_ingest(tmp_path, MMMU))


def test_the_chance_level_normalises_the_matrix(tmp_path):
    from harness_ext.store.matrix import MatrixQuery, load_matrix

    _ingest(tmp_path, MMMU, name="m")
    with Store.open(str(tmp_path / "m.duckdb")) as s:
        m = load_matrix(s, MatrixQuery())
    assert not m.attrs.get("no_chance")
    # Model A on artDesign: (70 - 29) / (100 - 29)
    assert m.loc["Model A", "artDesign"] == pytest.approx(41 / 71, abs=1e-4)


def test_a_declared_chance_wins_and_the_disagreement_is_noted(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    shutil.copy(MMMU, d / MMMU.name)
    (d / (MMMU.name + ".meta.yaml")).write_text("columns:\n  science: {chance: 25}\n")
    models, ds, notes = _ingest(tmp_path, d / MMMU.name)
    assert ds.loc["science", "random_baseline"] == 25.0 and ds.loc["business", "random_baseline"] == 25.0
    assert ds.loc["business", "baseline_source"] == "leaderboard row 'Random Choice'"
    assert any("the sidecar's declared chance kept on 1 column where the row differs: science (declared 25, row "
               "'Random Choice' 18)" in n for n in notes)


@pytest.mark.parametrize("name", ["alphacaeval_v2lc_240829_holistic.csv", "hf_open_llm_v2_240829_holistic.csv"])
def test_names_containing_human_stay_models(tmp_path, name):
    models, ds, notes = _ingest(tmp_path, FIX / name)
    assert len(models) == 6 and any("Human" in m for m in models)
    assert not any("reference" in n for n in notes)


def test_the_columnar_reader_does_the_same(tmp_path, monkeypatch):
    import harness_ext.adapters.csv_table as ct

    monkeypatch.setattr(ct, "COLUMNAR_MIN_BYTES", 1)
    models, ds, notes = _ingest(tmp_path, MMMU)
    assert models == {f"Model {c}" for c in "ABCDE"}
    assert ds.loc["artDesign", "random_baseline"] == 29.0
    assert json.loads(ds.loc["science", "metadata"])["human_score"] == 90.0
    assert any("stored as the chance level of 7 datasets" in n for n in notes)


def test_the_api_takes_the_option(tmp_path):
    import harness_ext as hx

    hx.ingest(EQ, store=tmp_path / "a.duckdb")
    hx.ingest(EQ, store=tmp_path / "b.duckdb", keep_reference_rows=True)
    a, b = hx.load_matrix(tmp_path / "a.duckdb"), hx.load_matrix(tmp_path / "b.duckdb")
    assert "random-baseline" not in a.index and "random-baseline" in b.index
