"""Tables saved by spreadsheets in decimal-comma locales: ';' (or a tab) between the cells, '0,734' for 0.734.

Each is read exactly as its comma version: the same datasets, models and values, with what was inferred in the
ingest notes; a file whose decimal mark cannot be told is refused with the cell named. The leaderboard is the
real Open LLM Leaderboard v1 slice of fixtures/csv_wild (metabench's scrape, PROVENANCE.md there), written here
as Excel and LibreOffice in a German, French or Italian locale save it: ';' between cells, numbers with a comma.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

FIX = Path(__file__).parent / "fixtures" / "csv_wild"
SLICE = FIX / "metabench_open_llm_leaderboard_slice.csv"
BOTH = pytest.mark.parametrize("read_path", [0, 1 << 40], ids=["columnar", "records"], indirect=True)


@pytest.fixture
def read_path(monkeypatch, request):
    import harness_ext.adapters.csv_table as csv_table

    monkeypatch.setattr(csv_table, "COLUMNAR_MIN_BYTES", request.param)


def _european(text: str, delim: str = ";") -> str:
    """A comma-separated table as a decimal-comma locale saves it: numbers with ',' and ``delim`` between cells."""
    out = io.StringIO()
    w = csv.writer(out, delimiter=delim, lineterminator="\n")
    for row in csv.reader(io.StringIO(text)):
        w.writerow([c.replace(".", ",") if re.fullmatch(r"-?\d+\.\d+", c) else c for c in row])
    return out.getvalue()


def _ingest(*paths):
    s = Store.open(":memory:")
    rep = ingest_paths(s, [str(p) for p in paths], show_progress=False)
    return s, rep


def _stored(s):
    res = s.con.execute("SELECT m.name AS model, d.name AS dataset, r.value FROM results r JOIN models m USING "
                        "(model_id) JOIN datasets d USING (dataset_id) ORDER BY 1, 2").fetchall()
    ds = s.con.execute("SELECT name, metric, kind, scale, min_score, max_score FROM datasets ORDER BY name").fetchall()
    return res, ds


@BOTH
@pytest.mark.parametrize("delim", [";", "\t"], ids=["semicolon", "tab"])
def test_decimal_comma_leaderboard_reads_as_its_comma_version(read_path, tmp_path, delim):
    eu = tmp_path / "open_llm_leaderboard.csv"
    us = tmp_path / "us" / "open_llm_leaderboard.csv"
    us.parent.mkdir()
    us.write_text(SLICE.read_text())
    eu.write_text(_european(SLICE.read_text(), delim))
    assert "0,734" not in SLICE.read_text() and re.search(r"\d,\d", eu.read_text())
    s_eu, rep_eu = _ingest(eu)
    s_us, rep_us = _ingest(us)
    assert rep_eu.files[0].status == "ingested", rep_eu.files[0].reason
    res_eu, ds_eu = _stored(s_eu)
    res_us, ds_us = _stored(s_us)
    assert len(res_us) > 40 and res_eu == res_us and ds_eu == ds_us
    notes = rep_eu.files[0].notes
    shown = "';'" if delim == ";" else "a tab"
    assert any(n.startswith(f"read with {shown} as the delimiter") for n in notes), notes
    # 10 rows x 7 score columns (avg ... gsm8k), less the empty cells of the unfinished runs and whole numbers
    n_numbers = sum(bool(re.fullmatch(r"-?\d+\.\d+", c)) for row in csv.reader(io.StringIO(SLICE.read_text()))
                    for c in row)
    assert n_numbers == 57
    assert any(n.startswith(f"',' read as the decimal mark ({shown} is the delimiter): {n_numbers} numbers in 7 columns")
               for n in notes), notes
    assert not any("decimal mark" in n for n in rep_us.files[0].notes)
    s_eu.close()
    s_us.close()


def test_semicolon_table_with_decimal_points_reads_as_before(tmp_path):
    f = tmp_path / "board.csv"
    f.write_text(SLICE.read_text().replace(",", ";").replace("https:;", "https:,"))  # no comma left between cells
    s, rep = _ingest(f)
    s_us, _ = _ingest(SLICE)
    assert rep.files[0].status == "ingested", rep.files[0].reason
    assert _stored(s)[0] == [(m, d.replace("metabench_open_llm_leaderboard_slice", "board"), v)
                             for m, d, v in _stored(s_us)[0]]
    assert not any("decimal mark" in n for n in rep.files[0].notes)


def test_mixed_decimal_marks_are_refused_with_the_cells_named(tmp_path):
    f = tmp_path / "board.csv"
    f.write_text("Model;MMLU;ARC\nllama-7b;0,352;0.461\nmistral-7b;0,625;0.599\n")
    s, rep = _ingest(f)
    entry = rep.files[0]
    assert entry.status == "skipped"
    assert "mixes decimal marks" in entry.reason and "'0,352' ('MMLU', row 2)" in entry.reason
    assert "'0.461' ('ARC', row 2)" in entry.reason
    assert s.con.execute("SELECT count(*) FROM results").fetchone()[0] == 0


def test_commas_that_could_be_thousands_separators_are_refused(tmp_path):
    # "1,250" is 1.25 with a decimal comma, 1250 with a thousands separator: nothing else in the file says which
    f = tmp_path / "arena.csv"
    f.write_text("Model;Arena Elo\ngpt-4;1,250\nllama;1,105\n")
    _, rep = _ingest(f)
    assert rep.files[0].status == "skipped"
    assert "decimal mark is ambiguous" in rep.files[0].reason and "'1,250'" in rep.files[0].reason


def test_thousands_commas_beside_telling_decimal_commas_are_decimals(tmp_path):
    f = tmp_path / "board.csv"
    f.write_text("Model;MMLU;Score\nllama-7b;0,352;1,250\nmistral-7b;0,625;1,105\n")
    s, rep = _ingest(f)
    assert rep.files[0].status == "ingested", rep.files[0].reason
    vals = dict(((m, d), v) for m, d, v in _stored(s)[0])
    assert vals[("llama-7b", "Score")] == pytest.approx(1.25) and vals[("mistral-7b", "MMLU")] == pytest.approx(0.625)


def test_model_names_with_commas_are_kept(tmp_path):
    f = tmp_path / "board.csv"
    f.write_text("Model;MMLU\nqwen-1,5-7b;0,61\nllama-7b;0,35\n")
    s, rep = _ingest(f)
    assert rep.files[0].status == "ingested", rep.files[0].reason
    assert {m for m, _, _ in _stored(s)[0]} == {"qwen-1,5-7b", "llama-7b"}


def test_a_header_that_fits_two_delimiters_alike_is_an_error(tmp_path):
    f = tmp_path / "board.csv"
    f.write_text("model,x;model\na,1;b\nc,2;d\n")
    _, rep = _ingest(f)
    assert rep.files[0].status == "skipped"
    assert "delimiter is ambiguous" in rep.files[0].reason


def test_semicolon_item_table_with_decimal_comma_scores(tmp_path):
    eu, us = tmp_path / "gsm8k.csv", tmp_path / "us" / "gsm8k.csv"
    us.parent.mkdir()
    us.write_text("model,item,score\ngpt-4,q1,1\ngpt-4,q2,0.5\nllama,q1,0\nllama,q2,0.25\n")
    eu.write_text("model;item;score\ngpt-4;q1;1\ngpt-4;q2;0,5\nllama;q1;0\nllama;q2;0,25\n")
    s_eu, rep = _ingest(eu)
    s_us, _ = _ingest(us)
    assert rep.files[0].adapter == "item_table" and rep.files[0].status == "ingested", rep.files[0].reason
    q = "SELECT model, task, doc_id, value FROM samples ORDER BY 1, 3"
    assert s_eu.con.execute(q).fetchall() == s_us.con.execute(q).fetchall()
    assert any(n.startswith("',' read as the decimal mark (';' is the delimiter): 2 scores") for n in rep.files[0].notes)


EU = Path(__file__).parent / "fixtures" / "csv_eu"


@BOTH
def test_thousands_points_before_a_decimal_comma_read_as_the_real_leaderboards_values(read_path, tmp_path):
    """AlpacaEval's benchmark table as a German Excel saves it (fixtures/csv_eu): ``1.251,0`` is Arena Elo 1251, not
    text that made the Elo column model metadata; every value stored is the comma version's."""
    us_text = (Path(__file__).parent / "fixtures" / "csv" / "alpaca_eval_benchmarks.csv").read_text()
    (tmp_path / "eu").mkdir()
    (tmp_path / "us").mkdir()
    (tmp_path / "eu" / "alpaca_eval_benchmarks.csv").write_bytes((EU / "alpaca_eval_benchmarks_de.csv").read_bytes())
    (tmp_path / "us" / "alpaca_eval_benchmarks.csv").write_text(us_text)
    s_eu, rep = _ingest(tmp_path / "eu" / "alpaca_eval_benchmarks.csv")
    s_us, _ = _ingest(tmp_path / "us" / "alpaca_eval_benchmarks.csv")
    assert rep.files[0].status == "ingested", rep.files[0].reason
    res, ds = _stored(s_eu)
    assert (res, ds) == _stored(s_us)
    assert ("gpt4_1106_preview", "Arena Elo [Feb 2, 2024]", 1251.0) in res
    numbers = [c for row in csv.reader(io.StringIO(us_text)) for c in row if re.fullmatch(r"-?\d+\.\d+", c)]
    grouped = sum(float(c) >= 1000 for c in numbers)
    assert grouped == 86
    notes = rep.files[0].notes
    assert any(n.startswith(f"',' read as the decimal mark (';' is the delimiter): {len(numbers)} numbers in 22 "
                            "columns (Arena Elo [Feb 2, 2024], ") and
               n.endswith(f"('1.251,0' cannot be a thousands separator), {grouped} of them with '.' between groups "
                          "of thousands") for n in notes), notes
    assert not any("Arena Elo" in n for n in notes if "model metadata" in n), notes
    s_eu.close()
    s_us.close()


