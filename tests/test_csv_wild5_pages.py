"""Tables from the wild that hold no scores, read as a new user would: OmniGenBench's list of supported models
(parameter counts and context lengths, no score). Real slices in fixtures/csv_wild5 (see its PROVENANCE.md; the
leaderboards there are tests/test_csv_wild5.py's)."""

from __future__ import annotations

from pathlib import Path

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

FIX = Path(__file__).parent / "fixtures" / "csv_wild5"
MODELS_MD = FIX / "omnigenbench_supported_models.md"
MODELS_CSV = FIX / "omnigenbench_rna_models.csv"
MATHVISTA = Path(__file__).parent / "fixtures" / "csv_wild4" / "mathvista_testmini_slice.md"


def _ingest(path):
    with Store.open(":memory:") as s:
        f = ingest_paths(s, [path], show_progress=False).files[0]
        n = s.con.execute("SELECT count(*) FROM results").fetchone()[0]
    return f, n


def test_a_markdown_list_of_models_and_their_sizes_is_not_claimed():
    # Its only column of numbers is a context length: not a leaderboard, so no adapter claims the file, and the
    # reason names the table and the column (was: claimed, then refused as 'every column is model metadata').
    f, _ = _ingest(MODELS_MD)
    assert f.status == "skipped" and f.adapter is None
    assert ("the table at line 16 (under 'RNA Foundation Models'): its only column of numbers describes the models "
            "(Context Length: the name says so), no score column") in f.reason


def test_such_a_table_beside_a_leaderboard_no_longer_refuses_the_page(tmp_path):
    p = tmp_path / "readme.md"
    p.write_text(MATHVISTA.read_text() + "\n" + MODELS_MD.read_text())
    f, n = _ingest(p)
    assert f.status == "ingested", f.reason
    assert n == 66  # the MathVista table's cells, as on its own
    assert any("3 tables not read, not a leaderboard" in note and "Context Length" in note for note in f.notes)


def test_a_csv_list_of_models_is_refused_saying_it_holds_no_score():
    f, _ = _ingest(MODELS_CSV)
    assert f.status == "skipped"
    assert f.reason == ("no score column, so no leaderboard: numbers that describe the models: Context Length (the "
                        "name describes the model (size, date, rank, ...)); Parameters, Best For are text (if one of "
                        "them holds scores, declare it kind: dataset with --column-meta)")
