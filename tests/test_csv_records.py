"""Leaderboard tables as JSON records (JSON Lines, or one array of objects) read by the CSV adapter's rules
(:mod:`harness_ext.adapters.csv_records`).

Real table: ``tests/fixtures/holdout_csv/livebench_240829_slice.csv`` (36 models of the LiveBench board, IBM/benchbench,
Apache-2.0; see its PROVENANCE.md), written as records the way pandas writes them (``to_json(orient="records")``,
with ``lines=True`` for JSON Lines): the store must hold exactly what the CSV gives. The MTEB leaderboard's layout
(``boards_data/en/data_tasks/STS/default.jsonl`` of embeddings-benchmark/leaderboard at 006466a4: model names as HTML
links, size and memory columns, empty strings for unknown values) is composed here with its real header and link
form, the values made up (the repository states no licence). Found as a new user: "no adapter claims it".
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from harness_ext.errors import IngestError
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.types import SourceFile

LIVEBENCH = Path(__file__).resolve().parent / "fixtures" / "holdout_csv" / "livebench_240829_slice.csv"
LINK = '<a target="_blank" style="text-decoration: underline" href="https://huggingface.co/{org}/{name}">{name}</a>'


def _stored(path):
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [str(path)], show_progress=False)
        (f,) = report.files
        assert f.status == "ingested", f.reason
        rows = s.con.execute("SELECT m.name, d.name, d.kind, r.value FROM results r JOIN models m USING (model_id) "
                             "JOIN datasets d USING (dataset_id) ORDER BY 1, 2").fetchall()
        meta = s.con.execute("SELECT count(*) FROM model_metadata").fetchall()[0][0] \
            if s.con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'model_metadata'"
                             ).fetchall()[0][0] else 0
    return rows, f.notes, meta


@pytest.mark.parametrize("lines", [True, False], ids=["jsonl", "json-array"])
def test_records_store_what_the_csv_stores(tmp_path, lines):
    frame = pd.read_csv(LIVEBENCH)
    path = tmp_path / ("livebench_240829_slice.jsonl" if lines else "livebench_240829_slice.json")
    path.write_text(frame.to_json(orient="records", lines=lines))
    csv_rows, csv_notes, _ = _stored(LIVEBENCH)
    rows, notes, _ = _stored(path)
    assert rows == csv_rows and len(rows) == 36 * 7
    assert [n.split(": ", 1)[1] for n in notes] == [n.split(": ", 1)[1] for n in csv_notes]


def test_an_mteb_board_with_linked_model_names(tmp_path):
    recs = [{"Rank": i + 1, "Model": LINK.format(org="org", name=f"embed-{i}"),
             "Model Size (Million Parameters)": "" if i == 1 else 100 + i, "Memory Usage (GB, fp32)": "" if i == 1 else 0.4,
             "Average": None, "BIOSSES": 80.0 + i, "SICK-R": 70.5 - i, "STS12": 75.25 + i / 4, "STS13": 81.0 + i / 2}
            for i in range(6)]
    path = tmp_path / "default.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    rows, notes, meta = _stored(path)
    assert sorted({r[0] for r in rows}) == [f"org/embed-{i}" for i in range(6)]  # the linked pages' repository ids
    assert {r[1] for r in rows} == {"BIOSSES", "SICK-R", "STS12", "STS13"} and meta > 0
    assert any(n.startswith("6 model names written as a link to the model's Hugging Face page: the page's repository id used")
               for n in notes)


def test_two_organisations_models_of_one_name_stay_two_models(tmp_path):
    """MTEB-French classification (embeddings-benchmark/leaderboard) lists two ``bilingual-embedding-base`` models of
    different organisations with different scores: read by the link's text they were one model with conflicts."""
    def row(cell, a, b):
        return {"Rank": 1, "Model": cell, "AmazonReviewsClassification (fr)": a, "MasakhaNEWSClassification (fra)": b,
                "MassiveIntentClassification (fr)": a + 1, "MTOPDomainClassification (fr)": b - 1}
    recs = [row(LINK.format(org="Lajavaness", name="bilingual-embedding-base"), 40.35, 77.44),
            row(LINK.format(org="dangvantuan", name="bilingual-embedding-base"), 43.51, 72.61),
            row('<a href="https://docs.voyageai.com/embeddings/">voyage-2</a>', 41.0, 80.0),  # not a hub page: text
            row('<a href="https://huggingface.co/datasets/mteb/x">some-model</a>', 42.0, 79.0),  # a dataset page: text
            row("[e5-large](https://huggingface.co/intfloat/multilingual-e5-large)", 44.0, 78.0),  # other name: text
            row("[multilingual-e5-base](https://huggingface.co/intfloat/multilingual-e5-base/tree/main)", 45.0, 77.0)]
    path = tmp_path / "default.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    rows, notes, _ = _stored(path)
    assert {r[0] for r in rows} == {
        "Lajavaness/bilingual-embedding-base", "dangvantuan/bilingual-embedding-base", "voyage-2", "some-model",
        "e5-large", "intfloat/multilingual-e5-base"}
    assert len(rows) == 6 * 4  # no conflict collapsed two models' scores
    assert any(n.startswith("3 model names written as a link to the model's Hugging Face page") for n in notes)
    assert any(n.startswith("3 model names written as a link (HTML or Markdown): the link's text used") for n in notes)


def test_what_is_not_a_table_of_records_is_left_to_the_other_readers(tmp_path):
    from harness_ext.adapters.csv_records import is_record_table

    cases = {
        "samples_arc_easy.jsonl": {"doc_id": 0, "doc": {"question": "q"}, "acc": 1.0},  # lm-eval's sample log
        "items.jsonl": {"model": "m", "item": 3, "score": 1},  # an item table's row
        "results.json": {"results": {"arc": {"acc": 0.5}}, "config": {"model": "m"}},  # not an array
        "names.jsonl": {"model": "m", "family": "llama"},  # no number
        "nomodel.jsonl": {"system": "m", "score": 0.5},  # no model column
    }
    for name, rec in cases.items():
        p = tmp_path / name
        p.write_text(json.dumps(rec) + "\n")
        assert not is_record_table(SourceFile(p)), name
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    assert not is_record_table(SourceFile(deep))


@pytest.mark.parametrize("body, why", [
    ('{"model": "a", "x": 1}\n{"model": "b", "x": [1, 2]}\n', "line 2 is not a flat record of a table (key 'x' holds a list)"),
    ('{"model": "a", "x": 1}\n{"model": "b", "x": 2\n', "line 2 is not JSON"),
    ('{"model": "a", "x": 1}\n[1, 2]\n', "line 2 is not a flat record of a table (not an object)"),
])
def test_a_bad_record_is_one_error_naming_its_line(tmp_path, body, why):
    p = tmp_path / "board.jsonl"
    p.write_text(body)
    with Store.open(":memory:") as s:
        (f,) = ingest_paths(s, [str(p)], show_progress=False).files
        assert f.status == "skipped" and why in f.reason, f.reason
        assert s.con.execute("SELECT count(*) FROM results").fetchall()[0][0] == 0