def test_a_column_mixing_decimal_marks_is_kept_as_text_and_counted(tmp_path):
    """Real values (the fixture's first rows), one Elo cell written with a point: that column alone is kept as text
    (metadata, said), with its cells of each mark counted; the other columns are read."""
    rows = (EU / "alpaca_eval_benchmarks_de.csv").read_text().splitlines()
    header = "Model;Arena Elo;LC AlpacaEval 2.0"
    body = [";".join(r.split(";")[:3]) for r in rows[23:28]]  # one line each: past the header's wrapped cells
    assert all(re.fullmatch(r"[^;]+;\d\.\d{3},\d;\d+,\d+", b) for b in body), body
    body[0] = body[0].replace(".", "", 1).replace(",", ".", 1)  # 1.251,0 -> 1251.0, as another tool wrote it
    f = tmp_path / "board.csv"
    f.write_text("\n".join([header] + body) + "\n")
    s, rep = _ingest(f)
    assert rep.files[0].status == "ingested", rep.files[0].reason
    notes = rep.files[0].notes
    assert "'Arena Elo': 4 cells written with a decimal comma and 1 with a point: its cells are kept as written " \
           "(text), as no one mark reads them all; write every number of it with one mark to read it as scores" in notes
    assert any(n.startswith("',' read as the decimal mark (';' is the delimiter): 5 numbers in 1 column "
                            "(LC AlpacaEval 2.0)") for n in notes), notes
    assert any("model metadata" in n and "Arena Elo" in n for n in notes), notes
    assert {d for _, d, _ in _stored(s)[0]} == {"LC AlpacaEval 2.0"}


def test_whole_numbers_grouped_by_points_need_a_decimal_comma_in_their_column(tmp_path):
    """``1.250`` beside ``1.105,5`` in one column is 1250; alone in its column it could be a decimal point (7.125 of a
    1-10 score), and a file of decimal commas elsewhere is refused, as before."""
    f = tmp_path / "board.csv"
    f.write_text("Model;MMLU;Elo\nllama-7b;0,352;1.105,5\nmistral-7b;0,625;1.250\n")
    s, rep = _ingest(f)
    assert rep.files[0].status == "ingested", rep.files[0].reason
    vals = {(m, d): v for m, d, v in _stored(s)[0]}
    assert vals[("mistral-7b", "Elo")] == 1250.0 and vals[("llama-7b", "Elo")] == 1105.5
    g = tmp_path / "mt.csv"
    g.write_text("Model;MMLU;MT-bench\nllama-7b;0,352;7.125\nmistral-7b;0,625;6.250\n")
    _, rep = _ingest(g)
    assert rep.files[0].status == "skipped" and "mixes decimal marks" in rep.files[0].reason
    assert "'7.125' ('MT-bench', row 2)" in rep.files[0].reason
